// GUI tests of the work side (the controller and its workers): slices prepared off the UI thread,
// changes coalesced, the reference never delaying the result, opening that
// reads rows rather than the file, the damaged-file check (crash, hang,
// missing tomo-recon), the dataset session without a window (what it
// remembers per dataset, a parameter file opening its dataset), the
// settings kept between runs and tomo-workstation --measure-latency.
#include "gui_test_support.h"

#include "main_window.h"
#include "panels/parameter_panel.h"
#include "panels/quality_panel.h"
#include "views/colormap.h"
#include "views/histogram_widget.h"
#include "views/slice_view.h"
#include "work/controller.h"
#include "work/dataset_check.h"
#include "work/dataset_session.h"
#include "work/file_places.h"
#include "work/window_settings.h"

#include "tomo/metrics.h"
#include "tomo/phantom.h"
#include "tomo/run_config.h"

#include <QApplication>
#include <QCheckBox>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMap>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <unistd.h>

using namespace tomo::ui;
using namespace tomo::ui::test;

namespace {

/// An executable shell script `name` in `dir` running `body`; empty when it cannot be written.
QString writeScript(const QTemporaryDir& dir, const QString& name, const QByteArray& body) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write("#!/bin/sh\n" + body) < 0) return {};
    f.close();
    return f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner) ? path : QString();
}

} // namespace

class WorkTests : public WindowTest {
    Q_OBJECT

private slots:

    void datasetCheckThatCrashesHangsOrIsMissing() {
        QTemporaryDir dir;
        const QString scan = dir.filePath(QStringLiteral("scan.h5"));
        writeSmallScan(scan);
        // A check that crashes, or does not end: the file is said to be damaged.
        const QString crashes = writeScript(dir, QStringLiteral("crashes"), "kill -SEGV $$\n");
        const QString hangs = writeScript(dir, QStringLiteral("hangs"), "exec sleep 600\n");
        QVERIFY(!crashes.isEmpty() && !hangs.isEmpty());
        w->datasetCheck()->setProgram(crashes);
        expectOpenError(scan, {scan, QStringLiteral("crashed"), QStringLiteral("damaged")});
        qputenv("TOMO_METADATA_TIMEOUT", "1");
        w->datasetCheck()->setProgram(hangs);
        expectOpenError(scan, {scan, QStringLiteral("within 2 s"), QStringLiteral("damaged")});
        qunsetenv("TOMO_METADATA_TIMEOUT");
        // Without tomo-recon the file opens unchecked, and the status bar says so.
        w->datasetCheck()->setProgram({});
        QSignalSpy messages(w->statusBar(), &QStatusBar::messageChanged);
        w->openPath(scan);
        QVERIFY(waitUntil([&] { return w->dataset() && w->dataset()->path == scan; }));
        QStringList said;
        for (const QList<QVariant>& m : messages) said << m.first().toString();
        QVERIFY2(said.filter(QStringLiteral("without the damaged-file guard: tomo-recon was not found")).size() >= 2,
                 qPrintable(said.join(QLatin1Char('\n'))));
        // The arguments read the file as the workstation will.
        tomo::OpenOptions options;
        options.anglesFile = "angles.txt";
        options.anglesLines = tomo::LineRange{2, 10};
        options.angleUnits = tomo::AngleUnits::Radians;
        options.variable = "data,theta";
        QCOMPARE(DatasetCheck::infoArguments(QStringLiteral("-x.mat"), options),
                 (QStringList{QStringLiteral("--info"), QStringLiteral("--angles"), QStringLiteral("angles.txt"),
                              QStringLiteral("--angles-lines"), QStringLiteral("2:12"), QStringLiteral("--angle-units"),
                              QStringLiteral("radians"), QStringLiteral("--angle-range"), QStringLiteral("180"),
                              QStringLiteral("--variable"), QStringLiteral("data,theta"), QStringLiteral("--"),
                              QStringLiteral("-x.mat")}));
    }


    void slicesArePreparedOffTheUiThread() {
        // The UI thread only shows ready images: statistics, colours and the
        // comparison with the reference are made on the worker that reconstructs,
        // and shrunk there to the views' zoom (640 px is shown below 1:1 here).
        openDemo(640, 2);
        QVERIFY(waitForReference(*w));
        const int rendersBefore = w->sliceView()->renderCount();
        const int differenceRendersBefore = w->qualityPanel()->view()->renderCount();
        const int sliceScalesBefore = w->sliceView()->scaleCount();
        QSignalSpy onScreen(w.get(), &MainWindow::resultOnScreen);
        setParams([](SliceParams& p) { p.options.strategy = "cpu-reference"; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.strategy == "cpu-reference"; }));
        QVERIFY(waitForReference(*w));
        QVERIFY(waitUntil([&] { return !onScreen.isEmpty(); }));

        const SliceResult& r = *w->currentResult();
        QThread* worker = w->controller()->previewThread();
        QVERIFY(worker != QThread::currentThread());
        QCOMPARE(r.display.preparedOn, worker);
        QVERIFY(r.comparisonFollows);
        QVERIFY(waitUntil([&] { return w->currentComparison() != nullptr; }));
        const Comparison& comparison = *w->currentComparison();
        QCOMPARE(comparison.resultId, r.id);
        QCOMPARE(comparison.preparedOn, worker);
        // What the worker made is what a fresh computation gives.
        const ImageStats expectedStats = computeStats(r.preview.slice.data);
        QCOMPARE(r.stats.autoLow, expectedStats.autoLow);
        QCOMPARE(r.stats.autoHigh, expectedStats.autoHigh);
        QCOMPARE(r.display.low, expectedStats.autoLow);
        const QImage expectedColours = renderImage(r.preview.slice.data.data(), r.preview.slice.width, r.preview.slice.height,
                                                   expectedStats.autoLow, expectedStats.autoHigh, colormap(QStringLiteral("grey")));
        QVERIFY(r.display.rendered == expectedColours);
        const ReferenceResult* ref = w->activeReference();
        QVERIFY(ref);
        const auto expectedMetrics = tomo::compareImages(
            r.preview.slice, ref->image, reconstructionDisc(r.preview.region, r.preview.gridSize));
        QVERIFY(w->qualityPanel()->metrics().has_value());
        QCOMPARE(w->qualityPanel()->metrics()->rmse, expectedMetrics.rmse);
        QCOMPARE(w->qualityPanel()->metrics()->maxAbsError, expectedMetrics.maxAbsError); // exact vs exact: 0
        // ... and the views on the UI thread did not map a single value, nor
        // scale the slice (the difference view may have been resized meanwhile).
        QVERIFY(w->sliceView()->deviceZoom() < 1.0);
        QCOMPARE(r.display.zoom, w->sliceView()->deviceZoom());
        QCOMPARE(r.display.scaled.size(), r.display.rendered.size() * r.display.zoom);
        QCOMPARE(comparison.zoom, w->qualityPanel()->view()->deviceZoom());
        QTest::qWait(50); // painted
        QCOMPARE(w->sliceView()->renderCount(), rendersBefore);
        QCOMPARE(w->qualityPanel()->view()->renderCount(), differenceRendersBefore);
        QCOMPARE(w->sliceView()->scaleCount(), sliceScalesBefore);
        // The status bar times request -> screen.
        QVERIFY(w->lastLatency() > 0.0);
        QVERIFY2(w->statusSummary().contains(QStringLiteral("on screen")), qPrintable(w->statusSummary()));

        // A manual window made while the worker ran is kept: the view maps again.
        const float low = r.display.low, high = r.display.high + (r.display.high - r.display.low);
        w->histogram()->setWindow(low, high);
        emit w->histogram()->windowChanged(low, high);
        setParams([](SliceParams& p) { p.axis += 0.25; });
        QVERIFY(waitForResult(*w, [](const SliceResult& res) { return res.params.axis == 319.75; }));
        QCOMPARE(w->currentResult()->display.preparedOn, worker);
        QCOMPARE(w->currentResult()->display.high, high); // coloured with the manual window
        QCOMPARE(w->sliceView()->windowHigh(), high);
        saveScreenshot(w.get(), QStringLiteral("13-prepared-on-worker"));
    }


    void changesCoalesceAndResultsArrive() {
        // 40 changes made before the worker can answer (no events processed
        // between them): the latest wins, at most the one already running
        // comes first, and the last one always arrives.
        openDemo(256, 8);
        QSignalSpy shown(w.get(), &MainWindow::resultShown);
        for (int i = 0; i < 40; ++i) {
            const double axis = 120.0 + 0.25 * i;
            setParams([axis](SliceParams& p) { p.axis = axis; });
        }
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 129.75; }));
        QTest::qWait(100);
        QVERIFY2(shown.count() <= 2, qPrintable(QStringLiteral("%1 slices for 40 changes").arg(shown.count())));
        QCOMPARE(w->currentResult()->params.axis, 129.75);
        QVERIFY(!w->currentResult()->preview.filtered); // axis changes only back-project
        QVERIFY(waitUntil([&] { return !w->controller()->sliceBusy(); }));
    }


    void referenceNeverDelaysTheResult() {
        openDemo(256, 4);
        QVERIFY(waitForReference(*w));
        // What arrives, in order: slices (S) and references (R), by axis.
        QStringList log;
        connect(w->controller(), &Controller::sliceReady, this,
                [&](const SliceResultPtr& r) { log << QStringLiteral("S%1").arg(r->params.axis); });
        connect(w->controller(), &Controller::referenceReady, this,
                [&](const ReferencePtr& r) { log << QStringLiteral("R%1").arg(r->params.axis); });
        bool sliceBusyWhenShown = false;
        connect(w.get(), &MainWindow::resultShown, this, [&] { sliceBusyWhenShown |= w->controller()->sliceBusy(); });
        // Changes, each waited for until the slice is shown, never for the reference.
        for (int i = 1; i <= 5; ++i) {
            const double axis = 127.5 + 0.25 * i;
            setParams([axis](SliceParams& p) { p.axis = axis; });
            QVERIFY(waitForResult(*w, [axis](const SliceResult& r) { return r.params.axis == axis; }));
        }
        QVERIFY(waitForReference(*w));
        qInfo("arrival order: %s", qPrintable(log.join(QLatin1Char(' '))));
        QVERIFY2(!sliceBusyWhenShown, "a shown slice must leave nothing reconstructing (the reference is apart)");
        // A reference never comes before the slice of its parameters, and the
        // last one is for the last parameters.
        for (qsizetype i = 0; i < log.size(); ++i)
            if (log[i].startsWith(QLatin1Char('R')))
                QVERIFY2(log.mid(0, i).contains(QLatin1Char('S') + log[i].mid(1)), qPrintable(log.join(QLatin1Char(' '))));
        QCOMPARE(log.last(), QStringLiteral("R128.75"));
        // The busy indicator and Cancel follow only the live slice.
        QVERIFY(waitUntil([&] { return !w->controller()->sliceBusy() && !w->controller()->referenceBusy(); }));
        auto* cancel = w->parameterPanel()->findChild<QPushButton*>(QStringLiteral("cancelButton"));
        QVERIFY(waitUntil([&] { return !cancel->isEnabled(); }, 5000));
        QVERIFY(w->qualityPanel()->findChild<QLabel*>(QStringLiteral("referenceBusyLabel"))->text().isEmpty());

        // "Follow changes" off: no reference until asked for.
        auto* follow = w->qualityPanel()->findChild<QCheckBox*>(QStringLiteral("automaticReferenceCheck"));
        QVERIFY(follow);
        follow->setChecked(false);
        QSignalSpy references(w->controller(), &Controller::referenceReady);
        setParams([](SliceParams& p) { p.axis = 120.0; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 120.0; }));
        QTest::qWait(300);
        QCOMPARE(references.count(), 0);
        QVERIFY(!w->controller()->referenceBusy());
        QVERIFY(!w->activeReference());
        QTest::mouseClick(w->qualityPanel()->findChild<QPushButton*>(QStringLiteral("computeReferenceButton")), Qt::LeftButton);
        QVERIFY(waitForReference(*w));
        QCOMPARE(references.count(), 1);
        QVERIFY(w->qualityPanel()->metrics().has_value());
        follow->setChecked(true);
    }


    void openingReadsRowsNotTheWholeFile() {
        // A scan whose projections are stored one per chunk of > 1 MiB (as a
        // 2048^2 detector's are: HDF5 then reads the rows asked for, not
        // whole chunks). Opening it, finding its axis and showing the first
        // slice must read a few rows, not the file.
        QFile io(QStringLiteral("/proc/self/io"));
        if (!io.open(QIODevice::ReadOnly)) QSKIP("no /proc/self/io to count the bytes read");
        io.close();
        auto bytesRead = [] {
            QFile f(QStringLiteral("/proc/self/io"));
            if (!f.open(QIODevice::ReadOnly)) return qint64(-1);
            for (const QByteArray& line : f.readAll().split('\n'))
                if (line.startsWith("rchar:")) return line.mid(6).trimmed().toLongLong();
            return qint64(-1);
        };
        QTemporaryDir dir;
        const QString scan = dir.filePath(QStringLiteral("tall.h5"));
        tomo::PhantomSpec spec;
        spec.shapes = tomo::sheppLogan3D();
        spec.bins = 1024;
        spec.rows = 640;
        tomo::ScanSimulation sim;
        sim.flats = sim.darks = 2;
        sim.poissonNoise = false;
        tomo::writePhantomDXchange(scan.toStdString(), spec, tomo::uniformAngles(24), sim);
        const qint64 fileSize = QFileInfo(scan).size();

        const qint64 before = bytesRead();
        w->openPath(scan);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 1024; }, 180000));
        QVERIFY(w->dataset()->axisSearchPending); // the finder runs after the first slice, on its row
        QVERIFY(waitUntil([&] { return !w->openingAxisPending(); }, 60000));
        QVERIFY(w->openingAxis().has_value());
        const qint64 read = bytesRead() - before;
        qInfo("opening a %.1f MB scan (%d rows) and showing its first slice read %.2f MB", fileSize / 1e6, spec.rows,
              read / 1e6);
        QVERIFY2(read < fileSize / 10, qPrintable(QStringLiteral("read %1 of %2 bytes").arg(read).arg(fileSize)));
    }


    void datasetSessionRemembersAxisAndPixelSizePerDataset() {
        // The session on its own, with a controller and no window.
        QTemporaryDir dir;
        const QString a = dir.filePath(QStringLiteral("a.h5")), b = dir.filePath(QStringLiteral("b.h5"));
        writeSmallScan(a);
        writeSmallScan(b);
        Controller controller;
        DatasetSession session(&controller);
        session.check()->setProgram({}); // opened unchecked: no tomo-recon here
        QSignalSpy opened(&session, &DatasetSession::opened);
        auto open = [&](const QString& path) {
            const auto before = opened.count();
            session.open(path);
            return waitUntil([&] { return opened.count() > before; }) && session.dataset()->path == path;
        };
        QVERIFY(open(a));
        QVERIFY(!session.rememberedAxis(a));
        QCOMPARE(session.pixelSize().source, DatasetPixelSize::Source::Unknown); // the file states none
        QSignalSpy pixelChanged(&session, &DatasetSession::pixelSizeChanged);
        session.setPixelSize(6.5);
        QCOMPARE(pixelChanged.count(), 1);
        session.noteAxis(15.25); // written once the changes stop, or when another dataset opens
        QVERIFY(open(b));
        QCOMPARE(session.rememberedAxis(a).value_or(-1.0), 15.25);
        QVERIFY(!session.rememberedAxis(b));
        QCOMPARE(session.pixelSize().source, DatasetPixelSize::Source::Unknown); // not a's
        QVERIFY(open(a));
        QCOMPARE(session.pixelSize().micrometres, 6.5);
        QCOMPARE(session.pixelSize().source, DatasetPixelSize::Source::Entered);
        QCOMPARE(recentFiles().mid(0, 2), QStringList({QFileInfo(a).absoluteFilePath(), QFileInfo(b).absoluteFilePath()}));

        // A parameter file naming the dataset on screen applies at once; one
        // naming another opens it, and its parameters wait for it.
        tomo::RunConfig config;
        config.input = a.toStdString();
        config.axis = 14.0;
        QVERIFY(!session.openFor(config, dir.filePath(QStringLiteral("a.json"))));
        config.input = b.toStdString();
        const QString json = dir.filePath(QStringLiteral("b.json"));
        tomo::saveRunConfig(json.toStdString(), config);
        const auto before = opened.count();
        QVERIFY(session.openFor(config, json));
        QVERIFY(waitUntil([&] { return opened.count() > before; }));
        QCOMPARE(session.dataset()->path, b);
        const auto pending = session.takePendingParameters();
        QVERIFY(pending);
        QCOMPARE(pending->path, json);
        QCOMPARE(pending->config.axis.value_or(-1.0), 14.0);
        QVERIFY(!session.takePendingParameters()); // once
    }

    void windowSettingsReadWhatWasWritten() {
        QSettings().clear();
        const WindowSettings defaults = WindowSettings::read();
        QVERIFY(defaults.geometry.isEmpty()); // a first start
        QCOMPARE(defaults.colormap, QStringLiteral("grey"));
        QVERIFY(defaults.valueUnit == ValueUnitKind::PerPixel);
        QVERIFY(defaults.autoWindow && defaults.liveUpdate);
        QVERIFY(!defaults.options);
        QVERIFY(defaults.reference == ReferenceKind::Exact);

        WindowSettings s;
        s.geometry = QByteArray("geometry");
        s.state = QByteArray("state");
        s.colormap = QStringLiteral("ember");
        s.valueUnit = ValueUnitKind::PerCentimetre;
        s.autoWindow = false;
        s.liveUpdate = false;
        s.options = tomo::ReconOptions{};
        s.options->strategy = "cpu";
        s.options->filter.window = tomo::FilterWindow::Hann;
        s.reference = ReferenceKind::Truth;
        s.write();
        const WindowSettings back = WindowSettings::read();
        QCOMPARE(back.geometry, s.geometry);
        QCOMPARE(back.state, s.state);
        QCOMPARE(back.colormap, s.colormap);
        QVERIFY(back.valueUnit == s.valueUnit);
        QVERIFY(!back.autoWindow && !back.liveUpdate);
        QVERIFY(back.options);
        QCOMPARE(back.options->strategy, std::string("cpu"));
        QVERIFY(back.options->filter.window == tomo::FilterWindow::Hann);
        QVERIFY(back.reference == ReferenceKind::Truth);

        // Values out of range, options of another version, a strategy this machine lacks.
        QSettings().setValue(QStringLiteral("view/valueUnit"), 7);
        QSettings().setValue(QStringLiteral("view/reference"), 2); // Pinned is never kept
        QSettings().setValue(QStringLiteral("parameters/options"), QStringLiteral("{not json"));
        const WindowSettings odd = WindowSettings::read();
        QVERIFY(odd.valueUnit == ValueUnitKind::PerCentimetre);
        QVERIFY(odd.reference == ReferenceKind::Truth);
        QVERIFY(!odd.options);
        QVERIFY(registerUnavailableBackend());
        s.options->strategy = "test-unavailable";
        s.write();
        QCOMPARE(WindowSettings::read().options->strategy, std::string("auto"));
        QVERIFY(WindowSettings::read().options->filter.window == tomo::FilterWindow::Hann);
    }

    void measureLatencyPrintsOneLineAndExitsZero() {
#ifndef TOMO_WORKSTATION_EXE
        QSKIP("tomo-workstation is not built");
#else
        // The hook the GPU measurement runs: any strategy and dataset from the
        // command line, one parseable line, exit status 0. Its figures depend
        // on the machine: printed, not asserted.
        QProcess run;
        run.start(QStringLiteral(TOMO_WORKSTATION_EXE),
                  {QStringLiteral("--demo"), QStringLiteral("--demo-size"), QStringLiteral("128"), QStringLiteral("--demo-rows"),
                   QStringLiteral("4"), QStringLiteral("--strategy"), QStringLiteral("cpu"),
                   QStringLiteral("--measure-latency"), QStringLiteral("4")});
        QVERIFY(run.waitForFinished(240000));
        const QString out = QString::fromUtf8(run.readAllStandardOutput());
        QCOMPARE(run.exitStatus(), QProcess::NormalExit);
        QVERIFY2(run.exitCode() == 0, qPrintable(out + QString::fromUtf8(run.readAllStandardError())));
        const QStringList lines = out.split(QLatin1Char('\n'), Qt::SkipEmptyParts).filter(QStringLiteral("MEASURED "));
        QCOMPARE(lines.size(), 1);
        qInfo("%s", qPrintable(lines.first()));
        QMap<QString, QString> values;
        for (const QString& pair : lines.first().split(QLatin1Char(' '), Qt::SkipEmptyParts).mid(2))
            values.insert(pair.section(QLatin1Char('='), 0, 0), pair.section(QLatin1Char('='), 1));
        QCOMPARE(values.value(QStringLiteral("dataset")), QStringLiteral("demo-phantom"));
        QCOMPARE(values.value(QStringLiteral("size")), QStringLiteral("128x128"));
        QCOMPARE(values.value(QStringLiteral("strategy")), QStringLiteral("cpu"));
        QCOMPARE(values.value(QStringLiteral("axis_changes")), QStringLiteral("4"));
        QCOMPARE(values.value(QStringLiteral("reference")), QStringLiteral("cpu-reference-linear"));
        QVERIFY(!values.contains(QStringLiteral("error")));
        for (const char* key : {"open_ms", "axis_finder_ms", "first_worker_ms", "first_slice_ms", "axis_median_ms",
                                "axis_max_ms", "row_median_ms", "ui_stall_max_ms",
                                "reference_ms"}) {
            bool ok = false;
            QVERIFY2(values.value(QLatin1String(key)).toDouble(&ok) >= 0.0 && ok, key);
        }

        // A strategy that does not exist: a clear error, no window left running.
        QProcess bad;
        bad.start(QStringLiteral(TOMO_WORKSTATION_EXE), {QStringLiteral("--strategy"), QStringLiteral("no-such"),
                                                          QStringLiteral("--measure-latency"), QStringLiteral("2")});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 2);
        QVERIFY(QString::fromUtf8(bad.readAllStandardError()).contains(QStringLiteral("--strategy: unknown strategy 'no-such'")));
#endif
    }
};

int main(int argc, char** argv) {
    prepareEnvironment(/*offscreenOk=*/true);
    QApplication app(argc, argv);
    initTestApplication();
    WorkTests test;
    return runSuite(test, argc, argv);
}

#include "test_work.moc"
