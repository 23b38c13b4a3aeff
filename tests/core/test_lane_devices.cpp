// Which device each thread of the conveyor works on (Backend::useDevice),
// without a GPU: a backend whose "GPUs" are a per-thread state as CUDA's
// current device is (a new thread is on device 0 until it chooses one) and
// whose plans and correctors note, at every call, the device of the calling
// thread next to their own. A lane's plan is made, used and released on
// threads of its device, its corrector too, its page-locked buffers
// allocated there: a process whose one lane is on GPU 1 (an MPI rank of a
// 2-GPU host) touches no other GPU. On a real GPU a call on another device
// makes that GPU a context, or uses one plan's resources on another device.
#include "pipeline_test_helpers.h"
#include "test_support.h"

#include "tomo/registry.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>

namespace tomo {
namespace {

using namespace test;

thread_local int t_device = 0; // as cudaGetDevice on a thread that chose none

/// One call: what it was, the device it belongs to, the device of the thread making it.
struct DeviceCall {
    std::string what;
    int own = 0;
    int thread = 0;
};

/// cpu-reference (and the stage's CPU corrections) as "test-devices".
class DeviceTestBackend final : public Backend {
public:
    static DeviceTestBackend& instance() { return test::registeredOnce<DeviceTestBackend>(); }

    void note(const std::string& what, int own) {
        std::lock_guard lock(m_mutex);
        m_calls.push_back({what, own, t_device});
    }
    std::vector<DeviceCall> takeCalls() {
        std::lock_guard lock(m_mutex);
        return std::exchange(m_calls, {});
    }

    std::string name() const override { return "test-devices"; }
    std::string description() const override { return "test: cpu-reference noting each call's thread device"; }
    std::string family() const override { return "cpu"; }
    bool isExact() const override { return false; } // never a candidate of "auto"
    std::string unavailableReason() const override { return {}; }
    void useDevice(int device) const override { t_device = device; }
    void checkOptions(const ReconOptions& options) const override { inner().checkOptions(named(options)); }
    std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry,
                                                   const ReconOptions& options) const override;
    std::unique_ptr<ChunkCorrector> createCorrector(PreprocessingStage& stage,
                                                    const ReconOptions& options) const override;

private:
    static const Backend& inner() { return *BackendRegistry::instance().find("cpu-reference"); }
    static ReconOptions named(ReconOptions o) {
        o.strategy = "cpu-reference";
        return o;
    }
    mutable std::mutex m_mutex;
    std::vector<DeviceCall> m_calls;
};

DeviceTestBackend& backend() { return DeviceTestBackend::instance(); }

class DeviceTestPlan final : public ReconstructionPlan {
public:
    DeviceTestPlan(std::unique_ptr<ReconstructionPlan> inner, const ReconOptions& options)
        : ReconstructionPlan(inner->geometry(), options), m_inner(std::move(inner)) {
        backend().note("plan made", m_options.device);
    }
    ~DeviceTestPlan() override { backend().note("plan released", m_options.device); }
    void setSinograms(std::span<const float> s, int count) override { m_inner->setSinograms(s, count); }
    void backproject(std::span<float> slices) override { m_inner->backproject(slices); }
    void setAxis(double axis, std::span<const double> offsets) override {
        backend().note("setAxis", m_options.device);
        m_inner->setAxis(axis, offsets);
    }
    void setRegion(const Region& region) override { m_inner->setRegion(region); }
    int maxSlices() const override { return m_inner->maxSlices(); }
    std::size_t memoryBytes() const override { return m_inner->memoryBytes(); }
    HostBuffer allocateHost(std::size_t bytes) const override {
        backend().note("buffer allocated", m_options.device);
        return HostBuffer::plain(bytes);
    }
    void reconstruct(std::span<const float> sinograms, int count, std::span<float> slices) override {
        backend().note("reconstruct", m_options.device);
        m_inner->reconstruct(sinograms, count, slices);
    }

private:
    std::unique_ptr<ReconstructionPlan> m_inner;
};

class DeviceTestCorrector final : public ChunkCorrector {
public:
    DeviceTestCorrector(PreprocessingStage& stage, int device) : m_stage(stage), m_device(device) {
        backend().note("corrector made", m_device);
    }
    ~DeviceTestCorrector() override { backend().note("corrector released", m_device); }
    ImageStack correct(RawChunk chunk, PreprocessStats* stats) override {
        backend().note("correct", m_device);
        return m_stage.correct(std::move(chunk), stats);
    }
    std::string where() const override { return "test device " + std::to_string(m_device); }
    std::vector<std::pair<std::string, double>> stepSeconds() const override { return {}; }

private:
    PreprocessingStage& m_stage;
    int m_device;
};

std::unique_ptr<ReconstructionPlan> DeviceTestBackend::createPlan(const ReconGeometry& geometry,
                                                                  const ReconOptions& options) const {
    return std::make_unique<DeviceTestPlan>(inner().createPlan(geometry, named(options)), options);
}

std::unique_ptr<ChunkCorrector> DeviceTestBackend::createCorrector(PreprocessingStage& stage,
                                                                   const ReconOptions& options) const {
    return std::make_unique<DeviceTestCorrector>(stage, options.device);
}

/// Each call made on a thread of the device it belongs to (buffers of the
/// first lane's plan but for every lane: with several lanes, any lane's
/// thread may ask for one); the calls seen, by name and device.
std::map<std::string, std::set<int>> expectEachCallOnItsDevice(const std::vector<DeviceCall>& calls, bool oneLane) {
    std::map<std::string, std::set<int>> seen;
    for (const DeviceCall& c : calls) {
        if (oneLane || c.what != "buffer allocated") {
            EXPECT_EQ(c.thread, c.own) << c.what << " of device " << c.own << " on a thread of device " << c.thread;
        }
        seen[c.what].insert(c.own);
    }
    return seen;
}

constexpr int kRowsHere = 11; // not a multiple of any chunk

TEST(LaneDevices, ALaneOnGpuOneMakesUsesAndReleasesEverythingThere) {
    // An MPI rank of a 2-GPU host under `auto` (rankDevices: its local rank's GPU).
    Scan scan = makeScan(kRowsHere);
    CountsReader reader(scan.lineIntegrals, scan.angles);
    VolumeJob job = jobFor(scan, "cpu-reference", 3);
    MemoryWriter reference(kBins, kBins, kRowsHere);
    reconstructVolume(reader, job, reference);

    for (const bool corrections : {false, true}) {
        SCOPED_TRACE(corrections ? "a corrector on the lane's device" : "the stage's corrections on the CPU");
        job.options.strategy = "test-devices";
        job.devices = {1};
        job.gpuCorrections = corrections;
        (void)backend().takeCalls();
        MemoryWriter writer(kBins, kBins, kRowsHere);
        const VolumeReport report = reconstructVolume(reader, job, writer);
        EXPECT_EQ(t_device, 0) << "the caller's thread chose no device";
        const auto seen = expectEachCallOnItsDevice(backend().takeCalls(), true);
        for (const char* what : {"plan made", "plan released", "reconstruct", "buffer allocated"})
            EXPECT_EQ(seen.count(what) ? seen.at(what) : std::set<int>{}, std::set<int>{1}) << what;
        for (const char* what : {"corrector made", "correct", "corrector released"})
            EXPECT_EQ(seen.count(what) ? seen.at(what) : std::set<int>{},
                      corrections ? std::set<int>{1} : std::set<int>{})
                << what;
        ASSERT_EQ(report.lanes.size(), 1u);
        EXPECT_EQ(report.lanes[0].device, 1);
        EXPECT_EQ(report.lanes[0].correctedOn, corrections ? "test device 1" : "cpu");
        EXPECT_EQ(writer.volume.data, reference.volume.data);
    }
}

TEST(LaneDevices, EachOfSeveralLanesWorksOnlyOnItsOwnDevice) {
    Scan scan = makeScan(kRowsHere);
    CountsReader reader(scan.lineIntegrals, scan.angles);
    VolumeJob job = jobFor(scan, "cpu-reference", 2);
    // A tilted axis: setAxis before each slice, on the reconstruct thread.
    job.axisLine = AxisLine{scan.geometry.geometry.axis, 0.02, 0.0};
    MemoryWriter reference(kBins, kBins, kRowsHere);
    reconstructVolume(reader, job, reference);

    job.options.strategy = "test-devices";
    job.devices = {2, 0, 1};
    job.gpuCorrections = true;
    (void)backend().takeCalls();
    MemoryWriter writer(kBins, kBins, kRowsHere);
    const VolumeReport report = reconstructVolume(reader, job, writer);
    const auto seen = expectEachCallOnItsDevice(backend().takeCalls(), false);
    // (Which lanes reconstruct, correct and set the axis depends on timing; each on its device.)
    EXPECT_FALSE(seen.count("setAxis") ? seen.at("setAxis").empty() : true);
    for (const char* what : {"plan made", "plan released", "corrector made", "corrector released"})
        EXPECT_EQ(seen.count(what) ? seen.at(what) : std::set<int>{}, (std::set<int>{0, 1, 2})) << what;
    // The first lane's plan allocates the page-locked buffers (device 2's).
    EXPECT_EQ(seen.count("buffer allocated") ? seen.at("buffer allocated") : std::set<int>{}, std::set<int>{2});
    ASSERT_EQ(report.lanes.size(), 3u);
    EXPECT_EQ(writer.volume.data, reference.volume.data);
}

} // namespace
} // namespace tomo
