#include "tomo/pipeline.h"

#include "buffer_pool.h"
#include "peak_meter.h"
#include "run/bounded_queue.h"
#include "run/chunk_schedule.h"
#include "tomo/error.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"
#include "tomo/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <limits>
#include <optional>
#include <set>
#include <thread>
#include <vector>

namespace tomo {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Runs work(i) for every i of `devices` at once, each on a thread of its
/// own that works on devices[i] (BackendRegistry::useDevice for
/// strategies[i]): what a lane makes or releases on its GPU is made there,
/// and the caller's thread selects no device. Throws the first error.
void onLaneThreads(const std::vector<int>& devices, const std::vector<std::string>& strategies,
                   const std::function<void(std::size_t)>& work) {
    std::vector<std::exception_ptr> errors(devices.size());
    {
        std::vector<std::jthread> threads;
        for (std::size_t i = 0; i < devices.size(); ++i)
            threads.emplace_back([&, i] {
                try {
                    BackendRegistry::instance().useDevice(strategies[i], devices[i]);
                    work(i);
                } catch (...) {
                    errors[i] = std::current_exception();
                }
            });
    }
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);
}

/// The job's geometry completed from the corrected sinograms: angles when
/// none are given, detector width, and the full slice grid / region when unset.
ReconGeometry completeGeometry(const ReconGeometry& given, const PreprocessingStage& stage) {
    const std::string path = stage.info().path.string();
    const int projections = stage.outputProjections(), columns = stage.outputColumns();
    ReconGeometry g = given;
    if (g.geometry.angles.empty()) g.geometry.angles = stage.outputAngles();
    if (g.geometry.projections() != projections)
        throw InvalidArgument("the geometry has " + std::to_string(g.geometry.projections()) + " angles but '" + path +
                              "' gives " + std::to_string(projections) + " projections");
    if (g.geometry.bins == 0) g.geometry.bins = columns;
    if (g.geometry.bins != columns)
        throw InvalidArgument("the geometry has " + std::to_string(g.geometry.bins) + " detector bins but '" + path +
                              "' gives " + std::to_string(columns) + " columns");
    if (g.sliceWidth == 0 && g.sliceHeight == 0) {
        g.sliceWidth = g.geometry.bins;
        g.sliceHeight = g.geometry.bins;
    }
    if (g.region.width == 0 && g.region.height == 0) g.region = Region{0, 0, g.sliceWidth, g.sliceHeight};
    g.geometry.validate();
    g.validate();
    return g;
}

/// The machine's memory (8 GiB when the system does not say).
std::size_t physicalMemory() {
    const std::size_t bytes = physicalMemoryBytes();
    return bytes > 0 ? bytes : std::size_t{8} << 30;
}

/// Chunks alive at once, each a whole chunk's buffers (see chunkRowBytes):
/// raw chunks being read and queued, and per lane being corrected (on the
/// raw path: being flat-fielded, queued and being reconstructed); slices
/// per lane being reconstructed, then queued and being written.
int rawChunksAlive(int lanes, bool rawToPlan) {
    return 2 + (rawToPlan ? 3 : 1) * lanes;
}
int sliceChunksAlive(int lanes) {
    return lanes + 2;
}

/// Host memory per chunk row: the raw rows of rawChunksAlive(), per lane
/// four float sinogram rows (being corrected, queued, being reconstructed,
/// and the stage's block of transmissions; none when the plans correct the
/// raw rows themselves) and the slices of sliceChunksAlive(). With one lane:
/// five raw rows, four sinogram rows and three slices.
std::size_t chunkRowBytes(const DatasetInfo& info, const Region& region, bool rawToPlan, int lanes) {
    const std::size_t values = static_cast<std::size_t>(info.projections) * info.columns;
    const std::size_t raw = values * sampleBytes(info.sampleType);
    return static_cast<std::size_t>(rawChunksAlive(lanes, rawToPlan)) * raw +
           (rawToPlan ? 0 : 4 * static_cast<std::size_t>(lanes) * sizeof(float) * values) +
           static_cast<std::size_t>(sliceChunksAlive(lanes)) * sizeof(float) * region.pixels();
}

std::size_t budgetOf(const VolumeJob& job, int lanes) {
    return job.memoryBudget > 0 ? job.memoryBudget : defaultMemoryBudget(lanes);
}

/// Slices of one GPU pass (1 for a plan without passes): what chunks and
/// batches are cut in, since a partial pass costs a GPU plan a full one.
int passSlices(const ReconstructionPlan& plan) {
    return std::clamp(plan.options().slicesPerPass, 1, std::max(1, plan.maxSlices()));
}

/// Rows per chunk: what the job asks for, else as many as fit in the memory
/// budget, a whole number of plan batches (`batch` slices) or passes. Each
/// chunk also carries the stage's margin rows; two more sinogram rows per
/// lane leave room for a CPU plan's filtered and packed copies of a batch
/// (which never exceeds a chunk; see BatchSizer::limitMemory).
/// Rows per chunk, and the memory budget they were sized by.
struct ChunkSizing {
    int rows = 0;
    std::size_t budget = 0;
};

ChunkSizing chooseChunkRows(const VolumeJob& job, const PreprocessingStage& stage, const Region& region, int rowCount,
                            bool rawToPlan, int lanes, int batch, int pass) {
    std::size_t budget = budgetOf(job, lanes);
    if (job.chunkRows > 0) return {std::min(job.chunkRows, rowCount), budget};
    const DatasetInfo& info = stage.info();
    const std::size_t values = static_cast<std::size_t>(info.projections) * info.columns;
    const std::size_t raw = values * sampleBytes(info.sampleType);
    const std::size_t rowBytes = chunkRowBytes(info, region, rawToPlan, lanes) +
                                 (rawToPlan ? 0 : 2 * static_cast<std::size_t>(lanes) * sizeof(float) * values);
    // Margin rows (Paganin's) are held as read (a chunk being read, one
    // queued, one per lane being corrected) and once per lane as floats
    // while corrected.
    const int margin = stage.rowMargin();
    const std::size_t marginBytes =
        ((2 + static_cast<std::size_t>(lanes)) * raw + lanes * sizeof(float) * values) * 2 * margin;
    if (job.memoryBudget == 0 && margin > 0) {
        // Chunks of fewer rows than the margins spend most of the reading and
        // correcting on margin rows: the default budget grows to chunks of
        // 2 x margin rows, up to a quarter of the machine's memory.
        const std::size_t wanted = marginBytes + 2 * static_cast<std::size_t>(margin) * rowBytes;
        budget = std::max(budget, std::min(wanted, physicalMemory() / 4));
    }
    const std::size_t room = budget > marginBytes ? budget - marginBytes : 0;
    const int fit = static_cast<int>(std::clamp<std::size_t>(room / rowBytes, 1, rowCount));
    if (fit >= batch) return {fit / batch * batch, budget};
    return {fit >= pass ? fit / pass * pass : fit, budget};
}

/// Slices per plan call: as many as the plan takes, but few enough that
/// progress (and so Ctrl-C / Cancel) comes about every kStepSeconds even on
/// a slow backend with large slices. The first call is small to measure.
class BatchSizer {
public:
    explicit BatchSizer(const ReconstructionPlan& plan) :
        m_max(std::max(1, plan.maxSlices())), m_multiple(passSlices(plan)),
        m_next(m_multiple) {}

    int next() const { return m_next; }

    void record(int slices, double seconds) {
        constexpr double kStepSeconds = 1.0;
        const double perSlice = seconds / slices;
        const int fit = perSlice > 0.0 ? static_cast<int>(std::min<double>(kStepSeconds / perSlice, m_max)) : m_max;
        m_next = std::clamp(fit / m_multiple * m_multiple, m_multiple, m_max);
    }

    /// Caps batches so that `bytesPerSlice` each stay within `bytes` (at
    /// least one pass). A small region back-projects fast, so without it its
    /// batches, and the plan's copies of them, would grow to maxSlices().
    void limitMemory(std::size_t bytesPerSlice, std::size_t bytes) {
        const auto fit = static_cast<int>(std::min<std::size_t>(bytes / std::max<std::size_t>(bytesPerSlice, 1), m_max));
        m_max = std::max(m_multiple, fit / m_multiple * m_multiple);
        m_next = std::min(m_next, m_max);
    }

private:
    int m_max;
    int m_multiple; // whole passes of slicesPerPass
    int m_next;
};

/// One chunk of rows on its way through the conveyor: the stage's raw chunk
/// (read), then corrected sinograms (or, for a plan that corrects raw rows on
/// the device, the raw values with their flat-field constants), then slices.
struct Chunk {
    int sequence = 0; ///< in the order read
    int first = 0;    ///< index in the job's range of the chunk's first row
    int rows = 0;
    RawChunk raw;
    FlatFieldRows field;
    ImageStack sinograms;
    HostBuffer sliceMemory;   ///< from the plan
    std::span<float> slices;  ///< rows x region pixels of it

    std::size_t bytes() const {
        std::size_t floats = raw.data.data.size() + raw.dark.size() + field.dark.size() + field.scale.size() +
                             sinograms.data.size() + slices.size();
        for (const auto& f : raw.flats) floats += f.size();
        return raw.values.size() + floats * sizeof(float);
    }
};

/// The conveyor's shared state: the first error of any stage stops them all.
class Stop {
public:
    /// Records the current exception (the first one wins) and closes every
    /// queue (the closers given to watch()).
    void fail() noexcept {
        std::vector<std::function<void()>> closers;
        {
            std::lock_guard lock(m_mutex);
            if (!m_error) m_error = std::current_exception();
            closers = m_closers;
        }
        m_stopped = true;
        for (auto& close : closers) close();
    }
    /// `close` wakes a thread that waits (a queue's close()).
    void watch(std::function<void()> close) {
        std::lock_guard lock(m_mutex);
        m_closers.push_back(std::move(close));
    }
    bool stopped() const { return m_stopped; }
    void rethrow() {
        std::lock_guard lock(m_mutex);
        if (m_error) std::rethrow_exception(m_error);
    }

private:
    std::vector<std::function<void()>> m_closers;
    std::mutex m_mutex;
    std::exception_ptr m_error;
    std::atomic<bool> m_stopped{false};
};

/// Throws TooManyClampedValues when more than `limit` of the values of rows
/// [firstRow, firstRow + rows) had no usable transmission (clamped or
/// interpolated: PreprocessStats::unusable).
void checkClamped(const PreprocessStats& stats, const DatasetInfo& info, int firstRow, int rows, double limit) {
    const double values = static_cast<double>(rows) * info.projections * info.columns;
    const double fraction = static_cast<double>(stats.unusable()) / values;
    if (fraction <= limit) return;
    char text[240];
    std::snprintf(text, sizeof text,
                  "%.3g %% of the values (%zu of %.0f) have no usable transmission (raw <= dark, flat <= dark or "
                  "saturated: %zu interpolated, %zu clamped)",
                  100.0 * fraction, stats.unusable(), values, stats.badValueCount, stats.clamped);
    char allowed[48];
    std::snprintf(allowed, sizeof allowed, "%.3g %%", 100.0 * limit);
    throw TooManyClampedValues("rows " + std::to_string(firstRow) + ".." + std::to_string(firstRow + rows - 1) + " of " +
                               info.path.string() + ": " + text + "; expected at most " + allowed +
                               " (flat fields all zero or equal to the darks, or data never written?)");
}

/// "a, b": `name` added to a list of distinct names.
void addName(std::string& list, const std::string& name) {
    for (std::size_t at = 0; at <= list.size();) {
        const std::size_t end = std::min(list.find(", ", at), list.size());
        if (list.compare(at, end - at, name) == 0) return;
        at = end + 2;
    }
    list += (list.empty() ? "" : ", ") + name;
}

void add(StageTimes& sum, const StageTimes& t) {
    sum.upload += t.upload;
    sum.filter += t.filter;
    sum.backproject += t.backproject;
    sum.download += t.download;
    sum.compute += t.compute;
}

/// The rows of the job in the conveyor's own chunks (tapered), when no
/// RowSource is given.
class ScheduledRows final : public RowSource {
public:
    explicit ScheduledRows(std::vector<int> sizes) : m_sizes(std::move(sizes)) {}
    std::optional<SliceSpan> next(int) override {
        if (m_index == m_sizes.size()) return std::nullopt;
        const SliceSpan span{m_done, m_sizes[m_index++]};
        m_done += span.count;
        return span;
    }
    void written(const SliceSpan&) override {}
    double fractionWritten() const override { return 0.0; } // the conveyor counts its own slices
    int chunks() const { return static_cast<int>(m_sizes.size()); }

private:
    std::vector<int> m_sizes;
    std::size_t m_index = 0;
    int m_done = 0;
};

/// What every stage of one run shares: the job, the preprocessing stage,
/// the queues between the stages, the buffer pools, the counters.
struct Conveyor {
    Conveyor(DatasetReader& r, const VolumeJob& j, VolumeWriter& w) : reader(r), job(j), writer(w), stage(r, j.corrections) {}

    DatasetReader& reader;
    const VolumeJob& job;
    VolumeWriter& writer;
    PreprocessingStage stage;
    ReconGeometry geometry;
    bool tilted = false;
    int rowCount = 0;
    int chunkRows = 0;
    int pass = 1;
    int lanes = 1;
    /// The plans correct the stored values themselves (flat/dark + log only).
    bool rawToPlan = false;
    std::size_t slicePixels = 0;
    std::size_t sinogramSize = 0;
    /// Host memory a CPU plan's batches may take, per lane.
    std::size_t planBudget = 0;

    // The queues: read -> [read] -> each lane's preprocess -> [the lane's
    // ready] -> the lane's reconstruct -> [reconstructed] -> write. A queue
    // holds one chunk, so memory stays bounded whatever the dataset's size
    // (see chooseChunkRows).
    detail::BoundedQueue<Chunk> readQueue{1}, reconstructed{1};
    Stop stop;
    PeakMeter meter; // host memory of the chunks alive now and at the peak
    std::optional<detail::HostBufferPool> slicePool;

    std::atomic<int> slicesReconstructed{0}, slicesWritten{0};
    std::atomic<bool> writeDone{false};
    std::atomic<int> lanesReconstructing{0};
    std::atomic<bool> leadInTaken{false};
    std::mutex mutex; // guards what follows, and wakes the caller's progress loop
    std::condition_variable progressed;
    /// Chunks written (by sequence) beyond the first unwritten one.
    std::set<int> writtenAhead;
    int firstUnwritten = 0;
    Clock::time_point lastSliceAt;
    Clock::time_point stagesStart;
    double secondsLeadIn = 0.0;

    void notify() {
        { std::lock_guard lock(mutex); }
        progressed.notify_all();
    }

    /// Runs `body` on a thread of its own; an exception stops every stage.
    std::jthread start(std::function<void()> body) {
        return std::jthread([this, body = std::move(body)] {
            try {
                body();
            } catch (...) {
                stop.fail();
            }
            notify();
        });
    }

    /// Changes a chunk, keeping the memory meter right.
    template <class Change>
    void resized(Chunk& chunk, Change change) {
        const std::size_t before = chunk.bytes();
        change();
        meter.remove(before);
        meter.add(chunk.bytes());
    }
};

/// Whether the calling thread is a lane's (it keeps that lane's device).
thread_local bool t_laneThread = false;

/// One device's share: its plan and corrector, its preprocess and
/// reconstruct threads, a queue of one chunk between them.
class Lane {
public:
    Lane(Conveyor& c, int device, std::unique_ptr<ReconstructionPlan> plan) : m_c(c), m_plan(std::move(plan)) {
        m_report.device = device;
        m_report.strategy = m_plan->options().strategy;
        m_report.tuning = m_plan->options().tuning;
        m_report.slicesPerPass = m_plan->options().slicesPerPass;
        c.stop.watch([this] { m_ready.close(); });
    }

    ReconstructionPlan& plan() { return *m_plan; }
    int device() const { return m_report.device; }
    const std::string& strategy() const { return m_report.strategy; }
    const Backend* backend() const { return BackendRegistry::instance().find(m_report.strategy); }

    /// Makes the corrector on the lane's device, or none (see VolumeJob::gpuCorrections).
    void prepareCorrections() {
        const DatasetInfo& info = m_c.stage.info();
        const CorrectionOptions& o = m_c.stage.options();
        // The corrections run on the strategy's GPU when it has one
        // (log-corrected data without corrections only need their NaN check).
        const bool anyCorrection = o.betweenFlatFieldAndLog() || o.halfAcquisition.enabled;
        if (!m_c.rawToPlan && backend() && m_c.job.gpuCorrections && (anyCorrection || !info.logCorrected))
            m_corrector = backend()->createCorrector(m_c.stage, m_plan->options());
        m_report.correctedOn = m_c.rawToPlan ? m_report.strategy : m_corrector ? m_corrector->where() : "cpu";
    }

    void startThreads() {
        m_preprocess = m_c.start([this] {
            takeThread();
            preprocessLoop();
        });
        m_reconstruct = m_c.start([this] {
            takeThread();
            reconstructLoop();
        });
    }
    /// The lane's device on the calling thread (Backend::useDevice).
    void useDevice() const {
        if (const Backend* b = backend()) b->useDevice(m_report.device);
    }
    /// The same for good on one of the lane's threads.
    void takeThread() const {
        t_laneThread = true;
        useDevice();
    }
    /// Releases the corrector and the plan (on a thread working on the lane's device).
    void release() noexcept {
        m_corrector.reset();
        m_plan.reset();
    }
    void join() {
        if (m_preprocess.joinable()) m_preprocess.join();
        if (m_reconstruct.joinable()) m_reconstruct.join();
    }

    /// After join(): the lane's figures, and what the corrections found.
    LaneReport report() {
        LaneReport r = m_report;
        if (m_corrector) r.preprocessSteps = m_corrector->stepSeconds();
        if (r.secondsReconstruct > 0.0)
            r.gups = static_cast<double>(m_c.slicePixels) * r.slices * m_c.geometry.geometry.projections() /
                     r.secondsReconstruct / 1e9;
        return r;
    }
    const PreprocessStats& foundOnCpu() const { return m_onCpu; }
    const PreprocessStats& foundOnPlan() const { return m_onPlan; }

private:
    void preprocessLoop() {
        Conveyor& c = m_c;
        const DatasetInfo& info = c.stage.info();
        while (std::optional<Chunk> chunk = c.readQueue.pop()) {
            if (c.stop.stopped()) return;
            const auto t0 = Clock::now();
            c.resized(*chunk, [&] {
                if (c.rawToPlan) {
                    PreprocessStats deadPixels;
                    chunk->field = c.stage.flatFieldRows(chunk->raw, &deadPixels);
                    m_onCpu.merge(deadPixels);
                } else {
                    PreprocessStats stats;
                    chunk->sinograms = m_corrector ? m_corrector->correct(std::move(chunk->raw), &stats)
                                                   : c.stage.correct(std::move(chunk->raw), &stats);
                    chunk->raw = {};
                    checkClamped(stats, info, c.job.firstRow + chunk->first, chunk->rows,
                                 c.job.maxClampedFraction);
                    m_onCpu.merge(stats);
                }
            });
            m_report.secondsPreprocess += secondsSince(t0);
            if (!m_ready.push(std::move(*chunk))) return;
        }
        m_ready.close();
    }

    void reconstructLoop() {
        Conveyor& c = m_c;
        ReconstructionPlan& plan = *m_plan;
        const DatasetInfo& info = c.stage.info();
        // A CPU plan's memory is host memory: what the chunks leave of the
        // budget bounds its batches, measured after the first one.
        bool limitPlanMemory = backend() && backend()->family() == "cpu";
        BatchSizer batch(plan);
        while (std::optional<Chunk> chunk = m_ready.pop()) {
            if (c.stop.stopped()) return;
            const auto t0 = Clock::now();
            if (!c.leadInTaken.exchange(true)) c.secondsLeadIn = std::chrono::duration<double>(t0 - c.stagesStart).count();
            c.resized(*chunk, [&] {
                const std::size_t values = c.slicePixels * static_cast<std::size_t>(chunk->rows);
                chunk->sliceMemory = c.slicePool->take(values * sizeof(float));
                chunk->slices = chunk->sliceMemory.as<float>(values);
            });
            const RawRows raw = c.rawToPlan ? c.stage.rawRows(chunk->raw) : RawRows{};
            PreprocessStats onPlanInChunk;
            for (int b = 0; b < chunk->rows && !c.stop.stopped();) {
                const int n = c.tilted ? 1 : std::min(batch.next(), chunk->rows - b);
                if (c.tilted)
                    plan.setAxis(c.job.axisLine->at(c.job.firstRow + chunk->first + b), c.geometry.geometry.axisOffsets);
                const auto tBatch = Clock::now();
                const std::span<float> out = chunk->slices.subspan(b * c.slicePixels, n * c.slicePixels);
                if (c.rawToPlan)
                    onPlanInChunk.merge(plan.reconstructRaw(rowsOf(raw, b, n), rowsOf(chunk->field, b, n), out));
                else
                    plan.reconstruct(
                        std::span<const float>(chunk->sinograms.data).subspan(b * c.sinogramSize, n * c.sinogramSize),
                        n, out);
                batch.record(n, secondsSince(tBatch));
                if (limitPlanMemory) {
                    batch.limitMemory(plan.memoryBytes() / static_cast<std::size_t>(n), c.planBudget);
                    limitPlanMemory = false;
                }
                add(m_report.plan, plan.lastStageTimes());
                b += n;
                m_report.slices += n;
                c.slicesReconstructed += n;
                c.notify();
            }
            // Before the writer sees the chunk: broken data never reach the output.
            checkClamped(onPlanInChunk, info, c.job.firstRow + chunk->first, chunk->rows,
                         c.job.maxClampedFraction);
            m_onPlan.merge(onPlanInChunk);
            c.resized(*chunk, [&] {
                c.stage.recycle(std::move(chunk->sinograms));
                c.stage.recycle(std::move(chunk->raw));
                chunk->field = {};
            });
            m_report.secondsReconstruct += secondsSince(t0);
            ++m_report.chunks;
            {
                std::lock_guard lock(c.mutex);
                c.lastSliceAt = Clock::now();
            }
            if (!c.reconstructed.push(std::move(*chunk))) return;
        }
        // The last lane to finish ends the writer's input.
        if (--c.lanesReconstructing == 0) c.reconstructed.close();
    }

    Conveyor& m_c;
    std::unique_ptr<ReconstructionPlan> m_plan;
    std::unique_ptr<ChunkCorrector> m_corrector;
    detail::BoundedQueue<Chunk> m_ready{1};
    LaneReport m_report;       // written by the lane's threads only
    PreprocessStats m_onCpu;   // what the stage found (the preprocess thread)
    PreprocessStats m_onPlan;  // what the plan found (the reconstruct thread)
    std::jthread m_preprocess, m_reconstruct;
};

/// The read stage: takes rows from the source, reads them as chunks and
/// queues them for whichever lane has room first.
class ReadStage {
public:
    ReadStage(Conveyor& c, RowSource& source, ScheduledRows* schedule, int window)
        : m_c(c), m_source(source), m_schedule(schedule), m_window(window) {
        c.stop.watch([&c] { c.notify(); });
    }

    double seconds() const { return m_seconds; }

    void run() {
        Conveyor& c = m_c;
        int hintedEnd = 0; // rows before it were hinted (or read) already
        for (int sequence = 0; !c.stop.stopped(); ++sequence) {
            if (!withinWindow(sequence)) return;
            const std::optional<SliceSpan> span =
                m_source.next(detail::taperedLimit(sequence, c.chunkRows, c.pass, c.lanes));
            if (!span) break;
            const auto t0 = Clock::now();
            Chunk chunk;
            chunk.sequence = sequence;
            chunk.first = span->first;
            chunk.rows = span->count;
            if (chunk.first < 0 || chunk.rows < 1 || chunk.first > c.rowCount - chunk.rows)
                throw InvalidArgument("rows " + std::to_string(chunk.first) + "+" + std::to_string(chunk.rows) +
                                      " handed to the conveyor are outside its " + std::to_string(c.rowCount) +
                                      " rows");
            // With the conveyor's own chunks, the rows after this one, up to a
            // whole chunk's, are asked for while it is read, so the disk's
            // queue stays full across chunk boundaries (a cold 4 GiB scan on
            // the H100 machine's disk: read stage 3.4-3.6 s before, 2.8-3.4 s
            // with). Not while the first chunk is read: everything waits for
            // that one. Each row once.
            const int next = chunk.first + chunk.rows, from = std::max(next, hintedEnd);
            const int to = std::min(next + c.chunkRows, c.rowCount);
            if (m_schedule && sequence > 0 && from < to) {
                c.stage.prefetch(c.job.firstRow + from, to - from);
                hintedEnd = to;
            }
            chunk.raw = c.stage.read(c.job.firstRow + chunk.first, chunk.rows);
            m_seconds += secondsSince(t0);
            c.meter.add(chunk.bytes());
            if (!c.readQueue.push(std::move(chunk))) return;
        }
        c.readQueue.close();
    }

private:
    /// For a writer that holds early slices: waits until the chunk
    /// `sequence` is within the window of the oldest one not yet written.
    bool withinWindow(int sequence) {
        if (m_window <= 0) return true;
        std::unique_lock lock(m_c.mutex);
        m_c.progressed.wait(lock, [&] { return m_c.stop.stopped() || sequence - m_c.firstUnwritten < m_window; });
        return !m_c.stop.stopped();
    }

    Conveyor& m_c;
    RowSource& m_source;
    ScheduledRows* m_schedule; // the conveyor's own chunks: their rows are hinted ahead
    int m_window;              // chunks read ahead of the oldest unwritten one at most (0 = any)
    double m_seconds = 0.0;
};

/// The write stage: the slices of each chunk into the one output, in the
/// order the lanes finish them.
class WriteStage {
public:
    WriteStage(Conveyor& c, RowSource* source) : m_c(c), m_source(source) {}

    double seconds() const { return m_seconds; }

    void run() {
        Conveyor& c = m_c;
        while (std::optional<Chunk> chunk = c.reconstructed.pop()) {
            if (c.stop.stopped()) return;
            const auto t0 = Clock::now();
            c.writer.writeSlices(chunk->first, chunk->rows, chunk->slices);
            m_seconds += secondsSince(t0);
            c.meter.remove(chunk->bytes());
            chunk->slices = {};
            c.slicePool->give(std::move(chunk->sliceMemory));
            if (m_source) m_source->written({chunk->first, chunk->rows});
            {
                std::lock_guard lock(c.mutex);
                c.writtenAhead.insert(chunk->sequence);
                while (c.writtenAhead.erase(c.firstUnwritten) > 0) ++c.firstUnwritten;
            }
            c.slicesWritten += chunk->rows;
            c.notify();
        }
        c.writeDone = true;
    }

    /// Adds the commit to the busy time.
    void commit() {
        const auto t0 = Clock::now();
        m_c.writer.commit();
        m_seconds += secondsSince(t0);
    }

private:
    Conveyor& m_c;
    RowSource* m_source; // told of each span written (a RowSource given by the job)
    double m_seconds = 0.0;
};

/// The devices of the job's lanes; throws InvalidArgument for one listed twice.
std::vector<int> laneDevices(const VolumeJob& job) {
    if (job.devices.empty()) return {job.options.device};
    for (std::size_t i = 0; i < job.devices.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
            if (job.devices[i] == job.devices[k])
                throw InvalidArgument("device " + std::to_string(job.devices[i]) +
                                      " is listed twice; expected each device once");
    return job.devices;
}

/// One plan per device, each made on a thread working on its device
/// (onLaneThreads; side by side: each may tune `auto` and set up its
/// device); the first error of any is thrown.
std::vector<std::unique_ptr<ReconstructionPlan>> createLanePlans(const ReconGeometry& geometry,
                                                                  const ReconOptions& options,
                                                                  const std::vector<int>& devices) {
    std::vector<std::unique_ptr<ReconstructionPlan>> plans(devices.size());
    try {
        onLaneThreads(devices, std::vector<std::string>(devices.size(), options.strategy), [&](std::size_t i) {
            ReconOptions o = options;
            o.device = devices[i];
            plans[i] = createPlan(geometry, o);
        });
    } catch (...) {
        // The plans made are released on their devices' threads too.
        onLaneThreads(devices, std::vector<std::string>(devices.size(), options.strategy),
                      [&](std::size_t i) { plans[i].reset(); });
        throw;
    }
    return plans;
}

/// Every lane's plan and corrector released on a thread working on its
/// device, the buffers the first lane's plan allocated with them, when the
/// run ends or fails.
class LaneRelease {
public:
    LaneRelease(std::vector<std::unique_ptr<Lane>>& lanes, Conveyor& c) : m_lanes(lanes), m_c(c) {}
    ~LaneRelease() {
        std::vector<int> devices;
        std::vector<std::string> strategies;
        for (const auto& lane : m_lanes) {
            lane->join(); // ended already, or ending: the run failed
            devices.push_back(lane->device());
            strategies.push_back(lane->strategy());
        }
        try {
            onLaneThreads(devices, strategies, [&](std::size_t i) {
                m_lanes[i]->release();
                if (i == 0) { // page-locked memory is released in a context
                    m_c.slicePool.reset();
                    m_c.stage.allocateRawWith(HostBuffer::plain);
                }
            });
        } catch (...) {
            // A thread that could not start: the destructors run here instead.
        }
    }
    LaneRelease(const LaneRelease&) = delete;
    LaneRelease& operator=(const LaneRelease&) = delete;

private:
    std::vector<std::unique_ptr<Lane>>& m_lanes;
    Conveyor& m_c;
};

} // namespace

std::size_t defaultMemoryBudget() {
    constexpr std::size_t kGiB = std::size_t{1} << 30;
    return std::clamp(physicalMemory() / 16, kGiB, 4 * kGiB);
}

std::size_t defaultMemoryBudget(int lanes) {
    const std::size_t one = defaultMemoryBudget();
    return std::max(one, std::min(one * static_cast<std::size_t>(std::max(lanes, 1)), physicalMemory() / 4));
}

std::string VolumeReport::bottleneck() const {
    const std::pair<double, const char*> stages[] = {
        {secondsRead, "read"}, {secondsPreprocess, "preprocess"}, {secondsReconstruct, "reconstruct"},
        {secondsWrite, "write"}};
    return std::max_element(std::begin(stages), std::end(stages))->second;
}

VolumeReport reconstructVolume(DatasetReader& reader, const VolumeJob& job, VolumeWriter& writer,
                               const ProgressCallback& progress) {
    const auto tStart = Clock::now();
    const DatasetInfo& info = reader.info();

    if (job.firstRow < 0 || job.firstRow >= info.rows)
        throw InvalidArgument("first row " + std::to_string(job.firstRow) + " is outside '" + info.path.string() +
                              "' (rows 0.." + std::to_string(info.rows - 1) + ")");
    if (job.rowCount < 0 || job.rowCount > info.rows - job.firstRow)
        throw InvalidArgument("rows " + std::to_string(job.firstRow) + ".." +
                              std::to_string(static_cast<long long>(job.firstRow) + job.rowCount - 1) +
                              " are outside '" + info.path.string() + "' (rows 0.." + std::to_string(info.rows - 1) +
                              ")");
    if (!(job.maxClampedFraction >= 0.0 && job.maxClampedFraction <= 1.0))
        throw InvalidArgument("maxClampedFraction " + std::to_string(job.maxClampedFraction) + ": expected 0..1");
    const std::vector<int> devices = laneDevices(job);

    Conveyor c(reader, job, writer);
    c.rowCount = job.rowCount == 0 ? info.rows - job.firstRow : job.rowCount;
    c.lanes = static_cast<int>(devices.size());
    c.geometry = completeGeometry(job.geometry, c.stage);
    if (job.axisLine) {
        job.axisLine->validate();
        c.geometry.geometry.axis = job.axisLine->at(job.firstRow);
    }
    c.tilted = job.axisLine && job.axisLine->tilt != 0.0;
    const auto tPlan = Clock::now();
    std::vector<std::unique_ptr<ReconstructionPlan>> plans = createLanePlans(c.geometry, job.options, devices);
    const double planSeconds = secondsSince(tPlan);
    std::vector<std::unique_ptr<Lane>> lanes;
    for (std::size_t i = 0; i < plans.size(); ++i) lanes.push_back(std::make_unique<Lane>(c, devices[i], std::move(plans[i])));
    const LaneRelease release(lanes, c);
    // The GPU corrects the stored values itself when the flat/dark + log is
    // all there is to do (it uploads half the bytes of float for uint16).
    c.rawToPlan = c.stage.flatFieldOnly() &&
                  std::all_of(lanes.begin(), lanes.end(), [](const auto& l) { return l->plan().correctsRawRows(); });
    int batch = 1;
    for (const auto& l : lanes) {
        c.pass = std::max(c.pass, passSlices(l->plan())); // 1, 2 or 4: a multiple of every lane's
        batch = std::max(batch, l->plan().maxSlices());
    }
    c.slicePixels = c.geometry.region.pixels();
    c.sinogramSize =
        static_cast<std::size_t>(c.stage.outputProjections()) * static_cast<std::size_t>(c.stage.outputColumns());
    const ChunkSizing sizing =
        chooseChunkRows(job, c.stage, c.geometry.region, c.rowCount, c.rawToPlan, c.lanes, batch, c.pass);
    c.chunkRows = sizing.rows;
    const std::size_t chunkBytes =
        static_cast<std::size_t>(c.chunkRows) * chunkRowBytes(info, c.geometry.region, c.rawToPlan, c.lanes);
    const std::size_t budget = budgetOf(job, c.lanes);
    c.planBudget = (chunkBytes < budget ? budget - chunkBytes : 0) / static_cast<std::size_t>(c.lanes);

    std::optional<ScheduledRows> schedule;
    if (!job.rows)
        schedule.emplace(job.chunkRows > 0 ? detail::equalChunks(c.rowCount, c.chunkRows)
                                           : detail::taperedChunks(c.rowCount, c.chunkRows, c.pass, c.lanes));
    RowSource& source = job.rows ? *job.rows : *schedule;
    const int chunksAtMost = schedule ? schedule->chunks() : std::numeric_limits<int>::max();

    std::vector<int> laneDevice;
    std::vector<std::string> laneStrategy;
    for (const auto& lane : lanes) {
        laneDevice.push_back(lane->device());
        laneStrategy.push_back(lane->strategy());
    }
    std::mutex preparing; // one corrector at a time reads the stage, as before the lanes had threads
    onLaneThreads(laneDevice, laneStrategy, [&](std::size_t i) {
        std::lock_guard lock(preparing);
        lanes[i]->prepareCorrections();
    });
    c.stop.watch([&c] { c.readQueue.close(); });
    c.stop.watch([&c] { c.reconstructed.close(); });
    // The plans too: an iterative plan's call stops between iterations.
    for (auto& lane : lanes) c.stop.watch([plan = &lane->plan()] { plan->cancel(); });

    // The writer hands slices back to the reconstruct stage. The first
    // lane's plan allocates them, and the raw rows the plans correct
    // themselves: a CUDA plan's transfers reach its page-locked memory by
    // DMA alone (page-locked for every device: portable).
    // The conveyor's other threads that allocate (ahead, and the reader's)
    // work on the first lane's device.
    const Lane& firstLane = *lanes.front();
    ReconstructionPlan& firstPlan = lanes.front()->plan();
    const auto allocateForPlan = [&firstPlan, &firstLane](std::size_t bytes) {
        if (!t_laneThread) firstLane.useDevice();
        return firstPlan.allocateHost(bytes);
    };
    c.slicePool.emplace(allocateForPlan);
    if (c.rawToPlan) c.stage.allocateRawWith(allocateForPlan);
    // Every chunk buffer a whole chunk's, allocated ahead on threads of their
    // own (page-locking 1 GiB takes 0.06-0.2 s), while the stages start on
    // the first chunk; the small chunks at either end reuse them.
    c.stage.allocateRawAhead(c.chunkRows, std::min(chunksAtMost, rawChunksAlive(c.lanes, c.rawToPlan)));
    c.slicePool->allocateAhead(c.slicePixels * static_cast<std::size_t>(c.chunkRows) * sizeof(float),
                               std::min(chunksAtMost, sliceChunksAlive(c.lanes)));

    // A writer that holds slices until their turn keeps the reader within
    // the chunks in flight of the oldest unwritten one, which bounds what it
    // holds; other writers take chunks in any order.
    const int window = writer.holdsEarlySlices() ? rawChunksAlive(c.lanes, true) + 2 : 0;
    ReadStage readStage(c, source, schedule ? &*schedule : nullptr, window);
    WriteStage writeStage(c, job.rows);

    VolumeReport report;
    report.secondsPlan = planSeconds;
    report.chunkRows = c.chunkRows;
    report.memoryBudget = sizing.budget;
    report.secondsSetup = secondsSince(tStart);
    c.stagesStart = c.lastSliceAt = Clock::now();
    std::jthread readThread, writeThread;
    c.lanesReconstructing = c.lanes;
    try {
        readThread = c.start([&] { readStage.run(); });
        for (auto& lane : lanes) lane->startThreads();
        writeThread = c.start([&] { writeStage.run(); });
    } catch (...) {
        c.stop.fail(); // the threads already started end; no join waits for ever
        throw;
    }

    // Progress on the caller's thread: half the way for reconstructing a
    // slice, half for writing it, so the last call (1.0) means all written;
    // with rows from a RowSource, what it says of the whole job. An
    // iterative plan's batch may take minutes: for it the call repeats every
    // kHeartbeat while nothing moves, so a Cancelled thrown from the callback
    // stops the batch between iterations (Stop cancels the plans).
    constexpr auto kHeartbeat = std::chrono::milliseconds(500);
    const bool heartbeat = lanes.front()->plan().options().iterative.isIterative();
    int reported = 0;            // nothing to say before the first slice
    double reportedFraction = -1.0;
    auto reportedAt = Clock::now();
    for (;;) {
        const bool finished = c.writeDone || c.stop.stopped(); // before the score: it may rise meanwhile
        const int score = c.slicesReconstructed + c.slicesWritten;
        const double fraction = job.rows ? job.rows->fractionWritten() : 0.5 * score / c.rowCount;
        const bool beat = heartbeat && Clock::now() - reportedAt >= kHeartbeat;
        if (progress && (score != reported || beat || (job.rows && fraction != reportedFraction)) &&
            !c.stop.stopped()) {
            reported = score;
            reportedFraction = fraction;
            reportedAt = Clock::now();
            try {
                progress(fraction, c.writeDone && !job.rows ? "written" : "reconstructing");
            } catch (...) {
                c.stop.fail();
            }
        }
        if (finished) break;
        std::unique_lock lock(c.mutex);
        c.progressed.wait_for(lock, std::chrono::milliseconds(100), [&] {
            return c.slicesReconstructed + c.slicesWritten != score || c.writeDone || c.stop.stopped();
        });
    }
    readThread.join();
    for (auto& lane : lanes) lane->join();
    writeThread.join();
    c.stop.rethrow();
    writeStage.commit();

    // The figures: the reconstruct and preprocess stages are the busiest
    // lane's (the lanes work side by side).
    report.secondsRead = readStage.seconds();
    report.secondsWrite = writeStage.seconds();
    for (auto& lane : lanes) {
        report.lanes.push_back(lane->report());
        report.preprocess.merge(lane->foundOnCpu());
    }
    for (auto& lane : lanes) report.preprocess.merge(lane->foundOnPlan());
    const auto busiest = std::max_element(report.lanes.begin(), report.lanes.end(), [](const auto& a, const auto& b) {
        return a.secondsReconstruct < b.secondsReconstruct;
    });
    report.secondsReconstruct = busiest->secondsReconstruct;
    report.plan = busiest->plan;
    for (const LaneReport& l : report.lanes) {
        report.secondsPreprocess = std::max(report.secondsPreprocess, l.secondsPreprocess);
        addName(report.strategy, l.strategy);
        addName(report.correctedOn, l.correctedOn);
        report.slices += l.slices;
    }
    report.preprocessSteps = busiest->preprocessSteps;
    report.warnings = c.stage.warnings();
    report.peakBufferBytes = c.meter.peak();
    report.secondsLeadIn = c.secondsLeadIn;
    report.secondsTotal = secondsSince(tStart);
    report.secondsTail = secondsSince(c.lastSliceAt);
    if (report.secondsReconstruct > 0.0)
        report.gups = static_cast<double>(c.slicePixels) * report.slices * c.geometry.geometry.projections() /
                      report.secondsReconstruct / 1e9;
    return report;
}

} // namespace tomo
