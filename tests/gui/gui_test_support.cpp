#include "gui_test_support.h"

#include "application.h"
#include "panels/parameter_panel.h"
#include "work/slice_session.h"

#include "tomo/error.h"
#include "tomo/phantom.h"
#include "tomo/registry.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QMessageBox>
#include <QSignalSpy>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tomo::ui::test {

void prepareEnvironment(bool offscreenOk) {
    const bool display = qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY");
    if (!display && !qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) {
        if (!offscreenOk) {
            std::printf("SKIP: no X display; run under xvfb-run (the 3D view needs OpenGL through GLX)\n");
            std::exit(kSkipExitCode);
        }
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    setDefaultSurfaceFormat();
}

void initTestApplication() {
    initApplication();
    // Settings in a folder of this process alone: not the user's, and not
    // those of another test process running at the same time (ctest -j,
    // another build's suite), which would otherwise share ~/.qttest.
    QStandardPaths::setTestModeEnabled(true);
    static QTemporaryDir settingsDir(QDir::temp().filePath(QStringLiteral("tomo-gui-test-settings-XXXXXX")));
    if (!settingsDir.isValid()) qFatal("cannot create a temporary folder for the test settings");
    for (QSettings::Format format : {QSettings::NativeFormat, QSettings::IniFormat})
        QSettings::setPath(format, QSettings::UserScope, settingsDir.path());
    QSettings().clear();
    QDir().mkpath(artefactDir());
}

int runSuite(QObject& test, int argc, char** argv) {
    QStringList args;
    for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
    // The caller's own loggers, and the listings (which exit inside qExec).
    for (const char* own : {"-o", "-functions", "-datatags", "-help"})
        if (args.contains(QLatin1String(own))) return QTest::qExec(&test, args);
    // A second plain-text log in a file says what each function did; the
    // exit status alone counts failures only.
    QTemporaryDir dir;
    if (!dir.isValid()) qFatal("cannot create a temporary folder for the test log");
    const QString log = dir.filePath(QStringLiteral("log.txt"));
    args << QStringLiteral("-o") << QStringLiteral("-,txt") << QStringLiteral("-o") << log + QStringLiteral(",txt");
    const int failed = QTest::qExec(&test, args);
    if (failed != 0) return failed;
    QFile file(log);
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read the test log %s", qPrintable(log));
    int passed = 0, skipped = 0; // test functions, initTestCase() and cleanupTestCase() aside
    for (const QByteArray& line : file.readAll().split('\n')) {
        if (line.startsWith("SKIP   :")) ++skipped;
        if (line.startsWith("PASS   :") && !line.contains("::initTestCase()") && !line.contains("::cleanupTestCase()"))
            ++passed;
    }
    return skipped > 0 && passed == 0 ? kSkipExitCode : 0;
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

bool waitForComparison(MainWindow& w, int timeoutMs) {
    return waitUntil([&] { return w.session()->comparisonToShow() != nullptr; }, timeoutMs);
}

QString artefactDir() { return QStringLiteral(TOMO_GUI_ARTEFACT_DIR); }

std::unique_ptr<MainWindow> freshWindow() {
    QSettings().clear();
    auto w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    if (!QTest::qWaitForWindowExposed(w.get())) return nullptr;
    return w;
}

QString saveScreenshot(QWidget* widget, const QString& name) {
    QTest::qWait(50); // let pending paints happen
    const QString path = QDir(artefactDir()).filePath(name % QStringLiteral(".png"));
    widget->grab().save(path);
    return path;
}

QString realData(const QString& relative) {
    return QString::fromStdString(tomo::test::realDataPath(relative.toStdString()).string());
}

double maxAbsDifference(const tomo::Image& a, const tomo::Image& b) {
    if (a.width != b.width || a.height != b.height) return INFINITY;
    double worst = 0.0;
    for (std::size_t i = 0; i < a.data.size(); ++i) worst = std::max(worst, std::abs(double(a.data[i]) - b.data[i]));
    return worst;
}

namespace {

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

} // namespace

bool registerUnavailableBackend() {
    static const bool added = [] {
        tomo::BackendRegistry::instance().add(std::make_unique<UnavailableBackend>());
        return true;
    }();
    return added;
}

void writeSmallScan(const QString& path) {
    tomo::PhantomSpec spec;
    spec.bins = 32;
    spec.rows = 2;
    tomo::ScanSimulation sim;
    sim.poissonNoise = false;
    tomo::writePhantomDXchange(path.toStdString(), spec, tomo::uniformAngles(32), sim);
}

void WindowTest::init() {
    w = freshWindow();
    QVERIFY(w);
}

void WindowTest::cleanup() { w.reset(); }

void WindowTest::openDemo(int bins, int rows) {
    DemoSpec spec;
    spec.bins = spec.projections = bins;
    spec.rows = rows;
    w->openDemo(spec);
    QVERIFY2(waitForResult(*w, [bins](const SliceResult& r) { return r.preview.gridSize == bins; }),
             "no slice from the demo phantom");
}

void WindowTest::expectOpenError(const QString& path, const QStringList& needles) {
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

void WindowTest::setParams(const std::function<void(SliceParams&)>& change) {
    SliceParams p = w->parameterPanel()->params();
    change(p);
    w->parameterPanel()->setParams(p);
}

} // namespace tomo::ui::test
