#include "panels/metadata_panel.h"

#include <QAction>
#include <QColor>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QLocale>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace tomo::ui {

MetadataPanel::MetadataPanel(QWidget* parent)
    : Panel(tr("Dataset"), QStringLiteral("datasetDock"), DockFit::Stretch, parent) {
    m_pixelSizeAction = makeAction(this, tr("&Pixel Size…"), nullptr, QKeySequence(),
                                   tr("This dataset's pixel size at the sample: scale bar, values per mm or cm, Paganin"));
    connect(m_pixelSizeAction, &QAction::triggered, this, [this] {
        showDock();
        askPixelSize();
    });
    m_tree = new QTreeWidget;
    m_tree->setColumnCount(2);
    m_tree->setHeaderLabels({tr("Property"), tr("Value")});
    m_tree->setRootIsDecorated(false);
    m_tree->setAlternatingRowColors(true);
    m_tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_warnings = new QLabel;
    m_warnings->setObjectName(QStringLiteral("datasetWarnings"));
    m_warnings->setWordWrap(true);
    m_warnings->setStyleSheet(QStringLiteral("color: #b9770e; padding: 4px;"));
    m_warnings->hide();

    // The pixel size: what is in use, and the question when nobody knows it.
    m_pixelLine = new QLabel;
    m_pixelLine->setObjectName(QStringLiteral("pixelSizeLine"));
    m_pixelLine->setWordWrap(true);
    m_pixelChange = new QPushButton(tr("Change…"));
    m_pixelChange->setObjectName(QStringLiteral("pixelSizeChangeButton"));
    m_pixelChange->setToolTip(tr("Enter this dataset's pixel size (remembered with the dataset)"));
    auto* pixelRow = new QHBoxLayout;
    pixelRow->setContentsMargins(4, 0, 4, 0);
    pixelRow->addWidget(m_pixelLine, 1);
    pixelRow->addWidget(m_pixelChange);
    m_pixelQuestion = new QFrame;
    m_pixelQuestion->setObjectName(QStringLiteral("pixelSizeQuestion"));
    m_pixelQuestion->setFrameShape(QFrame::StyledPanel);
    m_pixelQuestionText = new QLabel;
    m_pixelQuestionText->setWordWrap(true);
    m_pixelSpin = new QDoubleSpinBox;
    m_pixelSpin->setObjectName(QStringLiteral("pixelSizeSpin"));
    m_pixelSpin->setRange(0.001, 1e6);
    m_pixelSpin->setDecimals(3);
    m_pixelSpin->setValue(1.0);
    m_pixelSpin->setSuffix(tr(" µm"));
    m_pixelSpin->setToolTip(tr("Size of a detector pixel at the sample (the slice's pixel)"));
    auto* use = new QPushButton(tr("Use"));
    use->setObjectName(QStringLiteral("pixelSizeUseButton"));
    auto* unknown = new QPushButton(tr("Not known"));
    unknown->setObjectName(QStringLiteral("pixelSizeUnknownButton"));
    unknown->setToolTip(tr("Count in pixels (values per pixel, no Paganin); not asked again for this dataset"));
    auto* questionLayout = new QVBoxLayout(m_pixelQuestion);
    auto* answers = new QHBoxLayout;
    answers->addWidget(m_pixelSpin, 1);
    answers->addWidget(use);
    answers->addWidget(unknown);
    questionLayout->addWidget(m_pixelQuestionText);
    questionLayout->addLayout(answers);
    m_pixelQuestion->hide();
    connect(use, &QPushButton::clicked, this, [this] {
        m_pixelQuestion->hide();
        emit pixelSizeEntered(m_pixelSpin->value());
    });
    connect(unknown, &QPushButton::clicked, this, [this] {
        m_pixelQuestion->hide();
        emit pixelSizeEntered(0.0);
    });
    connect(m_pixelChange, &QPushButton::clicked, this, &MetadataPanel::askPixelSize);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(pixelRow);
    layout->addWidget(m_pixelQuestion);
    layout->addWidget(m_tree, 1);
    layout->addWidget(m_warnings);
    setPixelSize({});
}

void MetadataPanel::setPixelSize(const DatasetPixelSize& size) {
    m_pixelSize = size;
    m_pixelLine->setText(tr("<b>Pixel size</b> at the sample: %1").arg(size.text()));
    if (size.known()) m_pixelSpin->setValue(size.micrometres);
    m_pixelQuestionText->setText(
        tr("The file does not state its pixel size. Enter it for the scale bar, values per mm or cm and Paganin "
           "(remembered with this dataset):"));
    m_pixelQuestion->setVisible(size.source == DatasetPixelSize::Source::Unknown);
    addPixelSizeRow();
}

void MetadataPanel::askPixelSize() {
    m_pixelQuestionText->setText(tr("Pixel size at the sample of this dataset (remembered with it):"));
    m_pixelQuestion->show();
    m_pixelSpin->setFocus();
    m_pixelSpin->selectAll();
}

bool MetadataPanel::askingPixelSize() const { return !m_pixelQuestion->isHidden(); }

void MetadataPanel::addPixelSizeRow() {
    const auto items = m_tree->findItems(tr("Pixel size"), Qt::MatchExactly, 0);
    QTreeWidgetItem* item = items.isEmpty() ? new QTreeWidgetItem(m_tree, {tr("Pixel size")}) : items.front();
    item->setText(1, m_pixelSize.text());
    item->setToolTip(1, m_pixelSize.text());
}

void MetadataPanel::setDataset(const DatasetSummary& d) {
    m_tree->clear();
    auto add = [this](const QString& key, const QString& value, const QString& tip = {}) {
        auto* item = new QTreeWidgetItem(m_tree, {key, value});
        item->setToolTip(1, tip.isEmpty() ? value : tip);
    };
    const tomo::DatasetInfo& info = d.info;
    const QLocale locale;
    if (d.demo) {
        add(tr("Dataset"), tr("Built-in demo phantom"));
        add(tr("Format"), tr("3D Shepp–Logan, exact parallel projections (in memory)"));
    } else {
        add(tr("File"), QFileInfo(d.path).fileName(), d.path);
        add(tr("Folder"), QFileInfo(d.path).absolutePath());
        add(tr("Format"), QString::fromUtf8(tomo::formatName(info.format)));
        const QFileInfo fi(d.path);
        if (fi.isFile()) add(tr("File size"), locale.formattedDataSize(fi.size()));
    }
    add(tr("Projections"), QString::number(info.projections));
    add(tr("Rows (slices)"), QString::number(info.rows));
    add(tr("Columns (bins)"), QString::number(info.columns));
    add(tr("Shape"), QStringLiteral("%1 × %2 × %3").arg(info.projections).arg(info.rows).arg(info.columns),
        tr("projections × rows × columns"));
    add(tr("Sample type"), QString::fromUtf8(tomo::sampleTypeName(info.sampleType)));
    if (!info.angles.empty()) {
        const auto [lo, hi] = std::minmax_element(info.angles.begin(), info.angles.end());
        const double toDeg = 180.0 / std::numbers::pi;
        add(tr("Angles"), QStringLiteral("%1° … %2°").arg(*lo * toDeg, 0, 'f', 3).arg(*hi * toDeg, 0, 'f', 3));
        if (info.angles.size() > 1)
            add(tr("Mean step"),
                QStringLiteral("%1°").arg((*hi - *lo) / static_cast<double>(info.angles.size() - 1) * toDeg, 0, 'f', 4));
    }
    add(tr("Angle units"), d.options.angleUnits == tomo::AngleUnits::Auto
                               ? tr("as the file says (degrees when it says nothing)")
                               : QString::fromUtf8(tomo::angleUnitsName(d.options.angleUnits)));
    if (!info.anglesFile.empty()) {
        const QString file = QString::fromStdString(info.anglesFile.filename().string());
        add(tr("Angles from"),
            info.anglesLines ? tr("%1, entries %2–%3").arg(file).arg(info.anglesLines->first).arg(info.anglesLines->first + info.projections - 1)
                             : file,
            QString::fromStdString(info.anglesFile.string()));
    }
    add(tr("Flats"), info.flats ? QString::number(info.flats) : tr("none"));
    add(tr("Darks"), info.darks ? QString::number(info.darks) : tr("none"));
    add(tr("Values"), info.logCorrected ? tr("line integrals (already log-corrected)")
                                        : tr("raw counts: flat/dark + −log applied"));
    add(tr("Detector centre"), QString::number((info.columns - 1) / 2.0, 'f', 1));
    if (d.divergent) {
        auto* group = new QTreeWidgetItem(m_tree, {tr("Geometry"), d.divergent->description});
        group->setToolTip(1, d.divergent->description);
        for (const auto& [label, value] : d.divergent->fields) {
            auto* item = new QTreeWidgetItem(group, {label, value});
            item->setToolTip(1, value);
        }
        group->setExpanded(true);
    }
    add(tr("Opened in"), formatSeconds(d.secondsToOpen));
    addPixelSizeRow();
    // What the reader warns about, each on its own row, in colour, and wrapped below.
    QStringList warnings;
    for (const std::string& w : info.warnings) {
        const QString text = readableWarning(info, w);
        auto* item = new QTreeWidgetItem(m_tree, {tr("Warning"), text});
        item->setToolTip(1, text);
        item->setForeground(0, QColor(0xb9, 0x77, 0x0e));
        item->setForeground(1, QColor(0xb9, 0x77, 0x0e));
        warnings << tr("Warning: %1").arg(text);
    }
    m_warnings->setText(warnings.join(QStringLiteral("\n")));
    m_warnings->setVisible(!warnings.isEmpty());
}

QString MetadataPanel::value(const QString& property) const {
    const auto items = m_tree->findItems(property, Qt::MatchExactly | Qt::MatchRecursive, 0);
    return items.isEmpty() ? QString() : items.front()->text(1);
}

} // namespace tomo::ui
