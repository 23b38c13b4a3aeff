// Where the workstation proposes and remembers files (QSettings "files/…"):
// the folder datasets and parameter files were last opened from, the work
// folder results are proposed in, and the recent datasets.
#pragma once

#include <QString>
#include <QStringList>

namespace tomo::ui {

/// Where datasets and parameter files were last opened from (home at first).
QString lastDirectory();
void setLastDirectory(const QString& pathInside);
/// The work folder results are proposed in: the last folder a result was
/// saved to (or File ▸ Work Folder), else the documents folder (created on
/// a fresh account); never the input's folder by default.
QString outputDirectory();
void setOutputDirectory(const QString& pathInside);
/// The datasets opened last, newest first (at most ten), absolute paths.
QStringList recentFiles();
void addRecentFile(const QString& path);
void clearRecentFiles();

} // namespace tomo::ui
