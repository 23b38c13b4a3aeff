// GUI tests of the dialogs (ui/dialogs/): Reconstruct to File (cancel,
// output types, range estimate, clipping), Open with Options, the axis
// sweep gallery and Compare Modes.
#include "gui_test_support.h"

#include "dialogs/axis_sweep_dialog.h"
#include "dialogs/compare_modes_dialog.h"
#include "dialogs/export_dialog.h"
#include "dialogs/open_dialog.h"
#include "main_window.h"
#include "panels/data_panel.h"
#include "panels/metadata_panel.h"
#include "panels/parameter_panel.h"

#include "tomo/gpu_list.h"
#include "tomo/metrics.h"
#include "tomo/output_range.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace tomo::ui;
using namespace tomo::ui::test;

namespace {

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

} // namespace

class DialogTests : public WindowTest {
    Q_OBJECT

private slots:

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

    void exportGpuChoiceIsOffWithItsReasonOrReachesTheJob() {
        openDemo(128, 8);
        setParams([](SliceParams& p) { p.options.strategy = "auto"; });
        auto dialog = w->makeExportDialog();
        auto* note = dialog->findChild<QLabel*>(QStringLiteral("gpuNote"));
        auto* list = dialog->findChild<QListWidget*>(QStringLiteral("gpuList"));
        auto* all = dialog->findChild<QCheckBox*>(QStringLiteral("allGpusCheck"));
        QVERIFY(note && list && all);
        const std::vector<tomo::GpuDevice> here = tomo::gpuDevices();
        if (here.empty()) { // CI: no CUDA GPU, the choice is off and says why
            QVERIFY(!all->isEnabled() && !list->isEnabled());
            QVERIFY2(note->text().startsWith(QStringLiteral("No CUDA GPU to choose: ")), qPrintable(note->text()));
            QCOMPARE(note->text(), dialog->gpusOffReason());
            QCOMPARE(dialog->request().params.gpus, std::string());
            saveScreenshot(dialog.get(), QStringLiteral("49-export-no-gpu"));
        }

        // Two GPUs found (as on a 2-GPU machine), strategy auto: on; the
        // GPUs ticked reach the request and the run config it stores.
        const std::vector<tomo::GpuDevice> two{{0, "First GPU", 132, std::size_t{80} << 30, 9, 0},
                                               {1, "Second GPU", 114, std::size_t{80} << 30, 9, 0}};
        dialog->setGpus(two);
        QVERIFY(all->isEnabled() && list->isEnabled());
        QVERIFY(dialog->gpusOffReason().isEmpty());
        QCOMPARE(list->count(), 2);
        QVERIFY2(list->item(1)->text().startsWith(QStringLiteral("GPU 1: Second GPU (114 SMs")),
                 qPrintable(list->item(1)->text()));
        QCOMPARE(dialog->request().params.gpus, std::string()); // none ticked: the panel's device alone
        list->item(1)->setCheckState(Qt::Checked);
        const ExportRequest one = dialog->request();
        QCOMPARE(one.params.gpus, std::string("1"));
        QCOMPARE(tomo::runConfigFromJson(one.write.attributes.at("tomo_run_config")).gpus, std::string("1"));
        QCOMPARE(one.write.attributes.at("gpus"), std::string("1"));
        list->item(0)->setCheckState(Qt::Checked);
        QCOMPARE(dialog->request().params.gpus, std::string("0,1"));
        all->setChecked(true);
        QVERIFY(!list->isEnabled());
        QCOMPARE(dialog->request().params.gpus, std::string("all"));
        dialog->show();
        saveScreenshot(dialog.get(), QStringLiteral("50-export-gpus"));

        // Replayed parameters (a volume's run config) tick the GPUs they name.
        const tomo::RunConfig config = tomo::runConfigFromJson(one.write.attributes.at("tomo_run_config"));
        w->parameterPanel()->setParams(fromRunConfig(config, w->dataset()->info.projections));
        QCOMPARE(w->parameterPanel()->params().gpus, std::string("1"));
        auto replayed = w->makeExportDialog();
        replayed->setGpus(two);
        QCOMPARE(replayed->findChild<QListWidget*>(QStringLiteral("gpuList"))->item(1)->checkState(), Qt::Checked);
        QCOMPARE(replayed->findChild<QListWidget*>(QStringLiteral("gpuList"))->item(0)->checkState(), Qt::Unchecked);
        QCOMPARE(replayed->request().params.gpus, std::string("1"));

        // A CPU strategy: off whatever GPUs there are, saying why.
        setParams([](SliceParams& p) { p.options.strategy = "cpu"; });
        auto cpu = w->makeExportDialog();
        cpu->setGpus(two);
        QVERIFY(!cpu->findChild<QCheckBox*>(QStringLiteral("allGpusCheck"))->isEnabled());
        QVERIFY(!cpu->findChild<QListWidget*>(QStringLiteral("gpuList"))->isEnabled());
        QVERIFY2(cpu->gpusOffReason().contains(QStringLiteral("“cpu” does not run on CUDA GPUs")),
                 qPrintable(cpu->gpusOffReason()));
        QCOMPARE(cpu->request().params.gpus, std::string());

        // The GPUs reach the job: on a machine without GPU 1 the export stops naming it, and writes nothing.
        if (std::none_of(here.begin(), here.end(), [](const tomo::GpuDevice& d) { return d.index == 1; })) {
            QTemporaryDir dir;
            ExportRequest request = one;
            request.target = dir.filePath(QStringLiteral("gpus.h5"));
            QSignalSpy finished(w->controller(), &Controller::jobFinished);
            QVERIFY(w->startExport(request));
            QVERIFY(waitUntil([&] { return finished.count() == 1; }));
            QCOMPARE(finished.first().at(1).value<JobStatus>(), JobStatus::Failed);
            const QString message = finished.first().at(2).toString();
            QVERIFY2(message.contains(QStringLiteral("GPUs 1: there is no GPU 1")), qPrintable(message));
            QVERIFY(!QFile::exists(request.target));
        }
    }
};

int main(int argc, char** argv) {
    prepareEnvironment(/*offscreenOk=*/true);
    QApplication app(argc, argv);
    initTestApplication();
    DialogTests test;
    return runSuite(test, argc, argv);
}

#include "test_dialogs.moc"
