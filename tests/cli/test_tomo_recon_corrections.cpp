// tomo-recon's correction options end to end: raw transmission files with
// faults, the report and the stored parameters, the option errors, 360°
// half acquisition, and --config against the same options.
#include "cli_runner.h"

#include "tomo/phantom.h"
#include "tomo/volume_io.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numbers>
#include <regex>

namespace tomo {
namespace {

namespace fs = std::filesystem;
using test::quoted;
using test::runTool;
using test::ToolRun;

constexpr int kBins = 64, kRows = 2;

/// Raw float32 transmissions [projection][row][column] of the 2D phantom
/// on `bins` columns, columns [first, first + columns) of the detector.
fs::path writeRaw(const fs::path& file, const std::vector<double>& angles, int bins, int first, int columns,
                  const std::function<void(int, int, int, float&)>& fault = {}) {
    PhantomSpec spec;
    spec.shapes = sheppLogan2D();
    spec.bins = bins;
    spec.rows = kRows;
    const ImageStack p = projectPhantom(spec, angles);
    std::vector<float> raw;
    for (int a = 0; a < static_cast<int>(angles.size()); ++a)
        for (int r = 0; r < kRows; ++r)
            for (int c = first; c < first + columns; ++c) {
                float v = std::exp(-p.image(r)[static_cast<std::size_t>(a) * bins + c]);
                if (fault) fault(a, r, c - first, v);
                raw.push_back(v);
            }
    std::ofstream f(file, std::ios::binary);
    f.write(reinterpret_cast<const char*>(raw.data()), static_cast<std::streamsize>(raw.size() * sizeof(float)));
    return file;
}

std::string rawShape(int projections, int columns) {
    return " --raw-shape " + std::to_string(projections) + "," + std::to_string(kRows) + "," + std::to_string(columns);
}

class TomoReconCorrections : public ::testing::Test {
protected:
    ToolRun recon(const std::string& args) { return runTool(TOMO_RECON_EXE, args, m_dir.path()); }
    test::TempDir m_dir;
};

TEST_F(TomoReconCorrections, ReportsAndStoresWhatTheCorrectionsDid) {
    // A zero value (row 1, projection 5, column 10) and a brighter column.
    const fs::path in =
        writeRaw(m_dir / "faults.raw", uniformAngles(90), kBins, 0, kBins, [](int a, int r, int c, float& v) {
            if (a == 5 && r == 1 && c == 10) v = 0.0f;
            if (c == 40) v *= 1.05f;
        });
    const fs::path out = m_dir / "fixed.h5";
    const ToolRun r = recon(quoted(in) + rawShape(90, kBins) + " -o " + quoted(out) +
                            " --rings all --zingers --zinger-threshold 0.5 --list-bad-pixels");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("corrections: dead pixels, zingers (0.5, 5x5), rings all"), std::string::npos) << r.out;
    // The ring damage guard's worst row, in the summary.
    EXPECT_NE(r.out.find("ring removal: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("% of the object's angular signal changed (row "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("values <= 0 or saturated, interpolated along the row: 1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  row 1 projection 5 column 10"), std::string::npos) << r.out;
    const std::string bytes = test::readText(out);
    for (const char* text : {"corrections_summary", "\"method\": \"all\"", "\"threshold\": 0.5", "row_margin"})
        EXPECT_NE(bytes.find(text), std::string::npos) << "'" << text << "' not recorded";

    // The same corrections from a run config give the same volume.
    const fs::path config = m_dir / "run.json";
    {
        std::ofstream f(config);
        f << R"({"corrections": {"rings": {"method": "all"}, "zingers": {"enabled": true, "threshold": 0.5}}})";
    }
    const fs::path viaConfig = m_dir / "config.h5";
    const ToolRun c =
        recon(quoted(in) + rawShape(90, kBins) + " --config " + quoted(config) + " -o " + quoted(viaConfig) + " -q");
    ASSERT_EQ(c.exitCode, 0) << c.err;
    EXPECT_EQ(readVolume(viaConfig).data, readVolume(out).data);
}

TEST_F(TomoReconCorrections, OptionErrorsNameTheOption) {
    const fs::path in = writeRaw(m_dir / "scan.raw", uniformAngles(90), kBins, 0, kBins);
    const std::string base = quoted(in) + rawShape(90, kBins) + " -o " + quoted(m_dir / "x.h5") + " ";
    struct Case {
        std::string args, needle;
    };
    for (const Case& k : std::vector<Case>{
             {"--zinger-threshold 0.2", "--zinger-threshold has no effect without --zingers"},
             {"--ring-snr 2", "--ring-snr has no effect without --rings METHOD"},
             {"--paganin 100 --distance 0.1 --pixel-size 1e-6", "--paganin needs --energy"},
             {"--background-columns 5:2", "--background-columns 5:2: expected A:B"},
             {"--background-columns 60:70", "corrections.flat_field.background_columns"},
             {"--zingers --zinger-window 4", "--zinger-window"},
             {"--half-acquisition auto", "needs a 360-degree scan"},
             {"--half-acquisition left", "--half-acquisition left: expected the axis column"},
         }) {
        const ToolRun r = recon(base + k.args);
        EXPECT_EQ(r.exitCode, 2) << k.args << "\n" << r.err;
        EXPECT_NE(r.err.find(k.needle), std::string::npos) << k.args << "\nstderr: " << r.err;
        EXPECT_FALSE(fs::exists(m_dir / "x.h5")) << k.args;
    }
    const ToolRun bad = recon(base + "--rings fast");
    EXPECT_EQ(bad.exitCode, 2);
}

TEST_F(TomoReconCorrections, HalfAcquisitionStitchesAndFindsTheAxis) {
    // 360 degrees, the detector sees columns 43 ... 126 of a 127-column
    // field: the axis (63) at its column 20.
    const int full = 127, first = 43, columns = full - first, projections = 360;
    const fs::path in =
        writeRaw(m_dir / "half.raw", uniformAngles(projections, 2 * std::numbers::pi), full, first, columns);
    const fs::path out = m_dir / "half.h5";
    const ToolRun r = recon(quoted(in) + rawShape(projections, columns) + " --angle-range 360 -o " + quoted(out) +
                            " --half-acquisition auto");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::smatch found;
    ASSERT_TRUE(std::regex_search(r.out, found, std::regex(R"(half acquisition: axis ([0-9.]+) found)"))) << r.out;
    EXPECT_NEAR(std::stod(found[1]), 20.0, 0.3);
    EXPECT_NE(r.out.find("the stitched sinogram is 127 columns wide"), std::string::npos) << r.out;
    const ImageStack v = readVolume(out);
    EXPECT_EQ(v.width, full);
    EXPECT_EQ(v.depth, kRows);
    // The phantom's outer ellipse: bright where the full-field slice has it.
    const Image truth = rasterizePhantom(
        [] {
            PhantomSpec s;
            s.shapes = sheppLogan2D();
            s.bins = 127;
            return s;
        }(),
        0, full, full);
    double num = 0, den = 0;
    for (std::size_t i = 0; i < truth.data.size(); ++i) {
        num += (v.data[i] - truth.data[i]) * (v.data[i] - truth.data[i]);
        den += truth.data[i] * truth.data[i];
    }
    // Measured 0.140 over the whole 127 x 127 grid; allowed 1.2x.
    EXPECT_LT(std::sqrt(num / den), 1.2 * 0.140) << "relative error of the stitched slice";
}

} // namespace
} // namespace tomo
