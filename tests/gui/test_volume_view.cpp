// The VTK 3D view inside the Qt 6 main window (QOpenGLWidget driving a
// vtkGenericOpenGLRenderWindow). Needs an X display with GLX (Xvfb + Mesa):
// the offscreen Qt platform cannot host a QOpenGLWidget.
#include "gui_test_support.h"

#include "main_window.h"
#include "panels/parameter_panel.h"
#include "views/histogram_widget.h"
#include "views/volume_view.h"

#include <QApplication>
#include <QDir>
#include <QSet>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <memory>

using namespace tomo::ui;
using namespace tomo::ui::test;

namespace {

/// Distinct colours in the image: a blank or uniform render has very few.
int distinctColours(const QImage& image) {
    QSet<QRgb> colours;
    const QImage img = image.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < img.height(); y += 2)
        for (int x = 0; x < img.width(); x += 2) colours.insert(img.pixel(x, y));
    return static_cast<int>(colours.size());
}

} // namespace

class VolumeViewTest : public QObject {
    Q_OBJECT
private slots:
    void volumeViewRendersSubVolume() {
        if (!VolumeView::isAvailable()) QSKIP("built without VTK");
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        DemoSpec spec;
        spec.bins = spec.projections = 160;
        spec.rows = 48;
        w.openDemo(spec);
        QVERIFY(waitForResult(w, [](const SliceResult& r) { return r.preview.gridSize == 160; }));

        w.showVolumeView();
        VolumeView* view = w.volumeView();
        QVERIFY(view);
        QTest::qWait(200);
        const QImage empty = view->renderedImage();
        QVERIFY(!empty.isNull());

        QSignalSpy ready(w.controller(), &Controller::subVolumeReady);
        QVERIFY(w.controller()->reconstructSubVolume(w.parameterPanel()->params(), 0, 48));
        QVERIFY(waitUntil([&] { return ready.count() == 1; }, 120000));
        QVERIFY(view->hasVolume());
        QTest::qWait(300);
        const QImage rendered = view->renderedImage();
        rendered.save(QDir(artefactDir()).filePath(QStringLiteral("14-3d-render.png")));
        const int colours = distinctColours(rendered);
        qInfo("3D render %dx%d: %d distinct colours (empty view: %d)", rendered.width(), rendered.height(), colours,
              distinctColours(empty));
        saveScreenshot(&w, QStringLiteral("15-3d-view"));
        QVERIFY2(colours > 200, "the 3D view shows no volume");
        QVERIFY(colours > distinctColours(empty) * 2);

        // Its own transfer function, from the volume: the background is below
        // the threshold, the phantom (skull and the tissue inside) above it.
        const SubVolume volume = ready.first().first().value<SubVolume>();
        const TransferFunction tf = view->transferFunction();
        const auto above = std::count_if(volume.volume.data.begin(), volume.volume.data.end(),
                                         [&](float v) { return v > tf.threshold; });
        const double share = static_cast<double>(above) / static_cast<double>(volume.volume.data.size());
        qInfo("automatic transfer function: threshold %.4g, top %.4g, opacity %.2f; %.1f %% of the voxels above",
              tf.threshold, tf.high, tf.opacity, share * 100.0);
        QVERIFY(share > 0.1 && share < 0.9);
        const auto skull = std::count_if(volume.volume.data.begin(), volume.volume.data.end(),
                                         [&](float v) { return v > 0.8f * volume.stats.autoHigh; });
        QVERIFY(above > 3 * skull); // the inside shows, not only the dense shell
        QCOMPARE(tf.high, volume.stats.autoHigh);
        // The 2D window no longer drives it.
        emit w.histogram()->windowChanged(volume.stats.min, volume.stats.max);
        QCOMPARE(view->transferFunction().threshold, tf.threshold);
        // Raising the threshold to the densest values leaves little to see.
        TransferFunction dense = tf;
        dense.threshold = volume.stats.autoHigh * 0.98f;
        dense.high = volume.stats.max;
        view->setTransferFunction(dense);
        QTest::qWait(300);
        const int fewer = distinctColours(view->renderedImage());
        qInfo("threshold at the densest values: %d distinct colours", fewer);
        QVERIFY(fewer < colours);
        view->setTransferFunction(tf);
        QTest::qWait(300);
        view->renderedImage().save(QDir(artefactDir()).filePath(QStringLiteral("14-3d-render-automatic.png")));

        // Another dataset: neither the volume nor its histogram stays.
        auto* histogram = view->findChild<HistogramWidget*>(QStringLiteral("volumeHistogram"));
        QVERIFY(histogram && !histogram->stats().histogram.empty());
        spec.bins = spec.projections = 96;
        w.openDemo(spec);
        QVERIFY(waitForResult(w, [](const SliceResult& r) { return r.preview.gridSize == 96; }));
        QVERIFY(!view->hasVolume());
        QVERIFY(histogram->stats().histogram.empty());
    }
};

int main(int argc, char** argv) {
    prepareEnvironment(/*offscreenOk=*/false);
    QApplication app(argc, argv);
    initTestApplication();
    VolumeViewTest test;
    return runSuite(test, argc, argv);
}

#include "test_volume_view.moc"
