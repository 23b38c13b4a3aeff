// The range of an integer output estimated before the run: robust
// percentiles with a margin, and the five-row estimate on a phantom volume
// against the whole reconstructed volume.
#include "io_test_helpers.h"
#include "test_support.h"
#include "tomo/axis_finder.h"
#include "tomo/error.h"
#include "tomo/output_range.h"
#include "tomo/phantom.h"
#include "tomo/preview.h"
#include "tomo/volume_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tomo {
namespace {

using test::contains;
using test::messageOf;

TEST(OutputRange, PercentilesLeaveOutliersOutAndWidenByTheMargin) {
    std::vector<float> values(100000);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) / 99999.0f;
    // Five hot and five cold pixels (under 0.01% each side), and values
    // that are not numbers at all.
    for (int i = 0; i < 5; ++i) {
        values[10 + i] = 1000.0f;
        values[20 + i] = -1000.0f;
    }
    values[30] = std::numeric_limits<float>::quiet_NaN();
    values[31] = std::numeric_limits<float>::infinity();
    const RangeEstimate e = robustRange(values);
    EXPECT_EQ(e.values, 99998u);
    EXPECT_GE(e.low, 0.0f);
    EXPECT_LT(e.low, 0.001f);
    EXPECT_GT(e.high, 0.999f);
    EXPECT_LE(e.high, 1.0f);
    const double width = static_cast<double>(e.high) - e.low;
    EXPECT_NEAR(e.min, e.low - 0.05 * width, 1e-6);
    EXPECT_NEAR(e.max, e.high + 0.05 * width, 1e-6);

    RangeEstimateOptions all;
    all.lowPercentile = 0.0;
    all.highPercentile = 100.0;
    all.margin = 0.0;
    const RangeEstimate whole = robustRange(values, all);
    EXPECT_EQ(whole.min, -1000.0f);
    EXPECT_EQ(whole.max, 1000.0f);
}

TEST(OutputRange, EqualValuesStillGiveARangeAndNoFiniteValueIsAnError) {
    const std::vector<float> same(50, 2.0f);
    const RangeEstimate e = robustRange(same);
    EXPECT_FLOAT_EQ(e.min, 1.9f);
    EXPECT_FLOAT_EQ(e.max, 2.1f);
    const std::vector<float> none(3, std::numeric_limits<float>::quiet_NaN());
    const auto message = messageOf<DataError>([&] { robustRange(none); });
    EXPECT_TRUE(contains(message, "none of the 3 values sampled is finite; give the range yourself")) << message;
    RangeEstimateOptions bad;
    bad.lowPercentile = 60.0;
    bad.highPercentile = 40.0;
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { robustRange(same, bad); }), "low percentile < high"));
}

/// A memory writer for the whole reconstructed volume.
class VolumeInMemory final : public VolumeWriter {
public:
    VolumeInMemory(int width, int height, int slices) : volume(width, height, slices) {}
    void writeSlices(int first, int, std::span<const float> data) override {
        const auto at = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(first) * volume.imageSize());
        std::copy(data.begin(), data.end(), volume.data.begin() + at);
    }
    void commit() override {}
    ImageStack volume;
};

TEST(OutputRange, FiveRowsCoverThePhantomVolume) {
    PhantomSpec spec;
    spec.bins = 64;
    spec.rows = 30;
    const std::vector<double> angles = uniformAngles(96);
    auto reader = makeMemoryDataset(projectPhantom(spec, angles), angles, "phantom");
    Geometry g;
    g.angles = angles;
    g.bins = spec.bins;
    g.axis = g.detectorCentre();
    VolumeJob job;
    job.geometry = ReconGeometry::fullSlice(g);
    job.options.strategy = "cpu";
    job.options.threads = 2;
    job.firstRow = 3;
    job.rowCount = 24;

    VolumeInMemory whole(spec.bins, spec.bins, job.rowCount);
    reconstructVolume(*reader, job, whole);
    const RangeEstimate e = estimateOutputRange(*reader, job);
    EXPECT_EQ(e.rows, spreadRows(3, 24, 5));
    EXPECT_EQ(e.values, 5u * spec.bins * spec.bins);

    // Nearly all of the volume lies inside, and the range is not much
    // wider than the volume's own (its levels are not wasted).
    const auto [lo, hi] = std::minmax_element(whole.volume.data.begin(), whole.volume.data.end());
    const auto inside = std::count_if(whole.volume.data.begin(), whole.volume.data.end(),
                                      [&](float v) { return v >= e.min && v <= e.max; });
    EXPECT_GE(static_cast<double>(inside), 0.999 * static_cast<double>(whole.volume.data.size()));
    EXPECT_LE(e.max - e.min, 1.25 * (*hi - *lo));
    // The phantom's densest ellipse (the skull, 1 x 0.01 per pixel) is inside.
    EXPECT_GT(e.max, 0.009f);
    EXPECT_LT(e.min, 0.0f); // FBP undershoots at edges

    // Stored as uint16 over that range: what is clipped is counted, and
    // everything else comes back within half a step.
    test::TempDir dir;
#if TOMO_WITH_HDF5
    const std::filesystem::path volume = dir / "v.h5";
#elif TOMO_WITH_TIFF
    const std::filesystem::path volume = dir / "v";
#else
    GTEST_SKIP() << "this build writes neither HDF5 nor TIFF";
#endif
    WriteOptions options;
    options.type = OutputType::UInt16;
    options.rangeMin = e.min;
    options.rangeMax = e.max;
    auto writer = createVolumeWriter(volume, spec.bins, spec.bins, job.rowCount, options);
    writer->writeSlices(0, job.rowCount, whole.volume.data);
    writer->commit();
    const auto outside = static_cast<std::uint64_t>(whole.volume.data.size()) - static_cast<std::uint64_t>(inside);
    EXPECT_LE(writer->clipped().total(), outside);
    const ImageStack back = readVolume(volume);
    const double halfStep = 0.5 * quantizationFor(OutputType::UInt16, e.min, e.max).slope;
    for (std::size_t i = 0; i < back.data.size(); ++i) {
        const float v = whole.volume.data[i];
        const float expected = std::clamp(v, e.min, e.max);
        ASSERT_NEAR(back.data[i], expected, halfStep * 1.001 + 1e-9) << i;
    }
}

} // namespace
} // namespace tomo
