// DatasetReader::readRawRows: the stored values in projection order, equal to
// readSinograms' values for every reader (the HDF5 readers' own path and the
// default path through readSinograms), without conversion.
#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/scan_writer.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
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
    auto writer = createDXchangeScanWriter(dir / "scan.h5", layout, std::vector<double>(6, 0.0), false);
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

} // namespace
} // namespace tomo
