// The workstation measuring itself (tomo-workstation --measure-latency):
// drives a MainWindow as a scientist tuning the axis would and records, in
// the application, the time from each change to the new slice on screen
// and the longest time the UI thread could not answer its event loop (what
// a user feels as a stall). Prints one summary line:
//
//   MEASURED workstation-latency dataset=tooth.h5 size=640x640 projections=181
//     strategy=cpu reference=cpu-reference first_slice_ms=... axis_changes=20
//     axis_median_ms=... axis_max_ms=... worker_median_ms=... prepare_median_ms=...
//     ui_cpu_median_ms=... (UI-thread CPU time to show one slice)
//     row_changes=4 row_median_ms=... row_max_ms=... drag_changes=30 drag_slices=...
//     ui_stall_max_ms=... ui_stall_p99_ms=... reference_ms=... threads=...
//
// (one line; key=value pairs separated by spaces, times in milliseconds).
// Measurements are printed, never asserted: they depend on the machine.
#pragma once

#include <QApplication>
#include <QElapsedTimer>
#include <QEvent>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <vector>

namespace tomo::ui {

class MainWindow;

struct LatencyProbeOptions {
    int axisChanges = 20;        ///< axis steps, each waited for until on screen
    double axisStep = 0.25;      ///< pixels per step (alternating direction)
    int rowChanges = 4;          ///< row steps (load + filter + back-projection)
    int dragChanges = 30;        ///< axis changes 16 ms apart, not waited for (a slider drag)
    int settleMs = 30;           ///< pause after each slice (the reference may start meanwhile)
    int timeoutMs = 300000;      ///< for any one wait (a 2048^2 slice on a CPU takes seconds)
};

/// How long the UI thread could not answer: a 2 ms precise timer runs on it
/// while measuring, and each gap between two ticks beyond 2 ms is a stall
/// (work that kept the thread from its event loop). Works with every event
/// dispatcher; resolution about 1 ms.
/// Names what the UI thread is about to do (a handler, a paint), so that
/// the stall monitor can say what ran during its longest stall. A plain
/// static string: the UI thread writes and reads it.
void noteUiActivity(const char* what);

/// The workstation's application object: while a UiStallMonitor measures,
/// it times every event the UI thread's event loop dispatches, so the
/// monitor can name the event behind its longest stall and say how much of
/// the stall ran outside any event (code the measuring itself called, or
/// the thread not running).
class TimedApplication : public QApplication {
public:
    using QApplication::QApplication;
    bool notify(QObject* receiver, QEvent* event) override;
};

class UiStallMonitor : public QObject {
    Q_OBJECT
public:
    explicit UiStallMonitor(QObject* parent = nullptr);
    void setMeasuring(bool on);
    /// The gaps beyond the interval, in milliseconds, one per tick.
    const std::vector<double>& stalls() const { return m_stalls; }
    /// What the UI thread noted last during the longest stall ("none": nothing).
    const char* longestStallActivity() const { return m_longestActivity; }
    /// The longest event dispatched during the longest stall, as
    /// "Type:Class:ms" ("none" without a TimedApplication), and the part of
    /// that stall spent outside events, in milliseconds.
    QString longestStallEvent() const;
    double longestStallOutsideEventsMs() const { return m_longestOutsideMs; }

private:
    static constexpr int kIntervalMs = 2;
    QTimer* m_tick = nullptr;
    QElapsedTimer m_clock;
    qint64 m_last = -1;
    std::vector<double> m_stalls;
    double m_longest = -1.0;
    const char* m_longestActivity = "none";
    double m_longestEventMs = -1.0;
    const char* m_longestEventClass = nullptr;
    QEvent::Type m_longestEventType = QEvent::None;
    double m_longestOutsideMs = -1.0;
};

class LatencyProbe : public QObject {
    Q_OBJECT
public:
    LatencyProbe(MainWindow& window, LatencyProbeOptions options, QObject* parent = nullptr);

    /// Runs the whole measurement (in nested event loops, so the window
    /// works as usual meanwhile), prints the summary line on stdout and
    /// returns 0; on a timeout or an error dialog it prints the line with
    /// error="…" and returns 1. Call once the window is shown and its
    /// dataset is being opened.
    int run();

private:
    /// Processes events until `done` holds after a result, reference or
    /// error; false on timeout or error (m_error says which).
    bool waitFor(const std::function<bool()>& done);
    /// Changes the parameters with `change` and waits until the slice of the
    /// new parameters is on screen; returns the window's latency in ms.
    bool changeAndWait(const std::function<void()>& change, std::vector<double>& latencies);
    QString summary(const QString& error) const;

    MainWindow& m_window;
    LatencyProbeOptions m_options;
    UiStallMonitor m_stalls;
    QString m_error;
    double m_firstSliceMs = -1.0;
    double m_firstWorkerMs = -1.0; ///< the first slice's reconstruction on the worker
    double m_foundAxisSliceMs = -1.0; ///< from start to the slice at the axis the opening's search found
    std::vector<double> m_axisMs, m_rowMs, m_workerMs, m_prepareMs;
    std::vector<double> m_waitMs, m_deliverMs; ///< of the axis changes: before the worker, after it
    std::vector<double> m_uiCpuMs; // MainWindow::lastShowCpuSeconds per axis change
    std::size_t m_stallsAfterAxis = 0, m_stallsAfterRows = 0; // where each phase's ticks end
    // The views' colour mappings and shrinks on the UI thread while measuring.
    int m_sliceRenders = 0, m_sliceScales = 0, m_differenceRenders = 0, m_differenceScales = 0;
    int m_dragSlices = 0;
    double m_referenceMs = -1.0;
};

} // namespace tomo::ui
