// Dataset readers: format detection, raw/HDF5/TIFF readers on hand-built
// files with known values, the real scans of shared/data/real, bad inputs.
#include "hdf5_builder.h"
#include "tiff_builder.h"
#include "io_test_helpers.h"
#include "test_support.h"
#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/phantom.h"
#include "tomo/preprocess.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <fstream>
#include <functional>
#include <numbers>
#include <numeric>
#include <sstream>

#include <sys/stat.h>

#if TOMO_WITH_TIFF
#include <tiffio.h>
#endif

namespace tomo {
namespace {

using test::TempDir;
using test::contains;
using test::sinograms;
using test::messageOf;
using test::writeText;
#if TOMO_WITH_TIFF
using test::writeTiff;
#endif

constexpr double kDeg = std::numbers::pi / 180.0;

/// The known value of projection a, row r, column c in hand-built files.
float sample(int a, int r, int c) { return static_cast<float>(1000 + a * 100 + r * 10 + c); }

std::string fileBytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// readProjection(index) of `reader` against expected(row, column), and the
/// errors for an index or buffer that does not fit.
void expectProjection(DatasetReader& reader, int index, const std::function<float(int, int)>& expected) {
    const auto& info = reader.info();
    std::vector<float> image(static_cast<std::size_t>(info.rows) * info.columns);
    reader.readProjection(index, image);
    for (int r = 0; r < info.rows; ++r)
        for (int c = 0; c < info.columns; ++c)
            ASSERT_EQ(image[static_cast<std::size_t>(r) * info.columns + c], expected(r, c)) << index << " " << r << " " << c;
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { reader.readProjection(info.projections, image); }),
                         "projection " + std::to_string(info.projections)));
    EXPECT_THROW(reader.readProjection(-1, image), InvalidArgument);
    image.pop_back();
    EXPECT_THROW(reader.readProjection(0, image), InvalidArgument);
}

// ---------------------------------------------------------------- basics

TEST(Dataset, NamesOfTypesAndFormats) {
    EXPECT_STREQ(sampleTypeName(SampleType::UInt8), "uint8");
    EXPECT_STREQ(sampleTypeName(SampleType::UInt16), "uint16");
    EXPECT_STREQ(sampleTypeName(SampleType::Float32), "float32");
    EXPECT_STREQ(sampleTypeName(SampleType::Float64), "float64");
    EXPECT_STREQ(formatName(DatasetFormat::DXchange), "DXchange (HDF5)");
    EXPECT_STREQ(formatName(DatasetFormat::NXtomo), "NXtomo (HDF5)");
    EXPECT_STREQ(formatName(DatasetFormat::TiffDirectory), "directory of TIFFs");
}

TEST(AnglesFile, EntriesAreSelectedByRange) {
    TempDir dir;
    writeText(dir / "a.txt", "# frame angles\n5\n5\n\n10\n20\n30\n30\n");
    const auto some = readAnglesFile(dir / "a.txt", AngleUnits::Degrees, LineRange{1, 3}); // entries, not lines
    ASSERT_EQ(some.size(), 3u);
    EXPECT_DOUBLE_EQ(some[0], 5 * kDeg);
    EXPECT_DOUBLE_EQ(some[2], 20 * kDeg);
    EXPECT_EQ(readAnglesFile(dir / "a.txt", AngleUnits::Degrees, LineRange{4, 0}).size(), 2u); // 0 = to the end
    const auto message = messageOf<FormatError>([&] { readAnglesFile(dir / "a.txt", AngleUnits::Degrees, LineRange{3, 4}); });
    EXPECT_TRUE(contains(message, "entries 3 to 6 asked for"));
    EXPECT_TRUE(contains(message, "entries 0 to 5"));
    EXPECT_THROW(readAnglesFile(dir / "a.txt", AngleUnits::Degrees, LineRange{6, 0}), FormatError);
}

TEST(AnglesFile, FindsTheProjectionsAmongDarkAndFlatFrames) {
    auto degrees = [](std::vector<double> v) {
        for (double& a : v) a *= kDeg;
        return v;
    };
    // Darks and flats at the first angle before, at the last one after; the
    // file rounds the last projection (-78.2001) but not the frames after it.
    const auto i13Like = degrees({-88.2, -88.2, -88.2, -88.2, -86.2, -84.2, -82.2, -80.2, -78.2001, -78.2, -78.2});
    const auto found = findProjectionAngles(i13Like, 6);
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(*found, (LineRange{3, 6}));
    // Frames only before, only after.
    EXPECT_EQ(findProjectionAngles(degrees({0, 0, 0, 1, 2, 3}), 4), (LineRange{2, 4}));
    EXPECT_EQ(findProjectionAngles(degrees({0, 1, 2, 3, 3, 3}), 4), (LineRange{0, 4}));
    // Another layout (frames at other angles) or an ambiguous one: not guessed.
    EXPECT_FALSE(findProjectionAngles(degrees({50, 50, 0, 1, 2, 3}), 4).has_value());
    EXPECT_FALSE(findProjectionAngles(degrees({0, 0, 0, 0, 0, 0}), 4).has_value());
    EXPECT_FALSE(findProjectionAngles(degrees({0, 1, 2, 3}), 4).has_value()); // not more entries than projections
}

TEST(AnglesFile, ReadsDegreesSkippingCommentsAndBlankLines) {
    TempDir dir;
    writeText(dir / "a.txt", "# angles\n0\n\n  90.5  # comment\n+180\r\n-45e0\n");
    const auto angles = readAnglesFile(dir / "a.txt");
    ASSERT_EQ(angles.size(), 4u);
    EXPECT_DOUBLE_EQ(angles[0], 0.0);
    EXPECT_DOUBLE_EQ(angles[1], 90.5 * kDeg);
    EXPECT_DOUBLE_EQ(angles[2], std::numbers::pi);
    EXPECT_DOUBLE_EQ(angles[3], -45 * kDeg);
}

TEST(AnglesFile, BadLineNamesFileAndLine) {
    TempDir dir;
    writeText(dir / "a.txt", "0\n1\n2 3\n");
    const auto message = messageOf<FormatError>([&] { readAnglesFile(dir / "a.txt"); });
    EXPECT_TRUE(contains(message, "a.txt:3"));
    EXPECT_TRUE(contains(message, "'2 3'"));
    writeText(dir / "nan.txt", "nan\n");
    EXPECT_THROW(readAnglesFile(dir / "nan.txt"), FormatError);
    writeText(dir / "empty.txt", "# nothing\n\n");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { readAnglesFile(dir / "empty.txt"); }), "holds no values"));
    EXPECT_TRUE(contains(messageOf<IoError>([&] { readAnglesFile(dir / "missing.txt"); }), "missing.txt"));
}

TEST(AxisOffsetsFile, ChecksTheCount) {
    TempDir dir;
    writeText(dir / "o.txt", "0.5\n-1.25\n2\n");
    EXPECT_EQ(readAxisOffsetsFile(dir / "o.txt", 3), (std::vector<double>{0.5, -1.25, 2.0}));
    EXPECT_EQ(readAxisOffsetsFile(dir / "o.txt").size(), 3u);
    const auto message = messageOf<InvalidArgument>([&] { readAxisOffsetsFile(dir / "o.txt", 4); });
    EXPECT_TRUE(contains(message, "o.txt holds 3"));
    EXPECT_TRUE(contains(message, "(4)"));
}

TEST(DetectFormat, FromContentNotName) {
    TempDir dir;
    EXPECT_TRUE(contains(messageOf<IoError>([&] { detectFormat(dir / "none.h5"); }), "none.h5"));
    writeText(dir / "scan.h5", "just some text, not HDF5");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { detectFormat(dir / "scan.h5"); }), "is not a dataset"));
#if TOMO_WITH_TIFF
    // The TIFF magic alone: recognised, then refused as damaged, by name.
    writeText(dir / "data.bin", std::string("II*\0rest", 8));
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { detectFormat(dir / "data.bin"); }), "data.bin: not a readable TIFF"));
    writeText(dir / "big.bin", std::string("MM\0*rest", 8));
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { detectFormat(dir / "big.bin"); }), "big.bin"));
#endif
    OpenOptions raw;
    raw.raw = RawLayout{1, 1, 1};
    EXPECT_EQ(detectFormat(dir / "scan.h5", raw), DatasetFormat::Raw);

    std::filesystem::create_directory(dir / "empty");
    writeText(dir / "empty" / "notes.txt", "x");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { detectFormat(dir / "empty"); }), "without TIFF files"));
    std::filesystem::create_directory(dir / "tiffs");
    writeText(dir / "tiffs" / "p_0", std::string("II*\0", 4));
    EXPECT_EQ(detectFormat(dir / "tiffs"), DatasetFormat::TiffDirectory);
}

TEST(DetectFormat, HdfSignatureWithoutSupportOrLayout) {
    TempDir dir;
    writeText(dir / "fake.h5", std::string("\x89HDF\r\n\x1a\n", 8) + std::string(100, '\0'));
#if TOMO_WITH_HDF5
    EXPECT_THROW(detectFormat(dir / "fake.h5"), FormatError); // the signature only: damaged content
#else
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "fake.h5"); }),
                "is an HDF5 file but this build has no HDF5 support"));
#endif
}

#if !TOMO_WITH_TIFF
TEST(DetectFormat, TiffWithoutSupport) {
    TempDir dir;
    writeText(dir / "a.tif", std::string("II*\0rest", 8));
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "a.tif"); }), "no TIFF support"));
}
#endif

// ---------------------------------------------------------------- raw

TEST(RawReader, ReadsRowsInSinogramOrderAfterAHeader) {
    TempDir dir;
    const int A = 5, R = 4, C = 3;
    std::vector<float> values;
    for (int a = 0; a < A; ++a)
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) values.push_back(sample(a, r, c));
    {
        std::ofstream out(dir / "scan.raw", std::ios::binary);
        out.write("HEADER--", 8);
        out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 4));
    }
    OpenOptions options;
    options.raw = RawLayout{A, R, C, SampleType::Float32, 8, false};
    options.angleRangeDegrees = 360.0;
    auto reader = openDataset(dir / "scan.raw", options);
    const auto& info = reader->info();
    EXPECT_EQ(info.format, DatasetFormat::Raw);
    EXPECT_EQ(info.projections, A);
    EXPECT_EQ(info.rows, R);
    EXPECT_EQ(info.columns, C);
    EXPECT_FALSE(info.logCorrected);
    ASSERT_EQ(info.angles.size(), 5u);
    EXPECT_NEAR(info.angles[1], 72 * kDeg, 1e-12); // uniform over [0, 360), end excluded

    const auto out = sinograms(*reader, 1, 2);
    for (int r = 0; r < 2; ++r)
        for (int a = 0; a < A; ++a)
            for (int c = 0; c < C; ++c) EXPECT_EQ(out[(r * A + a) * C + c], sample(a, 1 + r, c));
    std::vector<float> flat(2 * C);
    EXPECT_FALSE(reader->readMeanFlat(1, 2, flat));
    EXPECT_FALSE(reader->readMeanDark(1, 2, flat));
    expectProjection(*reader, 3, [](int r, int c) { return sample(3, r, c); });
}

TEST(RawReader, BigEndianUint16) {
    TempDir dir;
    const int A = 2, R = 2, C = 2;
    std::string bytes;
    for (int a = 0; a < A; ++a)
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) {
                const auto v = static_cast<std::uint16_t>(sample(a, r, c) * 10); // > 255: byte order matters
                bytes += static_cast<char>(v >> 8);
                bytes += static_cast<char>(v & 0xFF);
            }
    writeText(dir / "be.raw", bytes);
    OpenOptions options;
    options.raw = RawLayout{A, R, C, SampleType::UInt16, 0, true};
    auto reader = openDataset(dir / "be.raw", options);
    EXPECT_EQ(reader->info().sampleType, SampleType::UInt16);
    const auto out = sinograms(*reader, 0, 2);
    EXPECT_EQ(out[(1 * A + 1) * C + 1], sample(1, 1, 1) * 10);
    EXPECT_EQ(out[0], sample(0, 0, 0) * 10);
    expectProjection(*reader, 1, [](int r, int c) { return sample(1, r, c) * 10; });
}

TEST(RawReader, TruncatedOrOversizedFileNamesBothSizes) {
    TempDir dir;
    writeText(dir / "short.raw", std::string(4 * 5 * 6 * 4 - 10, '\0'));
    OpenOptions options;
    options.raw = RawLayout{4, 5, 6, SampleType::Float32};
    const auto message = messageOf<FormatError>([&] { openDataset(dir / "short.raw", options); });
    EXPECT_TRUE(contains(message, "short.raw"));
    EXPECT_TRUE(contains(message, "470 bytes"));
    EXPECT_TRUE(contains(message, "expects 480 bytes"));
    EXPECT_TRUE(contains(message, "truncated"));
    writeText(dir / "long.raw", std::string(481, '\0'));
    EXPECT_THROW(openDataset(dir / "long.raw", options), FormatError);
}

TEST(RawReader, BadLayoutRowRangeAndBuffer) {
    TempDir dir;
    writeText(dir / "s.raw", std::string(3 * 4 * 2 * 2, '\0'));
    OpenOptions options;
    options.raw = RawLayout{3, 0, 2, SampleType::UInt16};
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { openDataset(dir / "s.raw", options); }), "rows = 0"));
    options.raw = RawLayout{3, 4, 2, SampleType::UInt16};
    auto reader = openDataset(dir / "s.raw", options);
    std::vector<float> out(3 * 2);
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { reader->readSinograms(4, 1, out); }), "[4, 5)"));
    EXPECT_THROW(reader->readSinograms(-1, 1, out), InvalidArgument);
    EXPECT_THROW(reader->readSinograms(0, 0, out), InvalidArgument);
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { reader->readSinograms(0, 2, out); }), "expected 12"));
    EXPECT_THROW(openDataset(dir / "missing.raw", options), IoError);
}

TEST(RawReader, AnglesFileCountMustMatch) {
    TempDir dir;
    writeText(dir / "s.raw", std::string(3 * 2 * 2, '\0'));
    writeText(dir / "angles.txt", "0\n60\n");
    OpenOptions options;
    options.raw = RawLayout{3, 2, 2, SampleType::UInt8};
    options.anglesFile = dir / "angles.txt";
    const auto message = messageOf<FormatError>([&] { openDataset(dir / "s.raw", options); });
    EXPECT_TRUE(contains(message, "angles.txt holds 2 angles"));
    EXPECT_TRUE(contains(message, "3 projections"));
    writeText(dir / "angles.txt", "0\n60\n120\n");
    EXPECT_NEAR(openDataset(dir / "s.raw", options)->info().angles[2], 120 * kDeg, 1e-12);

    // Entries of a longer file; the reader records which.
    writeText(dir / "angles.txt", "-1\n0\n60\n120\n500\n");
    options.anglesLines = LineRange{1, 3};
    const auto reader = openDataset(dir / "s.raw", options);
    EXPECT_NEAR(reader->info().angles[2], 120 * kDeg, 1e-12);
    EXPECT_EQ(reader->info().anglesFile, dir / "angles.txt");
    EXPECT_EQ(reader->info().anglesLines, (LineRange{1, 3}));
    // Entries without a file to take them from.
    options.anglesFile.reset();
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { openDataset(dir / "s.raw", options); }),
                         "none is given"));
}

// ---------------------------------------------------------------- HDF5

#if TOMO_WITH_HDF5

/// Values sample(a, r, c) of an A x R x C stack, as T.
template <typename T>
std::vector<T> stack(int A, int R, int C) {
    std::vector<T> v;
    for (int a = 0; a < A; ++a)
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) v.push_back(static_cast<T>(sample(a, r, c)));
    return v;
}

/// A DXchange file: uint16 data A x 4 x 5, two float32 flats (5000 + k*10 +
/// r + c/2, mean 5005 + r + c/2), three uint8 darks (10 + k, mean 11),
/// theta 30 degrees apart.
void writeDXchange(const std::filesystem::path& path, int A = 6, hsize_t userBlock = 0) {
    const int R = 4, C = 5;
    std::vector<float> flats;
    for (int k = 0; k < 2; ++k)
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) flats.push_back(5000.0f + k * 10 + r + c * 0.5f);
    std::vector<std::uint8_t> darks;
    for (int k = 0; k < 3; ++k) darks.insert(darks.end(), R * C, static_cast<std::uint8_t>(10 + k));
    std::vector<double> theta;
    for (int a = 0; a < A; ++a) theta.push_back(30.0 * a);
    test::H5Builder(path, userBlock)
        .dataset("/exchange/data", {hsize_t(A), 4, 5}, stack<std::uint16_t>(A, R, C))
        .dataset("/exchange/data_white", {2, 4, 5}, flats)
        .dataset("/exchange/data_dark", {3, 4, 5}, darks)
        .dataset("/exchange/theta", {hsize_t(A)}, theta);
}

TEST(Hdf5Reader, DXchangeRowsFlatsDarksAngles) {
    TempDir dir;
    writeDXchange(dir / "scan.h5");
    const std::string before = fileBytes(dir / "scan.h5");
    const auto modified = std::filesystem::last_write_time(dir / "scan.h5");
    EXPECT_EQ(detectFormat(dir / "scan.h5"), DatasetFormat::DXchange);
    {
        auto reader = openDataset(dir / "scan.h5");
        const auto& info = reader->info();
        EXPECT_EQ(info.format, DatasetFormat::DXchange);
        EXPECT_EQ(info.sampleType, SampleType::UInt16);
        EXPECT_EQ(info.projections, 6);
        EXPECT_EQ(info.rows, 4);
        EXPECT_EQ(info.columns, 5);
        EXPECT_EQ(info.flats, 2);
        EXPECT_EQ(info.darks, 3);
        ASSERT_EQ(info.angles.size(), 6u);
        EXPECT_NEAR(info.angles[5], 150 * kDeg, 1e-12);

        const auto out = sinograms(*reader, 1, 3);
        for (int r = 0; r < 3; ++r)
            for (int a = 0; a < 6; ++a)
                for (int c = 0; c < 5; ++c) ASSERT_EQ(out[(r * 6 + a) * 5 + c], sample(a, 1 + r, c));
        std::vector<float> flat(2 * 5), dark(2 * 5);
        ASSERT_TRUE(reader->readMeanFlat(2, 2, flat));
        ASSERT_TRUE(reader->readMeanDark(2, 2, dark));
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 5; ++c) {
                EXPECT_EQ(flat[r * 5 + c], 5005.0f + (2 + r) + c * 0.5f);
                EXPECT_EQ(dark[r * 5 + c], 11.0f);
            }
        EXPECT_THROW(reader->readMeanFlat(3, 2, flat), InvalidArgument);
        expectProjection(*reader, 4, [](int r, int c) { return sample(4, r, c); });
    }
    // Never modifies its input.
    EXPECT_EQ(fileBytes(dir / "scan.h5"), before);
    EXPECT_EQ(std::filesystem::last_write_time(dir / "scan.h5"), modified);
}

TEST(Hdf5Reader, SignatureAfterAUserBlock) {
    TempDir dir;
    writeDXchange(dir / "ub.h5", 6, 1024);
    EXPECT_EQ(detectFormat(dir / "ub.h5"), DatasetFormat::DXchange);
    EXPECT_EQ(openDataset(dir / "ub.h5")->info().projections, 6);
}

TEST(Hdf5Reader, DXchangeFloat64AndUint8DataWithRadianTheta) {
    TempDir dir;
    test::H5Builder(dir / "f64.h5")
        .dataset("/exchange/data", {3, 2, 4}, stack<double>(3, 2, 4))
        .dataset("/exchange/theta", {3}, std::vector<double>{0.0, 0.5, 1.0})
        .attribute("/exchange/theta", "units", "radians");
    auto reader = openDataset(dir / "f64.h5");
    EXPECT_EQ(reader->info().sampleType, SampleType::Float64);
    EXPECT_EQ(reader->info().flats, 0);
    EXPECT_DOUBLE_EQ(reader->info().angles[2], 1.0);
    EXPECT_EQ(sinograms(*reader, 1, 1)[2 * 4 + 3], sample(2, 1, 3));
    std::vector<float> flat(4);
    EXPECT_FALSE(reader->readMeanFlat(0, 1, flat));

    std::vector<std::uint8_t> small(3 * 2 * 4);
    std::iota(small.begin(), small.end(), std::uint8_t{0});
    test::H5Builder(dir / "u8.h5").dataset("/exchange/data", {3, 2, 4}, small);
    auto u8 = openDataset(dir / "u8.h5");
    EXPECT_EQ(u8->info().sampleType, SampleType::UInt8);
    EXPECT_NEAR(u8->info().angles[1], 60 * kDeg, 1e-12); // no theta: uniform over 180 degrees
    EXPECT_EQ(sinograms(*u8, 1, 1)[1 * 4 + 2], 8.0f + 4 + 2); // frame 1, row 1, column 2
}

TEST(Hdf5Reader, BadDXchangeFilesAreRefusedWithTheirNames) {
    TempDir dir;
    test::H5Builder(dir / "rank.h5").dataset("/exchange/data", {3, 4}, std::vector<float>(12));
    auto message = messageOf<FormatError>([&] { openDataset(dir / "rank.h5"); });
    EXPECT_TRUE(contains(message, "/exchange/data in "));
    EXPECT_TRUE(contains(message, "(3, 4)"));
    EXPECT_TRUE(contains(message, "expected 3D"));

    test::H5Builder(dir / "dtype.h5").dataset("/exchange/data", {2, 2, 2}, std::vector<std::int32_t>(8));
    message = messageOf<FormatError>([&] { openDataset(dir / "dtype.h5"); });
    EXPECT_TRUE(contains(message, "int32"));
    EXPECT_TRUE(contains(message, "expected uint8, uint16, float32 or float64"));

    test::H5Builder(dir / "flat.h5")
        .dataset("/exchange/data", {2, 2, 2}, std::vector<float>(8))
        .dataset("/exchange/data_white", {1, 2, 3}, std::vector<float>(6));
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "flat.h5"); }), "/exchange/data_white"));

    test::H5Builder(dir / "theta.h5")
        .dataset("/exchange/data", {2, 2, 2}, std::vector<float>(8))
        .dataset("/exchange/theta", {3}, std::vector<double>{0, 1, 2});
    message = messageOf<FormatError>([&] { openDataset(dir / "theta.h5"); });
    EXPECT_TRUE(contains(message, "/exchange/theta"));
    EXPECT_TRUE(contains(message, "holds 3 angles"));
    EXPECT_TRUE(contains(message, "2 projections"));

    test::H5Builder(dir / "units.h5")
        .dataset("/exchange/data", {2, 2, 2}, std::vector<float>(8))
        .dataset("/exchange/theta", {2}, std::vector<double>{0, 1})
        .attribute("/exchange/theta", "units", "gradians");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "units.h5"); }), "'gradians'"));

    // An array where one string is expected (read into a one-string buffer,
    // this used to overrun it).
    test::H5Builder(dir / "units_array.h5")
        .dataset("/exchange/data", {2, 2, 2}, std::vector<float>(8))
        .dataset("/exchange/theta", {2}, std::vector<double>{0, 1})
        .attribute("/exchange/theta", "units", "degrees", 64);
    message = messageOf<FormatError>([&] { openDataset(dir / "units_array.h5"); });
    EXPECT_TRUE(contains(message, "/exchange/theta"));
    EXPECT_TRUE(contains(message, "units"));

    test::H5Builder(dir / "other.h5").dataset("/something/else", {2}, std::vector<float>(2));
    message = messageOf<FormatError>([&] { openDataset(dir / "other.h5"); });
    EXPECT_TRUE(contains(message, "other.h5"));
    EXPECT_TRUE(contains(message, "/exchange/data (DXchange)"));
}

TEST(Hdf5Reader, NXtomoSelectsFramesByImageKey) {
    TempDir dir;
    // Frames: dark, flat, proj x3, flat, proj x2, invalid. Frame f holds sample(f, r, c).
    const std::vector<std::int32_t> keys{2, 1, 0, 0, 0, 1, 0, 0, 3};
    const int F = static_cast<int>(keys.size()), R = 3, C = 4;
    std::vector<double> angles;
    for (int f = 0; f < F; ++f) angles.push_back(10.0 * f);
    test::H5Builder(dir / "nx.nxs")
        .dataset("/entry/instrument/detector/data", {hsize_t(F), 3, 4}, stack<float>(F, R, C))
        .dataset("/entry/instrument/detector/image_key", {hsize_t(F)}, keys)
        .dataset("/entry/sample/rotation_angle", {hsize_t(F)}, angles);
    EXPECT_EQ(detectFormat(dir / "nx.nxs"), DatasetFormat::NXtomo);
    auto reader = openDataset(dir / "nx.nxs");
    const auto& info = reader->info();
    EXPECT_EQ(info.format, DatasetFormat::NXtomo);
    EXPECT_EQ(info.projections, 5);
    EXPECT_EQ(info.flats, 2);
    EXPECT_EQ(info.darks, 1);
    const std::vector<int> projectionFrames{2, 3, 4, 6, 7};
    ASSERT_EQ(info.angles.size(), 5u);
    for (int a = 0; a < 5; ++a) EXPECT_NEAR(info.angles[a], 10.0 * projectionFrames[a] * kDeg, 1e-12);

    const auto out = sinograms(*reader, 1, 2);
    for (int r = 0; r < 2; ++r)
        for (int a = 0; a < 5; ++a)
            for (int c = 0; c < C; ++c) ASSERT_EQ(out[(r * 5 + a) * C + c], sample(projectionFrames[a], 1 + r, c));
    std::vector<float> flat(C), dark(C);
    ASSERT_TRUE(reader->readMeanFlat(2, 1, flat));
    ASSERT_TRUE(reader->readMeanDark(2, 1, dark));
    EXPECT_EQ(flat[3], (sample(1, 2, 3) + sample(5, 2, 3)) / 2);
    EXPECT_EQ(dark[3], sample(0, 2, 3));
    // The fourth projection is frame 6 (after the second flat).
    expectProjection(*reader, 3, [](int r, int c) { return sample(6, r, c); });
}

TEST(Hdf5Reader, NXtomoDataGroupWithoutKeysAndBadKeys) {
    TempDir dir;
    test::H5Builder(dir / "plain.nxs")
        .dataset("/entry/data/data", {4, 2, 3}, stack<std::uint16_t>(4, 2, 3))
        .dataset("/entry/data/rotation_angle", {4}, std::vector<double>{0, 45, 90, 135});
    auto reader = openDataset(dir / "plain.nxs");
    EXPECT_EQ(reader->info().projections, 4);
    EXPECT_EQ(reader->info().flats, 0);
    EXPECT_NEAR(reader->info().angles[3], 135 * kDeg, 1e-12);
    EXPECT_EQ(sinograms(*reader, 1, 1)[3 * 3 + 2], sample(3, 1, 2));

    test::H5Builder(dir / "badkey.nxs")
        .dataset("/entry/instrument/detector/data", {3, 2, 2}, std::vector<float>(12))
        .dataset("/entry/instrument/detector/image_key", {3}, std::vector<std::int32_t>{0, 7, 0});
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "badkey.nxs"); }), "key 7"));

    test::H5Builder(dir / "noproj.nxs")
        .dataset("/entry/instrument/detector/data", {2, 2, 2}, std::vector<float>(8))
        .dataset("/entry/instrument/detector/image_key", {2}, std::vector<std::int32_t>{1, 2});
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "noproj.nxs"); }), "no frame"));

    test::H5Builder(dir / "keycount.nxs")
        .dataset("/entry/instrument/detector/data", {3, 2, 2}, std::vector<float>(12))
        .dataset("/entry/instrument/detector/image_key", {2}, std::vector<std::int32_t>{0, 0});
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "keycount.nxs"); }), "has 2 keys; expected 3"));
}

TEST(Hdf5Reader, SinogramFileIsOneLogCorrectedRow) {
    TempDir dir;
    test::H5Builder(dir / "sino.h5")
        .dataset("/sinogram", {4, 3}, stack<float>(1, 4, 3)) // angle a = "row" of the 2D array
        .dataset("/angles_deg", {4}, std::vector<double>{0, 45, 90, 135});
    EXPECT_EQ(detectFormat(dir / "sino.h5"), DatasetFormat::SinogramHdf5);
    auto reader = openDataset(dir / "sino.h5");
    const auto& info = reader->info();
    EXPECT_TRUE(info.logCorrected);
    EXPECT_EQ(info.rows, 1);
    EXPECT_EQ(info.projections, 4);
    EXPECT_EQ(info.columns, 3);
    EXPECT_NEAR(info.angles[2], std::numbers::pi / 2, 1e-12);
    const auto out = sinograms(*reader, 0, 1);
    EXPECT_EQ(out[2 * 3 + 1], sample(0, 2, 1));
    std::vector<float> one(4 * 3);
    EXPECT_THROW(reader->readSinograms(1, 1, one), InvalidArgument);
    // One row: the projection at an angle is a row of the sinogram (the default readProjection).
    expectProjection(*reader, 2, [](int, int c) { return sample(0, 2, c); });

    test::H5Builder(dir / "sino3d.h5").dataset("/sinogram", {1, 4, 3}, std::vector<float>(12));
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "sino3d.h5"); }), "expected 2D"));
}

#endif // TOMO_WITH_HDF5

// ---------------------------------------------------------------- TIFF

#if TOMO_WITH_TIFF

std::vector<float> image(int a, int w, int h) {
    std::vector<float> v;
    for (int r = 0; r < h; ++r)
        for (int c = 0; c < w; ++c) v.push_back(sample(a, r, c));
    return v;
}

TEST(TiffReader, DirectoryOfTiledAndStripTiffsSortedByNumber) {
    TempDir dir;
    const int W = 20, H = 18, A = 12; // 20 x 18: partial tiles at the right and bottom
    // Not zero-padded: proj_2 must come before proj_10.
    for (int a = 0; a < A; ++a) writeTiff(dir / ("proj_" + std::to_string(a) + ".tif"), W, H, {image(a, W, H)}, SampleType::UInt16, true);
    std::vector<float> white(W * H, 3000.0f), white2(W * H, 3002.0f), dark(W * H, 7.0f);
    writeTiff(dir / "White_0.tif", W, H, {white}, SampleType::Float32, false, 3);
    writeTiff(dir / "flat_1.tif", W, H, {white2}, SampleType::Float32, false, 5);
    writeTiff(dir / "dark.tif", W, H, {dark}, SampleType::UInt8);
    writeText(dir / "notes.txt", "not a TIFF: ignored");
    std::string angles;
    for (int a = 0; a < A; ++a) angles += std::to_string(15 * a) + "\n";
    writeText(dir / "angles.txt", angles);

    EXPECT_EQ(detectFormat(dir.path()), DatasetFormat::TiffDirectory);
    auto reader = openDataset(dir.path());
    const auto& info = reader->info();
    EXPECT_EQ(info.format, DatasetFormat::TiffDirectory);
    EXPECT_EQ(info.projections, A);
    EXPECT_EQ(info.rows, H);
    EXPECT_EQ(info.columns, W);
    EXPECT_EQ(info.sampleType, SampleType::UInt16);
    EXPECT_EQ(info.flats, 2);
    EXPECT_EQ(info.darks, 1);
    EXPECT_NEAR(info.angles[11], 165 * kDeg, 1e-12);

    const auto out = sinograms(*reader, 15, 3); // rows in the second (partial) tile row
    for (int r = 0; r < 3; ++r)
        for (int a = 0; a < A; ++a)
            for (int c = 0; c < W; ++c) ASSERT_EQ(out[(r * A + a) * W + c], sample(a, 15 + r, c)) << a << " " << c;
    std::vector<float> flat(2 * W), darkOut(2 * W);
    ASSERT_TRUE(reader->readMeanFlat(4, 2, flat));
    ASSERT_TRUE(reader->readMeanDark(4, 2, darkOut));
    EXPECT_EQ(flat[W + 3], 3001.0f);
    EXPECT_EQ(darkOut[5], 7.0f);
    expectProjection(*reader, 7, [](int r, int c) { return sample(7, r, c); });
}

TEST(TiffReader, MultiPageOnePagePerProjection) {
    TempDir dir;
    const int W = 7, H = 5, A = 4;
    std::vector<std::vector<float>> pages;
    for (int a = 0; a < A; ++a) pages.push_back(image(a, W, H));
    writeTiff(dir / "stack.tiff", W, H, pages, SampleType::Float32);
    EXPECT_EQ(detectFormat(dir / "stack.tiff"), DatasetFormat::MultiPageTiff);
    auto reader = openDataset(dir / "stack.tiff");
    EXPECT_EQ(reader->info().projections, A);
    EXPECT_EQ(reader->info().sampleType, SampleType::Float32);
    for (int pass = 0; pass < 2; ++pass) { // pages are re-read from the first on every call
        const auto out = sinograms(*reader, 3, 2);
        for (int r = 0; r < 2; ++r)
            for (int a = 0; a < A; ++a)
                for (int c = 0; c < W; ++c) ASSERT_EQ(out[(r * A + a) * W + c], sample(a, 3 + r, c));
        expectProjection(*reader, 2, [](int r, int c) { return sample(2, r, c); });
    }
}

TEST(TiffReader, SinglePageIsOneSinogramOfAnglesByColumns) {
    TempDir dir;
    const int W = 7, H = 5; // 5 angles x 7 columns
    writeTiff(dir / "sino.tif", W, H, {image(0, W, H)}, SampleType::UInt16);
    EXPECT_EQ(detectFormat(dir / "sino.tif"), DatasetFormat::SinogramTiff);
    OpenOptions options;
    options.angleRangeDegrees = 360.0;
    auto reader = openDataset(dir / "sino.tif", options);
    const auto& info = reader->info();
    EXPECT_EQ(info.format, DatasetFormat::SinogramTiff);
    EXPECT_EQ(info.projections, H);
    EXPECT_EQ(info.rows, 1);
    EXPECT_EQ(info.columns, W);
    EXPECT_FALSE(info.logCorrected);
    EXPECT_NEAR(info.angles[4], 4 * 72 * kDeg, 1e-12);
    // uint16 counts without flats: the user is told they are -log'ed as they are.
    ASSERT_EQ(info.warnings.size(), 1u);
    EXPECT_TRUE(contains(info.warnings[0], "no flat fields"));
    const auto out = sinograms(*reader, 0, 1);
    for (int a = 0; a < H; ++a)
        for (int c = 0; c < W; ++c) ASSERT_EQ(out[a * W + c], sample(0, a, c));
    EXPECT_THROW(sinograms(*reader, 1, 1), InvalidArgument);

    // Already line integrals: no warning, no -log.
    options.logCorrected = true;
    auto logged = openDataset(dir / "sino.tif", options);
    EXPECT_TRUE(logged->info().logCorrected);
    EXPECT_TRUE(logged->info().warnings.empty());
}

TEST(TiffReader, BadDirectoriesNameTheFile) {
    TempDir dir;
    std::filesystem::create_directories(dir / "size");
    writeTiff(dir / "size" / "p_0.tif", 4, 4, {image(0, 4, 4)}, SampleType::UInt16);
    writeTiff(dir / "size" / "p_1.tif", 4, 4, {image(1, 4, 4)}, SampleType::UInt16);
    writeTiff(dir / "size" / "flat.tif", 5, 4, {std::vector<float>(20, 1.0f)}, SampleType::UInt16);
    auto message = messageOf<FormatError>([&] { openDataset(dir / "size"); });
    EXPECT_TRUE(contains(message, "flat.tif is 5 x 4"));
    EXPECT_TRUE(contains(message, "expected 4 x 4"));

    std::filesystem::create_directories(dir / "prefix");
    writeTiff(dir / "prefix" / "a_0.tif", 4, 4, {image(0, 4, 4)}, SampleType::UInt16);
    writeTiff(dir / "prefix" / "b_1.tif", 4, 4, {image(1, 4, 4)}, SampleType::UInt16);
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "prefix"); }), "does not share the prefix"));

    std::filesystem::create_directories(dir / "rgb");
    TIFF* t = TIFFOpen((dir / "rgb" / "p_0.tif").c_str(), "w");
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, 2);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, 1);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 3);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
    unsigned char rgb[6] = {};
    TIFFWriteScanline(t, rgb, 0, 0);
    TIFFClose(t);
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "rgb"); }), "3 samples per pixel"));

    std::filesystem::create_directories(dir / "count");
    writeTiff(dir / "count" / "p_0.tif", 4, 4, {image(0, 4, 4)}, SampleType::UInt16);
    writeTiff(dir / "count" / "p_1.tif", 4, 4, {image(1, 4, 4)}, SampleType::UInt16);
    writeText(dir / "count" / "angles.txt", "0\n");
    message = messageOf<FormatError>([&] { openDataset(dir / "count"); });
    EXPECT_TRUE(contains(message, "angles.txt holds 1 angles"));
    EXPECT_TRUE(contains(message, "2 projection files"));
}

#endif // TOMO_WITH_TIFF

// ---------------------------------------------------------------- real data

#if TOMO_WITH_HDF5

TEST(RealData, ApsToothDXchange) {
    const auto path = test::realData("aps_tooth/tooth.h5");
    TOMO_REQUIRE_FILE(path);
    auto reader = openDataset(path);
    const auto& info = reader->info();
    EXPECT_EQ(info.format, DatasetFormat::DXchange);
    EXPECT_EQ(info.sampleType, SampleType::Float32);
    EXPECT_EQ(info.projections, 181);
    EXPECT_EQ(info.rows, 2);
    EXPECT_EQ(info.columns, 640);
    EXPECT_EQ(info.flats, 10);
    EXPECT_EQ(info.darks, 10);
    EXPECT_DOUBLE_EQ(info.angles.front(), 0.0);
    EXPECT_NEAR(info.angles.back() / kDeg, 179.0055, 1e-3);
    EXPECT_NEAR((info.angles[1] - info.angles[0]) / kDeg, 180.0 / 181.0, 1e-6);

    const auto raw = sinograms(*reader, 0, 2);
    // SOURCES.md: values 3 921 ... 33 892 (rounded to integers there).
    EXPECT_NEAR(*std::min_element(raw.begin(), raw.end()), 3921.0f, 0.5f);
    EXPECT_NEAR(*std::max_element(raw.begin(), raw.end()), 33892.0f, 0.5f);
    std::vector<float> flat(2 * 640), dark(2 * 640);
    ASSERT_TRUE(reader->readMeanFlat(0, 2, flat));
    ASSERT_TRUE(reader->readMeanDark(0, 2, dark));
    // SOURCES.md: flat mean about 27 942, dark mean about 105 (rounded there).
    EXPECT_NEAR(std::accumulate(flat.begin(), flat.end(), 0.0) / flat.size(), 27942.0, 1.0);
    EXPECT_NEAR(std::accumulate(dark.begin(), dark.end(), 0.0) / dark.size(), 105.0, 1.0);

    // Transmission 0.14 ... 1.10 (SOURCES.md) -> line integrals -ln 1.10 ... -ln 0.14.
    PreprocessStats stats;
    const ImageStack p = loadSinograms(*reader, 0, 2, &stats);
    EXPECT_EQ(stats.clamped, 0u);
    const auto [lo, hi] = std::minmax_element(p.data.begin(), p.data.end());
    EXPECT_NEAR(*lo, -std::log(1.10), 0.01);
    EXPECT_NEAR(*hi, -std::log(0.14), 0.05);
}

TEST(RealData, DiamondI13DXchange) {
    const auto path = test::realData("dls_i13_24737/i13_24737_dxchange.h5");
    TOMO_REQUIRE_FILE(path);
    auto reader = openDataset(path);
    const auto& info = reader->info();
    EXPECT_EQ(info.sampleType, SampleType::UInt16);
    EXPECT_EQ(info.projections, 91);
    EXPECT_EQ(info.rows, 135);
    EXPECT_EQ(info.columns, 160);
    EXPECT_EQ(info.flats, 1);
    EXPECT_EQ(info.darks, 1);
    EXPECT_NEAR(info.angles.front() / kDeg, -88.2, 1e-3); // as stored: 91.7999 at the end
    EXPECT_NEAR(info.angles.back() / kDeg, 91.8, 1e-3);

    std::vector<float> flat(135 * 160), dark(135 * 160);
    ASSERT_TRUE(reader->readMeanFlat(0, 135, flat));
    ASSERT_TRUE(reader->readMeanDark(0, 135, dark));
    EXPECT_NEAR(std::accumulate(flat.begin(), flat.end(), 0.0) / flat.size(), 37195.0, 1.0);
    EXPECT_NEAR(std::accumulate(dark.begin(), dark.end(), 0.0) / dark.size(), 97.7, 0.1);
    // The dead pixel (row 0, column 0) is 0 in raw, flat and dark.
    EXPECT_EQ(flat[0], 0.0f);
    EXPECT_EQ(dark[0], 0.0f);
    const auto raw = sinograms(*reader, 0, 1);
    for (int a = 0; a < 91; ++a) ASSERT_EQ(raw[static_cast<std::size_t>(a) * 160], 0.0f);

    // It must be clamped (and counted) once per projection, never NaN.
    PreprocessStats stats;
    const ImageStack p = loadSinograms(*reader, 0, 2, &stats);
    EXPECT_GE(stats.clamped, 91u);
    EXPECT_TRUE(std::all_of(p.data.begin(), p.data.end(), [](float v) { return std::isfinite(v); }));
    EXPECT_FLOAT_EQ(p.data[0], static_cast<float>(-std::log(1e-5)));
}

TEST(RealData, SinogramFilesDendritesAndBasalt) {
    const auto dendrites = test::realData("dls_i12_dendrites/dendrites_sino.h5");
    const auto basalt = test::realData("psi_neutron_basalt/basalt_sino.h5");
    TOMO_REQUIRE_FILE(dendrites);
    TOMO_REQUIRE_FILE(basalt);

    auto d = openDataset(dendrites);
    EXPECT_EQ(d->info().format, DatasetFormat::SinogramHdf5);
    EXPECT_TRUE(d->info().logCorrected);
    EXPECT_EQ(d->info().projections, 360);
    EXPECT_EQ(d->info().columns, 1260);
    EXPECT_NEAR(d->info().angles.front(), 292.17604, 1e-5);
    EXPECT_NEAR(d->info().angles.back(), 295.30903, 1e-5);
    const ImageStack ds = loadSinograms(*d, 0, 1);
    const auto [dmin, dmax] = std::minmax_element(ds.data.begin(), ds.data.end());
    EXPECT_NEAR(*dmin, 289.0, 1.0); // SOURCES.md: range 289 ... 2124
    EXPECT_NEAR(*dmax, 2124.0, 1.0);

    auto b = openDataset(basalt);
    EXPECT_EQ(b->info().projections, 530);
    EXPECT_EQ(b->info().columns, 627);
    EXPECT_NEAR(b->info().angles.front(), 0.0, 1e-9);
    EXPECT_NEAR(b->info().angles.back(), 3.13793, 1e-5);
    const ImageStack bs = loadSinograms(*b, 0, 1);
    const auto [bmin, bmax] = std::minmax_element(bs.data.begin(), bs.data.end());
    EXPECT_NEAR(*bmin, 0.0, 1.0); // SOURCES.md: 0 ... 165
    EXPECT_NEAR(*bmax, 165.0, 1.0);
}

#else

TEST(RealData, HdfFileWithoutHdfSupportSaysSo) {
    const auto path = test::realData("aps_tooth/tooth.h5");
    TOMO_REQUIRE_FILE(path);
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(path); }),
                "is an HDF5 file but this build has no HDF5 support"));
}

#endif // TOMO_WITH_HDF5

#if TOMO_WITH_TIFF

TEST(RealData, DiamondI13TiffDirectoryFindsItsProjectionAngles) {
    const auto dir = test::realData("dls_i13_24737/tiff");
    TOMO_REQUIRE_FILE(dir);
    EXPECT_EQ(detectFormat(dir), DatasetFormat::TiffDirectory);
    // Its angles.txt has one line per frame of the original scan (111): 10
    // dark/flat frames at -88.2, the 91 projections, 10 frames at 91.8.
    const auto own = openDataset(dir);
    EXPECT_EQ(own->info().anglesFile, dir / "angles.txt");
    ASSERT_TRUE(own->info().anglesLines.has_value());
    EXPECT_EQ(*own->info().anglesLines, (LineRange{10, 91}));
    // Entries that do not give one angle per projection are named.
    OpenOptions wrong;
    wrong.anglesLines = LineRange{10, 90};
    const auto message = messageOf<FormatError>([&] { openDataset(dir, wrong); });
    EXPECT_TRUE(contains(message, "angles.txt (entries 10 to 99) holds 90 angles"));
    EXPECT_TRUE(contains(message, "91 projections"));
    OpenOptions given;
    given.anglesLines = LineRange{10, 91};
    EXPECT_EQ(openDataset(dir, given)->info().angles, own->info().angles);

    // Rows 10-100 of angles.txt are the projections (SOURCES.md).
    TempDir tmp;
    std::ifstream in(dir / "angles.txt");
    std::string line, selected;
    for (int i = 0; std::getline(in, line); ++i)
        if (i >= 10 && i <= 100) selected += line + "\n";
    writeText(tmp / "angles.txt", selected);
    OpenOptions options;
    options.anglesFile = tmp / "angles.txt";
    auto reader = openDataset(dir, options);
    const auto& info = reader->info();
    EXPECT_EQ(info.projections, 91);
    EXPECT_EQ(info.rows, 135);
    EXPECT_EQ(info.columns, 160);
    EXPECT_EQ(info.sampleType, SampleType::UInt16);
    EXPECT_EQ(info.flats, 1);
    EXPECT_EQ(info.darks, 1);
    EXPECT_NEAR(info.angles.front() / kDeg, -88.2, 1e-3); // as stored: 91.7999 at the end
    EXPECT_NEAR(info.angles.back() / kDeg, 91.8, 1e-3);

#if TOMO_WITH_HDF5
    // The DXchange re-pack holds the same numbers.
    const auto repack = test::realData("dls_i13_24737/i13_24737_dxchange.h5");
    TOMO_REQUIRE_FILE(repack);
    auto h5 = openDataset(repack);
    EXPECT_EQ(sinograms(*reader, 60, 5), sinograms(*h5, 60, 5));
    std::vector<float> flatTiff(5 * 160), flatH5(5 * 160);
    ASSERT_TRUE(reader->readMeanFlat(60, 5, flatTiff));
    ASSERT_TRUE(h5->readMeanFlat(60, 5, flatH5));
    EXPECT_EQ(flatTiff, flatH5);
    for (std::size_t i = 0; i < info.angles.size(); ++i) EXPECT_NEAR(info.angles[i], h5->info().angles[i], 1e-12);
    for (std::size_t i = 0; i < info.angles.size(); ++i) EXPECT_NEAR(own->info().angles[i], h5->info().angles[i], 1e-12);
#endif
}

TEST(RealData, SarepySinogramTiffWithItsAnglesFile) {
    const auto path = test::realData("sarepy_neutron_360/sinogram_360_neutron_image.tif");
    TOMO_REQUIRE_FILE(path);
    OpenOptions options;
    options.anglesFile = test::realData("sarepy_neutron_360/angles_deg.txt");
    auto reader = openDataset(path, options);
    const auto& info = reader->info();
    EXPECT_EQ(info.format, DatasetFormat::SinogramTiff);
    EXPECT_EQ(info.projections, 459);
    EXPECT_EQ(info.columns, 503);
    EXPECT_EQ(info.rows, 1);
    EXPECT_EQ(info.sampleType, SampleType::UInt16);
    EXPECT_NEAR(info.angles.back(), 2 * std::numbers::pi, 1e-9); // linspace(0, 360, 459)
    ASSERT_EQ(info.warnings.size(), 1u);
    EXPECT_TRUE(contains(info.warnings[0], "no flat fields"));
    // The documented counts: 0 ... 53711, 214 pixels <= 0.
    const auto values = sinograms(*reader, 0, 1);
    EXPECT_EQ(*std::max_element(values.begin(), values.end()), 53711.0f);
    EXPECT_EQ(std::count_if(values.begin(), values.end(), [](float v) { return v <= 0.0f; }), 214);
}

#endif // TOMO_WITH_TIFF

// ---------------------------------------------------------------- hostile inputs
//
// What a careless or hostile user can hand over: objects that are not
// files, broken series, sizes the file cannot hold, ambiguous angles,
// divergent-beam geometries. Each is refused by name, never read as data.

TEST(HostileInput, NonRegularFilesAreRefusedBeforeOpening) {
    TempDir dir;
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    // Opening a FIFO for reading would block for ever: refused by type.
    EXPECT_TRUE(contains(messageOf<IoError>([&] { openDataset(dir / "fifo"); }), "is a FIFO"));
    EXPECT_TRUE(contains(messageOf<IoError>([&] { readAnglesFile(dir / "fifo"); }), "is a FIFO"));
    EXPECT_TRUE(contains(messageOf<IoError>([&] { readAxisOffsetsFile(dir / "fifo"); }), "is a FIFO"));
    OpenOptions raw;
    raw.raw = RawLayout{2, 1, 1};
    EXPECT_TRUE(contains(messageOf<IoError>([&] { openDataset(dir / "fifo", raw); }), "is a FIFO"));
    EXPECT_TRUE(contains(messageOf<IoError>([&] { openDataset("/dev/null"); }), "/dev/null is a character device"));
    EXPECT_TRUE(contains(messageOf<IoError>([&] { readAnglesFile(dir.path()); }), "is a directory"));

    // A loop of links is said as such, not "no such file".
    std::filesystem::create_symlink(dir / "loop_b", dir / "loop_a");
    std::filesystem::create_symlink(dir / "loop_a", dir / "loop_b");
    EXPECT_TRUE(contains(messageOf<IoError>([&] { openDataset(dir / "loop_a"); }), "a loop of symbolic links"));
    std::filesystem::create_symlink(dir / "gone", dir / "dangling");
    EXPECT_TRUE(contains(messageOf<IoError>([&] { openDataset(dir / "dangling"); }), "a symbolic link to nothing"));
    // A file larger than any list of angles is not read into memory.
    writeText(dir / "huge.txt", "0\n");
    std::filesystem::resize_file(dir / "huge.txt", std::uintmax_t{65} << 20);
    EXPECT_TRUE(contains(messageOf<IoError>([&] { readAnglesFile(dir / "huge.txt"); }), "at most 64.0 MiB"));
}

TEST(HostileInput, NumbersFilesNameTheLineAndBoundTheMagnitude) {
    TempDir dir;
    writeText(dir / "binary.txt", std::string("0\n\x01\x02\xff garbage that goes on and on and on and on and on\n", 52));
    const auto message = messageOf<FormatError>([&] { readAnglesFile(dir / "binary.txt"); });
    EXPECT_TRUE(contains(message, "binary.txt:2:"));
    EXPECT_LT(message.size(), 250u) << message;
    EXPECT_EQ(message.find('\x01'), std::string::npos);
    writeText(dir / "huge.txt", "0\n2e6\n");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { readAnglesFile(dir / "huge.txt"); }), "angle 1 is 2e+06 degrees"));
    writeText(dir / "rad.txt", "0\n3.14159265358979\n");
    EXPECT_NEAR(readAnglesFile(dir / "rad.txt", AngleUnits::Radians)[1], 3.14159265358979, 1e-12);

    writeText(dir / "offsets.txt", "0.5\n-1e6\n0\n");
    const auto offsets = messageOf<InvalidArgument>([&] { readAxisOffsetsFile(dir / "offsets.txt", 3, 64.0); });
    EXPECT_TRUE(contains(offsets, "offsets.txt: axis offset 1 is -1e+06 pixels; expected at most 64"));
    EXPECT_EQ(readAxisOffsetsFile(dir / "offsets.txt", 3).size(), 3u); // unchecked without a width
}

TEST(HostileInput, RawLayoutThatOverflowsIsRefusedBySize) {
    TempDir dir;
    writeText(dir / "small.raw", std::string(16, '\0'));
    OpenOptions options;
    options.raw = RawLayout{2000000000, 2000000000, 2000000000, SampleType::Float64};
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { openDataset(dir / "small.raw", options); }),
                         "larger than any file can be"));
    // A header "of -4 bytes" (2^64 - 4) overflows the sum, not wraps to 0.
    options.raw = RawLayout{1, 1, 1, SampleType::Float32, std::numeric_limits<std::size_t>::max() - 3};
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { openDataset(dir / "small.raw", options); }),
                         "larger than any file can be"));
    // One projection cannot be reconstructed: said with the file's name.
    writeText(dir / "one.raw", std::string(4, '\0'));
    options.raw = RawLayout{1, 1, 1};
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "one.raw", options); }),
                         "one.raw has 1 projection; expected at least 2"));
    // Uniform angles need a sensible range.
    writeText(dir / "two.raw", std::string(8, '\0'));
    options.raw = RawLayout{2, 1, 1};
    options.angleRangeDegrees = 1e300;
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { openDataset(dir / "two.raw", options); }), "(0, 3600]"));
    // Raw integer counts without flats: the user is warned.
    options.angleRangeDegrees = 180;
    options.raw = RawLayout{2, 1, 2, SampleType::UInt16};
    EXPECT_TRUE(contains(openDataset(dir / "two.raw", options)->info().warnings.at(0), "no flat fields"));
}

#if TOMO_WITH_TIFF

TEST(HostileInput, TiffSeriesWithGapsDamagedFilesOrMixedTypesIsRefused) {
    TempDir dir;
    const auto series = [&](const std::string& name, std::initializer_list<int> numbers) {
        std::filesystem::create_directories(dir / name);
        for (int n : numbers) writeTiff(dir / name / ("p_" + std::to_string(n) + ".tif"), 4, 4, {image(n, 4, 4)}, SampleType::UInt16);
        return dir / name;
    };
    // A constant step is a series; a missing number is not.
    EXPECT_EQ(openDataset(series("even", {0, 2, 4, 6}))->info().projections, 4);
    auto message = messageOf<FormatError>([&] { openDataset(series("gap", {0, 1, 2, 4, 5, 7})); });
    EXPECT_TRUE(contains(message, "misses numbers 3, 6 (2 files)")) << message;
    EXPECT_TRUE(contains(message, "p_0.tif ... p_7.tif"));

    // A *.tif that is not a TIFF (empty, truncated, another format) is an
    // error, not a silently dropped projection.
    const auto damaged = series("damaged", {0, 1, 2});
    std::filesystem::resize_file(damaged / "p_1.tif", 0);
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(damaged); }), "p_1.tif is named like a TIFF"));
    std::filesystem::remove(damaged / "p_1.tif");
    std::filesystem::create_directory(damaged / "p_1.tif");
    EXPECT_TRUE(contains(messageOf<IoError>([&] { openDataset(damaged); }), "p_1.tif is a directory"));

    // A link loop inside the folder names the entry.
    const auto looped = series("looped", {0, 1});
    std::filesystem::create_symlink(looped / "x_b", looped / "x_a");
    std::filesystem::create_symlink(looped / "x_a", looped / "x_b");
    EXPECT_TRUE(contains(messageOf<IoError>([&] { openDataset(looped); }), "a loop of symbolic links"));

    // Mixed sample types in one series.
    const auto mixed = series("mixed", {0, 1});
    writeTiff(mixed / "p_2.tif", 4, 4, {image(2, 4, 4)}, SampleType::Float32);
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(mixed); }),
                         "p_2.tif is 4 x 4 float32; expected 4 x 4 uint16 like p_0.tif"));
    // Flats of another type than the projections are fine (pre-averaged
    // float flats with integer counts), but not mixed among themselves.
    writeTiff(mixed / "p_2.tif", 4, 4, {image(2, 4, 4)}, SampleType::UInt16);
    writeTiff(mixed / "flat_0.tif", 4, 4, {std::vector<float>(16, 9000.0f)}, SampleType::Float32);
    EXPECT_EQ(openDataset(mixed)->info().flats, 1);
    writeTiff(mixed / "flat_1.tif", 4, 4, {std::vector<float>(16, 9000.0f)}, SampleType::UInt16);
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(mixed); }), "flat_1.tif is 4 x 4 uint16"));
}

TEST(HostileInput, TruncatedOrMixedMultiPageTiff) {
    TempDir dir;
    std::vector<std::vector<float>> pages;
    for (int a = 0; a < 5; ++a) pages.push_back(image(a, 6, 4));
    writeTiff(dir / "stack.tif", 6, 4, pages, SampleType::UInt16);
    // Cut inside the chain of pages: not a single page, not a sinogram.
    std::filesystem::copy_file(dir / "stack.tif", dir / "cut.tif");
    std::filesystem::resize_file(dir / "cut.tif", std::filesystem::file_size(dir / "stack.tif") * 2 / 5);
    const auto message = messageOf<FormatError>([&] { openDataset(dir / "cut.tif"); });
    EXPECT_TRUE(contains(message, "cut.tif")) << message;
    EXPECT_EQ(message.find("sinogram"), std::string::npos) << message;

    TIFF* t = TIFFOpen((dir / "mixed.tif").c_str(), "w");
    ASSERT_NE(t, nullptr);
    TIFFClose(t);
    writeTiff(dir / "mixed.tif", 6, 4, {pages[0], pages[1]}, SampleType::UInt16);
    // Append a float page with libtiff's append mode.
    t = TIFFOpen((dir / "mixed.tif").c_str(), "a");
    ASSERT_NE(t, nullptr);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, 6);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, 4);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 32);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 4);
    std::vector<float> row(6, 1.0f);
    for (int y = 0; y < 4; ++y) TIFFWriteScanline(t, row.data(), y, 0);
    TIFFWriteDirectory(t);
    TIFFClose(t);
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "mixed.tif"); }),
                         "page 2 is 6 x 4 float32; expected 6 x 4 uint16 like page 0"));
}

TEST(HostileInput, TiffDeclaringAWidthBeyondIntIsRefusedByName) {
    TempDir dir;
    // A hand-made little-endian TIFF: one IFD, width 2.2e9 x 1 uint16.
    std::string bytes("II*\0\x08\0\0\0", 8);
    const auto put16 = [&](std::uint16_t v) { bytes.append(reinterpret_cast<const char*>(&v), 2); };
    const auto put32 = [&](std::uint32_t v) { bytes.append(reinterpret_cast<const char*>(&v), 4); };
    const std::uint32_t width = 2200000000u;
    const std::vector<std::array<std::uint32_t, 3>> entries{
        {256, 4, width}, {257, 4, 1}, {258, 3, 16}, {259, 3, 1}, {262, 3, 1},
        {273, 4, 200},   {277, 3, 1}, {278, 4, 1},  {279, 4, 16}};
    put16(static_cast<std::uint16_t>(entries.size()));
    for (const auto& [tag, type, value] : entries) {
        put16(static_cast<std::uint16_t>(tag));
        put16(static_cast<std::uint16_t>(type));
        put32(1);
        if (type == 3) {
            put16(static_cast<std::uint16_t>(value));
            put16(0);
        } else {
            put32(value);
        }
    }
    put32(0);
    bytes.resize(216, '\0');
    writeText(dir / "wide.tif", bytes);
    const auto message = messageOf<FormatError>([&] { openDataset(dir / "wide.tif"); });
    EXPECT_TRUE(contains(message, "wide.tif")) << message;
    EXPECT_EQ(message.find("-2094967296"), std::string::npos) << "a wrapped, negative size: " << message;
}

#endif // TOMO_WITH_TIFF

#if TOMO_WITH_HDF5

TEST(HostileInput, DeclaredSizesTheFileCannotHoldFailFastByName) {
    TempDir dir;
    // 100000^3 uint16 declared in a file of a few kilobytes, never written.
    for (const bool chunked : {false, true}) {
        const auto file = dir / (chunked ? "chunked.h5" : "contiguous.h5");
        test::H5Builder(file).unwrittenDataset("/exchange/data", {100000, 100000, 100000}, chunked);
        const auto message = messageOf<FormatError>([&] { openDataset(file); });
        EXPECT_TRUE(contains(message, "/exchange/data in " + file.string())) << message;
        EXPECT_TRUE(contains(message, "(100000, 100000, 100000)"));
        EXPECT_TRUE(contains(message, "never written"));
    }
    // A truncated copy: damaged content, not a missing file.
    std::vector<std::uint16_t> values(40 * 64 * 64, 1000);
    test::H5Builder(dir / "whole.h5").dataset("/exchange/data", {40, 64, 64}, values);
    std::filesystem::copy_file(dir / "whole.h5", dir / "cut.h5");
    std::filesystem::resize_file(dir / "cut.h5", std::filesystem::file_size(dir / "whole.h5") - 4096);
    const auto message = messageOf<FormatError>([&] { openDataset(dir / "cut.h5"); });
    EXPECT_TRUE(contains(message, "cut.h5: not a readable HDF5 file")) << message;
}

TEST(HostileInput, VirtualDatasetWithAMissingSourceIsRefused) {
    TempDir dir;
    test::H5Builder(dir / "vds.nxs")
        .virtualDataset("/entry/instrument/detector/data", {4, 2, 3}, "frames_0001.h5", "/data");
    const auto message = messageOf<FormatError>([&] { openDataset(dir / "vds.nxs"); });
    EXPECT_TRUE(contains(message, "virtual dataset whose source file 'frames_0001.h5' is missing")) << message;
    // With the source beside it, it reads.
    test::H5Builder(dir / "frames_0001.h5").dataset("/data", {4, 2, 3}, stack<float>(4, 2, 3));
    auto reader = openDataset(dir / "vds.nxs");
    EXPECT_EQ(sinograms(*reader, 1, 1)[2 * 3 + 1], sample(2, 1, 1));
}

TEST(HostileInput, AnglesInRadiansWithoutUnitsAreAmbiguous) {
    TempDir dir;
    const int A = 6;
    std::vector<double> radians;
    for (int a = 0; a < A; ++a) radians.push_back(a * std::numbers::pi / A);
    test::H5Builder(dir / "rad.h5")
        .dataset("/exchange/data", {hsize_t(A), 2, 3}, stack<std::uint16_t>(A, 2, 3))
        .dataset("/exchange/theta", {hsize_t(A)}, radians);
    const auto message = messageOf<FormatError>([&] { openDataset(dir / "rad.h5"); });
    EXPECT_TRUE(contains(message, "/exchange/theta in " + (dir / "rad.h5").string())) << message;
    EXPECT_TRUE(contains(message, "look like radians"));
    EXPECT_TRUE(contains(message, "--angle-units"));
    OpenOptions options;
    options.angleUnits = AngleUnits::Radians;
    EXPECT_NEAR(openDataset(dir / "rad.h5", options)->info().angles[3], std::numbers::pi / 2, 1e-12);
    options.angleUnits = AngleUnits::Degrees; // the user insists: a 2.6-degree scan
    EXPECT_NEAR(openDataset(dir / "rad.h5", options)->info().angles[3], std::numbers::pi / 2 * kDeg, 1e-12);

    // All angles equal cannot be a scan, whatever the units.
    test::H5Builder(dir / "same.h5")
        .dataset("/exchange/data", {hsize_t(A), 2, 3}, stack<std::uint16_t>(A, 2, 3))
        .dataset("/exchange/theta", {hsize_t(A)}, std::vector<double>(A, 90.0));
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "same.h5"); }), "all 6 angles are 90 degrees"));
    // An angles file is checked the same way.
    writeText(dir / "angles.txt", "0\n0.5\n1\n1.5\n2\n2.5\n");
    options = {};
    options.anglesFile = dir / "angles.txt";
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "same.h5", options); }), "look like radians"));
}

TEST(HostileInput, FanAndConeBeamFilesAreRefusedNamingTheGeometry) {
    TempDir dir;
    const std::vector<double> angles{0, 45, 90, 135};
    test::H5Builder(dir / "cone.h5")
        .dataset("/sinogram", {4, 3}, stack<float>(1, 4, 3))
        .dataset("/angles_deg", {4}, angles)
        .attribute("/", "geometryType", "Cone");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "cone.h5"); }),
                         "declares a Cone-beam geometry (attribute geometryType of /)"));
    test::H5Builder(dir / "fan.h5")
        .dataset("/sinogram", {4, 3}, stack<float>(1, 4, 3))
        .dataset("/angles_deg", {4}, angles)
        .numberAttribute("/", "distanceSourceOrigin", 410.66);
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "fan.h5"); }), "distanceSourceOrigin = 410.66"));
    test::H5Builder(dir / "parallel.h5")
        .dataset("/sinogram", {4, 3}, stack<float>(1, 4, 3))
        .dataset("/angles_deg", {4}, angles)
        .attribute("/", "geometryType", "parallel");
    EXPECT_EQ(openDataset(dir / "parallel.h5")->info().projections, 4);

    // NeXus: a lab source 0.4 m away diverges, a synchrotron 30 m away does not.
    for (const double metres : {0.4, 30.0}) {
        const auto file = dir / ("nx" + std::to_string(static_cast<int>(metres)) + ".nxs");
        test::H5Builder(file)
            .dataset("/entry/instrument/detector/data", {4, 2, 3}, stack<float>(4, 2, 3))
            .dataset("/entry/instrument/source/distance", {1}, std::vector<double>{-metres * 1000})
            .attribute("/entry/instrument/source/distance", "units", "mm");
        if (metres < 5) EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(file); }), "a divergent beam"));
        else EXPECT_EQ(openDataset(file)->info().projections, 4);
    }
}

/// Puts MATLAB's 128-byte text header into the user block of an HDF5 file
/// (as MATLAB does for -v7.3 files).
void addMatlabHeader(const std::filesystem::path& file) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    std::string header = "MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 00:00:00 2024 HDF5 schema 1.00 .";
    header.resize(128, ' ');
    f.write(header.data(), static_cast<std::streamsize>(header.size()));
}

TEST(MatlabReader, NamedVariablesInMatlabOrder) {
    TempDir dir;
    const int A = 6, R = 2, C = 5;
    // MATLAB [angles, rows, columns] is stored reversed: HDF5 [column][row][angle].
    std::vector<float> projections, sinogram;
    for (int c = 0; c < C; ++c)
        for (int r = 0; r < R; ++r)
            for (int a = 0; a < A; ++a) projections.push_back(sample(a, r, c));
    for (int c = 0; c < C; ++c)
        for (int a = 0; a < A; ++a) sinogram.push_back(sample(a, 0, c));
    std::vector<double> angles;
    for (int a = 0; a < A; ++a) angles.push_back(30.0 * a);
    test::H5Builder(dir / "scan.mat", 512)
        .dataset("/proj", {hsize_t(C), hsize_t(R), hsize_t(A)}, projections)
        .dataset("/sino", {hsize_t(C), hsize_t(A)}, sinogram)
        .dataset("/theta", {1, hsize_t(A)}, angles)
        .attribute("/proj", "MATLAB_class", "single");
    addMatlabHeader(dir / "scan.mat");
    EXPECT_EQ(detectFormat(dir / "scan.mat"), DatasetFormat::Matlab);

    // No variable named: the message lists them.
    const auto message = messageOf<InvalidArgument>([&] { openDataset(dir / "scan.mat"); });
    EXPECT_TRUE(contains(message, "name the variable")) << message;
    EXPECT_TRUE(contains(message, "proj, sino, theta"));

    OpenOptions options;
    options.variable = "proj,theta";
    auto reader = openDataset(dir / "scan.mat", options);
    const auto& info = reader->info();
    EXPECT_EQ(info.format, DatasetFormat::Matlab);
    EXPECT_EQ(info.projections, A);
    EXPECT_EQ(info.rows, R);
    EXPECT_EQ(info.columns, C);
    EXPECT_NEAR(info.angles[5], 150 * kDeg, 1e-12);
    const auto out = sinograms(*reader, 1, 1);
    for (int a = 0; a < A; ++a)
        for (int c = 0; c < C; ++c) ASSERT_EQ(out[a * C + c], sample(a, 1, c));

    options.variable = "sino";
    options.logCorrected = true;
    reader = openDataset(dir / "scan.mat", options);
    EXPECT_EQ(reader->info().rows, 1);
    EXPECT_TRUE(reader->info().logCorrected);
    const auto row = sinograms(*reader, 0, 1);
    for (int a = 0; a < A; ++a)
        for (int c = 0; c < C; ++c) ASSERT_EQ(row[a * C + c], sample(a, 0, c));

    options.variable = "nothing";
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "scan.mat", options); }), "no variable 'nothing'"));
    // A variable for a file that is not MATLAB's.
    writeDXchange(dir / "dx.h5");
    options.variable = "proj";
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { openDataset(dir / "dx.h5", options); }), "not a MATLAB v7.3 file"));
}

TEST(FlatGroups, NXtomoFlatsBeforeAndAfterByImageKey) {
    TempDir dir;
    // dark, flat, flat, proj x4, flat, dark, flat, proj x2, flat: three groups.
    const std::vector<std::int32_t> keys{2, 1, 1, 0, 0, 0, 0, 1, 2, 1, 0, 0, 1};
    const int F = static_cast<int>(keys.size()), R = 2, C = 3;
    test::H5Builder(dir / "nx.nxs")
        .dataset("/entry/instrument/detector/data", {hsize_t(F), 2, 3}, stack<float>(F, R, C))
        .dataset("/entry/instrument/detector/image_key", {hsize_t(F)}, keys);
    auto reader = openDataset(dir / "nx.nxs");
    const auto& info = reader->info();
    EXPECT_EQ(info.projections, 6);
    EXPECT_EQ(info.flats, 5);
    EXPECT_EQ(info.darks, 2);
    // Before projection 0; between 3 and 4 (the dark between the flats does
    // not split the group); after the last.
    EXPECT_EQ(info.flatPositions, (std::vector<double>{-1.0, 3.5, 6.0}));
    std::vector<float> group(C), all(C);
    reader->readFlatGroup(1, 1, 1, group);
    EXPECT_EQ(group[2], (sample(7, 1, 2) + sample(9, 1, 2)) / 2);
    reader->readFlatGroup(2, 1, 1, group);
    EXPECT_EQ(group[2], sample(12, 1, 2));
    ASSERT_TRUE(reader->readMeanFlat(1, 1, all));
    EXPECT_FLOAT_EQ(all[2], (sample(1, 1, 2) + sample(2, 1, 2) + sample(7, 1, 2) + sample(9, 1, 2) + sample(12, 1, 2)) / 5);
    EXPECT_THROW(reader->readFlatGroup(3, 1, 1, group), InvalidArgument);
}

TEST(FlatGroups, DXchangeFlatsBeforeAndAfter) {
    TempDir dir;
    const int A = 4, R = 2, C = 3;
    test::H5Builder(dir / "dx.h5")
        .dataset("/exchange/data", {hsize_t(A), 2, 3}, stack<std::uint16_t>(A, R, C))
        .dataset("/exchange/data_white_pre", {2, 2, 3}, std::vector<float>(12, 100.0f))
        .dataset("/exchange/data_white_post", {1, 2, 3}, std::vector<float>(6, 130.0f))
        .dataset("/exchange/data_dark", {1, 2, 3}, std::vector<float>(6, 4.0f));
    auto reader = openDataset(dir / "dx.h5");
    EXPECT_EQ(reader->info().flats, 3);
    EXPECT_EQ(reader->info().flatPositions, (std::vector<double>{-1.0, double(A)}));
    std::vector<float> out(C);
    reader->readFlatGroup(1, 0, 1, out);
    EXPECT_EQ(out[1], 130.0f);
    ASSERT_TRUE(reader->readMeanFlat(0, 1, out));
    EXPECT_EQ(out[1], 110.0f);
    // One data_white: one group whose time is not known.
    writeDXchange(dir / "plain.h5");
    EXPECT_EQ(openDataset(dir / "plain.h5")->info().flatPositions, (std::vector<double>{-1.0}));
}

#endif // TOMO_WITH_HDF5

// ---------------------------------------------------------------- phantom scan

#if TOMO_WITH_HDF5

TEST(PhantomDXchange, NoiselessScanDecodesToTheExactProjections) {
    TempDir dir;
    PhantomSpec spec;
    spec.bins = 32;
    spec.rows = 3;
    spec.attenuationScale = 0.02;
    const auto angles = uniformAngles(8);
    ScanSimulation sim;
    sim.poissonNoise = false;
    sim.flats = 2;
    sim.darks = 1;
    writePhantomDXchange(dir / "ph.h5", spec, angles, sim);
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1); // no temporary left

    auto reader = openDataset(dir / "ph.h5");
    const auto& info = reader->info();
    EXPECT_EQ(info.format, DatasetFormat::DXchange);
    EXPECT_EQ(info.sampleType, SampleType::UInt16);
    EXPECT_EQ(info.projections, 8);
    EXPECT_EQ(info.rows, 3);
    EXPECT_EQ(info.columns, 32);
    EXPECT_EQ(info.flats, 2);
    EXPECT_EQ(info.darks, 1);
    for (std::size_t i = 0; i < angles.size(); ++i) EXPECT_NEAR(info.angles[i], angles[i], 1e-12);

    const ImageStack exact = projectPhantom(spec, angles);
    const auto raw = sinograms(*reader, 0, 3);
    for (std::size_t i = 0; i < raw.size(); ++i)
        ASSERT_EQ(raw[i], std::round(sim.flatCounts * std::exp(-static_cast<double>(exact.data[i])) + sim.darkCounts));
    const ImageStack p = loadSinograms(*reader, 0, 3);
    double worst = 0.0;
    for (std::size_t i = 0; i < p.data.size(); ++i) worst = std::max(worst, std::abs(double(p.data[i] - exact.data[i])));
    EXPECT_LT(worst, 1e-3); // rounding counts of >= 100 costs < 0.5/100 relative... far less at 20000
    EXPECT_GT(*std::max_element(exact.data.begin(), exact.data.end()), 0.1f); // the phantom is in the scan
}

TEST(PhantomDXchange, NoiseAndOverflow) {
    TempDir dir;
    PhantomSpec spec;
    spec.bins = 16;
    const auto angles = uniformAngles(4);
    ScanSimulation sim;
    sim.flats = 3;
    writePhantomDXchange(dir / "noisy.h5", spec, angles, sim);
    auto reader = openDataset(dir / "noisy.h5");
    std::vector<float> flat(16);
    ASSERT_TRUE(reader->readMeanFlat(0, 1, flat));
    const double mean = std::accumulate(flat.begin(), flat.end(), 0.0) / flat.size();
    EXPECT_NEAR(mean, sim.flatCounts + sim.darkCounts, 5 * std::sqrt(20100.0 / 48)); // Poisson, 48 samples
    EXPECT_FALSE(std::all_of(flat.begin(), flat.end(), [&](float v) { return v == flat[0]; }));

    sim.flatCounts = 65000;
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { writePhantomDXchange(dir / "over.h5", spec, angles, sim); }),
                "65535"));
    EXPECT_FALSE(std::filesystem::exists(dir / "over.h5"));
}

#else

TEST(PhantomDXchange, NeedsHdf5Support) {
    TempDir dir;
    PhantomSpec spec;
    spec.bins = 8;
    const auto message = messageOf<InvalidArgument>(
        [&] { writePhantomDXchange(dir / "ph.h5", spec, std::vector<double>{0.0, 1.0}, ScanSimulation{}); });
    EXPECT_TRUE(contains(message, "HDF5 support"));
    EXPECT_FALSE(std::filesystem::exists(dir / "ph.h5"));
}

#endif // TOMO_WITH_HDF5

} // namespace
} // namespace tomo
