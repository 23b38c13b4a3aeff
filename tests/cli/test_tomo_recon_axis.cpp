// tomo-recon's axis options end to end: the finder by default, the detector
// centre on request, a tilted axis through two rows or fitted, the axis
// sweep, the run-config keys, and their errors.
#include "cli_runner.h"

#include "../core/axis_test_phantom.h"

#include "tomo/phantom.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

namespace tomo {
namespace {

namespace fs = std::filesystem;
using test::numberAfter;
using test::quoted;
using test::ToolRun;

constexpr int kBins = 64;
constexpr int kRows = 6;
constexpr int kAngles = 120;

/// A raw float32 scan of transmissions [projection][row][column] of the 2D
/// phantom with the axis of row r at 31.5 + (firstTenths + tenthsPerRow r) / 10.
void writeRawScan(const fs::path& path, int firstTenths, int tenthsPerRow, double angleRange = 180.0) {
    const auto angles = uniformAngles(kAngles, angleRange * std::numbers::pi / 180.0);
    const ImageStack p = test::tiltedPhantom(kBins, angles, kRows, firstTenths, tenthsPerRow);
    std::vector<float> raw;
    for (int a = 0; a < kAngles; ++a)
        for (int row = 0; row < kRows; ++row)
            for (int c = 0; c < kBins; ++c)
                raw.push_back(std::exp(-0.1f * p.image(row)[static_cast<std::size_t>(a) * kBins + c]));
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(raw.data()), static_cast<std::streamsize>(raw.size() * sizeof(float)));
}

class TomoReconAxis : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        s_data = new test::TempDir;
        writeRawScan(straight(), 23, 0); // axis 33.8 on every row
        writeRawScan(tilted(), -10, 3);  // axis 30.5 + 0.3 r
    }
    static void TearDownTestSuite() {
        delete s_data;
        s_data = nullptr;
    }
    static fs::path straight() { return *s_data / "straight.raw"; }
    static fs::path tilted() { return *s_data / "tilted.raw"; }

    /// tomo-recon on `scan` (raw layout added) with `args`.
    ToolRun recon(const fs::path& scan, const std::string& args) {
        return test::runTool(TOMO_RECON_EXE,
                             quoted(scan) + " --raw-shape " + std::to_string(kAngles) + "," + std::to_string(kRows) +
                                 "," + std::to_string(kBins) + " --strategy cpu " + args,
                             m_dir.path());
    }
    void expectOneLineError(const fs::path& scan, const std::string& args, int code, const std::string& needle) {
        test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon",
                                 quoted(scan) + " --raw-shape " + std::to_string(kAngles) + "," +
                                     std::to_string(kRows) + "," + std::to_string(kBins) + " " + args,
                                 m_dir.path(), code, needle);
    }
    /// The volume written to `name` by a successful run of `args`.
    ImageStack volume(const fs::path& scan, const std::string& name, const std::string& args) {
        const ToolRun r = recon(scan, "-o " + quoted(m_dir / name) + " " + args);
        EXPECT_EQ(r.exitCode, 0) << args << "\n" << r.err;
        return readVolume(m_dir / name);
    }

    test::TempDir m_dir;
    static test::TempDir* s_data;
};

test::TempDir* TomoReconAxis::s_data = nullptr;

TEST_F(TomoReconAxis, WithoutAnAxisTheFinderRunsAndSaysWhatItUsed) {
    const fs::path out = m_dir / "found.h5";
    const ToolRun r = recon(straight(), "-o " + quoted(out) + " -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // Quiet, yet the axis is printed: it is a result.
    const double axis = numberAfter(r.out, "axis");
    EXPECT_NEAR(axis, 33.8, 0.25) << r.out;
    EXPECT_NE(r.out.find("found automatically on rows 0, 1, 3, 4, 5"), std::string::npos) << r.out;
    EXPECT_GE(numberAfter(r.out, "confidence"), 0.5) << r.out;
    const std::string bytes = test::readText(out);
    for (const char* text : {"axis_source", "found automatically", "axis_confidence", "axis_rows_searched"})
        EXPECT_NE(bytes.find(text), std::string::npos) << text << " not recorded";
    // The axis printed (3 decimals: the finder's 1/8 px steps) is the one used.
    char given[32];
    std::snprintf(given, sizeof given, "%.3f", axis);
    EXPECT_EQ(readVolume(out).data, volume(straight(), "given.h5", std::string("--center ") + given + " -q").data);

    // --auto-center says the same; --detector-center skips the search.
    const ToolRun again = recon(straight(), "-o " + quoted(m_dir / "auto.h5") + " --auto-center -q");
    EXPECT_EQ(numberAfter(again.out, "axis"), axis) << again.out;
    const ToolRun centre = recon(straight(), "-o " + quoted(m_dir / "centre.h5") + " --detector-center");
    ASSERT_EQ(centre.exitCode, 0) << centre.err;
    EXPECT_NE(centre.out.find("axis 31.500 (detector centre)"), std::string::npos) << centre.out;
    EXPECT_EQ(centre.out.find("axis finder"), std::string::npos) << centre.out;
    EXPECT_EQ(readVolume(m_dir / "centre.h5").data, volume(straight(), "c.h5", "--center 31.5 -q").data);
}

TEST_F(TomoReconAxis, DataTheFinderCannotUseFallBackToTheCentreUnlessItWasAskedFor) {
    // 90 degrees of views: the finder needs 180.
    const fs::path quarter = m_dir / "quarter.raw";
    writeRawScan(quarter, 0, 0, 90.0);
    const ToolRun r = recon(quarter, "-o " + quoted(m_dir / "q.h5") + " --angle-range 90 -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("axis 31.500 (detector centre: the finder cannot run"), std::string::npos) << r.out;
    fs::remove(m_dir / "q.h5");
    expectOneLineError(quarter, "-o " + quoted(m_dir / "q.h5") + " --angle-range 90 --auto-center", 2,
                       "axis finder");
    fs::remove(quarter);
}

TEST_F(TomoReconAxis, CenterRowsGiveEachSliceTheAxisOfItsRow) {
    // The line through 30.5 on row 0 and 32.0 on row 5: 0.3 px per row.
    const ImageStack line = volume(tilted(), "line.h5", "--center-rows 0:30.5,5:32 -q");
    ASSERT_EQ(line.depth, kRows);
    for (int row : {0, 2, 5}) {
        char args[64];
        std::snprintf(args, sizeof args, "--rows %d --center %.10g -q", row, 30.5 + 0.3 * row);
        const ImageStack one = volume(tilted(), "row" + std::to_string(row) + ".h5", args);
        EXPECT_EQ(std::vector<float>(line.image(row).begin(), line.image(row).end()), one.data) << "row " << row;
    }
    const std::string bytes = test::readText(m_dir / "line.h5");
    for (const char* text : {"axis_tilt", "axis_row", "\"axis_tilt\": 0.3"})
        EXPECT_NE(bytes.find(text), std::string::npos) << text << " not recorded";

    // The same line from the run-config keys.
    RunConfig cfg;
    cfg.input = tilted();
    cfg.axis = 31.1;
    cfg.axisRow = 2;
    cfg.axisTilt = 0.3;
    saveRunConfig(m_dir / "tilt.json", cfg);
    EXPECT_EQ(volume(tilted(), "config.h5", "--config " + quoted(m_dir / "tilt.json") + " -q").data, line.data);
}

TEST_F(TomoReconAxis, AutoTiltFitsTheRowsAxes) {
    const ToolRun r = recon(tilted(), "-o " + quoted(m_dir / "fit.h5") + " --auto-tilt");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // Five rows, exact data: the line 30.5 + 0.3 r within the finder's steps.
    EXPECT_NEAR(numberAfter(r.out, "tilt"), 0.3, 0.03) << r.out;
    EXPECT_NEAR(numberAfter(r.out, "px/row ="), std::atan(0.3) * 180 / std::numbers::pi, 1.5) << r.out; // degrees
    EXPECT_LT(numberAfter(r.out, "fit residual"), 0.1) << r.out;
    const double axis = numberAfter(r.out, "\naxis"), row = numberAfter(r.out, "at row");
    EXPECT_NEAR(axis, 30.5 + 0.3 * row, 0.15) << r.out;
    EXPECT_NE(r.out.find("axis finder: row 5:"), std::string::npos) << r.out; // each row is listed
    // Asked for a constant axis instead, the rows disagree: less confidence.
    const ToolRun constant = recon(tilted(), "-o " + quoted(m_dir / "constant.h5") + " -q");
    EXPECT_LT(numberAfter(constant.out, "confidence"), numberAfter(r.out, "confidence")) << constant.out;
}

TEST_F(TomoReconAxis, AutoTiltOnOneRowSaysNoTiltWasFitted) {
    // A 1-row scan: the axis is found, but a tilt cannot be; this printed
    // no tilt and no warning.
    const fs::path one = m_dir / "one.h5";
    test::writeNoiselessScan(one, kBins, 1, kAngles);
    const ToolRun r = test::runTool(TOMO_RECON_EXE,
                                    quoted(one) + " --strategy cpu --auto-tilt -q -o " + quoted(m_dir / "o.h5"),
                                    m_dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("warning: --auto-tilt fitted no tilt: the axis was found on one detector row only (the "
                         "scan has one row), so the axis is taken as untilted"),
              std::string::npos)
        << r.out;
    EXPECT_NE(test::readText(m_dir / "o.h5").find("--auto-tilt fitted no tilt"), std::string::npos)
        << "not in axis_source";
    // One row named again and again: refused, the user meant several.
    expectOneLineError(tilted(), "-o " + quoted(m_dir / "x.h5") + " --auto-tilt --auto-center-rows 3,3,3", 2,
                       "--auto-center-rows 3,3,3 names one row");
}

TEST_F(TomoReconAxis, CenterSweepWritesOneSliceOfOneRowPerAxis) {
    const fs::path out = m_dir / "sweep.h5";
    const ToolRun r = recon(straight(), "-o " + quoted(out) + " --rows 1:4 --center-sweep 32.5:35:0.5");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("slice i has axis 32.5 + i x 0.5: 32.5,33,33.5,34,34.5,35"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("of row 2"), std::string::npos) << r.out; // the middle of rows 1..3
    const ImageStack sweep = readVolume(out);
    ASSERT_EQ(sweep.depth, 6);
    const std::string bytes = test::readText(out);
    for (const char* text : {"sweep_axes", "32.5,33,33.5,34,34.5,35", "sweep_row"})
        EXPECT_NE(bytes.find(text), std::string::npos) << text << " not recorded";
    for (int i : {0, 5}) {
        const ImageStack one = volume(straight(), "one" + std::to_string(i) + ".h5",
                                      "--rows 2 --center " + std::to_string(32.5 + 0.5 * i) + " -q");
        EXPECT_EQ(std::vector<float>(sweep.image(i).begin(), sweep.image(i).end()), one.data) << "slice " << i;
    }
}

TEST_F(TomoReconAxis, BadAxisOptionsGiveOneLineAndExitCode2) {
    const std::string o = "-o " + quoted(m_dir / "o.h5");
    expectOneLineError(straight(), o + " --center-sweep 35:32:0.5", 2, "--center-sweep 35:32:0.5");
    expectOneLineError(straight(), o + " --center-sweep 32:35", 2, "--center-sweep");
    expectOneLineError(straight(), o + " --center-sweep 0:1000:0.1", 2, "at most 1000");
    expectOneLineError(straight(), o + " --center-sweep 30:200:1", 2, "--center-sweep");
    expectOneLineError(straight(), o + " --center-sweep 30:32:1 --center 31", 2, "--center");
    expectOneLineError(straight(), o + " --center-sweep 30:32:1 --reference " + quoted(straight()), 2, "--reference");
    expectOneLineError(straight(), o + " --center-rows 3:30", 2, "--center-rows");
    expectOneLineError(straight(), o + " --center-rows 2:30,2:31", 2, "must differ");
    expectOneLineError(straight(), o + " --center-rows 0:30,5:x", 2, "'x' is not a number");
    expectOneLineError(straight(), o + " --center-rows 0:30,1:100", 2, "at row 5");
    expectOneLineError(straight(), o + " --center 30 --detector-center", 2, "--center");
    expectOneLineError(straight(), o + " --auto-center --auto-tilt", 2, "--auto");
    expectOneLineError(straight(), o + " --auto-center-rows 2,9", 2, "row 9");
    const fs::path config = m_dir / "bad.json";
    std::ofstream(config) << R"({"axis_tilt": 0.1})";
    expectOneLineError(straight(), o + " --config " + quoted(config), 3, "needs 'axis'");
    fs::remove(config);
}

} // namespace
} // namespace tomo
