#include "work/dataset_check.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QTimer>

namespace tomo::ui {

namespace {

/// tomo-recon's error lines start so; the rest names the file and the cause.
constexpr QLatin1StringView kErrorPrefix("tomo-recon: error: ");

/// The last line tomo-recon wrote on stderr, without its prefix.
QString errorLine(QProcess& process) {
    const QStringList lines =
        QString::fromUtf8(process.readAllStandardError()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (lines.isEmpty()) return {};
    QString line = lines.last().trimmed();
    if (line.startsWith(kErrorPrefix)) line.remove(0, kErrorPrefix.size());
    return line;
}

} // namespace

DatasetCheck::DatasetCheck(QObject* parent) : QObject(parent), m_timer(new QTimer(this)) {
    const QFileInfo beside(QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("tomo-recon")));
    if (beside.isFile() && beside.isExecutable()) m_program = beside.filePath();
    m_timer->setSingleShot(true);
}

DatasetCheck::~DatasetCheck() { cancel(); }

bool DatasetCheck::applies(const QString& path, const tomo::OpenOptions& options) {
    return !options.raw && !QFileInfo(path).isDir();
}

QStringList DatasetCheck::infoArguments(const QString& path, const tomo::OpenOptions& options) {
    QStringList args{QStringLiteral("--info")};
    if (options.anglesFile) args << QStringLiteral("--angles") << QString::fromStdString(options.anglesFile->string());
    if (const auto& lines = options.anglesLines) {
        const QString end = lines->count > 0 ? QString::number(lines->first + lines->count) : QString();
        args << QStringLiteral("--angles-lines") << QString::number(lines->first) % QLatin1Char(':') % end;
    }
    args << QStringLiteral("--angle-units") << QLatin1String(tomo::angleUnitsName(options.angleUnits))
         << QStringLiteral("--angle-range") << QString::number(options.angleRangeDegrees, 'g', 17);
    if (!options.variable.empty()) args << QStringLiteral("--variable") << QString::fromStdString(options.variable);
    if (options.logCorrected) args << QStringLiteral("--log-corrected");
    args << QStringLiteral("--") << path; // a name starting with '-' stays a name
    return args;
}

void DatasetCheck::check(const QString& path, const tomo::OpenOptions& options) {
    cancel();
    if (m_program.isEmpty()) {
        emit unchecked(path, options, tr("tomo-recon was not found next to the workstation"));
        return;
    }
    auto* process = new QProcess(this);
    m_process = process;
    process->setProgram(m_program);
    process->setArguments(infoArguments(path, options));
    process->setStandardOutputFile(QProcess::nullDevice()); // the description: the open shows it
    process->setStandardInputFile(QProcess::nullDevice());

    // tomo-recon reads the metadata twice (its own probe, then the
    // description), each within the limit: twice that stops the process.
    const int limit = 2 * tomo::metadataTimeoutSeconds();
    m_timer->disconnect(this);
    connect(m_timer, &QTimer::timeout, this, [=, this] {
        cancel();
        emit failed(path, tr("%1: its metadata could not be read within %2 s: the file is damaged (the HDF5 library "
                             "loops on some damaged files), or its file system stalls (TOMO_METADATA_TIMEOUT sets "
                             "the limit)")
                              .arg(path)
                              .arg(limit));
    });
    connect(process, &QProcess::errorOccurred, this, [=, this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return; // crashes end in finished()
        const QString reason = tr("%1 could not be started: %2").arg(m_program, process->errorString());
        cancel();
        emit unchecked(path, options, reason);
    });
    connect(process, &QProcess::finished, this, [=, this](int code, QProcess::ExitStatus status) {
        const QString line = errorLine(*process);
        cancel();
        if (status == QProcess::CrashExit)
            emit failed(path, tr("%1: reading its metadata crashed the file library (in a separate tomo-recon "
                                 "process): the file is damaged")
                                  .arg(path));
        else if (code != 0)
            emit failed(path, line.isEmpty() ? tr("%1 cannot be opened (tomo-recon --info ended with exit code %2)")
                                                   .arg(path)
                                                   .arg(code)
                                             : line);
        else
            emit passed(path, options);
    });
    process->start();
    m_timer->start(limit * 1000);
}

void DatasetCheck::cancel() {
    m_timer->stop();
    QProcess* process = m_process;
    if (!process) return;
    m_process.clear();
    process->disconnect(this);
    if (process->state() == QProcess::NotRunning) {
        process->deleteLater();
        return;
    }
    // Deleted once it has ended, without waiting for it here: a process
    // stuck in a stalled file system may take its time.
    connect(process, &QProcess::finished, process, &QObject::deleteLater);
    process->kill();
}

} // namespace tomo::ui
