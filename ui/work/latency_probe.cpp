#include "work/latency_probe.h"

#include "main_window.h"
#include "panels/parameter_panel.h"
#include "panels/quality_panel.h"
#include "views/slice_view.h"

#include <QEventLoop>
#include <QFileInfo>
#include <QMetaEnum>
#include <QThread>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tomo::ui {

namespace {

/// The q-quantile (0..1) of `values`, nearest rank; -1 when empty.
double quantile(std::vector<double> values, double q) {
    if (values.empty()) return -1.0;
    std::sort(values.begin(), values.end());
    const auto i = static_cast<std::size_t>(std::lround(q * static_cast<double>(values.size() - 1)));
    return values[std::min(i, values.size() - 1)];
}

QString ms(double value) { return value < 0.0 ? QStringLiteral("-1") : QString::number(value, 'f', 2); }

/// A value for key=value: no spaces.
QString token(QString text) { return text.isEmpty() ? QStringLiteral("none") : text.replace(QLatin1Char(' '), QLatin1Char('_')); }

} // namespace

namespace {
const char* g_uiActivity = "none";

/// The events of the UI thread's loop between two ticks of the monitor.
/// Written and read on the UI thread only.
struct EventTiming {
    bool on = false;
    int depth = 0;          ///< notify() calls in progress on the UI thread
    int measuredDepth = 0;  ///< the depth of the loop's own dispatches
    double eventsMs = 0.0;  ///< in dispatches since the last tick
    double longestMs = -1.0;
    const char* longestClass = nullptr;
    QEvent::Type longestType = QEvent::None;
};
EventTiming g_events;
} // namespace

void noteUiActivity(const char* what) { g_uiActivity = what; }

bool TimedApplication::notify(QObject* receiver, QEvent* event) {
    if (!g_events.on || QThread::currentThread() != thread()) return QApplication::notify(receiver, event);
    struct Depth {
        Depth() { ++g_events.depth; }
        ~Depth() { --g_events.depth; }
    };
    if (g_events.depth != g_events.measuredDepth) {
        const Depth nested;
        return QApplication::notify(receiver, event);
    }
    // Read before: the event and its receiver may be deleted by the dispatch.
    const char* cls = receiver->metaObject()->className();
    const QEvent::Type type = event->type();
    QElapsedTimer clock;
    clock.start();
    bool handled = false;
    {
        const Depth dispatch;
        handled = QApplication::notify(receiver, event);
    }
    const double took = clock.nsecsElapsed() / 1e6;
    g_events.eventsMs += took;
    if (took > g_events.longestMs) {
        g_events.longestMs = took;
        g_events.longestClass = cls;
        g_events.longestType = type;
    }
    return handled;
}

UiStallMonitor::UiStallMonitor(QObject* parent) : QObject(parent), m_tick(new QTimer(this)) {
    m_tick->setTimerType(Qt::PreciseTimer);
    m_tick->setInterval(kIntervalMs);
    connect(m_tick, &QTimer::timeout, this, [this] {
        const qint64 now = m_clock.nsecsElapsed();
        if (m_last >= 0) {
            const double stall = std::max(0.0, (now - m_last) / 1e6 - kIntervalMs);
            m_stalls.push_back(stall);
            if (stall > m_longest) {
                m_longest = stall;
                m_longestActivity = g_uiActivity;
                m_longestEventMs = g_events.longestMs;
                m_longestEventClass = g_events.longestClass;
                m_longestEventType = g_events.longestType;
                m_longestOutsideMs = (now - m_last) / 1e6 - g_events.eventsMs;
            }
        }
        m_last = now;
        g_uiActivity = "none"; // what is noted from here on ran in the next gap
        g_events.eventsMs = 0.0;
        g_events.longestMs = -1.0;
    });
}

QString UiStallMonitor::longestStallEvent() const {
    if (!m_longestEventClass) return QStringLiteral("none");
    const char* type = QMetaEnum::fromType<QEvent::Type>().valueToKey(m_longestEventType);
    return QStringLiteral("%1:%2:%3")
        .arg(type ? QString::fromLatin1(type) : QString::number(m_longestEventType),
             QString::fromLatin1(m_longestEventClass), QString::number(m_longestEventMs, 'f', 2));
}

void UiStallMonitor::setMeasuring(bool on) {
    // Depth is counted only while on: from here, dispatches at the current
    // depth are the loop's own; events sent inside them count in theirs.
    g_events.on = on;
    g_events.measuredDepth = g_events.depth;
    g_events.eventsMs = 0.0;
    g_events.longestMs = -1.0;
    m_last = -1;
    m_clock.start();
    if (on) m_tick->start();
    else m_tick->stop();
}

LatencyProbe::LatencyProbe(MainWindow& window, LatencyProbeOptions options, QObject* parent)
    : QObject(parent), m_window(window), m_options(options) {}

bool LatencyProbe::waitFor(const std::function<bool()>& done) {
    if (done()) return true;
    QEventLoop loop;
    QTimer timeout;
    timeout.setSingleShot(true);
    connect(&timeout, &QTimer::timeout, &loop, [&] {
        m_error = QStringLiteral("timeout after %1 s").arg(m_options.timeoutMs / 1000);
        loop.quit();
    });
    auto check = [&] {
        if (done()) loop.quit();
    };
    const auto a = connect(&m_window, &MainWindow::resultOnScreen, &loop, check);
    const auto b = connect(&m_window, &MainWindow::referenceShown, &loop, check);
    const auto d = connect(&m_window, &MainWindow::openingAxisSearched, &loop, check);
    const auto c = connect(&m_window, &MainWindow::errorShown, &loop, [&](const QString& title, const QString& text) {
        m_error = title % QStringLiteral(": ") % text;
        loop.quit();
    });
    timeout.start(m_options.timeoutMs);
    loop.exec();
    disconnect(a);
    disconnect(b);
    disconnect(c);
    disconnect(d);
    return m_error.isEmpty() && done();
}

bool LatencyProbe::changeAndWait(const std::function<void()>& change, std::vector<double>& latencies) {
    change();
    const SliceParams wanted = m_window.parameterPanel()->params();
    quint64 shownId = 0;
    double seconds = -1.0;
    const auto onScreen = connect(&m_window, &MainWindow::resultOnScreen, this, [&](quint64 id, double s) {
        shownId = id;
        seconds = s;
    });
    const bool ok = waitFor([&] {
        const SliceResult* r = m_window.currentResult();
        return r && r->id == shownId && r->params.axis == wanted.axis && r->params.row == wanted.row;
    });
    disconnect(onScreen);
    if (!ok) return false;
    if (&latencies == &m_axisMs && m_window.lastShowCpuSeconds() >= 0.0)
        m_uiCpuMs.push_back(m_window.lastShowCpuSeconds() * 1e3);
    latencies.push_back(seconds * 1e3);
    const SliceResult& shown = *m_window.currentResult();
    m_workerMs.push_back(shown.preview.secondsTotal * 1e3);
    m_prepareMs.push_back(shown.secondsPrepare * 1e3);
    if (&latencies == &m_axisMs) {
        m_waitMs.push_back(shown.secondsWaiting * 1e3);
        // The rest: the result's trip to the UI thread, its handling and the paint.
        m_deliverMs.push_back(seconds * 1e3 - (shown.secondsWaiting + shown.preview.secondsTotal + shown.secondsPrepare) * 1e3);
    }
    // A pause, as between two clicks: the reference starts and is pre-empted by the next change.
    QEventLoop pause;
    QTimer::singleShot(m_options.settleMs, &pause, &QEventLoop::quit);
    pause.exec();
    return true;
}

int LatencyProbe::run() {
    QElapsedTimer sinceStart;
    sinceStart.start();
    // 1. The first slice of the dataset (open, automatic axis, first reconstruction).
    if (!waitFor([&] { return m_window.currentResult() != nullptr && m_window.lastLatency() >= 0.0; })) {
        std::printf("%s\n", qPrintable(summary(m_error.isEmpty() ? QStringLiteral("no slice") : m_error)));
        return 1;
    }
    m_firstSliceMs = sinceStart.nsecsElapsed() / 1e6;
    m_firstWorkerMs = m_window.currentResult()->preview.secondsTotal * 1e3;
    // 1b. The opening's axis search, and the slice at the axis it found.
    if (m_window.openingAxisPending()) {
        const bool found = waitFor([&] {
            if (m_window.openingAxisPending()) return false;
            const SliceResult* r = m_window.currentResult();
            return !m_window.openingAxis() || (r && r->params.axis == m_window.parameterPanel()->params().axis &&
                                               m_window.lastLatency() >= 0.0);
        });
        if (!found) {
            std::printf("%s\n", qPrintable(summary(m_error.isEmpty() ? QStringLiteral("no axis search") : m_error)));
            return 1;
        }
        m_foundAxisSliceMs = sinceStart.nsecsElapsed() / 1e6;
    }
    m_stalls.setMeasuring(true);
    SliceView* slice = m_window.sliceView();
    SliceView* difference = m_window.qualityPanel()->view();
    slice->resetLongestPaint();
    difference->resetLongestPaint();
    m_sliceRenders = -slice->renderCount();
    m_sliceScales = -slice->scaleCount();
    m_differenceRenders = -difference->renderCount();
    m_differenceScales = -difference->scaleCount();
    ParameterPanel* panel = m_window.parameterPanel();

    // 2. Axis steps, each waited for until on screen.
    for (int i = 0; i < m_options.axisChanges && m_error.isEmpty(); ++i) {
        const double step = (i % 2 == 0 ? 1.0 : -1.0) * m_options.axisStep;
        changeAndWait([&] { panel->nudgeAxis(step); }, m_axisMs);
    }
    m_stallsAfterAxis = m_stalls.stalls().size();
    // 3. Row steps: each loads, filters and back-projects a new sinogram.
    const int rows = m_window.dataset() ? m_window.dataset()->info.rows : 1;
    for (int i = 0; i < m_options.rowChanges && m_error.isEmpty() && rows > 1; ++i) {
        const int row = panel->params().row;
        const int delta = row + 1 < rows ? 1 : -1;
        changeAndWait([&] { panel->stepRow(delta); }, m_rowMs);
    }
    m_stallsAfterRows = m_stalls.stalls().size();
    // 4. A slider drag: changes 16 ms apart, not waited for; they coalesce.
    if (m_error.isEmpty() && m_options.dragChanges > 0) {
        int shown = 0;
        const auto counter = connect(&m_window, &MainWindow::resultShown, this, [&] { ++shown; });
        QEventLoop drag;
        QTimer tick;
        int left = m_options.dragChanges;
        connect(&tick, &QTimer::timeout, &drag, [&] {
            panel->nudgeAxis(0.05);
            if (--left == 0) drag.quit();
        });
        tick.start(16);
        drag.exec();
        tick.stop();
        const SliceParams last = panel->params();
        waitFor([&] {
            const SliceResult* r = m_window.currentResult();
            return r && r->params.axis == last.axis;
        });
        disconnect(counter);
        m_dragSlices = shown;
    }
    m_stalls.setMeasuring(false);
    m_sliceRenders += slice->renderCount();
    m_sliceScales += slice->scaleCount();
    m_differenceRenders += difference->renderCount();
    m_differenceScales += difference->scaleCount();
    // 5. The reference, computed at low priority once the changes stop.
    if (m_error.isEmpty() && m_window.qualityPanel()->isVisible() && m_window.qualityPanel()->automaticReference()) {
        QElapsedTimer reference;
        reference.start();
        if (waitFor([&] { return m_window.activeReference() != nullptr; })) m_referenceMs = reference.nsecsElapsed() / 1e6;
    }
    std::printf("%s\n", qPrintable(summary(m_error)));
    std::fflush(stdout);
    return m_error.isEmpty() ? 0 : 1;
}

QString LatencyProbe::summary(const QString& error) const {
    const SliceResult* r = m_window.currentResult();
    const ReferenceResult* ref = m_window.activeReference();
    QString dataset = QStringLiteral("none");
    if (m_window.dataset()) dataset = m_window.dataset()->demo ? QStringLiteral("demo-phantom") : QFileInfo(m_window.dataset()->path).fileName();
    QString line = QStringLiteral("MEASURED workstation-latency dataset=%1 size=%2x%3 projections=%4 strategy=%5 reference=%6")
                       .arg(token(dataset))
                       .arg(r ? r->preview.slice.width : 0)
                       .arg(r ? r->preview.slice.height : 0)
                       .arg(r ? r->preview.projections : 0)
                       .arg(token(r ? QString::fromStdString(r->preview.strategy) : QString()))
                       .arg(token(ref ? QString::fromStdString(ref->options.strategy) % QLatin1Char('-') %
                                            QString::fromUtf8(tomo::interpolationName(ref->options.interpolation).data())
                                      : QString()));
    const auto& opened = m_window.dataset();
    const auto& axis = m_window.openingAxis();
    line += QStringLiteral(" open_ms=%1 axis_finder_ms=%2 found_axis_slice_ms=%3 first_worker_ms=%4")
                .arg(ms(opened ? opened->secondsToOpen * 1e3 : 0.0))
                .arg(ms(axis ? axis->seconds * 1e3 : 0.0))
                .arg(ms(m_foundAxisSliceMs))
                .arg(ms(m_firstWorkerMs));
    line += QStringLiteral(" first_slice_ms=%1 axis_changes=%2 axis_median_ms=%3 axis_max_ms=%4 worker_median_ms=%5 "
                           "prepare_median_ms=%6 ui_cpu_median_ms=%7")
                .arg(ms(m_firstSliceMs))
                .arg(m_axisMs.size())
                .arg(ms(quantile(m_axisMs, 0.5)), ms(quantile(m_axisMs, 1.0)), ms(quantile(m_workerMs, 0.5)),
                     ms(quantile(m_prepareMs, 0.5)), ms(quantile(m_uiCpuMs, 0.5)));
    line += QStringLiteral(" axis_wait_median_ms=%1 axis_deliver_median_ms=%2")
                .arg(ms(quantile(m_waitMs, 0.5)), ms(quantile(m_deliverMs, 0.5)));
    line += QStringLiteral(" row_changes=%1 row_median_ms=%2 row_max_ms=%3 drag_changes=%4 drag_slices=%5")
                .arg(m_rowMs.size())
                .arg(ms(quantile(m_rowMs, 0.5)), ms(quantile(m_rowMs, 1.0)))
                .arg(m_options.dragChanges)
                .arg(m_dragSlices);
    line += QStringLiteral(" ui_stall_max_ms=%1 ui_stall_p99_ms=%2 reference_ms=%3 threads=%4")
                .arg(ms(quantile(m_stalls.stalls(), 1.0)), ms(quantile(m_stalls.stalls(), 0.99)), ms(m_referenceMs))
                .arg(QThread::idealThreadCount());
    // Where the UI thread stalled (axis steps, row steps, the drag) and its
    // longest paints: what to look at when the stall is too long.
    const std::vector<double>& all = m_stalls.stalls();
    auto phaseMax = [&](std::size_t first, std::size_t last) {
        last = std::min(last, all.size());
        first = std::min(first, last);
        return ms(quantile(std::vector<double>(all.begin() + static_cast<std::ptrdiff_t>(first),
                                               all.begin() + static_cast<std::ptrdiff_t>(last)),
                           1.0));
    };
    line += QStringLiteral(" ui_stall_axis_max_ms=%1 ui_stall_row_max_ms=%2 ui_stall_drag_max_ms=%3 "
                           "slice_paint_max_ms=%4 difference_paint_max_ms=%5")
                .arg(phaseMax(0, m_stallsAfterAxis), phaseMax(m_stallsAfterAxis, m_stallsAfterRows),
                     phaseMax(m_stallsAfterRows, all.size()))
                .arg(ms(m_window.sliceView()->longestPaintSeconds() * 1e3),
                     ms(m_window.qualityPanel()->view()->longestPaintSeconds() * 1e3));
    line += QStringLiteral(" ui_stall_longest_during=%1 ui_stall_longest_event=%2 ui_stall_longest_outside_events_ms=%3")
                .arg(token(QString::fromUtf8(m_stalls.longestStallActivity())), token(m_stalls.longestStallEvent()),
                     ms(m_stalls.longestStallOutsideEventsMs()));
    line += QStringLiteral(" ui_renders=%1/%2 ui_scales=%3/%4")
                .arg(m_sliceRenders)
                .arg(m_differenceRenders)
                .arg(m_sliceScales)
                .arg(m_differenceScales);
    if (!error.isEmpty()) line += QStringLiteral(" error=\"%1\"").arg(QString(error).replace(QLatin1Char('"'), QLatin1Char('\'')).simplified());
    return line;
}

} // namespace tomo::ui
