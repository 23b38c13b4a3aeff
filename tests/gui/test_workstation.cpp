// GUI tests of tomo-workstation (QTest, run under Xvfb): the main window on
// the demo phantom and on a real scan, driven as a user would, waiting for
// the background worker's results.
#include "gui_test_support.h"

#include "axis_sweep_dialog.h"
#include "colormap.h"
#include "tomo/worker_pool.h"
#include "compare_modes_dialog.h"
#include "corrections_panel.h"
#include "data_panel.h"
#include "dataset_check.h"
#include "export_dialog.h"
#include "open_dialog.h"
#include "histogram_widget.h"
#include "main_window.h"
#include "metadata_panel.h"
#include "parameter_panel.h"
#include "profile_plot.h"
#include "quality_panel.h"
#include "slice_view.h"

#include "tomo/cone_scan.h"
#include "tomo/error.h"
#include "tomo/fdk.h"
#include "tomo/gridrec.h"
#include "tomo/metrics.h"
#include "tomo/output_range.h"
#include "tomo/phantom.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QGroupBox>
#include <QListWidget>
#include <QLocale>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QMimeData>
#include <QLabel>
#include <QMap>
#include <QProcess>
#include <QProgressDialog>
#include <QSettings>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QUndoStack>
#include <QUrl>

#include <algorithm>
#include <cmath>
#include <memory>

#include <sys/stat.h>
#include <unistd.h>

using namespace tomo::ui;
using namespace tomo::ui::test;

namespace {

double maxAbsDifference(const tomo::Image& a, const tomo::Image& b) {
    if (a.width != b.width || a.height != b.height) return INFINITY;
    double worst = 0.0;
    for (std::size_t i = 0; i < a.data.size(); ++i) worst = std::max(worst, std::abs(double(a.data[i]) - b.data[i]));
    return worst;
}

/// A strategy that cannot run here, as a CUDA one on a machine without a GPU.
class UnavailableBackend : public tomo::Backend {
public:
    std::string name() const override { return "test-unavailable"; }
    std::string description() const override { return "test double"; }
    std::string family() const override { return "cuda"; }
    std::string unavailableReason() const override { return "no CUDA device found"; }
    void checkOptions(const tomo::ReconOptions&) const override {}
    std::unique_ptr<tomo::ReconstructionPlan> createPlan(const tomo::ReconGeometry&,
                                                         const tomo::ReconOptions&) const override {
        throw tomo::DeviceError("no CUDA device found");
    }
};

/// A file named like a scan that is not one; empty when it cannot be written.
QString writeNotAScan(const QTemporaryDir& dir, const QString& name) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write("this is not an HDF5 file\n") < 0) return {};
    return path;
}

/// An executable shell script `name` in `dir` running `body`; empty when it cannot be written.
QString writeScript(const QTemporaryDir& dir, const QString& name, const QByteArray& body) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write("#!/bin/sh\n" + body) < 0) return {};
    f.close();
    return f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner) ? path : QString();
}

/// A copy of the first half of `whole` as `cut`.
bool writeFirstHalf(const QString& whole, const QString& cut) {
    QFile in(whole), out(cut);
    if (!in.open(QIODevice::ReadOnly) || !out.open(QIODevice::WriteOnly)) return false;
    return out.write(in.read(in.size() / 2)) > 0;
}

/// A small noiseless DXchange scan at `path`.
void writeSmallScan(const QString& path) {
    tomo::PhantomSpec spec;
    spec.bins = 32;
    spec.rows = 2;
    tomo::ScanSimulation sim;
    sim.poissonNoise = false;
    tomo::writePhantomDXchange(path.toStdString(), spec, tomo::uniformAngles(32), sim);
}

/// `slices` 32 x 32 float images as a TIFF (a file: multi-page; a folder: one file per slice).
void writeTiffs(const QString& target, int slices) {
    auto writer = tomo::createVolumeWriter(target.toStdString(), 32, 32, slices, tomo::WriteOptions{});
    const std::vector<float> values(std::size_t{32} * 32 * slices, 1.0f);
    writer->writeSlices(0, slices, values);
    writer->commit();
}

/// The QAction of the main window whose text is `text` (with its & marks).
QAction* actionNamed(QWidget& window, const QString& text) {
    for (QAction* a : window.findChildren<QAction*>())
        if (a->text() == text) return a;
    return nullptr;
}

/// Values of `v` more than half a quantisation step outside [min, max] of
/// `type` (what VolumeWriter::clipped counts), and its NaNs.
tomo::ClippedValues countClipped(const tomo::ImageStack& v, tomo::OutputType type, float min, float max) {
    const tomo::Quantization q = tomo::quantizationFor(type, min, max);
    tomo::ClippedValues c;
    for (float x : v.data) {
        if (std::isnan(x)) ++c.nan;
        else if (x < min - q.slope / 2) ++c.below;
        else if (x > max + q.slope / 2) ++c.above;
    }
    return c;
}

/// Adds UnavailableBackend to the registry once per process.
bool registerUnavailableBackend() {
    static const bool added = [] {
        tomo::BackendRegistry::instance().add(std::make_unique<UnavailableBackend>());
        return true;
    }();
    return added;
}

} // namespace

class WorkstationTest : public QObject {
    Q_OBJECT
    std::unique_ptr<MainWindow> w;

    /// Opens the demo phantom and waits for its first slice.
    void openDemo(int bins = 256, int rows = 16) {
        DemoSpec spec;
        spec.bins = spec.projections = bins;
        spec.rows = rows;
        w->openDemo(spec);
        QVERIFY2(waitForResult(*w, [bins](const SliceResult& r) { return r.preview.gridSize == bins; }),
                 "no slice from the demo phantom");
    }
    /// Opens `path` and expects the error dialog, its text containing every
    /// one of `needles`; closes it. The window stays and shows no new dataset.
    void expectOpenError(const QString& path, const QStringList& needles) {
        const auto before = w->dataset() ? w->dataset()->generation : 0;
        QSignalSpy errors(w.get(), &MainWindow::errorShown);
        w->openPath(path);
        QVERIFY2(waitUntil([&] { return errors.count() >= 1; }), qPrintable(path));
        auto* box = w->findChild<QMessageBox*>(QStringLiteral("errorDialog"));
        QVERIFY(box);
        QVERIFY(waitUntil([&] { return box->isVisible(); }, 5000));
        for (const QString& needle : needles)
            QVERIFY2(box->text().contains(needle), qPrintable(needle % QStringLiteral(" not in: ") % box->text()));
        box->accept();
        QVERIFY(waitUntil([&] { return !w->findChild<QMessageBox*>(QStringLiteral("errorDialog")); }, 5000));
        QVERIFY(w->isVisible());
        QCOMPARE(w->dataset() ? w->dataset()->generation : 0, before);
    }
    void setParams(const std::function<void(SliceParams&)>& change) {
        SliceParams p = w->parameterPanel()->params();
        change(p);
        w->parameterPanel()->setParams(p);
    }

private slots:
    void init() {
        w = freshWindow();
        QVERIFY(w);
    }
    void cleanup() { w.reset(); }

    void openDemoShowsSliceAndMetadata() {
        openDemo();
        const SliceResult& r = *w->currentResult();
        QCOMPARE(r.preview.slice.width, 256);
        QCOMPARE(r.preview.slice.height, 256);
        QVERIFY(r.preview.strategy != "auto");
        QCOMPARE(r.params.axis, 127.5);
        QVERIFY(w->sliceView()->hasImage());
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Projections")), QStringLiteral("256"));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Rows (slices)")), QStringLiteral("16"));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Flats")), QStringLiteral("none"));
        QVERIFY2(w->statusSummary().contains(QStringLiteral("GU/s")), qPrintable(w->statusSummary()));
        QVERIFY(w->statusSummary().contains(QString::fromStdString(r.preview.strategy)));
        QVERIFY(waitForReference(*w)); // the exact reference for the quality panel
        QVERIFY(w->qualityPanel()->metrics().has_value());
        saveScreenshot(w.get(), QStringLiteral("01-demo-opened"));
    }

    void wrongAxisRaisesRmseAgainstPhantom() {
        openDemo();
        w->qualityPanel()->setReferenceKind(ReferenceKind::Truth);
        QVERIFY(waitForReference(*w));
        const double rmseRight = w->qualityPanel()->metrics()->rmse;
        const tomo::Image right = w->sliceView()->image();

        setParams([](SliceParams& p) { p.axis += 3.0; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 130.5; }));
        QVERIFY(waitForReference(*w));
        const double rmseWrong = w->qualityPanel()->metrics()->rmse;
        qInfo("RMSE against the phantom: axis right %.5g, axis +3 px %.5g", rmseRight, rmseWrong);
        QVERIFY2(rmseWrong > 1.5 * rmseRight, "a wrong axis must raise the RMSE against the true phantom");
        QVERIFY(maxAbsDifference(right, w->sliceView()->image()) > 0.0);
        QVERIFY(w->sliceView()->image().data == w->currentResult()->preview.slice.data);
        saveScreenshot(w.get(), QStringLiteral("02-wrong-axis-vs-phantom"));

        // And back: the kept filtered sinogram gives the first image again.
        setParams([](SliceParams& p) { p.axis = 127.5; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 127.5; }));
        QVERIFY(!w->currentResult()->preview.filtered);
        QCOMPARE(maxAbsDifference(right, w->sliceView()->image()), 0.0);
    }

    void interpolationAndStrategyChangeTheImage() {
        openDemo();
        setParams([](SliceParams& p) { p.options.strategy = "cpu"; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.strategy == "cpu"; }));
        const tomo::Image linear = w->sliceView()->image();

        setParams([](SliceParams& p) { p.options.interpolation = tomo::Interpolation::Nearest; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) {
            return r.params.options.interpolation == tomo::Interpolation::Nearest;
        }));
        QVERIFY(w->currentResult()->preview.filtered); // new plan, filtered again
        const double change = maxAbsDifference(linear, w->sliceView()->image());
        QVERIFY2(change > 1e-6, "nearest interpolation must change the image");
        QVERIFY(waitForReference(*w));
        QVERIFY(w->qualityPanel()->metrics()->maxAbsError > 0.0); // approximate against exact
        QVERIFY(w->statusSummary().contains(QStringLiteral("nearest")));
        saveScreenshot(w.get(), QStringLiteral("03-nearest-vs-exact"));

        setParams([](SliceParams& p) {
            p.options.strategy = "cpu-reference";
            p.options.interpolation = tomo::Interpolation::Linear;
        });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.strategy == "cpu-reference"; }));
        QVERIFY(w->statusSummary().contains(QStringLiteral("cpu-reference")));
        // cpu (float) and cpu-reference (double) agree to float rounding.
        QVERIFY(maxAbsDifference(linear, w->sliceView()->image()) < 1e-4);
    }

    void differenceAgainstReferenceIsZeroForExactMode() {
        openDemo();
        w->qualityPanel()->setReferenceKind(ReferenceKind::Exact);
        setParams([](SliceParams& p) { p.options.strategy = "cpu-reference"; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.strategy == "cpu-reference"; }));
        QVERIFY(waitForReference(*w));
        const auto m = w->qualityPanel()->metrics();
        QVERIFY(m.has_value());
        QCOMPARE(m->maxAbsError, 0.0);
        QCOMPARE(m->rmse, 0.0);
        const tomo::Image& diff = w->qualityPanel()->difference();
        QVERIFY(!diff.data.empty());
        QVERIFY(std::all_of(diff.data.begin(), diff.data.end(), [](float v) { return v == 0.0f; }));
        saveScreenshot(w.get(), QStringLiteral("04-exact-difference-zero"));

        // The fast exact CPU mode: not bit-identical, within float rounding.
        setParams([](SliceParams& p) { p.options.strategy = "cpu"; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.strategy == "cpu"; }));
        QVERIFY(waitForReference(*w));
        qInfo("cpu vs cpu-reference: max abs %.3g, PSNR %.1f dB", w->qualityPanel()->metrics()->maxAbsError,
              w->qualityPanel()->metrics()->psnr);
        QVERIFY(w->qualityPanel()->metrics()->psnr > 80.0);
    }

    void profileMatchesCoreLineProfile() {
        openDemo();
        QVERIFY(waitForReference(*w));
        SliceView* view = w->sliceView();
        const auto lineTool = w->findChildren<QAction*>();
        for (QAction* a : lineTool)
            if (a->shortcut() == QKeySequence(Qt::Key_L)) a->trigger();
        QCOMPARE(view->tool(), SliceView::Tool::Line);
        // Drag across the phantom, as a user would.
        const QPoint from = view->toWidget(QPointF(20.0, 140.0)).toPoint();
        const QPoint to = view->toWidget(QPointF(235.0, 110.0)).toPoint();
        QTest::mousePress(view, Qt::LeftButton, {}, from);
        QTest::mouseMove(view, (from + to) / 2);
        QTest::mouseMove(view, to);
        QTest::mouseRelease(view, Qt::LeftButton, {}, to);
        QVERIFY(view->line().has_value());
        const QLineF l = *view->line();
        QVERIFY(l.length() > 150.0);

        const auto expected = tomo::lineProfile(w->currentResult()->preview.slice, l.x1(), l.y1(), l.x2(), l.y2());
        const QList<QPointF> shown = w->profilePlot()->resultPoints();
        QVERIFY(!shown.isEmpty());
        qsizetype i = 0;
        for (const auto& p : expected) {
            if (!std::isfinite(p.value)) continue;
            QVERIFY(i < shown.size());
            QCOMPARE(shown[i].x(), p.distance);
            QCOMPARE(shown[i].y(), p.value);
            ++i;
        }
        QCOMPARE(i, shown.size());
        // Reference overlaid and |difference| below, from the same line.
        const ReferenceResult* ref = w->activeReference();
        QVERIFY(ref);
        const auto refProfile = tomo::lineProfile(ref->image, l.x1(), l.y1(), l.x2(), l.y2());
        const QList<QPointF> refShown = w->profilePlot()->referencePoints();
        const QList<QPointF> diffShown = w->profilePlot()->differencePoints();
        QCOMPARE(refShown.size(), shown.size());
        QCOMPARE(diffShown.size(), shown.size());
        for (qsizetype k = 0; k < diffShown.size(); ++k)
            QVERIFY(std::abs(diffShown[k].y() - std::abs(shown[k].y() - refShown[k].y())) < 1e-12);
        saveScreenshot(w.get(), QStringLiteral("05-profile"));
    }

    void windowLevelAndColormap() {
        openDemo();
        const SliceResult& r = *w->currentResult();
        QCOMPARE(w->sliceView()->windowLow(), r.stats.autoLow);
        QCOMPARE(w->sliceView()->windowHigh(), r.stats.autoHigh);
        // Right drag changes the window and turns the automatic window off.
        SliceView* view = w->sliceView();
        const QPoint c = view->rect().center();
        QTest::mousePress(view, Qt::RightButton, {}, c);
        QTest::mouseMove(view, c + QPoint(60, -40));
        QTest::mouseRelease(view, Qt::RightButton, {}, c + QPoint(60, -40));
        QVERIFY(view->windowHigh() - view->windowLow() > r.stats.autoHigh - r.stats.autoLow);
        QCOMPARE(w->histogram()->stats().finite, r.stats.finite);
        auto* combo = w->findChild<QComboBox*>(QStringLiteral("colormapCombo"));
        QVERIFY(combo);
        combo->setCurrentIndex(combo->findData(QStringLiteral("aurora")));
        QCOMPARE(view->colormapName(), QStringLiteral("aurora"));
        // A new slice keeps the manual window.
        const float lo = view->windowLow();
        setParams([](SliceParams& p) { p.axis += 0.5; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 128.0; }));
        QCOMPARE(view->windowLow(), lo);
        saveScreenshot(w.get(), QStringLiteral("06-colormap-window"));
    }

    void cancelledExportLeavesNoFile() {
        openDemo(256, 64);
        QTemporaryDir dir;
        const QString target = dir.filePath(QStringLiteral("volume.h5"));
        ExportRequest request;
        request.target = target;
        request.firstRow = 0;
        request.rowCount = 64;
        request.params = w->parameterPanel()->params();
        QSignalSpy progress(w->controller(), &Controller::jobProgress);
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        QVERIFY(w->startExport(request));
        QVERIFY(w->exportProgress());
        QVERIFY(waitUntil([&] { return progress.count() >= 1 || finished.count() >= 1; }));
        QVERIFY2(finished.isEmpty(), "the export ended before it could be cancelled");
        QTest::qWait(20);
        saveScreenshot(w->exportProgress(), QStringLiteral("07-export-progress"));
        // The user presses Cancel in the progress dialog.
        auto* cancel = w->exportProgress()->findChild<QPushButton*>();
        QVERIFY(cancel);
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY(waitUntil([&] { return finished.count() == 1; }));
        QCOMPARE(finished.first().at(1).value<JobStatus>(), JobStatus::Cancelled);
        QVERIFY2(!QFile::exists(target), "a cancelled export left the target file");
        const QStringList left = QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden);
        QVERIFY2(left.isEmpty(), qPrintable(QStringLiteral("left behind: ") + left.join(QStringLiteral(", "))));
        QVERIFY(!w->controller()->jobBusy());
    }

    void exportWritesVolume() {
        openDemo(256, 16);
        QTemporaryDir dir;
        const QString target = dir.filePath(QStringLiteral("volume.h5"));
        ExportRequest request;
        request.target = target;
        request.firstRow = 4;
        request.rowCount = 6;
        request.params = w->parameterPanel()->params();
        request.params.options.strategy = "cpu";
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        QSignalSpy done(w->controller(), &Controller::exportFinished);
        QVERIFY(w->startExport(request));
        QVERIFY(waitUntil([&] { return finished.count() == 1; }));
        QCOMPARE(finished.first().at(1).value<JobStatus>(), JobStatus::Done);
        QCOMPARE(done.count(), 1);
        const tomo::ImageStack volume = tomo::readVolume(target.toStdString());
        QCOMPARE(volume.depth, 6);
        QCOMPARE(volume.width, 256);
        // Slice 2 of the file is row 6: the same as the live preview of row 6.
        setParams([](SliceParams& p) {
            p.row = 6;
            p.options.strategy = "cpu";
        });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.row == 6 && r.preview.strategy == "cpu"; }));
        QVERIFY(maxAbsDifference(volume.slice(2), w->currentResult()->preview.slice) < 1e-5);
    }

    void badFileShowsErrorDialog() {
        openDemo();
        QTemporaryDir dir;
        const QString bad = writeNotAScan(dir, QStringLiteral("not-a-scan.h5"));
        QVERIFY(!bad.isEmpty());
        QSignalSpy errors(w.get(), &MainWindow::errorShown);
        w->openPath(bad);
        QVERIFY(waitUntil([&] { return errors.count() >= 1; }));
        auto* box = w->findChild<QMessageBox*>(QStringLiteral("errorDialog"));
        QVERIFY(box);
        QVERIFY(waitUntil([&] { return box->isVisible(); }, 5000));
        QVERIFY2(box->text().contains(QStringLiteral("not-a-scan.h5")), qPrintable(box->text()));
        saveScreenshot(box, QStringLiteral("08-error-dialog"));
        box->accept(); // auto-close
        QVERIFY(waitUntil([&] { return !w->findChild<QMessageBox*>(QStringLiteral("errorDialog")); }, 5000));
        // The application keeps running with the demo.
        QVERIFY(w->dataset()->demo.has_value());
        setParams([](SliceParams& p) { p.axis += 1.0; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 128.5; }));
        // A bad parameter file too.
        const QString badJson = dir.filePath(QStringLiteral("bad.json"));
        {
            QFile f(badJson);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"axis\": \"left\", \"no_such_key\": 1}");
        }
        QVERIFY(!w->loadParameters(badJson));
        QVERIFY(waitUntil([&] { return errors.count() >= 2; }));
        if (auto* again = w->findChild<QMessageBox*>(QStringLiteral("errorDialog"))) again->accept();
    }

    void fanBeamScanShowsItsFdkSliceGeometryAndExport() {
        // HTC2022: a flat-detector fan beam declared by the file's attributes.
        const QString htc = realData(QStringLiteral("helsinki_htc2022_fanbeam/htc2022_ta.h5"));
        TOMO_GUI_REQUIRE_FILE(htc);
#ifdef TOMO_RECON_EXE
        w->datasetCheck()->setProgram(QStringLiteral(TOMO_RECON_EXE)); // tomo-recon's check accepts it (FDK)
#endif
        w->openPath(htc);
        QVERIFY2(waitForResult(*w, [](const SliceResult& r) { return r.preview.fdk; }, 60000), "no FDK slice");
        QVERIFY(w->dataset()->divergent.has_value());
        // The column the axis projects to: the file says nothing of an offset.
        QCOMPARE(w->currentResult()->params.axis, 279.5);
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Beam")), QStringLiteral("fan"));
        QVERIFY2(w->metadataPanel()->value(QStringLiteral("Source–axis distance")).startsWith(QStringLiteral("410.66")),
                 qPrintable(w->metadataPanel()->value(QStringLiteral("Source–axis distance"))));
        QVERIFY(w->metadataPanel()->value(QStringLiteral("Geometry")).contains(QStringLiteral("fan beam")));
        QVERIFY(w->metadataPanel()->value(QStringLiteral("Volume grid")).startsWith(QStringLiteral("560 × 560 × 1")));
        QVERIFY(!w->parameterPanel()->findChild<QComboBox*>(QStringLiteral("interpolationCombo"))->isEnabled());
        QVERIFY(!w->parameterPanel()->findChild<QPushButton*>(QStringLiteral("findAxisButton"))->isEnabled());

        // The slice is FDK's with the file's geometry (the core's oracle).
        setParams([](SliceParams& p) { p.options.strategy = "cpu"; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.fdk && r.preview.strategy == "cpu"; }));
        tomo::OpenOptions open;
        open.allowDivergentBeam = true;
        const auto reader = tomo::openDataset(htc.toStdString(), open);
        const tomo::ConeSetup setup = tomo::coneSetup(reader->info());
        const tomo::ImageStack oracle =
            tomo::reconstructFdk(setup.geometry, tomo::readConeProjections(*reader, setup), setup.grid);
        const tomo::Image& slice = w->currentResult()->preview.slice;
        const float peak = *std::max_element(oracle.data.begin(), oracle.data.end());
        QVERIFY(peak > 0.0f);
        QVERIFY2(maxAbsDifference(oracle.slice(0), slice) < 1e-5 * peak,
                 qPrintable(QString::number(maxAbsDifference(oracle.slice(0), slice))));
        QVERIFY(w->statusSummary().contains(QStringLiteral("FDK")));
        // The exact reference is cpu-reference's FDK, a float rounding away.
        QVERIFY(waitForReference(*w, 60000));
        QVERIFY(w->qualityPanel()->metrics().has_value());
        QVERIFY2(w->qualityPanel()->metrics()->maxAbsError < 1e-4 * peak,
                 qPrintable(QString::number(w->qualityPanel()->metrics()->maxAbsError)));
        saveScreenshot(w.get(), QStringLiteral("fan-beam-htc2022"));

        // Moving the axis shifts the detector: another slice, the same as FDK with that offset.
        setParams([](SliceParams& p) { p.axis = 281.0; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.fdk && r.params.axis == 281.0; }));
        QVERIFY(maxAbsDifference(oracle.slice(0), w->currentResult()->preview.slice) > 1e-2 * peak);

        // Export writes that slice.
        QTemporaryDir dir;
        ExportRequest request;
        request.target = dir.filePath(QStringLiteral("fan.h5"));
        request.firstRow = 0;
        request.rowCount = 1;
        request.params = w->parameterPanel()->params();
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        QVERIFY(w->startExport(request));
        QVERIFY(waitUntil([&] { return finished.count() == 1; }, 60000));
        QCOMPARE(finished.first().at(1).value<JobStatus>(), JobStatus::Done);
        const tomo::ImageStack written = tomo::readVolume(request.target.toStdString());
        QCOMPARE(written.depth, 1);
        // The export filters at that axis; the slice on screen interpolates filterings at both
        // ends of the axis's reach (README, fan/cone beam), so the two differ by the filter's float
        // rounding: measured 3.7e-6 of the peak here, 5.3e-6 the most over steps of 0.5 to 50
        // columns on this scan; bound 3x that.
        const double exported = maxAbsDifference(written.slice(0), w->currentResult()->preview.slice);
        qInfo("fan-beam export vs the slice on screen: %.3g of the peak", exported / peak);
        QVERIFY(exported < 1.6e-5 * peak);
    }

    void damagedFilesGiveAnErrorDialogAndTheAppStaysUp() {
#ifndef TOMO_RECON_EXE
        QSKIP("tomo-recon is not built: the workstation checks files with it");
#else
        // The tomo-recon of this build (the tests do not run beside it); a
        // file on which libhdf5 loops is given up after 3 s.
        w->datasetCheck()->setProgram(QStringLiteral(TOMO_RECON_EXE));
        qputenv("TOMO_METADATA_TIMEOUT", "3");
        QTemporaryDir dir;
        QList<std::pair<QString, QStringList>> cases; // file, what its message says
        auto named = [](const QString& path) { return QStringList{QFileInfo(path).fileName()}; };
        // Files that crash or hang libhdf5 itself: said to be damaged.
        const QDir fuzz(QStringLiteral(TOMO_FUZZ_DIR));
        for (const QFileInfo& f : QDir(fuzz.filePath(QStringLiteral("upstream"))).entryInfoList({QStringLiteral("*.h5")}, QDir::Files))
            cases.append({f.filePath(), {f.fileName(), QStringLiteral("damaged")}});
        // Inputs that once crashed the readers (fixed, kept as regressions).
        for (const QString& sub : {QStringLiteral("regressions/fuzz_hdf5"), QStringLiteral("regressions/fuzz_volume")})
            for (const QFileInfo& f : QDir(fuzz.filePath(sub)).entryInfoList({QStringLiteral("*.h5")}, QDir::Files))
                cases.append({f.filePath(), named(f.filePath())});
        const QString whole = dir.filePath(QStringLiteral("whole.h5"));
        writeSmallScan(whole);
        const QString truncated = dir.filePath(QStringLiteral("truncated.h5"));
        QVERIFY(writeFirstHalf(whole, truncated));
        cases.append({truncated, named(truncated)});
        const QString empty = dir.filePath(QStringLiteral("empty.h5"));
        QVERIFY(QFile(empty).open(QIODevice::WriteOnly));
        cases.append({empty, named(empty)});
        const QString text = writeNotAScan(dir, QStringLiteral("text.h5"));
        QVERIFY(!text.isEmpty());
        cases.append({text, named(text)});
        const QString tiff = dir.filePath(QStringLiteral("stack.tif")), cutTiff = dir.filePath(QStringLiteral("cut.tif"));
        writeTiffs(tiff, 4);
        QVERIFY(writeFirstHalf(tiff, cutTiff));
        cases.append({cutTiff, named(cutTiff)});
        // A TIFF folder (opened without a check) with one image broken.
        const QString series = dir.filePath(QStringLiteral("series"));
        writeTiffs(series, 4);
        const QStringList images = QDir(series).entryList({QStringLiteral("*.tif")}, QDir::Files, QDir::Name);
        QCOMPARE(images.size(), 4);
        {
            QFile broken(QDir(series).filePath(images[2]));
            QVERIFY(broken.open(QIODevice::WriteOnly | QIODevice::Truncate));
            broken.write("broken");
        }
        cases.append({series, {images[2]}});
        const QString fifo = dir.filePath(QStringLiteral("fifo.h5"));
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        cases.append({fifo, named(fifo)});
        const QString dangling = dir.filePath(QStringLiteral("dangling.h5"));
        QVERIFY(QFile::link(dir.filePath(QStringLiteral("nowhere.h5")), dangling));
        cases.append({dangling, named(dangling)});
        const QString locked = dir.filePath(QStringLiteral("locked"));
        if (::geteuid() == 0) {
            qInfo("SKIP the folder without read permission: running as root, which reads any folder");
        } else {
            QVERIFY(QDir().mkpath(locked));
            writeTiffs(locked + QStringLiteral("/images"), 2);
            QVERIFY(QFile::setPermissions(locked, QFileDevice::Permissions()));
            cases.append({locked, named(locked)});
        }

        for (const auto& [path, needles] : cases) {
            expectOpenError(path, needles);
            if (QTest::currentTestFailed()) return;
        }
        QFile::setPermissions(locked, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner); // for the clean-up
        qunsetenv("TOMO_METADATA_TIMEOUT");
        // A good file still passes the check and opens; the demo reconstructs.
        w->openPath(whole);
        QVERIFY(waitUntil([&] { return w->dataset() && w->dataset()->path == whole; }));
        openDemo(64, 2);
        QVERIFY(w->sliceView()->hasImage());
#endif
    }

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

    void cancelThenReconstructComputesTheReferenceAgain() {
        openDemo();
        QVERIFY(waitForReference(*w));
        QAction* cancel = nullptr;
        QAction* run = nullptr;
        for (QAction* a : w->findChildren<QAction*>()) {
            if (a->shortcut() == QKeySequence(Qt::Key_Escape)) cancel = a;
            if (a->shortcut() == QKeySequence(Qt::Key_F5)) run = a;
        }
        QVERIFY(cancel && run);
        // A change, cancelled at once (Esc) with its reference, then F5: the
        // same parameters again, and the reference must follow.
        setParams([](SliceParams& p) { p.axis = 126.0; });
        cancel->trigger();
        QTest::qWait(100);
        run->trigger();
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 126.0; }));
        QVERIFY2(waitForReference(*w, 20000), "after a cancel, F5 must compute the reference again");
        QVERIFY(w->qualityPanel()->metrics().has_value());
    }

    void compareModesCancelKeepsTheDialog() {
        openDemo(512, 4);
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        w->compareModes();
        QVERIFY(w->compareDialog());
        QVERIFY(w->compareDialog()->isVisible());
        QPushButton* cancel = nullptr;
        for (QPushButton* b : w->compareDialog()->findChildren<QPushButton*>())
            if (b->text() == QLatin1String("Cancel")) cancel = b;
        QVERIFY(cancel);
        QVERIFY(cancel->isEnabled());
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY(waitUntil([&] { return finished.count() == 1; }, 60000));
        QCOMPARE(finished.first().at(1).value<JobStatus>(), JobStatus::Cancelled);
        QVERIFY2(w->compareDialog()->isVisible(), "Cancel must stop the comparison, not close its dialog");
        QVERIFY(!cancel->isEnabled());
        // Closing a running comparison cancels it.
        finished.clear();
        w->compareModes();
        w->compareDialog()->reject();
        QVERIFY(waitUntil([&] { return finished.count() == 1; }, 60000));
        QCOMPARE(finished.first().at(1).value<JobStatus>(), JobStatus::Cancelled);
    }

    void failedOpenWithoutDatasetSaysSo() {
        QTemporaryDir dir;
        const QString bad = writeNotAScan(dir, QStringLiteral("broken.h5"));
        QVERIFY(!bad.isEmpty());
        QSignalSpy errors(w.get(), &MainWindow::errorShown);
        w->openPath(bad);
        QVERIFY(waitUntil([&] { return errors.count() >= 1; }));
        QVERIFY(waitUntil([&] { return w->sliceView()->caption().contains(QStringLiteral("broken.h5")); }, 5000));
        QVERIFY(!w->dataset());
        auto* box = w->findChild<QMessageBox*>(QStringLiteral("errorDialog"));
        QVERIFY(box);
        QVERIFY(!box->informativeText().contains(QStringLiteral("previous dataset")));
        saveScreenshot(w.get(), QStringLiteral("19-open-failed-no-dataset"));
        box->accept();
    }

    void compareModesListsEveryMode() {
        openDemo(128, 4);
        QSignalSpy rows(w->controller(), &Controller::modeCompared);
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        w->compareModes();
        QVERIFY(w->compareDialog());
        QVERIFY(waitUntil([&] { return finished.count() == 1; }, 180000));
        QCOMPARE(finished.first().at(1).value<JobStatus>(), JobStatus::Done);
        const auto modes = CompareModesDialog::modesToCompare(w->parameterPanel()->params().options);
        QCOMPARE(w->compareDialog()->rowCount(), static_cast<int>(modes.size()));
        bool sawReference = false;
        for (const QList<QVariant>& args : rows) {
            const auto row = args.first().value<ModeComparison>();
            QVERIFY2(row.error.isEmpty(), qPrintable(row.error));
            QVERIFY(row.gups > 0.0);
            if (row.options.strategy == "cpu-reference" && row.exact) {
                sawReference = true;
                QCOMPARE(row.metrics.maxAbsError, 0.0);
            }
            if (!row.exact) QVERIFY(row.metrics.maxAbsError > 0.0);
            qInfo("%-40s %8.2f ms %7.3f GU/s  max abs %.3g  PSNR %.1f", qPrintable(row.label()),
                  row.secondsBackproject * 1e3, row.gups, row.metrics.maxAbsError, row.metrics.psnr);
        }
        QVERIFY(sawReference);
        QVERIFY(w->compareDialog()->toCsv().count(QLatin1Char('\n')) == static_cast<int>(modes.size()) + 1);
        saveScreenshot(w->compareDialog(), QStringLiteral("09-compare-modes"));
    }

    void openclDeviceIsChosenInThePanelAndSaved() {
        const auto devices = tomo::openclDevices();
        auto* combo = w->findChild<QComboBox*>(QStringLiteral("openclDeviceCombo"));
        QVERIFY(combo);
        QCOMPARE(combo->count(), static_cast<int>(devices.size()) + 1); // "default" and each device
        if (devices.empty()) {
            QVERIFY(!combo->isEnabled());
            QSKIP(qPrintable(QStringLiteral("no OpenCL device: ") + QString::fromStdString(tomo::openclStatus())));
        }
        QTemporaryDir cache; // compiled kernels stay out of the user's cache
        qputenv("TOMO_OPENCL_CACHE", cache.path().toUtf8());
        openDemo();
        const tomo::OpenClDevice& last = devices.back();
        combo->setCurrentIndex(combo->count() - 1);
        QVERIFY(combo->currentText().contains(QString::fromStdString(last.name)));
        setParams([](SliceParams& p) { p.options.strategy = "ocl-alu"; });
        QVERIFY(waitForResult(*w, [&](const SliceResult& r) {
            return r.preview.strategy == "ocl-alu" && r.params.options.openclDevice == std::to_string(last.index);
        }));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("params.json"));
        QVERIFY(w->saveParameters(path));
        QCOMPARE(tomo::loadRunConfig(path.toStdString()).options.openclDevice, std::to_string(last.index));
        combo->setCurrentIndex(0); // back to the default: nothing stored
        QVERIFY(w->parameterPanel()->params().options.openclDevice.empty());
        w.reset(); // no plan left that could write to the cache
        qunsetenv("TOMO_OPENCL_CACHE");
    }

    void parametersRoundTripThroughJson() {
        openDemo();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("params.json"));
        setParams([](SliceParams& p) {
            p.axis = 130.25;
            p.options.filter.window = tomo::FilterWindow::Hann;
            p.options.interpolation = tomo::Interpolation::Nearest;
            p.options.strategy = "cpu";
            p.region = tomo::Region{32, 40, 100, 90};
        });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 130.25 && r.params.region; }));
        QCOMPARE(w->currentResult()->preview.slice.width, 100);
        QVERIFY(w->saveParameters(path));
        const tomo::RunConfig config = tomo::loadRunConfig(path.toStdString());
        QCOMPARE(*config.axis, 130.25);
        QVERIFY(config.options.filter.window == tomo::FilterWindow::Hann);
        QVERIFY(config.options.interpolation == tomo::Interpolation::Nearest);
        QCOMPARE(config.options.strategy, std::string("cpu"));
        QVERIFY(config.region && *config.region == (tomo::Region{32, 40, 100, 90}));
        QVERIFY(config.input.empty()); // the demo has no file

        setParams([](SliceParams& p) {
            p.axis = 127.5;
            p.region.reset();
            p.options = tomo::ReconOptions{};
        });
        QVERIFY(w->loadParameters(path));
        const SliceParams back = w->parameterPanel()->params();
        QCOMPARE(back.axis, 130.25);
        QVERIFY(back.region && *back.region == (tomo::Region{32, 40, 100, 90}));
        QVERIFY(back.options.filter.window == tomo::FilterWindow::Hann);
        QVERIFY(back.options.interpolation == tomo::Interpolation::Nearest);
        QCOMPARE(back.options.strategy, std::string("cpu"));
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 130.25 && r.params.region; }));
        saveScreenshot(w.get(), QStringLiteral("10-region-of-interest"));

        // A per-projection offsets file named in the JSON: offsets of +2 px
        // everywhere give the slice of an axis 2 px further.
        const QString offsets = dir.filePath(QStringLiteral("offsets.txt"));
        {
            QFile f(offsets);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Text));
            for (int i = 0; i < 256; ++i) f.write("2.0\n");
        }
        tomo::RunConfig shifted;
        shifted.axis = 127.5;
        shifted.axisOffsetsFile = offsets.toStdString();
        shifted.options.strategy = "cpu";
        const QString shiftedPath = dir.filePath(QStringLiteral("offsets.json"));
        tomo::saveRunConfig(shiftedPath.toStdString(), shifted);
        QVERIFY(w->loadParameters(shiftedPath));
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axisOffsets.size() == 256 && !r.params.region; }));
        const tomo::Image withOffsets = w->currentResult()->preview.slice;
        setParams([](SliceParams& p) {
            p.axis = 129.5;
            p.axisOffsets.clear();
            p.axisOffsetsFile.clear();
        });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 129.5 && r.params.axisOffsets.empty(); }));
        QVERIFY(maxAbsDifference(withOffsets, w->currentResult()->preview.slice) < 1e-6);
    }

    void settingsPersist() {
        openDemo();
        auto* combo = w->findChild<QComboBox*>(QStringLiteral("colormapCombo"));
        combo->setCurrentIndex(combo->findData(QStringLiteral("ember")));
        setParams([](SliceParams& p) { p.options.filter.window = tomo::FilterWindow::Hamming; });
        w->parameterPanel()->setLiveUpdate(false);
        w->close(); // writes the settings
        w = std::make_unique<MainWindow>();
        QCOMPARE(w->sliceView()->colormapName(), QStringLiteral("ember"));
        QVERIFY(!w->parameterPanel()->liveUpdate());
        QVERIFY(w->parameterPanel()->params().options.filter.window == tomo::FilterWindow::Hamming);
        w->parameterPanel()->setLiveUpdate(true);

        // Settings from a machine with a strategy this one lacks (a GPU):
        // the window starts with "auto" instead of a strategy that cannot run.
        QVERIFY(registerUnavailableBackend());
        tomo::RunConfig elsewhere;
        elsewhere.options.strategy = "test-unavailable";
        elsewhere.options.filter.window = tomo::FilterWindow::Hann;
        QSettings().setValue(QStringLiteral("parameters/options"), QString::fromStdString(tomo::toJson(elsewhere)));
        w = std::make_unique<MainWindow>();
        QCOMPARE(w->parameterPanel()->params().options.strategy, std::string("auto"));
        QVERIFY(w->parameterPanel()->params().options.filter.window == tomo::FilterWindow::Hann);
    }

    void realScanFindsAxis() {
        const QString tooth = realData(QStringLiteral("aps_tooth/tooth.h5"));
        TOMO_GUI_REQUIRE_FILE(tooth);
        // Open it by drag and drop.
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(tooth)});
        const QPoint pos = w->rect().center();
        QDragEnterEvent enter(pos, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(w.get(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(pos), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(w.get(), &drop);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 640; }));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Flats")), QStringLiteral("10"));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Darks")), QStringLiteral("10"));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Projections")), QStringLiteral("181"));
        saveScreenshot(w.get(), QStringLiteral("11-tooth-opened"));

        QSignalSpy found(w->controller(), &Controller::axisFound);
        w->controller()->findAxis(w->parameterPanel()->params().row);
        QVERIFY(waitUntil([&] { return found.count() == 1; }));
        const auto estimate = found.first().first().value<AxisResult>().estimate;
        qInfo("tooth: axis %.2f px, confidence %.2f (%s)", estimate.axis, estimate.confidence, estimate.method.c_str());
        QVERIFY2(std::abs(estimate.axis - 296.0) < 1.5, "the tooth's axis is about 296 px (SOURCES.md)");
        QVERIFY(waitForResult(*w, [&](const SliceResult& r) { return r.params.axis == w->parameterPanel()->params().axis; }));
        QVERIFY(std::abs(w->currentResult()->params.axis - estimate.axis) < 0.01);
        saveScreenshot(w.get(), QStringLiteral("12-tooth-axis-found"));
        QVERIFY(QSettings().value(QStringLiteral("files/recent")).toStringList().contains(QFileInfo(tooth).absoluteFilePath()));

#ifdef TOMO_RECON_EXE
        // The tuned parameters, saved as JSON, reproduce the slice in batch.
        QTemporaryDir dir;
        const QString config = dir.filePath(QStringLiteral("tooth.json"));
        const QString volume = dir.filePath(QStringLiteral("tooth.h5"));
        QVERIFY(w->saveParameters(config));
        QProcess recon;
        recon.start(QStringLiteral(TOMO_RECON_EXE), {QStringLiteral("--config"), config, QStringLiteral("-o"), volume});
        QVERIFY(recon.waitForFinished(120000));
        QVERIFY2(recon.exitCode() == 0, recon.readAllStandardError().constData());
        const tomo::ImageStack batch = tomo::readVolume(volume.toStdString());
        const SliceResult& live = *w->currentResult();
        QCOMPARE(batch.depth, 2);
        const double range = live.stats.max - live.stats.min;
        const double difference = maxAbsDifference(batch.slice(live.params.row), live.preview.slice);
        qInfo("tomo-recon --config vs the live slice: max abs difference %.3g (value range %.3g)", difference, range);
        QVERIFY(difference < 1e-4 * range);
#endif
    }

    void realScansOpenReconstructFindAxisAndExport_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("projections");
        QTest::addColumn<int>("columns");
        QTest::addColumn<QString>("flats");
        QTest::addColumn<double>("axis"); // SOURCES.md
        QTest::newRow("aps_tooth") << QStringLiteral("aps_tooth/tooth.h5") << 181 << 640 << QStringLiteral("10") << 296.0;
        QTest::newRow("dls_i13") << QStringLiteral("dls_i13_24737/i13_24737_dxchange.h5") << 91 << 160
                                 << QStringLiteral("1") << 85.85;
        QTest::newRow("psi_basalt") << QStringLiteral("psi_neutron_basalt/basalt_sino.h5") << 530 << 627
                                    << QStringLiteral("none") << 312.0;
        QTest::newRow("dls_i12_dendrites") << QStringLiteral("dls_i12_dendrites/dendrites_sino.h5") << 360 << 1260
                                           << QStringLiteral("none") << 626.5;
    }

    /// What a beamline scientist does first with a scan: open it (File ▸
    /// Open), read its metadata, look at the slice, find the axis, reconstruct
    /// rows to a file.
    void realScansOpenReconstructFindAxisAndExport() {
        QFETCH(QString, file);
        QFETCH(int, projections);
        QFETCH(int, columns);
        QFETCH(QString, flats);
        QFETCH(double, axis);
        const QString path = realData(file);
        TOMO_GUI_REQUIRE_FILE(path);
        const QString tag = QString::fromLatin1(QTest::currentDataTag());

        w->openPath(path);
        QVERIFY(waitForResult(*w, [columns](const SliceResult& r) { return r.preview.gridSize == columns; }));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Projections")), QString::number(projections));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Columns (bins)")), QString::number(columns));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Flats")), flats);
        QVERIFY(w->windowTitle().contains(QFileInfo(path).fileName()));
        const ImageStats& stats = w->currentResult()->stats;
        QVERIFY2(stats.finite > 0 && stats.max > stats.min, "the slice of a real scan is blank");
        QVERIFY(w->sliceView()->windowHigh() > w->sliceView()->windowLow());
        auto* datasetDock = w->findChild<QDockWidget*>(QStringLiteral("datasetDock"));
        QVERIFY(datasetDock);
        datasetDock->raise();
        QVERIFY(waitUntil([&] { return w->metadataPanel()->isVisible(); }, 5000));
        saveScreenshot(w.get(), QStringLiteral("20-%1-metadata").arg(tag));
        w->findChild<QDockWidget*>(QStringLiteral("parametersDock"))->raise();

        // Find the axis from the panel, as the button does.
        QSignalSpy found(w->controller(), &Controller::axisFound);
        w->parameterPanel()->findAxis();
        QVERIFY(waitUntil([&] { return found.count() == 1; }));
        const auto estimate = found.first().first().value<AxisResult>().estimate;
        qInfo("%s: axis %.2f px (expected about %.2f), confidence %.2f", qPrintable(tag), estimate.axis, axis,
              estimate.confidence);
        QVERIFY2(std::abs(estimate.axis - axis) < 2.0, "the axis finder is more than 2 px off the known centre");
        QVERIFY(waitForResult(*w, [&](const SliceResult& r) { return std::abs(r.params.axis - estimate.axis) < 0.01; }));
        QVERIFY(waitForReference(*w));
        saveScreenshot(w.get(), QStringLiteral("21-%1-axis-found").arg(tag));

        // Reconstruct up to 3 rows around the current one to HDF5.
        const int rows = w->dataset()->info.rows;
        const int row = w->currentResult()->params.row;
        QTemporaryDir dir;
        ExportRequest request;
        request.target = dir.filePath(QStringLiteral("recon.h5"));
        request.firstRow = std::max(0, row - 1);
        request.rowCount = std::min(rows, row + 2) - request.firstRow;
        request.params = w->currentResult()->params;
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        QVERIFY(w->startExport(request));
        QVERIFY(waitUntil([&] { return finished.count() == 1; }, 120000));
        QCOMPARE(finished.first().at(1).value<JobStatus>(), JobStatus::Done);
        const tomo::ImageStack volume = tomo::readVolume(request.target.toStdString());
        QCOMPARE(volume.depth, request.rowCount);
        QCOMPARE(volume.width, columns);
        const SliceResult& live = *w->currentResult();
        const double range = live.stats.max - live.stats.min;
        const double difference = maxAbsDifference(volume.slice(row - request.firstRow), live.preview.slice);
        QVERIFY2(difference < 1e-4 * range, "the exported row differs from the live slice");
    }

    void unavailableStrategiesAreGreyed() {
        QVERIFY(registerUnavailableBackend());
        ParameterPanel panel;
        auto* combo = panel.findChild<QComboBox*>(QStringLiteral("strategyCombo"));
        QVERIFY(combo);
        auto* model = qobject_cast<QStandardItemModel*>(combo->model());
        QVERIFY(model);
        QCOMPARE(combo->itemData(0, Qt::UserRole).toString(), QStringLiteral("auto"));
        bool found = false;
        for (int i = 0; i < model->rowCount(); ++i) {
            QStandardItem* item = model->item(i);
            const QString name = item->data(Qt::UserRole).toString();
            const tomo::Backend* b = tomo::BackendRegistry::instance().find(name.toStdString());
            if (name == QLatin1String("auto")) continue;
            QVERIFY(b);
            QCOMPARE(item->isEnabled(), b->unavailableReason().empty());
            if (name == QLatin1String("test-unavailable")) {
                found = true;
                QVERIFY(!item->isEnabled());
                QVERIFY(item->toolTip().contains(QStringLiteral("no CUDA device found")));
            }
        }
        QVERIFY(found);
        QCOMPARE(model->rowCount(), static_cast<int>(tomo::BackendRegistry::instance().backends().size()) + 1);
    }

    void approximateStrategiesOnlyWhenAllowed() {
        ParameterPanel panel;
        auto* check = panel.findChild<QCheckBox*>(QStringLiteral("approximateCheck"));
        auto* combo = panel.findChild<QComboBox*>(QStringLiteral("strategyCombo"));
        QVERIFY(check && combo);
        // (The panel itself waits for a dataset: the check box's own state counts.)
        // With auto (the default) the choice is offered, off, and sent with the options.
        QCOMPARE(combo->currentData(Qt::UserRole).toString(), QStringLiteral("auto"));
        QVERIFY(check->isEnabledTo(&panel));
        QVERIFY(!panel.params().options.allowApproximate);
        QSignalSpy changed(&panel, &ParameterPanel::paramsChanged);
        check->setChecked(true);
        QCOMPARE(changed.count(), 1);
        QVERIFY(panel.params().options.allowApproximate);
        // A named strategy is what runs: nothing to allow; it is marked approximate in the list.
        combo->setCurrentIndex(combo->findData(QString::fromUtf8(tomo::gridrec::kCpuName), Qt::UserRole));
        QVERIFY(!check->isEnabledTo(&panel));
        QVERIFY(combo->currentText().contains(QStringLiteral("approximate")));
        // Parameters set from elsewhere (a loaded file, undo) bring their choice.
        SliceParams p = panel.params();
        p.options.strategy = "auto";
        p.options.allowApproximate = false;
        panel.setParams(p);
        QVERIFY(check->isEnabledTo(&panel));
        QVERIFY(!check->isChecked());
    }

    void dialogsRender() {
        openDemo();
        QTemporaryDir dir;
        ExportDialog exportDialog(*w->dataset(), w->parameterPanel()->params(), 0.0f, 0.01f, dir.path(), w.get());
        exportDialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&exportDialog));
        const ExportRequest request = exportDialog.request();
        QVERIFY(request.target.endsWith(QStringLiteral("demo_phantom_recon.h5")));
        QCOMPARE(request.rowCount, 16);
        QVERIFY(request.write.attributes.count("tomo_run_config") == 1);
        saveScreenshot(&exportDialog, QStringLiteral("16-export-dialog"));
        exportDialog.setTarget(dir.filePath(QStringLiteral("slices.tif")));
        exportDialog.setRows(3, 7);
        QCOMPARE(exportDialog.request().rowCount, 5);
        saveScreenshot(&exportDialog, QStringLiteral("17-export-dialog-tiff"));
        OpenDialog openDialog(dir.path(), w.get());
        openDialog.setPath(dir.path());
        openDialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&openDialog));
        QVERIFY(!openDialog.options().raw.has_value());
        saveScreenshot(&openDialog, QStringLiteral("18-open-dialog"));
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

    void realScanOpensWithItsAxisFound() {
        const QString tooth = realData(QStringLiteral("aps_tooth/tooth.h5"));
        TOMO_GUI_REQUIRE_FILE(tooth);
        // No axis remembered for it: the first slice at the detector centre
        // comes at once, the finder runs after it and its axis follows.
        QSignalSpy searched(w.get(), &MainWindow::openingAxisSearched);
        w->openPath(tooth);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 640; }));
        QVERIFY(w->dataset()->axisSearchPending);
        QVERIFY(waitUntil([&] { return searched.count() == 1; }));
        QVERIFY(w->openingAxis().has_value());
        QVERIFY(waitForResult(*w, [&](const SliceResult& r) { return r.params.axis == w->openingAxis()->estimate.axis; }));
        const double found = w->currentResult()->params.axis;
        qInfo("tooth opened with axis %.3f px; %s", found, qPrintable(w->parameterPanel()->axisNote()));
        QVERIFY2(std::abs(found - 296.0) < 1.5, "the tooth's axis is about 296 px (SOURCES.md), not the centre 319.5");
        QCOMPARE(found, 295.875); // the finder's 1/8 px, shown and used with all its digits
        QVERIFY(w->parameterPanel()->axisIsFound());
        QVERIFY(w->parameterPanel()->axisNote().contains(QStringLiteral("found automatically")));
        QVERIFY(w->parameterPanel()->axisNote().contains(QStringLiteral("confidence")));
        auto* spin = w->parameterPanel()->findChild<QDoubleSpinBox*>(QStringLiteral("axisSpin"));
        QVERIFY(spin);
        QCOMPARE(spin->text(), QStringLiteral("295.875"));
        saveScreenshot(w.get(), QStringLiteral("22-tooth-axis-found-on-open"));

        // Moved: the confidence belonged to the found axis and goes.
        w->parameterPanel()->nudgeAxis(0.25);
        QVERIFY(!w->parameterPanel()->axisIsFound());
        QVERIFY(w->parameterPanel()->axisNote().isEmpty());
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 296.125; }));

        // Opened again: the remembered axis, no search.
        QSignalSpy opened(w->controller(), &Controller::datasetOpened);
        w->openPath(tooth);
        QVERIFY(waitUntil([&] { return opened.count() == 1; }));
        QVERIFY(!opened.first().first().value<DatasetSummary>().axisSearchPending);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 296.125; }));
        QVERIFY(w->parameterPanel()->axisNote().isEmpty());

        // A parameter file without `axis` ("found automatically") opens the
        // scan with the finder too, not at the detector centre.
        openDemo(128, 4); // another dataset is open when the file is loaded
        QSettings().clear();
        QTemporaryDir dir;
        const QString json = dir.filePath(QStringLiteral("tooth_params.json"));
        QFile file(json);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QStringLiteral("{\"input\": \"%1\", \"corrections\": {\"rings\": {\"method\": \"sorting\"}}}")
                       .arg(tooth)
                       .toUtf8());
        file.close();
        QSignalSpy searchedAgain(w.get(), &MainWindow::openingAxisSearched);
        QVERIFY(w->loadParameters(json));
        QVERIFY(waitUntil([&] { return searchedAgain.count() == 1; }));
        QVERIFY(waitForResult(*w, [](const SliceResult& r) {
            return r.params.axis == 295.875 && r.params.corrections.rings.method == tomo::RingMethod::Sorting;
        }));
    }

    void newDatasetStartsWithAutomaticWindow() {
        openDemo(128, 4);
        const float low = w->currentResult()->stats.autoLow;
        emit w->histogram()->windowChanged(low, low + 10.0f); // a manual window: automatic goes off
        QCOMPARE(w->sliceView()->windowHigh(), low + 10.0f);
        openDemo(256, 4);
        const SliceResult& r = *w->currentResult();
        QCOMPARE(w->sliceView()->windowLow(), r.stats.autoLow);
        QCOMPARE(w->sliceView()->windowHigh(), r.stats.autoHigh);
        // ... and it stays automatic for the next slices of this dataset.
        setParams([](SliceParams& p) { p.row = 1; });
        QVERIFY(waitForResult(*w, [](const SliceResult& res) { return res.params.row == 1; }));
        QCOMPARE(w->sliceView()->windowHigh(), w->currentResult()->stats.autoHigh);
    }

    void exportDialogStaysClosedAfterOtherJobs() {
        openDemo(128, 16);
        QTemporaryDir dir;
        ExportRequest request;
        request.target = dir.filePath(QStringLiteral("volume.h5"));
        request.firstRow = 0;
        request.rowCount = 16;
        request.params = w->parameterPanel()->params();
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        QVERIFY(w->startExport(request));
        QVERIFY(waitUntil([&] { return finished.count() == 1; }));
        QVERIFY(waitUntil([&] { return !w->exportProgress() || !w->exportProgress()->isVisible(); }, 5000));
        // A sub-volume for the 3D view, then a mode comparison: their progress
        // must not bring the finished export's dialog back.
        QSignalSpy progress(w->controller(), &Controller::jobProgress);
        QVERIFY(w->controller()->reconstructSubVolume(w->parameterPanel()->params(), 0, 16));
        QVERIFY(waitUntil([&] { return finished.count() == 2; }));
        QVERIFY(progress.count() >= 2);
        QTest::qWait(50);
        for (QWidget* top : QApplication::topLevelWidgets())
            QVERIFY2(!qobject_cast<QProgressDialog*>(top) || !top->isVisible(), "a progress dialog is still shown");
        for (auto* dialog : w->findChildren<QProgressDialog*>()) QVERIFY(!dialog->isVisible());
        QCOMPARE(finished.at(1).at(1).value<JobStatus>(), JobStatus::Done);
        saveScreenshot(w.get(), QStringLiteral("23-after-export-and-subvolume"));
    }

    void fineAxisControl() {
        openDemo(256, 4);
        auto* fine = w->parameterPanel()->findChild<QSlider*>(QStringLiteral("fineAxisSlider"));
        auto* coarse = w->parameterPanel()->findChild<QSlider*>(QStringLiteral("axisSlider"));
        QVERIFY(fine && coarse);
        auto dragHandle = [](QSlider* slider, int dx) {
            QStyleOptionSlider option;
            option.initFrom(slider);
            option.orientation = slider->orientation();
            option.minimum = slider->minimum();
            option.maximum = slider->maximum();
            option.sliderPosition = option.sliderValue = slider->value();
            const QPoint handle =
                slider->style()->subControlRect(QStyle::CC_Slider, &option, QStyle::SC_SliderHandle, slider).center();
            QTest::mousePress(slider, Qt::LeftButton, {}, handle);
            for (int step = 1; step <= 6; ++step) QTest::mouseMove(slider, handle + QPoint(dx * step / 6, 0));
            QTest::mouseRelease(slider, Qt::LeftButton, {}, handle + QPoint(dx, 0));
        };
        // A 60 px drag of the fine slider moves the axis by less than 5 px ...
        const double before = w->parameterPanel()->params().axis;
        dragHandle(fine, 60);
        const double fineMove = w->parameterPanel()->params().axis - before;
        qInfo("60 px drag: fine slider %.2f px (slider %d px wide)", fineMove, fine->width());
        QVERIFY2(fineMove > 0.0 && fineMove <= 5.0, qPrintable(QString::number(fineMove)));
        QCOMPARE(fine->value(), 0); // centred on the new axis once released
        QVERIFY(waitForResult(*w, [&](const SliceResult& r) { return r.params.axis == before + fineMove; }));
        // ... in 0.01 px steps: one key step of the fine slider.
        const double at = w->parameterPanel()->params().axis;
        fine->setFocus();
        QTest::keyClick(fine, Qt::Key_Right);
        QVERIFY(std::abs(w->parameterPanel()->params().axis - (at + 0.01)) < 1e-9);
        // The coarse slider spans the detector: the same drag moves much further.
        const double beforeCoarse = w->parameterPanel()->params().axis;
        dragHandle(coarse, 60);
        qInfo("60 px drag: coarse slider %.2f px", w->parameterPanel()->params().axis - beforeCoarse);
        QVERIFY(std::abs(w->parameterPanel()->params().axis - beforeCoarse) > 5.0);
        // Three decimals: a finder's 1/8 px is kept.
        setParams([](SliceParams& p) { p.axis = 127.875; });
        QCOMPARE(w->parameterPanel()->params().axis, 127.875);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 127.875; }));
        QVERIFY(w->sliceView()->caption().contains(QStringLiteral("axis 127.875")));
        saveScreenshot(w->parameterPanel(), QStringLiteral("24-axis-controls"));
    }

    void anglesEntriesAreSavedAndReplayed() {
        const QString folder = realData(QStringLiteral("dls_i13_24737/tiff"));
        TOMO_GUI_REQUIRE_FILE(folder);
        // The folder's angles.txt lists 111 frames for 91 projections: it
        // opens, with the projections' entries found.
        w->openPath(folder);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 160; }));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Angles from")), QStringLiteral("angles.txt, entries 10–100"));
        QVERIFY(w->dataset()->options.anglesLines == (tomo::LineRange{10, 91}));
        qInfo("i13 opened with axis %.3f px (%s)", w->currentResult()->params.axis,
              qPrintable(w->parameterPanel()->axisNote()));
        saveScreenshot(w.get(), QStringLiteral("25-i13-tiff-folder"));

        // Saved parameters carry the input options ...
        QTemporaryDir dir;
        const QString config = dir.filePath(QStringLiteral("i13.json"));
        QVERIFY(w->saveParameters(config));
        const tomo::RunConfig saved = tomo::loadRunConfig(config.toStdString());
        QCOMPARE(QString::fromStdString(saved.input.string()), folder);
        QVERIFY(saved.open.anglesFile.has_value());
        QCOMPARE(QFileInfo(QString::fromStdString(saved.open.anglesFile->string())).fileName(), QStringLiteral("angles.txt"));
        QVERIFY(saved.open.anglesLines == (tomo::LineRange{10, 91}));
        // ... and so do exported files.
        {
            ExportDialog exportDialog(*w->dataset(), w->parameterPanel()->params(), 0.0f, 1.0f, dir.path(), w.get());
            const tomo::RunConfig exported =
                tomo::runConfigFromJson(exportDialog.request().write.attributes.at("tomo_run_config"));
            QVERIFY(exported.open.anglesLines == (tomo::LineRange{10, 91}));
        }

#ifdef TOMO_RECON_EXE
        // tomo-recon --config replays it: the same slice.
        const QString volume = dir.filePath(QStringLiteral("i13.h5"));
        const int row = w->currentResult()->params.row;
        QProcess recon;
        recon.start(QStringLiteral(TOMO_RECON_EXE), {QStringLiteral("--config"), config, QStringLiteral("-o"), volume,
                                                     QStringLiteral("--rows"), QString::number(row)});
        QVERIFY(recon.waitForFinished(120000));
        QVERIFY2(recon.exitCode() == 0, recon.readAllStandardError().constData());
        const tomo::ImageStack batch = tomo::readVolume(volume.toStdString());
        const SliceResult& live = *w->currentResult();
        const double difference = maxAbsDifference(batch.slice(0), live.preview.slice);
        qInfo("tomo-recon --config vs the live slice: max abs difference %.3g", difference);
        QVERIFY(difference < 1e-4 * (live.stats.max - live.stats.min));
#endif

        // Loading the parameters in a fresh window opens the folder the same way.
        w = std::make_unique<MainWindow>();
        w->show();
        QVERIFY(w->loadParameters(config));
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 160; }));
        QVERIFY(w->dataset()->options.anglesLines == (tomo::LineRange{10, 91}));
        QCOMPARE(w->currentResult()->params.axis, *saved.axis);
    }

    void openDialogRemembersWhatWasTyped() {
        QTemporaryDir dir;
        const QString angles = dir.filePath(QStringLiteral("frames.txt"));
        {
            QFile f(angles);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Text));
            f.write("5\n5\n0\n1\n2\n3\n3\n");
        }
        {
            OpenDialog first(dir.path(), w.get());
            first.setPath(dir.path());
            tomo::OpenOptions o;
            o.anglesFile = angles.toStdString();
            o.anglesLines = tomo::LineRange{2, 4};
            o.angleRangeDegrees = 360.0;
            first.setOptions(o);
            first.show();
            QVERIFY(QTest::qWaitForWindowExposed(&first));
            QVERIFY2(first.findChild<QLabel*>(QStringLiteral("anglesHint"))->text().contains(QStringLiteral("Entries 2–5: 4 angles")),
                     qPrintable(first.findChild<QLabel*>(QStringLiteral("anglesHint"))->text()));
            saveScreenshot(&first, QStringLiteral("26-open-dialog-entries"));
            first.accept();
        }
        OpenDialog again(QString(), w.get());
        QCOMPARE(again.path(), dir.path());
        const tomo::OpenOptions back = again.options();
        QVERIFY(back.anglesFile && QString::fromStdString(back.anglesFile->string()) == angles);
        QVERIFY(back.anglesLines == (tomo::LineRange{2, 4}));
        QCOMPARE(back.angleRangeDegrees, 360.0);
    }

    void resultsAreProposedInTheWorkFolder() {
        const QString tooth = realData(QStringLiteral("aps_tooth/tooth.h5"));
        TOMO_GUI_REQUIRE_FILE(tooth);
        w->openPath(tooth);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 640; }));
        const QString inputFolder = QFileInfo(tooth).absolutePath();
        auto proposedExport = [&] {
            ExportDialog dialog(*w->dataset(), w->parameterPanel()->params(), 0.0f, 1.0f, w->outputDirectory(), w.get());
            return QFileInfo(dialog.request().target).absolutePath();
        };
        // Never the raw data's folder by default.
        QVERIFY(w->outputDirectory() != inputFolder);
        QVERIFY2(proposedExport() != inputFolder, qPrintable(proposedExport()));
        // The last folder a result went to is proposed next time.
        QTemporaryDir work;
        QVERIFY(w->saveParameters(QDir(work.path()).filePath(QStringLiteral("tooth.json"))));
        QCOMPARE(w->outputDirectory(), QFileInfo(work.path()).absoluteFilePath());
        QCOMPARE(proposedExport(), QFileInfo(work.path()).absoluteFilePath());
        // Opening another dataset does not move it.
        openDemo(64, 2);
        QCOMPARE(w->outputDirectory(), QFileInfo(work.path()).absoluteFilePath());
    }

    void smallWindowKeepsTheSliceLarge() {
        openDemo(256, 4);
        w->resize(1024, 700);
        QVERIFY(waitUntil([&] { return w->sliceView()->width() >= w->width() / 2; }, 5000));
        qInfo("1024 x 700: slice view %d x %d px", w->sliceView()->width(), w->sliceView()->height());
        QVERIFY(w->sliceView()->height() >= w->height() / 2);
        saveScreenshot(w.get(), QStringLiteral("27-small-window"));
        // Reset Layout keeps it that way at this size ...
        for (QAction* a : w->findChildren<QAction*>())
            if (a->text() == QLatin1String("Reset &Layout")) a->trigger();
        QTest::qWait(50);
        QVERIFY(w->sliceView()->width() >= w->width() / 2);
        // ... and a wide window gets the panels beside the slice again.
        w->resize(1600, 1000);
        auto* quality = w->findChild<QDockWidget*>(QStringLiteral("qualityDock"));
        auto* parameters = w->findChild<QDockWidget*>(QStringLiteral("parametersDock"));
        QVERIFY(waitUntil([&] {
            return quality->isVisible() && parameters->isVisible() && !w->tabifiedDockWidgets(parameters).contains(quality);
        }, 5000));
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

    void referenceModeFollowsTheResultsFamily() {
        tomo::ReconOptions options;
        options.filter.window = tomo::FilterWindow::Hann;
        options.threads = 3;
        const tomo::ReconOptions cpu = exactReferenceOptions(options, QStringLiteral("cpu"));
        QCOMPARE(cpu.strategy, std::string("cpu-reference"));
        QVERIFY(cpu.interpolation == tomo::Interpolation::Linear);
        QVERIFY(cpu.filter.window == tomo::FilterWindow::Hann);
        QCOMPARE(cpu.threads, 3);
        QCOMPARE(referenceModeLabel(cpu), QStringLiteral("cpu-reference (exact)"));
        // After a GPU result: the GPU's exact linear mode (alu) when it can run, else cpu-reference.
        const tomo::ReconOptions gpu = exactReferenceOptions(options, QStringLiteral("cuda"));
        const tomo::Backend* alu = tomo::BackendRegistry::instance().find("alu");
        if (alu && alu->unavailableReason().empty()) {
            QCOMPARE(gpu.strategy, std::string("alu"));
            QVERIFY(gpu.interpolation == tomo::Interpolation::Linear);
            QCOMPARE(referenceModeLabel(gpu), QStringLiteral("alu linear, float32 arithmetic (GPU exact)"));
        } else {
            QCOMPARE(gpu.strategy, std::string("cpu-reference"));
        }
        QVERIFY(gpu.filter.window == tomo::FilterWindow::Hann);
    }

    void labelsSayTheirUnits() {
        openDemo(128, 4);
        QVERIFY(waitForReference(*w));
        QCOMPARE(w->parameterPanel()->findChild<QLabel*>(QStringLiteral("rowsLabel"))->text(), QStringLiteral("(rows 0–3)"));
        auto* maxAbs = w->qualityPanel()->findChild<QLabel*>(QStringLiteral("maxAbsFigure"));
        auto* relative = w->qualityPanel()->findChild<QLabel*>(QStringLiteral("relativeFigure"));
        QVERIFY(maxAbs->text().endsWith(QStringLiteral(" 1/px")));
        QVERIFY(relative->text().endsWith(QStringLiteral(" %")));
        w->setProfileLine(QLineF(10, 64, 118, 64));
        const double stored = w->profilePlot()->resultPoints().at(20).y();

        // With the pixel size, attenuation per mm: every view in the same unit.
        w->setPixelSize(6.5);
        w->setValueUnitKind(ValueUnitKind::PerMillimetre);
        QCOMPARE(w->valueUnit().symbol, QStringLiteral("1/mm"));
        QVERIFY(maxAbs->text().endsWith(QStringLiteral(" 1/mm")));
        QVERIFY(std::abs(w->profilePlot()->resultPoints().at(20).y() - stored * 1000.0 / 6.5) < 1e-9 * std::abs(stored) * 1000.0);
        auto* low = w->findChild<QDoubleSpinBox*>(QStringLiteral("windowLowSpin"));
        QVERIFY(low);
        QVERIFY(low->suffix().contains(QStringLiteral("1/mm")));
        saveScreenshot(w.get(), QStringLiteral("28-values-per-mm"));
        // Without a pixel size there is no per-mm value: back to per pixel.
        w->setPixelSize(0.0);
        QCOMPARE(w->valueUnit().symbol, QStringLiteral("1/px"));

        // Compare Modes: the relative error in percent there too.
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        w->compareModes();
        QVERIFY(waitUntil([&] { return finished.count() == 1; }, 180000));
        auto* table = w->compareDialog()->findChild<QTableWidget*>();
        QVERIFY(table && table->rowCount() > 0);
        QCOMPARE(table->horizontalHeaderItem(4)->text(), QStringLiteral("Max abs error (1/px)"));
        QVERIFY(table->item(0, 7)->text().endsWith(QStringLiteral(" %")));
        QVERIFY(w->compareDialog()->toCsv().startsWith(QStringLiteral("strategy,interpolation,precision,exact,"
                                                                       "seconds_backproject,gups,max_abs_error_per_px")));
    }

    void dataPanelShowsWhatTheSliceIsMadeOf() {
        const QString tooth = realData(QStringLiteral("aps_tooth/tooth.h5"));
        TOMO_GUI_REQUIRE_FILE(tooth);
        w->openPath(tooth);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 640; }));
        const SliceResult& shown = *w->currentResult();
        auto reader = tomo::openDataset(tooth.toStdString());
        auto* dock = w->findChild<QDockWidget*>(QStringLiteral("dataDock"));
        QVERIFY(dock);
        dock->show();
        dock->raise();
        DataPanel* data = w->dataPanel();
        QSignalSpy views(w->controller(), &Controller::dataViewReady);

        // The sinogram of the row on screen, log-corrected, the axis marked.
        QVERIFY(waitUntil([&] { return data->caption().startsWith(QStringLiteral("Sinogram of row")); }));
        const tomo::Image expected = tomo::loadSinograms(*reader, shown.params.row, 1).slice(0);
        QVERIFY(data->view()->image().data == expected.data);
        QCOMPARE(data->view()->line()->x1(), shown.params.axis);
        QCOMPARE(data->view()->renderCount(), 0); // coloured on the worker
        saveScreenshot(w.get(), QStringLiteral("29-data-sinogram"));

        // The raw projection at a chosen angle.
        data->setKind(DataViewKind::Projection);
        data->setAngle(90);
        QVERIFY(waitUntil([&] { return data->caption().startsWith(QStringLiteral("Projection 90")); }));
        std::vector<float> projection(2 * 640);
        reader->readProjection(90, projection);
        QVERIFY(data->view()->image().data == projection);
        QCOMPARE(data->view()->image().height, 2);
        // Flat and dark fields.
        data->setKind(DataViewKind::Flat);
        QVERIFY(waitUntil([&] { return data->caption().startsWith(QStringLiteral("Mean flat field")); }));
        std::vector<float> flat(2 * 640);
        QVERIFY(reader->readMeanFlat(0, 2, flat));
        QVERIFY(data->view()->image().data == flat);
        data->setKind(DataViewKind::Dark);
        QVERIFY(waitUntil([&] { return data->caption().startsWith(QStringLiteral("Mean dark field")); }));
        saveScreenshot(w.get(), QStringLiteral("30-data-dark"));

        // The demo holds sinograms only: it says so.
        openDemo(64, 2);
        data->setKind(DataViewKind::Flat);
        QVERIFY(waitUntil([&] { return data->caption().contains(QStringLiteral("already log-corrected")); }));
        QVERIFY(views.count() >= 4);
    }

    void parameterChangesCanBeUndone() {
        openDemo(128, 4);
        QUndoStack* history = w->history();
        QCOMPARE(history->count(), 0);
        const SliceParams start = w->parameterPanel()->params();
        // Two quick axis steps are one undo step; then a filter change.
        w->parameterPanel()->nudgeAxis(0.25);
        w->parameterPanel()->nudgeAxis(0.25);
        setParams([](SliceParams& p) { p.options.filter.window = tomo::FilterWindow::Hann; });
        QCOMPARE(history->count(), 2);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) {
            return r.params.axis == 64.0 && r.params.options.filter.window == tomo::FilterWindow::Hann;
        }));
        QCOMPARE(history->undoText(), QStringLiteral("reconstruction options"));

        auto* undo = w->findChild<QAction*>(QStringLiteral("undoAction"));
        auto* redo = w->findChild<QAction*>(QStringLiteral("redoAction"));
        QVERIFY(undo && redo);
        undo->trigger();
        QVERIFY(w->parameterPanel()->params().options.filter.window == tomo::FilterWindow::RamLak);
        QCOMPARE(w->parameterPanel()->params().axis, 64.0);
        QCOMPARE(history->undoText(), QStringLiteral("axis 63.500 → 64.000 px"));
        undo->trigger();
        QCOMPARE(w->parameterPanel()->params().axis, start.axis);
        QVERIFY(!undo->isEnabled());
        // The slices follow the history.
        QVERIFY(waitForResult(*w, [&](const SliceResult& r) {
            return r.params.axis == start.axis && r.params.options.filter.window == tomo::FilterWindow::RamLak;
        }));
        redo->trigger();
        QCOMPARE(w->parameterPanel()->params().axis, 64.0);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 64.0; }));
        QCOMPARE(history->count(), 2); // undo and redo are not new changes
        // A new dataset starts a new history.
        openDemo(64, 2);
        QCOMPARE(history->count(), 0);
    }

    void settingsBelongToThisProcess() {
        // Not the user's, and not shared with another test process.
        const QString file = QSettings().fileName();
        QVERIFY2(file.startsWith(QDir::temp().filePath(QStringLiteral("tomo-gui-test-settings-"))), qPrintable(file));
        QVERIFY(!file.startsWith(QDir::homePath() + QStringLiteral("/.config")));
    }

    void correctionsPanelSetsThePreviewAndShowsWhatItFound() {
        const QString i13 = realData(QStringLiteral("dls_i13_24737/i13_24737_dxchange.h5"));
        TOMO_GUI_REQUIRE_FILE(i13);
        w->openPath(i13);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 160; }));
        CorrectionsPanel* panel = w->correctionsPanel();
        QVERIFY(panel->options() == tomo::CorrectionOptions{}); // dead pixels on, the rest off
        // Row 0 holds the dead pixel (column 0, SOURCES.md): interpolated, and said where.
        setParams([](SliceParams& p) { p.row = 0; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.row == 0; }));
        QVERIFY(w->currentResult()->preview.corrections.deadPixelCount >= 1);
        QCOMPARE(w->currentResult()->preview.corrections.deadPixels.front().column, 0);
        QVERIFY2(panel->foundText().contains(QStringLiteral("Dead pixels interpolated: 1")) &&
                     panel->foundText().contains(QStringLiteral("column 0")),
                 qPrintable(panel->foundText()));
        const tomo::Image interpolated = w->currentResult()->preview.slice;
        w->findChild<QDockWidget*>(QStringLiteral("correctionsDock"))->raise();
        saveScreenshot(w.get(), QStringLiteral("40-corrections-i13-dead-pixel"));

        // Off, as a user unticks it: the pixel is clamped, counted, and the slice changes.
        panel->findChild<QGroupBox*>(QStringLiteral("deadPixelsGroup"))->setChecked(false);
        QVERIFY(!w->parameterPanel()->params().corrections.badPixels.enabled);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return !r.params.corrections.badPixels.enabled; }));
        const SliceResult& off = *w->currentResult();
        QVERIFY(off.preview.corrections.clamped >= 91); // the dead pixel in every projection
        QVERIFY2(panel->foundText().contains(QStringLiteral("clamped to p = 11.5 (no transmission, not interpolated): %1")
                                                 .arg(off.preview.corrections.clamped)),
                 qPrintable(panel->foundText()));
        QVERIFY(maxAbsDifference(interpolated, off.preview.slice) > 0.0);

        // Zingers on: their count is shown; moving the axis then costs no correction.
        auto* zingers = panel->findChild<QGroupBox*>(QStringLiteral("zingerGroup"));
        zingers->setChecked(true);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.corrections.zingers.enabled; }));
        QVERIFY2(panel->foundText().contains(QStringLiteral("Zingers replaced: %1").arg(w->currentResult()->preview.corrections.zingerCount)),
                 qPrintable(panel->foundText()));
        w->parameterPanel()->nudgeAxis(0.25);
        const double axis = w->parameterPanel()->params().axis;
        QVERIFY(waitForResult(*w, [axis](const SliceResult& r) { return r.params.axis == axis; }));
        QVERIFY(!w->currentResult()->preview.filtered);
        QCOMPARE(w->currentResult()->preview.secondsLoad, 0.0);
        // An invalid parameter is said in the panel and not applied.
        panel->findChild<QSpinBox*>(QStringLiteral("zingerWindowSpin"))->setValue(4);
        QVERIFY2(panel->problem().contains(QStringLiteral("odd")), qPrintable(panel->problem()));
        QCOMPARE(w->parameterPanel()->params().corrections.zingers.window, tomo::ZingerOptions{}.window); // the default kept
        panel->findChild<QSpinBox*>(QStringLiteral("zingerWindowSpin"))->setValue(3);

        // Paganin phase retrieval (a low-pass on the projections): a smoother slice.
        auto roughness = [](const tomo::Image& image) {
            double sum = 0.0;
            for (int y = 0; y < image.height; ++y)
                for (int x = 1; x < image.width; ++x)
                    sum += std::abs(image.data[std::size_t(y) * image.width + x] - image.data[std::size_t(y) * image.width + x - 1]);
            return sum;
        };
        const double sharp = roughness(w->currentResult()->preview.slice);
        panel->findChild<QDoubleSpinBox*>(QStringLiteral("energySpin"))->setValue(25.0);
        // Paganin filters with the dataset's pixel size (the file states none: entered).
        QVERIFY(!panel->findChild<QGroupBox*>(QStringLiteral("paganinGroup"))->isEnabled());
        w->setPixelSize(1.0);
        panel->findChild<QGroupBox*>(QStringLiteral("paganinGroup"))->setChecked(true);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.corrections.paganin.enabled; }));
        const tomo::PaganinOptions& paganin = w->currentResult()->params.corrections.paganin;
        QCOMPARE(paganin.energyKeV, 25.0);
        QCOMPARE(paganin.pixelSizeM, 1e-6);
        const double smooth = roughness(w->currentResult()->preview.slice);
        qInfo("i13 row 0: roughness %.4g without Paganin, %.4g with", sharp, smooth);
        QVERIFY(smooth < 0.5 * sharp);
    }

    void correctionsTheDatasetRefusesAreSaidAndTheAppKeepsRunning() {
        openDemo(128, 4);
        const quint64 shown = w->currentResult()->id;
        QSignalSpy errors(w.get(), &MainWindow::errorShown);
        // The demo is a 180° scan: no 360° half acquisition.
        w->correctionsPanel()->findChild<QGroupBox*>(QStringLiteral("halfAcquisitionGroup"))->setChecked(true);
        QVERIFY(waitUntil([&] { return !w->correctionsPanel()->problem().isEmpty(); }));
        qInfo("refused: %s", qPrintable(w->correctionsPanel()->problem()));
        QVERIFY2(w->correctionsPanel()->problem().contains(QStringLiteral("360")), qPrintable(w->correctionsPanel()->problem()));
        QCOMPARE(errors.count(), 1);
        QCOMPARE(w->currentResult()->id, shown); // the slice on screen stays
        saveScreenshot(w.get(), QStringLiteral("41-corrections-refused"));
        if (auto* box = w->findChild<QMessageBox*>(QStringLiteral("errorDialog"))) box->close();
        // Not asked again while they stay (no dialog per change) ...
        w->parameterPanel()->stepRow(1);
        QTest::qWait(200);
        QCOMPARE(errors.count(), 1);
        QCOMPARE(w->currentResult()->id, shown);
        // ... and off again, the slices come back.
        w->correctionsPanel()->findChild<QGroupBox*>(QStringLiteral("halfAcquisitionGroup"))->setChecked(false);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.row == 3 && !r.params.stitched(); }));
        QVERIFY(w->correctionsPanel()->problem().isEmpty());
    }

    void halfAcquisitionWidensTheSliceGrid() {
        const QString tif = realData(QStringLiteral("sarepy_neutron_360/sinogram_360_neutron_image.tif"));
        TOMO_GUI_REQUIRE_FILE(tif);
        tomo::OpenOptions options;
        options.anglesFile = QDir(QFileInfo(tif).absolutePath()).filePath(QStringLiteral("angles_deg.txt")).toStdString();
        w->openPath(tif, options);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 503; }));
        // Its counts have no flats: the reader's warning is shown.
        QVERIFY2(w->metadataPanel()->value(QStringLiteral("Warning")).contains(QStringLiteral("no flat fields")),
                 qPrintable(w->metadataPanel()->value(QStringLiteral("Warning"))));
        // Open beam in columns 0-29 (SOURCES.md) and the 360° scan stitched about its axis.
        tomo::CorrectionOptions c;
        c.flatField.backgroundFirst = 0;
        c.flatField.backgroundCount = 30;
        c.halfAcquisition.enabled = true;
        c.halfAcquisition.axis = 244.9;
        w->correctionsPanel()->setOptions(c);
        QVERIFY(w->correctionsPanel()->options() == c);
        w->parameterPanel()->setCorrections(c);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.stitched(); }));
        const SliceResult& r = *w->currentResult();
        // The stage's geometry: 2 floor(R) + 1 columns, R = 502 - 244.9.
        QCOMPARE(r.preview.gridSize, 2 * 257 + 1);
        QCOMPARE(r.stage.columns, r.preview.gridSize);
        QVERIFY(r.stage.projections < 459 && r.stage.projections > 200);
        QCOMPARE(r.preview.axis, *r.stage.stitchedAxis);
        QVERIFY2(w->correctionsPanel()->foundText().contains(QStringLiteral("stitched to 515 columns")),
                 qPrintable(w->correctionsPanel()->foundText()));
        // The axis controls have nothing to set now.
        QVERIFY(!w->parameterPanel()->findChild<QDoubleSpinBox*>(QStringLiteral("axisSpin"))->isEnabled());
        w->findChild<QDockWidget*>(QStringLiteral("correctionsDock"))->raise();
        saveScreenshot(w.get(), QStringLiteral("42-half-acquisition-sarepy"));
        // Saved without an axis: tomo-recon takes the stitched centre as the preview did.
        QTemporaryDir dir;
        const QString config = dir.filePath(QStringLiteral("sarepy.json"));
        QVERIFY(w->saveParameters(config));
        const tomo::RunConfig saved = tomo::loadRunConfig(config.toStdString());
        QVERIFY(!saved.axis);
        QVERIFY(saved.corrections == c);
#ifdef TOMO_RECON_EXE
        const QString volume = dir.filePath(QStringLiteral("sarepy.h5"));
        QProcess recon;
        recon.start(QStringLiteral(TOMO_RECON_EXE), {QStringLiteral("--config"), config, QStringLiteral("-o"), volume});
        QVERIFY(recon.waitForFinished(120000));
        QVERIFY2(recon.exitCode() == 0, recon.readAllStandardError().constData());
        const tomo::ImageStack batch = tomo::readVolume(volume.toStdString());
        const double difference = maxAbsDifference(batch.slice(0), r.preview.slice);
        qInfo("360° stitched: tomo-recon --config vs the live slice: max abs difference %.3g", difference);
        QVERIFY(difference < 1e-4 * (r.stats.max - r.stats.min));
#endif
    }

    void pinnedDifferenceAcrossCorrectionsAndReplay() {
        const QString tooth = realData(QStringLiteral("aps_tooth/tooth.h5"));
        TOMO_GUI_REQUIRE_FILE(tooth);
        w->openPath(tooth);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 640; }));
        // Before: pinned.
        QAction* pin = actionNamed(*w, QStringLiteral("&Pin Result as Reference"));
        QVERIFY(pin);
        pin->trigger();
        const tomo::Image before = w->currentResult()->preview.slice;
        // After: rings removed (Vo's sorting, the tooth's choice; see README), chosen in the panel as a user would.
        auto* method = w->correctionsPanel()->findChild<QComboBox*>(QStringLiteral("ringMethodCombo"));
        method->setCurrentIndex(method->findData(static_cast<int>(tomo::RingMethod::Sorting)));
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.corrections.rings.method == tomo::RingMethod::Sorting; }));
        const SliceResult& after = *w->currentResult();
        QVERIFY(waitUntil([&] { return w->currentComparison() && w->currentComparison()->resultId == after.id; }));
        const Comparison& c = *w->currentComparison();
        QCOMPARE(c.kind, ReferenceKind::Pinned);
        QVERIFY(c.metrics && c.metrics->maxAbsError > 0.0);
        // The difference view shows after − before, pixel for pixel.
        tomo::Image expected(before.width, before.height);
        for (std::size_t i = 0; i < expected.data.size(); ++i) expected.data[i] = after.preview.slice.data[i] - before.data[i];
        QVERIFY(maxAbsDifference(*c.difference, expected) < 1e-6);
        qInfo("tooth, rings removed vs pinned: max abs %.3g, RMSE %.3g", c.metrics->maxAbsError, c.metrics->rmse);
        saveScreenshot(w.get(), QStringLiteral("43-rings-removed-vs-pinned"));

        // Saved with the parameters and in exported files ...
        QTemporaryDir dir;
        const QString config = dir.filePath(QStringLiteral("tooth-rings.json"));
        QVERIFY(w->saveParameters(config));
        const tomo::RunConfig saved = tomo::loadRunConfig(config.toStdString());
        QCOMPARE(saved.corrections.rings.method, tomo::RingMethod::Sorting);
        QVERIFY(saved.corrections == after.params.corrections);
        {
            const auto dialog = w->makeExportDialog();
            const tomo::RunConfig exported = tomo::runConfigFromJson(dialog->request().write.attributes.at("tomo_run_config"));
            QVERIFY(exported.corrections == after.params.corrections);
        }
#ifdef TOMO_RECON_EXE
        // ... and tomo-recon --config replays the slice.
        const QString volume = dir.filePath(QStringLiteral("tooth-rings.h5"));
        QProcess recon;
        recon.start(QStringLiteral(TOMO_RECON_EXE), {QStringLiteral("--config"), config, QStringLiteral("-o"), volume,
                                                     QStringLiteral("--rows"), QString::number(after.params.row)});
        QVERIFY(recon.waitForFinished(120000));
        QVERIFY2(recon.exitCode() == 0, recon.readAllStandardError().constData());
        const tomo::ImageStack batch = tomo::readVolume(volume.toStdString());
        const double difference = maxAbsDifference(batch.slice(0), after.preview.slice);
        qInfo("rings sorting: tomo-recon --config vs the live slice: max abs difference %.3g", difference);
        QVERIFY(difference < 1e-4 * (after.stats.max - after.stats.min));
        QVERIFY(maxAbsDifference(batch.slice(0), before) > 1e-3 * (after.stats.max - after.stats.min));
#endif
        // Loaded in a fresh window: the panel shows them again.
        w = std::make_unique<MainWindow>();
        w->show();
        QVERIFY(w->loadParameters(config));
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.corrections.rings.method == tomo::RingMethod::Sorting; }));
        QCOMPARE(w->correctionsPanel()->findChild<QComboBox*>(QStringLiteral("ringMethodCombo"))->currentData().toInt(),
                 static_cast<int>(tomo::RingMethod::Sorting));
        // Undo brings the corrections back in the panel too.
        method = w->correctionsPanel()->findChild<QComboBox*>(QStringLiteral("ringMethodCombo"));
        method->setCurrentIndex(method->findData(static_cast<int>(tomo::RingMethod::Off)));
        QCOMPARE(w->history()->undoText(), QStringLiteral("corrections"));
        w->history()->undo();
        QCOMPARE(method->currentData().toInt(), static_cast<int>(tomo::RingMethod::Sorting));
    }

    void tiltedAxisFollowsTheRowAndIsExported() {
        const QString i13 = realData(QStringLiteral("dls_i13_24737/i13_24737_dxchange.h5"));
        TOMO_GUI_REQUIRE_FILE(i13);
        w->openPath(i13);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 160; }));
        setParams([](SliceParams& p) {
            p.row = 60;
            p.axis = 85.0;
            p.axisTilt = 0.01;
            p.options.strategy = "cpu";
        });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.row == 60 && r.params.axisTilt == 0.01; }));
        QCOMPARE(w->currentResult()->preview.axis, 85.0);
        // Ten rows down, the axis moved along the line.
        w->parameterPanel()->stepRow(10);
        QCOMPARE(w->parameterPanel()->params().axis, 85.1);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.row == 70; }));
        QCOMPARE(w->currentResult()->preview.axis, 85.1);
        const tomo::Image row70 = w->currentResult()->preview.slice;
        saveScreenshot(w.get(), QStringLiteral("44-tilted-axis"));
        // Saved as tomo-recon's line: axis on axis_row, axis_tilt.
        QTemporaryDir dir;
        const QString config = dir.filePath(QStringLiteral("tilt.json"));
        QVERIFY(w->saveParameters(config));
        const tomo::RunConfig saved = tomo::loadRunConfig(config.toStdString());
        QCOMPARE(*saved.axis, 85.1);
        QCOMPARE(saved.axisTilt, 0.01);
        QCOMPARE(saved.axisRow, 70.0);
        // Exported rows 60-70 each have their row's axis: the last is the live row 70.
        ExportRequest request = w->makeExportDialog()->request();
        request.target = dir.filePath(QStringLiteral("tilt.h5"));
        request.firstRow = 60;
        request.rowCount = 11;
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        QVERIFY(w->startExport(request));
        QVERIFY(waitUntil([&] { return finished.count() == 1; }));
        QCOMPARE(finished.first().at(1).value<JobStatus>(), JobStatus::Done);
        const tomo::ImageStack volume = tomo::readVolume(request.target.toStdString());
        QVERIFY(maxAbsDifference(volume.slice(10), row70) < 1e-5);
        w->parameterPanel()->stepRow(-10);
        QCOMPARE(w->parameterPanel()->params().axis, 85.0);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.row == 60; }));
        QVERIFY(maxAbsDifference(volume.slice(0), w->currentResult()->preview.slice) < 1e-5);
        // Loaded again: the line through the saved row.
        QVERIFY(w->loadParameters(config));
        QCOMPARE(w->parameterPanel()->params().axisTilt, 0.01);
        QCOMPARE(w->parameterPanel()->params().axis, tomo::AxisLine({85.1, 0.01, 70.0}).at(w->parameterPanel()->params().row));
    }

    void axisSweepThumbnailClickSetsTheAxis() {
        openDemo(128, 4);
        w->showAxisSweep();
        AxisSweepDialog* sweep = w->axisSweepDialog();
        QVERIFY(sweep);
        QVERIFY(QTest::qWaitForWindowExposed(sweep));
        const std::size_t trials = sweep->axes().size();
        QCOMPARE(trials, std::size_t(41)); // 63.5 ± 5 px in 0.25 px steps
        QVERIFY(waitUntil([&] { return sweep->gallery()->count() == static_cast<int>(trials); }));
        QCOMPARE(sweep->gallery()->item(20)->text(), QStringLiteral("63.50 px"));
        QCOMPARE(sweep->gallery()->currentRow(), 20); // the axis on screen is marked
        saveScreenshot(sweep, QStringLiteral("45-axis-sweep-gallery"));
        // The trial at the axis differs from one 5 px off.
        const QImage centre = sweep->gallery()->item(20)->icon().pixmap(160).toImage();
        const QImage off = sweep->gallery()->item(0)->icon().pixmap(160).toImage();
        QVERIFY(centre != off);
        // A click on a thumbnail sets its axis in the parameters and reconstructs.
        QListWidget* gallery = sweep->gallery();
        gallery->scrollToItem(gallery->item(26));
        const QRect rect = gallery->visualItemRect(gallery->item(26));
        QTest::mouseClick(gallery->viewport(), Qt::LeftButton, Qt::NoModifier, rect.center());
        QCOMPARE(w->parameterPanel()->params().axis, 65.0);
        QCOMPARE(sweep->axisAt(26), 65.0);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 65.0; }));
        QCOMPARE(gallery->currentRow(), 26);
    }

    void openDialogAngleUnitsReachTheReaderAndTheJson() {
        {
            OpenDialog first(QString(), w.get());
            auto* units = first.findChild<QComboBox*>(QStringLiteral("unitsCombo"));
            QVERIFY(units);
            units->setCurrentIndex(units->findData(static_cast<int>(tomo::AngleUnits::Radians)));
            QCOMPARE(first.options().angleUnits, tomo::AngleUnits::Radians);
            first.setPath(QStringLiteral("/nonexistent"));
            first.accept();
        }
        QCOMPARE(OpenDialog(QString(), w.get()).options().angleUnits, tomo::AngleUnits::Radians); // remembered

        const QString tif = realData(QStringLiteral("sarepy_neutron_360/sinogram_360_neutron_image.tif"));
        TOMO_GUI_REQUIRE_FILE(tif);
        tomo::OpenOptions options;
        options.anglesFile = QDir(QFileInfo(tif).absolutePath()).filePath(QStringLiteral("angles_deg.txt")).toStdString();
        options.angleUnits = tomo::AngleUnits::Degrees;
        w->openPath(tif, options);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 503; }));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Angles")), QStringLiteral("0.000° … 360.000°"));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Angle units")), QStringLiteral("degrees"));
        QVERIFY2(w->statusBar()->currentMessage().contains(QStringLiteral("warning")), qPrintable(w->statusBar()->currentMessage()));
        w->findChild<QDockWidget*>(QStringLiteral("datasetDock"))->raise();
        saveScreenshot(w.get(), QStringLiteral("46-dataset-warning"));
        QTemporaryDir dir;
        const QString config = dir.filePath(QStringLiteral("units.json"));
        QVERIFY(w->saveParameters(config));
        QCOMPARE(tomo::loadRunConfig(config.toStdString()).open.angleUnits, tomo::AngleUnits::Degrees);
        // The same file read as radians is another scan (the units reach the reader).
        options.angleUnits = tomo::AngleUnits::Radians;
        QSignalSpy opened(w->controller(), &Controller::datasetOpened);
        w->openPath(tif, options);
        QVERIFY(waitUntil([&] { return opened.count() == 1; }));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Angle units")), QStringLiteral("radians"));
        QVERIFY(w->metadataPanel()->value(QStringLiteral("Angles")) != QStringLiteral("0.000° … 360.000°"));
    }

    void shrinkForViewAveragesTheAreaItCovers() {
        // Three columns to two: each output pixel covers 1.5 source pixels.
        QImage row(3, 2, QImage::Format_RGB32);
        for (int y = 0; y < 2; ++y) {
            row.setPixel(0, y, qRgb(0, 30, 255));
            row.setPixel(1, y, qRgb(90, 30, 255));
            row.setPixel(2, y, qRgb(180, 30, 255));
        }
        const QImage two = shrinkForView(row, 2.0 / 3.0);
        QCOMPARE(two.size(), QSize(2, 1));
        QCOMPARE(qRed(two.pixel(0, 0)), 30);  // (0 x 1 + 90 x 0.5) / 1.5
        QCOMPARE(qRed(two.pixel(1, 0)), 150); // (90 x 0.5 + 180 x 1) / 1.5
        QCOMPARE(qGreen(two.pixel(1, 0)), 30);
        QCOMPARE(qBlue(two.pixel(0, 0)), 255);
        QVERIFY(shrinkForView(row, 1.0).isNull());
        // A large image: the same on the pool's threads, and close to Qt's smooth scaling.
        QImage big(1024, 768, QImage::Format_RGB32);
        for (int y = 0; y < big.height(); ++y)
            for (int x = 0; x < big.width(); ++x) big.setPixel(x, y, qRgb((x * 7 + y) % 256, (x / 4) % 256, (y * 3) % 256));
        tomo::WorkerPool pool(4);
        const QImage alone = shrinkForView(big, 0.37), threaded = shrinkForView(big, 0.37, &pool);
        QCOMPARE(threaded, alone);
        const QImage qt = big.scaled(alone.size(), Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
        double difference = 0.0;
        for (int y = 0; y < qt.height(); ++y)
            for (int x = 0; x < qt.width(); ++x) difference += std::abs(qGreen(qt.pixel(x, y)) - qGreen(alone.pixel(x, y)));
        QVERIFY2(difference / (qt.width() * qt.height()) < 3.0, qPrintable(QString::number(difference)));
    }

    void exportOutputTypesRangeEstimateAndClipping() {
        openDemo(128, 16);
        setParams([](SliceParams& p) { p.options.strategy = "cpu"; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.strategy == "cpu"; }));
        QTemporaryDir dir;
        auto exportWith = [&](const ExportRequest& request) {
            QSignalSpy finished(w->controller(), &Controller::jobFinished);
            QSignalSpy reports(w->controller(), &Controller::exportFinished);
            if (!w->startExport(request)) return ExportReport{};
            if (!waitUntil([&] { return finished.count() == 1; }) || reports.count() != 1) return ExportReport{};
            return reports.first().first().value<ExportReport>();
        };
        // float32, the reference values.
        const auto dialog = w->makeExportDialog();
        dialog->setRows(0, 3);
        dialog->setTarget(dir.filePath(QStringLiteral("f32.h5")));
        ExportRequest request = dialog->request();
        QCOMPARE(request.write.type, tomo::OutputType::Float32);
        QVERIFY(exportWith(request).report.slices == 4);
        const tomo::ImageStack exact = tomo::readVolume(request.target.toStdString());

        // uint16: the range estimated on the job thread from rows 0-3 (all of them here).
        dialog->setOutputType(tomo::OutputType::UInt16);
        auto* estimate = dialog->findChild<QPushButton*>(QStringLiteral("estimateButton"));
        QVERIFY(estimate->isEnabled());
        dialog->show();
        QTest::mouseClick(estimate, Qt::LeftButton);
        QVERIFY(dialog->estimating());
        QVERIFY(waitUntil([&] { return !dialog->estimating(); }));
        saveScreenshot(dialog.get(), QStringLiteral("47-export-uint16-estimated"));
        const tomo::RangeEstimate expected = tomo::robustRange(exact.data);
        request = dialog->request();
        qInfo("estimated range [%g, %g]; robustRange of the float32 volume [%g, %g]", request.write.rangeMin,
              request.write.rangeMax, expected.min, expected.max);
        const double tolerance = 1e-5 * (expected.max - expected.min);
        QVERIFY(std::abs(request.write.rangeMin - expected.min) <= tolerance);
        QVERIFY(std::abs(request.write.rangeMax - expected.max) <= tolerance);
        QVERIFY(QString::fromStdString(request.write.attributes.at("output_range_source")).contains(QStringLiteral("rows 0,1,2,3")));
        request.target = dir.filePath(QStringLiteral("u16.tif"));
        const ExportReport u16 = exportWith(request);
        QCOMPARE(u16.type, tomo::OutputType::UInt16);
        const tomo::ClippedValues expectedClipped16 = countClipped(exact, tomo::OutputType::UInt16, request.write.rangeMin, request.write.rangeMax);
        QCOMPARE(u16.clipped.total(), expectedClipped16.total());
        const tomo::ImageStack back16 = tomo::readVolume(request.target.toStdString());
        const float step16 = tomo::quantizationFor(tomo::OutputType::UInt16, request.write.rangeMin, request.write.rangeMax).slope;
        double worst = 0.0;
        for (std::size_t i = 0; i < exact.data.size(); ++i)
            if (exact.data[i] >= request.write.rangeMin && exact.data[i] <= request.write.rangeMax)
                worst = std::max(worst, std::abs(double(back16.data[i]) - exact.data[i]));
        QVERIFY2(worst <= 0.51 * step16, qPrintable(QStringLiteral("%1 > half a step %2").arg(worst).arg(step16)));

        // uint8 over half the values: the rest is clipped, counted and said.
        dialog->setOutputType(tomo::OutputType::UInt8);
        dialog->findChild<QDoubleSpinBox*>(QStringLiteral("rangeMinSpin"))->setValue(0.0);
        dialog->findChild<QDoubleSpinBox*>(QStringLiteral("rangeMaxSpin"))->setValue(expected.high / 2);
        request = dialog->request();
        QCOMPARE(QString::fromStdString(request.write.attributes.at("output_range_source")),
                 QStringLiteral("entered in the export dialog"));
        request.target = dir.filePath(QStringLiteral("u8.h5"));
        const ExportReport u8 = exportWith(request);
        const tomo::ClippedValues expectedClipped8 = countClipped(exact, tomo::OutputType::UInt8, request.write.rangeMin, request.write.rangeMax);
        qInfo("uint8 [0, %g]: clipped %llu below, %llu above, %llu NaN", request.write.rangeMax,
              static_cast<unsigned long long>(u8.clipped.below), static_cast<unsigned long long>(u8.clipped.above),
              static_cast<unsigned long long>(u8.clipped.nan));
        QVERIFY(u8.clipped.above > 0);
        QCOMPARE(u8.clipped.above, expectedClipped8.above);
        QCOMPARE(u8.clipped.below, expectedClipped8.below);
        QVERIFY(waitUntil([&] { return w->findChild<QMessageBox*>(QStringLiteral("clippedDialog")) != nullptr; }, 5000));
        QVERIFY(w->findChild<QMessageBox*>(QStringLiteral("clippedDialog"))->text().contains(QStringLiteral("above")));
        QVERIFY(w->statusBar()->currentMessage().contains(QString::number(u8.clipped.above) + QStringLiteral(" above")));
        saveScreenshot(w->findChild<QMessageBox*>(QStringLiteral("clippedDialog")), QStringLiteral("48-export-clipped"));
        // The size estimate follows the type: 4 slices of 128² at 1 byte.
        const QString summary = dialog->findChild<QLabel*>(QStringLiteral("summaryLabel"))->text();
        QVERIFY2(summary.contains(QLocale().formattedDataSize(4 * 128 * 128)), qPrintable(summary));
    }

    void volumeThresholdEndsTheBackground() {
        // A CT volume's histogram: background around 0 (most voxels), a
        // tissue around 0.2 and a few dense voxels around 1.
        // Each population: a triangular spread (two uniform steps added) of ±0.02.
        auto spread = [](int i) { return 0.02f * ((i % 101) / 100.0f + ((i * 37) % 101) / 100.0f - 1.0f); };
        std::vector<float> values;
        for (int i = 0; i < 8000; ++i) values.push_back(spread(i));
        for (int i = 0; i < 3000; ++i) values.push_back(0.2f + spread(i));
        for (int i = 0; i < 500; ++i) values.push_back(1.0f + spread(i));
        const ImageStats stats = computeStats(values);
        const float t = backgroundThreshold(stats);
        QVERIFY2(t > 0.02f && t < 0.18f, qPrintable(QString::number(t))); // between background and tissue
        const TransferFunction tf = automaticTransferFunction(stats);
        QCOMPARE(tf.threshold, t);
        QCOMPARE(tf.high, stats.autoHigh);
        QCOMPARE(backgroundThreshold(ImageStats{}), 0.0f);
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
    WorkstationTest test;
    return runSuite(test, argc, argv);
}

#include "test_workstation.moc"
