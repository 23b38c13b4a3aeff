// createDXchangeScanWriter: scans written projection by projection read back
// exactly through openDataset, in every layout; bad sizes and an abandoned
// writer leave nothing behind.
#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/scan_writer.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

namespace tomo {
namespace {

#if TOMO_WITH_HDF5

constexpr int kProjections = 5, kRows = 3, kColumns = 7;

std::vector<std::uint16_t> ramp(std::size_t n, std::uint16_t start) {
    std::vector<std::uint16_t> v(n);
    std::iota(v.begin(), v.end(), start);
    return v;
}

TEST(ScanWriter, EveryLayoutReadsBackExactly) {
    for (auto [chunked, gzip] : {std::pair{true, 0}, std::pair{false, 0}, std::pair{true, 4}}) {
        test::TempDir dir;
        const auto target = dir / "scan.h5";
        ScanLayout layout{kProjections, kRows, kColumns, 2, 1, chunked, gzip};
        const std::size_t image = kRows * kColumns;
        const auto data = ramp(image * kProjections, 100);
        {
            auto writer = createDXchangeScanWriter(target, layout, {0, 36, 72, 108, 144}, false);
            // Out of order and in pieces, as a generator might write them.
            writer->writeProjections(2, 3, std::span(data).subspan(2 * image, 3 * image));
            writer->writeProjections(0, 2, std::span(data).first(2 * image));
            writer->writeFlats(std::vector<std::uint16_t>(2 * image, 1000));
            writer->writeDarks(std::vector<std::uint16_t>(image, 10));
            writer->commit();
        }
        const auto reader = openDataset(target);
        const DatasetInfo& info = reader->info();
        EXPECT_EQ(info.format, DatasetFormat::DXchange);
        EXPECT_EQ(info.sampleType, SampleType::UInt16);
        ASSERT_EQ(info.projections, kProjections);
        ASSERT_EQ(info.rows, kRows);
        ASSERT_EQ(info.columns, kColumns);
        EXPECT_EQ(info.flats, 2);
        EXPECT_EQ(info.darks, 1);
        EXPECT_NEAR(info.angles[4], 144.0 * 3.14159265358979 / 180.0, 1e-12);
        std::vector<float> sinograms(static_cast<std::size_t>(kRows) * kProjections * kColumns);
        reader->readSinograms(0, kRows, sinograms);
        for (int r = 0; r < kRows; ++r)
            for (int a = 0; a < kProjections; ++a)
                for (int c = 0; c < kColumns; ++c)
                    ASSERT_EQ(sinograms[(static_cast<std::size_t>(r) * kProjections + a) * kColumns + c],
                              data[a * image + r * kColumns + c])
                        << "chunked " << chunked << " gzip " << gzip;
        std::vector<float> flat(image), dark(image);
        ASSERT_TRUE(reader->readMeanFlat(0, kRows, flat));
        ASSERT_TRUE(reader->readMeanDark(0, kRows, dark));
        EXPECT_EQ(flat[5], 1000.0f);
        EXPECT_EQ(dark[5], 10.0f);
    }
}

TEST(ScanWriter, BadSizesAreRefusedAndAnAbandonedWriterLeavesNothing) {
    test::TempDir dir;
    const auto target = dir / "scan.h5";
    ScanLayout layout{kProjections, kRows, kColumns, 0, 0, true, 0};
    {
        auto writer = createDXchangeScanWriter(target, layout, std::vector<double>(kProjections, 0.0), false);
        EXPECT_THROW(writer->writeProjections(4, 2, std::vector<std::uint16_t>(2 * kRows * kColumns)),
                     InvalidArgument);
        EXPECT_THROW(writer->writeProjections(0, 1, std::vector<std::uint16_t>(5)), InvalidArgument);
    } // no commit
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
    EXPECT_THROW(createDXchangeScanWriter(target, layout, {1.0}, false), InvalidArgument); // 1 angle for 5
    layout.chunkedPerProjection = false;
    layout.gzipLevel = 3;
    EXPECT_THROW(createDXchangeScanWriter(target, layout, std::vector<double>(kProjections, 0.0), false),
                 InvalidArgument);
}

#else

TEST(ScanWriter, NeedsHdf5) {
    test::TempDir dir;
    EXPECT_THROW(createDXchangeScanWriter(dir / "scan.h5", ScanLayout{1, 1, 1}, {0.0}, false), InvalidArgument);
}

#endif

} // namespace
} // namespace tomo
