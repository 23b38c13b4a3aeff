#include "tomo/pipeline.h"

#include "tomo/error.h"
#include "tomo/registry.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <vector>

namespace tomo {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Forwards to another reader and adds up the time spent in it, so the
/// report can split loadSinograms() into reading and preprocessing.
class TimedReader : public DatasetReader {
public:
    explicit TimedReader(DatasetReader& inner) : m_inner(inner) { m_info = inner.info(); }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        auto t0 = Clock::now();
        m_inner.readSinograms(firstRow, rowCount, out);
        m_seconds += secondsSince(t0);
    }
    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        auto t0 = Clock::now();
        bool found = m_inner.readMeanFlat(firstRow, rowCount, out);
        m_seconds += secondsSince(t0);
        return found;
    }
    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        auto t0 = Clock::now();
        bool found = m_inner.readMeanDark(firstRow, rowCount, out);
        m_seconds += secondsSince(t0);
        return found;
    }

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

/// Host memory for the chunk buffers and a CPU plan's working copies.
constexpr std::size_t kBudgetBytes = std::size_t{1} << 30;

/// Bytes of the chunk buffers per row: three sinograms (the chunk being
/// reconstructed, the next one being read, and the reader's staging copy:
/// the HDF5 readers read frames, then reorder them into it) and one slice.
std::size_t chunkRowBytes(const DatasetInfo& info, const Region& region) {
    return sizeof(float) * (3 * static_cast<std::size_t>(info.projections) * info.columns + region.pixels());
}

/// Rows per chunk: what the job asks for, else as many as fit in the memory
/// budget with room for two more sinograms per row (a CPU plan's filtered
/// and packed copies of a batch, which never exceeds a chunk), a whole
/// number of plan batches.
int chooseChunkRows(const VolumeJob& job, const ReconstructionPlan& plan, const DatasetInfo& info, int rowCount) {
    if (job.chunkRows > 0) return std::min(job.chunkRows, rowCount);
    const std::size_t rowBytes = chunkRowBytes(info, plan.geometry().region) +
                                 2 * sizeof(float) * static_cast<std::size_t>(info.projections) * info.columns;
    const int fit = static_cast<int>(std::clamp<std::size_t>(kBudgetBytes / rowBytes, 1, rowCount));
    const int batch = std::max(1, plan.maxSlices());
    return fit >= batch ? fit / batch * batch : fit;
}

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

/// One chunk of log-corrected sinograms and what it took to get them.
struct LoadedChunk {
    ImageStack sinograms;
    PreprocessStats stats;
    double secondsRead = 0.0;
    double secondsPreprocess = 0.0;
};

/// Throws TooManyClampedValues when more than `limit` of the values of rows
/// [firstRow, firstRow + rows) were clamped.
void checkClamped(const PreprocessStats& stats, const DatasetInfo& info, int firstRow, int rows, double limit) {
    const double values = static_cast<double>(rows) * info.projections * info.columns;
    const double fraction = static_cast<double>(stats.clamped) / values;
    if (fraction <= limit) return;
    char text[160];
    std::snprintf(text, sizeof text, "%.3g %% of the values (%zu of %.0f) have no positive transmission", 100.0 * fraction,
                  stats.clamped, values);
    char allowed[48];
    std::snprintf(allowed, sizeof allowed, "%.3g %%", 100.0 * limit);
    throw TooManyClampedValues("rows " + std::to_string(firstRow) + ".." + std::to_string(firstRow + rows - 1) + " of " +
                               info.path.string() + ": " + text +
                               " (raw <= dark or flat <= dark) and would be clamped; expected at most " + allowed +
                               " (flat fields all zero or equal to the darks, or data never written?)");
}

} // namespace

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

    const ReconGeometry geometry = completeGeometry(job.geometry, info);
    std::unique_ptr<ReconstructionPlan> plan = createPlan(geometry, job.options);

    VolumeReport report;
    report.strategy = plan->options().strategy;

    const int chunkRows = chooseChunkRows(job, *plan, info, rowCount);
    BatchSizer batch(*plan);
    // A CPU plan's memory is host memory: what the chunks leave of the
    // budget bounds its batches, measured after the first one.
    const Backend* backend = BackendRegistry::instance().find(report.strategy);
    bool limitPlanMemory = backend && backend->family() == "cpu";
    const std::size_t chunkBytes = static_cast<std::size_t>(chunkRows) * chunkRowBytes(info, geometry.region);
    const std::size_t planBudget = chunkBytes < kBudgetBytes ? kBudgetBytes - chunkBytes : 0;
    const std::size_t sinogramSize = static_cast<std::size_t>(info.projections) * info.columns;
    const std::size_t slicePixels = geometry.region.pixels();
    std::vector<float> slices(slicePixels * static_cast<std::size_t>(chunkRows));

    // The next chunk is read and preprocessed on a second thread while this
    // one is reconstructed (a GPU back-projects a row faster than a disk
    // delivers it). The reader and the writer are never used at the same
    // time: file libraries such as HDF5 are not thread-safe.
    TimedReader timed(reader);
    auto load = [&](int done) {
        LoadedChunk chunk;
        const double readBefore = timed.seconds();
        const auto t0 = Clock::now();
        chunk.sinograms = loadSinograms(timed, job.firstRow + done, std::min(chunkRows, rowCount - done), &chunk.stats);
        chunk.secondsRead = timed.seconds() - readBefore;
        chunk.secondsPreprocess = secondsSince(t0) - chunk.secondsRead;
        return chunk;
    };
    std::future<LoadedChunk> next = std::async(std::launch::async, load, 0);

    for (int done = 0; done < rowCount;) {
        const int rows = std::min(chunkRows, rowCount - done);
        const LoadedChunk chunk = next.get();
        checkClamped(chunk.stats, info, job.firstRow + done, rows, job.maxClampedFraction);
        report.preprocess.clamped += chunk.stats.clamped;
        report.secondsRead += chunk.secondsRead;
        report.secondsPreprocess += chunk.secondsPreprocess;
        if (done + rows < rowCount) next = std::async(std::launch::async, load, done + rows);

        auto t0 = Clock::now();
        for (int b = 0; b < rows;) {
            const int n = std::min(batch.next(), rows - b);
            const auto tBatch = Clock::now();
            plan->reconstruct(std::span<const float>(chunk.sinograms.data).subspan(b * sinogramSize, n * sinogramSize),
                              n, std::span<float>(slices).subspan(b * slicePixels, n * slicePixels));
            batch.record(n, secondsSince(tBatch));
            if (limitPlanMemory) {
                batch.limitMemory(plan->memoryBytes() / static_cast<std::size_t>(n), planBudget);
                limitPlanMemory = false;
            }
            b += n;
            if (progress && b < rows) progress(static_cast<double>(done + b) / rowCount, "reconstructing");
        }
        report.secondsReconstruct += secondsSince(t0);

        if (next.valid()) next.wait(); // the reader is done before the writer starts
        t0 = Clock::now();
        writer.writeSlices(done, rows, std::span<const float>(slices).first(rows * slicePixels));
        report.secondsWrite += secondsSince(t0);

        done += rows;
        report.slices = done;
        if (progress) progress(static_cast<double>(done) / rowCount, "reconstructing");
    }

    auto t0 = Clock::now();
    writer.commit();
    report.secondsWrite += secondsSince(t0);

    report.secondsTotal = secondsSince(tStart);
    if (report.secondsReconstruct > 0.0)
        report.gups =
            static_cast<double>(slicePixels) * report.slices * info.projections / report.secondsReconstruct / 1e9;
    return report;
}

} // namespace tomo
