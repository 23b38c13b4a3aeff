// Flat/dark correction and -log: exact values, clamping of impossible
// transmissions, NaN/inf reporting, loadSinograms over real readers.
#include "corrections_test_helpers.h"
#include "hdf5_builder.h"
#include "io_test_helpers.h"
#include "test_support.h"
#include "tomo/error.h"
#include "tomo/pipeline.h"
#include "tomo/preprocess.h"
#include "tomo/volume_io.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

namespace tomo {
namespace {

using test::contains;
using test::messageOf;
using test::TempDir;

const float kClampedValue = static_cast<float>(-std::log(1e-5)); // documented minimum transmission
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// A float32 raw file, projection-major, value(a, r, c) from `f`.
template <typename F>
std::unique_ptr<DatasetReader> rawDataset(const std::filesystem::path& path, int A, int R, int C, F f) {
    {
        std::ofstream out(path, std::ios::binary);
        for (int a = 0; a < A; ++a)
            for (int r = 0; r < R; ++r)
                for (int c = 0; c < C; ++c) {
                    const float v = f(a, r, c);
                    out.write(reinterpret_cast<const char*>(&v), 4);
                }
    }
    OpenOptions options;
    options.raw = RawLayout{A, R, C, SampleType::Float32};
    return openDataset(path, options);
}

TEST(LoadSinograms, RawWithoutFlatsIsMinusLog) {
    TempDir dir;
    auto reader = rawDataset(dir / "s.raw", 3, 4, 2, [](int a, int r, int c) {
        return std::exp(-0.1f * static_cast<float>(a + 10 * r + 100 * c));
    });
    PreprocessStats stats{.clamped = 99}; // the load starts the counts afresh
    const ImageStack p = loadSinograms(*reader, 1, 2, &stats);
    EXPECT_EQ(stats.clamped, 0u);
    EXPECT_EQ(p.width, 2);
    EXPECT_EQ(p.height, 3);
    EXPECT_EQ(p.depth, 2);
    for (int r = 0; r < 2; ++r)
        for (int a = 0; a < 3; ++a)
            for (int c = 0; c < 2; ++c)
                EXPECT_NEAR(p.data[(r * 3 + a) * 2 + c], 0.1f * static_cast<float>(a + 10 * (r + 1) + 100 * c), 1e-4f);
}

TEST(LoadSinograms, NaNNamesTheFileAndTheDetectorRow) {
    TempDir dir;
    auto reader = rawDataset(dir / "nan.raw", 3, 5, 2,
                             [](int a, int r, int c) { return a == 1 && r == 3 && c == 0 ? kNaN : 1.0f; });
    const auto message = messageOf<DataError>([&] { loadSinograms(*reader, 2, 3); });
    EXPECT_TRUE(contains(message, "nan.raw"));
    EXPECT_TRUE(contains(message, "NaN at row 3, angle 1, column 0"));
    EXPECT_THROW(loadSinograms(*reader, 3, -5), InvalidArgument);
    EXPECT_THROW(loadSinograms(*reader, 4, 2), InvalidArgument);
}

#if TOMO_WITH_HDF5

TEST(LoadSinograms, DXchangeUsesMeanFlatAndDark) {
    TempDir dir;
    // 2 angles x 1 row x 2 columns; flats 1000/1200 (mean 1100), dark 100.
    test::H5Builder(dir / "s.h5")
        .dataset("/exchange/data", {2, 1, 2}, std::vector<std::uint16_t>{600, 1100, 100, 50})
        .dataset("/exchange/data_white", {2, 1, 2}, std::vector<float>{1000, 1000, 1200, 1200})
        .dataset("/exchange/data_dark", {1, 1, 2}, std::vector<float>{100, 100});
    auto reader = openDataset(dir / "s.h5");
    PreprocessStats stats;
    const ImageStack p = loadSinograms(*reader, 0, 1, &stats);
    EXPECT_FLOAT_EQ(p.data[0], static_cast<float>(-std::log(0.5)));
    EXPECT_FLOAT_EQ(p.data[1], 0.0f);
    EXPECT_FLOAT_EQ(p.data[2], kClampedValue); // raw == dark
    EXPECT_FLOAT_EQ(p.data[3], kClampedValue); // raw < dark
    EXPECT_EQ(stats.clamped, 2u);
}

TEST(LoadSinograms, LogCorrectedDataAreOnlyChecked) {
    TempDir dir;
    test::H5Builder(dir / "sino.h5").dataset("/sinogram", {2, 3}, std::vector<float>{-1.5f, 0, 2, 3, 4, 5});
    auto reader = openDataset(dir / "sino.h5");
    const ImageStack p = loadSinograms(*reader, 0, 1);
    EXPECT_EQ(p.data, (std::vector<float>{-1.5f, 0, 2, 3, 4, 5}));

    test::H5Builder(dir / "bad.h5").dataset("/sinogram", {2, 3}, std::vector<float>{0, 0, 0, 0, kNaN, 0});
    auto bad = openDataset(dir / "bad.h5");
    const auto message = messageOf<DataError>([&] { loadSinograms(*bad, 0, 1); });
    EXPECT_TRUE(contains(message, "bad.h5"));
    EXPECT_TRUE(contains(message, "NaN at row 0, angle 1, column 1"));
}

#endif // TOMO_WITH_HDF5

/// Slices are counted and dropped.
class CountingWriter final : public VolumeWriter {
public:
    void writeSlices(int, int count, std::span<const float>) override { slices += count; }
    void commit() override { committed = true; }
    int slices = 0;
    bool committed = false;
};

TEST(PreprocessLimits, InterpolatedValuesCountTowardsTheLimitOfUnusableValues) {
    // Half of the values below the dark (as an HDF5 file with negative data
    // read as counts): dead-pixel correction interpolates them, and that is
    // as broken as clamping them. Before, only clamped values counted: the
    // run went through at exit 0 without a word.
    constexpr int P = 30, R = 2, N = 16;
    ImageStack counts(N, P, R);
    for (std::size_t i = 0; i < counts.data.size(); ++i) counts.data[i] = (i % 2) ? 5000.0f : 50.0f; // dark is 100
    test::CountsDataset d(counts, uniformAngles(P));
    d.addFlatGroup(-1, std::vector<float>(static_cast<std::size_t>(R) * N, 10000.0f));
    d.setDark(std::vector<float>(static_cast<std::size_t>(R) * N, 100.0f));
    VolumeJob job;
    job.options.strategy = "cpu-reference";
    job.chunkRows = 2;
    CountingWriter writer;
    const std::string message = messageOf<TooManyClampedValues>([&] { reconstructVolume(d, job, writer); });
    EXPECT_TRUE(contains(message, "rows 0..1 of memory-counts: 50 % of the values (480 of 960) have no usable "
                                  "transmission (raw <= dark, flat <= dark or saturated: 480 interpolated, 0 clamped)"));
    EXPECT_TRUE(contains(message, "expected at most 1 %"));
    EXPECT_FALSE(writer.committed);

    job.maxClampedFraction = 0.5; // acknowledged
    CountingWriter accepting;
    const VolumeReport report = reconstructVolume(d, job, accepting);
    EXPECT_EQ(report.preprocess.badValueCount, 480u);
    EXPECT_EQ(report.preprocess.unusable(), 480u);
    EXPECT_TRUE(accepting.committed);
}

} // namespace
} // namespace tomo
