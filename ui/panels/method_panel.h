// The Method control (issue 29): FBP, or an iterative method (SIRT, CGLS,
// TV) with its parameters, for the live slice, Reconstruct to File and the
// parameter file (ReconOptions::iterative). Iterative methods the
// strategy or the dataset cannot run are greyed out with the reason. While
// an iterative slice runs, the panel shows its progress and a Stop button
// that keeps the image so far.
#pragma once

#include "panels/panel.h"

#include "tomo/backend.h"

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
QT_END_NAMESPACE

namespace tomo::ui {

class MethodPanel : public Panel {
    Q_OBJECT
public:
    explicit MethodPanel(QWidget* parent = nullptr);

    /// The method and its parameters as the panel shows them.
    tomo::IterativeOptions options() const;
    /// Shows `options` (a parameter file, undo); no optionsChanged.
    void setOptions(const tomo::IterativeOptions& options);
    enum class Beam { Parallel, Fan, Cone };
    /// What the slice is made with: the iterative methods are offered for a
    /// parallel beam when the strategy (and its interpolation, precision)
    /// has a projector pair, and for a fan beam (the divergent-beam pair of
    /// the CPU or the GPU, Joseph's only); not for a cone beam (FDK only),
    /// and why.
    void setContext(const tomo::ReconOptions& reconOptions, Beam beam);
    /// Why the iterative methods are greyed out (empty: they are offered).
    QString unavailableReason() const { return m_unavailable; }

    /// An iterative slice started (`iterations` planned) or ended.
    void setRunning(bool running, int iterations = 0);
    /// Iteration `iteration` of the running slice, its relative residual.
    void setProgress(int iteration, double residual);

signals:
    void optionsChanged(const tomo::IterativeOptions& options);
    void stopRequested();

private:
    void methodChosen();
    void updateControls();

    QComboBox* m_method = nullptr;
    QSpinBox* m_iterations = nullptr;
    QDoubleSpinBox* m_tvWeight = nullptr;
    QCheckBox* m_nonnegative = nullptr;
    QComboBox* m_init = nullptr;
    QComboBox* m_projector = nullptr;
    QLabel* m_reason = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_stop = nullptr;
    tomo::Bounds m_bounds;     // bounds other than non-negativity come from a parameter file
    double m_tolerance = 0.0;  // from a parameter file (no control)
    QString m_unavailable;
    int m_blockSignals = 0;
};

} // namespace tomo::ui
