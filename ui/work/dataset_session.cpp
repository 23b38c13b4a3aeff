#include "work/dataset_session.h"

#include "work/controller.h"
#include "work/dataset_check.h"
#include "work/file_places.h"
#include "work/latency_probe.h"
#include "work/live_mode.h"

#include <QFileInfo>
#include <QSettings>
#include <QStringBuilder>
#include <QTimer>

namespace tomo::ui {
namespace {

QString axisKey(const QString& path) { return datasetSettingsKey(QStringLiteral("axes"), path); }

} // namespace

DatasetSession::DatasetSession(Controller* controller, QObject* parent)
    : QObject(parent), m_controller(controller), m_check(new DatasetCheck(this)), m_rememberAxis(new QTimer(this)) {
    m_rememberAxis->setSingleShot(true);
    m_rememberAxis->setInterval(1500);
    connect(m_rememberAxis, &QTimer::timeout, this, &DatasetSession::rememberAxis);
    connect(m_controller, &Controller::datasetOpened, this, &DatasetSession::onDatasetOpened);
    connect(m_controller, &Controller::openFailed, this, &DatasetSession::openFailed);
    connect(m_controller, &Controller::liveSnapshotShown, this, [this](int projections) {
        if (m_dataset) m_dataset->info.projections = projections; // the scan grew; the rest is the same
    });
    connect(m_check, &DatasetCheck::passed, this,
            [this](const QString& path, const tomo::OpenOptions& options) { openChecked(path, options); });
    connect(m_check, &DatasetCheck::unchecked, this, &DatasetSession::openChecked);
    connect(m_check, &DatasetCheck::failed, this, [this](const QString& path, const QString& message) {
        emit failed(tr("Cannot open %1").arg(QFileInfo(path).fileName()), message);
        emit openFailed(path);
    });
}

void DatasetSession::open(const QString& path, const tomo::OpenOptions& options) {
    rememberAxis();
    setLastDirectory(path);
    if (m_live && LiveMode::isGrowingFile(path)) { // still being written: followed in Live mode
        m_live->followFile(path);
        return;
    }
    // A damaged file may crash or hang the file library: it is read in a
    // separate process first, and opened here only when that went well.
    if (DatasetCheck::applies(path, options)) {
        emit status(tr("Checking %1…").arg(QFileInfo(path).fileName()), 0);
        m_check->check(path, options);
    } else {
        m_check->cancel(); // the latest open wins
        openChecked(path, options);
    }
}

void DatasetSession::openChecked(const QString& path, const tomo::OpenOptions& options, const QString& note) {
    // Without an axis remembered for this dataset (or one from a parameter
    // file about to be applied: a file without `axis` asks for the finder)
    // the finder runs after the first slice.
    const bool findAxis =
        !QSettings().contains(axisKey(path)) && (m_pendingParameters.isEmpty() || !m_pendingParametersSetAxis);
    const QString name = QFileInfo(path).fileName();
    m_openNote = note.isEmpty() ? QString() : QStringLiteral(" — ") % tr("without the damaged-file guard: %1").arg(note);
    emit status((findAxis ? tr("Opening %1 and finding its rotation axis…").arg(name) : tr("Opening %1…").arg(name)) %
                    m_openNote,
                0);
    m_controller->openFile(path, options, findAxis);
}

void DatasetSession::openDemo(const DemoSpec& spec) {
    m_check->cancel(); // the latest open wins
    m_openNote.clear();
    emit status(tr("Projecting the demo phantom…"), 0);
    m_controller->openDemo(spec);
}

bool DatasetSession::openFor(const tomo::RunConfig& config, const QString& parameterFile) {
    const QString input = QString::fromStdString(config.input.string());
    const bool onScreen = m_dataset && ((input.isEmpty() && m_dataset->demo) ||
                                        (!input.isEmpty() && QFileInfo(input) == QFileInfo(m_dataset->path) &&
                                         sameOpenOptions(config.open, m_dataset->options)));
    m_pendingParametersSetAxis = config.axis.has_value();
    if (!input.isEmpty() && !onScreen) {
        m_pendingParameters = parameterFile; // applied when the dataset is open
        open(input, config.open);
        return true;
    }
    if (!m_dataset) {
        m_pendingParameters = parameterFile;
        openDemo();
        return true;
    }
    return false;
}

std::optional<DatasetSession::PendingParameters> DatasetSession::takePendingParameters() {
    const QString pending = std::exchange(m_pendingParameters, QString());
    if (pending.isEmpty() || !m_dataset) return std::nullopt;
    try {
        tomo::RunConfig config = tomo::loadRunConfig(pending.toStdString());
        const QString input = QString::fromStdString(config.input.string());
        if (input.isEmpty() ? m_dataset->demo.has_value() : QFileInfo(input) == QFileInfo(m_dataset->path))
            return PendingParameters{std::move(config), pending};
    } catch (const std::exception& e) {
        emit failed(tr("Cannot load parameters"), QString::fromUtf8(e.what()));
    }
    return std::nullopt;
}

void DatasetSession::onDatasetOpened(const DatasetSummary& summary) {
    rememberAxis(); // the previous dataset's
    m_dataset = summary;
    m_pixel = pixelSizeOf(summary); // never the previous dataset's
    if (!summary.path.isEmpty()) {
        addRecentFile(summary.path);
        emit recentFilesChanged();
    }
    emit opened(summary);
}

std::pair<QString, int> DatasetSession::openedStatus() const {
    if (!m_dataset) return {};
    const DatasetSummary& summary = *m_dataset;
    // What the reader warns about (e.g. counts without flats) is said at once; the Dataset panel lists it.
    const auto& warnings = summary.info.warnings;
    const QString warningNote =
        warnings.empty() ? QString()
                         : QStringLiteral(" — ") % tr("warning: %1").arg(readableWarning(summary.info, warnings.front()));
    const QString pixelNote = m_pixel.source == DatasetPixelSize::Source::Unknown
                                  ? tr("; its pixel size is not stated: enter it in the Dataset panel")
                                  : m_pixel.known() ? tr("; pixel %1").arg(m_pixel.text()) : QString();
    const QString axisNote = summary.axisSearchPending ? tr("; finding its rotation axis…") : QString();
    return {tr("Opened %1: %2 projections × %3 rows × %4 columns%5%6%7%8")
                .arg(summary.title)
                .arg(summary.info.projections)
                .arg(summary.info.rows)
                .arg(summary.info.columns)
                .arg(pixelNote)
                .arg(axisNote)
                .arg(warningNote)
                .arg(m_openNote),
            warnings.empty() && m_openNote.isEmpty() ? 12000 : 30000};
}

std::optional<double> DatasetSession::rememberedAxis(const QString& path) const {
    if (path.isEmpty()) return std::nullopt;
    const QVariant axis = QSettings().value(axisKey(path));
    if (!axis.isValid()) return std::nullopt;
    return axis.toDouble();
}

void DatasetSession::noteAxis(double axis) {
    if (!m_dataset || m_dataset->path.isEmpty()) return;
    m_axisToRemember = std::make_pair(m_dataset->path, axis);
    m_rememberAxis->start();
}

void DatasetSession::rememberAxis() {
    noteUiActivity("remember-axis");
    m_rememberAxis->stop();
    if (auto pending = std::exchange(m_axisToRemember, std::nullopt))
        QSettings().setValue(axisKey(pending->first), pending->second);
}

void DatasetSession::setPixelSize(double micrometres) {
    m_pixel = micrometres > 0.0 ? DatasetPixelSize{micrometres, DatasetPixelSize::Source::Entered}
                                : DatasetPixelSize{0.0, DatasetPixelSize::Source::Declined};
    if (m_dataset) rememberPixelSize(m_dataset->path, m_pixel.micrometres);
    emit pixelSizeChanged();
    emit status(m_pixel.known() ? tr("Pixel size %1 for %2").arg(m_pixel.sizeText(), m_dataset ? m_dataset->title : QString())
                                : tr("Pixel size not known: values per pixel, lengths in pixels"),
                6000);
}

} // namespace tomo::ui
