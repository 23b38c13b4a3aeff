// TIFF folders read by several threads: readSinograms and readRawRows give
// exactly the files' values, as libtiff reads them one file after another;
// a broken file among many is named; the speed of both ways is printed as a
// MEASURED line.
#include "io_test_helpers.h"
#include "test_support.h"
#include "tiff_builder.h"
#include "tomo/dataset.h"
#include "tomo/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace tomo {
namespace {

#if TOMO_WITH_TIFF

using test::contains;
using test::rawRows;
using test::messageOf;
using test::TempDir;
using test::writeTiff;

/// The value of projection a, row r, column c: distinct for every pixel of
/// the small folders.
float value(int a, int r, int c) { return static_cast<float>(1000 + a * 500 + r * 20 + c); }

std::filesystem::path projectionFile(const std::filesystem::path& dir, int a) {
    char name[32];
    std::snprintf(name, sizeof name, "proj_%04d.tif", a);
    return dir / name;
}

/// A folder of `projections` single-page TIFFs of w x h values(a, r, c).
void writeFolder(const std::filesystem::path& dir, int projections, int w, int h, SampleType type,
                 std::uint16_t compression = COMPRESSION_ADOBE_DEFLATE) {
    std::vector<float> image(static_cast<std::size_t>(w) * h);
    for (int a = 0; a < projections; ++a) {
        for (int r = 0; r < h; ++r)
            for (int c = 0; c < w; ++c) image[static_cast<std::size_t>(r) * w + c] = value(a, r, c);
        writeTiff(projectionFile(dir, a), w, h, {image}, type, false, 16, compression);
    }
}

/// Rows [first, first + count) of every file in projection order, as
/// stored, read by libtiff one file after another (what the reader did
/// before it used threads).
std::vector<std::byte> sequentialRows(const std::filesystem::path& dir, int projections, int first, int count) {
    std::vector<std::byte> out;
    for (int a = 0; a < projections; ++a) {
        TIFF* t = TIFFOpen(projectionFile(dir, a).c_str(), "r");
        EXPECT_NE(t, nullptr);
        if (!t) return {};
        // The strips holding the rows, decoded whole (writeFolder: 16 rows each).
        const auto line = static_cast<std::size_t>(TIFFScanlineSize(t));
        std::vector<std::byte> strip(static_cast<std::size_t>(TIFFStripSize(t)));
        for (int s = first / 16; s * 16 < first + count; ++s) {
            EXPECT_GE(TIFFReadEncodedStrip(t, static_cast<std::uint32_t>(s), strip.data(), -1), 0);
            for (int r = std::max(first, s * 16); r < std::min(first + count, (s + 1) * 16); ++r)
                out.insert(out.end(), strip.begin() + static_cast<std::ptrdiff_t>((r - s * 16) * line),
                           strip.begin() + static_cast<std::ptrdiff_t>((r - s * 16 + 1) * line));
        }
        TIFFClose(t);
    }
    return out;
}

TEST(TiffThreads, RowsAreTheFilesValuesInEveryOrder) {
    const int A = 64, W = 24, H = 40;
    for (const SampleType type : {SampleType::UInt16, SampleType::Float32}) {
        SCOPED_TRACE(sampleTypeName(type));
        TempDir dir;
        writeFolder(dir.path(), A, W, H, type);
        auto reader = openDataset(dir.path());
        ASSERT_EQ(reader->info().projections, A);
        ASSERT_EQ(reader->info().sampleType, type);
        // Rows that start and end inside strips of 16.
        const int first = 5, count = 30;
        std::vector<float> sinograms(static_cast<std::size_t>(count) * A * W);
        reader->readSinograms(first, count, sinograms);
        for (int r = 0; r < count; ++r)
            for (int a = 0; a < A; ++a)
                for (int c = 0; c < W; ++c)
                    ASSERT_EQ(sinograms[(static_cast<std::size_t>(r) * A + a) * W + c], value(a, first + r, c))
                        << "row " << first + r << " projection " << a << " column " << c;
        EXPECT_EQ(rawRows(*reader, first, count), sequentialRows(dir.path(), A, first, count));
        EXPECT_EQ(rawRows(*reader, 0, H), sequentialRows(dir.path(), A, 0, H));
        EXPECT_EQ(rawRows(*reader, H - 1, 1), sequentialRows(dir.path(), A, H - 1, 1));
    }
}

TEST(TiffThreads, ABrokenFileAmongManyIsNamed) {
    TempDir dir;
    const int A = 40, W = 16, H = 12;
    writeFolder(dir.path(), A, W, H, SampleType::UInt16);
    auto reader = openDataset(dir.path());
    // Damaged after the dataset was opened: cut to its first 100 bytes.
    const auto broken = projectionFile(dir.path(), 23);
    std::filesystem::resize_file(broken, 100);
    const std::string raw = messageOf<FormatError>([&] { rawRows(*reader, 0, H); });
    EXPECT_TRUE(contains(raw, broken.string()));
    std::vector<float> sinograms(static_cast<std::size_t>(H) * A * W);
    const std::string floats = messageOf<FormatError>([&] { reader->readSinograms(0, H, sinograms); });
    EXPECT_TRUE(contains(floats, broken.string()));
    // A file gone since: the system's reason, still naming it.
    std::filesystem::remove(broken);
    EXPECT_TRUE(contains(messageOf<IoError>([&] { rawRows(*reader, 0, H); }), broken.string()));
}

TEST(TiffThreads, MeasuredFolderOf512Projections) {
    // 512 uncompressed uint16 TIFFs of 512 x 512 (256 MiB), read in 4 bands
    // of 128 rows as the conveyor reads them.
    TempDir dir;
    const int A = 512, N = 512, band = 128;
    writeFolder(dir.path(), A, N, N, SampleType::UInt16, COMPRESSION_NONE);
    auto reader = openDataset(dir.path());
    double sequential = 0.0, threaded = 0.0;
    for (int first = 0; first < N; first += band) {
        const auto t0 = std::chrono::steady_clock::now();
        const std::vector<std::byte> expected = sequentialRows(dir.path(), A, first, band);
        const auto t1 = std::chrono::steady_clock::now();
        const std::vector<std::byte> got = rawRows(*reader, first, band);
        const auto t2 = std::chrono::steady_clock::now();
        sequential += std::chrono::duration<double>(t1 - t0).count();
        threaded += std::chrono::duration<double>(t2 - t1).count();
        ASSERT_EQ(got, expected) << "band at row " << first;
    }
    const double mib = 2.0 * A * N * N / (1 << 20);
    test::printReadSpeedup("TIFF folder of " + std::to_string(A) + " x " + std::to_string(N) + " x " + std::to_string(N) +
                               " uint16 (" + std::to_string(std::lround(mib)) + " MiB, page cache) in 4 bands",
                           mib, "libtiff one file after another", sequential, "readRawRows", threaded);
}

#else

TEST(TiffThreads, NeedsTiff) { GTEST_SKIP() << "this build has no TIFF support"; }

#endif

} // namespace
} // namespace tomo
