// Flat/dark correction and -log: exact values, clamping of impossible
// transmissions, NaN/inf reporting, loadSinograms over real readers.
#include "hdf5_builder.h"
#include "io_test_helpers.h"
#include "test_support.h"
#include "tomo/error.h"
#include "tomo/preprocess.h"

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
constexpr float kInf = std::numeric_limits<float>::infinity();

float expected(double raw, double flat, double dark) { return static_cast<float>(-std::log((raw - dark) / (flat - dark))); }

TEST(NormalizeAndLog, ExactValues) {
    // 2 rows x 2 angles x 3 columns.
    std::vector<float> s{900, 500, 1000, 400, 250, 100, 800, 700, 600, 300, 200, 1200};
    const std::vector<float> flat{1000, 1100, 1200, 900, 950, 1300};
    const std::vector<float> dark{100, 50, 0, 10, 20, 30};
    const std::vector<float> raw = s;
    const auto stats = normalizeAndLog(s, 2, 2, 3, flat, dark);
    EXPECT_EQ(stats.clamped, 0u);
    for (int r = 0; r < 2; ++r)
        for (int a = 0; a < 2; ++a)
            for (int c = 0; c < 3; ++c) {
                const int i = (r * 2 + a) * 3 + c;
                EXPECT_FLOAT_EQ(s[i], expected(raw[i], flat[r * 3 + c], dark[r * 3 + c])) << r << a << c;
            }
}

TEST(NormalizeAndLog, ClampsAndCountsImpossibleTransmissions) {
    // One row, one angle: raw < dark, raw == dark, flat == dark, flat < dark, all zero (dead pixel), valid.
    std::vector<float> s{5, 10, 500, 500, 0, 550};
    const std::vector<float> flat{1000, 1000, 10, 5, 0, 1000};
    const std::vector<float> dark{10, 10, 10, 10, 0, 100};
    const auto stats = normalizeAndLog(s, 1, 1, 6, flat, dark);
    EXPECT_EQ(stats.clamped, 5u);
    for (int c = 0; c < 5; ++c) EXPECT_FLOAT_EQ(s[c], kClampedValue) << c;
    EXPECT_FLOAT_EQ(s[5], static_cast<float>(-std::log(0.5)));
}

TEST(NormalizeAndLog, TransmissionAboveOneAndExtremeValuesStayFinite) {
    std::vector<float> s{2000, std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()};
    const std::vector<float> flat{1000, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()};
    const auto stats = normalizeAndLog(s, 1, 1, 3, flat, {});
    EXPECT_EQ(stats.clamped, 0u);
    EXPECT_FLOAT_EQ(s[0], static_cast<float>(-std::log(2.0)));
    for (float v : s) EXPECT_TRUE(std::isfinite(v)) << v;
}

TEST(NormalizeAndLog, WithoutFlatOrDark) {
    std::vector<float> s{std::exp(-1.5f), 1.0f};
    normalizeAndLog(s, 1, 2, 1, {}, {});
    EXPECT_NEAR(s[0], 1.5f, 1e-6f);
    EXPECT_EQ(s[1], 0.0f);

    std::vector<float> d{110, 20};
    const std::vector<float> dark{10, 20};
    const auto stats = normalizeAndLog(d, 1, 1, 2, {}, dark);
    EXPECT_FLOAT_EQ(d[0], static_cast<float>(-std::log(100.0)));
    EXPECT_FLOAT_EQ(d[1], kClampedValue);
    EXPECT_EQ(stats.clamped, 1u);
}

TEST(NormalizeAndLog, NonFiniteInputNamesRowAngleColumn) {
    std::vector<float> s(2 * 3 * 4, 100.0f);
    s[(1 * 3 + 2) * 4 + 3] = kNaN;
    auto message = messageOf<DataError>([&] { normalizeAndLog(s, 2, 3, 4, {}, {}); });
    EXPECT_TRUE(contains(message, "NaN at row 1, angle 2, column 3"));

    std::fill(s.begin(), s.end(), 100.0f);
    s[(0 * 3 + 1) * 4 + 0] = -kInf;
    EXPECT_TRUE(contains(messageOf<DataError>([&] { normalizeAndLog(s, 2, 3, 4, {}, {}); }),
                         "-inf at row 0, angle 1, column 0"));

    std::fill(s.begin(), s.end(), 100.0f);
    std::vector<float> flat(2 * 4, 1000.0f);
    flat[4 + 2] = kInf;
    message = messageOf<DataError>([&] { normalizeAndLog(s, 2, 3, 4, flat, {}); });
    EXPECT_TRUE(contains(message, "flat field is +inf at row 1, column 2"));
}

TEST(NormalizeAndLog, ReportsTheFirstBadValueWhateverThreadFindsIt) {
    const int rows = 64, projections = 64, columns = 8; // 4096 lines: split across threads
    std::vector<float> s(static_cast<std::size_t>(rows) * projections * columns, 10.0f);
    s[(static_cast<std::size_t>(50) * projections + 5) * columns + 1] = kNaN;
    s[(static_cast<std::size_t>(10) * projections + 3) * columns + 2] = kInf;
    const auto message = messageOf<DataError>([&] { normalizeAndLog(s, rows, projections, columns, {}, {}); });
    EXPECT_TRUE(contains(message, "+inf at row 10, angle 3, column 2"));
}

TEST(NormalizeAndLog, LargeInputMatchesFormulaEverywhere) {
    const int rows = 16, projections = 100, columns = 33;
    std::vector<float> s(static_cast<std::size_t>(rows) * projections * columns);
    std::vector<float> flat(static_cast<std::size_t>(rows) * columns), dark(flat.size());
    for (std::size_t i = 0; i < flat.size(); ++i) {
        flat[i] = 20000.0f + static_cast<float>(i % 97);
        dark[i] = 100.0f + static_cast<float>(i % 13);
    }
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = 150.0f + static_cast<float>((i * 7919) % 19000);
    const auto raw = s;
    normalizeAndLog(s, rows, projections, columns, flat, dark);
    for (std::size_t i = 0; i < s.size(); ++i) {
        const std::size_t r = i / (static_cast<std::size_t>(projections) * columns), c = i % columns;
        // The transmission is kept as a float before the log (the corrections
        // in between work on it): p is exact to its rounding, 6e-8 absolute,
        // and to the rounding of p itself.
        const float p = expected(raw[i], flat[r * columns + c], dark[r * columns + c]);
        ASSERT_NEAR(s[i], p, 1e-7 + 1.2e-7 * std::abs(p)) << i;
    }
}

TEST(NormalizeAndLog, WrongSizesAreRefused) {
    std::vector<float> s(12);
    EXPECT_THROW(normalizeAndLog(s, 2, 2, 2, {}, {}), InvalidArgument);
    const std::vector<float> flat(5);
    EXPECT_THROW(normalizeAndLog(s, 2, 2, 3, flat, {}), InvalidArgument);
    EXPECT_THROW(normalizeAndLog(s, 2, 2, 3, {}, flat), InvalidArgument);
}

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
    PreprocessStats stats{99};
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

} // namespace
} // namespace tomo
