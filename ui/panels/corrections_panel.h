// Corrections panel: each correction of the preprocessing stage on or off
// with its parameters (tomo::CorrectionOptions, corrections.h) - dead pixels,
// beam normalisation from background columns, zingers, rings (Vo et al. or
// Münch et al.), Paganin phase retrieval, 360° half acquisition - and what
// they found in the row on screen (PreviewResult::corrections, the stage's
// 360° axis and warnings), with the ring damage guard beside the ring
// controls (PreprocessStats::rings: a warning above its bounds and a button
// for the pinned before/after difference).
//
// Paganin's pixel size is the dataset's (setPixelSize, the Dataset panel):
// without one the filter cannot be switched on.
//
//   user edits ──► options() valid? ──► optionsChanged(options)
//                                 no ──► the message under the controls
//   setOptions() (undo, loaded parameters) sets the controls, emits nothing.
//
// The corrections are applied when a row is loaded and kept with it, so
// moving the axis afterwards costs no correction.
#pragma once

#include "work/recon_types.h"

#include "panels/panel.h"

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QSpinBox;
QT_END_NAMESPACE

namespace tomo::ui {

class CorrectionsPanel : public Panel {
    Q_OBJECT
public:
    explicit CorrectionsPanel(QWidget* parent = nullptr);

    /// The corrections the controls say; a correction that is off has its
    /// default parameters (so switching one off and on again is one stage).
    tomo::CorrectionOptions options() const;
    /// Sets the controls (nothing emitted) and clears the message.
    void setOptions(const tomo::CorrectionOptions& options);

    /// A new dataset: column ranges, the defaults, nothing found yet.
    void setDataset(const DatasetSummary& dataset);
    /// What the corrections of `result` found in its row.
    void showResult(const SliceResult& result);
    /// The dataset refused these corrections (why, in red, until they change).
    void showRejected(const QString& message);
    /// The dataset's pixel size at the sample (0: not known), Paganin's.
    void setPixelSize(double micrometres);

    /// The ring damage guard's line for the row on screen (empty: no ring
    /// removal ran), and whether it warns.
    QString ringDamageText() const;
    bool ringDamageWarns() const;

    /// The text of what was found, and of the current problem (empty: none).
    QString foundText() const;
    QString problem() const;

signals:
    /// The user changed the corrections and they are valid.
    void optionsChanged(const tomo::CorrectionOptions& options);
    /// "Show the difference": the slice without ring removal pinned as the
    /// reference of the one with it.
    void ringDifferenceRequested();

private:
    void changed();
    void updateRingRows();

    QGroupBox* m_deadGroup = nullptr;
    QDoubleSpinBox* m_saturation = nullptr;
    QGroupBox* m_backgroundGroup = nullptr;
    QSpinBox* m_backgroundFirst = nullptr;
    QSpinBox* m_backgroundCount = nullptr;
    QGroupBox* m_zingerGroup = nullptr;
    QDoubleSpinBox* m_zingerThreshold = nullptr;
    QSpinBox* m_zingerWindow = nullptr;
    QFormLayout* m_ringLayout = nullptr;
    QComboBox* m_ringMethod = nullptr;
    QDoubleSpinBox* m_ringSnr = nullptr;
    QSpinBox* m_sortingWindow = nullptr;
    QSpinBox* m_largeWindow = nullptr;
    QDoubleSpinBox* m_dropRatio = nullptr;
    QSpinBox* m_waveletLevel = nullptr;
    QDoubleSpinBox* m_waveletSigma = nullptr;
    QGroupBox* m_paganinGroup = nullptr;
    QDoubleSpinBox* m_deltaOverBeta = nullptr;
    QDoubleSpinBox* m_energy = nullptr;
    QDoubleSpinBox* m_distance = nullptr;
    QLabel* m_paganinPixel = nullptr;
    double m_pixelUm = 0.0;
    QGroupBox* m_halfGroup = nullptr;
    QCheckBox* m_halfAuto = nullptr;
    QDoubleSpinBox* m_halfAxis = nullptr;
    QSpinBox* m_halfWindow = nullptr;
    QWidget* m_ringGuard = nullptr;
    QLabel* m_ringDamage = nullptr;
    bool m_ringWarns = false;
    QLabel* m_found = nullptr;
    QLabel* m_problem = nullptr;
    int m_blockSignals = 0;
};

} // namespace tomo::ui
