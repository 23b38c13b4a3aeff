// Metadata of the open dataset: file, format, shape, sample type, angle
// range and step, flats and darks found, log-corrected or raw.
#pragma once

#include "recon_types.h"

#include <QWidget>

QT_BEGIN_NAMESPACE
class QTreeWidget;
QT_END_NAMESPACE

namespace tomo::ui {

class MetadataPanel : public QWidget {
    Q_OBJECT
public:
    explicit MetadataPanel(QWidget* parent = nullptr);
    void setDataset(const DatasetSummary& dataset);
    /// The value shown for a property (for tests), empty if absent.
    QString value(const QString& property) const;

private:
    QTreeWidget* m_tree = nullptr;
};

} // namespace tomo::ui
