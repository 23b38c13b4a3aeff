// tomo-bench --pipeline's scaling table: --gpus runs the conveyor on the
// first 1, 2, 4, ... lanes and all (CPU lanes here: the indices only number
// them), each lane's share in the JSON; --mpi without a launcher is one
// rank; --writer-threads times the writer alone.
#include "cli_runner.h"

#include "tomo/cluster.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tomo {
namespace {

using nlohmann::json;
using test::quoted;
using test::runTool;
using test::ToolRun;

constexpr const char* kSmallScan = " --pipeline --strategy cpu --threads 1 --projections 48 --size 48 --rows 21";

TEST(TomoBenchScaling, GpusListRunsTheFirstOneTwoFourAndAllLanesEachCounted) {
#if !TOMO_WITH_HDF5
    GTEST_SKIP() << "--pipeline writes a DXchange scan; this build has no HDF5 support";
#endif
    test::TempDir dir;
    const auto file = dir / "scaling.json";
    const ToolRun r = runTool(TOMO_BENCH_EXE,
                              std::string(kSmallScan) + " --gpus 0,1,2 --dir " + quoted(dir.path()) + " --json " + quoted(file),
                              dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json doc = json::parse(test::readText(file));
    ASSERT_EQ(doc["runs"].size(), 6u); // 1, 2 and 3 lanes (the first 1, 2, then all), cold and warm
    const std::vector<std::size_t> lanes{1, 1, 2, 2, 3, 3};
    for (std::size_t i = 0; i < doc["runs"].size(); ++i) {
        const json& run = doc["runs"][i];
        ASSERT_EQ(run["devices"].size(), lanes[i]) << run.dump();
        ASSERT_EQ(run["lanes"].size(), lanes[i]) << run.dump();
        int slices = 0, chunks = 0;
        for (std::size_t k = 0; k < lanes[i]; ++k) {
            EXPECT_EQ(run["lanes"][k]["device"], run["devices"][k]);
            slices += run["lanes"][k]["slices"].get<int>();
            chunks += run["lanes"][k]["chunks"].get<int>();
        }
        EXPECT_EQ(slices, 21) << "the lanes' slices add up to the volume";
        EXPECT_GE(chunks, static_cast<int>(lanes[i])) << "the taper gives every lane a chunk to start with";
        EXPECT_GT(run["ratio"].get<double>(), 0.0);
    }
    EXPECT_DOUBLE_EQ(doc["runs"][0]["speedup_vs_first"].get<double>(), 1.0);
    EXPECT_NE(r.out.find("lanes input strategy"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("3 lanes, warm input: busy per device"), std::string::npos) << r.out;
    EXPECT_TRUE(test::readText(file).size() > 0);
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().filename(), "scaling.json") << "left behind";
}

TEST(TomoBenchScaling, ABadGpuListIsOneLine) {
    test::TempDir dir;
    test::expectOneLineError(TOMO_BENCH_EXE, "tomo-bench",
                             std::string(kSmallScan) + " --gpus 1,1 --dir " + quoted(dir.path()), dir.path(), 2,
                             "--gpus 1,1: GPU 1 is listed twice");
}

TEST(TomoBenchScaling, MpiWithoutALauncherIsOneRank) {
#if !TOMO_WITH_HDF5
    GTEST_SKIP() << "--pipeline writes a DXchange scan; this build has no HDF5 support";
#endif
    test::TempDir dir;
    const ToolRun r =
        runTool(TOMO_BENCH_EXE, std::string(kSmallScan) + " --mpi --dir " + quoted(dir.path()), dir.path());
    if (!mpiBuilt()) {
        EXPECT_EQ(r.exitCode, 2);
        EXPECT_NE(r.err.find("-DTOMO_WITH_MPI=ON"), std::string::npos) << r.err;
        return;
    }
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("running as one rank"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ranks input strategy"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1 ranks, cold input: busy per device"), std::string::npos) << r.out;
}

TEST(TomoBenchScaling, WriterThreadsTimesTheWriterAtEachCount) {
#if !TOMO_WITH_HDF5
    GTEST_SKIP() << "writes an HDF5 volume; this build has no HDF5 support";
#endif
    test::TempDir dir;
    const auto file = dir / "writer.json";
    const ToolRun r = runTool(TOMO_BENCH_EXE,
                              "--pipeline --writer-threads 1,2 --size 32 --rows 70 --output-type float16 --dir " +
                                  quoted(dir.path()) + " --json " + quoted(file),
                              dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json doc = json::parse(test::readText(file));
    ASSERT_EQ(doc["runs"].size(), 2u);
    EXPECT_EQ(doc["runs"][1]["threads"], 2);
    EXPECT_DOUBLE_EQ(doc["output"]["bytes"].get<double>(), 2.0 * 32 * 32 * 70);
    for (const json& run : doc["runs"]) EXPECT_GT(run["gb_per_s"].get<double>(), 0.0);
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().filename(), "writer.json") << "left behind";
}

} // namespace
} // namespace tomo
