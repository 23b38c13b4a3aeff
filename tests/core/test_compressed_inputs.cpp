// Compressed HDF5 scans: the same uint16 DXchange scan stored uncompressed
// and through gzip (built into HDF5, inflated by the readers' own zlib path)
// and the filter plugins of Debian's packages (LZF, bitshuffle + LZ4, Blosc,
// LZ4) reads bit-identical; a filter HDF5 cannot load is refused naming the
// dataset, the filter and the package; a corrupt deflated chunk names its
// frame. Reading speed of gzip chunks is printed as a MEASURED line.
#include "hdf5_builder.h"
#include "io_test_helpers.h"
#include "test_support.h"
#include "tomo/dataset.h"
#include "tomo/error.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace tomo {
namespace {

#if TOMO_WITH_HDF5

using test::contains;
using test::rawRows;
using test::sinograms;
using test::H5Builder;
using test::messageOf;
using test::TempDir;

/// A detector-like uint16 stack [image][row][column]: a smooth object
/// moving over a flat background, which every filter compresses.
std::vector<std::uint16_t> frames(int images, int rows, int columns, int level) {
    std::vector<std::uint16_t> v(static_cast<std::size_t>(images) * rows * columns);
    for (int a = 0; a < images; ++a)
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < columns; ++c) {
                const double x = (c - columns * (0.5 + 0.1 * std::sin(a * 0.2))) / columns;
                const double object = std::exp(-40.0 * x * x) * (1.0 + 0.3 * std::cos(r * 0.1));
                v[(static_cast<std::size_t>(a) * rows + r) * columns + c] =
                    static_cast<std::uint16_t>(level * (1.0 - 0.6 * object));
            }
    return v;
}

struct Scan {
    int projections = 24, rows = 40, columns = 48;
};

/// Writes `scan` as DXchange with data, flats and darks chunked
/// [1][chunkRows][columns] through `filters` (none: uncompressed, contiguous).
void writeScan(const std::filesystem::path& file, const Scan& s, const std::vector<H5Builder::Filter>& filters,
               hsize_t chunkRows) {
    const auto A = static_cast<hsize_t>(s.projections), R = static_cast<hsize_t>(s.rows),
               C = static_cast<hsize_t>(s.columns);
    const std::vector<hsize_t> chunk = filters.empty() ? std::vector<hsize_t>{} : std::vector<hsize_t>{1, chunkRows, C};
    std::vector<double> theta(A);
    for (hsize_t a = 0; a < A; ++a) theta[a] = 180.0 * static_cast<double>(a) / static_cast<double>(A);
    H5Builder(file)
        .filtered("/exchange/data", {A, R, C}, frames(s.projections, s.rows, s.columns, 20000), H5T_NATIVE_UINT16, chunk,
                  filters)
        .filtered("/exchange/data_white", {3, R, C}, frames(3, s.rows, s.columns, 30000), H5T_NATIVE_UINT16, chunk,
                  filters)
        .filtered("/exchange/data_dark", {2, R, C}, frames(2, s.rows, s.columns, 100), H5T_NATIVE_UINT16, chunk, filters)
        .dataset("/exchange/theta", {A}, theta);
}

std::vector<float> meanFlat(DatasetReader& reader) {
    std::vector<float> out(static_cast<std::size_t>(reader.info().rows) * reader.info().columns);
    EXPECT_TRUE(reader.readMeanFlat(0, reader.info().rows, out));
    return out;
}

/// Every read of `compressed` equals the same read of `plain`: whole
/// sinograms, bands in order (each chunk's stream resumed), a band out of
/// order (streams restarted), single rows, flats, one projection.
void expectSameReads(DatasetReader& plain, DatasetReader& compressed) {
    const int rows = plain.info().rows;
    ASSERT_EQ(compressed.info().rows, rows);
    ASSERT_EQ(compressed.info().sampleType, SampleType::UInt16);
    EXPECT_EQ(sinograms(compressed, 0, rows), sinograms(plain, 0, rows));
    for (int first = 0; first < rows; first += 7) {
        const int count = std::min(7, rows - first);
        ASSERT_EQ(rawRows(compressed, first, count), rawRows(plain, first, count)) << "band at row " << first;
    }
    EXPECT_EQ(rawRows(compressed, 3, 20), rawRows(plain, 3, 20));
    EXPECT_EQ(rawRows(compressed, rows - 1, 1), rawRows(plain, rows - 1, 1));
    EXPECT_EQ(rawRows(compressed, 0, rows), rawRows(plain, 0, rows));
    EXPECT_EQ(sinograms(compressed, 17, 5), sinograms(plain, 17, 5));
    EXPECT_EQ(meanFlat(compressed), meanFlat(plain));
    std::vector<float> a(static_cast<std::size_t>(rows) * plain.info().columns), b(a.size());
    plain.readProjection(5, a);
    compressed.readProjection(5, b);
    EXPECT_EQ(b, a);
}

struct Compression {
    const char* name;
    std::vector<H5Builder::Filter> filters;
    friend void PrintTo(const Compression& c, std::ostream* os) { *os << c.name; }
};

class CompressedScan : public ::testing::TestWithParam<Compression> {};

TEST_P(CompressedScan, ReadsBitIdenticalToUncompressed) {
    const Compression& compression = GetParam();
    for (const auto& f : compression.filters)
        if (H5Zfilter_avail(f.id) <= 0)
            GTEST_SKIP() << "HDF5 filter " << f.id << " (" << compression.name
                         << ") is not available: its plugin package is not installed (scripts/install-deps.sh)";
    TempDir dir;
    const Scan scan;
    writeScan(dir / "plain.h5", scan, {}, 0);
    auto plain = openDataset(dir / "plain.h5");
    // Chunks of whole frames (how detectors write), and of 16-row bands
    // whose last one reaches past the frame's edge.
    for (const hsize_t chunkRows : {hsize_t{40}, hsize_t{16}}) {
        SCOPED_TRACE(std::string(compression.name) + ", chunks of " + std::to_string(chunkRows) + " rows");
        const auto file = dir / ("packed" + std::to_string(chunkRows) + ".h5");
        writeScan(file, scan, compression.filters, chunkRows);
        // The filter did its work: the data take less room than uncompressed.
        EXPECT_LT(std::filesystem::file_size(file), std::filesystem::file_size(dir / "plain.h5"));
        auto compressed = openDataset(file);
        expectSameReads(*plain, *compressed);
    }
}

/// Filter parameters (cd_values) as h5py + hdf5plugin write them.
INSTANTIATE_TEST_SUITE_P(
    Filters, CompressedScan,
    ::testing::Values(Compression{"gzip", {{H5Z_FILTER_DEFLATE, {6}, H5Z_FLAG_OPTIONAL}}},
                      Compression{"gzip_shuffle",
                                  {{H5Z_FILTER_SHUFFLE, {}, H5Z_FLAG_OPTIONAL}, {H5Z_FILTER_DEFLATE, {4}, H5Z_FLAG_OPTIONAL}}},
                      Compression{"lzf", {{32000, {}}}},
                      Compression{"bitshuffle_lz4", {{32008, {0, 2}}}},  // block size auto, LZ4
                      Compression{"blosc_lz4", {{32001, {0, 0, 0, 0, 5, 1, 1}}}}, // level 5, byte shuffle, LZ4
                      Compression{"lz4", {{32004, {}}}}),
    [](const auto& info) { return std::string(info.param.name); });

/// An identity filter registered under `id` while it lives, so a file can
/// be written with a filter that no plugin provides once it is gone.
class FakeFilter {
public:
    FakeFilter(H5Z_filter_t id, const char* name) : m_id(id) {
        const H5Z_class2_t filter{H5Z_CLASS_T_VERS, id, 1, 1, name, nullptr, nullptr,
                                  [](unsigned, std::size_t, const unsigned[], std::size_t bytes, std::size_t*, void**) {
                                      return bytes;
                                  }};
        if (H5Zregister(&filter) < 0) throw std::runtime_error("cannot register filter " + std::to_string(id));
    }
    ~FakeFilter() { H5Zunregister(m_id); }
    FakeFilter(const FakeFilter&) = delete;
    FakeFilter& operator=(const FakeFilter&) = delete;

private:
    H5Z_filter_t m_id;
};

/// While it lives, HDF5 loads no filter plugin: the machine without them.
class NoPlugins {
public:
    NoPlugins() {
        H5PLget_loading_state(&m_saved);
        H5PLset_loading_state(0);
    }
    ~NoPlugins() { H5PLset_loading_state(m_saved); }
    NoPlugins(const NoPlugins&) = delete;
    NoPlugins& operator=(const NoPlugins&) = delete;

private:
    unsigned m_saved = 0;
};

TEST(CompressedInput, FilterNoPluginProvidesIsRefusedByName) {
    TempDir dir;
    const auto file = dir / "unknown.h5";
    {
        // 511: the last id HDF5 reserves for testing; no plugin has it.
        const FakeFilter fake(511, "tomo test filter");
        writeScan(file, Scan{}, {{511, {}}}, 40);
    }
    const std::string message = messageOf<IoError>([&] { openDataset(file); });
    EXPECT_TRUE(contains(message, "/exchange/data in " + file.string()));
    EXPECT_TRUE(contains(message, "HDF5 filter 511 (tomo test filter)"));
    EXPECT_TRUE(contains(message, "cannot decode"));
    EXPECT_TRUE(contains(message, "no Debian package is known to provide it"));
}

TEST(CompressedInput, MissingPluginNamesItsDebianPackage) {
    // Files written under the plugins' ids by a stand-in filter, read with
    // plugin loading off: as on a machine without the packages.
    TempDir dir;
    const std::pair<H5Z_filter_t, const char*> cases[] = {
        {32000, "(LZF), which this HDF5 library cannot decode: install the Debian package hdf5-plugin-lzf"},
        {32008, "(bitshuffle), which this HDF5 library cannot decode: install the Debian package bitshuffle"},
        {32001, "(Blosc), which this HDF5 library cannot decode: install the Debian package "
                "hdf5-filter-plugin-blosc-serial"},
        {32004, "(LZ4), which this HDF5 library cannot decode: install the Debian package hdf5-filter-plugin"},
    };
    for (const auto& [id, expected] : cases) {
        const auto file = dir / ("filter" + std::to_string(id) + ".h5");
        const NoPlugins noPlugins;
        {
            const FakeFilter fake(id, "stand-in");
            writeScan(file, Scan{}, {{id, {}}}, 40);
        }
        const std::string message = messageOf<IoError>([&] { openDataset(file); });
        EXPECT_TRUE(contains(message, "/exchange/data in " + file.string() + " is compressed with HDF5 filter " +
                                          std::to_string(id)));
        EXPECT_TRUE(contains(message, expected));
        EXPECT_TRUE(contains(message, "HDF5 looks for plugins in "));
    }
}

TEST(CompressedInput, CorruptDeflatedChunkNamesItsFrame) {
    TempDir dir;
    const auto file = dir / "corrupt.h5";
    const Scan scan;
    writeScan(file, scan, {{H5Z_FILTER_DEFLATE, {6}, H5Z_FLAG_OPTIONAL}}, 40);
    // Overwrite the middle of frame 5's chunk.
    haddr_t address = 0;
    hsize_t size = 0;
    {
        const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        const hid_t d = H5Dopen2(f, "/exchange/data", H5P_DEFAULT);
        const hsize_t origin[3] = {5, 0, 0};
        unsigned mask = 0;
        ASSERT_GE(H5Dget_chunk_info_by_coord(d, origin, &mask, &address, &size), 0);
        H5Dclose(d);
        H5Fclose(f);
    }
    {
        std::fstream out(file, std::ios::in | std::ios::out | std::ios::binary);
        out.seekp(static_cast<std::streamoff>(address + size / 2));
        const std::string garbage(32, '\xff');
        out.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    }
    auto reader = openDataset(file);
    // Read band by band as the conveyor does: the chunk's error comes at
    // the latest with the band that ends it (its checksum).
    const std::string message = messageOf<FormatError>([&] {
        rawRows(*reader, 0, 20);
        rawRows(*reader, 20, 20);
    });
    EXPECT_TRUE(contains(message, "/exchange/data in " + file.string()));
    EXPECT_TRUE(contains(message, "the chunk of frame 5 at byte " + std::to_string(address)));
    EXPECT_TRUE(contains(message, "the file is corrupt"));
}

TEST(CompressedInput, MeasuredGzipBandsThroughTheLibraryAndInParallel) {
    // 128 projections of 256 x 512 uint16 (32 MiB) in one gzip chunk per
    // projection, read in 4 bands of 64 rows as the conveyor reads: through
    // H5Dread (one thread, each chunk inflated whole for every band; what
    // the reader did before) against readRawRows.
    TempDir dir;
    const Scan scan{128, 256, 512};
    const auto file = dir / "gzip.h5";
    writeScan(file, scan, {{H5Z_FILTER_DEFLATE, {1}, H5Z_FLAG_OPTIONAL}}, 256);
    const int band = 64;
    const std::size_t bandBytes = static_cast<std::size_t>(scan.projections) * band * scan.columns * 2;
    std::vector<std::byte> library(bandBytes), ours(bandBytes);
    double libraryTime = 0.0, oursTime = 0.0;
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t d = H5Dopen2(f, "/exchange/data", H5P_DEFAULT);
    auto reader = openDataset(file);
    for (int first = 0; first < scan.rows; first += band) {
        const auto t0 = std::chrono::steady_clock::now();
        const hsize_t start[3] = {0, static_cast<hsize_t>(first), 0};
        const hsize_t count[3] = {static_cast<hsize_t>(scan.projections), static_cast<hsize_t>(band),
                                  static_cast<hsize_t>(scan.columns)};
        const hid_t fileSpace = H5Dget_space(d);
        H5Sselect_hyperslab(fileSpace, H5S_SELECT_SET, start, nullptr, count, nullptr);
        const hid_t memSpace = H5Screate_simple(3, count, nullptr);
        ASSERT_GE(H5Dread(d, H5T_NATIVE_UINT16, memSpace, fileSpace, H5P_DEFAULT, library.data()), 0);
        H5Sclose(memSpace);
        H5Sclose(fileSpace);
        const auto t1 = std::chrono::steady_clock::now();
        reader->readRawRows(first, band, ours);
        const auto t2 = std::chrono::steady_clock::now();
        libraryTime += std::chrono::duration<double>(t1 - t0).count();
        oursTime += std::chrono::duration<double>(t2 - t1).count();
        ASSERT_EQ(ours, library) << "band at row " << first;
    }
    H5Dclose(d);
    H5Fclose(f);
    const double mib = static_cast<double>(bandBytes) * (scan.rows / band) / (1 << 20);
    test::printReadSpeedup("gzip-1 chunks per projection, " + std::to_string(std::lround(mib)) + " MiB in 4 bands", mib,
                           "H5Dread", libraryTime, "readRawRows", oursTime);
}

#else

TEST(CompressedInput, NeedsHdf5) { GTEST_SKIP() << "this build has no HDF5 support"; }

#endif

} // namespace
} // namespace tomo
