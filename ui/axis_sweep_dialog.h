// Axis sweep gallery: trial slices of the row on screen over a range of
// rotation axes (tomo::sweepAxis on the controller's job thread: the row is
// corrected and filtered once, then back-projected at every axis), shown as
// thumbnails labelled with their axis in one display window. A click on a
// thumbnail picks its axis.
//
//   Run ──► runRequested(axes) ──► Controller::sweepAxis ──► setProgress …
//       ──► showSweep(thumbnails) ──► click ──► axisPicked(axis)
#pragma once

#include "recon_types.h"

#include <QDialog>

QT_BEGIN_NAMESPACE
class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
QT_END_NAMESPACE

namespace tomo::ui {

class AxisSweepDialog : public QDialog {
    Q_OBJECT
public:
    explicit AxisSweepDialog(QWidget* parent = nullptr);

    /// The row and axis on screen: the range becomes axis ± 5 px in 0.5 px
    /// steps (0.25 px when the detector is narrower than 200 columns).
    void setCentre(int row, double axis, int columns);
    void setRange(double from, double to, double step);
    /// The trial axes of the fields; empty with the reason in error().
    std::vector<double> axes() const;
    QString error() const;

    /// Asks for a sweep of the fields' range (as the Run button).
    void run();
    void setProgress(const JobProgress& progress);
    /// The sweep finished (Done: its thumbnails follow or came), was cancelled or failed.
    void finish(JobStatus status, const QString& message);
    void showSweep(const AxisSweep& sweep);
    /// Marks the thumbnail of `axis` (the axis on screen), if there is one.
    void setCurrentAxis(double axis);

    QListWidget* gallery() const { return m_gallery; }
    /// The axis of gallery item `index`.
    double axisAt(int index) const;

signals:
    void runRequested(const std::vector<double>& axes);
    void cancelRequested();
    void axisPicked(double axis);

private:
    void updateCount();
    void setRunning(bool running);

    QLabel* m_rowLabel = nullptr;
    QDoubleSpinBox* m_from = nullptr;
    QDoubleSpinBox* m_to = nullptr;
    QDoubleSpinBox* m_step = nullptr;
    QLabel* m_count = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_cancel = nullptr;
    QProgressBar* m_progress = nullptr;
    QListWidget* m_gallery = nullptr;
    QLabel* m_note = nullptr;
    int m_row = 0;
};

} // namespace tomo::ui
