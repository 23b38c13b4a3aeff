// Axis sweep gallery: trial slices of the row on screen over a range of
// rotation axes (tomo::sweepAxis on the controller's job thread: the row is
// corrected and filtered once, then back-projected at every axis), shown as
// thumbnails labelled with their axis in one display window. A click on a
// thumbnail picks its axis. The trials show the object's bounding box of
// the slice on screen ("Zoom on the object", on by default; a region of
// interest set in the parameters wins): on a large detector a 160 px
// thumbnail of the whole slice shows too little of the sample to judge. A
// double click shows a trial enlarged (up to 480 px, small ones magnified).
//
//   Run ──► runRequested(axes) ──► Controller::sweepAxis ──► setProgress …
//       ──► showSweep(thumbnails) ──► click ──► axisPicked(axis)
#pragma once

#include "work/recon_types.h"

#include <QDialog>

QT_BEGIN_NAMESPACE
class QCheckBox;
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
    /// The object's bounding box in the slice on screen (objectBox), or none.
    void setObject(const std::optional<tomo::Region>& box);
    /// The region the trials show: the object's box when zooming on it, else none (the whole slice).
    std::optional<tomo::Region> region() const;
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
    /// Shows trial `index` enlarged in its own window (a double click on it).
    void enlarge(int index);
    /// That window (null before the first double click).
    QDialog* enlarged() const { return m_enlarged; }

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
    QCheckBox* m_zoom = nullptr;
    QDialog* m_enlarged = nullptr;
    QLabel* m_enlargedImage = nullptr;
    std::vector<QImage> m_views;
    std::vector<double> m_axes;
    std::optional<tomo::Region> m_object;
    int m_row = 0;
};

/// The bounding box of what stands out of the background in `slice` (a
/// region of a grid, at `origin`): pixels above Otsu's threshold of the
/// values within [low, high] (the display window), between the 0.5th and
/// 99.5th percentile of their positions (so that a few bright artefacts do
/// not widen it), widened by 15 % on each side and made square, in grid
/// coordinates.
/// None when that covers most of the slice anyway (over 70 % of its width).
std::optional<tomo::Region> objectBox(const tomo::Image& slice, QPoint origin, float low, float high);

} // namespace tomo::ui
