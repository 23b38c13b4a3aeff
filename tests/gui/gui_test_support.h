// Helpers of the GUI tests: application set-up, waiting for the worker's
// results, screenshots as test artefacts.
#pragma once

#include "main_window.h"

#include <QString>
#include <QWidget>

#include <functional>

namespace tomo::ui::test {

/// Sets the surface format, creates nothing else; call first in main().
/// Without a display (no DISPLAY / WAYLAND_DISPLAY) the offscreen platform
/// is used when `offscreenOk`, else the suite exits with a skip message.
void prepareEnvironment(bool offscreenOk);
/// After QApplication exists: identity, resources, and settings in a
/// temporary folder of this process (removed at exit).
void initTestApplication();

/// Waits (processing events) until `done` is true; false on timeout.
bool waitUntil(const std::function<bool()>& done, int timeoutMs = 60000);
/// Waits for a displayed result that satisfies `accept`.
bool waitForResult(MainWindow& w, const std::function<bool(const SliceResult&)>& accept, int timeoutMs = 60000);
/// Waits until the quality panel compares with a matching reference.
bool waitForReference(MainWindow& w, int timeoutMs = 60000);

/// Saves widget->grab() as <artefacts>/<name>.png and returns the path.
QString saveScreenshot(QWidget* widget, const QString& name);
QString artefactDir();
/// shared/data/real/<relative>, empty when absent.
QString realData(const QString& relative);

} // namespace tomo::ui::test
