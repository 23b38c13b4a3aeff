// What an MPI run is made of, tested in one process: the shared output
// (parts written by several writers, the record of the slices written, the
// commit only once complete, resuming), rank 0's slice dealer, errors
// carried between ranks, the order every rank gets, and a run on the
// one-process cluster that fails half-way and is resumed. The runs with
// several MPI ranks are in tests/mpi.
#include "pipeline_test_helpers.h"

#include "tomo/cluster.h"
#include "tomo/distributed.h"
#include "tomo/error.h"
#include "tomo/shared_volume.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <sys/stat.h>

namespace tomo {
namespace {

namespace fs = std::filesystem;
using namespace test;

constexpr int kWidth = 8, kHeight = 6, kSlices = 10;

/// Slice z of the test volume: distinct values everywhere.
std::vector<float> sliceValues(int first, int count) {
    std::vector<float> v(static_cast<std::size_t>(kWidth) * kHeight * count);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(first * kWidth * kHeight + i) * 0.25f;
    return v;
}

WriteOptions withAttributes(std::map<std::string, std::string> attributes) {
    WriteOptions o;
    o.threads = 2;
    o.attributes = std::move(attributes);
    o.attributes["command_line"] = "tomo-recon ..."; // differs between a run and its resumption
    return o;
}

std::vector<std::string> outputNames() {
    std::vector<std::string> names;
#if TOMO_WITH_HDF5
    names.push_back("volume.h5");
#endif
#if TOMO_WITH_TIFF
    names.push_back("slices"); // a folder of TIFFs
#endif
    return names;
}

/// Writes `span` through `writer` and records it as `rank`'s.
void writeSpan(VolumeWriter& writer, SharedVolume& output, SliceSpan span, int rank) {
    writer.writeSlices(span.first, span.count, sliceValues(span.first, span.count));
    output.record(span, rank);
}

TEST(SharedVolume, PartsWrittenByTwoWritersInAnyOrderCommitToTheTarget) {
    if (outputNames().empty()) GTEST_SKIP() << "this build writes neither HDF5 nor TIFF";
    for (const std::string& name : outputNames()) {
        SCOPED_TRACE(name);
        TempDir dir;
        const WriteOptions options = withAttributes({{"strategy", "cpu"}});
        SharedVolume output = SharedVolume::create(dir / name, kWidth, kHeight, kSlices, options, false);
        EXPECT_FALSE(output.resumed());
        EXPECT_EQ(output.missing(), (std::vector<SliceSpan>{{0, kSlices}}));
        ASSERT_TRUE(fs::exists(output.temporary()));
        ASSERT_TRUE(fs::exists(output.record()));
        // Rank 0's writer and another rank's, made from the layout alone.
        auto own = output.writer(options, true);
        auto other = SharedVolume::fromLayout(output.layout()).writer(options, false);
        writeSpan(*other, output, {6, 4}, 1);
        writeSpan(*own, output, {0, 3}, 0);
        writeSpan(*other, output, {3, 3}, 1);
        own->commit();
        other->commit();
        EXPECT_TRUE(output.missing().empty());
        EXPECT_FALSE(fs::exists(dir / name));
        output.commit();
        const ImageStack volume = readVolume(dir / name);
        EXPECT_EQ(volume.data, sliceValues(0, kSlices));
        EXPECT_FALSE(fs::exists(output.temporary()));
        EXPECT_FALSE(fs::exists(output.record()));
    }
}

#if TOMO_WITH_HDF5
TEST(SharedVolume, ARanksWriterOnTheSameHostReservesOnlyTheChunksItWrites) {
    // Every rank maps the one file; had each reserved (allocated and
    // populated) the file from its start up to its own chunks, as the
    // writer of one process does, N ranks would reserve it N times and
    // hold the others' pages mapped: the 2-rank run of a 2048^3 volume took
    // 2.4x the time of one process on the same GPUs (H200).
    TempDir dir;
    constexpr int kSide = 2048, kMany = 16, kWritten = 4; // 16 MiB slices: 256 MiB, four reserving steps
    WriteOptions options;
    options.threads = 2;
    SharedVolume output = SharedVolume::create(dir / "v.h5", kSide, kSide, kMany, options, false);
    const std::vector<float> values(static_cast<std::size_t>(kSide) * kSide * kWritten, 1.5f);
    {
        auto writer = SharedVolume::fromLayout(output.layout()).writer(options, /*sameHost=*/true);
        // Told of its slices as its conveyor takes them (some past the end:
        // passed over), it reserves their chunks ahead of the writes.
        writer->expect(kMany - kWritten, kWritten);
        writer->expect(kMany - 2, 10);
        writer->writeSlices(kMany - kWritten, kWritten, values);
        writer->commit();
    }
    struct stat status {};
    ASSERT_EQ(::stat(output.temporary().c_str(), &status), 0);
    const double held = static_cast<double>(status.st_blocks) * 512.0;
    const double written = static_cast<double>(values.size() * sizeof(float));
    // The last 4 slices (64 MiB) and the file's header: measured 64.0 MiB.
    EXPECT_LT(held, 1.5 * written) << "bytes allocated: " << held;
    output.record({kMany - kWritten, kWritten}, 1);
    EXPECT_EQ(readVolume(output.temporary()).data,
              [&] {
                  std::vector<float> v(static_cast<std::size_t>(kSide) * kSide * kMany, 0.0f);
                  std::fill(v.end() - static_cast<std::ptrdiff_t>(values.size()), v.end(), 1.5f);
                  return v;
              }())
        << "the slices written, and zeros (holes) in the others";
}
#endif

TEST(SharedVolume, NothingIsCommittedWhileASliceIsNotRecordedAndResumeRedoesOnlyThose) {
    if (outputNames().empty()) GTEST_SKIP() << "this build writes neither HDF5 nor TIFF";
    for (const std::string& name : outputNames()) {
        SCOPED_TRACE(name);
        TempDir dir;
        const WriteOptions options = withAttributes({{"axis", "3.5"}});
        fs::path temporary;
        {
            SharedVolume output = SharedVolume::create(dir / name, kWidth, kHeight, kSlices, options, false);
            temporary = output.temporary();
            auto writer = output.writer(options, true);
            writeSpan(*writer, output, {0, 4}, 0);
            writeSpan(*writer, output, {7, 2}, 2);
            // Slices 4..6 are written but never recorded (a rank lost before
            // it reported them): they count as missing.
            writer->writeSlices(4, 3, sliceValues(4, 3));
            writer->commit();
            try {
                output.commit();
                FAIL() << "committed with slices missing";
            } catch (const IoError& e) {
                EXPECT_NE(std::string(e.what()).find("slice 4 of 10 was never written"), std::string::npos) << e.what();
                EXPECT_NE(std::string(e.what()).find("--resume"), std::string::npos) << e.what();
            }
        } // a failed run: what was recorded stays
        EXPECT_FALSE(fs::exists(dir / name));
        ASSERT_TRUE(fs::exists(temporary));

        // Without --resume the partial output is in the way; with it, only
        // the slices not recorded are left to do.
        try {
            SharedVolume::create(dir / name, kWidth, kHeight, kSlices, options, false);
            FAIL() << "an earlier partial output was ignored";
        } catch (const IoError& e) {
            EXPECT_NE(std::string(e.what()).find("a partial output of an earlier run is there"), std::string::npos);
            EXPECT_NE(std::string(e.what()).find("6 of 10 slices written"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("add --resume to finish it, or --overwrite to start again"),
                      std::string::npos);
        }
        ASSERT_TRUE(fs::exists(temporary)) << "a refused run deleted the partial output";
        WriteOptions resumed = options;
        resumed.attributes["command_line"] = "tomo-recon ... --resume";
        SharedVolume output = SharedVolume::create(dir / name, kWidth, kHeight, kSlices, resumed, true);
        EXPECT_TRUE(output.resumed());
        EXPECT_EQ(output.slicesWritten(), 6);
        EXPECT_EQ(output.missing(), (std::vector<SliceSpan>{{4, 3}, {9, 1}}));
        auto writer = output.writer(resumed, true);
        writeSpan(*writer, output, {4, 3}, 1);
        writeSpan(*writer, output, {9, 1}, 0);
        writer->commit();
        output.commit();
        EXPECT_EQ(readVolume(dir / name).data, sliceValues(0, kSlices));
        EXPECT_TRUE(fs::is_empty(dir.path()) || fs::exists(dir / name));
        EXPECT_FALSE(fs::exists(output.record()));
    }
}

TEST(SharedVolume, ResumingWithOtherParametersIsRefusedNamingTheFirstThatDiffers) {
    if (outputNames().empty()) GTEST_SKIP() << "this build writes neither HDF5 nor TIFF";
    TempDir dir;
    const fs::path target = dir / outputNames().front();
    {
        SharedVolume output = SharedVolume::create(target, kWidth, kHeight, kSlices, withAttributes({{"axis", "3.5"}}), false);
        auto writer = output.writer(WriteOptions{}, true);
        writeSpan(*writer, output, {0, 2}, 0);
    }
    try {
        SharedVolume::create(target, kWidth, kHeight, kSlices, withAttributes({{"axis", "3.75"}}), true);
        FAIL() << "resumed with another axis";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("was made with other parameters ('axis' \"3.5\" there, \"3.75\" now)"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(SharedVolume::create(target, kWidth, kHeight + 1, kSlices, withAttributes({{"axis", "3.5"}}), true),
                 InvalidArgument);
    // --overwrite starts again.
    WriteOptions again = withAttributes({{"axis", "3.75"}});
    again.overwrite = true;
    SharedVolume output = SharedVolume::create(target, kWidth, kHeight, kSlices, again, false);
    EXPECT_FALSE(output.resumed());
    EXPECT_EQ(output.slicesWritten(), 0);
}

TEST(SharedVolume, ARecordLineCutShortIsRedoneAndANewOutputWithoutSlicesLeavesNothing) {
    if (outputNames().empty()) GTEST_SKIP() << "this build writes neither HDF5 nor TIFF";
    TempDir dir;
    const fs::path target = dir / outputNames().front();
    fs::path record;
    {
        SharedVolume output = SharedVolume::create(target, kWidth, kHeight, kSlices, withAttributes({}), false);
        record = output.record();
        auto writer = output.writer(WriteOptions{}, true);
        writeSpan(*writer, output, {0, 2}, 0);
    }
    { // a crash in the middle of a line
        std::ofstream out(record, std::ios::app);
        out << "2 5 ";
    }
    {
        SharedVolume output = SharedVolume::create(target, kWidth, kHeight, kSlices, withAttributes({}), true);
        EXPECT_EQ(output.missing(), (std::vector<SliceSpan>{{2, 8}}));
    }
    TempDir other;
    { SharedVolume output = SharedVolume::create(other / outputNames().front(), kWidth, kHeight, kSlices, withAttributes({}), false); }
    EXPECT_TRUE(fs::is_empty(other.path())) << "a new output that got no slice was left behind";
}

TEST(SharedVolume, AMultiPageTiffIsRefused) {
    TempDir dir;
    try {
        SharedVolume::create(dir / "volume.tif", kWidth, kHeight, kSlices, WriteOptions{}, false);
        FAIL() << "no error";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("a multi-page TIFF is appended page by page by one process"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(SliceDealer, HandsOutEverySliceOnceInGuidedSpansThatShrinkAndStops) {
    std::vector<std::pair<SliceSpan, int>> written;
    SliceDealer dealer({{0, 40}, {50, 20}}, 2, 2, [&](const SliceSpan& s, int rank) { written.emplace_back(s, rank); });
    EXPECT_EQ(dealer.slicesToDo(), 60);
    std::vector<int> seen(70, 0);
    std::vector<int> sizes;
    while (const auto span = dealer.take(16, static_cast<int>(sizes.size() % 2))) {
        ASSERT_GE(span->count, 1);
        for (int z = span->first; z < span->first + span->count; ++z) ++seen[static_cast<std::size_t>(z)];
        sizes.push_back(span->count);
        dealer.written(*span, static_cast<int>(sizes.size() % 2));
    }
    for (int z = 0; z < 70; ++z) EXPECT_EQ(seen[static_cast<std::size_t>(z)], (z < 40 || z >= 50) ? 1 : 0) << z;
    // At most what was asked (16) and a quarter of what is left, in whole
    // passes of 2 where possible: 60 left -> 14, 46 -> 12 (then the first
    // range's end), ... down to single passes.
    EXPECT_EQ(sizes.front(), 14);
    EXPECT_EQ(sizes[1], 12);
    EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.begin() + 2, std::greater<>()));
    EXPECT_EQ(sizes.back() <= 2, true);
    EXPECT_DOUBLE_EQ(dealer.fractionWritten(), 1.0);
    EXPECT_EQ(written.size(), sizes.size());

    SliceDealer stopped({{0, 10}}, 1, 1, {});
    EXPECT_TRUE(stopped.take(3, 0).has_value());
    stopped.stop();
    EXPECT_FALSE(stopped.take(3, 0).has_value());
}

TEST(ClusterErrors, AnErrorOfAnotherRankIsThrownAgainAsTheSameKindNamingIt) {
    const auto again = [](const std::exception& e) {
        try {
            rethrowError(errorText(e), Cluster::rankPrefix(2, "node7"));
        } catch (const std::exception& thrown) {
            return std::pair<std::string, std::string>(typeid(thrown).name(), thrown.what());
        }
        return std::pair<std::string, std::string>();
    };
    EXPECT_EQ(again(IoError("x.h5: disk full")), std::make_pair(std::string(typeid(IoError).name()),
                                                                std::string("rank 2 on node7: x.h5: disk full")));
    EXPECT_EQ(again(DeviceError("GPU 1 failed")).first, typeid(DeviceError).name());
    EXPECT_EQ(again(TooManyClampedValues("rows 0..3")).first, typeid(TooManyClampedValues).name());
    EXPECT_EQ(again(OutOfMemory("no")).first, typeid(OutOfMemory).name());
    EXPECT_EQ(again(std::bad_alloc()), std::make_pair(std::string(typeid(OutOfMemory).name()),
                                                      std::string("rank 2 on node7: out of host memory")));
    EXPECT_EQ(again(Cancelled()).first, typeid(Cancelled).name());
    EXPECT_EQ(again(std::runtime_error("a bug")).first, typeid(Error).name());
}

// The GPU of each rank on a host without --gpus: the rank's local rank among
// the host's GPUs, for a CUDA strategy and for auto (which every rank of a
// 2-GPU host once ran on GPU 0: measured 2 ranks on one H200 of two).
TEST(RankDevices, EachRankOfAHostTakesItsOwnGpuForAutoAndCudaStrategies) {
    const std::vector<GpuDevice> two{{0, "first", 132, 0, 9, 0}, {1, "second", 132, 0, 9, 0}};
    for (const std::string strategy : {"auto", "alu"}) {
        if (strategy != "auto" && !BackendRegistry::instance().find(strategy)) continue; // a build without CUDA
        EXPECT_EQ(rankDevices("", strategy, 0, two), std::vector<int>{0}) << strategy;
        EXPECT_EQ(rankDevices("", strategy, 1, two), std::vector<int>{1}) << strategy;
        EXPECT_EQ(rankDevices("", strategy, 2, two), std::vector<int>{0}) << strategy;
    }
    EXPECT_EQ(rankDevices("1", "auto", 0, two), std::vector<int>{1});
    EXPECT_EQ(rankDevices("0,1", "auto", 1, two), (std::vector<int>{0, 1}));
    // No GPU: auto and the CPU strategies run on the rank's cores.
    EXPECT_TRUE(rankDevices("", "auto", 1, {}).empty());
    EXPECT_TRUE(rankDevices("", "cpu", 1, two).empty());
}

TEST(DistributedOrder, EveryRankGetsRankZerosJobExactly) {
    DistributedOrder order;
    order.input = "/data/scan.h5";
    order.open.anglesFile = fs::path("/data/angles.txt");
    order.open.logCorrected = true;
    order.job.firstRow = 3;
    order.job.rowCount = 17;
    order.job.options.strategy = "hybrid";
    order.job.options.slicesPerPass = 2;
    order.job.options.tuning = "shape=1,share=6";
    order.job.options.precision = Precision::Float16;
    order.job.corrections.zingers.enabled = true;
    order.job.geometry.geometry.angles = {0.0, 0.1 + 1e-17, 3.0 / 7.0};
    order.job.geometry.geometry.bins = 64;
    order.job.geometry.geometry.axis = 31.123456789012345;
    order.job.geometry.sliceWidth = order.job.geometry.sliceHeight = 64;
    order.job.geometry.region = Region{1, 2, 30, 40};
    order.job.axisLine = AxisLine{31.1, 0.0125, 8.0};
    order.job.memoryBudget = 123456789;
    order.gpus = "0,1";
    order.write.type = OutputType::UInt16;
    order.write.rangeMin = -0.5f;
    order.write.rangeMax = 1.25f;
    order.layout = "{\"kind\":\"hdf5\"}";
    const DistributedOrder back = orderFromJson(orderToJson(order));
    EXPECT_EQ(back.input, order.input);
    EXPECT_EQ(back.open.anglesFile, order.open.anglesFile);
    EXPECT_TRUE(back.open.logCorrected);
    EXPECT_EQ(back.job.firstRow, 3);
    EXPECT_EQ(back.job.rowCount, 17);
    EXPECT_EQ(back.job.options.strategy, "hybrid");
    EXPECT_EQ(back.job.options.slicesPerPass, 2);
    EXPECT_EQ(back.job.options.tuning, "shape=1,share=6");
    EXPECT_EQ(back.job.options.precision, Precision::Float16);
    EXPECT_TRUE(back.job.corrections.zingers.enabled);
    EXPECT_EQ(back.job.geometry.geometry.angles, order.job.geometry.geometry.angles); // bit for bit
    EXPECT_EQ(back.job.geometry.geometry.axis, order.job.geometry.geometry.axis);
    EXPECT_EQ(back.job.geometry.region.height, 40);
    ASSERT_TRUE(back.job.axisLine.has_value());
    EXPECT_EQ(back.job.axisLine->tilt, 0.0125);
    EXPECT_EQ(back.job.memoryBudget, 123456789u);
    EXPECT_EQ(back.gpus, "0,1");
    EXPECT_EQ(back.write.type, OutputType::UInt16);
    EXPECT_EQ(back.write.rangeMax, 1.25f);
    EXPECT_EQ(back.layout, order.layout);
    EXPECT_THROW(orderFromJson("{\"config\": 1}"), FormatError);
}

/// The counts reader, failing at row `failAt` (a read that reaches it), but
/// only once the rows before that read are in the output, so that what is
/// recorded is known.
class FailingReader final : public DatasetReader {
public:
    FailingReader(CountsReader& inner, int failAt, const SharedVolume& output)
        : m_inner(inner), m_failAt(failAt), m_output(output) {
        m_info = inner.info();
    }
    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        if (firstRow + rowCount > m_failAt) {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            while (m_output.slicesWritten() < firstRow && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            throw IoError("phantom-counts: row " + std::to_string(m_failAt) + " is unreadable");
        }
        m_inner.readSinograms(firstRow, rowCount, out);
    }
    bool readMeanFlat(int first, int count, std::span<float> out) override { return m_inner.readMeanFlat(first, count, out); }
    bool readMeanDark(int first, int count, std::span<float> out) override { return m_inner.readMeanDark(first, count, out); }

private:
    CountsReader& m_inner;
    int m_failAt;
    const SharedVolume& m_output;
};

TEST(Distributed, ARunThatFailsHalfWayKeepsItsSlicesAndItsResumptionEqualsOneRun) {
#if !TOMO_WITH_HDF5
    GTEST_SKIP() << "writes an HDF5 volume; this build has no HDF5 support";
#endif
    constexpr int kRowsHere = 13;
    Scan scan = makeScan(kRowsHere);
    CountsReader counts(scan.lineIntegrals, scan.angles);
    DistributedOrder order;
    order.job = jobFor(scan, "cpu-reference", 2); // spans of two rows
    order.job.rowCount = kRowsHere;
    order.write = withAttributes({{"strategy", "cpu-reference"}});
    MemoryWriter expected(kBins, kBins, kRowsHere);
    reconstructVolume(counts, order.job, expected);

    TempDir dir;
    const auto cluster = Cluster::local();
    {
        SharedVolume output = SharedVolume::create(dir / "v.h5", kBins, kBins, kRowsHere, order.write, false);
        order.layout = output.layout();
        FailingReader failing(counts, 6, output);
        try {
            reconstructOnCluster(*cluster, failing, order, output);
            FAIL() << "no error";
        } catch (const IoError& e) {
            const std::string text = e.what();
            EXPECT_EQ(text.rfind("phantom-counts: row 6 is unreadable (the ", 0), 0u) << text;
            EXPECT_NE(text.find(" of 13 slices written are kept in "), std::string::npos) << text;
            EXPECT_NE(text.find(": run again with --resume to finish)"), std::string::npos) << text;
        }
        EXPECT_GE(output.slicesWritten(), 3); // spans of 1 then 2 rows: rows 0..4 come before the failing read
        EXPECT_FALSE(fs::exists(dir / "v.h5"));
    }
    SharedVolume output = SharedVolume::create(dir / "v.h5", kBins, kBins, kRowsHere, order.write, true);
    ASSERT_TRUE(output.resumed());
    const int before = output.slicesWritten();
    order.layout = output.layout();
    const DistributedReport report = reconstructOnCluster(*cluster, counts, order, output);
    EXPECT_EQ(report.slicesBefore, before);
    ASSERT_EQ(report.ranks.size(), 1u);
    EXPECT_EQ(report.ranks[0].report.slices, kRowsHere - before) << "only the missing slices were redone";
    EXPECT_EQ(readVolume(dir / "v.h5").data, expected.volume.data);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), {}), 1) << "the partial output and its record are gone";
}

} // namespace
} // namespace tomo
