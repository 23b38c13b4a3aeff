// GUI tests of what a scientist trips over (issue 30): the pixel size of each
// dataset, the first export on a fresh account, the ring damage guard beside
// the Corrections panel, half precision where nothing computes it, tab titles
// that fit a 1024 x 700 window, and labels that say what the data are.
// QTest under Xvfb, as the other GUI suites; screenshots as artefacts.
#include "gui_test_support.h"

#include "dialogs/axis_sweep_dialog.h"
#include "dialogs/export_dialog.h"
#include "main_window.h"
#include "panels/corrections_panel.h"
#include "panels/data_panel.h"
#include "panels/metadata_panel.h"
#include "panels/parameter_panel.h"
#include "panels/quality_panel.h"
#include "views/profile_plot.h"
#include "views/slice_view.h"

#include "tomo/dataset.h"
#include "tomo/preview.h"
#include "tomo/registry.h"
#include "tomo/volume_io.h"

#include <QAbstractAxis>
#include <QAction>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QGroupBox>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QTabBar>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

using namespace tomo::ui;
using namespace tomo::ui::test;

namespace {

/// Relative RMS difference between `coarse` and `full`'s slices block-averaged b x b.
double differenceFromShrunk(const SubVolume& coarse, const SubVolume& full, int b) {
    const tomo::ImageStack& c = coarse.volume;
    const tomo::ImageStack& f = full.volume;
    double diff = 0.0, norm = 0.0;
    for (int z = 0; z < c.depth; ++z)
        for (int y = 0; y < c.height; ++y)
            for (int x = 0; x < c.width; ++x) {
                double mean = 0.0;
                for (int j = 0; j < b; ++j)
                    for (int i = 0; i < b; ++i) mean += f.image(z)[std::size_t(b * y + j) * f.width + b * x + i];
                mean /= b * b;
                const double v = c.image(z)[std::size_t(y) * c.width + x];
                diff += (v - mean) * (v - mean);
                norm += mean * mean;
            }
    return std::sqrt(diff / norm);
}

/// Restores an environment variable when it goes out of scope.
class EnvironmentOverride {
public:
    EnvironmentOverride(const char* name, const QByteArray& value)
        : m_name(name), m_had(qEnvironmentVariableIsSet(name)), m_old(qgetenv(name)) {
        if (value.isNull()) qunsetenv(name);
        else qputenv(name, value);
    }
    ~EnvironmentOverride() {
        if (m_had) qputenv(m_name, m_old);
        else qunsetenv(m_name);
    }
    EnvironmentOverride(const EnvironmentOverride&) = delete;
    EnvironmentOverride& operator=(const EnvironmentOverride&) = delete;

private:
    const char* m_name;
    bool m_had;
    QByteArray m_old;
};

} // namespace

class WorkstationPassTest : public QObject {
    Q_OBJECT
    std::unique_ptr<MainWindow> w;

    /// Opens `path` and waits for its first slice (generation moved on).
    bool open(const QString& path) {
        const int before = w->dataset() ? w->dataset()->generation : 0;
        w->openPath(path);
        return waitUntil([&] { return w->dataset() && w->dataset()->generation != before && w->currentResult(); }, 120000);
    }
    /// Opens the demo phantom and waits for its first slice.
    bool openDemo(int bins, int rows) {
        DemoSpec spec;
        spec.bins = spec.projections = bins;
        spec.rows = rows;
        w->openDemo(spec);
        return waitForResult(*w, [bins](const SliceResult& r) { return r.preview.gridSize == bins; });
    }
    /// Rows 0 .. rows - 1 as the 3D view of `size` voxels gets them; unset if it did not come.
    std::optional<SubVolume> subVolume(const SliceParams& p, int rows, int size) {
        std::optional<SubVolume> out;
        const auto c = connect(w->controller(), &Controller::subVolumeReady, this, [&](const SubVolume& v) { out = v; });
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        if (w->controller()->reconstructSubVolume(p, 0, rows, size))
            waitUntil([&] { return finished.count() == 1; }, 120000);
        disconnect(c);
        return out;
    }
    QString pixelButtonText() const { return w->findChild<QToolButton*>(QStringLiteral("pixelSizeButton"))->text(); }
    bool asked() const { return w->metadataPanel()->askingPixelSize(); }

private slots:
    void init() {
        w = freshWindow();
        QVERIFY(w);
    }
    void cleanup() { w.reset(); }

    void pixelSizeBelongsToEachDataset() {
        const QString i13 = realData(QStringLiteral("dls_i13_24737/i13_24737_dxchange.h5"));
        const QString basalt = realData(QStringLiteral("psi_neutron_basalt/basalt_sino.h5"));
        const QString htc = realData(QStringLiteral("helsinki_htc2022_fanbeam/htc2022_ta.h5"));
        for (const QString& f : {i13, basalt, htc}) TOMO_GUI_REQUIRE_FILE(f);
        auto* paganin = w->correctionsPanel()->findChild<QGroupBox*>(QStringLiteral("paganinGroup"));
        QVERIFY(paganin);

        // I13 states no pixel size: asked for (inline), Paganin cannot be on.
        QVERIFY(open(i13));
        QCOMPARE(w->pixelSize().source, DatasetPixelSize::Source::Unknown);
        QVERIFY(asked());
        QCOMPARE(pixelButtonText(), QStringLiteral("pixel size?"));
        QVERIFY(!paganin->isEnabled());
        QVERIFY(!paganin->toolTip().isEmpty());
        saveScreenshot(w.get(), QStringLiteral("p1-pixel-size-asked"));
        // Answered in the Dataset panel: 6.5 µm for the scale bar, the units and Paganin.
        w->metadataPanel()->findChild<QDoubleSpinBox*>(QStringLiteral("pixelSizeSpin"))->setValue(6.5);
        QTest::mouseClick(w->metadataPanel()->findChild<QPushButton*>(QStringLiteral("pixelSizeUseButton")), Qt::LeftButton);
        QCOMPARE(w->pixelSize().micrometres, 6.5);
        QVERIFY(!asked());
        QCOMPARE(w->sliceView()->pixelSize(), 6.5);
        QCOMPARE(pixelButtonText(), QStringLiteral("pixel 6.5 µm"));
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Pixel size")), QStringLiteral("6.5 µm (entered)"));
        w->setValueUnitKind(ValueUnitKind::PerMillimetre);
        QCOMPARE(w->valueUnit().symbol, QStringLiteral("1/mm"));
        QVERIFY(paganin->isEnabled());

        // The basalt scan does not get I13's pixel size: asked again, values per pixel.
        QVERIFY(open(basalt));
        QCOMPARE(w->pixelSize().source, DatasetPixelSize::Source::Unknown);
        QCOMPARE(w->sliceView()->pixelSize(), 0.0);
        QCOMPARE(w->valueUnit().symbol, QStringLiteral("1/px"));
        QVERIFY(asked());
        // "Not known" is an answer: not asked again for this dataset.
        QTest::mouseClick(w->metadataPanel()->findChild<QPushButton*>(QStringLiteral("pixelSizeUnknownButton")),
                          Qt::LeftButton);
        QCOMPARE(w->pixelSize().source, DatasetPixelSize::Source::Declined);
        QVERIFY(!asked());

        // HTC2022 states it (effectivePixelSizePost 0.1483223173330444 mm): from the file, not asked.
        QVERIFY(open(htc));
        QCOMPARE(w->pixelSize().source, DatasetPixelSize::Source::File);
        QVERIFY(std::abs(w->pixelSize().micrometres - 148.3223173330444) < 1e-9);
        QVERIFY(!asked());
        QVERIFY(std::abs(w->sliceView()->pixelSize() - 148.3223173330444) < 1e-9); // the fan-beam scale bar too
        QCOMPARE(w->metadataPanel()->value(QStringLiteral("Pixel size")), QStringLiteral("148.3 µm (from the file)"));
        QCOMPARE(pixelButtonText(), QStringLiteral("pixel 148.3 µm"));
        QCOMPARE(w->valueUnit().symbol, QStringLiteral("1/mm")); // the choice stays, with this dataset's size
        saveScreenshot(w.get(), QStringLiteral("p2-pixel-size-from-file"));

        // Back to I13: its own 6.5 µm again, and Paganin filters with it.
        QVERIFY(open(i13));
        QCOMPARE(w->pixelSize().source, DatasetPixelSize::Source::Entered);
        QCOMPARE(w->pixelSize().micrometres, 6.5);
        QVERIFY(!asked());
        paganin->setChecked(true);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.corrections.paganin.enabled; }));
        QCOMPARE(w->currentResult()->params.corrections.paganin.pixelSizeM, 6.5e-6);
        // A new pixel size for the dataset reaches the filter at once.
        w->setPixelSize(13.0);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) {
            return r.params.corrections.paganin.enabled && r.params.corrections.paganin.pixelSizeM == 13e-6;
        }));
        // The basalt scan was answered "not known": not asked on reopening.
        QVERIFY(open(basalt));
        QCOMPARE(w->pixelSize().source, DatasetPixelSize::Source::Declined);
        QVERIFY(!asked());
        QCOMPARE(pixelButtonText(), QStringLiteral("pixel size –"));
    }

    void firstExportOnAFreshAccount() {
        QTemporaryDir home;
        QVERIFY(home.isValid());
        const EnvironmentOverride homeVariable("HOME", home.path().toLocal8Bit());
        const EnvironmentOverride xdgConfig("XDG_CONFIG_HOME", QByteArray()); // its user-dirs.dirs would name another folder
        const QString documents = QDir(home.path()).filePath(QStringLiteral("Documents"));
        QVERIFY(!QFileInfo::exists(documents));

        QVERIFY(openDemo(64, 4));
        // The folder proposed exists (made on a fresh account) ...
        QCOMPARE(w->outputDirectory(), documents);
        QVERIFY(QFileInfo(documents).isDir());
        // ... so the export the dialog proposes is written there, and the status bar says where.
        const std::unique_ptr<ExportDialog> dialog = w->makeExportDialog();
        ExportRequest request = dialog->request();
        QCOMPARE(QFileInfo(request.target).absolutePath(), documents);
        request.params.options.strategy = "cpu";
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        QVERIFY(w->startExport(request));
        QVERIFY(waitUntil([&] { return finished.count() == 1; }));
        QCOMPARE(finished.first().at(1).value<JobStatus>(), JobStatus::Done);
        QVERIFY(QFileInfo(request.target).isFile());
        QCOMPARE(tomo::readVolume(request.target.toStdString()).depth, 4);
        const QString message = w->statusBar()->currentMessage();
        QVERIFY2(message.contains(QDir::toNativeSeparators(request.target)), qPrintable(message));

        // A work folder that was removed since: the documents folder again, not the missing one.
        QDir(home.path()).mkpath(QStringLiteral("gone"));
        QSettings().setValue(QStringLiteral("files/outputDirectory"), QDir(home.path()).filePath(QStringLiteral("gone")));
        QVERIFY(QDir(home.path()).rmdir(QStringLiteral("gone")));
        QCOMPARE(w->outputDirectory(), documents);
    }

    void ringDamageIsShownBesideTheCorrections() {
        const QString tooth = realData(QStringLiteral("aps_tooth/tooth.h5"));
        TOMO_GUI_REQUIRE_FILE(tooth);
        // Opening searches the axis, then moves the slice there: a step of
        // the history that may come at any time until the search ends.
        QSignalSpy searched(w.get(), &MainWindow::openingAxisSearched);
        QVERIFY(open(tooth));
        QVERIFY(searched.count() > 0 || searched.wait(120000));
        CorrectionsPanel* panel = w->correctionsPanel();
        auto* dock = w->findChild<QDockWidget*>(QStringLiteral("correctionsDock"));
        dock->show();
        dock->raise();
        auto* method = panel->findChild<QComboBox*>(QStringLiteral("ringMethodCombo"));
        auto* guard = panel->findChild<QWidget*>(QStringLiteral("ringGuard"));
        QVERIFY(method && guard);
        QVERIFY(!guard->isVisible()); // no ring removal, no guard

        // The wavelet method leaves the tooth alone (README: 0.5 %, -0.00 %): figures, no warning.
        method->setCurrentIndex(method->findData(static_cast<int>(tomo::RingMethod::Wavelet)));
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.corrections.rings.method == tomo::RingMethod::Wavelet; }));
        QVERIFY(guard->isVisible());
        QVERIFY(!panel->ringDamageWarns());
        QVERIFY2(panel->ringDamageText().contains(QStringLiteral("below")), qPrintable(panel->ringDamageText()));

        // "All" damages it (README: 10.9 % of the angular signal, -0.62 % of the integral): warned.
        method->setCurrentIndex(method->findData(static_cast<int>(tomo::RingMethod::All)));
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.corrections.rings.method == tomo::RingMethod::All; }));
        const tomo::PreprocessStats::RingDamage& rings = w->currentResult()->preview.corrections.rings;
        QVERIFY(rings.exceeded());
        QVERIFY(panel->ringDamageWarns());
        QVERIFY2(panel->ringDamageText().contains(QString::fromStdString(rings.summary()).toHtmlEscaped()),
                 qPrintable(panel->ringDamageText()));
        saveScreenshot(w.get(), QStringLiteral("p3-ring-damage-warning"));

        // The button pins the slice without ring removal and compares the one with it against it.
        const int undoSteps = w->history()->count();
        QTest::mouseClick(panel->findChild<QPushButton*>(QStringLiteral("ringDifferenceButton")), Qt::LeftButton);
        QVERIFY(waitUntil([&] {
            const ReferenceResult* ref = w->activeReference();
            return ref && ref->kind == ReferenceKind::Pinned && w->currentResult() &&
                   w->currentResult()->params.corrections.rings.method == tomo::RingMethod::All && w->currentComparison();
        }));
        const ReferenceResult* pinned = w->activeReference();
        QCOMPARE(pinned->params.corrections.rings.method, tomo::RingMethod::Off);
        QCOMPARE(w->qualityPanel()->referenceKind(), ReferenceKind::Pinned);
        QVERIFY(w->currentComparison()->metrics && w->currentComparison()->metrics->maxAbsError > 0.0); // the removal changed the slice
        QCOMPARE(w->parameterPanel()->params().corrections.rings.method, tomo::RingMethod::All);
        QCOMPARE(w->history()->count(), undoSteps); // the round trip is not an edit
        saveScreenshot(w.get(), QStringLiteral("p4-ring-damage-difference"));
    }

    void halfPrecisionIsGreyedWithTheReason() {
        QVERIFY(openDemo(64, 4));
        auto* precision = w->parameterPanel()->findChild<QComboBox*>(QStringLiteral("precisionCombo"));
        auto* strategy = w->parameterPanel()->findChild<QComboBox*>(QStringLiteral("strategyCombo"));
        QVERIFY(precision && strategy);
        const auto* model = qobject_cast<const QStandardItemModel*>(precision->model());
        const int half = precision->findData(static_cast<int>(tomo::Precision::Float16));
        QVERIFY(model && half >= 0);

        // A CPU strategy stores float32 only: float16 greyed, with the strategy's own reason.
        strategy->setCurrentIndex(strategy->findData(QStringLiteral("cpu-reference")));
        QVERIFY(strategy->currentIndex() >= 0);
        QVERIFY(!model->item(half)->isEnabled());
        const QString why = w->parameterPanel()->halfPrecisionReason();
        QVERIFY2(why.contains(QStringLiteral("cpu-reference does not compute in half precision")), qPrintable(why));
        QCOMPARE(model->item(half)->toolTip(), why);

        // "auto": offered exactly when some strategy on this machine takes float16.
        strategy->setCurrentIndex(strategy->findData(QStringLiteral("auto")));
        tomo::ReconOptions o;
        o.precision = tomo::Precision::Float16;
        bool someTakesIt = false;
        for (const tomo::Backend* b : tomo::BackendRegistry::instance().backends()) {
            if (!b->unavailableReason().empty()) continue;
            try {
                b->checkOptions(o);
                someTakesIt = true;
            } catch (const std::exception&) {
            }
        }
        qInfo("float16 on this machine: %s", someTakesIt ? "offered" : qPrintable(w->parameterPanel()->halfPrecisionReason()));
        QCOMPARE(model->item(half)->isEnabled(), someTakesIt);
        QCOMPARE(w->parameterPanel()->halfPrecisionReason().isEmpty(), someTakesIt);
        // Chosen where it is offered, then a strategy without it: float32 again, never a stale slice.
        if (someTakesIt) {
            precision->setCurrentIndex(half);
            strategy->setCurrentIndex(strategy->findData(QStringLiteral("cpu-reference")));
            QCOMPARE(precision->currentData().toInt(), static_cast<int>(tomo::Precision::Float32));
        }
    }

    void axisGalleryZoomsOnTheObject() {
        const QString tooth = realData(QStringLiteral("aps_tooth/tooth.h5"));
        TOMO_GUI_REQUIRE_FILE(tooth);
        QVERIFY(open(tooth));
        QVERIFY(waitUntil([&] { return !w->openingAxisPending(); }));
        QVERIFY(waitForResult(*w, [](const SliceResult&) { return true; }));
        const SliceResult shown = *w->currentResult(); // a copy: a later slice replaces the one on screen
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        std::optional<AxisSweep> sweep;
        connect(w->controller(), &Controller::axisSweepReady, this, [&](const AxisSweep& s) { sweep = s; });
        w->showAxisSweep();
        AxisSweepDialog* dialog = w->axisSweepDialog();
        QVERIFY(dialog);
        QVERIFY(waitUntil([&] { return finished.count() == 1 && sweep; }, 120000));
        // The tooth (about 250 of 640 px, SOURCES.md) fills the trials, not a 640 px slice.
        const std::optional<tomo::Region> box = dialog->region();
        QVERIFY(box);
        // (measured: 344 x 344, the tooth's 0.5-99.5 % extent of about 265 px and 15 % margins)
        QVERIFY2(box->width <= 0.6 * 640 && box->height <= 0.6 * 640, qPrintable(QStringLiteral("%1 x %2").arg(box->width).arg(box->height)));
        QVERIFY(sweep->region == box);
        // ... and the box holds the object: nearly every pixel in the upper half of the window lies inside.
        const float threshold = shown.stats.autoLow + 0.5f * (shown.stats.autoHigh - shown.stats.autoLow);
        std::size_t inside = 0, all = 0;
        for (int y = 0; y < shown.preview.slice.height; ++y)
            for (int x = 0; x < shown.preview.slice.width; ++x)
                if (shown.preview.slice.data[std::size_t(y) * shown.preview.slice.width + x] > threshold) {
                    ++all;
                    inside += x >= box->x && x < box->x + box->width && y >= box->y && y < box->y + box->height;
                }
        qInfo("object box %d x %d at (%d, %d): %zu of %zu bright pixels inside", box->width, box->height, box->x,
              box->y, inside, all);
        QVERIFY(inside >= 0.97 * static_cast<double>(all));
        saveScreenshot(dialog, QStringLiteral("p8-axis-gallery-zoomed"));
        // A double click enlarges a trial: the box at its own resolution (308 px here), not the 160 px thumbnail.
        QVERIFY(QTest::qWaitForWindowExposed(dialog));
        QListWidget* gallery = dialog->gallery();
        QVERIFY(gallery->count() > 0);
        gallery->scrollToItem(gallery->item(0));
        const QRect rect = gallery->visualItemRect(gallery->item(0));
        // A double click as the window system sends it: a click, then the second press as a double click.
        QTest::mouseClick(gallery->viewport(), Qt::LeftButton, Qt::NoModifier, rect.center());
        QTest::mouseDClick(gallery->viewport(), Qt::LeftButton, Qt::NoModifier, rect.center());
        QVERIFY(waitUntil([&] { return dialog->enlarged() && dialog->enlarged()->isVisible(); }, 5000));
        QVERIFY(dialog->enlarged() && dialog->enlarged()->isVisible());
        const QPixmap enlarged = dialog->enlarged()->findChild<QLabel*>()->pixmap();
        QVERIFY(std::max(enlarged.width(), enlarged.height()) > 160);
        QVERIFY(std::max(enlarged.width(), enlarged.height()) <= kSweepViewSize);
        saveScreenshot(dialog->enlarged(), QStringLiteral("p9-axis-trial-enlarged"));
        // Unticked: the whole slice again.
        dialog->findChild<QCheckBox*>(QStringLiteral("sweepZoomCheck"))->setChecked(false);
        QVERIFY(!dialog->region());
    }

    void threeDPreviewIsReconstructedAtItsResolution() {
        QVERIFY(openDemo(256, 8));
        SliceParams p = w->parameterPanel()->params();
        p.options.strategy = "cpu";
        // A 128-voxel view of the 256-pixel detector: the slices are reconstructed on a 128 grid.
        const std::optional<SubVolume> coarseVolume = subVolume(p, 8, 128);
        QVERIFY(coarseVolume);
        const SubVolume& coarse = *coarseVolume;
        QCOMPARE(coarse.reconstructionBinning, 2);
        QCOMPARE(coarse.reconstructedWidth, 128);
        QCOMPARE(coarse.reconstructedHeight, 128);
        QCOMPARE(coarse.binning, 2);
        QCOMPARE(coarse.volume.width, 128);
        QCOMPARE(coarse.volume.depth, 8);
        // The same voxels as the full-size slices shrunk 2 x 2, up to the coarser sampling.
        const std::optional<SubVolume> fullVolume = subVolume(p, 8, 256);
        QVERIFY(fullVolume);
        const SubVolume& full = *fullVolume;
        QCOMPARE(full.reconstructionBinning, 1);
        QCOMPARE(full.reconstructedWidth, 256);
        const double relative = differenceFromShrunk(coarse, full, 2);
        qInfo("3D preview at 128 vs full 256 shrunk: relative RMS difference %.4f; %.2f s vs %.2f s (not asserted)",
              relative, coarse.seconds, full.seconds);
        // Measured 0.093 (the coarse grid samples the phantom's sharp edges differently); bound 2.5x that.
        QVERIFY(relative < 2.5 * 0.093);
    }

    void threeDPreviewUsesTheAnglesItsGridNeeds() {
        // 768 angles for a 64-voxel view of a 192-pixel detector: the grid needs pi/2 x 64 ~ 101
        // of them, so runs of 8 neighbouring projections are averaged (96 angles, >= 90 % of 101).
        DemoSpec spec;
        spec.bins = 192;
        spec.projections = 768;
        spec.rows = 8;
        w->openDemo(spec);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.gridSize == 192; }));
        SliceParams p = w->parameterPanel()->params();
        p.options.strategy = "cpu";
        const std::optional<SubVolume> coarseVolume = subVolume(p, 8, 64);
        QVERIFY(coarseVolume);
        const SubVolume& coarse = *coarseVolume;
        QCOMPARE(coarse.reconstructionBinning, 3);
        QCOMPARE(coarse.reconstructionProjections, 96);
        QCOMPARE(coarse.reconstructedWidth, 64);
        QCOMPARE(coarse.volume.width, 64);
        // The full-size slices (192 voxels: 384 angles, runs of 2) shrunk 3 x 3 show the same.
        const std::optional<SubVolume> fullVolume = subVolume(p, 8, 192);
        QVERIFY(fullVolume);
        const SubVolume& full = *fullVolume;
        QCOMPARE(full.reconstructionBinning, 1);
        QCOMPARE(full.reconstructionProjections, 384);
        const double relative = differenceFromShrunk(coarse, full, 3);
        qInfo("MEASURED 3D preview 64 voxels from 96 angles vs 192 from 384 shrunk: relative RMS difference %.4f; "
              "%.2f s vs %.2f s (not asserted)",
              relative, coarse.seconds, full.seconds);
        // Measured 0.166 (the grid 3x coarser, angles averaged in runs of 8 against 2); bound 2.5x that.
        QVERIFY(relative < 2.5 * 0.166);
    }

    void fanBeamAxisStepsReuseTheFilteredProjections() {
        // HTC2022 (a full turn): the first axis step filters the detector rows at both ends of
        // the axis's reach (2 % of 2769 px: +-55 columns), later steps only back-project.
        const QString htc = realData(QStringLiteral("helsinki_htc2022_fanbeam/htc2022_ta.h5"));
        TOMO_GUI_REQUIRE_FILE(htc);
        QVERIFY(open(htc));
        SliceParams p = w->parameterPanel()->params();
        p.options.strategy = "cpu";
        w->parameterPanel()->setParams(p);
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.preview.divergent && r.preview.strategy == "cpu"; }));
        const double start = p.axis;
        int filtered = 0;
        for (const double step : {0.5, 1.0, -2.0, 10.0}) {
            p.axis = start + step;
            w->parameterPanel()->setParams(p);
            QVERIFY(waitForResult(*w, [&](const SliceResult& r) { return r.params.axis == p.axis && r.preview.divergent; }));
            if (w->currentResult()->preview.filtered) ++filtered;
        }
        QCOMPARE(filtered, 1); // re-filtering at every step made it 4
        // The slice is the one a session filtering at that axis makes.
        tomo::OpenOptions options;
        options.allowDivergentBeam = true;
        tomo::PreviewSession fresh(std::shared_ptr<tomo::DatasetReader>(tomo::openDataset(htc.toStdString(), options)));
        const tomo::Image expected = fresh.run(p.request()).slice;
        const tomo::Image& slice = w->currentResult()->preview.slice;
        QCOMPARE(slice.data.size(), expected.data.size());
        float peak = 0.0f, diff = 0.0f;
        for (std::size_t i = 0; i < slice.data.size(); ++i) {
            peak = std::max(peak, std::abs(expected.data[i]));
            diff = std::max(diff, std::abs(slice.data[i] - expected.data[i]));
        }
        qInfo("MEASURED fan-beam axis step: largest difference from filtering at the axis %.3g of the peak", diff / peak);
        // Measured up to 5.3e-6 (the filter's own float rounding: filterings 1e-6 columns apart
        // differ by 2.8e-6 of the largest filtered value); bound 3x that.
        QVERIFY(peak > 0.0f);
        QVERIFY(diff < 1.6e-5f * peak);
    }

    void tabTitlesFitTheirTabs() {
        QVERIFY(openDemo(128, 4));
        for (const QSize size : {QSize(1024, 700), QSize(1600, 1000)}) {
            w->resize(size);
            QTest::qWait(100);
            for (QAction* a : w->findChildren<QAction*>())
                if (a->text() == QLatin1String("Reset &Layout")) a->trigger();
            QTest::qWait(200);
            int tabs = 0;
            for (QTabBar* bar : w->findChildren<QTabBar*>()) {
                if (!bar->isVisible()) continue;
                for (int i = 0; i < bar->count(); ++i) {
                    const int text = bar->fontMetrics().horizontalAdvance(bar->tabText(i));
                    QVERIFY2(text <= bar->tabRect(i).width(),
                             qPrintable(QStringLiteral("%1 × %2: tab \"%3\" needs %4 px, has %5")
                                            .arg(size.width())
                                            .arg(size.height())
                                            .arg(bar->tabText(i))
                                            .arg(text)
                                            .arg(bar->tabRect(i).width())));
                    ++tabs;
                }
            }
            // Compact: all eleven panels (Method, Convergence and Reprojection
            // too) are tabs of the two groups; wide: Display stands alone.
            QCOMPARE(tabs, size.width() < 1280 ? 11 : 10);
            QVERIFY(w->sliceView()->width() >= w->width() / 2);
            QVERIFY(w->sliceView()->height() >= w->height() / 2);
            saveScreenshot(w.get(), QStringLiteral("p5-tabs-%1x%2").arg(size.width()).arg(size.height()));
        }
    }

    void labelsSayWhatTheDataAre() {
        const QString basalt = realData(QStringLiteral("psi_neutron_basalt/basalt_sino.h5"));
        const QString tooth = realData(QStringLiteral("aps_tooth/tooth.h5"));
        for (const QString& f : {basalt, tooth}) TOMO_GUI_REQUIRE_FILE(f);
        auto* dock = w->findChild<QDockWidget*>(QStringLiteral("dataDock"));
        // Already log-corrected: no "−log" in the sinogram's title.
        QVERIFY(open(basalt));
        dock->show();
        dock->raise();
        QVERIFY(waitUntil([&] { return w->dataPanel()->caption().startsWith(QStringLiteral("Sinogram of row")); }));
        QVERIFY2(!w->dataPanel()->caption().contains(QStringLiteral("−log")), qPrintable(w->dataPanel()->caption()));
        QVERIFY(w->dataPanel()->caption().contains(QStringLiteral("line integrals as stored")));
        // Raw counts: −log applied here, and said.
        QVERIFY(open(tooth));
        QVERIFY(waitUntil([&] { return w->dataPanel()->caption().startsWith(QStringLiteral("Sinogram of row")); }));
        QVERIFY2(w->dataPanel()->caption().contains(QStringLiteral("−log")), qPrintable(w->dataPanel()->caption()));

        // The profile's axes: labels whole, the value axis's title as long as the plot is high.
        auto* profileDock = w->findChild<QDockWidget*>(QStringLiteral("profileDock"));
        profileDock->show();
        profileDock->raise();
        w->setProfileLine(QLineF(100, 320, 540, 320));
        QVERIFY(waitUntil([&] { return !w->profilePlot()->differencePoints().isEmpty(); }));
        QTest::qWait(200);
        for (QChart* chart : {w->profilePlot()->valueChart(), w->profilePlot()->differenceChart()})
            for (QAbstractAxis* axis : chart->axes()) QVERIFY(!axis->truncateLabels());
        for (QChart* chart : {w->profilePlot()->valueChart(), w->profilePlot()->differenceChart()}) {
            QAbstractAxis* values = chart->axes(Qt::Vertical).front();
            const int titleLength = QFontMetrics(values->titleFont()).horizontalAdvance(values->titleText());
            QVERIFY2(titleLength <= chart->plotArea().height(),
                     qPrintable(QStringLiteral("\"%1\" needs %2 px, the plot is %3 px high")
                                    .arg(values->titleText())
                                    .arg(titleLength)
                                    .arg(chart->plotArea().height())));
        }
        QVERIFY(w->profilePlot()->valueChart()->axes(Qt::Horizontal).front()->titleText().isEmpty()); // said once, below
        saveScreenshot(w.get(), QStringLiteral("p6-profile-labels"));

        // The Corrections panel fits its dock at both sizes: nothing cut at the right edge.
        auto* corrections = w->findChild<QDockWidget*>(QStringLiteral("correctionsDock"));
        for (const QSize size : {QSize(1600, 1000), QSize(1024, 700)}) {
            w->resize(size);
            QTest::qWait(100);
            for (QAction* a : w->findChildren<QAction*>())
                if (a->text() == QLatin1String("Reset &Layout")) a->trigger();
            corrections->show();
            corrections->raise();
            QTest::qWait(200);
            auto* scroll = qobject_cast<QScrollArea*>(corrections->widget());
            QVERIFY(scroll);
            QVERIFY2(w->correctionsPanel()->minimumSizeHint().width() <= scroll->viewport()->width(),
                     qPrintable(QStringLiteral("%1 px panel in a %2 px dock")
                                    .arg(w->correctionsPanel()->minimumSizeHint().width())
                                    .arg(scroll->viewport()->width())));
            QVERIFY(!scroll->horizontalScrollBar()->isVisible());
            saveScreenshot(w.get(), QStringLiteral("p7-corrections-%1x%2").arg(size.width()).arg(size.height()));
        }
    }
};

int main(int argc, char** argv) {
    prepareEnvironment(/*offscreenOk=*/true);
    QApplication app(argc, argv);
    initTestApplication();
    WorkstationPassTest test;
    return runSuite(test, argc, argv);
}

#include "test_workstation_pass.moc"
