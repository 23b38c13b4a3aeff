#include "metadata_panel.h"

#include <QColor>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace tomo::ui {

MetadataPanel::MetadataPanel(QWidget* parent) : QWidget(parent) {
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
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tree, 1);
    layout->addWidget(m_warnings);
}

QString readableWarning(const tomo::DatasetInfo& info, const std::string& warning) {
    QString text = QString::fromStdString(warning);
    if (!info.path.empty())
        text.replace(QString::fromStdString(info.path.string()), QString::fromStdString(info.path.filename().string()));
    return text;
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
