// flatFieldRawRows: raw rows in projection order -> -log((raw - dark) /
// (flat - dark)) in sinogram order, for every stored type, equal to the
// double-precision formula within float rounding; clamping counted; NaN/inf
// named; threads change nothing.
#include "tomo/error.h"
#include "tomo/flat_field.h"
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
    RawRows rows{type, bytes, kAngles, kRows, kColumns, "test", 5};
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
    flatFieldRawRows({SampleType::UInt8, bytes, kAngles, kRows, kColumns, "u8", 0}, constants, out);
    for (float v : out) ASSERT_NEAR(v, -std::log(100.0 / 220.0), 1e-6);
}

TEST(FlatField, ThreadsGiveTheSameBits) {
    const auto raw = counts<std::uint16_t>();
    const auto bytes = bytesOf(raw);
    const FlatFieldRows constants = makeFlatFieldRows(field(4000, 0, 10), field(100, 1, 0), kRows, kColumns, "t", 0);
    const RawRows rows{SampleType::UInt16, bytes, kAngles, kRows, kColumns, "t", 0};
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
        flatFieldRawRows({SampleType::UInt16, bytes, kAngles, kRows, kColumns, "c", 0}, constants, out);
    EXPECT_EQ(stats.clamped, 1u + kAngles);
    const float clamped = -std::log(kMinTransmission);
    EXPECT_NEAR(out[(static_cast<std::size_t>(1) * kAngles + 2) * kColumns + 4], clamped, 1e-5);
    for (float v : out) ASSERT_TRUE(std::isfinite(v));
    // Without flats and darks: -log of the values themselves.
    const FlatFieldRows none = makeFlatFieldRows({}, {}, kRows, kColumns, "c", 0);
    flatFieldRawRows({SampleType::UInt16, bytes, kAngles, kRows, kColumns, "c", 0}, none, out);
    EXPECT_NEAR(out[0], -std::log(static_cast<double>(raw[0])), 1e-5);
}

TEST(FlatField, NaNAndBadSizesAreNamed) {
    auto raw = counts<float>();
    raw[(static_cast<std::size_t>(3) * kRows + 2) * kColumns + 11] = std::numeric_limits<float>::infinity();
    const auto bytes = bytesOf(raw);
    const FlatFieldRows constants = makeFlatFieldRows({}, {}, kRows, kColumns, "scan.h5", 40);
    std::vector<float> out(raw.size());
    try {
        flatFieldRawRows({SampleType::Float32, bytes, kAngles, kRows, kColumns, "scan.h5", 40}, constants, out);
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
    EXPECT_THROW(flatFieldRawRows({SampleType::Float32, bytes, kAngles, kRows, kColumns, "s", 0}, constants, small),
                 InvalidArgument);
}

} // namespace
} // namespace tomo
