// Registration, option checks, errors, devices, the GPU filter and the
// fetch-rate benchmark of the CUDA backends.
#include "cuda_test_util.h"

#include "tomo/cuda/cuda_backends.h"
#include "tomo/cuda/diagnostics.h"
#include "tomo/filter.h"
#include "tomo/geometry.h"

#include <algorithm>
#include <cstdlib>

namespace tomo::cudatest {
namespace {

std::size_t indexOf(const std::string& name) {
    const auto all = BackendRegistry::instance().backends();
    for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i]->name() == name) return i;
    return all.size();
}

// ------------------------------------------------- without a GPU as well

TEST(CudaBackends, RegisteredInOrderEvenWithoutDevice) {
    const std::size_t standard = indexOf("tex-standard");
    const std::size_t optimized = indexOf("tex-optimized");
    const std::size_t cpu = indexOf("cpu-reference");
    const std::size_t size = BackendRegistry::instance().backends().size();
    ASSERT_LT(standard, size);
    ASSERT_LT(optimized, size);
    EXPECT_LT(cpu, standard);
    EXPECT_LT(standard, optimized); // auto prefers the last available exact backend
    for (const char* name : {"tex-standard", "tex-optimized"}) {
        const Backend& b = backendNamed(name);
        EXPECT_EQ("cuda", b.family());
        EXPECT_TRUE(b.isExact());
        EXPECT_FALSE(b.description().empty());
        const std::string why = b.unavailableReason();
        if (!why.empty()) {
            std::printf("%s unavailable: %s\n", name, why.c_str());
            EXPECT_EQ(0u, why.find("no CUDA device: ")) << why;
        }
    }
}

TEST(CudaBackends, RejectsUnsupportedOptionsNamingThem) {
    for (const char* name : {"tex-standard", "tex-optimized", "alu", "hybrid"}) {
        const Backend& b = backendNamed(name);
        ReconOptions o;
        for (int spp : {1, 2, 4}) {
            o.slicesPerPass = spp;
            for (auto p : {Precision::Float32, Precision::Float16})
                for (auto i : {Interpolation::Nearest, Interpolation::Linear}) {
                    o.precision = p;
                    o.interpolation = i;
                    EXPECT_NO_THROW(b.checkOptions(o));
                }
        }
        o.slicesPerPass = 3;
        try {
            b.checkOptions(o);
            ADD_FAILURE() << "slicesPerPass 3 accepted";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string::npos, std::string(e.what()).find("slicesPerPass")) << e.what();
            EXPECT_NE(std::string::npos, std::string(e.what()).find(name)) << e.what();
        }
        o.slicesPerPass = 1;
        o.device = -1;
        EXPECT_THROW(b.checkOptions(o), InvalidArgument);
        // One packed fetch per pixel and projection; for hybrid in its texture blocks only (share of 16).
        const ReconOptions four = optionsFor(name, Interpolation::Linear, Precision::Float16, 4);
        double fetches = std::string(name) == "alu" ? 0.0 : 0.25;
        if (std::string(name) == "hybrid") {
            const std::string tuning = b.tuningCandidates(four).front(); // the default, "shape=N,share=M"
            fetches *= std::stoi(tuning.substr(tuning.find("share=") + 6)) / 16.0;
            EXPECT_GT(fetches, 0.0);
        }
        EXPECT_DOUBLE_EQ(fetches, b.textureFetchesPerUpdate(four));
    }
}

TEST(CudaBackends, WithoutDevicePlansFailWithTheReason) {
    const Backend& b = backendNamed("tex-optimized");
    const std::string why = b.unavailableReason();
    if (why.empty()) GTEST_SKIP() << "a CUDA device is present (this test covers machines without one)";
    Geometry g;
    g.angles = uniformAngles(16);
    g.bins = 32;
    g.axis = g.detectorCentre();
    EXPECT_THROW(b.createPlan(ReconGeometry::fullSlice(g), ReconOptions{}), DeviceError);
    EXPECT_TRUE(cuda::listDevices().empty());
    EXPECT_THROW(cuda::measureTextureFetchRate(0), DeviceError);
}

// ------------------------------------------------------------- on a GPU

TEST(CudaBackends, DevicesAndAuto) {
    TOMO_REQUIRE_CUDA();
    const auto devices = cuda::listDevices();
    ASSERT_FALSE(devices.empty());
    for (const auto& d : devices) {
        std::printf("device %d: %s, %d SMs, %.1f GiB, sm_%d%d\n", d.index, d.name.c_str(), d.multiprocessors,
                    d.memoryBytes / 1073741824.0, d.computeMajor, d.computeMinor);
        EXPECT_GT(d.multiprocessors, 0);
        EXPECT_GT(d.memoryBytes, 0u);
    }
    EXPECT_EQ(devices.size(), gpuDevices().size());
    // Untimed, "auto" prefers the GPU (timed, a CPU may win at this tiny size).
    ::setenv("TOMO_AUTOTUNE", "off", 1);
    const Dataset d = phantomDataset(64, 32, 1);
    ReconOptions o; // strategy "auto"
    EXPECT_EQ("tex-optimized", BackendRegistry::instance().resolve(o, d.geometry).name());
}

TEST(CudaBackends, FetchRateCeiling) {
    TOMO_REQUIRE_CUDA();
    const double rate = measureTextureFetchRate(0); // through the registry
    std::printf("MEASURED texture fetch rate float32 bilinear: %.1f G fetches/s\n", rate / 1e9);
    EXPECT_GT(rate, 1e9);
    const double half4 = cuda::measureTextureFetchRate(0, Precision::Float16, 4, Interpolation::Nearest);
    std::printf("MEASURED texture fetch rate half4 point: %.1f G fetches/s\n", half4 / 1e9);
    EXPECT_GT(half4, 1e9);
    EXPECT_THROW(cuda::measureTextureFetchRate(99), InvalidArgument);
}

TEST(CudaBackends, GpuFilterEqualsCpuFilter) {
    TOMO_REQUIRE_CUDA();
    expectFilterEqualsCpu("filter", {256, 1001, 37}, {64, 63},
                          [](std::span<const float> data, int rows, int bins, const FilterOptions& f,
                             std::span<const double> weights) {
                              return cuda::filterRowsOnGpu(data, rows, bins, f, weights);
                          });
}

TEST(CudaBackends, ErrorsAreReportedNotCrashed) {
    TOMO_REQUIRE_CUDA();
    const Dataset d = phantomDataset(64, 48, 2);
    for (const char* name : {"tex-standard", "tex-optimized"}) {
        const Backend& b = backendNamed(name);
        auto plan = b.createPlan(d.geometry, optionsFor(name, Interpolation::Linear, Precision::Float32, 2));
        EXPECT_GT(plan->memoryBytes(), 0u);
        EXPECT_GE(plan->maxSlices(), 2);
        EXPECT_EQ(0, plan->maxSlices() % 2);
        std::vector<float> out(d.geometry.region.pixels() * 2);
        EXPECT_THROW(plan->backproject(out), InvalidArgument); // nothing set yet
        EXPECT_THROW(plan->setSinograms(std::span<const float>(d.sinograms).first(10), 2), InvalidArgument);
        EXPECT_THROW(plan->setSinograms(d.sinograms, 0), InvalidArgument);
        EXPECT_THROW(plan->setSinograms(d.sinograms, plan->maxSlices() + 1), InvalidArgument);
        plan->setSinograms(d.sinograms, 2);
        EXPECT_THROW(plan->backproject(std::span<float>(out).first(5)), InvalidArgument);
        EXPECT_THROW(plan->setRegion(Region{60, 0, 10, 10}), InvalidArgument);
        EXPECT_THROW(plan->setAxis(32.0, std::vector<double>(3, 0.0)), InvalidArgument);
        EXPECT_NO_THROW(plan->backproject(out));

        ReconOptions badDevice = optionsFor(name, Interpolation::Linear, Precision::Float32, 1);
        badDevice.device = 99;
        EXPECT_THROW(b.createPlan(d.geometry, badDevice), InvalidArgument);
    }
}

TEST(CudaBackends, OutOfMemoryIsAnErrorWithNumbers) {
    TOMO_REQUIRE_CUDA();
    // 60000 projections x 100000 bins and a 100000^2 grid: terabytes.
    Geometry g;
    g.angles = uniformAngles(60000);
    g.bins = 100000;
    g.axis = g.detectorCentre();
    try {
        (void)backendNamed("tex-optimized").createPlan(ReconGeometry::fullSlice(g), ReconOptions{});
        ADD_FAILURE() << "a plan of terabytes was created";
    } catch (const OutOfMemory& e) {
        std::printf("OutOfMemory: %s\n", e.what());
        EXPECT_NE(std::string::npos, std::string(e.what()).find("asked")) << e.what();
        EXPECT_NE(std::string::npos, std::string(e.what()).find("free")) << e.what();
    }
    // The device is still usable afterwards.
    const Dataset d = phantomDataset(64, 32, 1);
    EXPECT_NO_THROW(run("tex-optimized", d, d.geometry, ReconOptions{}));
}

} // namespace
} // namespace tomo::cudatest
