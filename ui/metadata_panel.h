// Metadata of the open dataset: file, format, shape, sample type, angle
// range, step and units, flats and darks found, log-corrected or raw, and
// the reader's warnings (DatasetInfo::warnings).
#pragma once

#include "recon_types.h"

#include <QWidget>

QT_BEGIN_NAMESPACE
class QLabel;
class QTreeWidget;
QT_END_NAMESPACE

namespace tomo::ui {

class MetadataPanel : public QWidget {
    Q_OBJECT
public:
    explicit MetadataPanel(QWidget* parent = nullptr);
    void setDataset(const DatasetSummary& dataset);
    /// The value shown for a property (for tests), empty if absent; the
    /// first one where a property has several rows (warnings).
    QString value(const QString& property) const;

private:
    QTreeWidget* m_tree = nullptr;
    QLabel* m_warnings = nullptr; ///< the warnings again, wrapped: a row cuts them off
};

/// A reader's warning with the dataset's path shortened to its file name.
QString readableWarning(const tomo::DatasetInfo& info, const std::string& warning);

} // namespace tomo::ui
