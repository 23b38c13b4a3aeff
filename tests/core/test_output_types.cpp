// Output types of the volume writers (float32, float16, uint16/uint8 with a
// slope and offset): rounding, clipping and its counts, the stored samples
// and attributes read independently with HDF5 and libtiff, readVolume
// restoring the values, one slice per HDF5 chunk, TIFF folders written by
// several threads; write speed printed as MEASURED lines.
#include "io_test_helpers.h"
#include "test_support.h"
#include "tomo/error.h"
#include "tomo/volume_io.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <thread>

#if TOMO_WITH_HDF5
#include <hdf5.h>
#endif
#if TOMO_WITH_TIFF
#include <tiffio.h>
#endif

namespace tomo {
namespace {

using test::contains;
using test::messageOf;
using test::TempDir;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Values spread over [-1, 3) without a pattern a format could compress.
ImageStack spreadVolume(int W, int H, int S) {
    ImageStack v(W, H, S);
    std::mt19937 random(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 3.0f);
    for (float& x : v.data) x = uniform(random);
    v.data[0] = -1.0f; // the range's ends are values too
    v.data[1] = 2.9999f;
    v.data[2] = 0.0f;
    v.data[3] = 1e-6f; // float16: subnormal
    return v;
}

void writeWhole(const std::filesystem::path& target, const ImageStack& v, const WriteOptions& options,
                ClippedValues* clipped = nullptr) {
    auto writer = createVolumeWriter(target, v.width, v.height, v.depth, options);
    writer->writeSlices(0, v.depth, v.data);
    writer->commit();
    if (clipped) *clipped = writer->clipped();
}

WriteOptions optionsFor(OutputType type, float rangeMin = -1.0f, float rangeMax = 3.0f) {
    WriteOptions o;
    o.type = type;
    o.rangeMin = rangeMin;
    o.rangeMax = rangeMax;
    o.attributes = {{"strategy", "cpu-reference"}};
    return o;
}

/// How far a value may come back: exact for float32, half a unit of the
/// last place for float16 (2^-11 relative, 2^-25 among subnormals), half a
/// step for integers (plus the float rounding of the result).
double tolerance(OutputType type, float v, const Quantization& q) {
    switch (type) {
    case OutputType::Float32: return 0.0;
    case OutputType::Float16: return std::max(std::abs(v) * 0x1p-11, 0x1p-25);
    default: return 0.5 * q.slope + 0x1p-24 * std::max(1.0f, std::abs(v));
    }
}

void expectRestored(const ImageStack& back, const ImageStack& v, OutputType type) {
    ASSERT_EQ(back.data.size(), v.data.size());
    const Quantization q = quantizationFor(type, -1.0f, 3.0f);
    double worst = 0.0;
    for (std::size_t i = 0; i < v.data.size(); ++i) {
        const double error = std::abs(static_cast<double>(back.data[i]) - v.data[i]);
        ASSERT_LE(error, tolerance(type, v.data[i], q)) << outputTypeName(type) << " value " << i << ": " << v.data[i]
                                                         << " came back as " << back.data[i];
        worst = std::max(worst, error);
    }
    if (type == OutputType::UInt8) {
        EXPECT_GT(worst, 0.4 * q.slope); // the bound is tight, not loose
    }
}

TEST(OutputTypes, NamesBytesAndParsing) {
    for (OutputType t : {OutputType::Float32, OutputType::Float16, OutputType::UInt16, OutputType::UInt8})
        EXPECT_EQ(parseOutputType(outputTypeName(t), "type"), t);
    EXPECT_EQ(outputTypeBytes(OutputType::Float16), 2u);
    EXPECT_EQ(outputTypeBytes(OutputType::UInt8), 1u);
    EXPECT_TRUE(isQuantized(OutputType::UInt16));
    EXPECT_FALSE(isQuantized(OutputType::Float16));
    const auto message = messageOf<InvalidArgument>([] { parseOutputType("int16", "--output-type"); });
    EXPECT_TRUE(contains(message, "--output-type 'int16': expected float32, float16, uint16 or uint8")) << message;
}

TEST(OutputTypes, QuantizationOfARange) {
    const Quantization q16 = quantizationFor(OutputType::UInt16, -1.0f, 3.0f);
    EXPECT_EQ(q16.offset, -1.0f);
    EXPECT_EQ(q16.slope, static_cast<float>(4.0 / 65535.0));
    EXPECT_EQ(quantizationFor(OutputType::UInt8, 0.0f, 255.0f).slope, 1.0f);
    EXPECT_EQ(quantizationFor(OutputType::Float16, 5.0f, 1.0f).slope, 1.0f); // floats ignore the range
    for (const auto& range : {std::pair{1.0f, 1.0f}, {2.0f, 1.0f}, {0.0f, kInf}, {kNaN, 1.0f}, {0.0f, 1e-40f}}) {
        const auto message =
            messageOf<InvalidArgument>([&] { quantizationFor(OutputType::UInt16, range.first, range.second); });
        EXPECT_TRUE(contains(message, "for uint16: expected finite numbers with min < max")) << message;
    }
    TempDir dir;
    WriteOptions bad = optionsFor(OutputType::UInt8, 2.0f, 2.0f);
    const auto message = messageOf<InvalidArgument>([&] { createVolumeWriter(dir / "v.h5", 4, 4, 1, bad); });
    EXPECT_TRUE(contains(message, "v.h5: value range [2, 2] for uint8")) << message;
    bad = optionsFor(OutputType::Float16);
    bad.threads = -1;
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { createVolumeWriter(dir / "v", 4, 4, 1, bad); }),
                         "writer threads -1"));
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

#if TOMO_WITH_HDF5

/// The stored samples of /volume, as the file holds them (no conversion),
/// and the dataset's type class and size.
struct StoredSamples {
    std::vector<std::uint16_t> words; ///< 16-bit samples (float16, uint16)
    H5T_class_t typeClass = H5T_NO_CLASS;
    std::size_t typeSize = 0;
};

StoredSamples readStored(const std::filesystem::path& path) {
    StoredSamples s;
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t set = H5Dopen2(file, "/volume", H5P_DEFAULT);
    const hid_t type = H5Dget_type(set);
    s.typeClass = H5Tget_class(type);
    s.typeSize = H5Tget_size(type);
    const hid_t space = H5Dget_space(set);
    s.words.resize(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    if (s.typeSize == 2) {
        EXPECT_GE(H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.words.data()), 0);
    }
    H5Sclose(space);
    H5Tclose(type);
    H5Dclose(set);
    H5Fclose(file);
    return s;
}

double floatAttribute(const std::filesystem::path& path, const char* name) {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t set = H5Dopen2(file, "/volume", H5P_DEFAULT);
    const hid_t attribute = H5Aopen(set, name, H5P_DEFAULT);
    const hid_t type = H5Aget_type(attribute);
    EXPECT_EQ(H5Tget_class(type), H5T_FLOAT) << name;
    EXPECT_EQ(H5Tget_size(type), 4u) << name << ": float32 like the values (CF: unpacked to float32)";
    double value = NAN;
    H5Aread(attribute, H5T_NATIVE_DOUBLE, &value);
    H5Tclose(type);
    H5Aclose(attribute);
    H5Dclose(set);
    H5Fclose(file);
    return value;
}

TEST(Float16, RoundsToNearestEvenAndClipsBeyondTheHalfRange) {
    TempDir dir;
    // (value, its half): ties go to the even neighbour; 65504 is the largest
    // half, and 65519.99 still rounds to it; 65520 and beyond are clipped.
    const std::vector<std::pair<float, std::uint16_t>> cases = {
        {1.0f, 0x3c00},
        {1.0f + 0x1p-11f, 0x3c00},        // tie between 1 and 1 + 2^-10: even (1)
        {1.0f + 3 * 0x1p-11f, 0x3c02},    // tie between 1 + 2^-10 and 1 + 2^-9: even
        {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01}, // just past the tie: up
        {-2.5f, 0xc100},
        {0x1p-24f, 0x0001},               // the smallest subnormal
        {0x1p-25f, 0x0000},               // tie between 0 and it: even (0)
        {3 * 0x1p-25f, 0x0002},           // tie between 1 and 2 subnormal steps: even
        {0x1p-14f, 0x0400},               // the smallest normal
        {0x1p-14f - 0x1p-26f, 0x0400},    // rounds up into the normals
        {65504.0f, 0x7bff},
        {65519.99f, 0x7bff},
        {65520.0f, 0x7bff},               // clipped (its nearest half is inf)
        {-1e9f, 0xfbff},                  // clipped
        {kInf, 0x7c00},
        {-kInf, 0xfc00},
        {-0.0f, 0x8000},
    };
    ImageStack v(static_cast<int>(cases.size()) + 1, 1, 1);
    for (std::size_t i = 0; i < cases.size(); ++i) v.data[i] = cases[i].first;
    v.data.back() = kNaN;
    ClippedValues clipped;
    writeWhole(dir / "half.h5", v, optionsFor(OutputType::Float16), &clipped);
    EXPECT_EQ(clipped.above, 1u);
    EXPECT_EQ(clipped.below, 1u);
    EXPECT_EQ(clipped.nan, 0u); // NaN is kept

    const StoredSamples stored = readStored(dir / "half.h5");
    EXPECT_EQ(stored.typeClass, H5T_FLOAT);
    EXPECT_EQ(stored.typeSize, 2u);
    for (std::size_t i = 0; i < cases.size(); ++i)
        EXPECT_EQ(stored.words[i], cases[i].second) << "value " << cases[i].first;
    EXPECT_EQ(stored.words.back() & 0x7c00u, 0x7c00u); // NaN: exponent all ones,
    EXPECT_NE(stored.words.back() & 0x03ffu, 0u);      // fraction not zero

    const ImageStack back = readVolume(dir / "half.h5");
    EXPECT_EQ(back.data[1], 1.0f);
    EXPECT_EQ(back.data[2], 1.0f + 0x1p-9f);
    EXPECT_EQ(back.data[5], 0x1p-24f);
    EXPECT_EQ(back.data[12], 65504.0f);
    EXPECT_EQ(back.data[13], -65504.0f);
    EXPECT_EQ(back.data[14], kInf);
    EXPECT_TRUE(std::signbit(back.data[16]));
    EXPECT_TRUE(std::isnan(back.data.back()));
}

TEST(Float16, TheFileTypeIsIeeeHalfAsH5pyDefinesIt) {
    TempDir dir;
    writeWhole(dir / "half.h5", spreadVolume(3, 2, 2), optionsFor(OutputType::Float16));
    const hid_t file = H5Fopen((dir / "half.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t set = H5Dopen2(file, "/volume", H5P_DEFAULT);
    const hid_t type = H5Dget_type(set);
    std::size_t sign = 0, exponentPos = 0, exponentSize = 0, fractionPos = 0, fractionSize = 0;
    H5Tget_fields(type, &sign, &exponentPos, &exponentSize, &fractionPos, &fractionSize);
    EXPECT_EQ(sign, 15u);
    EXPECT_EQ(exponentPos, 10u);
    EXPECT_EQ(exponentSize, 5u);
    EXPECT_EQ(fractionPos, 0u);
    EXPECT_EQ(fractionSize, 10u);
    EXPECT_EQ(H5Tget_ebias(type), 15u);
    EXPECT_EQ(H5Tget_order(type), H5T_ORDER_LE);
    EXPECT_EQ(H5Tget_precision(type), 16u);
    H5Tclose(type);
    H5Dclose(set);
    H5Fclose(file);
}

#if defined(__FLT16_MAX__)
TEST(Float16, EqualsTheCompilersConversionOnAMillionValues) {
    // _Float16 (GCC on x86-64) converts with the IEEE rounding the writer
    // must match; every binade from the subnormals to the overflow.
    TempDir dir;
    std::mt19937 random(11);
    std::uniform_int_distribution<std::uint32_t> bits(0x30000000u, 0x47ffffffu); // 2^-31 .. 131072
    ImageStack v(1000, 1000, 1);
    for (float& x : v.data) x = std::bit_cast<float>(static_cast<std::uint32_t>(bits(random) | (random() & 1u) << 31));
    writeWhole(dir / "half.h5", v, optionsFor(OutputType::Float16));
    const StoredSamples stored = readStored(dir / "half.h5");
    std::size_t clipped = 0;
    for (std::size_t i = 0; i < v.data.size(); ++i) {
        std::uint16_t expected = std::bit_cast<std::uint16_t>(static_cast<_Float16>(v.data[i]));
        if ((expected & 0x7fffu) == 0x7c00u) {
            expected = static_cast<std::uint16_t>((expected & 0x8000u) | 0x7bffu);
            ++clipped;
        }
        ASSERT_EQ(stored.words[i], expected) << "value " << v.data[i];
    }
    EXPECT_GT(clipped, 1000u); // the overflow was exercised
    const ImageStack back = readVolume(dir / "half.h5");
    for (std::size_t i = 0; i < v.data.size(); ++i)
        ASSERT_EQ(back.data[i], static_cast<float>(std::bit_cast<_Float16>(stored.words[i])));
}
#endif

TEST(OutputTypes, Hdf5IntegersCarryScaleFactorAndAddOffset) {
    TempDir dir;
    const ImageStack v = spreadVolume(9, 7, 4);
    for (OutputType type : {OutputType::UInt16, OutputType::UInt8}) {
        const auto path = dir / (std::string(outputTypeName(type)) + ".h5");
        writeWhole(path, v, optionsFor(type));
        const Quantization q = quantizationFor(type, -1.0f, 3.0f);
        const double scale = floatAttribute(path, "scale_factor"), offset = floatAttribute(path, "add_offset");
        EXPECT_EQ(scale, q.slope);
        EXPECT_EQ(offset, -1.0);
        // The stored integers, read as HDF5 converts them, times the
        // attributes: the values within half a step.
        const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        const hid_t set = H5Dopen2(file, "/volume", H5P_DEFAULT);
        const hid_t fileType = H5Dget_type(set);
        EXPECT_EQ(H5Tget_class(fileType), H5T_INTEGER);
        EXPECT_EQ(H5Tget_sign(fileType), H5T_SGN_NONE);
        EXPECT_EQ(H5Tget_size(fileType), outputTypeBytes(type));
        std::vector<double> stored(v.data.size());
        EXPECT_GE(H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, stored.data()), 0);
        H5Tclose(fileType);
        H5Dclose(set);
        H5Fclose(file);
        for (std::size_t i = 0; i < v.data.size(); ++i)
            ASSERT_LE(std::abs(stored[i] * scale + offset - v.data[i]), 0.5 * scale * (1 + 1e-6)) << i;
    }
}

TEST(OutputTypes, Hdf5ViewerReadsOneChunkPerSlice) {
    TempDir dir;
    const ImageStack v = spreadVolume(6, 5, 4);
    for (OutputType type : {OutputType::Float32, OutputType::Float16, OutputType::UInt8}) {
        const auto path = dir / (std::string(outputTypeName(type)) + ".h5");
        writeWhole(path, v, optionsFor(type));
        const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        const hid_t set = H5Dopen2(file, "/volume", H5P_DEFAULT);
        const hid_t create = H5Dget_create_plist(set);
        hsize_t chunk[3] = {};
        ASSERT_EQ(H5Pget_chunk(create, 3, chunk), 3);
        EXPECT_EQ(chunk[0], 1u);
        EXPECT_EQ(chunk[1], 5u);
        EXPECT_EQ(chunk[2], 6u);
        const hid_t space = H5Dget_space(set);
        hsize_t chunks = 0;
        H5Dget_num_chunks(set, space, &chunks);
        EXPECT_EQ(chunks, 4u);
        // Chunk z, read raw, is slice z's samples: a viewer reading slice z
        // reads that one chunk.
        const hid_t fileType = H5Dget_type(set);
        const std::size_t bytes = v.imageSize() * H5Tget_size(fileType);
        for (hsize_t z = 0; z < 4; ++z) {
            const hsize_t offset[3] = {z, 0, 0};
            hsize_t chunkBytes = 0;
            H5Dget_chunk_storage_size(set, offset, &chunkBytes);
            EXPECT_EQ(chunkBytes, bytes);
            std::vector<unsigned char> raw(bytes), slice(bytes);
            std::uint32_t filters = 0;
            ASSERT_GE(H5Dread_chunk(set, H5P_DEFAULT, offset, &filters, raw.data()), 0);
            const hsize_t start[3] = {z, 0, 0}, count[3] = {1, 5, 6};
            const hid_t fileSpace = H5Dget_space(set);
            H5Sselect_hyperslab(fileSpace, H5S_SELECT_SET, start, nullptr, count, nullptr);
            const hid_t memSpace = H5Screate_simple(3, count, nullptr);
            H5Dread(set, fileType, memSpace, fileSpace, H5P_DEFAULT, slice.data());
            EXPECT_EQ(raw, slice) << outputTypeName(type) << " slice " << z;
            H5Sclose(memSpace);
            H5Sclose(fileSpace);
        }
        H5Tclose(fileType);
        H5Sclose(space);
        H5Pclose(create);
        H5Dclose(set);
        H5Fclose(file);
    }
}

#endif // TOMO_WITH_HDF5

#if TOMO_WITH_TIFF

nlohmann::json descriptionOf(const std::filesystem::path& path) {
    TIFF* t = TIFFOpen(path.c_str(), "r");
    char* text = nullptr;
    nlohmann::json j;
    if (t && TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &text)) j = nlohmann::json::parse(text);
    if (t) TIFFClose(t);
    return j;
}

std::uint16_t bitsPerSample(const std::filesystem::path& path, std::uint16_t* format) {
    TIFF* t = TIFFOpen(path.c_str(), "r");
    std::uint16_t bits = 0;
    TIFFGetField(t, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetField(t, TIFFTAG_SAMPLEFORMAT, format);
    TIFFClose(t);
    return bits;
}

TEST(OutputTypes, TiffPagesSayTheirTypeScaleAndOffset) {
    TempDir dir;
    const ImageStack v = spreadVolume(5, 3, 2);
    for (OutputType type : {OutputType::Float32, OutputType::Float16, OutputType::UInt16, OutputType::UInt8}) {
        const auto folder = dir / outputTypeName(type);
        writeWhole(folder, v, optionsFor(type));
        const auto page = folder / "slice_00001.tif";
        std::uint16_t format = 0;
        EXPECT_EQ(bitsPerSample(page, &format), 8 * outputTypeBytes(type));
        EXPECT_EQ(format, isQuantized(type) ? SAMPLEFORMAT_UINT : SAMPLEFORMAT_IEEEFP);
        const nlohmann::json d = descriptionOf(page);
        EXPECT_EQ(d["output_type"], outputTypeName(type));
        EXPECT_EQ(d["strategy"], "cpu-reference");
        EXPECT_EQ(d.contains("scale_factor"), isQuantized(type));
        if (isQuantized(type)) {
            const Quantization q = quantizationFor(type, -1.0f, 3.0f);
            EXPECT_EQ(d["scale_factor"].get<double>(), q.slope);
            EXPECT_EQ(d["add_offset"].get<double>(), -1.0);
        }
    }
}

TEST(OutputTypes, EarlierSixteenBitTiffsAreRestoredFromTheirRangeLines) {
    // Versions before the JSON description wrote "bits=", "range_min=",
    // "range_max=" lines and stored round((v - min) / (max - min) x 65535).
    TempDir dir;
    TIFF* t = TIFFOpen((dir / "old.tif").c_str(), "w");
    ASSERT_NE(t, nullptr);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, 4);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, 1);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 16);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, "bits=16\nrange_min=-1\nrange_max=1\nstrategy=alu\n");
    std::uint16_t row[4] = {0, 65535, 32768, 16384};
    ASSERT_GE(TIFFWriteScanline(t, row, 0, 0), 0);
    TIFFClose(t);
    const ImageStack back = readVolume(dir / "old.tif");
    const std::vector<double> expected = {-1.0, 1.0, 2.0 * 32768 / 65535 - 1, 2.0 * 16384 / 65535 - 1};
    for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(back.data[i], expected[i], 1e-7) << i;
}

TEST(OutputTypes, TiffDescriptionWithABadScaleIsAFormatError) {
    TempDir dir;
    TIFF* t = TIFFOpen((dir / "bad.tif").c_str(), "w");
    ASSERT_NE(t, nullptr);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, 2);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, 1);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, R"({"scale_factor": "tiny", "add_offset": 1})");
    std::uint8_t row[2] = {1, 2};
    ASSERT_GE(TIFFWriteScanline(t, row, 0, 0), 0);
    TIFFClose(t);
    const auto message = messageOf<FormatError>([&] { readVolume(dir / "bad.tif"); });
    EXPECT_TRUE(contains(message, "bad.tif: the ImageDescription's scale_factor is \"tiny\"; expected a finite number"))
        << message;
}

TEST(TiffStack, ParallelWritingEqualsSequential) {
    TempDir dir;
    const ImageStack v = spreadVolume(33, 17, 23);
    for (OutputType type : {OutputType::Float32, OutputType::UInt16}) {
        WriteOptions one = optionsFor(type), four = optionsFor(type);
        one.threads = 1;
        four.threads = 4;
        const auto sequential = dir / ("one_" + std::string(outputTypeName(type)));
        const auto parallel = dir / ("four_" + std::string(outputTypeName(type)));
        writeWhole(sequential, v, one);
        // The conveyor hands over many slices at once, in any order.
        auto writer = createVolumeWriter(parallel, v.width, v.height, v.depth, four);
        const std::span<const float> all(v.data);
        writer->writeSlices(11, 12, all.subspan(11 * v.imageSize(), 12 * v.imageSize()));
        writer->writeSlices(0, 11, all.first(11 * v.imageSize()));
        writer->commit();
        for (int z = 0; z < v.depth; ++z) {
            char name[32];
            std::snprintf(name, sizeof name, "slice_%05d.tif", z);
            std::ifstream a(sequential / name, std::ios::binary), b(parallel / name, std::ios::binary);
            const std::string bytesA{std::istreambuf_iterator<char>(a), {}};
            const std::string bytesB{std::istreambuf_iterator<char>(b), {}};
            ASSERT_FALSE(bytesA.empty());
            ASSERT_EQ(bytesA, bytesB) << name << " differs";
        }
        EXPECT_EQ(readVolume(parallel).data, readVolume(sequential).data);
    }
}

#endif // TOMO_WITH_TIFF

/// Every format the build has.
std::vector<std::string> targets() {
    std::vector<std::string> t;
#if TOMO_WITH_HDF5
    t.push_back("vol.h5");
#endif
#if TOMO_WITH_TIFF
    t.push_back("stack");
    t.push_back("pages.tif");
#endif
    return t;
}

TEST(OutputTypes, EveryTypeInEveryFormatReadsBackWithinItsPrecision) {
    TempDir dir;
    const ImageStack v = spreadVolume(21, 13, 5);
    for (const std::string& name : targets())
        for (OutputType type : {OutputType::Float32, OutputType::Float16, OutputType::UInt16, OutputType::UInt8}) {
            SCOPED_TRACE(name + " " + outputTypeName(type));
            const auto target = dir / (std::string(outputTypeName(type)) + "_" + name);
            ClippedValues clipped;
            writeWhole(target, v, optionsFor(type), &clipped);
            EXPECT_EQ(clipped.total(), 0u);
            const ImageStack back = readVolume(target);
            EXPECT_EQ(back.width, v.width);
            EXPECT_EQ(back.depth, v.depth);
            if (type == OutputType::Float32) {
                EXPECT_EQ(back.data, v.data);
            }
            expectRestored(back, v, type);
        }
}

TEST(OutputTypes, ValuesOutsideTheRangeAreClippedAndCounted) {
    TempDir dir;
    ImageStack v(8, 1, 1);
    // The range [0, 1] over 0..255: a step of 1/255.
    v.data = {-0.5f, -0.001f, 0.0f, 0.5f, 1.0f, 1.001f, 7.0f, kNaN};
    for (const std::string& name : targets()) {
        SCOPED_TRACE(name);
        ClippedValues clipped;
        writeWhole(dir / ("u8_" + name), v, optionsFor(OutputType::UInt8, 0.0f, 1.0f), &clipped);
        // -0.001 and 1.001 are within half a step of the ends: stored at
        // them, not counted.
        EXPECT_EQ(clipped.below, 1u);
        EXPECT_EQ(clipped.above, 1u);
        EXPECT_EQ(clipped.nan, 1u);
        EXPECT_EQ(clipped.total(), 3u);
        const ImageStack back = readVolume(dir / ("u8_" + name));
        EXPECT_EQ(back.data[0], 0.0f);
        EXPECT_EQ(back.data[1], 0.0f);
        EXPECT_NEAR(back.data[3], 0.5f, 0.5 / 255);
        EXPECT_FLOAT_EQ(back.data[4], 1.0f);
        EXPECT_FLOAT_EQ(back.data[6], 1.0f);
        EXPECT_EQ(back.data[7], 0.0f); // NaN stored as 0, which is the range's low end
    }
}

TEST(OutputTypes, LargeSlicesAreConvertedInGroups) {
    // A writer converts at most 64 MiB of samples at a time: 4 float16
    // slices of 2900^2 (16.8 MB each) go as 3 + 1, and still land in place.
    TempDir dir;
    const ImageStack v = spreadVolume(2900, 2900, 4);
    std::vector<float> expected;
    for (const std::string& name : targets()) {
        SCOPED_TRACE(name);
        writeWhole(dir / name, v, optionsFor(OutputType::Float16));
        const ImageStack back = readVolume(dir / name);
        if (expected.empty()) {
            expectRestored(back, v, OutputType::Float16);
            expected = back.data;
        } else {
            EXPECT_EQ(back.data, expected);
        }
        std::filesystem::remove_all(dir / name);
    }
}

TEST(OutputTypes, MeasuredWriteSpeedOfEachType) {
    // MEASURED, not asserted: 32 slices of 1024^2 (128 MiB as float32) to
    // the temporary folder, each format and type, as the conveyor hands
    // them over (8 slices a call).
    TempDir dir;
    constexpr int kSize = 1024, kSlices = 32, kPerCall = 8;
    const ImageStack v = spreadVolume(kSize, kSize, kSlices);
    for (const std::string& name : targets())
        for (OutputType type : {OutputType::Float32, OutputType::Float16, OutputType::UInt16, OutputType::UInt8}) {
            const auto target = dir / (std::string(outputTypeName(type)) + "_" + name);
            const auto t0 = std::chrono::steady_clock::now();
            auto writer = createVolumeWriter(target, kSize, kSize, kSlices, optionsFor(type));
            for (int z = 0; z < kSlices; z += kPerCall)
                writer->writeSlices(z, kPerCall, std::span<const float>(v.data).subspan(z * v.imageSize(),
                                                                                        kPerCall * v.imageSize()));
            writer->commit();
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const double values = static_cast<double>(v.data.size());
            std::printf("MEASURED write %-9s %-7s %d x %d^2: %.3f s, %.0f M values/s, %.0f MB/s stored (%d threads)\n",
                        name.c_str(), outputTypeName(type), kSlices, kSize, seconds, values / seconds / 1e6,
                        values * static_cast<double>(outputTypeBytes(type)) / seconds / 1e6,
                        static_cast<int>(std::min(16u, std::max(1u, std::thread::hardware_concurrency()))));
            std::filesystem::remove_all(target);
        }
}

} // namespace
} // namespace tomo
