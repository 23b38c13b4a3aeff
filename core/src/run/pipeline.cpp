#include "tomo/pipeline.h"

#include "tomo/error.h"
#include "tomo/flat_field.h"
#include "tomo/registry.h"
#include "tomo/worker_pool.h"

#include "run/bounded_queue.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <unistd.h>

namespace tomo {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Forwards to another reader and adds up the time spent in it, so the
/// report can name the read stage's busy time.
class TimedReader : public DatasetReader {
    template <class Read>
    auto timed(Read read) {
        struct AddTime {
            double& total;
            Clock::time_point t0 = Clock::now();
            ~AddTime() { total += secondsSince(t0); }
        } add{m_seconds};
        return read();
    }

public:
    explicit TimedReader(DatasetReader& inner) : m_inner(inner) {
        m_info = inner.info();
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        timed([&] { m_inner.readSinograms(firstRow, rowCount, out); });
    }
    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        return timed([&] { return m_inner.readMeanFlat(firstRow, rowCount, out); });
    }
    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        return timed([&] { return m_inner.readMeanDark(firstRow, rowCount, out); });
    }
    void readRawRows(int firstRow, int rowCount, std::span<std::byte> out) override {
        timed([&] { m_inner.readRawRows(firstRow, rowCount, out); });
    }
    void readFlatGroup(int group, int firstRow, int rowCount, std::span<float> out) override {
        timed([&] { m_inner.readFlatGroup(group, firstRow, rowCount, out); });
    }

    /// Time spent in the reader (not waiting for the lock).
    double seconds() const { return m_seconds; }

private:
    DatasetReader& m_inner;
    double m_seconds = 0.0;
};

/// The job's geometry completed from the dataset: angles when none are
/// given, detector width, and the full slice grid / region when unset.
ReconGeometry completeGeometry(const ReconGeometry& given, const DatasetInfo& info) {
    ReconGeometry g = given;
    if (g.geometry.angles.empty()) g.geometry.angles = info.angles;
    if (g.geometry.projections() != info.projections)
        throw InvalidArgument("the geometry has " + std::to_string(g.geometry.projections()) + " angles but '" +
                              info.path.string() + "' has " + std::to_string(info.projections) + " projections");
    if (g.geometry.bins == 0) g.geometry.bins = info.columns;
    if (g.geometry.bins != info.columns)
        throw InvalidArgument("the geometry has " + std::to_string(g.geometry.bins) + " detector bins but '" +
                              info.path.string() + "' has " + std::to_string(info.columns) + " columns");
    if (g.sliceWidth == 0 && g.sliceHeight == 0) {
        g.sliceWidth = g.geometry.bins;
        g.sliceHeight = g.geometry.bins;
    }
    if (g.region.width == 0 && g.region.height == 0) g.region = Region{0, 0, g.sliceWidth, g.sliceHeight};
    g.geometry.validate();
    g.validate();
    return g;
}

/// Rows per chunk: what the job asks for, else as many as fit in the memory
/// budget, a whole number of plan batches. The conveyor holds at most, per
/// chunk row: five raw rows (being read, queued, being corrected, and on the
/// GPU path queued and being reconstructed), four float sinogram rows (the
/// three of the CPU path and the reader's scratch of the default
/// readRawRows) and three slices (being reconstructed, queued, being
/// written); see reconstructVolume.
int chooseChunkRows(const VolumeJob& job, const ReconstructionPlan& plan, const DatasetInfo& info, int rowCount) {
    if (job.chunkRows > 0) return std::min(job.chunkRows, rowCount);
    const std::size_t budget = job.memoryBudget > 0 ? job.memoryBudget : defaultMemoryBudget();
    const std::size_t values = static_cast<std::size_t>(info.projections) * info.columns;
    const std::size_t raw = values * sampleBytes(info.sampleType);
    const std::size_t slice = sizeof(float) * plan.geometry().region.pixels();
    const std::size_t rowBytes = 5 * raw + 4 * sizeof(float) * values + 3 * slice;
    const int fit = static_cast<int>(std::clamp<std::size_t>(budget / rowBytes, 1, rowCount));
    const int batch = std::max(1, plan.maxSlices());
    return fit >= batch ? fit / batch * batch : fit;
}

/// Buffers handed back by a later stage for an earlier one to fill again:
/// no allocation and no zero-filling per chunk (a 2048^2 slice is 16 MiB).
template <class T>
class BufferPool {
public:
    /// A vector of `size` values, recycled when one is free.
    std::vector<T> take(std::size_t size) {
        std::vector<T> out;
        {
            std::lock_guard lock(m_mutex);
            if (!m_free.empty()) {
                out = std::move(m_free.back());
                m_free.pop_back();
            }
        }
        out.resize(size);
        return out;
    }
    void give(std::vector<T>&& v) {
        if (v.capacity() == 0) return;
        std::lock_guard lock(m_mutex);
        m_free.push_back(std::move(v));
        v = {};
    }

private:
    std::mutex m_mutex;
    std::vector<std::vector<T>> m_free;
};

/// Slices per plan call: as many as the plan takes, but few enough that
/// progress (and so Ctrl-C / Cancel) comes about every kStepSeconds even on
/// a slow backend with large slices. The first call is small to measure.
class BatchSizer {
public:
    explicit BatchSizer(const ReconstructionPlan& plan) :
        m_max(std::max(1, plan.maxSlices())), m_multiple(std::clamp(plan.options().slicesPerPass, 1, m_max)),
        m_next(m_multiple) {}

    int next() const { return m_next; }

    void record(int slices, double seconds) {
        constexpr double kStepSeconds = 1.0;
        const double perSlice = seconds / slices;
        const int fit = perSlice > 0.0 ? static_cast<int>(std::min<double>(kStepSeconds / perSlice, m_max)) : m_max;
        m_next = std::clamp(fit / m_multiple * m_multiple, m_multiple, m_max);
    }

private:
    int m_max;
    int m_multiple; // whole passes of slicesPerPass
    int m_next;
};

/// One chunk of rows on its way through the conveyor: raw values with their
/// flat and dark fields (read), then sinograms (preprocessed on the CPU; a
/// plan that corrects raw rows itself keeps the raw values), then slices.
struct Chunk {
    int first = 0; ///< index in the job's range of the chunk's first row
    int rows = 0;
    std::vector<std::byte> raw; ///< readRawRows: projection order, stored type
    std::vector<float> flat, dark;
    FlatFieldRows field;
    ImageStack sinograms;
    std::vector<float> slices;

    std::size_t bytes() const {
        return raw.size() + (flat.size() + dark.size() + field.dark.size() + field.scale.size() +
                             sinograms.data.size() + slices.size()) * sizeof(float);
    }
};

/// The chunk's raw values as RawRows (rows of the job's range from `firstRow`).
RawRows rawRowsOf(const Chunk& chunk, const DatasetInfo& info, int firstRow) {
    return {info.sampleType, chunk.raw,  info.projections, chunk.rows, info.columns,
            chunk.rows,      info.path.string(), firstRow + chunk.first};
}

int hardwareThreads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

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

} // namespace

std::size_t defaultMemoryBudget() {
    constexpr std::size_t kGiB = std::size_t{1} << 30;
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    const std::size_t physical = pages > 0 && pageSize > 0 ? static_cast<std::size_t>(pages) * pageSize : 8 * kGiB;
    return std::clamp(physical / 8, kGiB, 16 * kGiB);
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

    ReconGeometry geometry = completeGeometry(job.geometry, info);
    if (job.axisLine) {
        job.axisLine->validate();
        geometry.geometry.axis = job.axisLine->at(job.firstRow);
    }
    const bool tilted = job.axisLine && job.axisLine->tilt != 0.0;
    std::unique_ptr<ReconstructionPlan> plan = createPlan(geometry, job.options);

    VolumeReport report;
    report.strategy = plan->options().strategy;
    const int chunkRows = chooseChunkRows(job, *plan, info, rowCount);
    report.chunkRows = chunkRows;
    const std::size_t sinogramSize = static_cast<std::size_t>(info.projections) * info.columns;
    const std::size_t slicePixels = geometry.region.pixels();

    // The conveyor: read -> [read] -> preprocess -> [ready] -> reconstruct ->
    // [reconstructed] -> write, each stage on its own thread. A queue holds
    // one chunk, so memory stays bounded whatever the dataset's size (see
    // chooseChunkRows). Reading and writing overlap: readers and writers of
    // libraries that are not thread-safe (HDF5) serialise their own calls.
    detail::BoundedQueue<Chunk> readQueue(1), ready(1), reconstructed(1);
    Stop stop({[&] { readQueue.close(); }, [&] { ready.close(); }, [&] { reconstructed.close(); }});
    TimedReader timed(reader);
    BufferMeter meter;
    BufferPool<std::byte> rawPool;
    BufferPool<float> floatPool, slicePool;
    std::atomic<int> slicesReconstructed{0}, slicesWritten{0};
    std::mutex progressMutex;
    std::condition_variable progressed;
    auto notify = [&] {
        { std::lock_guard lock(progressMutex); }
        progressed.notify_one();
    };
    // Busy times and counts, each written by its own stage's thread only.
    double secondsCheck = 0.0; // NaN check of log-corrected data (in the read stage)
    StageTimes planTimes;
    std::size_t clampedOnCpu = 0, clampedOnPlan = 0;
    const bool rawToPlan = plan->correctsRawRows();

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
    // Pass a chunk on, keeping the memory meter right.
    auto resized = [&](Chunk& chunk, auto change) {
        const std::size_t before = chunk.bytes();
        change();
        meter.remove(before);
        meter.add(chunk.bytes());
    };
    std::jthread readThread = runStage([&] {
        for (int done = 0; done < rowCount && !stop.stopped();) {
            Chunk chunk;
            chunk.first = done;
            chunk.rows = std::min(chunkRows, rowCount - done);
            const int firstRow = job.firstRow + done;
            if (info.logCorrected) {
                // Already line integrals: read as sinograms, checked for NaN/inf.
                const double before = timed.seconds();
                const auto t0 = Clock::now();
                chunk.sinograms = loadSinograms(timed, firstRow, chunk.rows);
                secondsCheck += secondsSince(t0) - (timed.seconds() - before);
            } else {
                const std::size_t perRow = static_cast<std::size_t>(info.projections) * info.columns;
                chunk.raw = rawPool.take(perRow * chunk.rows * sampleBytes(info.sampleType));
                timed.readRawRows(firstRow, chunk.rows, chunk.raw);
                const std::size_t field = static_cast<std::size_t>(chunk.rows) * info.columns;
                chunk.flat.resize(field);
                chunk.dark.resize(field);
                if (!timed.readMeanFlat(firstRow, chunk.rows, chunk.flat)) chunk.flat.clear();
                if (!timed.readMeanDark(firstRow, chunk.rows, chunk.dark)) chunk.dark.clear();
            }
            meter.add(chunk.bytes());
            done += chunk.rows;
            if (!readQueue.push(std::move(chunk))) return;
        }
        readQueue.close();
    });
    double secondsPreprocessStage = 0.0;
    std::jthread preprocessThread = runStage([&] {
        std::unique_ptr<WorkerPool> pool;
        while (std::optional<Chunk> chunk = readQueue.pop()) {
            if (stop.stopped()) return;
            const auto t0 = Clock::now();
            if (!chunk->raw.empty()) {
                const RawRows raw = rawRowsOf(*chunk, info, job.firstRow);
                resized(*chunk, [&] {
                    chunk->field = makeFlatFieldRows(chunk->flat, chunk->dark, chunk->rows, info.columns,
                                                     info.path.string(), raw.firstRow);
                    chunk->flat = {};
                    chunk->dark = {};
                });
                if (!rawToPlan) {
                    if (!pool) pool = std::make_unique<WorkerPool>(hardwareThreads());
                    resized(*chunk, [&] {
                        ImageStack& sinograms = chunk->sinograms;
                        sinograms.width = info.columns;
                        sinograms.height = info.projections;
                        sinograms.depth = chunk->rows;
                        sinograms.data = floatPool.take(sinogramSize * static_cast<std::size_t>(chunk->rows));
                        clampedOnCpu += flatFieldRawRows(raw, chunk->field, sinograms.data, pool.get()).clamped;
                        rawPool.give(std::move(chunk->raw));
                        chunk->field = {};
                    });
                }
            }
            secondsPreprocessStage += secondsSince(t0);
            if (!ready.push(std::move(*chunk))) return;
        }
        ready.close();
    });
    std::jthread reconstructThread = runStage([&] {
        BatchSizer batch(*plan);
        while (std::optional<Chunk> chunk = ready.pop()) {
            if (stop.stopped()) return;
            const auto t0 = Clock::now();
            resized(*chunk, [&] { chunk->slices = slicePool.take(slicePixels * static_cast<std::size_t>(chunk->rows)); });
            const RawRows raw = chunk->raw.empty() ? RawRows{} : rawRowsOf(*chunk, info, job.firstRow);
            for (int b = 0; b < chunk->rows && !stop.stopped();) {
                const int n = tilted ? 1 : std::min(batch.next(), chunk->rows - b);
                if (tilted)
                    plan->setAxis(job.axisLine->at(job.firstRow + chunk->first + b), geometry.geometry.axisOffsets);
                const auto tBatch = Clock::now();
                const std::span<float> out = std::span<float>(chunk->slices).subspan(b * slicePixels, n * slicePixels);
                if (chunk->raw.empty())
                    plan->reconstruct(
                        std::span<const float>(chunk->sinograms.data).subspan(b * sinogramSize, n * sinogramSize), n,
                        out);
                else
                    clampedOnPlan += plan->reconstructRaw(rowsOf(raw, b, n), rowsOf(chunk->field, b, n), out).clamped;
                batch.record(n, secondsSince(tBatch));
                const StageTimes t = plan->lastStageTimes();
                planTimes.upload += t.upload;
                planTimes.filter += t.filter;
                planTimes.backproject += t.backproject;
                planTimes.download += t.download;
                b += n;
                slicesReconstructed += n;
                notify();
            }
            resized(*chunk, [&] {
                floatPool.give(std::move(chunk->sinograms.data));
                chunk->sinograms = {};
                rawPool.give(std::move(chunk->raw));
                chunk->field = {};
            });
            report.secondsReconstruct += secondsSince(t0);
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
            slicePool.give(std::move(chunk->slices));
            slicesWritten += chunk->rows;
            notify();
        }
    });

    // Progress on the caller's thread: half the way for reconstructing a
    // slice, half for writing it, so the last call (1.0) means all written.
    int reported = 0; // nothing to say before the first slice
    for (;;) {
        const bool finished = slicesWritten == rowCount || stop.stopped(); // before the score: it may rise meanwhile
        const int score = slicesReconstructed + slicesWritten;
        if (progress && score != reported && !stop.stopped()) {
            reported = score;
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
    report.secondsRead = timed.seconds();
    report.secondsPreprocess = secondsPreprocessStage + secondsCheck;
    report.preprocess.clamped = clampedOnCpu + clampedOnPlan;
    report.plan = planTimes;
    report.peakBufferBytes = meter.peak();
    report.secondsTotal = secondsSince(tStart);
    if (report.secondsReconstruct > 0.0)
        report.gups =
            static_cast<double>(slicePixels) * report.slices * info.projections / report.secondsReconstruct / 1e9;
    return report;
}

} // namespace tomo
