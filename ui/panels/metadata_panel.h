// Metadata of the open dataset: file, format, shape, sample type, angle
// range, step and units, flats and darks found, log-corrected or raw, and
// the reader's warnings (DatasetInfo::warnings), and the pixel size of the
// dataset: shown with where it came from, asked for (inline, not in a modal
// dialog) when the file does not state it.
#pragma once

#include "work/pixel_size.h"
#include "work/recon_types.h"

#include "panels/panel.h"

QT_BEGIN_NAMESPACE
class QDoubleSpinBox;
class QFrame;
class QLabel;
class QPushButton;
class QTreeWidget;
QT_END_NAMESPACE

namespace tomo::ui {

class MetadataPanel : public Panel {
    Q_OBJECT
public:
    explicit MetadataPanel(QWidget* parent = nullptr);
    void setDataset(const DatasetSummary& dataset);
    /// The value shown for a property (for tests), empty if absent; the
    /// first one where a property has several rows (warnings).
    QString value(const QString& property) const;
    /// The pixel size in use; the question shows while it is Unknown.
    void setPixelSize(const DatasetPixelSize& size);
    /// Shows the question (a Change… of a known size), the field focused.
    void askPixelSize();
    bool askingPixelSize() const;
    /// View ▸ Pixel Size…: shows this panel and asks.
    QAction* pixelSizeAction() const { return m_pixelSizeAction; }

signals:
    /// The user's answer for this dataset (0: not known, do not ask again).
    void pixelSizeEntered(double micrometres);

private:
    void addPixelSizeRow();

    QTreeWidget* m_tree = nullptr;
    DatasetPixelSize m_pixelSize;
    QLabel* m_pixelLine = nullptr;      ///< "Pixel size at the sample: …"
    QPushButton* m_pixelChange = nullptr;
    QFrame* m_pixelQuestion = nullptr;
    QLabel* m_pixelQuestionText = nullptr;
    QDoubleSpinBox* m_pixelSpin = nullptr;
    QAction* m_pixelSizeAction = nullptr;
    QLabel* m_warnings = nullptr; ///< the warnings again, wrapped: a row cuts them off
};

} // namespace tomo::ui
