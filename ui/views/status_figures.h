// The status bar's figures: the pixel under the cursor, the long job's
// progress, "reconstructing", the pixel size (a button to change it), and
// for the slice on screen its backend · strategy · mode, time, GU/s and
// request -> screen latency.
#pragma once

#include "work/pixel_size.h"
#include "work/recon_types.h"

#include <QObject>

QT_BEGIN_NAMESPACE
class QAction;
class QLabel;
class QProgressBar;
class QStatusBar;
class QToolButton;
QT_END_NAMESPACE

namespace tomo::ui {

class StatusFigures : public QObject {
    Q_OBJECT
public:
    /// Adds the figures to `bar`; the pixel size button triggers `pixelSizeAction`.
    StatusFigures(QStatusBar* bar, QAction* pixelSizeAction);

    /// The pixel under the cursor ("x 12  y 40  0.0213"), empty outside.
    void setHover(const QString& text);
    /// The slice on screen, made in `mode` (modeText, or "FDK").
    void showSlice(const SliceResult& result, const QString& mode);
    void setLatency(double seconds);
    void setBusy(bool busy);
    /// `asking`: a dataset is open whose pixel size nobody stated yet.
    void setPixelSize(const DatasetPixelSize& pixel, bool asking);
    /// A long job (not an export: that has its dialog) started, progressed, ended.
    void startJob(JobKind kind);
    void setJobPercent(int percent);
    void endJob();
    /// backend · strategy · time · GU/s · on screen, as shown.
    QString summary() const;

private:
    QLabel* m_hover;
    QLabel* m_backend;
    QLabel* m_time;
    QLabel* m_gups;
    QLabel* m_busy;
    QLabel* m_latency;
    QProgressBar* m_jobBar;
    QToolButton* m_pixelButton;
};

} // namespace tomo::ui
