// Live mode (ui/live_mode.h) with the sender of tomo/live.h: a stream's
// counters and slices as frames arrive, Record, stop and a new scan id, and
// a growing file opened through File ▸ Open.
#include "gui_test_support.h"
#include "main_window.h"
#include "work/live_mode.h"

#include "tomo/live.h"
#include "tomo/phantom.h"

#include <QApplication>
#include <QDebug>
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace tomo::ui;
using namespace tomo::ui::test;

namespace {

/// A phantom scan (48 projections of 4 x 48) to play.
QString writeScan(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("scan.h5"));
    tomo::PhantomSpec spec;
    spec.bins = 48;
    spec.rows = 4;
    tomo::writePhantomDXchange(path.toStdString(), spec, tomo::uniformAngles(48), tomo::ScanSimulation{});
    return path;
}

/// Plays `scan` into `sink` on a thread (at `rate` frames/s), with `scanId`.
std::thread play(const QString& scan, std::shared_ptr<tomo::FrameSink> sink, double rate, const std::string& scanId) {
    return std::thread([scan, sink, rate, scanId] {
        auto reader = tomo::openDataset(scan.toStdString());
        tomo::PlayOptions options;
        options.framesPerSecond = rate;
        options.scanId = scanId;
        tomo::playScan(*reader, *sink, options);
    });
}

} // namespace

class LiveModeTest : public QObject {
    Q_OBJECT
    std::unique_ptr<MainWindow> w;

private slots:
    void init() {
        QSettings().clear();
        w = std::make_unique<MainWindow>();
        w->resize(1400, 900);
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    }
    void cleanup() { w.reset(); }

    void streamShowsCountersSlicesRecordsAndRestarts() {
        if (!tomo::zmqAvailable()) QSKIP("this build has no ZeroMQ (TOMO_WITH_ZMQ)");
        QTemporaryDir dir;
        const QString scan = writeScan(dir);
        const QString endpoint = QStringLiteral("inproc://gui-live-test");
        LiveMode* live = w->liveMode();
        live->openStream(endpoint);
        QVERIFY(live->active());
        auto sink = std::shared_ptr<tomo::FrameSink>(tomo::createZmqSender(endpoint.toStdString()));
        std::thread sender = play(scan, sink, 200.0, "first");
        // Slices appear while frames arrive, from the projections present.
        QVERIFY2(waitUntil([&] { return w->dataset() && w->dataset()->info.projections >= 2; }), "no live dataset");
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 48; }));
        // Record from the middle of the scan on: the recording holds the whole scan.
        const QString recording = dir.filePath(QStringLiteral("record.h5"));
        live->startRecording(recording);
        QVERIFY(live->recording());
        sender.join();
        QVERIFY2(waitUntil([&] { return live->shownProjections() == 48; }), "the last snapshot was not shown");
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.projections == 48; }));
        const QString status = live->statusText();
        QVERIFY2(status.contains(QStringLiteral("50 frames")), qPrintable(status)); // 48 + a flat + a dark
        QVERIFY2(status.contains(QStringLiteral("0 rejected")), qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("recording")), qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("latency")), qPrintable(status));
        saveScreenshot(w.get(), QStringLiteral("live_stream"));

        // A sender restart with a new scan id starts the view afresh (a new dataset) and ends the recording.
        const int generation = w->dataset()->generation;
        std::thread again = play(scan, sink, 0.0, "second");
        again.join();
        QVERIFY2(waitUntil([&] { return w->dataset()->generation > generation; }), "a new scan id was not a new view");
        QVERIFY2(waitUntil([&] { return tomo::hdf5WriterClosed(recording.toStdString()); }), "recording not finished");
        const auto recorded = tomo::openDataset(recording.toStdString());
        QCOMPARE(recorded->info().projections, 48);
        QCOMPARE(recorded->info().flats, 1);
        QCOMPARE(recorded->info().darks, 1);

        live->stop();
        QVERIFY(!live->active());
    }

    void growingFileOpenedIsFollowed() {
        QTemporaryDir dir;
        const QString scan = writeScan(dir);
        const QString growing = dir.filePath(QStringLiteral("growing.h5"));
        QVERIFY(!LiveMode::isGrowingFile(scan));
        // The writer is another process (HDF5 keeps one file object per
        // process): 10 projections, then it waits for a byte, then the rest.
        int go[2];
        QVERIFY(::pipe(go) == 0);
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::close(go[1]);
            try {
                auto reader = tomo::openDataset(scan.toStdString());
                auto writer = tomo::createGrowingScanWriter(growing.toStdString(), reader->info().rows,
                                                            reader->info().columns, reader->info().sampleType, false);
                struct Pause final : tomo::FrameSink {
                    tomo::FrameSink& next;
                    int fd, projections = 0;
                    Pause(tomo::FrameSink& n, int f) : next(n), fd(f) {}
                    void send(const tomo::Frame& frame) override {
                        next.send(frame);
                        char c = 0;
                        if (frame.kind == tomo::FrameKind::Projection && ++projections == 10 && ::read(fd, &c, 1) != 1)
                            ::_exit(3);
                    }
                    void finish(const std::string& id) override { next.finish(id); }
                } pause(*writer, go[0]);
                tomo::playScan(*reader, pause);
            } catch (...) {
                ::_exit(2);
            }
            ::_exit(0);
        }
        ::close(go[0]);
        QVERIFY2(waitUntil([&] { return LiveMode::isGrowingFile(growing); }), "the writer did not start");
        w->openPath(growing); // File ▸ Open on a file being written: followed
        LiveMode* live = w->liveMode();
        QVERIFY(live->active());
        QVERIFY2(waitUntil([&] { return live->shownProjections() == 10; }), "the first 10 projections were not shown");
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.projections == 10; }));
        QVERIFY(::write(go[1], "g", 1) == 1);
        ::close(go[1]);
        QVERIFY2(waitUntil([&] { return live->shownProjections() == 48; }), "the whole scan was not shown");
        const bool shown = waitForResult(*w, [](const SliceResult& r) { return r.preview.projections == 48; }, 20000);
        if (!shown) {
            auto* box = w->findChild<QMessageBox*>(QStringLiteral("errorDialog"));
            qWarning() << "last slice from" << (w->currentResult() ? w->currentResult()->preview.projections : -1)
                       << "projections; dataset" << w->dataset()->info.projections << "; status" << live->statusText()
                       << "; error" << (box ? box->text() : QString());
        }
        QVERIFY(shown);
        int status = 0;
        ::waitpid(pid, &status, 0);
        QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        QVERIFY(!LiveMode::isGrowingFile(growing));
        live->stop();
    }
};

int main(int argc, char** argv) {
    prepareEnvironment(/*offscreenOk=*/true);
    QApplication app(argc, argv);
    initTestApplication();
    LiveModeTest test;
    return runSuite(test, argc, argv);
}

#include "test_live_mode.moc"
