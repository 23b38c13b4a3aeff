// GUI tests of the Parameters panel (ui/panels/parameter_panel): strategy,
// interpolation and device choices (unavailable and approximate ones), the
// fine axis control and the tilted axis.
#include "gui_test_support.h"

#include "dialogs/export_dialog.h"
#include "main_window.h"
#include "panels/parameter_panel.h"
#include "panels/quality_panel.h"
#include "views/slice_view.h"

#include "tomo/gridrec.h"
#include "tomo/registry.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardItemModel>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace tomo::ui;
using namespace tomo::ui::test;

class ParameterPanelTests : public WindowTest {
    Q_OBJECT

private slots:

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
};

int main(int argc, char** argv) {
    prepareEnvironment(/*offscreenOk=*/true);
    QApplication app(argc, argv);
    initTestApplication();
    ParameterPanelTests test;
    return runSuite(test, argc, argv);
}

#include "test_parameter_panel.moc"
