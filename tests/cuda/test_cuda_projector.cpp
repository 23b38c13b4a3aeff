// The CUDA projector pair against the CPU pairs (tests/core/test_projector.cpp
// says what each property means): adjointness within 1e-5, the forward and
// back projections, the FBP start and every vector operation equal to the
// "cpu" pair's within 1e-5, slices independent of their batch, the
// phantom's sinogram, and a slice too large for the GPU refused by name; the
// Fourier pair (ProjectorKind::Fourier) the adjoint of its back-projector,
// equal to its CPU twin, and SIRT's residual falling with it. Every test
// skips without a CUDA device.
#include "cuda_test_util.h"

#include "../core/projector_test_helpers.h"

#include "tomo/error.h"
#include "tomo/iterative_plan.h"
#include "tomo/projector.h"
#include "tomo/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

namespace tomo {
namespace {

using namespace projtest;
constexpr const char* kStrategy = "tex-optimized"; // any CUDA strategy: they share the pair
constexpr double kPi = std::numbers::pi;

// <A x, y> = <x, A^T y> within 1e-5 relative (the CPU float pair measures
// 9.4e-8), batches of 1, 2, 3, 5 and 9 slices (1, 2, 4 lanes, padded groups).
TEST(CudaProjector, MatchedPairIsTheTranspose) {
    TOMO_REQUIRE_CUDA();
    for (const GeometryCase& c : geometryCases())
        for (int count : {1, 2, 3, 5, 9}) {
            auto pair = pairOf(kStrategy, c.geometry);
            ASSERT_TRUE(pair->isMatched());
            const std::vector<double> gaps = adjointnessGaps(*pair, count, 11);
            for (int s = 0; s < count; ++s)
                EXPECT_NEAR(gaps[s], 0.0, 1e-5) << c.name << ", " << count << " slices, slice " << s;
        }
}

// The CUDA kernels run joseph.h's arithmetic as the CPU pair does: forward
// and back (matched and unmatched) within 1e-5 of "cpu" and of
// "cpu-reference".
TEST(CudaProjector, ProjectionsMatchTheCpuPairs) {
    TOMO_REQUIRE_CUDA();
    for (const GeometryCase& c : geometryCases())
        for (bool matched : {true, false}) {
            IterativeOptions o;
            o.matched = matched;
            auto gpu = pairOf(kStrategy, c.geometry, o);
            const std::size_t pixels = static_cast<std::size_t>(c.geometry.sliceWidth) * c.geometry.sliceHeight;
            const std::size_t values = static_cast<std::size_t>(c.geometry.geometry.projections()) * c.geometry.geometry.bins;
            const std::vector<float> x = randomValues(pixels * 5, 3), y = randomValues(values * 5, 4);
            const std::vector<float> ax = forwardOf(*gpu, x, 5), by = backOf(*gpu, y, 5);
            for (const char* cpu : {"cpu", "cpu-reference"}) {
                auto pair = pairOf(cpu, c.geometry, o);
                EXPECT_LT(relativeError(ax, forwardOf(*pair, x, 5)), 1e-5) << c.name << " vs " << cpu;
                EXPECT_LT(relativeError(by, backOf(*pair, y, 5)), 1e-5) << c.name << " vs " << cpu << " matched " << matched;
            }
        }
}

// At full size, where t and s carry the most rounding (~1e-4 pixel at 2048),
// for 1 and 4 slices (1 and 4 lanes): <A x, y> = <x, A^T y> within 1e-5 (the
// CPU pair measures 1.4e-8 here), and forward and back within 1e-5 of the
// "cpu" pair, which runs the same joseph.h operations (the largest
// difference is printed: 0 when the two agree bit for bit).
TEST(CudaProjector, FullSizeIsTheTransposeAndTheCpuPair) {
    TOMO_REQUIRE_CUDA();
    const ReconGeometry g = parallelGeometry(2048, 24, kPi, 2048, 2048, 3.3);
    const std::size_t pixels = static_cast<std::size_t>(g.sliceWidth) * g.sliceHeight;
    const std::size_t values = static_cast<std::size_t>(g.geometry.projections()) * g.geometry.bins;
    auto gpu = pairOf(kStrategy, g), cpu = pairOf("cpu", g);
    for (int count : {1, 4}) {
        auto x = gpu->vector(Space::Image, count), ax = gpu->vector(Space::Sinogram, count);
        auto y = gpu->vector(Space::Sinogram, count), aty = gpu->vector(Space::Image, count);
        const std::vector<float> hx = positiveValues(pixels * count, 41), hy = positiveValues(values * count, 43);
        gpu->upload(hx, *x);
        gpu->upload(hy, *y);
        gpu->forward(*x, *ax);
        gpu->back(*y, *aty);
        const std::vector<double> left = gpu->dot(*ax, *y), right = gpu->dot(*x, *aty);
        for (int s = 0; s < count; ++s) {
            EXPECT_NEAR(left[s] / right[s], 1.0, 1e-5) << count << " slices, slice " << s;
            std::printf("MEASURED CUDA adjointness at 2048^2 from 24 views, %d slices: %.3g\n", count,
                        std::abs(left[s] / right[s] - 1.0));
        }
        const std::vector<float> gpuAx = forwardOf(*gpu, hx, count), cpuAx = forwardOf(*cpu, hx, count);
        const std::vector<float> gpuBy = backOf(*gpu, hy, count), cpuBy = backOf(*cpu, hy, count);
        EXPECT_LT(relativeError(gpuAx, cpuAx), 1e-5) << count;
        EXPECT_LT(relativeError(gpuBy, cpuBy), 1e-5) << count;
        float forwardGap = 0.0f, backGap = 0.0f;
        for (std::size_t i = 0; i < gpuAx.size(); ++i) forwardGap = std::max(forwardGap, std::abs(gpuAx[i] - cpuAx[i]));
        for (std::size_t i = 0; i < gpuBy.size(); ++i) backGap = std::max(backGap, std::abs(gpuBy[i] - cpuBy[i]));
        std::printf("MEASURED CUDA vs cpu pair at 2048^2, %d slices: largest difference forward %g, back %g\n", count,
                    forwardGap, backGap);
    }
}

// The FBP start through the FBP plans' GPU filter: within 1e-5 of the
// cpu-reference FBP strategy (the CUDA FBP strategies measure ~1e-6).
TEST(CudaProjector, FbpStartIsTheFbpStrategy) {
    TOMO_REQUIRE_CUDA();
    const ReconGeometry g = parallelGeometry(128, 120, kPi, 0, 0, 1.25);
    const PhantomProblem phantom = sheppLogan(parallelGeometry(128, 120));
    std::vector<float> sinograms;
    for (float scale : {1.0f, 0.5f, 2.0f, 0.25f, 1.5f})
        for (float v : phantom.sinogram) sinograms.push_back(v * scale);
    ReconOptions fbp;
    fbp.strategy = "cpu-reference";
    auto plan = BackendRegistry::instance().find("cpu-reference")->createPlan(g, fbp);
    std::vector<float> expected(5 * 128 * 128);
    plan->reconstruct(sinograms, 5, expected);
    auto pair = pairOf(kStrategy, g);
    auto b = pair->vector(Space::Sinogram, 5), x = pair->vector(Space::Image, 5);
    pair->upload(sinograms, *b);
    pair->filteredBackprojection(*b, *x);
    std::vector<float> result(expected.size());
    pair->download(*x, result);
    EXPECT_LT(relativeError(result, expected), 1e-5);
}

// Every vector operation of the iterative methods against the "cpu" pair's.
TEST(CudaProjector, ArithmeticMatchesTheCpuPair) {
    TOMO_REQUIRE_CUDA();
    const ReconGeometry g = parallelGeometry(40, 30, kPi, 36, 44, 0.7);
    auto gpu = pairOf(kStrategy, g), cpu = pairOf("cpu", g);
    const int n = 6;
    const std::size_t pixels = 36 * 44, values = 30 * 40;
    const std::vector<float> xs = randomValues(pixels * n, 1), ys = randomValues(pixels * n, 2),
                             zs = randomValues(pixels * n, 3), bs = randomValues(values * n, 4);
    const std::vector<double> a = {2.0, -0.5, 0.0, 1.0, 3.0, 0.25}, c = {1.0, 3.0, 0.5, 0.0, -1.0, 2.0};
    auto run = [&](ProjectorPair& pair) {
        std::vector<float> out;
        auto x = pair.vector(Space::Image, n), y = pair.vector(Space::Image, n), z = pair.vector(Space::Image, n);
        auto p = pair.vector(Space::TvDual, n), r = pair.vector(Space::TvDual, n);
        auto b = pair.vector(Space::Sinogram, n);
        pair.upload(xs, *x);
        pair.upload(ys, *y);
        pair.upload(zs, *z);
        pair.upload(bs, *b);
        std::vector<float> v(pixels * n);
        auto keep = [&](const BatchVector& vec) {
            pair.download(vec, v);
            out.insert(out.end(), v.begin(), v.end());
        };
        const std::vector<double> dots = pair.dot(*x, *y);
        out.insert(out.end(), dots.begin(), dots.end());
        pair.axpby(a, *x, c, *y);
        keep(*y);
        pair.clamp(*y, Bounds{-0.3, 0.6});
        keep(*y);
        pair.upload(randomValues(2 * pixels * n, 5), *r);
        pair.tvDual(*x, 0.3, 0.5, *p, *r);
        std::vector<float> dual(2 * pixels * n);
        for (const BatchVector* d : {p.get(), r.get()}) {
            pair.download(*d, dual);
            out.insert(out.end(), dual.begin(), dual.end());
        }
        pair.tvPrimal(*x, *p, 0.2, Bounds{-0.5, 0.5}, *y);
        keep(*y);
        for (bool weighted : {false, true}) {
            const std::vector<double> norms = pair.gradientStep(*b, a, weighted, Bounds{-0.4, 0.9}, *z);
            out.insert(out.end(), norms.begin(), norms.end());
            keep(*z);
        }
        return out;
    };
    const std::vector<float> onGpu = run(*gpu), onCpu = run(*cpu);
    ASSERT_EQ(onGpu.size(), onCpu.size());
    EXPECT_LT(relativeError(onGpu, onCpu), 1e-5);
}

// A slice's projections do not depend on its batch: 9 slices at once equal
// each slice alone.
TEST(CudaProjector, SlicesDoNotDependOnTheirBatch) {
    TOMO_REQUIRE_CUDA();
    const ReconGeometry g = parallelGeometry(40, 30, kPi, 36, 44, 0.7);
    auto pair = pairOf(kStrategy, g);
    const std::size_t pixels = 36 * 44, values = 30 * 40;
    const std::vector<float> x = randomValues(pixels * 9, 9), y = randomValues(values * 9, 10);
    const std::vector<float> ax = forwardOf(*pair, x, 9), aty = backOf(*pair, y, 9);
    for (int s = 0; s < 9; ++s) {
        const std::vector<float> one = forwardOf(*pair, std::span<const float>(x).subspan(s * pixels, pixels), 1);
        const std::vector<float> oneBack = backOf(*pair, std::span<const float>(y).subspan(s * values, values), 1);
        EXPECT_EQ(relativeError(one, std::span<const float>(ax).subspan(s * values, values)), 0.0) << "forward " << s;
        EXPECT_EQ(relativeError(oneBack, std::span<const float>(aty).subspan(s * pixels, pixels)), 0.0) << "back " << s;
    }
}

// The phantom's exact sinogram, as the CPU pairs (relative RMSE 1.47e-2 at
// 256 bins, 180 views).
TEST(CudaProjector, ForwardProjectionOfThePhantomIsItsSinogram) {
    TOMO_REQUIRE_CUDA();
    const ReconGeometry g = parallelGeometry(256, 180);
    const PhantomProblem phantom = sheppLogan(g);
    auto pair = pairOf(kStrategy, g);
    const double error = relativeError(forwardOf(*pair, phantom.image, 1), phantom.sinogram);
    std::printf("MEASURED cuda forward vs analytic sinogram: relative RMSE %.3g\n", error);
    EXPECT_LT(error, 2.9e-2);
}

// The back-projector caches per 32-pixel square the bins it reads, and a
// square that sees a projection wholly off the detector takes a null one;
// the forward projector samples interior lines without bounds tests. So:
// a grid of many squares (partial ones at its edges) with the axis 70 bins
// off centre (some squares see projections wholly off the detector), and
// angles whose slopes lie near rayLines' 1e-7 threshold: forward and back
// within 1e-5 of the "cpu" pair; with the axis 5e8 bins off, both exactly
// zero (rayLines' int conversion once overflowed there: INT_MIN lines).
TEST(CudaProjector, OffsetAxesAndManySquaresMatchTheCpuPair) {
    TOMO_REQUIRE_CUDA();
    ReconGeometry nearAxes = parallelGeometry(90, 12, kPi, 100, 70, 20.0);
    for (int p = 0; p < 12; ++p) nearAxes.geometry.angles[p] = (p % 2 ? kPi / 2 : 0.0) + (p / 2 - 3) * 1e-7;
    const struct {
        const char* name;
        ReconGeometry geometry;
    } cases[] = {{"axis 70 bins off centre", parallelGeometry(120, 50, kPi, 200, 150, 70.0)},
                 {"slopes near 1e-7", nearAxes},
                 {"axis 5e8 bins off", parallelGeometry(64, 20, kPi, 70, 45, 5e8)}};
    for (const auto& c : cases) {
        auto gpu = pairOf(kStrategy, c.geometry), cpu = pairOf("cpu", c.geometry);
        const std::size_t pixels = static_cast<std::size_t>(c.geometry.sliceWidth) * c.geometry.sliceHeight;
        const std::size_t values = static_cast<std::size_t>(c.geometry.geometry.projections()) * c.geometry.geometry.bins;
        const std::vector<float> x = randomValues(pixels * 3, 5), y = randomValues(values * 3, 6);
        const std::vector<float> ax = forwardOf(*gpu, x, 3), by = backOf(*gpu, y, 3);
        if (c.geometry.geometry.axis > 1e8) {
            EXPECT_EQ(*std::max_element(ax.begin(), ax.end()), 0.0f) << c.name;
            EXPECT_EQ(*std::min_element(ax.begin(), ax.end()), 0.0f) << c.name;
            EXPECT_EQ(*std::max_element(by.begin(), by.end()), 0.0f) << c.name;
            EXPECT_EQ(*std::min_element(by.begin(), by.end()), 0.0f) << c.name;
            continue;
        }
        EXPECT_LT(relativeError(ax, forwardOf(*cpu, x, 3)), 1e-5) << c.name;
        EXPECT_LT(relativeError(by, backOf(*cpu, y, 3)), 1e-5) << c.name;
    }
}

// A slice whose vectors exceed the GPU's memory is refused when the pair
// is made, naming the method, the slice and the sizes.
TEST(CudaProjector, SliceLargerThanTheGpuIsRefused) {
    TOMO_REQUIRE_CUDA();
    const std::size_t memory = gpuDevices().at(0).memoryBytes;
    const int size = static_cast<int>(std::sqrt(static_cast<double>(memory) / sizeof(float))) + 4096; // one image > memory
    const ReconGeometry g = parallelGeometry(size, 2);
    try {
        pairOf(kStrategy, g, method(Method::Sirt, 10));
        ADD_FAILURE() << "a " << size << "^2 slice was accepted";
    } catch (const OutOfMemory& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("not enough device memory for method sirt of one " + std::to_string(size) + "x" +
                            std::to_string(size) + " slice from 2 projections"),
                  std::string::npos)
            << what;
    }
}

// SIRT keeps b and x per slice plus two groups of scratch: for 32 slices of
// 256^2 from 256 projections the pair holds 1 + 4/32 times the input and
// output plus its weights and partial sums: 1.17 x (computed from the
// buffers' sizes); asserted <= 1.2 x.
TEST(CudaProjector, SirtMemoryIsNearInputPlusOutput) {
    TOMO_REQUIRE_CUDA();
    const ReconGeometry g = parallelGeometry(256, 256);
    ReconOptions o;
    o.strategy = kStrategy;
    o.iterative = method(Method::Sirt, 2);
    auto plan = createPlan(g, o);
    ASSERT_GE(plan->maxSlices(), 32);
    const std::size_t values = 256 * 256;
    std::vector<float> sinograms(32 * values, 0.01f), slices(32 * values);
    plan->reconstruct(sinograms, 32, slices);
    const double inOut = 2.0 * 32 * values * sizeof(float);
    const double ratio = static_cast<double>(plan->memoryBytes()) / inOut;
    std::printf("MEASURED cuda SIRT memory for 32 slices of 256^2 from 256 projections: %.3f x (input + output)\n", ratio);
    EXPECT_LE(ratio, 1.2);
}

// ------------------------------------------------------ the Fourier pair

IterativeOptions fourierOptions(Method m = Method::Sirt, int iterations = 20) {
    IterativeOptions o = method(m, iterations);
    o.projector = ProjectorKind::Fourier;
    return o;
}

/// The Fourier pair's geometries: even and square, and odd with the axis
/// off centre over 360 degrees (reversed rows in the canonical order).
std::vector<GeometryCase> fourierCases() {
    return {{"square64", parallelGeometry(64, 90)}, {"odd63", parallelGeometry(63, 90, 2 * kPi, 63, 63, 3.25)}};
}

// forward() is the adjoint (conjugate transpose) of back(), step by step:
// <A x, y> = <x, B y> within 1e-5 relative (float rounding; positive values:
// no cancellation in the sums) for 1, 2, 3 and 5 slices (a lone slice, one
// and two pairs, a padded group).
TEST(CudaFourierProjector, IsTheAdjointOfItsBackProjector) {
    TOMO_REQUIRE_CUDA();
    for (const GeometryCase& c : fourierCases())
        for (int count : {1, 2, 3, 5}) {
            auto pair = pairOf(kStrategy, c.geometry, fourierOptions());
            ASSERT_TRUE(pair->isMatched());
            ASSERT_EQ(pair->name().rfind("cuda fourier, matched", 0), 0u) << pair->name();
            const std::vector<double> gaps = adjointnessGaps(*pair, count, 31);
            for (int s = 0; s < count; ++s) {
                EXPECT_LT(std::abs(gaps[s]), 1e-5) << c.name << ", " << count << " slices, slice " << s;
                std::printf("MEASURED cuda fourier adjointness, %s, %d slices, slice %d: %.3g\n", c.name.c_str(), count,
                            s, std::abs(gaps[s]));
            }
        }
}

// The same operator as the CPU twin (makeFourierCpuProjector): forward and
// back within 1e-5 relative, for 3 slices (a pair and a lone slice).
TEST(CudaFourierProjector, EqualsTheCpuTwin) {
    TOMO_REQUIRE_CUDA();
    for (const GeometryCase& c : fourierCases()) {
        auto gpu = pairOf(kStrategy, c.geometry, fourierOptions());
        auto cpu = makeFourierCpuProjector(c.geometry, FilterOptions{}, fourierOptions(), 0);
        const std::size_t pixels = static_cast<std::size_t>(c.geometry.sliceWidth) * c.geometry.sliceHeight;
        const std::size_t values = static_cast<std::size_t>(c.geometry.geometry.projections()) * c.geometry.geometry.bins;
        const std::vector<float> x = randomValues(pixels * 3, 7), y = randomValues(values * 3, 8);
        const double forward = relativeError(forwardOf(*gpu, x, 3), forwardOf(*cpu, x, 3));
        const double back = relativeError(backOf(*gpu, y, 3), backOf(*cpu, y, 3));
        std::printf("MEASURED cuda fourier vs cpu twin, %s: forward %.3g, back %.3g\n", c.name.c_str(), forward, back);
        EXPECT_LT(forward, 1e-5) << c.name;
        EXPECT_LT(back, 1e-5) << c.name;
    }
}

// SIRT on the Fourier pair of a CUDA strategy (the registry's
// createProjector): the residual falls at every one of 20 iterations on the
// phantom's sinogram, 128^2 from 180 views.
TEST(CudaFourierProjector, SirtResidualFalls) {
    TOMO_REQUIRE_CUDA();
    const ReconGeometry g = parallelGeometry(128, 180);
    const PhantomProblem phantom = sheppLogan(g);
    auto pair = pairOf(kStrategy, g, fourierOptions(Method::Sirt, 20));
    ASSERT_EQ(pair->name().rfind("cuda fourier", 0), 0u) << pair->name();
    const Solved run = solve(*pair, phantom.sinogram, 1, fourierOptions(Method::Sirt, 20));
    ASSERT_EQ(run.residuals.size(), 20u);
    for (std::size_t k = 1; k < run.residuals.size(); ++k)
        EXPECT_LE(run.residuals[k][0], run.residuals[k - 1][0]) << "iteration " << k + 1;
    std::printf("MEASURED cuda fourier SIRT relative residual: %.3g after 1, %.3g after 20 iterations\n",
                run.residuals.front()[0], run.residuals.back()[0]);
}

} // namespace
} // namespace tomo
