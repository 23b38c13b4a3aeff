#include "metadata_panel.h"

#include <QFileInfo>
#include <QHeaderView>
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
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tree);
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
    add(tr("Opened in"), formatSeconds(d.secondsToOpen));
}

QString MetadataPanel::value(const QString& property) const {
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i)
        if (m_tree->topLevelItem(i)->text(0) == property) return m_tree->topLevelItem(i)->text(1);
    return {};
}

} // namespace tomo::ui
