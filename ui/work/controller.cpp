// The controller (controller.h): its threads, errors at the thread
// boundary, and opening datasets (a file, the demo phantom, a live scan's
// snapshot) on the preview thread. The rest by what it runs:
// controller_slices.cpp, controller_jobs.cpp, controller_iterative.cpp.
#include "work/controller_private.h"

#include "work/thread_priority.h"

#include "tomo/cone_scan.h"
#include "tomo/error.h"
#include "tomo/phantom.h"
#include "tomo/pixel_size.h"
#include "tomo/worker_pool.h"

#include <QFileInfo>

#include <new>
#include <string_view>
#include <utility>

namespace tomo::ui {

namespace {

/// What the Dataset panel lists of a fan/cone-beam geometry (tomo::coneSetup's
/// attributes, in the length unit of the file).
DatasetSummary::DivergentBeam divergentBeamSummary(const tomo::DatasetInfo& info) {
    const tomo::ConeSetup setup = tomo::coneSetup(info);
    DatasetSummary::DivergentBeam out;
    out.description = QString::fromStdString(setup.description);
    const auto attribute = [&](const char* key) {
        const auto it = setup.attributes.find(key);
        return it == setup.attributes.end() ? QString() : QString::fromStdString(it->second);
    };
    const QString unit = attribute("length_unit");
    const QString withUnit = unit.isEmpty() ? QString() : QStringLiteral(" ") % unit;
    const std::pair<const char*, QString> labels[] = {
        {"beam", QObject::tr("Beam")},
        {"detector", QObject::tr("Detector")},
        {"source_axis_distance", QObject::tr("Source–axis distance")},
        {"source_detector_distance", QObject::tr("Source–detector distance")},
        {"detector_pixel_size", QObject::tr("Detector pixel")},
        {"detector_offset", QObject::tr("Central ray offset (px)")},
        {"projection_matrices", QObject::tr("Projection matrices")},
        {"cone_geometry_source", QObject::tr("Geometry from")}};
    for (const auto& [key, label] : labels) {
        QString value = attribute(key);
        if (value.isEmpty()) continue;
        if (std::string_view(key).ends_with("distance") || std::string_view(key) == "detector_pixel_size")
            value += withUnit;
        out.fields.emplace_back(label, value);
    }
    const tomo::VolumeGrid& g = setup.grid;
    out.fields.emplace_back(QObject::tr("Volume grid"), QStringLiteral("%1 × %2 × %3 voxels of %4%5")
                                                            .arg(g.nx)
                                                            .arg(g.ny)
                                                            .arg(g.nz)
                                                            .arg(g.voxelSize, 0, 'g', 6)
                                                            .arg(withUnit));
    out.fields.emplace_back(QObject::tr("Reconstruction"),
                            setup.geometry.rows == 1
                                ? QObject::tr("FDK (filtered back-projection of the divergent views); SIRT, CGLS, "
                                              "TV on the fan-beam pair (Method panel)")
                                : QObject::tr("FDK (filtered back-projection of the divergent views)"));
    return out;
}

} // namespace

Controller::Controller(QObject* parent) : QObject(parent), m_pending(std::make_unique<Pending>()) {
    static const bool registered = [] {
        qRegisterMetaType<tomo::ui::DatasetSummary>();
        qRegisterMetaType<tomo::ui::SliceResultPtr>();
        qRegisterMetaType<tomo::ui::ReferencePtr>();
        qRegisterMetaType<tomo::ui::Comparison>();
        qRegisterMetaType<tomo::ui::ModeComparison>();
        qRegisterMetaType<tomo::ui::AxisResult>();
        qRegisterMetaType<tomo::ui::ExportReport>();
        qRegisterMetaType<tomo::ui::SubVolume>();
        qRegisterMetaType<tomo::ui::JobProgress>();
        qRegisterMetaType<tomo::ui::JobKind>();
        qRegisterMetaType<tomo::ui::IterationUpdate>();
        qRegisterMetaType<tomo::ui::ReprojectionResult>();
        qRegisterMetaType<tomo::ui::JobStatus>();
        qRegisterMetaType<tomo::ui::DataView>();
        qRegisterMetaType<tomo::ui::AxisSweep>();
        qRegisterMetaType<tomo::RangeEstimate>();
        return true;
    }();
    (void)registered;
    m_previewThread.setObjectName(QStringLiteral("tomo-preview"));
    m_jobThread.setObjectName(QStringLiteral("tomo-jobs"));
    m_previewContext = new QObject;
    m_jobContext = new QObject;
    m_previewContext->moveToThread(&m_previewThread);
    m_jobContext->moveToThread(&m_jobThread);
    connect(&m_previewThread, &QThread::finished, m_previewContext, &QObject::deleteLater);
    connect(&m_jobThread, &QThread::finished, m_jobContext, &QObject::deleteLater);
    m_reprojections.setMaxThreadCount(1); // one projection at a time: each may take seconds on a CPU
    m_previewThread.start();
    m_jobThread.start();
    QMetaObject::invokeMethod(m_previewContext, [] { lowerThreadPriority(kWorkerNice); }, Qt::QueuedConnection);
    QMetaObject::invokeMethod(m_jobContext, [] { lowerThreadPriority(kWorkerNice); }, Qt::QueuedConnection);
}

Controller::~Controller() { shutdown(); }

void Controller::shutdown() {
    {
        std::lock_guard post(m_postMutex); // no postPreview() is half done when the threads stop
        if (m_shutDown.exchange(true)) return; // the window's destructor did it already
    }
    {
        std::lock_guard lock(m_mutex);
        m_pending = std::make_unique<Pending>();
        if (m_running) m_running->cancel();
        if (m_jobToken) m_jobToken->cancel();
    }
    for (QThreadPool* pool : {&m_axisSearches, &m_reprojections}) pool->clear();
    // The threads first: a task of the preview thread may still start a pool
    // job (runReprojection, searchAxis); once it has stopped, none can.
    m_previewThread.quit();
    m_jobThread.quit();
    m_previewThread.wait();
    m_jobThread.wait();
    for (QThreadPool* pool : {&m_axisSearches, &m_reprojections}) {
        pool->clear();
        pool->waitForDone(); // their jobs use this object (preparePool(), toUi)
    }
}

void Controller::postPreview(std::function<void()> task) {
    std::lock_guard post(m_postMutex);
    if (m_shutDown.load()) return; // the thread (and its context) may be gone
    QMetaObject::invokeMethod(m_previewContext, std::move(task), Qt::QueuedConnection);
}

void Controller::reportError(const QString& what, const std::exception& e) {
    QString title = what;
    if (dynamic_cast<const tomo::OutOfMemory*>(&e) || dynamic_cast<const std::bad_alloc*>(&e))
        title = tr("Not enough memory");
    else if (dynamic_cast<const tomo::DeviceError*>(&e))
        title = tr("Device error");
    else if (dynamic_cast<const tomo::IoError*>(&e) || dynamic_cast<const tomo::FormatError*>(&e))
        title = tr("Cannot read or write the file");
    QString message = what % QStringLiteral(": ") % QString::fromUtf8(e.what());
    if (dynamic_cast<const std::bad_alloc*>(&e)) message = what % QStringLiteral(": ") % tr("out of host memory");
    toUi("error", [this, title, message] { emit failed(title, message); });
}

// ---------------------------------------------------------------- datasets

void Controller::installDataset(std::shared_ptr<tomo::DatasetReader> reader, std::shared_ptr<const Source> source,
                                DatasetSummary summary, bool findAxis) {
    // Preview thread: replace the sessions, then tell the UI.
    auto session = std::make_unique<tomo::PreviewSession>(reader);
    if (summary.info.divergentBeam) {
        summary.divergent = divergentBeamSummary(summary.info);
        summary.divergent->axis = session->defaultAxis().value_or((summary.info.columns - 1) / 2.0);
        findAxis = false; // the finder assumes a parallel beam
    }
    // The finder runs after the first slice (runSlice), on the middle row
    // that slice reads: a large scan shows its slice at once.
    m_axisSearchRow.reset();
    if (findAxis) m_axisSearchRow = summary.info.rows / 2;
    summary.axisSearchPending = findAxis;
    m_session = std::move(session);
    m_goodCorrections = tomo::CorrectionOptions{};
    m_reader = std::move(reader);
    m_referenceSession.reset();
    m_lastSlice.reset();
    m_computedReference.reset();
    m_demo = source->demo;
    summary.generation = ++m_workerGeneration;
    {
        std::lock_guard lock(m_mutex);
        m_source = std::move(source);
    }
    toUi("dataset-opened", [this, summary] {
        m_generation = summary.generation;
        emit datasetOpened(summary);
    });
}

void Controller::openFile(const QString& path, const tomo::OpenOptions& given, bool findAxis) {
    tomo::OpenOptions options = given;
    options.allowDivergentBeam = true; // fan/cone beams are shown with FDK
    postPreview([this, path, options, findAxis] {
        QElapsedTimer timer;
        timer.start();
        try {
            std::shared_ptr<tomo::DatasetReader> reader = tomo::openDataset(path.toStdString(), options);
            auto source = std::make_shared<Source>();
            source->path = path;
            source->options = options;
            DatasetSummary summary;
            summary.info = reader->info();
            summary.title = QFileInfo(path).fileName();
            summary.path = path;
            // As opened: with the angles file and entries the reader used (a
            // TIFF folder's angles.txt, the projections' entries it found).
            summary.options = options;
            if (!summary.info.anglesFile.empty()) summary.options.anglesFile = summary.info.anglesFile;
            if (summary.info.anglesLines) summary.options.anglesLines = summary.info.anglesLines;
            summary.statedPixelSizeUm = tomo::statedPixelSize(path.toStdString()) * 1e6;
            summary.secondsToOpen = timer.nsecsElapsed() / 1e9;
            installDataset(std::move(reader), std::move(source), std::move(summary), findAxis);
        } catch (const std::exception& e) {
            reportError(tr("Cannot open %1").arg(QFileInfo(path).fileName()), e);
            toUi("open-failed", [this, path] { emit openFailed(path); });
        }
    });
}

void Controller::openDemo(const DemoSpec& spec) {
    postPreview([this, spec] {
        QElapsedTimer timer;
        timer.start();
        try {
            const auto angles = tomo::uniformAngles(spec.projections);
            tomo::ImageStack sinograms = tomo::projectPhantom(spec.phantom(), angles);
            std::shared_ptr<tomo::DatasetReader> reader =
                tomo::makeMemoryDataset(std::move(sinograms), angles, "demo-phantom");
            auto source = std::make_shared<Source>();
            source->shared = reader;
            source->demo = spec;
            DatasetSummary summary;
            summary.info = reader->info();
            summary.title = tr("Demo phantom");
            summary.demo = spec;
            summary.secondsToOpen = timer.nsecsElapsed() / 1e9;
            installDataset(std::move(reader), std::move(source), std::move(summary));
        } catch (const std::exception& e) {
            reportError(tr("Cannot create the demo phantom"), e);
            toUi("open-failed", [this] { emit openFailed(QString()); });
        }
    });
}

void Controller::showLiveSnapshot(std::shared_ptr<tomo::DatasetReader> snapshot, const QString& title, bool sameScan) {
    postPreview([this, snapshot, title, sameScan] {
        try {
            auto source = std::make_shared<Source>();
            source->shared = snapshot;
            const tomo::DatasetInfo& info = snapshot->info();
            const bool replace = sameScan && m_session && m_reader && m_reader->info().rows == info.rows &&
                                 m_reader->info().columns == info.columns;
            if (replace) {
                // The scan grew: the session adds the new frames to the slice it keeps,
                // the window's parameters kept.
                m_session->grow(snapshot);
                m_reader = snapshot;
                m_referenceSession.reset();
                m_lastSlice.reset();
                m_computedReference.reset();
                std::lock_guard lock(m_mutex);
                m_source = std::move(source);
            } else {
                DatasetSummary summary;
                summary.info = info;
                summary.title = title;
                installDataset(snapshot, std::move(source), std::move(summary));
            }
            const int projections = info.projections;
            toUi("live-snapshot", [this, projections] { emit liveSnapshotShown(projections); });
        } catch (const std::exception& e) {
            reportError(tr("Cannot show the live scan %1").arg(title), e);
        }
    });
}

std::shared_ptr<tomo::DatasetReader> Controller::openJobReader() const {
    std::shared_ptr<const Source> source;
    {
        std::lock_guard lock(m_mutex);
        source = m_source;
    }
    if (!source) throw tomo::InvalidArgument("no dataset is open");
    if (source->shared) return source->shared;
    return tomo::openDataset(source->path.toStdString(), source->options);
}

} // namespace tomo::ui
