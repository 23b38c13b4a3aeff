#include "work/file_places.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

namespace tomo::ui {
namespace {

constexpr int kMaxRecentFiles = 10;

} // namespace

QString lastDirectory() {
    return QSettings().value(QStringLiteral("files/lastDirectory"), QDir::homePath()).toString();
}

QString outputDirectory() {
    // Never the input's folder by default: raw data folders are often read-only or shared.
    const QString chosen = QSettings().value(QStringLiteral("files/outputDirectory")).toString();
    if (!chosen.isEmpty() && QFileInfo(chosen).isDir()) return chosen;
    // The documents folder, created on a fresh account (it does not exist
    // until someone makes it); else the home folder, else the temporary one.
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    if (!documents.isEmpty() && QDir().mkpath(documents) && QFileInfo(documents).isWritable()) return documents;
    if (QFileInfo(QDir::homePath()).isWritable()) return QDir::homePath();
    return QDir::tempPath();
}

void setOutputDirectory(const QString& pathInside) {
    const QFileInfo fi(pathInside);
    QSettings().setValue(QStringLiteral("files/outputDirectory"), fi.isDir() ? fi.absoluteFilePath() : fi.absolutePath());
}

void setLastDirectory(const QString& pathInside) {
    const QFileInfo fi(pathInside);
    QSettings().setValue(QStringLiteral("files/lastDirectory"), fi.isDir() ? fi.absoluteFilePath() : fi.absolutePath());
}

void addRecentFile(const QString& path) {
    QSettings s;
    QStringList files = s.value(QStringLiteral("files/recent")).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > kMaxRecentFiles) files.removeLast();
    s.setValue(QStringLiteral("files/recent"), files);
}

QStringList recentFiles() { return QSettings().value(QStringLiteral("files/recent")).toStringList(); }

void clearRecentFiles() { QSettings().remove(QStringLiteral("files/recent")); }

} // namespace tomo::ui
