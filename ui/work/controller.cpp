#include "work/controller.h"

#include "views/colormap.h"
#include "work/binned_reader.h"
#include "work/latency_probe.h"
#include "work/slice_display.h"
#include "work/thread_priority.h"

#include "tomo/axis_finder.h"
#include "tomo/axis_sweep.h"
#include "tomo/cone_scan.h"
#include "tomo/cone_volume.h"
#include "tomo/error.h"
#include "tomo/gpu_list.h"
#include "tomo/output_range.h"
#include "tomo/phantom.h"
#include "tomo/pixel_size.h"
#include "tomo/pipeline.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"
#include "tomo/volume_io.h"
#include "tomo/worker_pool.h"

#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <utility>


namespace tomo::ui {

namespace {

/// A live run older than this is cancelled when a newer request arrives.
constexpr qint64 kCancelRunningAfterMs = 250;

QString familyOf(const std::string& strategy) {
    const tomo::Backend* b = tomo::BackendRegistry::instance().find(strategy);
    return b ? QString::fromStdString(b->family()) : QString();
}

bool isExactMode(const tomo::ReconOptions& o) {
    const tomo::Backend* b = tomo::BackendRegistry::instance().find(o.strategy);
    return b && b->isExact() && o.interpolation == tomo::Interpolation::Linear &&
           o.precision == tomo::Precision::Float32;
}

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
    out.fields.emplace_back(QObject::tr("Reconstruction"), QObject::tr("FDK (filtered back-projection of the "
                                                                       "divergent views)"));
    return out;
}

/// Collects the slices of a volume in memory (the 3D view's sub-volume).
class MemoryVolumeWriter final : public tomo::VolumeWriter {
public:
    MemoryVolumeWriter(int width, int height, int slices) : m_stack(width, height, slices) {}
    void writeSlices(int first, int count, std::span<const float> data) override {
        if (first < 0 || count < 0 || first + count > m_stack.depth ||
            data.size() != m_stack.imageSize() * static_cast<std::size_t>(count))
            throw tomo::InvalidArgument("memory volume: slices " + std::to_string(first) + "+" +
                                        std::to_string(count) + " do not fit");
        std::memcpy(m_stack.image(first).data(), data.data(), data.size_bytes());
    }
    void commit() override {}
    tomo::ImageStack take() { return std::move(m_stack); }

private:
    tomo::ImageStack m_stack;
};

/// Block-average `stack` by `b` in x and y.
tomo::ImageStack binXY(const tomo::ImageStack& stack, int b) {
    if (b <= 1) return stack;
    tomo::ImageStack out(std::max(1, stack.width / b), std::max(1, stack.height / b), stack.depth);
    const float norm = 1.0f / static_cast<float>(b * b);
    for (int z = 0; z < stack.depth; ++z) {
        auto src = stack.image(z);
        auto dst = out.image(z);
        for (int y = 0; y < out.height; ++y)
            for (int x = 0; x < out.width; ++x) {
                float sum = 0.0f;
                for (int j = 0; j < b; ++j)
                    for (int i = 0; i < b; ++i)
                        sum += src[static_cast<std::size_t>(y * b + j) * stack.width + x * b + i];
                dst[static_cast<std::size_t>(y) * out.width + x] = sum * norm;
            }
    }
    return out;
}

/// Consecutive projections the 3D view may average for a grid `width`
/// voxels wide: as many as leave at least 90 % of the angles the grid needs
/// (pi/2 per voxel across and per 180 degrees covered, the outer voxels'
/// angular Nyquist rate); 1 when the angles are not in order (neighbours
/// in the file would not be neighbours in angle).
int projectionRun(const std::vector<double>& angles, int width) {
    if (angles.size() < 2) return 1;
    const double step = angles[1] - angles[0];
    for (std::size_t i = 1; i < angles.size(); ++i)
        if (!((angles[i] - angles[i - 1]) * step > 0.0)) return 1;
    const double span = std::abs(angles.back() - angles.front()) * static_cast<double>(angles.size()) /
                        static_cast<double>(angles.size() - 1);
    const double needed = span / 2.0 * width; // (span / pi) * (pi / 2) * width
    return std::max(1, static_cast<int>(std::floor(static_cast<double>(angles.size()) / (0.9 * needed))));
}

tomo::Image crop(const tomo::Image& full, const tomo::Region& r) {
    tomo::Image out(r.width, r.height);
    for (int y = 0; y < r.height; ++y)
        std::memcpy(&out.data[static_cast<std::size_t>(y) * r.width],
                    &full.data[static_cast<std::size_t>(r.y + y) * full.width + r.x],
                    static_cast<std::size_t>(r.width) * sizeof(float));
    return out;
}

/// Chunks small enough for a progress bar that moves (about 25 steps),
/// whole multiples of the slices per pass.
int chunkRowsFor(int rows, int slicesPerPass) {
    const int spp = std::max(1, slicesPerPass);
    int chunk = std::clamp(rows / 25, 1, 64);
    return std::max(spp, chunk / spp * spp);
}

/// The volume job of `p` over rows [first, first + count) (count 0 = to the
/// last row): the corrections, the corrected sinograms' geometry (360°
/// stitching widens it, its axis is their centre), the axis line when tilted.
tomo::VolumeJob volumeJob(tomo::DatasetReader& reader, const SliceParams& p, int first, int count) {
    const tomo::DatasetInfo& info = reader.info();
    if (count <= 0) count = info.rows - first;
    if (first < 0 || first >= info.rows || count < 1 || first + count > info.rows)
        throw tomo::InvalidArgument("rows " + std::to_string(first) + " to " + std::to_string(first + count - 1) +
                                    " are outside the dataset (0 to " + std::to_string(info.rows - 1) + ")");
    // What the corrections make of the data (a 360° axis found once, here).
    const tomo::PreprocessingStage stage(reader, p.corrections);
    tomo::VolumeJob job;
    job.firstRow = first;
    job.rowCount = count;
    job.corrections = stage.options();
    tomo::Geometry g;
    g.angles = stage.outputAngles();
    g.bins = stage.outputColumns();
    g.axis = stage.outputAxis().value_or(p.axis);
    g.axisOffsets = p.axisOffsets;
    job.geometry = tomo::ReconGeometry::fullSlice(std::move(g));
    job.geometry.region = p.effectiveRegion(job.geometry.geometry.bins);
    if (!p.stitched() && p.axisTilt != 0.0) job.axisLine = p.axisLine();
    job.options = p.options;
    // The GPUs chosen in Reconstruct to File: tomo-recon --gpus's conveyor, one lane each.
    if (!p.gpus.empty()) job.devices = tomo::parseGpus(p.gpus, tomo::gpuDevices(), "GPUs");
    job.chunkRows = chunkRowsFor(count, p.options.slicesPerPass);
    return job;
}

/// Slices [first, first + count) of a fan/cone-beam volume (count 0 = to
/// the last) with the live slice's parameters.
struct ConeSlices {
    tomo::PreviewRequest first; ///< its row: the first slice
    int count = 0;
    tomo::Region region;
};

ConeSlices coneSlices(tomo::DatasetReader& reader, const SliceParams& p, int first, int count) {
    const tomo::DatasetInfo& info = reader.info();
    if (count <= 0) count = info.rows - first;
    if (first < 0 || first >= info.rows || count < 1 || first + count > info.rows)
        throw tomo::InvalidArgument("slices " + std::to_string(first) + " to " + std::to_string(first + count - 1) +
                                    " are outside the volume (0 to " + std::to_string(info.rows - 1) + ")");
    ConeSlices out;
    out.first = p.request();
    out.first.row = first;
    out.count = count;
    out.region = p.effectiveRegion(info.columns);
    return out;
}

} // namespace

struct Controller::Source {
    QString path;
    tomo::OpenOptions options;
    std::shared_ptr<tomo::DatasetReader> shared; // thread-safe (memory) reader, else null
    std::optional<DemoSpec> demo;
};

struct Controller::Pending {
    struct Reference {
        ReferenceKind kind;
        SliceParams params;
        tomo::ReconOptions options;
    };
    std::optional<std::pair<quint64, SliceParams>> slice;
    int sliceGeneration = 0;
    QElapsedTimer sliceRequested; // when `slice` was asked for
    bool comparison = false;
    std::optional<Reference> reference;
    int referenceGeneration = 0;
};

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
    m_previewThread.start();
    m_jobThread.start();
    QMetaObject::invokeMethod(m_previewContext, [] { lowerThreadPriority(kWorkerNice); }, Qt::QueuedConnection);
    QMetaObject::invokeMethod(m_jobContext, [] { lowerThreadPriority(kWorkerNice); }, Qt::QueuedConnection);
}

template <typename Task>
void Controller::toUi(const char* what, Task&& task) {
    QMetaObject::invokeMethod(
        this,
        [what, task = std::forward<Task>(task)]() mutable {
            noteUiActivity(what);
            task();
        },
        Qt::QueuedConnection);
}

Controller::~Controller() {
    {
        std::lock_guard lock(m_mutex);
        m_pending = std::make_unique<Pending>();
        if (m_running) m_running->cancel();
        if (m_jobToken) m_jobToken->cancel();
    }
    m_axisSearches.clear();
    m_axisSearches.waitForDone(); // a search posts to this object
    m_previewThread.quit();
    m_jobThread.quit();
    m_previewThread.wait();
    m_jobThread.wait();
}

void Controller::postPreview(std::function<void()> task) {
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

// ------------------------------------------------------------- live slices

quint64 Controller::requestSlice(const SliceParams& params) {
    quint64 id = 0;
    {
        std::lock_guard lock(m_mutex);
        id = ++m_sequence;
        m_pending->slice = std::make_pair(id, params);
        m_pending->sliceGeneration = m_generation;
        m_pending->sliceRequested.start();
        // A reference yields to any slice (it is queued again); a slice
        // yields to a newer one only when it has run a while.
        if (m_running && (m_runningReference || (m_runningSince.isValid() &&
                                                 m_runningSince.elapsed() > kCancelRunningAfterMs)))
            m_running->cancel();
    }
    scheduleDrain();
    return id;
}

void Controller::requestReference(ReferenceKind kind, const SliceParams& params,
                                  const tomo::ReconOptions& referenceOptions) {
    if (kind == ReferenceKind::Pinned) return;
    {
        std::lock_guard lock(m_mutex);
        m_pending->reference = Pending::Reference{kind, params, referenceOptions};
        m_pending->referenceGeneration = m_generation;
    }
    scheduleDrain();
}

void Controller::setDisplaySettings(const DisplaySettings& settings) {
    std::lock_guard lock(m_mutex);
    m_display = settings;
}

DisplaySettings Controller::displaySettings() const {
    std::lock_guard lock(m_mutex);
    return m_display;
}

void Controller::setPinned(ReferencePtr pinned) {
    std::lock_guard lock(m_mutex);
    m_pinned = std::move(pinned);
}

void Controller::requestComparison() {
    {
        std::lock_guard lock(m_mutex);
        m_pending->comparison = true;
        if (m_running && m_runningReference) m_running->cancel(); // queued again after the comparison
    }
    scheduleDrain();
}

void Controller::cancelSlice() {
    {
        std::lock_guard lock(m_mutex);
        ++m_cancelEpoch;
        m_pending->slice.reset();
        m_pending->reference.reset();
        if (m_running) m_running->cancel();
    }
    publishBusy();
}

bool Controller::sliceBusy() const {
    std::lock_guard lock(m_mutex);
    return sliceBusyLocked();
}

bool Controller::referenceBusy() const {
    std::lock_guard lock(m_mutex);
    return referenceBusyLocked();
}

bool Controller::sliceBusyLocked() const { return m_pending->slice.has_value() || (m_running && !m_runningReference); }

bool Controller::referenceBusyLocked() const {
    return m_pending->reference.has_value() || (m_running && m_runningReference);
}

void Controller::publishBusy() {
    std::lock_guard lock(m_mutex);
    publishBusyLocked();
}

void Controller::publishBusyLocked() {
    const bool slice = sliceBusyLocked(), reference = referenceBusyLocked();
    toUi("busy-state", [this, slice, reference] {
        if (slice != m_shownSliceBusy) emit busyChanged(m_shownSliceBusy = slice);
        if (reference != m_shownReferenceBusy) emit referenceBusyChanged(m_shownReferenceBusy = reference);
    });
}

void Controller::scheduleDrain() {
    bool startNow = false;
    {
        std::lock_guard lock(m_mutex);
        if (!m_drainScheduled) {
            m_drainScheduled = true;
            startNow = true;
        }
    }
    publishBusy();
    if (startNow) postPreview([this] { drain(); });
}

void Controller::drain() {
    for (;;) {
        std::optional<std::pair<quint64, SliceParams>> slice;
        double waited = 0.0;
        std::optional<Pending::Reference> reference;
        bool comparison = false;
        int generation = 0;
        quint64 epoch = 0;
        std::shared_ptr<tomo::CancelToken> token;
        DisplaySettings settings;
        {
            std::lock_guard lock(m_mutex);
            // Priority: the live slice, then comparisons, then references.
            if (m_pending->slice) {
                slice.swap(m_pending->slice);
                generation = m_pending->sliceGeneration;
                waited = m_pending->sliceRequested.nsecsElapsed() / 1e9;
            } else if (m_pending->comparison) {
                comparison = std::exchange(m_pending->comparison, false);
            } else if (m_pending->reference) {
                reference.swap(m_pending->reference);
                generation = m_pending->referenceGeneration;
            } else {
                m_drainScheduled = false;
                m_running.reset();
                publishBusyLocked();
                return;
            }
            token = std::make_shared<tomo::CancelToken>();
            m_running = token;
            m_runningReference = reference.has_value();
            m_runningSince.start();
            epoch = m_cancelEpoch;
            settings = m_display;
        }
        publishBusy();
        if (comparison) {
            // Dropped when a slice waits: that slice brings its own comparison.
            if (m_lastSlice)
                if (auto c = compareLastSlice(*m_lastSlice, settings, [this] { return sliceWaiting(); }))
                    toUi("comparison", [this, c = std::move(*c)] { emit comparisonReady(c); });
        } else if (generation == m_workerGeneration && m_session) { // else made for another dataset
            if (slice) {
                runSlice(slice->first, slice->second, generation, *token, waited);
            } else {
                try {
                    runReference(reference->kind, reference->params, reference->options, generation, *token);
                } catch (const tomo::Cancelled&) {
                    // Pre-empted by a slice or a comparison: run it again later
                    // unless the user cancelled or a newer reference is waiting.
                    std::lock_guard lock(m_mutex);
                    if (epoch == m_cancelEpoch && !m_pending->reference) {
                        m_pending->reference = std::move(reference);
                        m_pending->referenceGeneration = generation;
                    }
                }
            }
        }
        std::lock_guard lock(m_mutex);
        m_running.reset();
    }
}

ReferencePtr Controller::fittingReference(const SliceResult& slice, const DisplaySettings& settings) {
    if (!settings.compare) return nullptr;
    ReferencePtr reference;
    if (settings.referenceKind == ReferenceKind::Pinned) {
        std::lock_guard lock(m_mutex);
        reference = m_pinned;
    } else if (m_computedReference && m_computedReference->kind == settings.referenceKind) {
        reference = m_computedReference;
    }
    return reference && referenceFits(*reference, slice) ? reference : nullptr;
}

tomo::WorkerPool& Controller::preparePool() {
    // Two cores stay free: the UI thread must never wait for a core while
    // statistics, colours and comparisons run (nor the worker's next slice).
    if (!m_preparePool)
        m_preparePool = std::make_unique<tomo::WorkerPool>(std::max(1, QThread::idealThreadCount() - 2));
    return *m_preparePool;
}

bool Controller::sliceWaiting() const {
    std::lock_guard lock(m_mutex);
    return m_pending->slice.has_value();
}

std::optional<Comparison> Controller::compareLastSlice(const SliceResult& slice, const DisplaySettings& settings,
                                                       const std::function<bool()>& abandoned) {
    const ReferencePtr reference = fittingReference(slice, settings);
    if (!reference) return std::nullopt;
    // The disc mask changes only with the region (kept between live slices).
    if (!(m_discRegion == slice.preview.region) || m_discGrid != slice.preview.gridSize) {
        m_disc = reconstructionDisc(slice.preview.region, slice.preview.gridSize);
        m_discRegion = slice.preview.region;
        m_discGrid = slice.preview.gridSize;
    }
    try {
        return compareWithReference(slice, *reference,
                                    settings.discOnly ? std::span<const std::uint8_t>(m_disc)
                                                      : std::span<const std::uint8_t>(),
                                    settings.differenceZoom, &preparePool(), abandoned);
    } catch (const tomo::Cancelled&) {
        return std::nullopt; // stale: a newer slice brings its own comparison
    }
}

void Controller::runSlice(quint64 id, const SliceParams& params, int generation, const tomo::CancelToken& token,
                          double waited) {
    try {
        auto r = std::make_shared<SliceResult>();
        r->id = id;
        r->secondsWaiting = waited;
        r->params = params;
        try {
            tomo::PreviewRequest request = r->params.request();
            if (params.options.iterative.isIterative()) request.onIteration = iterationObserver(id, params, generation);
            r->preview = m_session->run(request, &token);
        } catch (const tomo::InvalidArgument& e) {
            // Corrections the dataset cannot take (360° on a 180° scan, columns
            // beyond the detector): said as such, the last good ones stay usable.
            if (r->params.corrections == m_goodCorrections) throw;
            reportError(tr("These corrections cannot be used on this dataset"), e);
            const QString message = QString::fromUtf8(e.what());
            toUi("corrections-rejected", [this, generation, id, corrections = r->params.corrections, message] {
                if (generation != m_generation) return;
                emit correctionsRejected(corrections, message);
                emit sliceFailed(id);
            });
            return;
        }
        m_goodCorrections = r->params.corrections;
        const tomo::PreprocessingStage& stage = m_session->stage();
        r->stage.columns = stage.outputColumns();
        r->stage.projections = stage.outputProjections();
        r->stage.stitchedAxis = stage.outputAxis();
        if (stage.outputAxis()) r->stage.scanAxis = stage.options().halfAcquisition.axis;
        r->stage.found = stage.foundHalfAcquisitionAxis();
        r->stage.warnings = stage.warnings();
        // What the screen needs, here rather than on the UI thread.
        QElapsedTimer timer;
        timer.start();
        r->stats = computeStats(r->preview.slice.data, 256, 0.5, 99.5, &preparePool());
        // FDK's back-projectors: "cuda" is no registered strategy.
        r->family = r->preview.fdk && r->preview.strategy == "cuda" ? QStringLiteral("cuda")
                                                                    : familyOf(r->preview.strategy);
        const DisplaySettings settings = displaySettings();
        r->display = prepareDisplay(r->preview.slice, r->stats, settings, &preparePool());
        r->comparisonFollows = fittingReference(*r, settings) != nullptr;
        r->secondsPrepare = timer.nsecsElapsed() / 1e9;
        m_lastSlice = r;
        toUi("slice", [this, generation, r = SliceResultPtr(r)] {
            if (generation == m_generation) emit sliceReady(r);
        });
        // The comparison after the slice: it never delays the image, and a
        // newer slice waiting makes it stale (dropped between its steps).
        if (r->comparisonFollows)
            if (auto c = compareLastSlice(*r, settings, [this] { return sliceWaiting(); }))
                toUi("comparison", [this, generation, c = std::move(*c)] {
                    if (generation == m_generation) emit comparisonReady(c);
                });
    } catch (const tomo::Cancelled&) {
        toUi("slice-cancelled", [this, id] { emit sliceCancelled(id); });
        return; // the opening's axis search waits for a slice that ends
    } catch (const std::exception& e) {
        reportError(tr("Reconstruction failed"), e);
        toUi("slice-failed", [this, generation, id] {
            if (generation == m_generation) emit sliceFailed(id);
        });
    }
    // The opening's axis search, once its first slice is on its way.
    if (m_axisSearchRow && generation == m_workerGeneration)
        searchAxis(*std::exchange(m_axisSearchRow, std::nullopt), generation, true);
}

void Controller::runReference(ReferenceKind kind, const SliceParams& params, const tomo::ReconOptions& options,
                              int generation, const tomo::CancelToken& token) {
    try {
        auto ref = std::make_shared<ReferenceResult>();
        ref->kind = kind;
        ref->params = params;
        QElapsedTimer timer;
        timer.start();
        const tomo::DatasetInfo& info = m_session->info();
        if (kind == ReferenceKind::Truth) {
            if (!m_demo) throw tomo::InvalidArgument("the true image is known only for the demo phantom");
            const tomo::Region region = params.effectiveRegion(info.columns);
            ref->image = crop(tomo::rasterizePhantom(m_demo->phantom(), params.row, info.columns, info.columns), region);
            ref->label = tr("True phantom");
        } else {
            if (!m_referenceSession) m_referenceSession = std::make_unique<tomo::PreviewSession>(m_reader);
            tomo::PreviewRequest rq = params.request();
            rq.options = options;
            ref->image = m_referenceSession->run(rq, &token).slice;
            ref->options = options;
            ref->label = referenceModeLabel(options);
        }
        ref->seconds = timer.nsecsElapsed() / 1e9;
        m_computedReference = ref;
        // Not when a slice waits (it cancelled this run): the reference is
        // kept, and the slice must not wait for a comparison it makes stale.
        std::optional<Comparison> comparison;
        if (m_lastSlice && !token.cancelled())
            comparison = compareLastSlice(*m_lastSlice, displaySettings(), [&] { return token.cancelled(); });
        toUi("reference", [this, generation, ref = ReferencePtr(std::move(ref)),
                                         comparison = std::move(comparison)] {
            if (generation != m_generation) return;
            emit referenceReady(ref);
            if (comparison) emit comparisonReady(*comparison);
        });
    } catch (const tomo::Cancelled&) {
        throw;
    } catch (const std::exception& e) {
        // Corrections the dataset refuses are said once, by the live slice.
        const bool refusedCorrections =
            dynamic_cast<const tomo::InvalidArgument*>(&e) && !(params.corrections == m_goodCorrections);
        if (!refusedCorrections) reportError(tr("Reference failed"), e);
        const QString message = QString::fromUtf8(e.what());
        toUi("reference-failed", [this, generation, message] {
            if (generation == m_generation) emit referenceFailed(message);
        });
    }
}

void Controller::findAxis(int row) {
    const int generation = m_generation;
    postPreview([this, row, generation] {
        if (generation != m_workerGeneration || !m_session) return;
        searchAxis(row, generation, false);
    });
}

void Controller::searchAxis(int row, int generation, bool onOpening) {
    // Preview thread: the corrected sinogram of the row (kept by the session
    // for the slice on screen) and the stage's angles, copied for the search.
    AxisResult r;
    r.row = row;
    r.onOpening = onOpening;
    tomo::Image sinogram;
    std::vector<double> angles;
    try {
        if (m_session->info().divergentBeam)
            throw tomo::InvalidArgument("the axis finder assumes a parallel beam; with a fan or cone beam move the "
                                        "axis in the live view (it shifts the detector sideways)");
        sinogram = m_session->sinogram(row);
        angles = m_session->stage().outputAngles();
    } catch (const std::exception& e) {
        axisSearchFailed(row, generation, onOpening, e);
        return;
    }
    // The search itself (2D FFTs: seconds on a 2048² sinogram) runs off the
    // preview thread, so live slices go on meanwhile.
    m_axisSearches.start([this, generation, r, sinogram = std::move(sinogram), angles = std::move(angles)]() mutable {
        try {
            QElapsedTimer timer;
            timer.start();
            r.estimate = tomo::findRotationAxis(sinogram, angles);
            r.seconds = timer.nsecsElapsed() / 1e9;
            toUi("axis-found", [this, generation, r] {
                if (generation == m_generation) emit axisFound(r);
            });
        } catch (const std::exception& e) {
            axisSearchFailed(r.row, generation, r.onOpening, e);
        }
    });
}

void Controller::axisSearchFailed(int row, int generation, bool onOpening, const std::exception& e) {
    // The opening's search is the program's idea: its failure is a note, not a dialog.
    if (!onOpening) reportError(tr("Axis finder failed"), e);
    const QString why = QString::fromUtf8(e.what());
    toUi("axis-failed", [this, generation, row, why] {
        if (generation == m_generation) emit axisFailed(row, why);
    });
}

void Controller::requestDataView(DataViewKind kind, int row, int angle) {
    const int generation = m_generation;
    postPreview([this, kind, row, angle, generation] {
        if (generation != m_workerGeneration || !m_session) return;
        DataView view;
        view.kind = kind;
        view.row = row;
        view.angle = angle;
        try {
            const tomo::DatasetInfo& info = m_session->info();
            if (kind == DataViewKind::Sinogram) {
                view.image = std::make_shared<const tomo::Image>(m_session->sinogram(row));
            } else if (info.logCorrected) {
                view.error = tr("This dataset holds sinograms already log-corrected: no raw projections, flats or darks.");
            } else {
                tomo::Image image(info.columns, info.rows);
                if (kind == DataViewKind::Projection) {
                    m_reader->readProjection(angle, image.data);
                    view.image = std::make_shared<const tomo::Image>(std::move(image));
                } else if (kind == DataViewKind::Flat ? m_reader->readMeanFlat(0, info.rows, image.data)
                                                      : m_reader->readMeanDark(0, info.rows, image.data)) {
                    view.image = std::make_shared<const tomo::Image>(std::move(image));
                } else {
                    view.error = kind == DataViewKind::Flat ? tr("This dataset has no flat fields.")
                                                            : tr("This dataset has no dark fields.");
                }
            }
            if (view.error.isEmpty()) {
                view.stats = computeStats(view.image->data);
                view.display = prepareDisplay(*view.image, view.stats, DisplaySettings{});
            }
        } catch (const std::exception& e) {
            view.error = QString::fromUtf8(e.what());
        }
        toUi("data-view", [this, generation, view = std::move(view)] {
            if (generation == m_generation) emit dataViewReady(view);
        });
    });
}

// ---------------------------------------------------------------- long jobs

bool Controller::jobBusy() const {
    std::lock_guard lock(m_mutex);
    return m_jobToken != nullptr;
}

void Controller::cancelJob() {
    std::lock_guard lock(m_mutex);
    if (m_jobToken) m_jobToken->cancel();
}

bool Controller::startJob(JobKind kind, std::function<void(const tomo::CancelToken&)> job) {
    std::shared_ptr<tomo::CancelToken> token;
    {
        std::lock_guard lock(m_mutex);
        if (m_jobToken || !m_source) return false;
        m_jobToken = std::make_shared<tomo::CancelToken>();
        token = m_jobToken;
    }
    emit jobStarted(kind);
    QMetaObject::invokeMethod(m_jobContext, [this, kind, job = std::move(job), token] {
        JobStatus status = JobStatus::Done;
        QString message;
        try {
            token->throwIfCancelled();
            job(*token);
        } catch (const tomo::Cancelled&) {
            status = JobStatus::Cancelled;
            message = tr("Cancelled");
        } catch (const std::exception& e) {
            status = JobStatus::Failed;
            message = QString::fromUtf8(e.what());
            const QString what = kind == JobKind::Export        ? tr("Reconstruction to file failed")
                                 : kind == JobKind::SubVolume   ? tr("3D sub-volume failed")
                                 : kind == JobKind::AxisSweep   ? tr("Axis sweep failed")
                                 : kind == JobKind::RangeEstimate ? tr("Range estimate failed")
                                                                : tr("Mode comparison failed");
            reportError(what, e);
        }
        {
            std::lock_guard lock(m_mutex);
            m_jobToken.reset();
        }
        toUi("job-finished", [this, kind, status, message] { emit jobFinished(kind, status, message); });
    }, Qt::QueuedConnection);
    return true;
}

namespace {

/// Progress callback for the pipeline: cancels, estimates the time left and
/// posts a JobProgress to `target` in the UI thread.
tomo::ProgressCallback progressReporter(Controller* target, const tomo::CancelToken& token,
                                        std::function<void(const JobProgress&)> emitter) {
    auto timer = std::make_shared<QElapsedTimer>();
    timer->start();
    return [target, &token, timer, emitter = std::move(emitter)](double fraction, std::string_view stage) {
        token.throwIfCancelled();
        JobProgress p;
        p.fraction = std::clamp(fraction, 0.0, 1.0);
        p.stage = QString::fromUtf8(stage.data(), static_cast<qsizetype>(stage.size()));
        p.secondsElapsed = timer->nsecsElapsed() / 1e9;
        p.secondsLeft = p.fraction > 0.0 ? p.secondsElapsed * (1.0 - p.fraction) / p.fraction : -1.0;
        QMetaObject::invokeMethod(target, [emitter, p] { emitter(p); }, Qt::QueuedConnection);
    };
}

} // namespace

bool Controller::exportVolume(const ExportRequest& request) {
    return startJob(JobKind::Export, [this, request](const tomo::CancelToken& token) {
        auto reader = openJobReader();
        ExportReport report;
        report.target = request.target;
        report.type = request.write.type;
        const auto progress = progressReporter(this, token, [this](const JobProgress& p) { emit jobProgress(p); });
        if (reader->info().divergentBeam) {
            const ConeSlices slices = coneSlices(*reader, request.params, request.firstRow, request.rowCount);
            auto writer = tomo::createVolumeWriter(request.target.toStdString(), slices.region.width,
                                                   slices.region.height, slices.count, request.write);
            report.report = tomo::reconstructConeVolume(*reader, slices.first, slices.count, *writer, progress);
            report.clipped = writer->clipped();
            writer.reset();
            toUi("export-finished", [this, report] { emit exportFinished(report); });
            return;
        }
        const tomo::VolumeJob job = volumeJob(*reader, request.params, request.firstRow, request.rowCount);
        const tomo::Region region = job.geometry.region;
        // The writer writes to a temporary and renames on commit; when the
        // job throws (cancel, error) it is destroyed uncommitted and the
        // temporary removed: no partial file under the target name.
        auto writer = tomo::createVolumeWriter(request.target.toStdString(), region.width, region.height,
                                               job.rowCount, request.write);
        report.report = tomo::reconstructVolume(*reader, job, *writer, progress);
        report.clipped = writer->clipped();
        writer.reset();
        toUi("export-finished", [this, report] { emit exportFinished(report); });
    });
}

bool Controller::estimateRange(const SliceParams& params, int firstRow, int rowCount) {
    return startJob(JobKind::RangeEstimate, [this, params, firstRow, rowCount](const tomo::CancelToken& token) {
        auto reader = openJobReader();
        const auto progress = progressReporter(this, token, [this](const JobProgress& p) { emit jobProgress(p); });
        tomo::RangeEstimate estimate;
        if (reader->info().divergentBeam) {
            const ConeSlices slices = coneSlices(*reader, params, firstRow, rowCount);
            estimate = tomo::estimateConeOutputRange(*reader, slices.first, slices.count, {}, progress);
        } else {
            estimate = tomo::estimateOutputRange(*reader, volumeJob(*reader, params, firstRow, rowCount), {}, progress);
        }
        toUi("range-estimated", [this, estimate] { emit rangeEstimated(estimate); });
    });
}

bool Controller::sweepAxis(const SliceParams& params, const std::vector<double>& axes, int thumbnailSize) {
    const int generation = m_generation;
    return startJob(JobKind::AxisSweep, [this, params, axes, thumbnailSize, generation](const tomo::CancelToken& token) {
        auto reader = openJobReader();
        if (params.stitched())
            throw tomo::InvalidArgument("with 360° half acquisition the axis is the stitched sinogram's centre: "
                                        "sweep the scan's axis in the Corrections panel instead");
        if (reader->info().divergentBeam)
            throw tomo::InvalidArgument("the axis sweep is for parallel-beam scans; with a fan or cone beam move the "
                                        "axis in the live view (each position filters the detector rows again)");
        tomo::PreprocessingStage stage(*reader, params.corrections);
        tomo::ImageStack rows = stage.load(params.row, 1);
        tomo::Image sinogram(rows.width, rows.height);
        sinogram.data = std::move(rows.data);
        tomo::AxisSweepJob job;
        job.axes = axes;
        job.axisOffsets = params.axisOffsets;
        job.region = params.region;
        job.options = params.options;
        const tomo::AxisSweepResult result = tomo::sweepAxis(
            sinogram, stage.outputAngles(), job,
            progressReporter(this, token, [this](const JobProgress& p) { emit jobProgress(p); }), &token);
        // One window for every trial (the middle one's percentiles), so they compare by eye.
        AxisSweep out;
        out.row = params.row;
        out.region = params.region;
        out.axes = result.axes;
        out.strategy = QString::fromStdString(result.strategy);
        out.secondsFilter = result.secondsFilter;
        out.secondsBackproject = result.secondsBackproject;
        const int middle = result.slices.depth / 2;
        const ImageStats stats = computeStats(result.slices.image(middle));
        out.low = stats.autoLow;
        out.high = stats.autoHigh > stats.autoLow ? stats.autoHigh : stats.autoLow + 1e-6f;
        const Colormap& map = colormap(QStringLiteral("grey"));
        for (int i = 0; i < result.slices.depth; ++i) {
            token.throwIfCancelled();
            const QImage image = renderImage(result.slices.image(i).data(), result.slices.width, result.slices.height,
                                             out.low, out.high, map);
            out.thumbnails.push_back(image.scaled(thumbnailSize, thumbnailSize, Qt::KeepAspectRatio,
                                                  Qt::SmoothTransformation));
            out.views.push_back(std::max(image.width(), image.height()) > kSweepViewSize
                                    ? image.scaled(kSweepViewSize, kSweepViewSize, Qt::KeepAspectRatio, Qt::SmoothTransformation)
                                    : image);
        }
        toUi("axis-sweep", [this, generation, out = std::move(out)] {
            if (generation == m_generation) emit axisSweepReady(out);
        });
    });
}

bool Controller::reconstructSubVolume(const SliceParams& params, int firstRow, int rowCount, int maxDisplaySize) {
    const int generation = m_generation;
    return startJob(JobKind::SubVolume, [this, params, firstRow, rowCount, maxDisplaySize,
                                         generation](const tomo::CancelToken& token) {
        QElapsedTimer timer;
        timer.start();
        auto reader = openJobReader();
        const auto progress = progressReporter(this, token, [this](const JobProgress& p) { emit jobProgress(p); });
        SubVolume out;
        tomo::Region region;
        std::optional<MemoryVolumeWriter> writer;
        if (reader->info().divergentBeam) { // cubic voxels: rows are as far apart as pixels
            const ConeSlices slices = coneSlices(*reader, params, firstRow, rowCount);
            region = slices.region;
            out.firstRow = slices.first.row;
            out.reconstructionProjections = reader->info().projections;
            writer.emplace(region.width, region.height, slices.count);
            tomo::reconstructConeVolume(*reader, slices.first, slices.count, *writer, progress);
        } else {
            // Reconstructed at the view's resolution: binned detector columns, a grid as coarse,
            // from the angles that grid needs (not with 360° stitching: the stage makes its
            // columns and pairs its projections).
            const int largest = std::max(params.effectiveRegion(reader->info().columns).width,
                                         params.effectiveRegion(reader->info().columns).height);
            const int b = params.stitched() ? 1 : std::max(1, (largest + maxDisplaySize - 1) / std::max(1, maxDisplaySize));
            const int k = params.stitched() ? 1 : projectionRun(reader->info().angles, largest / b);
            out.reconstructionBinning = b;
            std::shared_ptr<tomo::DatasetReader> source = reader;
            SliceParams p = params;
            if (b > 1 || k > 1) {
                source = std::make_shared<BinnedReader>(reader, b, k);
                p = binnedParams(params, b, k);
            }
            out.reconstructionProjections = source->info().projections;
            tomo::VolumeJob job = volumeJob(*source, p, firstRow, rowCount);
            // Four slices a pass where the strategy takes them: the `cpu` strategy's vector lanes
            // filled (7.0 s -> 2.6 s for 256² x 64 from 384 angles on the loaded 2 cores).
            job.options = tomo::BackendRegistry::instance().resolveOptions(job.options, job.geometry);
            if (tomo::ReconOptions four = job.options; job.options.slicesPerPass == 1) {
                four.slicesPerPass = 4;
                try {
                    tomo::BackendRegistry::instance().resolve(four, job.geometry).checkOptions(four);
                    job.options = four;
                    job.chunkRows = chunkRowsFor(job.rowCount, 4);
                } catch (const tomo::InvalidArgument&) {
                    // not this strategy: its slices per pass stay
                }
            }
            region = job.geometry.region;
            out.firstRow = job.firstRow;
            writer.emplace(region.width, region.height, job.rowCount);
            tomo::reconstructVolume(*source, job, *writer, progress);
        }
        out.reconstructedWidth = region.width;
        out.reconstructedHeight = region.height;
        {
            std::lock_guard lock(m_mutex);
            if (m_source && m_source->demo) {
                const tomo::PhantomSpec spec = m_source->demo->phantom();
                out.rowSpacing = spec.rows > 1 ? std::abs(tomo::phantomRowZ(spec, 1) - tomo::phantomRowZ(spec, 0)) *
                                                     spec.radiusFraction * spec.bins / 2.0
                                               : 1.0;
            }
        }
        // What is still larger than the view (fan/cone beams, 360° stitching) is shrunk here.
        const int largest = std::max(region.width, region.height);
        const int shrink = std::max(1, (largest + maxDisplaySize - 1) / std::max(1, maxDisplaySize));
        out.binning = out.reconstructionBinning * shrink;
        out.volume = binXY(writer->take(), shrink);
        // Attenuation per detector pixel, as the 2D view shows it (a binned pixel holds b of them).
        if (out.reconstructionBinning > 1)
            for (float& v : out.volume.data) v /= static_cast<float>(out.reconstructionBinning);
        out.stats = computeStats(out.volume.data);
        out.seconds = timer.nsecsElapsed() / 1e9;
        // Dropped when another dataset was opened meanwhile (the 3D view shows that one).
        toUi("sub-volume", [this, generation, out = std::move(out)] {
            if (generation == m_generation) emit subVolumeReady(out);
        });
    });
}

bool Controller::compareModes(const SliceParams& params, const std::vector<tomo::ReconOptions>& modes) {
    return startJob(JobKind::CompareModes, [this, params, modes](const tomo::CancelToken& token) {
        auto reader = openJobReader();
        const auto steps = static_cast<double>(modes.size() + 1);
        auto report = [this](double fraction, const QString& stage) {
            JobProgress p;
            p.fraction = fraction;
            p.stage = stage;
            toUi("job-progress", [this, p] { emit jobProgress(p); });
        };
        report(0.0, tr("cpu-reference"));
        tomo::PreviewRequest request = params.request();
        request.options = exactReferenceOptions(params.options, QStringLiteral("cpu"));
        tomo::PreviewSession referenceSession(reader);
        const tomo::PreviewResult exact = referenceSession.run(request, &token);
        const tomo::Image& reference = exact.slice;
        const auto mask = reconstructionDisc(exact.region, exact.gridSize);
        for (std::size_t i = 0; i < modes.size(); ++i) {
            token.throwIfCancelled();
            ModeComparison row;
            row.options = modes[i];
            report((static_cast<double>(i) + 1.0) / steps, row.label());
            try {
                tomo::PreviewSession session(reader);
                request.options = modes[i];
                session.run(request, &token); // load + filter
                tomo::PreviewResult best = session.run(request, &token);
                tomo::PreviewResult again = session.run(request, &token);
                if (again.secondsBackproject < best.secondsBackproject) best = std::move(again);
                row.options.strategy = best.strategy;
                row.exact = isExactMode(row.options);
                row.secondsBackproject = best.secondsBackproject;
                row.gups = best.gups;
                row.metrics = tomo::compareImages(best.slice, reference, mask);
            } catch (const tomo::Cancelled&) {
                throw;
            } catch (const std::exception& e) {
                row.error = QString::fromUtf8(e.what());
            }
            toUi("mode-compared", [this, row] { emit modeCompared(row); });
        }
        report(1.0, tr("done"));
    });
}

} // namespace tomo::ui
