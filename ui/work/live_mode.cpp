#include "work/live_mode.h"

#include "main_window.h"
#include "panels/parameter_panel.h"
#include "views/ortho_views.h"
#include "work/controller.h"
#include "work/live_volume.h"

#include "tomo/axis_finder.h"
#include "tomo/error.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QStatusBar>
#include <QStringBuilder>

namespace tomo::ui {

using Clock = std::chrono::steady_clock;

LiveMode::LiveMode(Controller* controller, MainWindow* window)
    : QObject(window), m_controller(controller), m_window(window) {
    m_timer.setInterval(100);
    connect(&m_timer, &QTimer::timeout, this, &LiveMode::poll);
    connect(m_controller, &Controller::liveSnapshotShown, this, [this](int projections) {
        m_installing = false;
        m_awaitingPaint = true;
        m_installedScan = m_scan;
        if (m_axisDue && m_source) {
            // 180° covered: the finder runs on the snapshot now installed (as Ctrl+F).
            m_axisDue = false;
            m_axisStartedAt = projections;
            m_axisStatus = tr("180° covered: finding the axis on %1 projections…").arg(projections);
            m_window->parameterPanel()->findAxis();
        }
        emit snapshotShown(projections);
        updateStatus();
    });
    connect(m_controller, &Controller::axisFound, this, [this](const AxisResult& r) {
        if (!m_source || m_axisStartedAt == 0 || m_axisStatus.isEmpty() || r.onOpening) return;
        m_axisStatus = tr("axis %1 px found at 180° (%2 projections, confidence %3)")
                           .arg(r.estimate.axis, 0, 'f', 2)
                           .arg(m_axisStartedAt)
                           .arg(r.estimate.confidence, 0, 'f', 2);
        updateStatus();
    });
    connect(m_controller, &Controller::axisFailed, this, [this](int, const QString& why) {
        if (!m_source || m_axisStartedAt == 0 || m_axisStatus.isEmpty()) return;
        m_axisStatus = tr("axis finder at 180°: %1").arg(why);
        updateStatus();
    });
    connect(m_window, &MainWindow::resultOnScreen, this, [this](quint64, double) {
        if (!m_awaitingPaint || !m_source) return;
        m_awaitingPaint = false;
        m_latency = std::chrono::duration<double>(Clock::now() - m_frameTime).count();
        updateStatus();
    });
    m_label = new QLabel(m_window);
    m_label->setObjectName(QStringLiteral("liveStatus"));
    m_label->hide();
    m_window->statusBar()->addPermanentWidget(m_label);

    m_volume = new LiveVolume(this);
    m_ortho = new OrthoViews;
    m_volumeDock = new QDockWidget(tr("Live volume"), m_window);
    m_volumeDock->setObjectName(QStringLiteral("liveVolumeDock"));
    m_volumeDock->setWidget(m_ortho);
    m_window->addDockWidget(Qt::BottomDockWidgetArea, m_volumeDock);
    m_volumeDock->hide();
    connect(m_volume, &LiveVolume::volumeReady, m_ortho, &OrthoViews::setVolume);
    connect(m_volume, &LiveVolume::failed, m_ortho,
            [this](const QString& why) { m_ortho->clear(tr("Coarse volume: %1").arg(why)); });
    // Another dataset opened after Stop Live: the cuts were of the live scan.
    connect(m_controller, &Controller::datasetOpened, this, [this] {
        if (m_source) return;
        m_volume->clear();
        m_ortho->clear(QString());
        m_volumeDock->hide();
    });
    connect(m_window->parameterPanel(), &ParameterPanel::paramsChanged, m_ortho,
            [this] { m_ortho->setSliceRow(m_window->parameterPanel()->params().row); });
}

LiveMode::~LiveMode() = default;

void LiveMode::addActions(QMenu* file) {
    QAction* stream = file->addAction(tr("Open &Stream…"));
    stream->setObjectName(QStringLiteral("action-open-stream"));
    stream->setStatusTip(tr("Reconstruct frames from a ZeroMQ stream (tomo-stream --zmq, a detector) as they arrive"));
    connect(stream, &QAction::triggered, this, [this] {
        bool ok = false;
        const QString endpoint =
            QInputDialog::getText(m_window, tr("Open Stream"),
                                  tr("ZeroMQ endpoint to listen on (frames are pushed to it),\n"
                                     "or sub+ENDPOINT to subscribe to a publisher:"),
                                  QLineEdit::Normal,
                                  QStringLiteral("tcp://127.0.0.1:5555"), &ok);
        if (ok && !endpoint.isEmpty()) openStream(endpoint);
    });
    QAction* follow = file->addAction(tr("&Follow Growing File…"));
    follow->setObjectName(QStringLiteral("action-follow-file"));
    follow->setStatusTip(tr("Reconstruct a DXchange file while it is written (HDF5 SWMR, tomo-stream --to)"));
    connect(follow, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(m_window, tr("Follow growing file"), QString(),
                                                          tr("HDF5 files (*.h5 *.hdf5);;All files (*)"));
        if (!path.isEmpty()) followFile(path);
    });
    m_record = file->addAction(tr("&Record Live Scan…"));
    m_record->setObjectName(QStringLiteral("action-record"));
    m_record->setStatusTip(tr("Write every frame of the live scan (those received and those to come) to a DXchange file"));
    connect(m_record, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(m_window, tr("Record to"), QString(),
                                                          tr("DXchange HDF5 (*.h5)"));
        if (!path.isEmpty()) startRecording(path);
    });
    m_stop = file->addAction(tr("S&top Live"));
    m_stop->setObjectName(QStringLiteral("action-stop-live"));
    connect(m_stop, &QAction::triggered, this, &LiveMode::stop);
    updateActions();
}

bool LiveMode::isGrowingFile(const QString& path) {
    try {
        return QFileInfo(path).isFile() && !tomo::hdf5WriterClosed(path.toStdString());
    } catch (const std::exception&) {
        return false; // not HDF5: opened the ordinary way
    }
}

void LiveMode::openStream(const QString& endpoint) {
    try {
        start(tomo::openZmqStream(tomo::streamOptionsFor(endpoint.toStdString())), endpoint, /*stream=*/true);
    } catch (const std::exception& e) {
        emit failed(tr("Cannot open the stream"), QString::fromUtf8(e.what()));
    }
}

void LiveMode::followFile(const QString& path) {
    try {
        start(tomo::followGrowingFile(path.toStdString()), QFileInfo(path).fileName(), /*stream=*/false);
    } catch (const std::exception& e) {
        emit failed(tr("Cannot follow the file"), QString::fromUtf8(e.what()));
    }
}

void LiveMode::start(std::unique_ptr<tomo::LiveSource> source, const QString& title, bool stream) {
    stop();
    m_source = std::move(source);
    m_stream = stream;
    m_title = title;
    m_seen = -1;
    m_scan = -1;
    m_shown = 0;
    m_skipped = 0;
    m_latency = -1.0;
    m_installing = false;
    m_axisDue = false;
    m_axisStartedAt = 0;
    m_axisStatus.clear();
    m_installedScan = -1;
    m_volumeScan = -1;
    m_volume->clear();
    m_ortho->clear(tr("Waiting for the first frames…"));
    m_ortho->setSliceRow(m_window->parameterPanel()->params().row);
    m_volumeDock->show();
    m_label->show();
    m_timer.start();
    updateActions();
    updateStatus();
}

void LiveMode::startRecording(const QString& path) {
    if (!m_source) return;
    try {
        const auto snapshot = m_source->snapshot(); // the frames' shape and type
        const auto& info = snapshot->info();
        m_source->record(
            tomo::createGrowingScanWriter(path.toStdString(), info.rows, info.columns, info.sampleType, true));
        m_recording = true;
    } catch (const std::exception& e) {
        emit failed(tr("Cannot record"), QString::fromUtf8(e.what()));
    }
    updateActions();
    updateStatus();
}

void LiveMode::stop() {
    if (!m_source) return;
    m_timer.stop();
    try {
        if (m_recording) m_source->record(nullptr); // finishes the recording
    } catch (const std::exception& e) {
        emit failed(tr("Cannot finish the recording"), QString::fromUtf8(e.what()));
    }
    m_recording = false;
    m_source.reset();
    m_label->hide();
    updateActions();
    emit stopped();
}

void LiveMode::poll() {
    if (!m_source) return;
    tomo::LiveState state;
    try {
        state = m_source->wait(m_seen, std::chrono::milliseconds(0));
    } catch (const std::exception& e) {
        const QString message = QString::fromUtf8(e.what());
        stop();
        emit failed(tr("Live scan stopped"), message);
        return;
    }
    updateStatus();
    refreshVolume(state);
    // One snapshot at a time on its way: meanwhile newer frames wait (skipped if more come).
    if (state.version == m_seen || state.projections < 2 || m_installing) return;
    try {
        const bool sameScan = state.scan == m_scan;
        const auto snapshot = m_source->snapshot();
        m_frameTime = m_source->counters().lastFrame;
        const int n = snapshot->info().projections;
        if (sameScan) m_skipped += std::max(0, n - m_shown - 1);
        else {
            m_axisStartedAt = 0; // a new scan: its own search at its 180°
            m_axisStatus.clear();
        }
        m_axisDue = m_axisStartedAt == 0 && tomo::coversHalfTurn(snapshot->info().angles);
        m_shown = n;
        m_seen = state.version;
        m_scan = state.scan;
        m_installing = true;
        m_controller->showLiveSnapshot(snapshot, m_title % QStringLiteral(" (live)"), sameScan);
    } catch (const std::exception& e) {
        m_window->statusBar()->showMessage(tr("Live: %1").arg(QString::fromUtf8(e.what())), 4000);
    }
}

void LiveMode::refreshVolume(const tomo::LiveState& state) {
    if (state.scan != m_volumeScan) {
        m_volumeScan = state.scan;
        m_volumeVersion = -1;
        m_volume->clear();
        m_ortho->clear(tr("Scan %1: waiting for its frames…").arg(QString::fromStdString(state.scanId)));
    }
    // The parameters on screen belong to this scan once its first snapshot is shown.
    if (state.projections < 2 || state.scan != m_installedScan || !m_volume->due()) return;
    const SliceParams params = m_window->parameterPanel()->params();
    if (state.version == m_volumeVersion && LiveVolume::sameVolume(params, m_volumeParams)) return;
    try {
        if (m_volume->refresh(m_source->snapshot(), params, state.scan)) {
            m_volumeVersion = state.version;
            m_volumeParams = params;
        }
    } catch (const std::exception& e) {
        m_ortho->clear(tr("Coarse volume: %1").arg(QString::fromUtf8(e.what())));
    }
}

QString LiveMode::statusText() const { return m_label->text(); }

void LiveMode::updateStatus() {
    if (!m_source) return;
    const tomo::LiveCounters c = m_source->counters();
    QString text = tr("Live: %1 · %2 frames · %3 frames/s · %4 GB/s · %5 rejected · %6 skipped by the display")
                       .arg(m_title)
                       .arg(c.frames)
                       .arg(c.framesPerSecond, 0, 'f', 0)
                       .arg(c.gigabytesPerSecond, 0, 'f', 2)
                       .arg(c.rejected)
                       .arg(m_skipped);
    if (m_latency >= 0.0) text += tr(" · latency %1 ms").arg(m_latency * 1e3, 0, 'f', 0);
    if (!m_axisStatus.isEmpty()) text += QStringLiteral(" · ") + m_axisStatus;
    if (m_recording) text += tr(" · recording");
    m_label->setText(text);
}

void LiveMode::updateActions() {
    if (m_record) m_record->setEnabled(m_source && !m_recording && m_stream); // a growing file is its own recording
    if (m_stop) m_stop->setEnabled(m_source != nullptr);
}

} // namespace tomo::ui
