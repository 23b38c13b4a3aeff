// Helpers of the GUI tests: application set-up, running a suite so that
// CTest tells skips from passes, waiting for the worker's results,
// screenshots as test artefacts, the real scans, and WindowTest, the
// fixture of the suites that drive a main window (one per area of ui/:
// test_main_window, test_views, test_parameter_panel, test_quality_panel,
// test_data_panels, test_dialogs, test_work).
#pragma once

#include "main_window.h"
#include "real_data.h"

#include <QObject>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <memory>

namespace tomo::ui::test {

/// Exit status of a suite run that skipped and ran nothing else (CTest's
/// SKIP_RETURN_CODE in tests/gui/CMakeLists.txt): a QSKIP reads as skipped,
/// not as passed.
inline constexpr int kSkipExitCode = 77;

/// Sets the surface format, creates nothing else; call first in main().
/// Without a display (no DISPLAY / WAYLAND_DISPLAY) the offscreen platform
/// is used when `offscreenOk`, else the suite exits with kSkipExitCode.
void prepareEnvironment(bool offscreenOk);
/// After QApplication exists: identity, resources, and settings in a
/// temporary folder of this process (removed at exit).
void initTestApplication();

/// QTest::qExec(&test, argc, argv), logging to stdout as usual; when nothing
/// failed and every test function run was skipped (QSKIP), kSkipExitCode.
/// With the caller's own -o options, qExec's result as it is.
int runSuite(QObject& test, int argc, char** argv);

/// A main window as a test starts it: the settings cleared (each test starts
/// from the defaults, whatever ran before in this process), 1600 x 1000,
/// shown; null when it was not exposed.
std::unique_ptr<MainWindow> freshWindow();

/// Waits (processing events) until `done` is true; false on timeout.
bool waitUntil(const std::function<bool()>& done, int timeoutMs = 60000);
/// Waits for a displayed result that satisfies `accept`.
bool waitForResult(MainWindow& w, const std::function<bool(const SliceResult&)>& accept, int timeoutMs = 60000);
/// Waits until the quality panel compares with a matching reference.
bool waitForReference(MainWindow& w, int timeoutMs = 60000);
/// Until the slice on screen has its comparison with the active reference
/// (the Quality panel's metrics come with it, after the reference itself).
bool waitForComparison(MainWindow& w, int timeoutMs = 60000);

/// Saves widget->grab() as <artefacts>/<name>.png and returns the path.
QString saveScreenshot(QWidget* widget, const QString& name);
QString artefactDir();
/// shared/data/real/<relative>, whether or not it exists: tests check it
/// with TOMO_GUI_REQUIRE_FILE.
QString realData(const QString& relative);

/// The largest absolute difference of two images (infinite when their sizes differ).
double maxAbsDifference(const tomo::Image& a, const tomo::Image& b);
/// Adds to the registry, once per process, a strategy that cannot run
/// here ("test-unavailable", family cuda: "no CUDA device found"), as a
/// CUDA one on a machine without a GPU.
bool registerUnavailableBackend();
/// A small noiseless DXchange scan (32 bins, 2 rows, 32 angles) at `path`.
void writeSmallScan(const QString& path);

/// The fixture of the suites that drive a main window: a fresh window for
/// each test function (freshWindow) and the steps many tests take.
class WindowTest : public QObject {
    Q_OBJECT
protected:
    std::unique_ptr<MainWindow> w;

    /// Opens the demo phantom and waits for its first slice.
    void openDemo(int bins = 256, int rows = 16);
    /// Opens `path` and expects the error dialog, its text containing every
    /// one of `needles`; closes it. The window stays and shows no new dataset.
    void expectOpenError(const QString& path, const QStringList& needles);
    /// Changes the parameters on screen as the panel would.
    void setParams(const std::function<void(SliceParams&)>& change);

private slots:
    void init();
    void cleanup();
};

} // namespace tomo::ui::test

/// QSKIP naming the missing file when `path` (a QString) does not exist;
/// QFAIL instead in a build with TOMO_REQUIRE_REAL_DATA=ON (real_data.h).
#define TOMO_GUI_REQUIRE_FILE(path)                                                                 \
    do {                                                                                            \
        const std::string tomo_missing_ = ::tomo::test::missingRealData((path).toStdString());      \
        if (!tomo_missing_.empty()) {                                                               \
            if (::tomo::test::realDataRequired()) QFAIL(tomo_missing_.c_str());                     \
            QSKIP(tomo_missing_.c_str());                                                           \
        }                                                                                           \
    } while (0)
