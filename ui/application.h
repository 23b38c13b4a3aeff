// Start-up of tomo-workstation, shared by the app's main() and the GUI tests.
#pragma once

#include <QString>

namespace tomo::ui {

/// The OpenGL format the embedded VTK view needs (3.2 core, double buffer,
/// RGBA8 + depth, no multisampling). Call before QApplication is created.
void setDefaultSurfaceFormat();

/// Application name, organisation (the QSettings location), icon, and the
/// compiled-in resources (icons, colormaps). Call after QApplication exists.
void initApplication();

/// Whether SVG icons can be shown (Qt's SVG plugin, package libqt6svg6).
bool svgIconsAvailable();

/// main(): `tomo-workstation [dataset | parameters.json]`; with no argument
/// the demo phantom opens.
int runWorkstation(int argc, char** argv);

} // namespace tomo::ui
