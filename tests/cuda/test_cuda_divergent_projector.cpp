// The divergent-beam projector pair on the GPU (makeFanProjector /
// makeConeProjector with a device; kernels/cuda/divergent_projector.h)
// against the CPU pair in double (tests/core/test_projector_fan.cpp says
// what each property means): the transpose within 1e-5 (float vectors,
// atomic sums), forward and back within 1e-5 of the CPU pair, SIRT and
// CGLS converging on a volume as on the CPU and ending within 1e-3 of the
// CPU's images, the volume's TV, the FDK start, one volume per vector, no
// axis to move.
// Every test skips without a CUDA device.
#include "cuda_test_util.h"

#include "../core/divergent_test_cases.h"
#include "../core/projector_test_helpers.h"

#include "tomo/error.h"
#include "tomo/iterative.h"
#include "tomo/phantom.h"
#include "tomo/projector.h"
#include "tomo/registry.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

namespace tomo {
namespace {

using namespace projtest;
using namespace divergenttest;
constexpr double kPi = std::numbers::pi;

struct Case {
    const char* name;
    ConeGeometry geometry;
    VolumeGrid grid;
};

std::vector<Case> cases() {
    return {{"fan, full", fan(90, 2 * kPi), slice(64, 64, 0.8)},
            {"fan, short, off-centre", fan(37, 0.6 * kPi, 3.3), slice(50, 70, 0.9, 4.0, -3.0)},
            {"cone, centred", cone(40), box(24, 24, 20, 1.0)},
            {"cone, off the axis and the mid-plane", cone(33, 2.5, -3.0), box(20, 26, 14, 0.9, {2.0, -1.5, 3.0})}};
}

std::unique_ptr<ProjectorPair> gpuPair(const Case& c, const IterativeOptions& options = {}) {
    BackendRegistry::instance(); // installs the GPU pair
    return makeConeProjector(c.geometry, c.grid, options, 0, 0);
}

/// The GPU pair of a Ball's scan.
std::unique_ptr<ProjectorPair> gpuPair(const Ball& b, const IterativeOptions& options = {}) {
    return gpuPair(Case{"ball", b.geometry, b.grid}, options);
}

TEST(CudaDivergentProjector, BackProjectionIsTheTranspose) {
    TOMO_REQUIRE_CUDA();
    for (const Case& c : cases()) {
        auto pair = gpuPair(c);
        EXPECT_EQ(pair->name().rfind(c.geometry.rows == 1 ? "cuda fan-beam joseph, matched (" :
                                                              "cuda cone-beam joseph, matched (", 0),
                  0u)
            << pair->name();
        const double gap = adjointnessGaps(*pair, 1, 5)[0];
        std::printf("MEASURED GPU divergent adjointness %s: %.3g\n", c.name, std::abs(gap));
        EXPECT_NEAR(gap, 0.0, 1e-5) << c.name;
    }
}

TEST(CudaDivergentProjector, ProjectionsMatchTheCpuPair) {
    TOMO_REQUIRE_CUDA();
    for (const Case& c : cases()) {
        auto gpu = gpuPair(c);
        auto cpu = makeConeProjector(c.geometry, c.grid, {}, 0);
        const std::size_t values = static_cast<std::size_t>(c.geometry.viewCount()) * c.geometry.rows * c.geometry.columns;
        const std::vector<float> x = positiveValues(c.grid.voxels(), 3), y = positiveValues(values, 4);
        const double forward = relativeError(forwardOf(*gpu, x, 1), forwardOf(*cpu, x, 1));
        const double back = relativeError(backOf(*gpu, y, 1), backOf(*cpu, y, 1));
        std::printf("MEASURED GPU divergent vs CPU %s: forward %.3g, back %.3g\n", c.name, forward, back);
        EXPECT_LT(forward, 1e-5) << c.name;
        EXPECT_LT(back, 1e-5) << c.name;
    }
}

// The CPU test's volume (a ball of 10 in 24 x 24 x 16 from 60 views):
// SIRT (weighted, the weights from the GPU's own A 1 and A^T 1) and CGLS
// lower the residual at every iteration, and their images stay within
// 1e-3 of the CPU pair's (float against double).
TEST(CudaDivergentProjector, IterativeMethodsMatchTheCpuPair) {
    TOMO_REQUIRE_CUDA();
    const Ball b = ball(60);
    auto cpu = makeConeProjector(b.geometry, b.grid, {}, 0);
    for (const auto& [m, iterations] : {std::pair{Method::Sirt, 50}, std::pair{Method::Cgls, 20}}) {
        const Solved onGpu = solve(*gpuPair(b, method(m, iterations)), b.data, 1, method(m, iterations));
        const Solved onCpu = solve(*cpu, b.data, 1, method(m, iterations));
        for (std::size_t k = 1; k < onGpu.residuals.size(); ++k)
            ASSERT_LE(onGpu.residuals[k][0], onGpu.residuals[k - 1][0]) << methodName(m) << " iteration " << k + 1;
        const double apart = relativeError(onGpu.images, onCpu.images);
        std::printf("MEASURED GPU cone-beam %s: residual %.4g -> %.4g (CPU %.4g), image %.3g from the CPU's, "
                    "%.3g from the phantom\n",
                    std::string(methodName(m)).c_str(), onGpu.residuals.front()[0], onGpu.residuals.back()[0],
                    onCpu.residuals.back()[0], apart, relativeError(onGpu.images, b.truth.data));
        EXPECT_LT(apart, 1e-3) << methodName(m);
        EXPECT_NEAR(onGpu.residuals.back()[0], onCpu.residuals.back()[0], 1e-3 * onCpu.residuals.front()[0]);
    }
}

// The FBP start is FDK on the GPU: within 1e-2 of the CPU pair's FDK (the
// texture unit's 8-bit interpolation weights), and a scan short of 180
// degrees + the fan is refused by FDK, as on the CPU.
TEST(CudaDivergentProjector, FbpStartIsFdk) {
    TOMO_REQUIRE_CUDA();
    const Ball scan = ball(90);
    const std::vector<float>& data = scan.data;
    auto cpu = makeConeProjector(scan.geometry, scan.grid, {}, 0);
    auto gpu = gpuPair(scan);
    std::vector<float> images[2];
    int k = 0;
    for (ProjectorPair* pair : {gpu.get(), cpu.get()}) {
        auto b = pair->vector(Space::Sinogram, 1);
        auto x = pair->vector(Space::Image, 1);
        pair->upload(data, *b);
        pair->filteredBackprojection(*b, *x);
        images[k].resize(scan.grid.voxels());
        pair->download(*x, images[k++]);
    }
    const double apart = relativeError(images[0], images[1]);
    std::printf("MEASURED GPU FDK start vs the CPU pair's: %.3g\n", apart);
    EXPECT_LT(apart, 1e-2);

    const Case shortScan{"short", fan(30, 0.5 * kPi), slice(32, 32, 0.8)};
    auto pair = gpuPair(shortScan);
    auto b = pair->vector(Space::Sinogram, 1);
    auto x = pair->vector(Space::Image, 1);
    EXPECT_THROW(pair->filteredBackprojection(*b, *x), InvalidArgument);
}

TEST(CudaDivergentProjector, OneVolumePerVectorAndNoAxis) {
    TOMO_REQUIRE_CUDA();
    // A volume the GPU cannot hold (4096^3 floats: 256 GiB) is refused, named.
    try {
        gpuPair(Case{"huge", cone(10), box(4096, 4096, 4096, 0.01)});
        ADD_FAILURE() << "a 4096^3 volume accepted";
    } catch (const OutOfMemory& e) {
        EXPECT_NE(std::string(e.what()).find("method sirt of a 4096x4096x4096 volume from 10 views of 48x40"),
                  std::string::npos)
            << e.what();
    }
    const Case c = cases()[2];
    auto pair = gpuPair(c);
    EXPECT_EQ(pair->maxSlices(), 1);
    EXPECT_THROW(pair->vector(Space::Image, 2), InvalidArgument);
    try {
        pair->setAxis(10.0, {});
        ADD_FAILURE() << "setAxis accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("there is no rotation axis to move"), std::string::npos) << e.what();
    }
}

// The volume's TV (3 axes) on the GPU: L^T x the forward differences, L its
// adjoint (checkTvOperators); TV on the noisy few-view ball (the CPU test's
// ConeProjector.TvOnAVolumeBeatsSirtOnNoisyFewViews) within 1e-3 of the
// CPU pair's image.
TEST(CudaDivergentProjector, VolumeTvMatchesTheCpuPair) {
    TOMO_REQUIRE_CUDA();
    const Ball b = ball(20);
    auto gpu = gpuPair(b);
    EXPECT_EQ(gpu->tvAxes(), 3);
    const TvCheck check = checkTvOperators(*gpu, 1);
    std::printf("MEASURED GPU volume TV: L^T x %.3g from the differences, <L^T x, p> / <x, L p> - 1 = %.3g\n",
                check.gradientError, check.adjointGap);
    EXPECT_LT(check.gradientError, 1e-8);
    EXPECT_LT(check.adjointGap, 1e-5);

    std::vector<float> data = b.data;
    for (std::size_t i = 0; i < data.size(); ++i) data[i] += 0.3f * std::sin(0.7f * static_cast<float>(i)); // noise
    IterativeOptions tv = method(Method::Tv, 30);
    tv.tvWeight = 0.2;
    const Solved onGpu = solve(*gpuPair(b, tv), data, 1, tv);
    const Solved onCpu = solve(*makeConeProjector(b.geometry, b.grid, tv, 0), data, 1, tv);
    const double apart = relativeError(onGpu.images, onCpu.images);
    std::printf("MEASURED GPU volume TV (30 iterations): image %.3g from the CPU pair's, %.3g from the phantom\n", apart,
                relativeError(onGpu.images, b.truth.data));
    EXPECT_LT(apart, 1e-3);
}

// The real-data comparison (HTC2022 ta: TV from 90 degrees of
// views against FDK of the same views, each correlated with the full-angle
// FDK inside the disc) on the GPU's fan-beam pair: the same gain as the
// CPU pair's (measured there: FDK 0.686, TV 0.756), the TV images within
// 1e-3 of each other.
TEST(CudaDivergentProjectorRealData, LimitedAngleTvMatchesTheCpuPair) {
    TOMO_REQUIRE_CUDA();
    const std::filesystem::path path = test::realData("helsinki_htc2022_fanbeam/htc2022_ta.h5");
    TOMO_REQUIRE_FILE(path);
    BackendRegistry::instance(); // installs the GPU pair
    const LimitedAngle gpu = htcLimitedAngle(path, 0), cpu = htcLimitedAngle(path, std::nullopt);
    const double apart = relativeError(gpu.tv, cpu.tv);
    std::printf("MEASURED HTC2022 ta, 90 degrees, GPU fan-beam pair: correlation FDK %.4f, TV %.4f (CPU pair's TV "
                "%.4f), TV images %.3g apart\n",
                gpu.fdkCorrelation, gpu.tvCorrelation, cpu.tvCorrelation, apart);
    EXPECT_GT(gpu.tvCorrelation, gpu.fdkCorrelation + 0.035);
    EXPECT_LT(apart, 1e-3);
}

} // namespace
} // namespace tomo
