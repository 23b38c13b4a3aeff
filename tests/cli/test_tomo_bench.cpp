// tomo-bench end to end: the table, the JSON file, the preview mode, errors.
#include "cli_runner.h"

#include "tomo/live.h"
#include "tomo/registry.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>

namespace tomo {
namespace {

using nlohmann::json;
using test::quoted;
using test::runTool;
using test::ToolRun;

ToolRun bench(const std::string& args, const test::TempDir& dir) {
    return runTool(TOMO_BENCH_EXE, args, dir.path());
}

std::set<std::string> availableStrategies() {
    std::set<std::string> names;
    for (const Backend* b : BackendRegistry::instance().backends())
        if (b->unavailableReason().empty()) names.insert(b->name());
    return names;
}

TEST(TomoBench, JsonHasARowPerStrategyWithSaneFigures) {
    test::TempDir dir;
    const auto file = dir / "bench.json";
    const ToolRun r = bench("--projections 32 --size 32 --slices 2 --repeat 1 --warmup 0 --json " + quoted(file), dir);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json doc = json::parse(test::readText(file));
    ASSERT_TRUE(doc["results"].is_array());
    std::set<std::string> seen;
    for (const json& row : doc["results"]) {
        seen.insert(row["strategy"].get<std::string>());
        EXPECT_GT(row["gups"].get<double>(), 0.0) << row.dump();
        EXPECT_GT(row["seconds_backproject"].get<double>(), 0.0) << row.dump();
        EXPECT_GE(row["seconds_end_to_end"].get<double>(), row["seconds_backproject"].get<double>() * 0.999)
            << row.dump();
        EXPECT_EQ(row["runs_seconds_backproject"].size(), 1u);
        if (row["family"] == "cpu") {
            EXPECT_GT(row["gups_per_core"].get<double>(), 0.0) << row.dump();
        }
    }
    for (const std::string& name : availableStrategies()) EXPECT_TRUE(seen.count(name)) << "no row for " << name;
    EXPECT_EQ(doc["problem"]["updates_per_run"].get<double>(), 32.0 * 32 * 2 * 32);
    // cpu-reference takes only float32: its float16 combinations are listed with the reason.
    bool listed = false;
    for (const json& k : doc["skipped"])
        listed |=
            k["strategy"] == "cpu-reference" && k["reason"].get<std::string>().find("float16") != std::string::npos;
    EXPECT_TRUE(listed) << doc["skipped"].dump();
    // cpu-reference against itself is a speed-up of exactly 1.
    for (const json& row : doc["results"])
        if (row["strategy"] == "cpu-reference") {
            EXPECT_DOUBLE_EQ(row["speedup_vs_cpu_reference"].get<double>(), 1.0);
        }
    // The table names every strategy that ran.
    for (const std::string& name : seen) EXPECT_NE(r.out.find(name), std::string::npos) << r.out;
}

TEST(TomoBench, VsRefIsTheSpeedUpOfEveryStrategyOverCpuReference) {
    // GPU and OpenCL rows printed "-" (null in the JSON) although
    // cpu-reference ran in the same run.
    std::string others;
    for (const Backend* b : BackendRegistry::instance().backends())
        if (b->family() != "cpu" && b->unavailableReason().empty() && b->isExact())
            others += ',' + b->name(); // (not "," + : GCC 12's -Wrestrict false positive)
    if (others.empty()) GTEST_SKIP() << "no GPU or OpenCL strategy is available here to compare with cpu-reference";
    test::TempDir dir;
    const auto file = dir / "bench.json";
    const ToolRun r = bench("--projections 32 --size 32 --slices 2 --repeat 1 --warmup 0 --interp linear "
                            "--precision float32 --slices-per-pass 1 --strategy cpu-reference" + others +
                                " --json " + quoted(file),
                            dir);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json doc = json::parse(test::readText(file));
    double reference = 0.0;
    for (const json& row : doc["results"])
        if (row["strategy"] == "cpu-reference") reference = row["gups"].get<double>();
    ASSERT_GT(reference, 0.0) << doc.dump();
    for (const json& row : doc["results"]) {
        ASSERT_TRUE(row["speedup_vs_cpu_reference"].is_number()) << row.dump();
        EXPECT_NEAR(row["speedup_vs_cpu_reference"].get<double>(), row["gups"].get<double>() / reference,
                    1e-9 * row["gups"].get<double>() / reference)
            << row.dump();
    }
}

TEST(TomoBench, ConeModeReportsGupsOfBothBackprojectors) {
    test::TempDir dir;
    const auto file = dir / "cone.json";
    const ToolRun r = bench("--cone --size 24 --projections 20 --repeat 1 --warmup 0 --threads 1 "
                            "--strategy cpu,cpu-reference --json " + quoted(file), dir);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("24^3 voxels from 20 views of 30x24"), std::string::npos) << r.out;
    const json doc = json::parse(test::readText(file));
    EXPECT_EQ(doc["mode"], "cone");
    ASSERT_EQ(doc["results"].size(), 2u);
    for (const json& row : doc["results"]) {
        EXPECT_GT(row["gups"].get<double>(), 0.0) << row.dump();
        EXPECT_DOUBLE_EQ(row["gups_per_core"].get<double>(), row["gups"].get<double>()); // one thread
        EXPECT_GT(row["gups_per_cpu_second"].get<double>(), 0.0) << row.dump();
    }
    EXPECT_EQ(doc["results"][1]["strategy"], "cpu-reference");
    // The iterative methods' divergent-beam pair: one CPU pair (cpu and cpu-reference share it).
    ASSERT_EQ(doc["iterative"].size(), 1u) << doc.dump();
    EXPECT_EQ(doc["iterative"][0]["pair"], "cpu-reference cone-beam joseph, matched");
    for (const char* key : {"forward_gups", "back_gups", "sirt_iteration_ms"})
        EXPECT_GT(doc["iterative"][0][key].get<double>(), 0.0) << key;
    test::expectOneLineError(TOMO_BENCH_EXE, "tomo-bench", "--cone --size 8 --projections 4 --strategy tex-standard",
                             dir.path(), 2, "cone-beam back-projector 'tex-standard' is not known");
}

TEST(TomoBench, OneMeasurementModeAtATime) {
    test::TempDir dir;
    test::expectOneLineError(TOMO_BENCH_EXE, "tomo-bench", "--iterative --stream --size 8 --projections 4",
                             dir.path(), 2, "--preview, --pipeline, --cone, --iterative and --stream each measure");
}

TEST(TomoBench, FiltersByStrategyAndOptions) {
    test::TempDir dir;
    const auto file = dir / "b.json";
    const ToolRun r = bench("--projections 16 --size 16 --slices 4 --repeat 2 --strategy cpu --interp linear "
                            "--precision float32 --slices-per-pass 2,4 --json " +
                                quoted(file),
                            dir);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json doc = json::parse(test::readText(file));
    ASSERT_EQ(doc["results"].size(), 2u) << doc.dump(1);
    for (const json& row : doc["results"]) {
        EXPECT_EQ(row["strategy"], "cpu");
        EXPECT_EQ(row["interpolation"], "linear");
        EXPECT_EQ(row["runs_seconds_backproject"].size(), 2u);
    }
}

TEST(TomoBench, PreviewReportsMilliseconds) {
    test::TempDir dir;
    const auto file = dir / "p.json";
    const ToolRun r = bench("--preview --projections 32 --size 32 --repeat 3 --json " + quoted(file), dir);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json doc = json::parse(test::readText(file));
    ASSERT_EQ(doc["results"].size(), 1u);
    const json& row = doc["results"][0];
    EXPECT_GT(row["median_ms_axis_change_to_slice"].get<double>(), 0.0);
    EXPECT_EQ(row["runs_ms"].size(), 3u);
    EXPECT_TRUE(availableStrategies().count(row["strategy"].get<std::string>())) << row.dump();
}

TEST(TomoBench, BadOptionsGiveOneLine) {
    test::TempDir dir;
    for (const char* args : {"--strategy warp-drive", "--slices-per-pass 3", "--interp cubic", "--size 0"}) {
        const ToolRun r = bench(args, dir);
        EXPECT_EQ(r.exitCode, 2) << args << ": " << r.err;
        EXPECT_EQ(r.errLines().size(), 1u) << args << ": " << r.err;
        EXPECT_EQ(r.err.rfind("tomo-bench: error: ", 0), 0u) << r.err;
    }
}

TEST(TomoBench, ListShowsStrategiesAndWhy) {
    test::TempDir dir;
    const ToolRun r = bench("--list", dir);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // GPUs, or why there are none (as tomo-recon --list-strategies).
    EXPECT_NE(r.out.find(gpuDevices().empty() ? "GPUs: none (" : "GPU 0: "), std::string::npos) << r.out;
    for (const Backend* b : BackendRegistry::instance().backends()) {
        EXPECT_NE(r.out.find(b->name()), std::string::npos) << r.out;
        if (!b->unavailableReason().empty()) {
            EXPECT_NE(r.out.find(b->unavailableReason()), std::string::npos);
        }
    }
}

/// Runs `tomo-bench --pipeline ARGS --strategy cpu` on the folder `work`
/// (created in `dir`) and returns its --json document (null on failure).
json pipelineJson(const std::string& args, const test::TempDir& dir, const std::filesystem::path& work, ToolRun& run) {
    std::filesystem::create_directory(work);
    const auto file = dir / "pipeline.json";
    run = bench("--pipeline " + args + " --strategy cpu --dir " + quoted(work) + " --json " + quoted(file), dir);
    EXPECT_EQ(run.exitCode, 0) << run.err;
    return run.exitCode == 0 ? json::parse(test::readText(file)) : json();
}

TEST(TomoBench, PipelineRunsColdAndWarmAndCleansUp) {
#if !TOMO_WITH_HDF5
    GTEST_SKIP() << "--pipeline writes a DXchange scan; this build has no HDF5 support";
#endif
    test::TempDir dir;
    const auto work = dir / "work";
    ToolRun r;
    const json doc = pipelineJson("--projections 48 --rows 6 --size 32 --memory-budget 0.5", dir, work, r);
    ASSERT_EQ(doc["runs"].size(), 2u);
    EXPECT_EQ(doc["runs"][0]["input"], "cold");
    EXPECT_EQ(doc["runs"][1]["input"], "warm");
    for (const json& run : doc["runs"]) {
        EXPECT_EQ(run["strategy"], "cpu");
        const double total = run["seconds_total"].get<double>();
        EXPECT_GT(total, 0.0);
        // Each stage's busy time lies within the run, and the floor is one of its parts.
        for (const char* stage : {"read", "preprocess", "reconstruct", "write"})
            EXPECT_LE(run["busy_seconds"][stage].get<double>(), total) << stage;
        EXPECT_GE(run["floor_seconds"].get<double>(), run["compute_seconds"].get<double>());
        EXPECT_DOUBLE_EQ(run["ratio"].get<double>(), total / run["floor_seconds"].get<double>());
        // What nothing overlaps: the setup's parts, the lead-in and the tail lie within the run.
        const double setup = run["seconds_setup"].get<double>();
        EXPECT_LE(run["seconds_setup_plan"].get<double>() + run["seconds_setup_output"].get<double>(), setup + 1e-9);
        EXPECT_GE(run["seconds_lead_in"].get<double>(), 0.0);
        EXPECT_GT(run["seconds_tail"].get<double>(), 0.0);
        EXPECT_LE(setup + run["seconds_lead_in"].get<double>() + run["seconds_tail"].get<double>(), total + 1e-9);
    }
    EXPECT_GT(doc["scan"]["bytes"].get<double>(), 48.0 * 6 * 32 * 2); // uint16 values and metadata
    EXPECT_TRUE(std::filesystem::is_empty(work)) << "scan, output or scratch file left behind";
}

TEST(TomoBench, OpenScanMeasuresTheWorkstationsPathAndCleansUp) {
#if !TOMO_WITH_HDF5
    GTEST_SKIP() << "--pipeline writes a DXchange scan; this build has no HDF5 support";
#endif
    test::TempDir dir;
    const auto work = dir / "work";
    ToolRun r;
    const json doc = pipelineJson("--open-scan --projections 48 --rows 20 --size 32", dir, work, r);
    EXPECT_EQ(doc["mode"], "open-scan");
    EXPECT_EQ(doc["strategy"], "cpu");
    EXPECT_EQ(doc["scan"]["rows"], 20);
    for (const char* key : {"open_ms", "first_slice_ms", "row_change_ms", "row_read_ms", "axis_change_ms"})
        EXPECT_GT(doc[key].get<double>(), 0.0) << key;
    EXPECT_NE(r.out.find("median over 8 rows not read before"), std::string::npos) << r.out;
    EXPECT_TRUE(std::filesystem::is_empty(work)) << "scan left behind";
}

TEST(TomoBench, PipelineWritesTheOutputTypeAsked) {
#if !TOMO_WITH_HDF5
    GTEST_SKIP() << "--pipeline writes a DXchange scan; this build has no HDF5 support";
#endif
    test::TempDir dir;
    const auto file = dir / "pipeline.json";
    const bool tiff = TOMO_WITH_TIFF; // a TIFF folder where this build writes them
    const ToolRun r = bench("--pipeline --projections 48 --rows 6 --size 32 --strategy cpu --output-type uint16 "
                            "--output-format " + std::string(tiff ? "tiff" : "h5") + " --dir " + quoted(dir.path()) +
                                " --json " + quoted(file),
                            dir);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find(tiff ? "6 slices of 32^2 uint16 (TIFF folder" : "6 slices of 32^2 uint16 (HDF5"),
              std::string::npos)
        << r.out;
    const json doc = json::parse(test::readText(file));
    EXPECT_EQ(doc["output"]["type"], "uint16");
    EXPECT_EQ(doc["output"]["bytes"].get<double>(), 2.0 * 6 * 32 * 32); // the write floor's bytes too
    for (const json& run : doc["runs"]) {
        EXPECT_GT(run["range_estimate_seconds"].get<double>(), 0.0);
        EXPECT_TRUE(run["clipped_values"].is_number_unsigned());
    }
}

TEST(TomoBench, PipelineCapsTheMemoryBudgetAsTomoReconDoes) {
#if !TOMO_WITH_HDF5
    GTEST_SKIP() << "--pipeline writes a DXchange scan; this build has no HDF5 support";
#endif
    test::TempDir dir;
    const ToolRun r = bench("--pipeline --projections 16 --rows 4 --size 16 --strategy cpu --memory-budget 1e5 --dir " +
                                quoted(dir.path()),
                            dir);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("warning: --memory-budget 1e+05 GiB is more than half of this machine's"), std::string::npos)
        << r.out;
}

TEST(TomoBench, PipelineTakesOneModeAndAFolder) {
    test::TempDir dir;
    ToolRun r = bench("--pipeline --interp nearest,linear --dir " + quoted(dir.path()), dir);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--pipeline takes one value of --interp"), std::string::npos) << r.err;
    r = bench("--pipeline --dir " + quoted(dir / "missing"), dir);
    EXPECT_EQ(r.exitCode, 3);
    EXPECT_NE(r.err.find("not a folder"), std::string::npos) << r.err;
    r = bench("--gzip 3", dir); // needs --pipeline
    EXPECT_EQ(r.exitCode, 2) << r.err;
}

TEST(TomoBench, StreamRecordsEveryFrameAndCountsWhatTheDisplaySkipped) {
    if (!zmqAvailable()) GTEST_SKIP() << "this build has no ZeroMQ (TOMO_WITH_ZMQ)";
    test::TempDir dir;
    const auto file = dir / "stream.json";
    const ToolRun r = bench("--stream --size 32 --rows 8 --projections 40 --record --rate 400 --strategy cpu --dir " +
                                quoted(dir.path()) + " --json " + quoted(file),
                            dir);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json doc = json::parse(test::readText(file));
    const json& ingest = doc["ingest"];
    EXPECT_EQ(ingest["frames_received"].get<int>(), 42) << ingest.dump(); // 40 projections, a flat, a dark
    EXPECT_EQ(ingest["frames_lost"].get<int>(), 0);
    EXPECT_EQ(ingest["projections_recorded"].get<int>(), 40);
    const json& live = doc["live"];
    EXPECT_EQ(live["frames_lost"].get<int>(), 0) << live.dump();
    // Each display update shows the newest snapshot; the last shows all 40:
    // every projection either had an update of its own or was skipped.
    EXPECT_EQ(live["frames_skipped_by_display"].get<int>() + live["display_updates"].get<int>(), 40) << live.dump();
    EXPECT_TRUE(std::filesystem::exists(dir / "recording.h5")); // --dir is where it goes
}

} // namespace
} // namespace tomo
