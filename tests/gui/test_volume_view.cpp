// The VTK 3D view inside the Qt 6 main window (QOpenGLWidget driving a
// vtkGenericOpenGLRenderWindow). Needs an X display with GLX (Xvfb + Mesa):
// the offscreen Qt platform cannot host a QOpenGLWidget.
#include "gui_test_support.h"

#include "main_window.h"
#include "parameter_panel.h"
#include "volume_view.h"

#include <QApplication>
#include <QDir>
#include <QSet>
#include <QSignalSpy>
#include <QTest>

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
    }
};

int main(int argc, char** argv) {
    prepareEnvironment(/*offscreenOk=*/false);
    QApplication app(argc, argv);
    initTestApplication();
    VolumeViewTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_volume_view.moc"
