// DatasetReader::readRawRows: the stored values in projection order, equal to
// readSinograms' values for every reader (the HDF5 readers' own path and the
// default path through readSinograms), without conversion.
#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/preview.h"
#include "tomo/scan_writer.h"

#include "hdf5_builder.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace tomo {
namespace {

/// Checks readRawRows(first, count) against readSinograms(first, count).
template <class T>
void expectRawEqualsSinograms(DatasetReader& reader, int first, int count) {
    const DatasetInfo& info = reader.info();
    ASSERT_EQ(sampleBytes(info.sampleType), sizeof(T));
    const std::size_t values = static_cast<std::size_t>(info.projections) * count * info.columns;
    std::vector<float> sinograms(values);
    reader.readSinograms(first, count, sinograms);
    std::vector<std::byte> raw(values * sizeof(T));
    reader.readRawRows(first, count, raw);
    std::vector<T> stored(values);
    std::memcpy(stored.data(), raw.data(), raw.size());
    for (int a = 0; a < info.projections; ++a)
        for (int r = 0; r < count; ++r)
            for (int c = 0; c < info.columns; ++c)
                ASSERT_EQ(static_cast<float>(stored[(static_cast<std::size_t>(a) * count + r) * info.columns + c]),
                          sinograms[(static_cast<std::size_t>(r) * info.projections + a) * info.columns + c])
                    << "angle " << a << " row " << r << " column " << c;
}

TEST(RawRows, DXchangeUint16InProjectionOrder) {
#if !TOMO_WITH_HDF5
    GTEST_SKIP() << "writes a DXchange scan; this build has no HDF5 support";
#else
    test::TempDir dir;
    const ScanLayout layout{6, 5, 7, 1, 1, true, 0};
    std::vector<std::uint16_t> data(6 * 5 * 7);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint16_t>(40000 + 37 * i % 9000);
    auto writer = createDXchangeScanWriter(dir / "scan.h5", layout, {0, 30, 60, 90, 120, 150}, false);
    writer->writeProjections(0, 6, data);
    writer->writeFlats(std::vector<std::uint16_t>(35, 1));
    writer->writeDarks(std::vector<std::uint16_t>(35, 0));
    writer->commit();
    auto reader = openDataset(dir / "scan.h5");
    expectRawEqualsSinograms<std::uint16_t>(*reader, 1, 3);
    expectRawEqualsSinograms<std::uint16_t>(*reader, 0, 5);
    std::vector<std::byte> wrong(6 * 2 * 7 * 2 + 1);
    EXPECT_THROW(reader->readRawRows(0, 2, wrong), InvalidArgument);
    std::vector<std::byte> outside(6 * 2 * 7 * 2);
    EXPECT_THROW(reader->readRawRows(4, 2, outside), InvalidArgument);
#endif
}

TEST(RawRows, EveryStorageLayoutReadsTheSameValues) {
#if !TOMO_WITH_HDF5
    GTEST_SKIP() << "writes HDF5 files; this build has no HDF5 support";
#else
    // Read without the library (contiguous, chunks of whole rows) or through
    // it (gzip, big-endian, chunks that split rows), each with no user block
    // and behind one of 512 and 4096 bytes (h5py's userblock_size, MATLAB's
    // 512): the same values in every case, prefetched or not, as raw rows and
    // as sinograms. (The contiguous layout behind a user block was read that
    // many bytes off: H5Dget_offset counts the block, chunk addresses do not.)
    const int A = 9, R = 7, C = 11;
    std::vector<std::uint16_t> data(static_cast<std::size_t>(A) * R * C);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint16_t>(1000 + (i * 7919) % 50000);
    struct Layout {
        const char* what;
        std::vector<hsize_t> chunk;
        unsigned gzip;
        hid_t fileType;
    };
    const Layout layouts[] = {
        {"contiguous", {}, 0, H5T_STD_U16LE},
        {"one frame per chunk", {1, R, C}, 0, H5T_STD_U16LE},
        {"3 rows x 2 frames per chunk", {2, 3, C}, 0, H5T_STD_U16LE},
        {"gzip", {1, R, C}, 3, H5T_STD_U16LE},
        {"gzip, 3 rows per chunk", {1, 3, C}, 3, H5T_STD_U16LE},
        {"big-endian", {}, 0, H5T_STD_U16BE},
        {"chunks splitting rows", {1, R, 4}, 0, H5T_STD_U16LE},
    };
    for (const Layout& l : layouts)
        for (const hsize_t userBlock : {hsize_t{0}, hsize_t{512}, hsize_t{4096}}) {
            SCOPED_TRACE(std::string(l.what) + ", user block of " + std::to_string(userBlock) + " bytes");
            test::TempDir dir;
            test::H5Builder(dir / "scan.h5", userBlock)
                .stored("/exchange/data", {A, R, C}, data, l.fileType, l.chunk, l.gzip)
                .dataset("/exchange/theta", {A}, std::vector<double>{0, 20, 40, 60, 80, 100, 120, 140, 160});
            auto reader = openDataset(dir / "scan.h5");
            // Hints (the conveyor's, and some outside the rows) change nothing.
            reader->prefetchRows(-3, 2);
            reader->prefetchRows(R - 1, 100);
            reader->prefetchRows(1, std::numeric_limits<int>::max());
            for (auto [first, count] : {std::pair{0, R}, std::pair{2, 3}, std::pair{6, 1}}) {
                std::vector<std::byte> raw(static_cast<std::size_t>(A) * count * C * 2);
                reader->prefetchRows(first, count);
                reader->readRawRows(first, count, raw);
                const auto* v = reinterpret_cast<const std::uint16_t*>(raw.data());
                for (int a = 0; a < A; ++a)
                    for (int r = 0; r < count; ++r)
                        for (int c = 0; c < C; ++c)
                            ASSERT_EQ(v[(static_cast<std::size_t>(a) * count + r) * C + c],
                                      data[(static_cast<std::size_t>(a) * R + first + r) * C + c])
                                << "rows " << first << "+" << count << " angle " << a << " row " << r << " column "
                                << c;
                std::vector<float> sinograms(static_cast<std::size_t>(A) * count * C);
                reader->readSinograms(first, count, sinograms);
                for (int r = 0; r < count; ++r)
                    for (int a = 0; a < A; ++a)
                        for (int c = 0; c < C; ++c)
                            ASSERT_EQ(sinograms[(static_cast<std::size_t>(r) * A + a) * C + c],
                                      static_cast<float>(data[(static_cast<std::size_t>(a) * R + first + r) * C + c]))
                                << "sinogram rows " << first << "+" << count << " row " << r << " angle " << a
                                << " column " << c;
            }
        }
#endif
}

TEST(RawRows, DefaultPathThroughSinogramsForRawFloatFiles) {
    test::TempDir dir;
    const int A = 4, R = 3, C = 5;
    std::vector<float> values(A * R * C);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.25f * static_cast<float>(i) - 3.0f;
    {
        std::ofstream out(dir / "scan.raw", std::ios::binary);
        out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 4));
    }
    OpenOptions options;
    options.raw = RawLayout{A, R, C, SampleType::Float32, 0, false};
    auto reader = openDataset(dir / "scan.raw", options);
    expectRawEqualsSinograms<float>(*reader, 1, 2);
    // Projection order is the file's order.
    std::vector<std::byte> raw(values.size() * 4);
    reader->readRawRows(0, R, raw);
    EXPECT_EQ(std::memcmp(raw.data(), values.data(), raw.size()), 0);
}

/// Checks readRawRowsOfProjections against the range of readRawRows, for
/// every range of projections of rows [first, first + count).
void expectProjectionRangesEqualAllRows(DatasetReader& reader, int first, int count) {
    const DatasetInfo& info = reader.info();
    const std::size_t perProjection = static_cast<std::size_t>(count) * info.columns * sampleBytes(info.sampleType);
    std::vector<std::byte> all(perProjection * info.projections);
    reader.readRawRows(first, count, all);
    for (int p = 0; p < info.projections; ++p)
        for (int n = 1; p + n <= info.projections; ++n) {
            std::vector<std::byte> part(perProjection * n);
            reader.readRawRowsOfProjections(first, count, p, n, part);
            ASSERT_TRUE(std::equal(part.begin(), part.end(), all.begin() + static_cast<std::ptrdiff_t>(perProjection * p)))
                << "rows " << first << "+" << count << ", projections " << p << "+" << n;
        }
}

TEST(RawRows, ProjectionRangesEqualTheirPartOfAllProjections) {
    // The default (through readRawRows) on a memory dataset; the HDF5 stack
    // readers' own (the frames of the range only), with the projections in
    // one run (DXchange) and in runs between flats and darks (NXtomo).
    ImageStack sinograms(5, 7, 3);
    for (std::size_t i = 0; i < sinograms.data.size(); ++i) sinograms.data[i] = static_cast<float>(i % 97) * 0.25f;
    auto memory = makeMemoryDataset(sinograms, {0.0, 0.3, 0.6, 0.9, 1.2, 1.5, 1.8});
    expectProjectionRangesEqualAllRows(*memory, 0, 3);
    expectProjectionRangesEqualAllRows(*memory, 1, 1);
#if TOMO_WITH_HDF5
    test::TempDir dir;
    const int F = 10, R = 3, C = 4;
    std::vector<std::uint16_t> frames(static_cast<std::size_t>(F) * R * C);
    for (std::size_t i = 0; i < frames.size(); ++i) frames[i] = static_cast<std::uint16_t>(100 + (i * 7919) % 50000);
    test::H5Builder(dir / "dx.h5")
        .stored("/exchange/data", {F, R, C}, frames, H5T_STD_U16LE, {1, R, C}, 0)
        .dataset("/exchange/theta", {F}, std::vector<double>{0, 18, 36, 54, 72, 90, 108, 126, 144, 162});
    auto dx = openDataset(dir / "dx.h5");
    expectProjectionRangesEqualAllRows(*dx, 0, R);
    expectProjectionRangesEqualAllRows(*dx, 1, 2);
    // Frames: dark, flat, projections x3, flat, projections x4.
    const std::vector<std::int32_t> keys{2, 1, 0, 0, 0, 1, 0, 0, 0, 0};
    std::vector<double> angles;
    for (int f = 0; f < F; ++f) angles.push_back(10.0 * f);
    test::H5Builder(dir / "nx.nxs")
        .stored("/entry/instrument/detector/data", {F, R, C}, frames, H5T_STD_U16LE, {1, R, C}, 0)
        .dataset("/entry/instrument/detector/image_key", {F}, keys)
        .dataset("/entry/sample/rotation_angle", {F}, angles);
    auto nx = openDataset(dir / "nx.nxs");
    ASSERT_EQ(nx->info().projections, 7);
    expectProjectionRangesEqualAllRows(*nx, 0, R);
    expectProjectionRangesEqualAllRows(*nx, 2, 1);
    // Ranges outside the projections, or a buffer of another size.
    std::vector<std::byte> two(2 * R * C * 2);
    EXPECT_THROW(nx->readRawRowsOfProjections(0, R, 6, 2, two), InvalidArgument);
    EXPECT_THROW(nx->readRawRowsOfProjections(0, R, -1, 2, two), InvalidArgument);
    EXPECT_THROW(nx->readRawRowsOfProjections(0, R, 0, 0, two), InvalidArgument);
    EXPECT_THROW(nx->readRawRowsOfProjections(0, R, 0, 3, two), InvalidArgument);
    EXPECT_THROW(nx->readRawRowsOfProjections(1, R, 0, 2, two), InvalidArgument);
#endif
}

} // namespace
} // namespace tomo
