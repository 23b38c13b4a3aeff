// GUI tests of the panels about the data (ui/panels/): Corrections (what it
// sets, what it found, what a dataset refuses, half acquisition) and Data
// (the sinogram, projections, flats and darks a slice is made of).
#include "gui_test_support.h"

#include "main_window.h"
#include "panels/corrections_panel.h"
#include "panels/data_panel.h"
#include "panels/metadata_panel.h"
#include "panels/parameter_panel.h"
#include "views/slice_view.h"

#include "tomo/preprocess.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QGroupBox>
#include <QMessageBox>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace tomo::ui;
using namespace tomo::ui::test;

class DataPanelsTests : public WindowTest {
    Q_OBJECT

private slots:

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
};

int main(int argc, char** argv) {
    prepareEnvironment(/*offscreenOk=*/true);
    QApplication app(argc, argv);
    initTestApplication();
    DataPanelsTests test;
    return runSuite(test, argc, argv);
}

#include "test_data_panels.moc"
