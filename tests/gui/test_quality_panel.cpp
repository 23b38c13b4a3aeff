// GUI tests of the Quality panel (ui/panels/quality_panel): the difference
// against the true phantom, the exact mode and a pinned result, the
// reference's mode, and the reference computed again after a cancel.
#include "gui_test_support.h"

#include "dialogs/export_dialog.h"
#include "main_window.h"
#include "panels/corrections_panel.h"
#include "panels/quality_panel.h"
#include "views/slice_view.h"

#include "tomo/registry.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <algorithm>
#include <memory>

using namespace tomo::ui;
using namespace tomo::ui::test;

namespace {

/// The QAction of the main window whose text is `text` (with its & marks).
QAction* actionNamed(QWidget& window, const QString& text) {
    for (QAction* a : window.findChildren<QAction*>())
        if (a->text() == text) return a;
    return nullptr;
}

} // namespace

class QualityPanelTests : public WindowTest {
    Q_OBJECT

private slots:

    void wrongAxisRaisesRmseAgainstPhantom() {
        openDemo();
        w->qualityPanel()->setReferenceKind(ReferenceKind::Truth);
        QVERIFY(waitForComparison(*w));
        const double rmseRight = w->qualityPanel()->metrics()->rmse;
        const tomo::Image right = w->sliceView()->image();

        setParams([](SliceParams& p) { p.axis += 3.0; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 130.5; }));
        QVERIFY(waitForComparison(*w));
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


    void differenceAgainstReferenceIsZeroForExactMode() {
        openDemo();
        w->qualityPanel()->setReferenceKind(ReferenceKind::Exact);
        setParams([](SliceParams& p) { p.options.strategy = "cpu-reference"; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.strategy == "cpu-reference"; }));
        QVERIFY(waitForComparison(*w));
        const auto m = w->qualityPanel()->metrics();
        QVERIFY(m.has_value());
        QCOMPARE(m->maxAbsError, 0.0);
        QCOMPARE(m->rmse, 0.0);
        const tomo::Image& diff = w->qualityPanel()->difference();
        QVERIFY(!diff.data.empty());
        QVERIFY(std::all_of(diff.data.begin(), diff.data.end(), [](float v) { return v == 0.0f; }));
        QCOMPARE(w->qualityPanel()->view()->caption(), QStringLiteral("Result − reference: identical"));
        saveScreenshot(w.get(), QStringLiteral("04-exact-difference-zero"));

        // The fast exact CPU mode: not bit-identical, within float rounding.
        setParams([](SliceParams& p) { p.options.strategy = "cpu"; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.strategy == "cpu"; }));
        QVERIFY(waitForComparison(*w));
        const auto fast = *w->qualityPanel()->metrics();
        qInfo("cpu vs cpu-reference: max abs %.3g, PSNR %.1f dB", fast.maxAbsError, fast.psnr);
        QVERIFY(fast.psnr > 80.0);
        // Rounding fills the diverging colours as a real error would: the
        // caption gives the colours' span against the reference's range.
        const QString caption = w->qualityPanel()->view()->caption();
        qInfo("the difference view says: %s", qPrintable(caption));
        QVERIFY2(caption.startsWith(QStringLiteral("Result − reference: ±")), qPrintable(caption));
        const QRegularExpression share(QStringLiteral(" = ([0-9.e+-]+) % of its range$"));
        const auto match = share.match(caption);
        QVERIFY2(match.hasMatch(), qPrintable(caption));
        const double percent = match.captured(1).toDouble();
        QVERIFY2(percent > 0.0 && percent <= 100.0 * fast.maxAbsError / fast.referenceRange * 1.06, qPrintable(caption));
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
};

int main(int argc, char** argv) {
    prepareEnvironment(/*offscreenOk=*/true);
    QApplication app(argc, argv);
    initTestApplication();
    QualityPanelTests test;
    return runSuite(test, argc, argv);
}

#include "test_quality_panel.moc"
