// flatFieldRawRows: raw rows in projection order -> -log((raw - dark) /
// (flat - dark)) in sinogram order, for every stored type, equal to the
// double-precision formula within float rounding; clamping counted; NaN/inf
// named; threads change nothing.
#include "hdf5_builder.h"
#include "io_test_helpers.h"
#include "test_support.h"
#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/preprocess.h"
#include "tomo/worker_pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace tomo {
namespace {

constexpr int kAngles = 7, kRows = 3, kColumns = 37;

template <class T>
std::vector<std::byte> bytesOf(const std::vector<T>& v) {
    std::vector<std::byte> out(v.size() * sizeof(T));
    std::memcpy(out.data(), v.data(), out.size());
    return out;
}

/// Counts in projection order [angle][row][column], flat 4000 + 10 c, dark 100 + r.
template <class T>
std::vector<T> counts() {
    std::vector<T> v(static_cast<std::size_t>(kAngles) * kRows * kColumns);
    for (int a = 0; a < kAngles; ++a)
        for (int r = 0; r < kRows; ++r)
            for (int c = 0; c < kColumns; ++c)
                v[(static_cast<std::size_t>(a) * kRows + r) * kColumns + c] =
                    static_cast<T>(150 + (a * 131 + r * 17 + c * 53) % 3800);
    return v;
}

std::vector<float> field(float base, float perRow, float perColumn) {
    std::vector<float> f(kRows * kColumns);
    for (int r = 0; r < kRows; ++r)
        for (int c = 0; c < kColumns; ++c) f[r * kColumns + c] = base + perRow * r + perColumn * c;
    return f;
}

template <class T>
void expectMatchesTheFormula(SampleType type) {
    const auto raw = counts<T>();
    const auto bytes = bytesOf(raw);
    const auto flat = field(4000, 0, 10), dark = field(100, 1, 0);
    const FlatFieldRows constants = makeFlatFieldRows(flat, dark, kRows, kColumns, "test", 5);
    RawRows rows{type, bytes, kAngles, kRows, kColumns, 0, "test", 5};
    std::vector<float> out(raw.size());
    const PreprocessStats stats = flatFieldRawRows(rows, constants, out);
    EXPECT_EQ(stats.clamped, 0u);
    for (int r = 0; r < kRows; ++r)
        for (int a = 0; a < kAngles; ++a)
            for (int c = 0; c < kColumns; ++c) {
                const double value = raw[(static_cast<std::size_t>(a) * kRows + r) * kColumns + c];
                const double d = dark[r * kColumns + c], f = flat[r * kColumns + c];
                const double expected = -std::log((value - d) / (f - d));
                const float got = out[(static_cast<std::size_t>(r) * kAngles + a) * kColumns + c];
                ASSERT_NEAR(got, expected, 2e-6 * std::max(1.0, std::abs(expected)))
                    << sampleTypeName(type) << " row " << r << " angle " << a << " column " << c;
            }
}

TEST(FlatField, EveryStoredTypeMatchesTheDoubleFormula) {
    expectMatchesTheFormula<std::uint16_t>(SampleType::UInt16);
    expectMatchesTheFormula<float>(SampleType::Float32);
    expectMatchesTheFormula<double>(SampleType::Float64);
    // uint8: values below 256, so a lower flat.
    std::vector<std::uint8_t> raw(static_cast<std::size_t>(kAngles) * kRows * kColumns, 120);
    const auto bytes = bytesOf(raw);
    const FlatFieldRows constants = makeFlatFieldRows(field(240, 0, 0), field(20, 0, 0), kRows, kColumns, "u8", 0);
    std::vector<float> out(raw.size());
    flatFieldRawRows({SampleType::UInt8, bytes, kAngles, kRows, kColumns, 0, "u8", 0}, constants, out);
    for (float v : out) ASSERT_NEAR(v, -std::log(100.0 / 220.0), 1e-6);
}

TEST(FlatField, ThreadsGiveTheSameBits) {
    const auto raw = counts<std::uint16_t>();
    const auto bytes = bytesOf(raw);
    const FlatFieldRows constants = makeFlatFieldRows(field(4000, 0, 10), field(100, 1, 0), kRows, kColumns, "t", 0);
    const RawRows rows{SampleType::UInt16, bytes, kAngles, kRows, kColumns, 0, "t", 0};
    std::vector<float> one(raw.size()), many(raw.size());
    flatFieldRawRows(rows, constants, one);
    WorkerPool pool(4);
    flatFieldRawRows(rows, constants, many, &pool);
    EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0);
}

TEST(FlatField, NoSignalIsClampedAndCountedNeverNaN) {
    auto raw = counts<std::uint16_t>();
    raw[(static_cast<std::size_t>(2) * kRows + 1) * kColumns + 4] = 50; // below the dark level
    auto flat = field(4000, 0, 10);
    flat[2 * kColumns + 9] = 90; // flat below dark: pixel (row 2, column 9) dead in every angle
    const FlatFieldRows constants = makeFlatFieldRows(flat, field(100, 1, 0), kRows, kColumns, "c", 0);
    EXPECT_EQ(constants.scale[2 * kColumns + 9], 0.0f);
    const auto bytes = bytesOf(raw);
    std::vector<float> out(raw.size());
    const PreprocessStats stats =
        flatFieldRawRows({SampleType::UInt16, bytes, kAngles, kRows, kColumns, 0, "c", 0}, constants, out);
    EXPECT_EQ(stats.clamped, 1u + kAngles);
    const float clamped = -std::log(kMinTransmission);
    EXPECT_NEAR(out[(static_cast<std::size_t>(1) * kAngles + 2) * kColumns + 4], clamped, 1e-5);
    for (float v : out) ASSERT_TRUE(std::isfinite(v));
    // Without flats and darks: -log of the values themselves.
    const FlatFieldRows none = makeFlatFieldRows({}, {}, kRows, kColumns, "c", 0);
    flatFieldRawRows({SampleType::UInt16, bytes, kAngles, kRows, kColumns, 0, "c", 0}, none, out);
    EXPECT_NEAR(out[0], -std::log(static_cast<double>(raw[0])), 1e-5);
}

TEST(FlatField, NaNAndBadSizesAreNamed) {
    auto raw = counts<float>();
    raw[(static_cast<std::size_t>(3) * kRows + 2) * kColumns + 11] = std::numeric_limits<float>::infinity();
    const auto bytes = bytesOf(raw);
    const FlatFieldRows constants = makeFlatFieldRows({}, {}, kRows, kColumns, "scan.h5", 40);
    std::vector<float> out(raw.size());
    try {
        flatFieldRawRows({SampleType::Float32, bytes, kAngles, kRows, kColumns, 0, "scan.h5", 40}, constants, out);
        FAIL() << "no DataError";
    } catch (const DataError& e) {
        EXPECT_STREQ(e.what(), "scan.h5: value is +inf at row 42, angle 3, column 11; expected finite values");
    }
    auto flat = field(1, 0, 0);
    flat[kColumns + 1] = std::numeric_limits<float>::quiet_NaN();
    try {
        makeFlatFieldRows(flat, {}, kRows, kColumns, "scan.h5", 40);
        FAIL() << "no DataError";
    } catch (const DataError& e) {
        EXPECT_STREQ(e.what(), "scan.h5: flat field is NaN at row 41, column 1; expected finite values");
    }
    EXPECT_THROW(makeFlatFieldRows(std::vector<float>(5), {}, kRows, kColumns, "s", 0), InvalidArgument);
    std::vector<float> small(raw.size() - 1);
    EXPECT_THROW(flatFieldRawRows({SampleType::Float32, bytes, kAngles, kRows, kColumns, 0, "s", 0}, constants, small),
                 InvalidArgument);
}

TEST(FlatField, Float64BeyondFloat32IsRefusedAndNamed) {
    // 1e300 would become +inf in float and shift the whole slice (the volume
    // read -0.77 ... 0.31 instead of -0.0012 ... 0.010): refused as NaN/inf are.
    auto raw = counts<double>();
    raw[(static_cast<std::size_t>(4) * kRows + 1) * kColumns + 20] = 1e300;
    const auto bytes = bytesOf(raw);
    const FlatFieldRows constants = makeFlatFieldRows({}, {}, kRows, kColumns, "scan.h5", 40);
    std::vector<float> out(raw.size());
    auto message = [&](std::span<const std::byte> values) {
        try {
            flatFieldRawRows({SampleType::Float64, values, kAngles, kRows, kColumns, 0, "scan.h5", 40}, constants, out);
        } catch (const DataError& e) {
            return std::string(e.what());
        }
        return std::string("no DataError");
    };
    EXPECT_EQ(message(bytes), "scan.h5: value is 1e+300 at row 41, angle 4, column 20; expected values within "
                              "float32's range (|v| <= 3.4e+38)");
    raw[(static_cast<std::size_t>(4) * kRows + 1) * kColumns + 20] = -3.5e38; // just beyond, negative
    EXPECT_EQ(message(bytesOf(raw)), "scan.h5: value is -3.5e+38 at row 41, angle 4, column 20; expected values "
                                     "within float32's range (|v| <= 3.4e+38)");
    raw[(static_cast<std::size_t>(4) * kRows + 1) * kColumns + 20] = 3.4e38; // float's largest is 3.4028e38
    EXPECT_EQ(message(bytesOf(raw)), "no DataError");
}

#if TOMO_WITH_HDF5
TEST(FlatField, Float64BeyondFloat32InAFileStopsTheStage) {
    // The same through the reader and the stage (an HDF5 file of float64
    // counts, no flats): the stage's flat-field pass names the value.
    test::TempDir dir;
    constexpr hsize_t A = 16, R = 2, C = 24;
    std::vector<double> data(A * R * C, 1000.0), theta(A);
    for (hsize_t a = 0; a < A; ++a) theta[a] = 180.0 * static_cast<double>(a) / A;
    data[(5 * R + 1) * C + 7] = 1e300;
    test::H5Builder(dir / "big.h5").dataset("/exchange/data", {A, R, C}, data).dataset("/exchange/theta", {A}, theta);
    auto reader = openDataset(dir / "big.h5");
    PreprocessingStage stage(*reader, CorrectionOptions::none());
    EXPECT_TRUE(test::contains(test::messageOf<DataError>([&] { stage.load(1, 1); }),
                               "big.h5: value is 1e+300 at row 1, angle 5, column 7; expected values within"));
}
#endif

TEST(FlatField, RowsOfABlockEqualTheSameRowsAlone) {
    const auto raw = counts<std::uint16_t>();
    const auto bytes = bytesOf(raw);
    const FlatFieldRows constants = makeFlatFieldRows(field(4000, 0, 10), field(100, 1, 0), kRows, kColumns, "b", 10);
    const RawRows block{SampleType::UInt16, bytes, kAngles, kRows, kColumns, 0, "b", 10};
    std::vector<float> all(raw.size());
    flatFieldRawRows(block, constants, all);
    const RawRows part = rowsOf(block, 1, 2);
    EXPECT_EQ(part.firstRow, 11);
    std::vector<float> two(static_cast<std::size_t>(2) * kAngles * kColumns);
    flatFieldRawRows(part, rowsOf(constants, 1, 2), two);
    EXPECT_EQ(std::memcmp(two.data(), all.data() + kAngles * kColumns, two.size() * sizeof(float)), 0);
    EXPECT_THROW(rowsOf(block, 2, 2), InvalidArgument);
    EXPECT_THROW(rowsOf(constants, -1, 1), InvalidArgument);
}

/// One row and one angle of float values with their fields, corrected.
std::vector<float> correctOneLine(std::vector<float> raw, const std::vector<float>& flat,
                                  const std::vector<float>& dark, PreprocessStats* stats = nullptr) {
    const int columns = static_cast<int>(raw.size());
    const auto bytes = bytesOf(raw);
    const FlatFieldRows constants = makeFlatFieldRows(flat, dark, 1, columns, "line", 0);
    std::vector<float> out(raw.size());
    const PreprocessStats s =
        flatFieldRawRows({SampleType::Float32, bytes, 1, 1, columns, 0, "line", 0}, constants, out);
    if (stats) *stats = s;
    return out;
}

TEST(FlatField, EveryImpossibleTransmissionIsClamped) {
    // raw < dark, raw == dark, flat == dark, flat < dark, all zero (dead pixel), valid.
    PreprocessStats stats;
    const auto out = correctOneLine({5, 10, 500, 500, 0, 550}, {1000, 1000, 10, 5, 0, 1000}, {10, 10, 10, 10, 0, 100},
                                    &stats);
    EXPECT_EQ(stats.clamped, 5u);
    for (int c = 0; c < 5; ++c) EXPECT_FLOAT_EQ(out[c], -std::log(kMinTransmission)) << c;
    EXPECT_FLOAT_EQ(out[5], static_cast<float>(-std::log(0.5)));
}

TEST(FlatField, ExtremeValuesStayFinite) {
    // A transmission above 1, one beyond float's range, one below it (clamped).
    PreprocessStats stats;
    const auto out = correctOneLine({2000, std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()},
                                    {1000, 1e-30f, std::numeric_limits<float>::max()}, {}, &stats);
    EXPECT_FLOAT_EQ(out[0], static_cast<float>(-std::log(2.0)));
    EXPECT_NEAR(out[1], -std::log(std::numeric_limits<float>::max()), 1e-3);
    EXPECT_FLOAT_EQ(out[2], -std::log(kMinTransmission));
    EXPECT_EQ(stats.clamped, 1u);
    for (float v : out) EXPECT_TRUE(std::isfinite(v)) << v;
}

TEST(FlatField, WithoutFlatOrDark) {
    auto out = correctOneLine({std::exp(-1.5f), 1.0f}, {}, {});
    EXPECT_NEAR(out[0], 1.5f, 1e-6f);
    EXPECT_EQ(out[1], 0.0f);
    PreprocessStats stats;
    out = correctOneLine({110, 20}, {}, {10, 20}, &stats); // dark only
    EXPECT_FLOAT_EQ(out[0], static_cast<float>(-std::log(100.0)));
    EXPECT_FLOAT_EQ(out[1], -std::log(kMinTransmission));
    EXPECT_EQ(stats.clamped, 1u);
}

TEST(FlatField, ReportsTheFirstBadValueWhateverThreadFindsIt) {
    const int rows = 64, projections = 64, columns = 8; // 4096 lines, spread over threads
    std::vector<float> raw(static_cast<std::size_t>(rows) * projections * columns, 10.0f); // projection order
    raw[(static_cast<std::size_t>(5) * rows + 50) * columns + 1] = std::numeric_limits<float>::quiet_NaN();
    raw[(static_cast<std::size_t>(3) * rows + 10) * columns + 2] = std::numeric_limits<float>::infinity();
    const auto bytes = bytesOf(raw);
    const FlatFieldRows none = makeFlatFieldRows({}, {}, rows, columns, "many", 0);
    std::vector<float> out(raw.size());
    WorkerPool pool(4);
    try {
        flatFieldRawRows({SampleType::Float32, bytes, projections, rows, columns, 0, "many", 0}, none, out, &pool);
        FAIL() << "no DataError";
    } catch (const DataError& e) {
        // Of the two, the one first in the data's order (projection order: angle 3 before angle 5).
        EXPECT_STREQ(e.what(), "many: value is +inf at row 10, angle 3, column 2; expected finite values");
    }
}

TEST(FlatField, ListsTheInterpolatedValuesInRowAngleColumnOrder) {
    const int rows = 64, projections = 64, columns = 8; // spread over threads
    std::vector<float> raw(static_cast<std::size_t>(rows) * projections * columns, 10.0f); // projection order
    auto at = [&](int a, int r, int c) -> float& {
        return raw[(static_cast<std::size_t>(a) * rows + r) * columns + static_cast<std::size_t>(c)];
    };
    at(40, 50, 1) = 0.0f; // no transmission: interpolated
    at(3, 50, 6) = 0.0f;
    at(60, 7, 0) = 0.0f;
    FlatFieldRows field = makeFlatFieldRows({}, {}, rows, columns, "many", 100);
    field.interpolate = true;
    field.dead[static_cast<std::size_t>(20) * columns + 4] = 1; // a dead pixel: interpolated, not listed
    std::vector<float> out(raw.size());
    WorkerPool pool(4);
    const PreprocessStats stats =
        flatFieldRawRows({SampleType::Float32, bytesOf(raw), projections, rows, columns, 0, "many", 100}, field, out,
                         &pool);
    EXPECT_EQ(stats.badValueCount, 3u);
    EXPECT_EQ(stats.badValues, (std::vector<PixelPosition>{{107, 60, 0}, {150, 3, 6}, {150, 40, 1}}));
    EXPECT_EQ(stats.clamped, 0u);
}

} // namespace
} // namespace tomo
