// The iterative methods behind the plan interface (iterative_plan.h): the
// registry's createPlan makes them, the plan runs the solver on the whole
// grid and cuts the region out, keeps its data across setAxis, reports its
// iterations, cancels; the conveyor streams chunks of rows through it with
// the preprocessing stage's corrections, whatever the chunking; strategies
// without a projector pair and options a pair cannot honour are refused.
#include "projector_test_helpers.h"

#include "tomo/error.h"
#include "tomo/iterative_plan.h"
#include "tomo/phantom.h"
#include "tomo/pipeline.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

namespace tomo {
namespace {

using namespace projtest;

ReconOptions iterativeOptions(const std::string& strategy, IterativeOptions iterative) {
    ReconOptions o;
    o.strategy = strategy;
    o.iterative = std::move(iterative);
    return o;
}

// The plan is the solver on the strategy's pair; a region is cut out of the
// whole grid's result (the iterations always run on the whole grid).
TEST(IterativePlan, RunsTheSolverAndCutsTheRegion) {
    const FewView data(64);
    for (const char* strategy : {"cpu-reference", "cpu"}) {
        const IterativeOptions cgls = method(Method::Cgls, 6);
        auto plan = createPlan(data.geometry, iterativeOptions(strategy, cgls));
        ASSERT_NE(dynamic_cast<IterativePlan*>(plan.get()), nullptr) << strategy;
        std::vector<float> whole(64 * 64);
        plan->reconstruct(data.noisy, 1, whole);
        auto pair = pairOf(strategy, data.geometry);
        EXPECT_EQ(whole, solve(*pair, data.noisy, 1, cgls).images) << strategy;

        const Region region{5, 9, 30, 21};
        plan->setRegion(region);
        std::vector<float> part(region.pixels());
        plan->backproject(part);
        for (int y = 0; y < region.height; ++y)
            for (int x = 0; x < region.width; ++x)
                ASSERT_EQ(part[y * region.width + x], whole[(region.y + y) * 64 + region.x + x]) << strategy;
    }
}

// setAxis keeps the data and changes the geometry: the result equals a new
// plan's for the moved axis (and differs from the old one's).
TEST(IterativePlan, SetAxisKeepsTheData) {
    const FewView data(64);
    const ReconOptions o = iterativeOptions("cpu", method(Method::Sirt, 5));
    auto plan = createPlan(data.geometry, o);
    std::vector<float> before(64 * 64), moved(64 * 64), expected(64 * 64);
    plan->reconstruct(data.noisy, 1, before);
    const std::vector<double> offsets(60, 0.25);
    plan->setAxis(data.geometry.geometry.axis + 1.5, offsets);
    plan->backproject(moved);
    ReconGeometry g = data.geometry;
    g.geometry.axis += 1.5;
    g.geometry.axisOffsets = offsets;
    createPlan(g, o)->reconstruct(data.noisy, 1, expected);
    EXPECT_EQ(moved, expected);
    EXPECT_NE(moved, before);
}

// The callback sees each iteration and the summary says how the run ended;
// stopping keeps the images; cancel() makes the running and later calls
// throw Cancelled.
TEST(IterativePlan, CallbackSummaryAndCancel) {
    const FewView data(64);
    auto created = createPlan(data.geometry, iterativeOptions("cpu", method(Method::Sirt, 50)));
    auto& plan = dynamic_cast<IterativePlan&>(*created);
    int seen = 0;
    plan.setIterationCallback([&](const IterationState& s) {
        ++seen;
        EXPECT_EQ(s.iterations, 50);
        return s.iteration < 7;
    });
    std::vector<float> out(64 * 64);
    plan.reconstruct(data.noisy, 1, out);
    EXPECT_EQ(seen, 7);
    EXPECT_EQ(plan.lastSummary().iterations, 7);
    EXPECT_TRUE(plan.lastSummary().stoppedByCallback);

    // cancel() from another thread while a long run (minutes) iterates.
    auto longPlan = createPlan(data.geometry, iterativeOptions("cpu", method(Method::Sirt, 50000)));
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        longPlan->cancel();
    });
    EXPECT_THROW(longPlan->reconstruct(data.noisy, 1, out), Cancelled);
    canceller.join();
    EXPECT_THROW(longPlan->backproject(out), Cancelled);
}

/// Log-corrected sinograms held in memory, as a dataset.
class SinogramReader final : public DatasetReader {
public:
    SinogramReader(ImageStack sinograms, std::vector<double> angles) : m_data(std::move(sinograms)) {
        m_info.path = "memory";
        m_info.format = DatasetFormat::Raw;
        m_info.projections = m_data.height;
        m_info.rows = m_data.depth;
        m_info.columns = m_data.width;
        m_info.logCorrected = true;
        m_info.angles = std::move(angles);
    }
    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        const auto first = m_data.data.begin() + static_cast<std::ptrdiff_t>(firstRow * m_data.imageSize());
        std::copy(first, first + static_cast<std::ptrdiff_t>(out.size()), out.begin());
        (void)rowCount;
    }
    bool readMeanFlat(int, int, std::span<float>) override { return false; }
    bool readMeanDark(int, int, std::span<float>) override { return false; }

private:
    ImageStack m_data;
};

class MemoryWriter final : public VolumeWriter {
public:
    explicit MemoryWriter(std::size_t values) : volume(values, -1.0f) {}
    void writeSlices(int first, int count, std::span<const float> data) override {
        std::copy(data.begin(), data.end(), volume.begin() + static_cast<std::ptrdiff_t>(first * data.size() / count));
    }
    void commit() override {}
    std::vector<float> volume;
};

/// Six rows of the 3D phantom with noise, 64 bins, 60 views.
struct VolumeScan {
    PhantomSpec spec;
    std::vector<double> angles = uniformAngles(60);
    ImageStack sinograms;
    VolumeScan() {
        spec.bins = 64;
        spec.rows = 6;
        sinograms = projectPhantom(spec, angles);
        sinograms.data = withPoissonNoise(sinograms.data, 1e4, 7);
    }
    ReconGeometry geometry() const {
        Geometry g;
        g.angles = angles;
        g.bins = 64;
        g.axis = g.detectorCentre();
        return ReconGeometry::fullSlice(g);
    }
    VolumeJob job(const ReconOptions& options, int chunkRows) const {
        VolumeJob j;
        j.geometry = geometry();
        j.options = options;
        j.chunkRows = chunkRows;
        j.corrections.rings.method = RingMethod::Sorting; // a correction of the stage, on the way
        return j;
    }
};

// The conveyor streams chunks through the iterative plan: chunks of 1, 2 and
// all rows give the same volume (each slice its own problem), which is the
// plan's result on the stage's corrected sinograms (ring removal on).
TEST(IterativePlan, ConveyorStreamsChunksWithTheCorrections) {
    const VolumeScan scan;
    const ReconOptions sirt = iterativeOptions("cpu", method(Method::Sirt, 30));
    const std::size_t values = 6 * 64 * 64;
    std::vector<std::vector<float>> volumes;
    for (int chunkRows : {1, 2, 0}) {
        SinogramReader reader(scan.sinograms, scan.angles);
        MemoryWriter writer(values);
        const VolumeReport report = reconstructVolume(reader, scan.job(sirt, chunkRows), writer);
        EXPECT_EQ(report.slices, 6);
        volumes.push_back(writer.volume);
    }
    EXPECT_EQ(volumes[0], volumes[1]);
    EXPECT_EQ(volumes[0], volumes[2]);

    // The same as the stage's corrections followed by the plan.
    SinogramReader reader(scan.sinograms, scan.angles);
    PreprocessingStage stage(reader, scan.job(sirt, 0).corrections);
    const ImageStack corrected = stage.correct(stage.read(0, 6));
    std::vector<float> direct(values);
    createPlan(scan.geometry(), sirt)->reconstruct(corrected.data, 6, direct);
    EXPECT_EQ(direct, volumes[0]);
}

// A Cancelled thrown from the conveyor's progress callback stops an
// iterative batch between two iterations: the callback is called every half
// second while the first batch (30000 iterations: minutes here) runs, and
// the first such call cancels. (Without the heartbeat the first call would
// come after the batch, with a fraction above 0.)
TEST(IterativePlan, ConveyorCancelsALongBatch) {
    const VolumeScan scan;
    SinogramReader reader(scan.sinograms, scan.angles);
    MemoryWriter writer(6 * 64 * 64);
    std::vector<double> fractions;
    EXPECT_THROW(reconstructVolume(reader, scan.job(iterativeOptions("cpu", method(Method::Sirt, 30000)), 0), writer,
                                   [&](double fraction, std::string_view) {
                                       fractions.push_back(fraction);
                                       throw Cancelled();
                                   }),
                 Cancelled);
    ASSERT_EQ(fractions.size(), 1u);
    EXPECT_EQ(fractions[0], 0.0);
}

/// A strategy without a projector pair (as the OpenCL ones).
class NoProjectorBackend final : public Backend {
public:
    std::string name() const override { return "no-projector"; }
    std::string description() const override { return "FBP only"; }
    std::string family() const override { return "cpu"; }
    std::string unavailableReason() const override { return {}; }
    void checkOptions(const ReconOptions&) const override {}
    std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry&, const ReconOptions&) const override {
        return nullptr;
    }
};

// Options an iterative method cannot honour are refused with the option's
// name, before any plan exists.
TEST(IterativePlan, WhatAPairCannotDoIsRefused) {
    BackendRegistry registry;
    registry.add(std::make_unique<NoProjectorBackend>());
    const ReconGeometry g = parallelGeometry(32, 20);
    ReconOptions o = iterativeOptions("no-projector", method(Method::Sirt, 5));
    auto refused = [&](const BackendRegistry& r, const ReconOptions& options, const std::string& part) {
        try {
            r.resolveOptions(options, g);
            ADD_FAILURE() << "accepted; expected an error with '" << part << "'";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    };
    refused(registry, o, "strategy 'no-projector' cannot run method sirt: it has no forward projector");
    o.strategy = "auto";
    refused(registry, o, "no available strategy can run method sirt");

    const BackendRegistry& all = BackendRegistry::instance();
    o = iterativeOptions("cpu", method(Method::Sirt, 5));
    o.interpolation = Interpolation::Nearest;
    refused(all, o, "method sirt projects with linear interpolation (Joseph's projector): interpolation nearest");
    o = iterativeOptions("cpu", method(Method::Sirt, 5));
    o.precision = Precision::Float16;
    refused(all, o, "precision float16 does not apply");
    o = iterativeOptions("cpu", method(Method::Tv, 5));
    refused(all, o, "method tv needs a TV weight");
    o = iterativeOptions("cpu", method(Method::Sirt, -1));
    refused(all, o, "iterations -1");
    EXPECT_THROW(createPlan(g, o), InvalidArgument);
}

// "auto" with an iterative method picks the preferred strategy that has a
// pair (a CUDA one on a GPU machine, else cpu) without timing FBP kernels.
TEST(IterativePlan, AutoPicksAStrategyWithAPair) {
    const ReconGeometry g = parallelGeometry(32, 20);
    const ReconOptions resolved =
        BackendRegistry::instance().resolveOptions(iterativeOptions("auto", method(Method::Cgls, 3)), g);
    const Backend* b = BackendRegistry::instance().find(resolved.strategy);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(b->hasProjector());
    EXPECT_TRUE(resolved.tuning.empty());
    if (gpuDevices().empty()) EXPECT_EQ(resolved.strategy, "cpu");
    else EXPECT_EQ(b->family(), "cuda");
}

} // namespace
} // namespace tomo

namespace tomo {
namespace {

// The run config carries the method and its parameters both ways; bad
// values name their key.
TEST(IterativeRunConfig, MethodKeysRoundTripAndBadValuesNameTheKey) {
    RunConfig c;
    c.options.iterative.method = Method::Tv;
    c.options.iterative.iterations = 42;
    c.options.iterative.tvWeight = 0.125;
    c.options.iterative.bounds = Bounds{0.0, std::numeric_limits<double>::infinity()};
    c.options.iterative.init = InitialImage::Fbp;
    c.options.iterative.tolerance = 1e-3;
    const std::string json = toJson(c);
    EXPECT_NE(json.find("\"bounds\": [\n    0.0,\n    null\n  ]"), std::string::npos) << json;
    const IterativeOptions back = runConfigFromJson(json).options.iterative;
    EXPECT_EQ(back.method, Method::Tv);
    EXPECT_EQ(back.iterations, 42);
    EXPECT_EQ(back.tvWeight, 0.125);
    EXPECT_EQ(back.bounds, c.options.iterative.bounds);
    EXPECT_EQ(back.init, InitialImage::Fbp);
    EXPECT_EQ(back.tolerance, 1e-3);
    EXPECT_EQ(runConfigFromJson("{}").options.iterative.method, Method::Fbp);

    auto refused = [](const std::string& text, const std::string& part) {
        try {
            runConfigFromJson(text);
            ADD_FAILURE() << text << " accepted";
        } catch (const FormatError& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    };
    refused(R"({"method": "art"})", "key 'method': method 'art' is not known");
    refused(R"({"method": "sirt", "iterations": 0})", "key 'iterations' must be an integer in [1, 1000000]");
    refused(R"({"method": "sirt", "tv_weight": 0.1})", "a TV weight applies to method tv only");
    refused(R"({"method": "tv", "tv_weight": -1})", "key 'tv_weight' must be a number > 0");
    refused(R"({"method": "tv"})", "method tv needs a TV weight");
    refused(R"({"method": "sirt", "bounds": [1, 0]})", "expected lower <= upper");
    refused(R"({"method": "sirt", "bounds": [0]})", "key 'bounds' must be [lower, upper]");
    refused(R"({"method": "cgls", "bounds": [0, null]})", "cgls has no constraints");
    refused(R"({"iterations": 5})", "iterations apply to the iterative methods");
    refused(R"({"method": "sirt", "tolerance": 1})", "key 'tolerance' must be a relative residual change in [0, 1)");
}

} // namespace
} // namespace tomo
