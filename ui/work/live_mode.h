// Live mode: a scan reconstructed while it is taken (tomo/live.h). A timer
// on the UI thread looks at the source every 100 ms; when frames arrived
// and the previous snapshot is installed, the newest snapshot goes to the
// controller (Controller::showLiveSnapshot), which swaps the preview
// session's dataset and the window asks for the slice again with the
// parameters on screen (axis, row, corrections: moved live as for a file).
// The display skips to the newest snapshot; nothing is dropped from the
// source (and from Record). The status bar's permanent label shows frames,
// frames/s, GB/s, rejected messages, frames the display skipped and the
// latency from the newest frame shown to its slice on screen.
// Once the angles received cover 180° (tomo::coversHalfTurn), the axis
// finder runs by itself on the row on screen, once per scan, as Ctrl+F
// would: the status line says so and then shows the axis found, which the
// window applies; the axis can be moved live afterwards as always.
// Across the rows: the "Live volume" dock shows the XZ and YZ cuts
// (views/ortho_views.h) of a coarse volume of the frames so far
// (work/live_volume.h), refreshed from the newest snapshot, or when the
// parameters change, when LiveVolume::due() (at most once a second, and a
// third of the time at most); a new scan clears it.
#pragma once

#include "work/recon_types.h"

#include "tomo/live.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <chrono>
#include <memory>

class QAction;
class QDockWidget;
class QLabel;
class QMenu;

namespace tomo::ui {

class Controller;
class LiveVolume;
class MainWindow;
class OrthoViews;

class LiveMode : public QObject {
    Q_OBJECT
public:
    LiveMode(Controller* controller, MainWindow* window);
    ~LiveMode() override;

    /// File menu: Open Stream…, Follow Growing File…, Record…, Stop Live.
    void addActions(QMenu* file);

    /// Starts following a ZeroMQ endpoint (PULL, bound; sub+ENDPOINT: SUB,
    /// connected, tomo::streamOptionsFor) or a growing HDF5
    /// file; a running source is stopped first. Errors go to the window.
    void openStream(const QString& endpoint);
    void followFile(const QString& path);
    /// Record: the scan's frames so far and all that follow, to a DXchange file.
    void startRecording(const QString& path);
    void stop();

    bool active() const { return m_source != nullptr; }
    bool recording() const { return m_recording; }
    /// What the status label says.
    QString statusText() const;
    /// Frames the display skipped (arrived while an older snapshot was shown).
    long long skipped() const { return m_skipped; }
    /// Projections of the snapshot on screen.
    int shownProjections() const { return m_shown; }
    /// Projections on screen when this scan's automatic axis search started
    /// (0: not yet: the angles do not cover 180°).
    int axisSearchStartedAt() const { return m_axisStartedAt; }
    /// The coarse volume's cuts (in the "Live volume" dock) and its maker.
    OrthoViews* orthoViews() const { return m_ortho; }
    LiveVolume* liveVolume() const { return m_volume; }

    /// Whether `path` is an HDF5 file whose writer has not closed it (then
    /// the window follows it instead of opening it).
    static bool isGrowingFile(const QString& path);

signals:
    /// After each snapshot is installed (the slice request follows).
    void snapshotShown(int projections);
    void stopped();
    /// An error for the window to show.
    void failed(const QString& title, const QString& message);

private:
    void start(std::unique_ptr<tomo::LiveSource> source, const QString& title, bool stream);
    void poll();
    void updateStatus();
    void updateActions();
    /// Clears the coarse volume for a new scan, then refreshes it when due.
    void refreshVolume(const tomo::LiveState& state);

    Controller* m_controller;
    MainWindow* m_window;
    QTimer m_timer;
    QLabel* m_label = nullptr;
    QAction* m_record = nullptr;
    QAction* m_stop = nullptr;
    std::unique_ptr<tomo::LiveSource> m_source;
    QString m_title;
    long long m_seen = -1;
    int m_scan = -1;
    bool m_installing = false; ///< a snapshot is on its way to the preview thread
    bool m_recording = false;
    bool m_stream = false; ///< a stream (Record applies), not a growing file
    int m_shown = 0;
    long long m_skipped = 0;
    /// When the newest frame of the snapshot on its way arrived, and the
    /// latency of the last one shown (< 0: none yet).
    std::chrono::steady_clock::time_point m_frameTime{};
    double m_latency = -1.0;
    bool m_awaitingPaint = false;
    /// The automatic axis search of this scan: due once 180° are covered
    /// (started after that snapshot is installed), then what it found.
    bool m_axisDue = false;
    int m_axisStartedAt = 0;
    QString m_axisStatus;
    /// The coarse volume: its dock, views and maker; the scan whose first
    /// snapshot the window shows (the parameters on screen are that scan's),
    /// and what the last refresh was asked with.
    QDockWidget* m_volumeDock = nullptr;
    OrthoViews* m_ortho = nullptr;
    LiveVolume* m_volume = nullptr;
    int m_installedScan = -1;
    int m_volumeScan = -1;
    long long m_volumeVersion = -1;
    SliceParams m_volumeParams;
};

} // namespace tomo::ui
