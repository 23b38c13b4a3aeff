#include "tomo/pipeline.h"

#include "buffer_pool.h"
#include "run/chunk_schedule.h"
#include "run/bounded_queue.h"
#include "tomo/error.h"
#include "tomo/worker_pool.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>


namespace tomo {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
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

/// Rows per chunk: what the job asks for, else as many as fit in the memory
/// budget, a whole number of plan batches. The conveyor holds at most, per
/// chunk row: five raw rows (being read, queued, being corrected, and on the
/// GPU path queued and being reconstructed), four float sinogram rows (being
/// corrected, queued, being reconstructed, and the stage's block of
/// transmissions; none when the plan corrects the raw rows itself) and
/// three slices (being reconstructed, queued, being written); each chunk
/// also carries the stage's margin rows. Two more sinogram rows leave room
/// for a CPU plan's filtered and packed copies of a batch (which never
/// exceeds a chunk; see BatchSizer::limitMemory).
std::size_t chunkRowBytes(const DatasetInfo& info, const Region& region, bool rawToPlan) {
    const std::size_t values = static_cast<std::size_t>(info.projections) * info.columns;
    const std::size_t raw = values * sampleBytes(info.sampleType);
    return 5 * raw + (rawToPlan ? 0 : 4 * sizeof(float) * values) + 3 * sizeof(float) * region.pixels();
}

std::size_t budgetOf(const VolumeJob& job) {
    return job.memoryBudget > 0 ? job.memoryBudget : defaultMemoryBudget();
}

/// Slices of one GPU pass (1 for a plan without passes): what chunks and
/// batches are cut in, since a partial pass costs a GPU plan a full one.
int passSlices(const ReconstructionPlan& plan) {
    return std::clamp(plan.options().slicesPerPass, 1, std::max(1, plan.maxSlices()));
}

/// Rows per chunk, and the memory budget they were sized by.
struct ChunkSizing {
    int rows = 0;
    std::size_t budget = 0;
};

ChunkSizing chooseChunkRows(const VolumeJob& job, const ReconstructionPlan& plan, const PreprocessingStage& stage,
                            int rowCount, bool rawToPlan) {
    std::size_t budget = budgetOf(job);
    if (job.chunkRows > 0) return {std::min(job.chunkRows, rowCount), budget};
    const DatasetInfo& info = stage.info();
    const std::size_t values = static_cast<std::size_t>(info.projections) * info.columns;
    const std::size_t raw = values * sampleBytes(info.sampleType);
    const std::size_t rowBytes =
        chunkRowBytes(info, plan.geometry().region, rawToPlan) + (rawToPlan ? 0 : 2 * sizeof(float) * values);
    // Margin rows (Paganin's) are held as read (a chunk being read, one
    // queued, one being corrected) and once as floats while corrected.
    const int margin = stage.rowMargin();
    const std::size_t marginBytes = (3 * raw + sizeof(float) * values) * 2 * margin;
    if (job.memoryBudget == 0 && margin > 0) {
        // Chunks of fewer rows than the margins spend most of the reading and
        // correcting on margin rows: the default budget grows to chunks of
        // 2 x margin rows, up to a quarter of the machine's memory.
        const std::size_t wanted = marginBytes + 2 * static_cast<std::size_t>(margin) * rowBytes;
        budget = std::max(budget, std::min(wanted, physicalMemory() / 4));
    }
    const std::size_t room = budget > marginBytes ? budget - marginBytes : 0;
    const int fit = static_cast<int>(std::clamp<std::size_t>(room / rowBytes, 1, rowCount));
    const int batch = std::max(1, plan.maxSlices());
    if (fit >= batch) return {fit / batch * batch, budget};
    const int pass = passSlices(plan);
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
    int first = 0; ///< index in the job's range of the chunk's first row
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

/// Host memory of the chunks alive now and at the peak.
class BufferMeter {
public:
    void add(std::size_t bytes) {
        const std::size_t now = m_now.fetch_add(bytes) + bytes;
        std::size_t peak = m_peak.load();
        while (now > peak && !m_peak.compare_exchange_weak(peak, now)) {}
    }
    void remove(std::size_t bytes) { m_now.fetch_sub(bytes); }
    std::size_t peak() const { return m_peak.load(); }

private:
    std::atomic<std::size_t> m_now{0}, m_peak{0};
};

/// The conveyor's shared state: the first error of any stage stops them all.
class Stop {
public:
    explicit Stop(std::vector<std::function<void()>> closers) : m_closers(std::move(closers)) {}

    /// Records the current exception (the first one wins) and closes every queue.
    void fail() noexcept {
        {
            std::lock_guard lock(m_mutex);
            if (!m_error) m_error = std::current_exception();
        }
        stop();
    }
    void stop() noexcept {
        m_stopped = true;
        for (auto& close : m_closers) close();
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
/// [firstRow, firstRow + rows) were clamped.
void checkClamped(std::size_t clamped, const DatasetInfo& info, int firstRow, int rows, double limit) {
    const double values = static_cast<double>(rows) * info.projections * info.columns;
    const double fraction = static_cast<double>(clamped) / values;
    if (fraction <= limit) return;
    char text[160];
    std::snprintf(text, sizeof text, "%.3g %% of the values (%zu of %.0f) have no positive transmission", 100.0 * fraction,
                  clamped, values);
    char allowed[48];
    std::snprintf(allowed, sizeof allowed, "%.3g %%", 100.0 * limit);
    throw TooManyClampedValues("rows " + std::to_string(firstRow) + ".." + std::to_string(firstRow + rows - 1) + " of " +
                               info.path.string() + ": " + text +
                               " (raw <= dark or flat <= dark) and would be clamped; expected at most " + allowed +
                               " (flat fields all zero or equal to the darks, or data never written?)");
}

} // namespace

std::size_t defaultMemoryBudget() {
    constexpr std::size_t kGiB = std::size_t{1} << 30;
    return std::clamp(physicalMemory() / 16, kGiB, 4 * kGiB);
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
    const int rowCount = job.rowCount == 0 ? info.rows - job.firstRow : job.rowCount;
    if (!(job.maxClampedFraction >= 0.0 && job.maxClampedFraction <= 1.0))
        throw InvalidArgument("maxClampedFraction " + std::to_string(job.maxClampedFraction) + ": expected 0..1");

    PreprocessingStage stage(reader, job.corrections);
    ReconGeometry geometry = completeGeometry(job.geometry, stage);
    if (job.axisLine) {
        job.axisLine->validate();
        geometry.geometry.axis = job.axisLine->at(job.firstRow);
    }
    const bool tilted = job.axisLine && job.axisLine->tilt != 0.0;
    const auto tPlan = Clock::now();
    std::unique_ptr<ReconstructionPlan> plan = createPlan(geometry, job.options);
    const double planSeconds = secondsSince(tPlan);
    // The GPU corrects the stored values itself when the flat/dark + log is
    // all there is to do (it uploads half the bytes of float for uint16).
    const bool rawToPlan = plan->correctsRawRows() && stage.flatFieldOnly();

    VolumeReport report;
    report.strategy = plan->options().strategy;
    report.secondsPlan = planSeconds;
    const ChunkSizing sizing = chooseChunkRows(job, *plan, stage, rowCount, rawToPlan);
    const int chunkRows = sizing.rows;
    report.chunkRows = chunkRows;
    report.memoryBudget = sizing.budget;
    const std::vector<int> chunkSizes = job.chunkRows > 0
                                            ? detail::equalChunks(rowCount, chunkRows)
                                            : detail::taperedChunks(rowCount, chunkRows, passSlices(*plan));
    const int chunks = static_cast<int>(chunkSizes.size());
    const Backend* backend = BackendRegistry::instance().find(report.strategy);
    // Otherwise the corrections run on the strategy's GPU when it has one
    // (log-corrected data without corrections only need their NaN check).
    const CorrectionOptions& o = stage.options();
    const bool anyCorrection = o.betweenFlatFieldAndLog() || o.halfAcquisition.enabled;
    std::unique_ptr<ChunkCorrector> corrector;
    if (!rawToPlan && backend && job.gpuCorrections && (anyCorrection || !info.logCorrected))
        corrector = backend->createCorrector(stage, plan->options());
    report.correctedOn = rawToPlan ? plan->options().strategy : corrector ? corrector->where() : "cpu";
    // A CPU plan's memory is host memory: what the chunks leave of the
    // budget bounds its batches, measured after the first one.
    bool limitPlanMemory = backend && backend->family() == "cpu";
    const std::size_t chunkBytes = static_cast<std::size_t>(chunkRows) * chunkRowBytes(info, geometry.region, rawToPlan);
    const std::size_t planBudget = chunkBytes < budgetOf(job) ? budgetOf(job) - chunkBytes : 0;
    const std::size_t sinogramSize =
        static_cast<std::size_t>(stage.outputProjections()) * static_cast<std::size_t>(stage.outputColumns());
    const std::size_t slicePixels = geometry.region.pixels();

    // The conveyor: read -> [read] -> preprocess -> [ready] -> reconstruct ->
    // [reconstructed] -> write, each stage on its own thread. A queue holds
    // one chunk, so memory stays bounded whatever the dataset's size (see
    // chooseChunkRows). Reading and writing overlap: readers and writers of
    // libraries that are not thread-safe (HDF5) serialise their own calls.
    detail::BoundedQueue<Chunk> readQueue(1), ready(1), reconstructed(1);
    // The plan too: an iterative plan's call stops between iterations.
    Stop stop({[&] { readQueue.close(); }, [&] { ready.close(); }, [&] { reconstructed.close(); },
               [&] { plan->cancel(); }});
    BufferMeter meter;
    // The writer hands slices back to the reconstruct stage. The plan
    // allocates them, and the raw rows it corrects itself: a CUDA plan's
    // transfers reach its page-locked memory by DMA alone.
    const auto allocateForPlan = [&plan](std::size_t bytes) { return plan->allocateHost(bytes); };
    detail::HostBufferPool slicePool(allocateForPlan);
    if (rawToPlan) stage.allocateRawWith(allocateForPlan);
    // Every chunk buffer a whole chunk's, allocated ahead on threads of their
    // own (page-locking 1 GiB takes 0.06-0.2 s), while the stages start on
    // the first chunk; the small chunks at either end reuse them. Alive at
    // once: five raw chunks on the GPU path (being read, queued, being
    // flat-fielded, queued, being reconstructed), else three; three of
    // slices (being reconstructed, queued, being written).
    stage.allocateRawAhead(chunkRows, std::min(chunks, rawToPlan ? 5 : 3));
    slicePool.allocateAhead(slicePixels * static_cast<std::size_t>(chunkRows) * sizeof(float), std::min(chunks, 3));
    std::atomic<int> slicesReconstructed{0}, slicesWritten{0};
    std::mutex progressMutex;
    std::condition_variable progressed;
    auto notify = [&] {
        { std::lock_guard lock(progressMutex); }
        progressed.notify_one();
    };
    // Busy times and figures, each written by its own stage's thread only.
    StageTimes planTimes;
    Clock::time_point lastSliceAt = tStart;
    PreprocessStats onCpu, onPlan; // what the stage and the plan found

    auto runStage = [&](auto body) {
        return std::jthread([&, body] {
            try {
                body();
            } catch (...) {
                stop.fail();
            }
            notify();
        });
    };
    // Changes a chunk, keeping the memory meter right.
    auto resized = [&](Chunk& chunk, auto change) {
        const std::size_t before = chunk.bytes();
        change();
        meter.remove(before);
        meter.add(chunk.bytes());
    };
    report.secondsSetup = secondsSince(tStart);
    const auto tStages = Clock::now();
    std::jthread readThread = runStage([&] {
        int hintedEnd = 0; // rows before it were hinted (or read) already
        for (int index = 0, done = 0; index < chunks && !stop.stopped(); done += chunkSizes[index++]) {
            Chunk chunk;
            chunk.first = done;
            chunk.rows = chunkSizes[index];
            const auto t0 = Clock::now();
            // The rows after this chunk, up to a whole chunk's, are asked for
            // while it is read, so the disk's queue stays full across chunk
            // boundaries (a cold 4 GiB scan on the H100 machine's disk: read
            // stage 3.4-3.6 s before, 2.8-3.4 s with). Not while the first
            // chunk is read: everything waits for that one. Each row once.
            const int next = done + chunk.rows, from = std::max(next, hintedEnd);
            const int to = std::min(next + chunkRows, rowCount);
            if (index > 0 && from < to) {
                stage.prefetch(job.firstRow + from, to - from);
                hintedEnd = to;
            }
            chunk.raw = stage.read(job.firstRow + done, chunk.rows);
            report.secondsRead += secondsSince(t0);
            meter.add(chunk.bytes());
            if (!readQueue.push(std::move(chunk))) return;
        }
        readQueue.close();
    });
    std::jthread preprocessThread = runStage([&] {
        while (std::optional<Chunk> chunk = readQueue.pop()) {
            if (stop.stopped()) return;
            const auto t0 = Clock::now();
            resized(*chunk, [&] {
                if (rawToPlan) {
                    PreprocessStats deadPixels;
                    chunk->field = stage.flatFieldRows(chunk->raw, &deadPixels);
                    onCpu.merge(deadPixels);
                } else {
                    PreprocessStats stats;
                    chunk->sinograms = corrector ? corrector->correct(std::move(chunk->raw), &stats)
                                                 : stage.correct(std::move(chunk->raw), &stats);
                    chunk->raw = {};
                    checkClamped(stats.clamped, info, job.firstRow + chunk->first, chunk->rows,
                                 job.maxClampedFraction);
                    onCpu.merge(stats);
                }
            });
            report.secondsPreprocess += secondsSince(t0);
            if (!ready.push(std::move(*chunk))) return;
        }
        ready.close();
    });
    std::jthread reconstructThread = runStage([&] {
        BatchSizer batch(*plan);
        while (std::optional<Chunk> chunk = ready.pop()) {
            if (stop.stopped()) return;
            const auto t0 = Clock::now();
            if (chunk->first == 0) report.secondsLeadIn = std::chrono::duration<double>(t0 - tStages).count();
            resized(*chunk, [&] {
                const std::size_t values = slicePixels * static_cast<std::size_t>(chunk->rows);
                chunk->sliceMemory = slicePool.take(values * sizeof(float));
                chunk->slices = chunk->sliceMemory.as<float>(values);
            });
            const RawRows raw = rawToPlan ? stage.rawRows(chunk->raw) : RawRows{};
            PreprocessStats onPlanInChunk;
            for (int b = 0; b < chunk->rows && !stop.stopped();) {
                const int n = tilted ? 1 : std::min(batch.next(), chunk->rows - b);
                if (tilted)
                    plan->setAxis(job.axisLine->at(job.firstRow + chunk->first + b), geometry.geometry.axisOffsets);
                const auto tBatch = Clock::now();
                const std::span<float> out = chunk->slices.subspan(b * slicePixels, n * slicePixels);
                if (rawToPlan)
                    onPlanInChunk.merge(plan->reconstructRaw(rowsOf(raw, b, n), rowsOf(chunk->field, b, n), out));
                else
                    plan->reconstruct(
                        std::span<const float>(chunk->sinograms.data).subspan(b * sinogramSize, n * sinogramSize), n,
                        out);
                batch.record(n, secondsSince(tBatch));
                if (limitPlanMemory) {
                    batch.limitMemory(plan->memoryBytes() / static_cast<std::size_t>(n), planBudget);
                    limitPlanMemory = false;
                }
                const StageTimes t = plan->lastStageTimes();
                planTimes.upload += t.upload;
                planTimes.filter += t.filter;
                planTimes.backproject += t.backproject;
                planTimes.download += t.download;
                planTimes.compute += t.compute;
                b += n;
                slicesReconstructed += n;
                notify();
            }
            // Before the writer sees the chunk: broken data never reach the output.
            checkClamped(onPlanInChunk.clamped, info, job.firstRow + chunk->first, chunk->rows,
                         job.maxClampedFraction);
            onPlan.merge(onPlanInChunk);
            resized(*chunk, [&] {
                stage.recycle(std::move(chunk->sinograms));
                stage.recycle(std::move(chunk->raw));
                chunk->field = {};
            });
            report.secondsReconstruct += secondsSince(t0);
            lastSliceAt = Clock::now();
            if (!reconstructed.push(std::move(*chunk))) return;
        }
        reconstructed.close();
    });
    std::jthread writeThread = runStage([&] {
        while (std::optional<Chunk> chunk = reconstructed.pop()) {
            if (stop.stopped()) return;
            const auto t0 = Clock::now();
            writer.writeSlices(chunk->first, chunk->rows, chunk->slices);
            report.secondsWrite += secondsSince(t0);
            meter.remove(chunk->bytes());
            chunk->slices = {};
            slicePool.give(std::move(chunk->sliceMemory));
            slicesWritten += chunk->rows;
            notify();
        }
    });

    // Progress on the caller's thread: half the way for reconstructing a
    // slice, half for writing it, so the last call (1.0) means all written.
    // An iterative plan's batch may take minutes: for it the call repeats
    // every kHeartbeat while nothing moves, so a Cancelled thrown from the
    // callback stops the batch between iterations (Stop cancels the plan).
    constexpr auto kHeartbeat = std::chrono::milliseconds(500);
    const bool heartbeat = plan->options().iterative.isIterative();
    int reported = 0; // nothing to say before the first slice
    auto reportedAt = Clock::now();
    for (;;) {
        const bool finished = slicesWritten == rowCount || stop.stopped(); // before the score: it may rise meanwhile
        const int score = slicesReconstructed + slicesWritten;
        const bool beat = heartbeat && Clock::now() - reportedAt >= kHeartbeat;
        if (progress && (score != reported || beat) && !stop.stopped()) {
            reported = score;
            reportedAt = Clock::now();
            try {
                progress(0.5 * score / rowCount, slicesWritten == rowCount ? "written" : "reconstructing");
            } catch (...) {
                stop.fail();
            }
        }
        if (finished) break;
        std::unique_lock lock(progressMutex);
        progressed.wait_for(lock, std::chrono::milliseconds(100),
                            [&] { return slicesReconstructed + slicesWritten != score || stop.stopped(); });
    }
    for (std::jthread* t : {&readThread, &preprocessThread, &reconstructThread, &writeThread}) t->join();
    stop.rethrow();

    auto t0 = Clock::now();
    writer.commit();
    report.secondsWrite += secondsSince(t0);

    report.slices = rowCount;
    report.preprocess = std::move(onCpu);
    report.preprocess.merge(onPlan);
    report.warnings = stage.warnings();
    if (corrector) report.preprocessSteps = corrector->stepSeconds();
    report.plan = planTimes;
    report.peakBufferBytes = meter.peak();
    report.secondsTotal = secondsSince(tStart);
    report.secondsTail = secondsSince(lastSliceAt);
    if (report.secondsReconstruct > 0.0)
        report.gups = static_cast<double>(slicePixels) * report.slices * geometry.geometry.projections() /
                      report.secondsReconstruct / 1e9;
    return report;
}

} // namespace tomo
