#include "work/live_volume.h"

#include "work/binned_reader.h"
#include "work/thread_priority.h"

#include "tomo/error.h"
#include "tomo/preprocess.h"
#include "tomo/preview.h"

#include <QMetaObject>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace tomo::ui {

namespace {

/// Detector rows read through the binning at once (their floats): the
/// stage's buffers stay near 256 MB whatever the detector.
constexpr std::size_t kChunkValues = std::size_t{64} << 20;

} // namespace

/// The thread's sessions, one per coarse row, and what they hold.
struct LiveVolume::Sessions {
    int scan = -1, generation = -1, binning = 0, rowBinning = 0, columns = 0, rows = 0;
    std::vector<std::unique_ptr<tomo::PreviewSession>> rowSessions;
};

LiveVolume::LiveVolume(QObject* parent) : QObject(parent), m_sessions(std::make_unique<Sessions>()) {
    m_thread = std::thread([this] {
        lowerThreadPriority(kBackgroundNice);
        loop();
    });
}

LiveVolume::~LiveVolume() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        ++m_generation; // a refresh under way stops at its next row
    }
    m_wake.notify_all();
    m_thread.join();
}

bool LiveVolume::due() const {
    if (m_busy) return false;
    if (!m_sinceEnd.isValid()) return true;
    const double wait = std::max(static_cast<double>(kMinIntervalMs), 2000.0 * m_lastSeconds);
    return static_cast<double>(m_sinceEnd.elapsed()) >= wait;
}

bool LiveVolume::refresh(std::shared_ptr<tomo::DatasetReader> snapshot, const SliceParams& params, int scan) {
    if (m_busy || !snapshot) return false;
    m_busy = true;
    {
        std::lock_guard lock(m_mutex);
        m_job = std::make_unique<Job>(Job{std::move(snapshot), params, scan, m_generation.load(), m_side});
    }
    m_wake.notify_all();
    return true;
}

void LiveVolume::clear() { ++m_generation; }

bool LiveVolume::sameVolume(const SliceParams& a, const SliceParams& b) {
    const tomo::ReconOptions &x = a.options, &y = b.options;
    return a.stitched() == b.stitched() && a.axisLine().at(0.0) == b.axisLine().at(0.0) && a.axisTilt == b.axisTilt &&
           a.axisOffsets == b.axisOffsets && a.corrections == b.corrections && x.strategy == y.strategy &&
           x.interpolation == y.interpolation && x.precision == y.precision && x.filter.window == y.filter.window &&
           x.filter.padding == y.filter.padding && x.device == y.device;
}

void LiveVolume::loop() {
    for (;;) {
        std::unique_ptr<Job> job;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stop || m_job; });
            if (m_stop) return;
            job = std::move(m_job);
        }
        const auto start = std::chrono::steady_clock::now();
        std::shared_ptr<const CoarseVolume> volume;
        QString error;
        try {
            volume = std::make_shared<const CoarseVolume>(compute(*job));
        } catch (const tomo::Cancelled&) {
            // clear() during the refresh: its sessions were dropped
        } catch (const std::exception& e) {
            *m_sessions = Sessions(); // made anew by the next refresh
            error = QString::fromUtf8(e.what());
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const int generation = job->generation;
        job.reset(); // the snapshot is not held after the refresh
        QMetaObject::invokeMethod(
            this,
            [this, volume, error, seconds, generation] {
                finished(seconds);
                if (generation != m_generation.load()) return; // a new scan meanwhile
                if (volume) emit volumeReady(volume);
                else if (!error.isEmpty()) emit failed(error);
            },
            Qt::QueuedConnection);
    }
}

void LiveVolume::finished(double seconds) {
    m_busy = false;
    m_lastSeconds = seconds;
    m_sinceEnd.start();
}

CoarseVolume LiveVolume::compute(const Job& job) {
    const auto start = std::chrono::steady_clock::now();
    const tomo::DatasetInfo& info = job.snapshot->info();
    if (info.divergentBeam) throw tomo::InvalidArgument("the coarse volume is made for parallel-beam scans only");
    if (job.params.stitched())
        throw tomo::InvalidArgument("no coarse volume with 360° half acquisition (the stitched sinogram is not binned)");
    const int b = (info.columns + job.side - 1) / job.side, r = (info.rows + job.side - 1) / job.side;
    Sessions& s = *m_sessions;
    if (s.scan != job.scan || s.generation != job.generation || s.binning != b || s.rowBinning != r ||
        s.columns != info.columns || s.rows != info.rows)
        s = Sessions{job.scan, job.generation, b, r, info.columns, info.rows, {}};

    auto binned = std::make_shared<BinnedReader>(job.snapshot, b, 1, r);
    SliceParams p = binnedParams(job.params, b, 1); // columns binned; the axis line's rows stay the detector's
    p.options.iterative = {};
    tomo::PreprocessingStage stage(*binned, p.corrections);
    const int rows = binned->info().rows;
    const std::vector<double>& angles = stage.outputAngles();
    const int width = stage.outputColumns();
    CoarseVolume out;
    out.volume = tomo::ImageStack(width, width, rows);
    out.binning = b;
    out.rowBinning = r;
    out.projections = stage.outputProjections();
    out.scan = job.scan;
    out.params = job.params;
    s.rowSessions.resize(static_cast<std::size_t>(rows));
    const std::size_t rowValues = static_cast<std::size_t>(r) * info.projections * info.columns;
    const int chunk = static_cast<int>(std::clamp<std::size_t>(kChunkValues / std::max<std::size_t>(1, rowValues), 1, rows));
    for (int first = 0; first < rows; first += chunk) {
        const int count = std::min(chunk, rows - first);
        const tomo::ImageStack sinograms = stage.load(first, count);
        for (int i = 0; i < count; ++i) {
            if (job.generation != m_generation.load()) throw tomo::Cancelled();
            const int z = first + i;
            tomo::ImageStack row(sinograms.width, sinograms.height, 1);
            std::copy_n(sinograms.image(i).begin(), sinograms.imageSize(), row.data.begin());
            std::shared_ptr<tomo::DatasetReader> reader = tomo::makeMemoryDataset(std::move(row), angles, "live coarse row");
            auto& session = s.rowSessions[static_cast<std::size_t>(z)];
            if (!session) session = std::make_unique<tomo::PreviewSession>(reader);
            session->grow(std::move(reader)); // a live scan from the first refresh on: its sum is kept
            tomo::PreviewRequest request;
            request.row = 0; // the memory dataset holds this coarse row only
            request.axis = p.axisLine().at(z * r + (r - 1) / 2.0);
            request.axisOffsets = p.axisOffsets;
            request.options = p.options;
            const tomo::PreviewResult result = session->run(request);
            // Attenuation per detector pixel, as the slice view shows it (a binned pixel holds b of them).
            const float scale = 1.0f / static_cast<float>(b);
            std::transform(result.slice.data.begin(), result.slice.data.end(), out.volume.image(z).begin(),
                           [scale](float v) { return v * scale; });
            out.addedProjections += result.addedProjections;
            out.strategy = result.strategy;
        }
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

} // namespace tomo::ui
