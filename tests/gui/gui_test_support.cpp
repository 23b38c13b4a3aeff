#include "gui_test_support.h"

#include "application.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>
#include <QTest>

#include <cstdio>
#include <cstdlib>

namespace tomo::ui::test {

void prepareEnvironment(bool offscreenOk) {
    const bool display = qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY");
    if (!display && !qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) {
        if (!offscreenOk) {
            std::printf("SKIP: no X display; run under xvfb-run (the 3D view needs OpenGL through GLX)\n");
            std::exit(0);
        }
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    setDefaultSurfaceFormat();
}

void initTestApplication() {
    initApplication();
    QStandardPaths::setTestModeEnabled(true); // settings under ~/.qttest, not the user's
    QSettings().clear();
    QDir().mkpath(artefactDir());
}

bool waitUntil(const std::function<bool()>& done, int timeoutMs) {
    QElapsedTimer timer;
    timer.start();
    while (!done()) {
        if (timer.elapsed() > timeoutMs) return false;
        QTest::qWait(10);
    }
    return true;
}

bool waitForResult(MainWindow& w, const std::function<bool(const SliceResult&)>& accept, int timeoutMs) {
    return waitUntil([&] { return w.currentResult() && accept(*w.currentResult()); }, timeoutMs);
}

bool waitForReference(MainWindow& w, int timeoutMs) {
    return waitUntil([&] { return w.activeReference() != nullptr; }, timeoutMs);
}

QString artefactDir() { return QStringLiteral(TOMO_GUI_ARTEFACT_DIR); }

QString saveScreenshot(QWidget* widget, const QString& name) {
    QTest::qWait(50); // let pending paints happen
    const QString path = QDir(artefactDir()).filePath(name % QStringLiteral(".png"));
    widget->grab().save(path);
    return path;
}

QString realData(const QString& relative) {
    const QString path = QDir(QStringLiteral(TOMO_SHARED_DATA_DIR)).filePath(QStringLiteral("real/") % relative);
    return QFileInfo::exists(path) ? path : QString();
}

} // namespace tomo::ui::test
