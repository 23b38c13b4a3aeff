// reconstructVolume: chunking does not change the result, progress and
// cancellation behave as documented, the report adds up.
#include "pipeline_test_helpers.h"

#include "tomo/error.h"
#include "tomo/registry.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

namespace tomo {
namespace {

using namespace test;

TEST(Pipeline, ChunkedEqualsOneShotExactly) {
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    const ReconOptions options = optionsFor("cpu-reference");
    const ImageStack expected = oneShot(reader, scan.geometry, options);

    VolumeJob job;
    job.geometry = scan.geometry;
    job.options = options;
    job.chunkRows = 3; // 3 + 3 + 1
    MemoryWriter writer(kBins, kBins, kRows);
    const VolumeReport report = reconstructVolume(reader, job, writer);

    EXPECT_TRUE(writer.committed);
    EXPECT_EQ(writer.writes, (std::vector<std::pair<int, int>>{{0, 3}, {3, 3}, {6, 1}}));
    EXPECT_EQ(report.slices, kRows);
    ASSERT_EQ(writer.volume.data.size(), expected.data.size());
    EXPECT_EQ(writer.volume.data, expected.data);
    // Not a trivial image: the phantom is there.
    EXPECT_GT(*std::max_element(expected.data.begin(), expected.data.end()), 0.005f);
}

TEST(Pipeline, ChunksSizedByTheBudgetStartAndEndSmallAndEqualOneShotExactly) {
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    const ReconOptions options = optionsFor("cpu-reference");
    const ImageStack expected = oneShot(reader, scan.geometry, options);

    reader.rowsRead = 0;
    VolumeJob job; // chunkRows 0: the conveyor chooses, all rows fit
    job.geometry = scan.geometry;
    job.options = options;
    MemoryWriter writer(kBins, kBins, kRows);
    const VolumeReport report = reconstructVolume(reader, job, writer);

    ASSERT_GT(report.chunkRows, 2);
    ASSERT_GE(writer.writes.size(), 3u);
    int next = 0;
    for (const auto& [first, count] : writer.writes) {
        EXPECT_EQ(first, next);
        EXPECT_LE(count, report.chunkRows);
        next = first + count;
    }
    EXPECT_EQ(next, kRows);
    EXPECT_EQ(writer.writes.front().second, 1);
    EXPECT_EQ(writer.writes.back().second, 1);
    EXPECT_EQ(writer.volume.data, expected.data);
    EXPECT_EQ(reader.rowsRead, kRows);
}

TEST(Pipeline, ChunkedEqualsOneShotForTheFastStrategyWithSeveralSlicesPerPass) {
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    const ReconOptions options = optionsFor("cpu", 4);
    const ImageStack expected = oneShot(reader, scan.geometry, options);

    VolumeJob job;
    job.geometry = scan.geometry;
    job.options = options;
    job.chunkRows = 3; // chunks that are not whole passes of 4
    MemoryWriter writer(kBins, kBins, kRows);
    reconstructVolume(reader, job, writer);

    const float peak = *std::max_element(expected.data.begin(), expected.data.end());
    for (std::size_t i = 0; i < expected.data.size(); ++i)
        ASSERT_NEAR(writer.volume.data[i], expected.data[i], 1e-5f * peak) << "value " << i;
}

TEST(Pipeline, RowSubsetGivesTheSameSlicesAsTheFullRun) {
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    const ReconOptions options = optionsFor("cpu-reference");
    const ImageStack full = oneShot(reader, scan.geometry, options);

    VolumeJob job;
    job.firstRow = 2;
    job.rowCount = 4;
    job.geometry = scan.geometry;
    job.options = options;
    MemoryWriter writer(kBins, kBins, 4);
    reconstructVolume(reader, job, writer);
    for (int z = 0; z < 4; ++z) {
        const auto got = writer.volume.image(z);
        const auto want = full.image(2 + z);
        ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << "slice " << z;
    }
}

TEST(Pipeline, CompletesTheGeometryFromTheDatasetAndHonoursTheRegion) {
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    const ReconOptions options = optionsFor("cpu-reference");
    const ImageStack full = oneShot(reader, scan.geometry, options);

    VolumeJob job;
    job.options = options;
    job.geometry.geometry.axis = scan.geometry.geometry.axis; // angles, bins and grid from the dataset
    job.geometry.sliceWidth = kBins;
    job.geometry.sliceHeight = kBins;
    job.geometry.region = Region{5, 9, 20, 13};
    MemoryWriter writer(20, 13, kRows);
    reconstructVolume(reader, job, writer);
    for (int z = 0; z < kRows; ++z)
        for (int y = 0; y < 13; ++y)
            for (int x = 0; x < 20; ++x)
                ASSERT_EQ(writer.volume.image(z)[y * 20 + x], full.image(z)[(y + 9) * kBins + x + 5])
                    << z << " " << x << " " << y;
}

TEST(Pipeline, ProgressRisesToOneBeforeTheCommit) {
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    VolumeJob job = jobFor(scan, "cpu-reference", 2);
    MemoryWriter writer(kBins, kBins, kRows);
    std::vector<double> fractions;
    reconstructVolume(reader, job, writer, [&](double f, std::string_view stage) {
        EXPECT_FALSE(stage.empty());
        EXPECT_FALSE(writer.committed) << "progress after the commit";
        fractions.push_back(f);
    });
    // Once per step that moved when the caller's thread keeps up; steps that
    // finished while it waited come in one call (a loaded machine gave 2 of 4).
    ASSERT_FALSE(fractions.empty());
    EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
    EXPECT_GT(fractions.front(), 0.0);
    EXPECT_DOUBLE_EQ(fractions.back(), 1.0);
    EXPECT_TRUE(writer.committed);
}

TEST(Pipeline, CancelledFromProgressLeavesNoOutputFile) {
#if !TOMO_WITH_HDF5
    GTEST_SKIP() << "writes an HDF5 volume; this build has no HDF5 support";
#endif
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    test::TempDir dir;
    const auto target = dir / "volume.h5";
    VolumeJob job = jobFor(scan, "cpu-reference", 2);
    int calls = 0;
    {
        auto writer = createVolumeWriter(target, kBins, kBins, kRows, WriteOptions{});
        EXPECT_THROW(reconstructVolume(reader, job, *writer,
                                       [&](double, std::string_view) {
                                           if (++calls == 2) throw Cancelled();
                                       }),
                     Cancelled);
    } // the caller drops the writer: the temporary goes
    EXPECT_EQ(calls, 2);
    EXPECT_FALSE(std::filesystem::exists(target));
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "a temporary file was left behind";
}

TEST(Pipeline, CancelledAtTheLastProgressCallStillLeavesNoOutput) {
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    VolumeJob job;
    job.geometry = scan.geometry;
    job.options = optionsFor("cpu-reference");
    MemoryWriter writer(kBins, kBins, kRows);
    EXPECT_THROW(reconstructVolume(reader, job, writer,
                                   [&](double f, std::string_view) {
                                       if (f >= 1.0) throw Cancelled();
                                   }),
                 Cancelled);
    EXPECT_FALSE(writer.committed);
}

TEST(Pipeline, ReportFieldsAddUp) {
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    // Three counts at or below the dark level, in different chunks: counted
    // once each, interpolated by default, clamped with the corrections off.
    reader.setCount(0, 0, 0, kDark);
    reader.setCount(3, 10, 7, kDark - 10.0f);
    reader.setCount(6, 59, 47, 0.0f);
    VolumeJob job;
    job.geometry = scan.geometry;
    job.options.strategy = "auto";
    job.chunkRows = 3;
    {
        job.corrections = CorrectionOptions::none();
        MemoryWriter clampedWriter(kBins, kBins, kRows);
        const VolumeReport c = reconstructVolume(reader, job, clampedWriter);
        EXPECT_EQ(c.preprocess.clamped, 3u);
        EXPECT_EQ(c.preprocess.badValueCount, 0u);
        job.corrections = {};
        reader.rowsRead = 0;
    }
    MemoryWriter writer(kBins, kBins, kRows);
    const VolumeReport r = reconstructVolume(reader, job, writer);

    EXPECT_NE(BackendRegistry::instance().find(r.strategy), nullptr) << "'" << r.strategy << "' is not a strategy";
    EXPECT_EQ(r.slices, kRows);
    EXPECT_EQ(r.preprocess.clamped, 0u);
    EXPECT_EQ(r.preprocess.badValueCount, 3u);
    EXPECT_EQ(r.preprocess.badValues,
              (std::vector<PixelPosition>{{0, 0, 0}, {3, 10, 7}, {6, 59, 47}}));
    for (double s : {r.secondsRead, r.secondsPreprocess, r.secondsWrite}) EXPECT_GE(s, 0.0);
    EXPECT_GT(r.secondsReconstruct, 0.0);
    // Reading overlaps the reconstruction, so only these add up for sure.
    EXPECT_GE(r.secondsTotal, r.secondsReconstruct + r.secondsWrite - 1e-6);
    EXPECT_GE(r.secondsTotal, r.secondsRead);
    // What nothing overlaps: the plan within the setup; setup, lead-in and tail apart.
    EXPECT_GT(r.secondsPlan, 0.0);
    EXPECT_LE(r.secondsPlan, r.secondsSetup);
    EXPECT_GT(r.secondsTail, 0.0);
    EXPECT_LE(r.secondsSetup + r.secondsLeadIn + r.secondsTail, r.secondsTotal + 1e-9);
    EXPECT_NEAR(r.gups, double(kBins) * kBins * kRows * kAngles / r.secondsReconstruct / 1e9, 1e-9 * r.gups);
    EXPECT_EQ(reader.rowsRead, kRows); // nothing read twice
    for (float v : writer.volume.data) ASSERT_TRUE(std::isfinite(v));
}

TEST(Pipeline, ReadsAheadBounded) {
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    reader.readDelay = std::chrono::milliseconds(5);
    VolumeJob job = jobFor(scan, "cpu-reference", 1);
    MemoryWriter writer(kBins, kBins, kRows);
    std::vector<int> readWhenWritten; // rows read when the k-th row has been written
    int written = 0;
    reconstructVolume(reader, job, writer, [&](double, std::string_view) {
        if (static_cast<int>(writer.writes.size()) == written) return;
        written = static_cast<int>(writer.writes.size());
        readWhenWritten.push_back(reader.rowsRead);
    });
    ASSERT_EQ(writer.writes.size(), static_cast<std::size_t>(kRows));
    ASSERT_FALSE(readWhenWritten.empty());
    for (std::size_t k = 0; k < readWhenWritten.size(); ++k) {
        // Memory stays bounded: at most six chunks beyond the one written
        // (queued for writing, being reconstructed, queued for it, being
        // preprocessed, queued for it, being read).
        EXPECT_LE(readWhenWritten[k], static_cast<int>(k) + 1 + 6) << "read too far ahead at write " << k;
    }
    EXPECT_EQ(reader.rowsRead, kRows);
}

TEST(Pipeline, HintsTheRowsAfterEachChunkBeforeReadingThem) {
    // Equal chunks (2 + 2 + 2 + 1) and the conveyor's own, which taper
    // (1 + 3 + 2 + 1: a hint made while the 2nd is read covers the 3rd and 4th).
    for (const auto& [chunkRows, expectedHints] : {std::pair{2, 2}, std::pair{0, 1}}) {
        SCOPED_TRACE("chunkRows " + std::to_string(chunkRows));
        Scan scan = makeScan();
        CountsReader reader(scan.lineIntegrals, scan.angles);
        VolumeJob job = jobFor(scan, "cpu-reference", chunkRows);
        MemoryWriter writer(kBins, kBins, kRows);
        reconstructVolume(reader, job, writer);
        ASSERT_GE(writer.writes.size(), 3u);

        // The first two chunks are read unhinted (all stages wait for the
        // first: nothing competes with it); while each later one is read, the
        // rows after it are hinted. So every row from the third chunk on is
        // hinted before it is read, once, and no hint reaches outside the rows.
        const int unhinted = writer.writes[0].second + writer.writes[1].second;
        ASSERT_FALSE(reader.calls.empty());
        EXPECT_EQ(reader.calls.front().kind, 'r');
        std::vector<bool> hinted(kRows, false);
        int hints = 0;
        for (const auto& [kind, first, count] : reader.calls) {
            ASSERT_GE(first, 0);
            ASSERT_GE(count, 1);
            ASSERT_LE(first + count, kRows);
            if (kind == 'p') {
                ++hints;
                for (int r = first; r < first + count; ++r) {
                    EXPECT_FALSE(hinted[static_cast<std::size_t>(r)]) << "row " << r << " hinted twice";
                    hinted[static_cast<std::size_t>(r)] = true;
                }
            } else {
                for (int r = std::max(first, unhinted); r < first + count; ++r)
                    EXPECT_TRUE(hinted[static_cast<std::size_t>(r)]) << "row " << r << " read before it was hinted";
            }
        }
        EXPECT_EQ(hints, expectedHints);
    }
}

TEST(Pipeline, RowsOutsideTheDatasetAreRejectedBeforeAnyWrite) {
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    VolumeJob job;
    job.geometry = scan.geometry;
    job.options = optionsFor("cpu-reference");
    MemoryWriter writer(kBins, kBins, kRows);
    for (auto [first, count] : {std::pair{-1, 2}, std::pair{kRows, 0}, std::pair{5, 3}, std::pair{0, -1},
                                std::pair{1, std::numeric_limits<int>::max()}}) { // first + count overflows int
        job.firstRow = first;
        job.rowCount = count;
        EXPECT_THROW(reconstructVolume(reader, job, writer), InvalidArgument) << first << " " << count;
    }
    EXPECT_TRUE(writer.writes.empty());
    EXPECT_FALSE(writer.committed);
}

TEST(Pipeline, GeometryThatDoesNotMatchTheDatasetIsRejected) {
    Scan scan = makeScan();
    CountsReader reader(scan.lineIntegrals, scan.angles);
    VolumeJob job;
    job.geometry = scan.geometry;
    job.geometry.geometry.angles.pop_back();
    job.options = optionsFor("cpu-reference");
    MemoryWriter writer(kBins, kBins, kRows);
    EXPECT_THROW(reconstructVolume(reader, job, writer), InvalidArgument);
    job.geometry = scan.geometry;
    job.geometry.geometry.bins = kBins + 2;
    EXPECT_THROW(reconstructVolume(reader, job, writer), InvalidArgument);
    EXPECT_FALSE(writer.committed);
}

} // namespace
} // namespace tomo
