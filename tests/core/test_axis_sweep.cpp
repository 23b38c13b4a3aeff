// Axis sweep: each trial slice is the slice a plain reconstruction at that
// axis gives; the row is filtered once; ranges and bad input.
#include "tomo/axis_sweep.h"
#include "tomo/error.h"
#include "tomo/phantom.h"
#include "tomo/preview.h"
#include "tomo/registry.h"

#include "axis_test_phantom.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tomo {
namespace {

ReconOptions cpuOptions(const std::string& strategy) {
    ReconOptions o;
    o.strategy = strategy;
    o.threads = 2;
    return o;
}

/// The slice of `sinogram` reconstructed on its own at `axis`.
Image reconstructAt(const Image& sinogram, const std::vector<double>& angles, double axis, const Region& region,
                    const ReconOptions& options) {
    ReconGeometry g = ReconGeometry::fullSlice(Geometry{angles, sinogram.width, axis, {}, {}});
    g.region = region;
    Image slice(region.width, region.height);
    createPlan(g, options)->reconstruct(std::span<const float>(sinogram.data), 1, std::span<float>(slice.data));
    return slice;
}

TEST(AxisSweep, EachSliceIsTheReconstructionAtItsAxis) {
    const auto angles = uniformAngles(120);
    const Image sino = test::phantomWithAxis(96, angles, 13); // axis at 48.8
    for (const char* strategy : {"cpu", "cpu-reference"}) {
        AxisSweepJob job;
        job.axes = axisRange(46.5, 50.5, 0.5);
        job.region = Region{8, 12, 70, 60};
        job.options = cpuOptions(strategy);
        const AxisSweepResult sweep = sweepAxis(sino, angles, job);
        ASSERT_EQ(sweep.slices.depth, 9);
        EXPECT_EQ(sweep.slices.width, 70);
        EXPECT_EQ(sweep.slices.height, 60);
        EXPECT_EQ(sweep.axes, job.axes);
        EXPECT_EQ(sweep.strategy, strategy);
        EXPECT_GT(sweep.secondsBackproject, 0.0);
        for (int i = 0; i < sweep.slices.depth; ++i) {
            const Image single = reconstructAt(sino, angles, job.axes[i], *job.region, job.options);
            const float peak = *std::max_element(single.data.begin(), single.data.end());
            const auto slice = sweep.slices.image(i);
            // The same plan arithmetic after setAxis as after creation (measured: identical).
            for (std::size_t p = 0; p < single.size(); ++p)
                ASSERT_NEAR(slice[p], single.data[p], 1e-6f * peak) << strategy << " axis " << job.axes[i];
        }
        // The slices differ: the axis matters.
        EXPECT_NE(std::vector<float>(sweep.slices.image(0).begin(), sweep.slices.image(0).end()),
                  std::vector<float>(sweep.slices.image(8).begin(), sweep.slices.image(8).end()));
    }
}

TEST(AxisSweep, ReadsTheRowFromADatasetAndReportsProgress) {
    const auto angles = uniformAngles(90);
    ImageStack stack = test::tiltedPhantom(64, angles, 3, 0, 10); // rows differ by 1 px of axis
    const Image row2 = stack.slice(2);
    auto reader = makeMemoryDataset(std::move(stack), angles);
    AxisSweepJob job;
    job.axes = {32.5, 33.5};
    job.options = cpuOptions("cpu");
    std::vector<double> fractions;
    const AxisSweepResult sweep =
        sweepAxis(*reader, 2, job, [&](double f, std::string_view) { fractions.push_back(f); });
    EXPECT_EQ(fractions, (std::vector<double>{0.5, 1.0}));
    EXPECT_EQ(sweep.region, (Region{0, 0, 64, 64}));
    const AxisSweepResult direct = sweepAxis(row2, angles, job);
    EXPECT_EQ(sweep.slices.data, direct.slices.data);

    CancelToken cancel;
    cancel.cancel();
    EXPECT_THROW(sweepAxis(*reader, 2, job, {}, &cancel), Cancelled);
    EXPECT_THROW(sweepAxis(*reader, 3, job), InvalidArgument);
}

TEST(AxisSweep, RangesIncludeTheirEndAndRefuseBadInput) {
    EXPECT_EQ(axisRange(10.0, 11.0, 0.25), (std::vector<double>{10.0, 10.25, 10.5, 10.75, 11.0}));
    EXPECT_EQ(axisRange(10.0, 10.9, 0.5), (std::vector<double>{10.0, 10.5}));
    EXPECT_EQ(axisRange(3.0, 3.0, 1.0), (std::vector<double>{3.0}));
    EXPECT_EQ(axisRange(0.0, 0.3, 0.1).size(), 4u); // 0.3 / 0.1 = 2.999...: the end is still in
    auto message = [](double a, double b, double s) {
        try {
            axisRange(a, b, s, 1000, "--center-sweep");
        } catch (const InvalidArgument& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message(1, 2, 0).find("step must be > 0"), std::string::npos);
    EXPECT_NE(message(2, 1, 0.5).find("--center-sweep 2:1:0.5"), std::string::npos);
    EXPECT_NE(message(0, 1e6, 0.1).find("at most 1000"), std::string::npos);
    EXPECT_NE(message(NAN, 1, 0.1).find("finite"), std::string::npos);

    const auto angles = uniformAngles(90);
    const Image sino = test::phantomWithAxis(64, angles, 0);
    AxisSweepJob job;
    job.options = cpuOptions("cpu");
    EXPECT_THROW(sweepAxis(sino, angles, job), InvalidArgument); // no axes
    job.axes = {31.5, INFINITY};
    EXPECT_THROW(sweepAxis(sino, angles, job), InvalidArgument);
    job.axes = {31.5};
    job.axisOffsets = {1.0, 2.0};
    EXPECT_THROW(sweepAxis(sino, angles, job), InvalidArgument);
    job.axisOffsets.clear();
    job.region = Region{60, 0, 10, 10};
    EXPECT_THROW(sweepAxis(sino, angles, job), InvalidArgument);
}

} // namespace
} // namespace tomo
