// The conveyor with several lanes (VolumeJob::devices): CPU "devices" give
// the same slices bit for bit as one lane, for row counts that do not divide
// evenly; a slow lane takes fewer chunks, so chunks reach the writer out of
// order and every writer takes that; progress, cancel and a lane's error
// behave as with one lane; the preprocessing stage and the worker pool are
// safe to use from several lanes at once.
#include "pipeline_test_helpers.h"
#include "run/chunk_schedule.h"

#include "tomo/error.h"
#include "tomo/registry.h"
#include "tomo/worker_pool.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <map>
#include <numeric>

namespace tomo {
namespace {

using namespace test;

/// cpu-reference as "test-lanes", whose plans can be held back or fail by
/// device, so that which lane takes what does not depend on timing: the
/// other devices' plans wait, before their first reconstruct(), until the
/// plan of `leadDevice` has begun its first; the plan of `heldDevice` waits
/// there until the others have made `releaseAfter` calls (or `holdAtMost`
/// passed); the plan of `failingDevice` throws DeviceError at its
/// `failAt`-th call. Registered once for the process.
class LaneTestBackend final : public Backend {
public:
    static LaneTestBackend& instance() { return test::registeredOnce<LaneTestBackend>(); }

    /// Back to no holding and no failure, no calls counted.
    void reset() {
        std::lock_guard lock(m_mutex);
        leadDevice = heldDevice = failingDevice = -1;
        releaseAfter = failAt = 0;
        holdAtMost = std::chrono::seconds(60);
        m_leadBegun = false;
        m_otherCalls = 0;
        m_callsByDevice.clear();
    }
    int calls(int device) {
        std::lock_guard lock(m_mutex);
        return m_callsByDevice[device];
    }

    int leadDevice = -1;
    int heldDevice = -1, releaseAfter = 0;
    std::chrono::milliseconds holdAtMost{60000};
    int failingDevice = -1, failAt = 0;

    std::string name() const override { return "test-lanes"; }
    std::string description() const override { return "test: cpu-reference held back or failing by device"; }
    std::string family() const override { return "cpu"; }
    bool isExact() const override { return false; } // never a candidate of "auto"
    std::string unavailableReason() const override { return {}; }
    void checkOptions(const ReconOptions& options) const override { inner().checkOptions(named(options)); }
    std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry,
                                                   const ReconOptions& options) const override;

    /// Called by a plan before each reconstruct(): waits, holds, fails or counts.
    void beforeCall(int device) {
        std::unique_lock lock(m_mutex);
        const int call = ++m_callsByDevice[device];
        if (device == leadDevice) {
            m_leadBegun = true;
            m_changed.notify_all();
        } else if (leadDevice >= 0 && call == 1) {
            m_changed.wait_for(lock, holdAtMost, [&] { return m_leadBegun; });
        }
        if (device == failingDevice && call == failAt)
            throw DeviceError("test device " + std::to_string(device) + " failed at call " + std::to_string(call));
        if (device == heldDevice) {
            if (call == 1) m_changed.wait_for(lock, holdAtMost, [&] { return m_otherCalls >= releaseAfter; });
            return;
        }
        ++m_otherCalls;
        m_changed.notify_all();
    }

private:
    static const Backend& inner() { return *BackendRegistry::instance().find("cpu-reference"); }
    static ReconOptions named(ReconOptions o) {
        o.strategy = "cpu-reference";
        return o;
    }

    std::mutex m_mutex;
    std::condition_variable m_changed;
    bool m_leadBegun = false;
    int m_otherCalls = 0;
    std::map<int, int> m_callsByDevice;
};

class LaneTestPlan final : public ReconstructionPlan {
public:
    LaneTestPlan(std::unique_ptr<ReconstructionPlan> inner, const ReconOptions& options, LaneTestBackend& backend)
        : ReconstructionPlan(inner->geometry(), options), m_inner(std::move(inner)), m_backend(backend) {}
    void setSinograms(std::span<const float> s, int count) override { m_inner->setSinograms(s, count); }
    void backproject(std::span<float> slices) override { m_inner->backproject(slices); }
    void setAxis(double axis, std::span<const double> offsets) override { m_inner->setAxis(axis, offsets); }
    void setRegion(const Region& region) override { m_inner->setRegion(region); }
    int maxSlices() const override { return m_inner->maxSlices(); }
    std::size_t memoryBytes() const override { return m_inner->memoryBytes(); }
    void reconstruct(std::span<const float> sinograms, int count, std::span<float> slices) override {
        m_backend.beforeCall(m_options.device);
        m_inner->reconstruct(sinograms, count, slices);
    }

private:
    std::unique_ptr<ReconstructionPlan> m_inner;
    LaneTestBackend& m_backend;
};

std::unique_ptr<ReconstructionPlan> LaneTestBackend::createPlan(const ReconGeometry& geometry,
                                                                const ReconOptions& options) const {
    return std::make_unique<LaneTestPlan>(inner().createPlan(geometry, named(options)), options,
                                          const_cast<LaneTestBackend&>(*this));
}

/// The backend reset, for one test.
LaneTestBackend& freshLaneBackend() {
    LaneTestBackend& b = LaneTestBackend::instance();
    b.reset();
    return b;
}

constexpr int kManyRows = 13; // prime: no chunk size or lane count divides it

/// The volume of `job` through one lane: what the lanes must give.
MemoryWriter oneLane(CountsReader& reader, VolumeJob job) {
    job.devices.clear();
    MemoryWriter writer(kBins, kBins, reader.info().rows);
    reconstructVolume(reader, job, writer);
    return writer;
}

/// Whether the writes came in another order than the rows'.
bool outOfOrder(const std::vector<std::pair<int, int>>& writes) {
    for (std::size_t i = 1; i < writes.size(); ++i)
        if (writes[i].first < writes[i - 1].first) return true;
    return false;
}

/// Every slice written exactly once.
void expectEachSliceOnce(const std::vector<std::pair<int, int>>& writes, int slices) {
    std::vector<int> times(static_cast<std::size_t>(slices), 0);
    for (const auto& [first, count] : writes)
        for (int z = first; z < first + count; ++z) ++times[static_cast<std::size_t>(z)];
    for (int z = 0; z < slices; ++z) EXPECT_EQ(times[static_cast<std::size_t>(z)], 1) << "slice " << z;
}

TEST(PipelineLanes, SeveralCpuLanesGiveTheSlicesOfOneLaneBitForBit) {
    Scan scan = makeScan(kManyRows);
    CountsReader reader(scan.lineIntegrals, scan.angles);
    for (const std::string strategy : {"cpu-reference", "cpu"}) {
        for (const int chunkRows : {0, 2, 3}) { // the conveyor's tapered chunks, and equal ones with a remainder
            SCOPED_TRACE(strategy + ", chunkRows " + std::to_string(chunkRows));
            VolumeJob job = jobFor(scan, strategy, chunkRows);
            const MemoryWriter one = oneLane(reader, job);
            for (const std::vector<int>& devices : {std::vector<int>{0, 1}, std::vector<int>{2, 0, 1}}) {
                job.devices = devices;
                MemoryWriter many(kBins, kBins, kManyRows);
                const VolumeReport report = reconstructVolume(reader, job, many);
                EXPECT_TRUE(many.committed);
                expectEachSliceOnce(many.writes, kManyRows);
                EXPECT_EQ(many.volume.data, one.volume.data);
                ASSERT_EQ(report.lanes.size(), devices.size());
                int chunks = 0, slices = 0;
                for (std::size_t i = 0; i < devices.size(); ++i) {
                    EXPECT_EQ(report.lanes[i].device, devices[i]);
                    EXPECT_EQ(report.lanes[i].strategy, strategy);
                    EXPECT_EQ(report.lanes[i].correctedOn, "cpu");
                    chunks += report.lanes[i].chunks;
                    slices += report.lanes[i].slices;
                    EXPECT_LE(report.lanes[i].secondsReconstruct, report.secondsReconstruct);
                }
                EXPECT_EQ(chunks, static_cast<int>(many.writes.size()));
                EXPECT_EQ(slices, kManyRows);
                EXPECT_EQ(report.slices, kManyRows);
                EXPECT_EQ(report.strategy, strategy);
            }
        }
    }
    // Not a trivial volume: the phantom is there.
    const ImageStack expected = oneShot(reader, scan.geometry, optionsFor("cpu-reference"));
    EXPECT_GT(*std::max_element(expected.data.begin(), expected.data.end()), 0.005f);
}

TEST(PipelineLanes, ASlowLaneTakesFewerChunksAndTheirSlicesArriveOutOfOrder) {
    LaneTestBackend& backend = freshLaneBackend();
    Scan scan = makeScan(kManyRows);
    CountsReader reader(scan.lineIntegrals, scan.angles);
    VolumeJob job = jobFor(scan, "cpu-reference", 1);
    const MemoryWriter reference = oneLane(reader, job);

    // Device 1 begins first and holds its first chunk until device 0 has
    // reconstructed 10: meanwhile it holds at most three (being corrected,
    // queued, being reconstructed), and what is left after the ten goes to
    // either: device 1 takes at most three, whatever the timing.
    job.options.strategy = "test-lanes";
    job.devices = {0, 1};
    backend.leadDevice = backend.heldDevice = 1;
    backend.releaseAfter = kManyRows - 3;
    MemoryWriter writer(kBins, kBins, kManyRows);
    const VolumeReport report = reconstructVolume(reader, job, writer);

    EXPECT_EQ(writer.volume.data, reference.volume.data);
    expectEachSliceOnce(writer.writes, kManyRows);
    EXPECT_TRUE(outOfOrder(writer.writes)) << "device 1's first chunk was written after later ones";
    ASSERT_EQ(report.lanes.size(), 2u);
    EXPECT_GE(report.lanes[0].chunks, kManyRows - 3);
    EXPECT_LE(report.lanes[1].chunks, 3);
    EXPECT_GE(report.lanes[1].chunks, 1);
    EXPECT_EQ(report.lanes[0].chunks + report.lanes[1].chunks, kManyRows);
}

/// Writes a volume of the scan through `job` into `target` and reads it back.
ImageStack writtenThrough(CountsReader& reader, const VolumeJob& job, const std::filesystem::path& target) {
    WriteOptions options;
    options.threads = 2;
    auto writer = createVolumeWriter(target, kBins, kBins, kManyRows, options);
    reconstructVolume(reader, job, *writer);
    return readVolume(target);
}

TEST(PipelineLanes, EveryWriterTakesChunksOutOfOrder) {
    LaneTestBackend& backend = freshLaneBackend();
    Scan scan = makeScan(kManyRows);
    CountsReader reader(scan.lineIntegrals, scan.angles);
    VolumeJob job = jobFor(scan, "cpu-reference", 2);
    const MemoryWriter reference = oneLane(reader, job);
    job.options.strategy = "test-lanes";
    job.devices = {0, 1};

    std::vector<std::string> targets;
#if TOMO_WITH_HDF5
    targets.push_back("volume.h5");
#endif
#if TOMO_WITH_TIFF
    targets.push_back("volume.tif"); // multi-page: pages appended in order
    targets.push_back("slices");     // a folder, one file per slice
#endif
    if (targets.empty()) GTEST_SKIP() << "this build writes neither HDF5 nor TIFF";
    for (const std::string& name : targets) {
        SCOPED_TRACE(name);
        backend.reset();
        backend.leadDevice = backend.heldDevice = 1;
        backend.releaseAfter = 3;
        test::TempDir dir;
        const ImageStack volume = writtenThrough(reader, job, dir / name);
        EXPECT_GE(backend.calls(0), 3) << "device 0 wrote chunks while device 1 held its first";
        ASSERT_EQ(volume.data.size(), reference.volume.data.size());
        EXPECT_EQ(volume.data, reference.volume.data);
    }
}

/// A writer that holds early slices (as a multi-page TIFF does), checking
/// at each read how far the reader is ahead of the oldest unwritten chunk.
class HoldingWriter final : public VolumeWriter {
public:
    explicit HoldingWriter(int slices) : m_written(static_cast<std::size_t>(slices), false) {}
    void writeSlices(int first, int count, std::span<const float>) override {
        std::lock_guard lock(m_mutex);
        std::fill_n(m_written.begin() + first, count, true);
    }
    void commit() override {}
    bool holdsEarlySlices() const override { return true; }
    /// Slices written from the first on, without a gap.
    int writtenPrefix() {
        std::lock_guard lock(m_mutex);
        return static_cast<int>(std::find(m_written.begin(), m_written.end(), false) - m_written.begin());
    }

private:
    std::mutex m_mutex;
    std::vector<bool> m_written;
};

/// The counts reader, noting for each read how many rows lay beyond the
/// writer's written prefix.
class AheadReader final : public DatasetReader {
public:
    AheadReader(CountsReader& inner, HoldingWriter& writer) : m_inner(inner), m_writer(writer) {
        m_info = inner.info();
    }
    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        m_inner.readSinograms(firstRow, rowCount, out);
        maxAhead = std::max(maxAhead, firstRow + rowCount - m_writer.writtenPrefix());
    }
    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        return m_inner.readMeanFlat(firstRow, rowCount, out);
    }
    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        return m_inner.readMeanDark(firstRow, rowCount, out);
    }
    int maxAhead = 0;

private:
    CountsReader& m_inner;
    HoldingWriter& m_writer;
};

TEST(PipelineLanes, AWriterThatHoldsEarlySlicesKeepsTheReaderNearTheOldestUnwrittenChunk) {
    LaneTestBackend& backend = freshLaneBackend();
    constexpr int kRowsHere = 40;
    Scan scan = makeScan(kRowsHere);
    CountsReader counts(scan.lineIntegrals, scan.angles);
    VolumeJob job = jobFor(scan, "test-lanes", 1);
    job.devices = {0, 1};
    // Device 1 would hold its first chunk until all the others are done:
    // with the window the reader stops instead, and the hold ends after
    // holdAtMost (only the run's length depends on it).
    backend.leadDevice = backend.heldDevice = 1;
    backend.releaseAfter = kRowsHere;
    backend.holdAtMost = std::chrono::milliseconds(1500);
    HoldingWriter writer(kRowsHere);
    AheadReader reader(counts, writer);
    reconstructVolume(reader, job, writer);
    // At most the chunks in flight with two lanes (2 + 3 x 2 + 2 = 10, of
    // one row each) ahead of the oldest unwritten row.
    EXPECT_LE(reader.maxAhead, 10);
    EXPECT_GT(reader.maxAhead, 1);
}

TEST(PipelineLanes, AnErrorInOneLaneStopsAllWithThatErrorAndNothingIsCommitted) {
    LaneTestBackend& backend = freshLaneBackend();
    Scan scan = makeScan(kManyRows);
    CountsReader reader(scan.lineIntegrals, scan.angles);
    VolumeJob job = jobFor(scan, "test-lanes", 1);
    job.devices = {0, 1, 2};
    backend.leadDevice = backend.failingDevice = 2; // it surely gets a chunk
    backend.failAt = 1;
    MemoryWriter writer(kBins, kBins, kManyRows);
    try {
        reconstructVolume(reader, job, writer);
        FAIL() << "no error";
    } catch (const DeviceError& e) {
        EXPECT_STREQ(e.what(), "test device 2 failed at call 1");
    }
    EXPECT_FALSE(writer.committed);
    EXPECT_LT(static_cast<int>(writer.writes.size()), kManyRows) << "the other lanes went on to the end";

#if TOMO_WITH_HDF5
    backend.reset();
    backend.leadDevice = backend.failingDevice = 1;
    backend.failAt = 1;
    test::TempDir dir;
    {
        auto file = createVolumeWriter(dir / "volume.h5", kBins, kBins, kManyRows, WriteOptions{});
        EXPECT_THROW(reconstructVolume(reader, job, *file), DeviceError);
    }
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "a partial output was left";
#endif
}

TEST(PipelineLanes, ProgressRisesToOneAndCancelStopsEveryLane) {
    Scan scan = makeScan(kManyRows);
    CountsReader reader(scan.lineIntegrals, scan.angles);
    VolumeJob job = jobFor(scan, "cpu-reference", 2);
    job.devices = {0, 1};
    {
        MemoryWriter writer(kBins, kBins, kManyRows);
        // Progress is polled on this thread: chunks finished between two
        // polls are one call. Writes as slow as a disk's keep them apart (a
        // loaded 2-core machine once merged 7 chunks' into 6 calls).
        writer.writeTime = std::chrono::milliseconds(20);
        std::vector<double> fractions;
        reconstructVolume(reader, job, writer, [&](double f, std::string_view) {
            EXPECT_FALSE(writer.committed) << "progress after the commit";
            fractions.push_back(f);
        });
        ASSERT_GE(fractions.size(), 7u); // at least once per chunk
        EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
        EXPECT_DOUBLE_EQ(fractions.back(), 1.0);
        EXPECT_TRUE(writer.committed);
    }
    MemoryWriter writer(kBins, kBins, kManyRows);
    int calls = 0;
    EXPECT_THROW(reconstructVolume(reader, job, writer,
                                   [&](double, std::string_view) {
                                       if (++calls == 3) throw Cancelled();
                                   }),
                 Cancelled);
    EXPECT_EQ(calls, 3);
    EXPECT_FALSE(writer.committed);
}

TEST(PipelineLanes, ADeviceListedTwiceIsRefusedBeforeAnyWork) {
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    VolumeJob job = jobFor(scan, "cpu-reference", 0);
    job.devices = {0, 1, 0};
    MemoryWriter writer(kBins, kBins, kRows);
    try {
        reconstructVolume(reader, job, writer);
        FAIL() << "no error";
    } catch (const InvalidArgument& e) {
        EXPECT_STREQ(e.what(), "device 0 is listed twice; expected each device once");
    }
    EXPECT_EQ(reader.rowsRead, 0);
    EXPECT_TRUE(writer.writes.empty());
}

TEST(PipelineLanes, TheDefaultBudgetGrowsWithTheLanesUpToAQuarterOfTheMemory) {
    const std::size_t one = defaultMemoryBudget();
    EXPECT_EQ(defaultMemoryBudget(1), one);
    EXPECT_EQ(defaultMemoryBudget(0), one);
    const std::size_t quarter = physicalMemoryBytes() / 4;
    for (int lanes : {2, 4, 8})
        EXPECT_EQ(defaultMemoryBudget(lanes), std::max(one, std::min(one * lanes, quarter))) << lanes << " lanes";
}

TEST(ChunkSchedule, EachTaperStepComesOncePerLaneAtBothEnds) {
    // 64-row chunks, passes of 4: steps 8, 16, 32; two lanes take each twice.
    const std::vector<int> sizes = detail::taperedChunks(300, 64, 4, 2);
    EXPECT_EQ(sizes, (std::vector<int>{8, 8, 16, 16, 32, 32, 64, 12, 32, 32, 16, 16, 8, 8}));
    EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), 0), 300);
    EXPECT_EQ(detail::taperedChunks(300, 64, 4, 1), detail::taperedChunks(300, 64, 4));
    // The limits a RowSource's spans get: the same steps, then whole chunks.
    std::vector<int> limits;
    for (int i = 0; i < 8; ++i) limits.push_back(detail::taperedLimit(i, 64, 4, 2));
    EXPECT_EQ(limits, (std::vector<int>{8, 8, 16, 16, 32, 32, 64, 64}));
}

TEST(WorkerPool, LoopsFromSeveralThreadsTakeTurnsAndEachGetsAllItsIndices) {
    WorkerPool pool(3);
    constexpr int kCallers = 4, kLoops = 50, kCount = 97;
    std::vector<std::vector<int>> sums(kCallers, std::vector<int>(kLoops, 0));
    {
        std::vector<std::jthread> callers;
        for (int c = 0; c < kCallers; ++c)
            callers.emplace_back([&, c] {
                for (int loop = 0; loop < kLoops; ++loop) {
                    std::vector<std::atomic<int>> seen(kCount);
                    pool.parallelFor(kCount, [&](int index, int) { seen[static_cast<std::size_t>(index)] += index + c; });
                    for (const auto& s : seen) sums[c][loop] += s;
                }
            });
    }
    for (int c = 0; c < kCallers; ++c)
        for (int loop = 0; loop < kLoops; ++loop)
            ASSERT_EQ(sums[c][loop], kCount * (kCount - 1) / 2 + kCount * c) << "caller " << c << ", loop " << loop;
}

TEST(PreprocessingStage, CorrectFromSeveralThreadsAtOnceEqualsOneAtATime) {
    Scan scan = makeScan(kManyRows);
    CountsReader reader(scan.lineIntegrals, scan.angles);
    CorrectionOptions options;
    options.zingers.enabled = true; // more of the stage's parallel loops
    options.rings.method = RingMethod::Sorting;
    PreprocessingStage stage(reader, options);
    std::vector<ImageStack> alone;
    for (int row = 0; row < kManyRows; ++row) alone.push_back(stage.load(row, 1));
    std::vector<ImageStack> together(kManyRows);
    std::vector<RawChunk> raw;
    for (int row = 0; row < kManyRows; ++row) raw.push_back(stage.read(row, 1));
    {
        std::vector<std::jthread> threads;
        for (int row = 0; row < kManyRows; ++row)
            threads.emplace_back([&, row] { together[row] = stage.correct(std::move(raw[row])); });
    }
    for (int row = 0; row < kManyRows; ++row) EXPECT_EQ(together[row].data, alone[row].data) << "row " << row;
}

} // namespace
} // namespace tomo
