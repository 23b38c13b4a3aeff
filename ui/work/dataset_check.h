// The workstation's guard against damaged dataset files: libhdf5 1.10
// crashes or loops for ever on some (tests/fuzz/upstream has examples).
// tomo-recon and tomows read an input's metadata in a child process they
// fork first (probeDatasetInChildProcess); the workstation's threads (Qt,
// OpenGL, the preview's) may hold locks a forked child would wait on for
// ever, so it runs `tomo-recon --info FILE` (with the same open options) as
// a process and opens the file only when that succeeded:
//
//   check(path, options) ──► tomo-recon --info ──exit 0──────────► passed(path, options)
//                                               ├─error exit──────► failed(path, its one line)
//                                               ├─crash, timeout──► failed(path, "… damaged …")
//                                               └─cannot start────► unchecked(path, options, why)
//   (no tomo-recon next to the workstation's executable: unchecked at once)
//
// Asynchronous (QProcess): the UI thread never waits. One check at a time:
// a new one stops the one running (the latest open wins).
#pragma once

#include "tomo/dataset.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

QT_BEGIN_NAMESPACE
class QProcess;
class QTimer;
QT_END_NAMESPACE

namespace tomo::ui {

class DatasetCheck : public QObject {
    Q_OBJECT
public:
    explicit DatasetCheck(QObject* parent = nullptr);
    ~DatasetCheck() override;

    /// Whether `path` opened with `options` is checked: a file, not a
    /// folder (TIFF folders are read by libtiff, image by image) and not
    /// raw (no metadata to read).
    static bool applies(const QString& path, const tomo::OpenOptions& options);
    /// The tomo-recon the checks run: the one next to this program's
    /// executable, or empty when there is none.
    QString program() const { return m_program; }
    /// Another tomo-recon (tests); empty: no checks, every file unchecked.
    void setProgram(const QString& program) { m_program = program; }

    /// Checks `path`; passed, failed or unchecked follows (unchecked at once
    /// when there is no program), unless another check replaces this one.
    void check(const QString& path, const tomo::OpenOptions& options);
    /// Stops the running check, if any; its result is never reported.
    void cancel();

    /// The arguments of `tomo-recon --info` that read `path` as `options` say.
    static QStringList infoArguments(const QString& path, const tomo::OpenOptions& options);

signals:
    void passed(const QString& path, const tomo::OpenOptions& options);
    /// `message` names the file and says why it cannot be opened.
    void failed(const QString& path, const QString& message);
    /// The check could not run (`reason` says why): open without it.
    void unchecked(const QString& path, const tomo::OpenOptions& options, const QString& reason);

private:
    QString m_program;
    QPointer<QProcess> m_process; // the running check
    QTimer* m_timer = nullptr;    // its time limit
};

} // namespace tomo::ui
