// The iterative methods on the CUDA pair (tests/core/test_iterative.cpp has
// the CPU side): the same images as on the "cpu" pair, the residual falling
// on consistent data, the few-view noisy phantom (SIRT and CGLS below FBP,
// TV at most 0.6 x FBP), slices independent of their batch, and the plan of
// the registry with its region. Every test skips without a CUDA device.
#include "cuda_test_util.h"

#include "../core/projector_test_helpers.h"

#include "tomo/iterative_plan.h"
#include "tomo/registry.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace tomo {
namespace {

using namespace projtest;
constexpr const char* kStrategy = "tex-optimized";

IterativeOptions tvOptions(int iterations) {
    IterativeOptions o = method(Method::Tv, iterations);
    o.tvWeight = 0.1;
    o.bounds.lower = 0.0;
    return o;
}

// 20 iterations of each method on the GPU and on the CPU pair: the same
// images within 1e-4 relative (the pairs compute the same matrices; dot
// products add in another order). CGLS within 1e-3: its conjugate
// directions amplify the order of the sums over 20 iterations of this
// ill-posed problem, more so since the forward's and the back's weights
// round apart (H200: 4.05e-4 after the Joseph pair's third pass; the
// projections themselves agree within 1e-5, CudaProjector.*).
TEST(CudaIterative, SameImagesAsTheCpuPair) {
    TOMO_REQUIRE_CUDA();
    const FewView data;
    auto gpu = pairOf(kStrategy, data.geometry), cpu = pairOf("cpu", data.geometry);
    IterativeOptions sirtFromFbp = method(Method::Sirt, 20);
    sirtFromFbp.init = InitialImage::Fbp;
    for (const IterativeOptions& o : {method(Method::Sirt, 20), sirtFromFbp, method(Method::Cgls, 20), tvOptions(20)}) {
        const Solved a = solve(*gpu, data.noisy, 1, o), b = solve(*cpu, data.noisy, 1, o);
        EXPECT_LT(relativeError(a.images, b.images), o.method == Method::Cgls ? 1e-3 : 1e-4) << methodName(o.method);
    }
}

// Consistent data: the residual falls at every iteration (SIRT 100, CGLS 30).
TEST(CudaIterative, ResidualFallsOnConsistentData) {
    TOMO_REQUIRE_CUDA();
    const ReconGeometry g = parallelGeometry(96, 90);
    const PhantomProblem phantom = sheppLogan(g);
    auto pair = pairOf(kStrategy, g);
    const std::vector<float> consistent = forwardOf(*pair, phantom.image, 1);
    for (const IterativeOptions& o : {method(Method::Sirt, 100), method(Method::Cgls, 30)}) {
        const Solved run = solve(*pair, consistent, 1, o);
        for (std::size_t k = 1; k < run.residuals.size(); ++k)
            ASSERT_LE(run.residuals[k][0], run.residuals[k - 1][0]) << methodName(o.method) << " iteration " << k + 1;
        EXPECT_LT(run.residuals.back()[0], o.method == Method::Sirt ? 4e-2 : 6e-3) << methodName(o.method);
    }
}

// The few-view noisy phantom (the CPU pair measures FBP 9.93e-4,
// SIRT 7.00e-4, CGLS 7.48e-4, TV 0.41 x FBP).
TEST(CudaIterative, FewViewNoisyPhantomBeatsFbp) {
    TOMO_REQUIRE_CUDA();
    const FewView data;
    auto pair = pairOf(kStrategy, data.geometry);
    const FewViewErrors e = fewViewErrors(*pair, data);
    const double fbpError = e.fbp, sirt = e.sirt, cgls = e.cgls, tv = e.tv;
    std::printf("MEASURED cuda few-view noisy RMSE: FBP %.3g, SIRT %.3g, CGLS %.3g, TV %.3g (%.2f x FBP)\n", fbpError,
                sirt, cgls, tv, tv / fbpError);
    EXPECT_LT(sirt, fbpError);
    EXPECT_LT(cgls, fbpError);
    EXPECT_LE(tv, 0.6 * fbpError);
}

// Nine different slices (three groups, one padded) at once equal each alone.
TEST(CudaIterative, SlicesAreIndependentOfTheirBatch) {
    TOMO_REQUIRE_CUDA();
    const FewView data(64);
    const std::size_t values = data.noisy.size(), pixels = data.phantom.image.size();
    std::vector<float> nine;
    for (int s = 0; s < 9; ++s)
        for (std::size_t i = 0; i < values; ++i) nine.push_back(data.noisy[i] * (0.5f + 0.2f * s));
    auto pair = pairOf(kStrategy, data.geometry);
    for (const IterativeOptions& o : {method(Method::Sirt, 8), method(Method::Cgls, 8), tvOptions(8)}) {
        const Solved together = solve(*pair, nine, 9, o);
        for (int s = 0; s < 9; ++s) {
            const Solved alone = solve(*pair, std::span<const float>(nine).subspan(s * values, values), 1, o);
            EXPECT_LT(relativeError(alone.images, std::span<const float>(together.images).subspan(s * pixels, pixels)),
                      1e-6)
                << methodName(o.method) << " slice " << s;
        }
    }
}

// The registry's plan: the solver's images, the region cut out of the
// whole grid, and cancel() stopping the next call.
TEST(CudaIterative, PlanOfTheRegistry) {
    TOMO_REQUIRE_CUDA();
    const FewView data;
    ReconOptions o;
    o.strategy = kStrategy;
    o.iterative = method(Method::Cgls, 8);
    ReconGeometry g = data.geometry;
    auto plan = createPlan(g, o);
    std::vector<float> whole(data.phantom.image.size());
    plan->reconstruct(data.noisy, 1, whole);
    auto pair = pairOf(kStrategy, g);
    EXPECT_LT(relativeError(whole, solve(*pair, data.noisy, 1, o.iterative).images), 1e-6);
    const Region region{10, 20, 50, 40};
    plan->setRegion(region);
    std::vector<float> part(region.pixels());
    plan->backproject(part);
    for (int y = 0; y < region.height; ++y)
        for (int x = 0; x < region.width; ++x)
            ASSERT_NEAR(part[y * region.width + x], whole[(region.y + y) * 128 + region.x + x], 1e-6f);
    plan->cancel();
    EXPECT_THROW(plan->backproject(part), Cancelled);
}

} // namespace
} // namespace tomo
