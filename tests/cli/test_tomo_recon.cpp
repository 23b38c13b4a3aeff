// tomo-recon end to end: the built executable on phantom scans written as
// real files, compared with the true phantom and with itself.
#include "cli_runner.h"

#include "tomo/metrics.h"
#include "tomo/phantom.h"
#include "tomo/registry.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <regex>
#include <unistd.h>

namespace tomo {
namespace {

namespace fs = std::filesystem;
using test::numberAfter;
using test::quoted;
using test::runTool;
using test::ToolRun;

/// A small noise-free DXchange scan shared by the tests (written once).
constexpr int kBins = 64;
constexpr int kRows = 6;
constexpr int kAngles = 96;

PhantomSpec scanSpec() {
    PhantomSpec spec;
    spec.bins = kBins;
    spec.rows = kRows;
    return spec;
}

class TomoRecon : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        s_data = new test::TempDir;
        ScanSimulation sim;
        sim.poissonNoise = false;
        writePhantomDXchange(scan(), scanSpec(), uniformAngles(kAngles), sim);
    }
    static void TearDownTestSuite() {
        delete s_data;
        s_data = nullptr;
    }
    static fs::path scan() { return *s_data / "phantom.h5"; }

    ToolRun recon(const std::string& args) { return runTool(TOMO_RECON_EXE, args, m_dir.path()); }

    /// Non-zero exit `code` and exactly one stderr line that starts with the
    /// program's prefix and contains `needle`; no output file appears.
    void expectOneLineError(const std::string& args, int code, const std::string& needle) {
        test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon", args, m_dir.path(), code, needle);
    }

    test::TempDir m_dir;
    static test::TempDir* s_data;
};

test::TempDir* TomoRecon::s_data = nullptr;

/// Relative error of the volume against the true phantom inside the object.
QualityMetrics againstPhantom(const ImageStack& volume, int firstRow) {
    const PhantomSpec spec = scanSpec();
    const auto mask = discMask(kBins, kBins, spec.radiusFraction * kBins / 2.0);
    Image result(kBins, kBins * volume.depth), truth(kBins, kBins * volume.depth);
    std::vector<std::uint8_t> masks;
    for (int z = 0; z < volume.depth; ++z) {
        const Image t = rasterizePhantom(spec, firstRow + z, kBins, kBins);
        std::copy(t.data.begin(), t.data.end(), truth.data.begin() + z * t.size());
        const auto v = volume.image(z);
        std::copy(v.begin(), v.end(), result.data.begin() + z * t.size());
        masks.insert(masks.end(), mask.begin(), mask.end());
    }
    return compareImages(result, truth, masks);
}

TEST_F(TomoRecon, DemoPrintsFiguresAndWritesAReadableVolume) {
    const fs::path out = m_dir / "demo.h5";
    const ToolRun r = recon("--demo -o " + quoted(out));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err; // no progress bar when stderr is not a terminal
    EXPECT_NE(r.out.find("demo quality vs the true phantom"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(out.string()), std::string::npos) << "output path not printed:\n" << r.out;
    const double psnr = numberAfter(r.out, "PSNR");
    const double rmse = numberAfter(r.out, "RMSE");
    EXPECT_GT(psnr, 20.0) << r.out;
    EXPECT_GT(rmse, 0.0) << r.out;

    const ImageStack volume = readVolume(out);
    EXPECT_EQ(volume.width, 256);
    EXPECT_EQ(volume.height, 256);
    EXPECT_EQ(volume.depth, 16);
    for (float v : volume.data) ASSERT_TRUE(std::isfinite(v));

    // The demo scan went to a temporary folder that is gone again.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(scan to (\S+))"))) << r.out;
    EXPECT_FALSE(fs::exists(fs::path(m[1].str()).parent_path())) << m[1];
}

TEST_F(TomoRecon, ReconstructsTheDXchangeScanToThePhantomsValues) {
    const fs::path out = m_dir / "volume.h5";
    const ToolRun r = recon(quoted(scan()) + " -o " + quoted(out) + " --center 31.5 --quiet");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("tomo-recon: 6 slices of 64x64"), std::string::npos) << "no summary line:\n" << r.out;
    const ImageStack volume = readVolume(out);
    ASSERT_EQ(volume.depth, kRows);
    ASSERT_EQ(volume.width, kBins);
    const QualityMetrics q = againstPhantom(volume, 0);
    EXPECT_LT(q.relativeError, 0.25) << "RMSE " << q.rmse;

    // A wrong axis is measurably worse: the comparison can fail.
    const fs::path off = m_dir / "off.h5";
    ASSERT_EQ(recon(quoted(scan()) + " -o " + quoted(off) + " --center 34.5 --quiet").exitCode, 0);
    EXPECT_GT(againstPhantom(readVolume(off), 0).relativeError, 1.5 * q.relativeError);
}

TEST_F(TomoRecon, OutputRecordsTheParameters) {
    const fs::path out = m_dir / "recorded.h5";
    const ToolRun r = recon(quoted(scan()) + " -o " + quoted(out) + " --center 30.25 --interp nearest --filter hann -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // HDF5 keeps attribute names and string values as plain bytes in the
    // file: enough to see them without linking HDF5 here.
    const std::string bytes = test::readText(out);
    for (const char* text : {"software", "tomo-recon", "axis", "30.25", "interpolation", "nearest", "filter", "hann",
                             "strategy_requested", "run_config", "\"slices_per_pass\": 1", "command_line"})
        EXPECT_NE(bytes.find(text), std::string::npos) << "'" << text << "' not recorded";
}

TEST_F(TomoRecon, RowSubsetGivesTheSameSlicesAsTheFullRun) {
    // The part as TIFF where this build writes it: the two writers agree.
    const fs::path full = m_dir / "full.h5", part = m_dir / (TOMO_WITH_TIFF ? "part.tif" : "part.h5");
    ASSERT_EQ(recon(quoted(scan()) + " -o " + quoted(full) + " -q").exitCode, 0);
    const ToolRun r = recon(quoted(scan()) + " -o " + quoted(part) + " --rows 2:5 -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const ImageStack a = readVolume(full), b = readVolume(part);
    ASSERT_EQ(b.depth, 3);
    const float peak = *std::max_element(a.data.begin(), a.data.end());
    for (int z = 0; z < 3; ++z)
        for (std::size_t i = 0; i < b.imageSize(); ++i)
            ASSERT_NEAR(b.image(z)[i], a.image(z + 2)[i], 1e-6f * peak) << "slice " << z << " value " << i;
}

TEST_F(TomoRecon, AutoCenterFindsTheAxisOfACentredScan) {
    const fs::path out = m_dir / "auto.h5";
    const ToolRun r = recon(quoted(scan()) + " -o " + quoted(out) + " --auto-center -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NEAR(numberAfter(r.out, "axis"), 31.5, 0.25) << r.out;
    EXPECT_NE(r.out.find("found automatically on rows"), std::string::npos) << r.out;
    // Measured 1.00 on this noiseless phantom; a tenth less is allowed
    // (the run warns below 0.5, kAxisReliable).
    EXPECT_NEAR(numberAfter(r.out, "confidence"), 1.0, 0.1) << r.out;
}

TEST_F(TomoRecon, AutoCenterFindsAnOffCentreAxisInARawFile) {
    // Drop the first 9 detector columns: the axis moves from 47.5 to 38.5
    // while the detector centre becomes 43. Raw float32 transmissions,
    // [projection][row][column].
    constexpr int bins = 96, rows = 2, angles = 180, cut = 9, columns = bins - cut;
    PhantomSpec spec;
    spec.shapes = sheppLogan2D(); // every row is the full phantom (the 3D one is empty at its ends)
    spec.bins = bins;
    spec.rows = rows;
    spec.radiusFraction = 0.6; // the object stays inside the cropped detector
    const ImageStack p = projectPhantom(spec, uniformAngles(angles));
    std::vector<float> raw;
    for (int a = 0; a < angles; ++a)
        for (int row = 0; row < rows; ++row)
            for (int c = cut; c < bins; ++c)
                raw.push_back(std::exp(-p.image(row)[static_cast<std::size_t>(a) * bins + c]));
    const fs::path file = m_dir / "cropped.raw";
    {
        std::ofstream f(file, std::ios::binary);
        f.write(reinterpret_cast<const char*>(raw.data()), static_cast<std::streamsize>(raw.size() * sizeof(float)));
    }
    const ToolRun r =
        recon(quoted(file) + " --raw-shape " + std::to_string(angles) + "," + std::to_string(rows) + "," +
              std::to_string(columns) + " --raw-type float32 --auto-center -o " + quoted(m_dir / "c.h5") + " -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NEAR(numberAfter(r.out, "axis"), 47.5 - cut, 0.25) << r.out;
}

TEST_F(TomoRecon, ReferenceComparisonPrintsTheFiguresOfTheRowRange) {
    const fs::path exact = m_dir / "exact.h5", fast = m_dir / "fast.h5";
    ASSERT_EQ(recon(quoted(scan()) + " -o " + quoted(exact) + " --strategy cpu-reference -q").exitCode, 0);
    // Rows 1..2 against a reference holding every row: slices 1..2 of it are used.
    const ToolRun r = recon(quoted(scan()) + " -o " + quoted(fast) + " --rows 1:3 --interp nearest --reference " +
                            quoted(exact) + " -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    ASSERT_NE(r.out.find("vs reference"), std::string::npos) << r.out;

    const ImageStack all = readVolume(exact), part = readVolume(fast);
    ASSERT_EQ(part.depth, 2);
    Image result(kBins, 2 * kBins), reference(kBins, 2 * kBins);
    std::copy(part.data.begin(), part.data.end(), result.data.begin());
    std::copy(all.data.begin() + all.imageSize(), all.data.begin() + 3 * all.imageSize(), reference.data.begin());
    const QualityMetrics want = compareImages(result, reference);
    EXPECT_NEAR(numberAfter(r.out, "max abs error"), want.maxAbsError, 1e-3 * want.maxAbsError) << r.out;
    EXPECT_NEAR(numberAfter(r.out, "RMSE"), want.rmse, 1e-3 * want.rmse) << r.out;
    EXPECT_NEAR(numberAfter(r.out, "PSNR"), want.psnr, 0.01) << r.out;
    EXPECT_NEAR(numberAfter(r.out, "relative error"), 100 * want.relativeError, 0.5 * want.relativeError) << r.out;
    EXPECT_GT(want.rmse, 0.0); // nearest differs from linear

    // Identical settings: zero error.
    const ToolRun same = recon(quoted(scan()) + " -o " + quoted(m_dir / "same.h5") +
                               " --strategy cpu-reference -q --reference " + quoted(exact));
    ASSERT_EQ(same.exitCode, 0) << same.err;
    EXPECT_EQ(numberAfter(same.out, "max abs error"), 0.0) << same.out;

    // A reference of another shape is refused, naming it.
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "x.h5") + " --region 0,0,10,10 --reference " +
                           quoted(exact),
                       3, "exact.h5");
}

TEST_F(TomoRecon, OpenClStrategyRunsOnTheChosenDevice) {
    const ToolRun list = recon("--list-strategies");
    ASSERT_EQ(list.exitCode, 0) << list.err;
    EXPECT_NE(list.out.find("OpenCL"), std::string::npos) << list.out; // its devices, or why there are none
    if (const std::string why = openclStatus(); !why.empty()) GTEST_SKIP() << "no OpenCL device: " << why;
    EXPECT_NE(list.out.find("OpenCL 0: " + openclDevices().front().name), std::string::npos) << list.out;
    const fs::path exact = m_dir / "exact.h5";
    ASSERT_EQ(recon(quoted(scan()) + " -o " + quoted(exact) + " --rows 1:3 --strategy cpu-reference -q").exitCode, 0);
    const ToolRun r = recon(quoted(scan()) + " -o " + quoted(m_dir / "ocl.h5") +
                            " --rows 1:3 --strategy ocl-alu --opencl-device 0 --slices-per-pass 2 -q --reference " +
                            quoted(exact));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_LT(numberAfter(r.out, "relative error"), 1e-3) << r.out; // percent
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") +
                           " --strategy ocl-alu --opencl-device no-such-device-xyz",
                       2, "no-such-device-xyz");
}

TEST_F(TomoRecon, BadInputsGiveOneLineAndADistinctExitCode) {
    expectOneLineError(quoted(m_dir / "nonexistent.h5") + " -o " + quoted(m_dir / "o.h5"), 3, "nonexistent.h5");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") + " --rows 5:2", 2, "--rows");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") + " --rows 4:99", 2, "--rows");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") + " --strategy warp-drive", 2, "warp-drive");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") + " --slices-per-pass 3", 2,
                       "--slices-per-pass");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.xyz"), 2, "o.xyz");
    expectOneLineError(quoted(scan()), 2, "-o");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") + " --frobnicate", 2, "--frobnicate");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") + " --center 30 --auto-center", 2, "--center");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") + " --center nan", 2, "--center");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") + " --center 1e300", 2, "--center");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") + " --region 60,0,10,10", 2, "region");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") + " --tiff-bits 16 --range 0,1", 2, "TIFF");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.tif") + " --tiff-bits 8 --range 1,0", 2, "--range");
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") + " --raw-type uint16", 2, "--raw-shape");

    // Output exists: refused without --overwrite, left untouched.
    const fs::path existing = m_dir / "existing.h5";
    std::ofstream(existing) << "keep me";
    expectOneLineError(quoted(scan()) + " -o " + quoted(existing), 2, "--overwrite");
    EXPECT_EQ(test::readText(existing), "keep me");
    // The input is never the output, even with --overwrite.
    expectOneLineError(quoted(scan()) + " -o " + quoted(scan()) + " --overwrite", 2, "is the input");

    const fs::path offsets = m_dir / "offsets.txt";
    std::ofstream(offsets) << "0.1\n0.2\n0.3\n";
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "o.h5") + " --axis-offsets " + quoted(offsets), 2,
                       "offsets.txt");

    const fs::path corrupt = m_dir / "corrupt.h5";
    {
        std::ofstream f(corrupt, std::ios::binary);
        for (int i = 0; i < 4096; ++i) f.put(static_cast<char>((i * 7919) & 0xFF));
    }
    expectOneLineError(quoted(corrupt) + " -o " + quoted(m_dir / "o.h5"), 3, "corrupt.h5");

    // A truncated copy of a good file.
    const fs::path truncated = m_dir / "truncated.h5";
    fs::copy_file(scan(), truncated);
    fs::resize_file(truncated, fs::file_size(scan()) / 2);
    expectOneLineError(quoted(truncated) + " -o " + quoted(m_dir / "o.h5"), 3, "truncated.h5");
}

TEST_F(TomoRecon, OutputInsideAnInputDirectoryIsRefused) {
    // A TIFF stack is a directory: files written into it would join the dataset.
    const fs::path stack = m_dir / "stack";
    fs::create_directory(stack);
    expectOneLineError(quoted(stack) + " -o " + quoted(stack / "volume.tif"), 2, "inside the input directory");
    expectOneLineError(quoted(stack) + " -o " + quoted(stack / "sub" / "volume.h5"), 2, "inside the input directory");
    EXPECT_TRUE(fs::is_empty(stack));
}

TEST_F(TomoRecon, FailedDemoRemovesItsTemporaryFolder) {
    // Without -o the result would stay in the demo's folder; a failed run
    // must not leave the folder with the scan behind.
    const ToolRun r = recon("--demo --strategy warp-drive");
    EXPECT_EQ(r.exitCode, 2) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(scan to (\S+))"))) << r.out;
    EXPECT_FALSE(fs::exists(fs::path(m[1].str()).parent_path())) << m[1];
}

TEST_F(TomoRecon, OverwriteReplacesAnExistingOutput) {
    const fs::path out = m_dir / "o.h5";
    std::ofstream(out) << "old";
    const ToolRun r = recon(quoted(scan()) + " -o " + quoted(out) + " --overwrite -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(readVolume(out).depth, kRows);
}

TEST_F(TomoRecon, ConfigFileGivesTheSameResultAsTheSameOptions) {
    RunConfig cfg;
    cfg.input = scan();
    cfg.axis = 31.7;
    cfg.firstRow = 1;
    cfg.rowCount = 3;
    cfg.region = Region{4, 6, 40, 30};
    cfg.options.strategy = "cpu";
    cfg.options.interpolation = Interpolation::Nearest;
    cfg.options.filter.window = FilterWindow::Hann;
    cfg.options.filter.padding = Padding::Zero;
    const fs::path config = m_dir / "run.json";
    saveRunConfig(config, cfg);

    const fs::path a = m_dir / "a.h5", b = m_dir / "b.h5", c = m_dir / "c.h5";
    ToolRun r = recon("--config " + quoted(config) + " -o " + quoted(a) + " -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    r = recon(quoted(scan()) + " -o " + quoted(b) +
              " --center 31.7 --rows 1:4 --region 4,6,40,30 --strategy cpu --interp nearest --filter hann "
              "--padding zero -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const ImageStack va = readVolume(a), vb = readVolume(b);
    EXPECT_EQ(va.width, 40);
    EXPECT_EQ(va.height, 30);
    EXPECT_EQ(va.depth, 3);
    EXPECT_EQ(va.data, vb.data);

    // A command-line option overrides the file.
    r = recon("--config " + quoted(config) + " -o " + quoted(c) + " --interp linear -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(readVolume(c).data, va.data);
}

TEST_F(TomoRecon, AnglesFileEntriesFromTheCommandLineOrTheConfig) {
    // An angles file listing every frame: 3 dark/flat frames at the first
    // angle before the projections, 2 at the last one after them.
    const auto angles = uniformAngles(kAngles);
    std::string text = "# frame angles (degrees)\n";
    auto line = [&](double radians) {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "%.17g\n", radians * 180.0 / std::numbers::pi);
        text += buffer;
    };
    for (int i = 0; i < 3; ++i) line(angles.front());
    for (double a : angles) line(a);
    for (int i = 0; i < 2; ++i) line(angles.back());
    const fs::path frames = m_dir / "frames.txt";
    std::ofstream(frames) << text;

    const fs::path plain = m_dir / "plain.h5", found = m_dir / "found.h5", given = m_dir / "given.h5",
                   replay = m_dir / "replay.h5";
    ToolRun r = recon(quoted(scan()) + " -o " + quoted(plain) + " --rows 2:4 --strategy cpu -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // The layout is recognised ...
    r = recon(quoted(scan()) + " -o " + quoted(found) + " --rows 2:4 --strategy cpu --angles " + quoted(frames));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("from frames.txt entries 3..98"), std::string::npos) << r.out;
    // ... or the entries given.
    r = recon(quoted(scan()) + " -o " + quoted(given) + " --rows 2:4 --strategy cpu -q --angles " + quoted(frames) +
              " --angles-lines 3:99");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const ImageStack reference = readVolume(plain);
    EXPECT_LT(compareImages(readVolume(found).slice(0), reference.slice(0)).maxAbsError, 1e-6);
    EXPECT_EQ(readVolume(found).data, readVolume(given).data);
    // The record names the file and the entries found (HDF5 keeps the JSON
    // as plain bytes), and a run config with them replays the run.
    const std::string bytes = test::readText(found);
    EXPECT_NE(bytes.find("\"angles_file\": \"" + frames.string() + "\""), std::string::npos);
    EXPECT_NE(bytes.find("\"angles_lines\": [\n    3,\n    96\n  ]"), std::string::npos);
    RunConfig recorded;
    recorded.input = scan();
    recorded.open.anglesFile = frames;
    recorded.open.anglesLines = LineRange{3, kAngles};
    recorded.firstRow = 2;
    recorded.rowCount = 2;
    recorded.options.strategy = "cpu";
    const fs::path config = m_dir / "recorded.json";
    saveRunConfig(config, recorded);
    r = recon("--config " + quoted(config) + " -o " + quoted(replay) + " -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(readVolume(replay).data, readVolume(found).data);
    // Entries that are not one per projection: named.
    expectOneLineError(quoted(scan()) + " -o " + quoted(m_dir / "x.h5") + " --angles " + quoted(frames) +
                           " --angles-lines 3:98",
                       3, "(entries 3 to 97) holds 95 angles");
}

TEST_F(TomoRecon, BadConfigIsAOneLineFormatError) {
    const fs::path config = m_dir / "bad.json";
    std::ofstream(config) << R"({"input": "x.h5", "interpolation": "cubic"})";
    expectOneLineError("--config " + quoted(config) + " -o " + quoted(m_dir / "o.h5"), 3, "interpolation");
}

TEST_F(TomoRecon, HelpDocumentsEveryOptionAndTheExitCodes) {
    const ToolRun r = recon("--help");
    ASSERT_EQ(r.exitCode, 0);
    for (
        const char* option :
        {"--output",          "--center",       "--detector-center", "--auto-center", "--auto-tilt",
         "--auto-center-rows", "--center-rows",  "--center-sweep",    "--axis-offsets", "--rows",
         "--strategy",        "--interp",       "--precision",       "--slices-per-pass", "--filter",
         "--padding",         "--region",       "--angles",          "--raw-shape",   "--raw-type",
         "--output-type",     "--tiff-bits",    "--range",           "--reference",   "--config",
         "--device",          "--opencl-device", "--threads",     "--overwrite",       "--list-strategies", "--demo",
         "--quiet",           "--info",         "130"})
        EXPECT_NE(r.out.find(option), std::string::npos) << option;
}

TEST_F(TomoRecon, InfoDescribesTheInputAndWritesNothing) {
    const ToolRun r = recon("--info " + quoted(scan()));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    const std::string expected = "input: " + scan().string() + ": DXchange (HDF5), " + std::to_string(kAngles) +
                                 " projections x " + std::to_string(kRows) + " rows x " + std::to_string(kBins) +
                                 " columns, uint16, 4 flats, 4 darks, angles 0..";
    EXPECT_EQ(r.out.rfind(expected, 0), 0u) << r.out;
    // The last angle, printed with 5 significant digits.
    EXPECT_NEAR(numberAfter(r.out, "angles 0\\.\\."), 180.0 * (kAngles - 1) / kAngles, 0.01) << r.out;
    // -o and the reconstruction options are ignored: nothing is written.
    const fs::path out = m_dir / "o.h5";
    const ToolRun again = recon("--info " + quoted(scan()) + " -o " + quoted(out) + " --center 30 --rows 2");
    ASSERT_EQ(again.exitCode, 0) << again.err;
    EXPECT_EQ(again.out, r.out);
    EXPECT_TRUE(fs::is_empty(m_dir.path()));
    EXPECT_EQ(std::distance(fs::directory_iterator(scan().parent_path()), {}), 1) << "beside the scan";
}

TEST_F(TomoRecon, ListStrategiesNamesTheCpuOnes) {
    const ToolRun r = recon("--list-strategies");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("cpu-reference"), std::string::npos) << r.out;
}

TEST_F(TomoRecon, CtrlCCancelsAndLeavesNoOutput) {
    // A run of several seconds (the exact strategy on one thread), stopped
    // with SIGINT as soon as it says it is reconstructing.
    const fs::path out = m_dir / "interrupted.h5";
    const fs::path err = m_dir / "stderr.txt";
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::dup2(fds[1], STDOUT_FILENO);
        const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(e, STDERR_FILENO);
        ::close(fds[0]);
        ::execl(TOMO_RECON_EXE, TOMO_RECON_EXE, "--demo", "-o", out.c_str(), "--strategy", "cpu-reference", "--threads",
                "1", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(fds[1]);
    FILE* stdoutOfChild = ::fdopen(fds[0], "r");
    char line[4096];
    bool started = false;
    std::string seen;
    while (std::fgets(line, sizeof line, stdoutOfChild)) {
        seen += line;
        if (std::string(line).rfind("reconstructing", 0) == 0) {
            started = true;
            ::kill(pid, SIGINT);
            break;
        }
    }
    while (std::fgets(line, sizeof line, stdoutOfChild)) seen += line;
    std::fclose(stdoutOfChild);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(started) << seen;
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 130) << seen << test::readText(err);
    EXPECT_NE(test::readText(err).find("cancelled"), std::string::npos) << test::readText(err);
    EXPECT_FALSE(fs::exists(out));
    fs::remove(err);
    EXPECT_TRUE(fs::is_empty(m_dir.path())) << "a temporary output was left behind";
}

} // namespace
} // namespace tomo
