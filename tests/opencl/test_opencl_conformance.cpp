// The OpenCL strategies against cpu-reference on the Shepp-Logan phantom, in
// every mode, within the CUDA suites' tolerances (test_cuda_conformance.cpp
// says why each is what it is); ROI and axis changes; the filter against the
// CPU's. Small sizes: CI runs them on PoCL on 2 cores.
#include "opencl_test_util.h"

#include "tomo/filter.h"

#include <cstdlib>
#include <tuple>

namespace tomo::ocltest {
namespace {

using gputest::kLinearFloat;
using gputest::tolerance;

/// 64 bins, 64 angles, 5 slices (a full and a partial pass for 2 and 4 slices per pass).
const Dataset& mainDataset() {
    static const Dataset d = phantomDataset(64, 64, 5);
    return d;
}

using Mode = gputest::ModeParam;

class OpenClModes : public ::testing::TestWithParam<Mode> {};

TEST_P(OpenClModes, MatchesCpuReferenceOnPhantom) {
    TOMO_REQUIRE_OPENCL();
    const auto& [strategy, interp, precision, spp] = GetParam();
    const ReconOptions options = optionsFor(strategy, interp, precision, spp);
    if (precision == Precision::Float16 && !testDevice().fp16) {
        // Rejected clearly where the device lacks cl_khr_fp16.
        try {
            gputest::backendNamed(strategy).checkOptions(options);
            FAIL() << strategy << " accepted float16 on a device without cl_khr_fp16";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find("cl_khr_fp16"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("precision float32"), std::string::npos) << e.what();
        }
        GTEST_SKIP() << "the device has no cl_khr_fp16: float16 is rejected (checked), not run";
    }
    const Dataset& d = mainDataset();
    const auto& ref = reference(d, d.geometry, interp);
    const auto out = gputest::run(strategy, d, d.geometry, options);
    const Errors e = compare(out, ref, d.slices);
    report(strategy + " " + std::string(interpolationName(interp)) + " " + std::string(precisionName(precision)) +
               " x" + std::to_string(spp),
           e);
    EXPECT_TRUE(e.allWritten);
    EXPECT_LE(e.relative, tolerance(interp, precision));
}

INSTANTIATE_TEST_SUITE_P(
    OpenCl, OpenClModes,
    ::testing::Combine(::testing::Values(std::string("ocl-tex-standard"), std::string("ocl-tex-optimized"),
                                         std::string("ocl-alu")),
                       ::testing::Values(Interpolation::Nearest, Interpolation::Linear),
                       ::testing::Values(Precision::Float32, Precision::Float16), ::testing::Values(1, 2, 4)),
    gputest::modeTestName);

TEST(OpenClConformance, RegionIsAWindowOfTheFullSliceAndAxisChangesKeepTheFilter) {
    TOMO_REQUIRE_OPENCL();
    const Dataset d = phantomDataset(64, 48, 2, 70, 58); // odd, non-square grid
    for (const char* strategy : {"ocl-tex-standard", "ocl-tex-optimized", "ocl-alu"}) {
        const ReconOptions options = optionsFor(strategy, Interpolation::Linear, Precision::Float32, 2);
        auto plan = gputest::backendNamed(strategy).createPlan(d.geometry, options);
        plan->setSinograms(d.sinograms, d.slices);
        std::vector<float> full(static_cast<std::size_t>(d.slices) * d.geometry.region.pixels());
        plan->backproject(full);

        // A region: the same pixels as in the full slice (the same arithmetic).
        const Region region{13, 7, 37, 29};
        plan->setRegion(region);
        std::vector<float> part(static_cast<std::size_t>(d.slices) * region.pixels());
        plan->backproject(part);
        for (int s = 0; s < d.slices; ++s)
            for (int y = 0; y < region.height; ++y)
                for (int x = 0; x < region.width; ++x)
                    ASSERT_EQ(part[(static_cast<std::size_t>(s) * region.height + y) * region.width + x],
                              full[(static_cast<std::size_t>(s) * d.geometry.sliceHeight + region.y + y) *
                                       d.geometry.sliceWidth + region.x + x])
                        << strategy << " slice " << s << " pixel " << x << "," << y;

        // A new axis without filtering again: as cpu-reference with that axis.
        ReconGeometry moved = d.geometry;
        moved.geometry.axis += 1.75;
        plan->setRegion(moved.region);
        plan->setAxis(moved.geometry.axis, {});
        std::vector<float> shifted(full.size());
        plan->backproject(shifted);
        const auto& ref = reference(d, moved, Interpolation::Linear, "axis+1.75");
        const Errors e = compare(shifted, ref, d.slices);
        report(std::string(strategy) + " after setAxis(+1.75)", e);
        EXPECT_LE(e.relative, kLinearFloat) << strategy;
    }
}

TEST(OpenClConformance, StreamingEqualsSetThenBackproject) {
    TOMO_REQUIRE_OPENCL();
    const Dataset& d = mainDataset(); // 5 slices: 5, 3 or 2 passes through the double buffers
    for (const char* strategy : {"ocl-tex-standard", "ocl-tex-optimized", "ocl-alu"})
        for (int spp : {1, 2, 4}) {
            const ReconOptions options = optionsFor(strategy, Interpolation::Linear, Precision::Float32, spp);
            auto plan = gputest::backendNamed(strategy).createPlan(d.geometry, options);
            std::vector<float> streamed(static_cast<std::size_t>(d.slices) * d.geometry.region.pixels(), -12345.0f);
            std::vector<float> stepwise(streamed.size(), -12345.0f);
            plan->reconstruct(d.sinograms, d.slices, streamed);
            const StageTimes times = plan->lastStageTimes();
            EXPECT_GT(times.backproject, 0.0) << strategy; // profiled on the device
            plan->setSinograms(d.sinograms, d.slices);
            plan->backproject(stepwise);
            EXPECT_EQ(streamed, stepwise) << strategy << " x" << spp;
            // The kept sinograms are the streamed ones: backproject() alone again.
            std::vector<float> again(streamed.size());
            plan->reconstruct(d.sinograms, d.slices, streamed);
            plan->backproject(again);
            EXPECT_EQ(again, streamed) << strategy << " x" << spp;
        }
}

TEST(OpenClConformance, FilterMatchesTheCpuFilter) {
    TOMO_REQUIRE_OPENCL();
    gputest::expectFilterEqualsCpu("OpenCL filter", {64, 37}, {16, 15},
                                    [](std::span<const float> data, int rows, int bins, const FilterOptions& f,
                                       std::span<const double> weights) {
                                        return opencl::filterRows(data, rows, bins, f, weights);
                                    });
}

} // namespace
} // namespace tomo::ocltest
