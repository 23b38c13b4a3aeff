// tomo-recon's output types end to end: float16, uint16 and uint8 in HDF5
// and TIFF against the float32 result, the estimated range and the one
// given, the clipped values counted exactly, --reference on every type,
// the deprecated --tiff-bits, and the option errors.
#include "cli_runner.h"

#include "tomo/phantom.h"
#include "tomo/volume_io.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>
#include <regex>

namespace tomo {
namespace {

namespace fs = std::filesystem;
using test::numberAfter;
using test::quoted;
using test::runTool;
using test::ToolRun;

constexpr int kBins = 64, kRows = 6, kAngles = 96;

class TomoReconOutput : public ::testing::Test {
protected:
    /// The scan and its float32 reconstruction, made once.
    static void SetUpTestSuite() {
        s_data = new test::TempDir;
        test::writeNoiselessScan(scan(), kBins, kRows, kAngles);
        const ToolRun r = runTool(TOMO_RECON_EXE, quoted(scan()) + " -o " + quoted(exact()) + kOptions, s_data->path());
        ASSERT_EQ(r.exitCode, 0) << r.err;
    }
    static void TearDownTestSuite() {
        delete s_data;
        s_data = nullptr;
    }
    static fs::path scan() { return *s_data / "phantom.h5"; }
    static fs::path exact() { return *s_data / "float32.h5"; }

    ToolRun recon(const std::string& args) { return runTool(TOMO_RECON_EXE, args, m_dir.path()); }
    void expectOneLineError(const std::string& args, int code, const std::string& needle) {
        test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon", args, m_dir.path(), code, needle);
    }

    static constexpr const char* kOptions = " --center 31.5 --strategy cpu --threads 2";
    test::TempDir m_dir;
    static test::TempDir* s_data;
};

test::TempDir* TomoReconOutput::s_data = nullptr;

/// The printed "value = stored x SLOPE +/- OFFSET".
std::pair<double, double> printedScale(const std::string& out) {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(R"(value = stored x (\S+) ([-+]) (\S+) )"))) return {NAN, NAN};
    return {std::stod(m[1]), (m[2] == "-" ? -1 : 1) * std::stod(m[3])};
}

TEST_F(TomoReconOutput, EveryTypeMatchesTheFloat32ResultWithinItsPrecision) {
    const ImageStack expected = readVolume(exact());
    std::vector<std::string> names = {"v.h5"};
    if (TOMO_WITH_TIFF) names.push_back("folder");
    for (const char* type : {"float16", "uint16", "uint8"})
        for (const std::string& name : names) {
            SCOPED_TRACE(std::string(type) + " " + name);
            const fs::path out = m_dir / (std::string(type) + "_" + name);
            const ToolRun r = recon(quoted(scan()) + " -o " + quoted(out) + kOptions + " --output-type " + type +
                                    " --reference " + quoted(exact()));
            ASSERT_EQ(r.exitCode, 0) << r.err;
            EXPECT_NE(r.out.find("output " + std::string(type) + ": "), std::string::npos) << r.out;
            const ImageStack back = readVolume(out);
            ASSERT_EQ(back.data.size(), expected.data.size());
            double worst = 0.0;
            for (std::size_t i = 0; i < back.data.size(); ++i)
                worst = std::max(worst, static_cast<double>(std::abs(back.data[i] - expected.data[i])));
            if (std::string(type) == "float16") {
                EXPECT_NE(r.out.find("no value clipped"), std::string::npos) << r.out;
                for (std::size_t i = 0; i < back.data.size(); ++i)
                    ASSERT_LE(std::abs(back.data[i] - expected.data[i]),
                              std::max(std::abs(expected.data[i]) * 0x1p-11, 0x1p-25)) << i;
            } else {
                // Estimated from 5 of the 6 rows: printed, recorded, and
                // everything inside the range is within half a step.
                EXPECT_NE(r.out.find("output range: ["), std::string::npos) << r.out;
                EXPECT_NE(r.out.find("estimated from rows 0,1,3,4,5"), std::string::npos) << r.out;
                const auto [slope, offset] = printedScale(r.out);
                ASSERT_TRUE(std::isfinite(slope)) << r.out;
                const double top = std::string(type) == "uint16" ? 65535 : 255;
                std::size_t clipped = 0;
                for (std::size_t i = 0; i < back.data.size(); ++i) {
                    const double steps = (expected.data[i] - offset) / slope;
                    if (steps < -0.5 || steps > top + 0.5) ++clipped;
                    else ASSERT_NEAR(back.data[i], expected.data[i], 0.5 * slope * 1.0001 + 1e-9) << i;
                }
                EXPECT_LT(clipped, back.data.size() / 1000);
            }
            // --reference reads the stored values back as values too.
            EXPECT_NEAR(numberAfter(r.out, "vs reference .* max abs error"), worst, 1e-3 * worst + 1e-12) << r.out;
            if (std::string(name) == "v.h5") {
                const std::string bytes = test::readText(out);
                for (const char* text : {"output_type", type, "run_config"})
                    EXPECT_NE(bytes.find(text), std::string::npos) << "'" << text << "' not recorded";
                if (std::string(type) != "float16") {
                    for (const char* text :
                         {"scale_factor", "add_offset", "output_range_source", "estimated from rows"})
                        EXPECT_NE(bytes.find(text), std::string::npos) << "'" << text << "' not recorded";
                }
            }
        }
}

TEST_F(TomoReconOutput, ValuesOutsideAGivenRangeAreClippedAndCountedExactly) {
    const ImageStack expected = readVolume(exact());
    const fs::path out = m_dir / "narrow.h5";
    const ToolRun r = recon(quoted(scan()) + " -o " + quoted(out) + kOptions + " --output-type uint8 --range 0,0.005");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out.find("output range: ["), std::string::npos) << "nothing to estimate:\n" << r.out;
    const Quantization q = quantizationFor(OutputType::UInt8, 0.0f, 0.005f);
    std::size_t below = 0, above = 0;
    for (float v : expected.data) {
        const double steps = (static_cast<double>(v) - q.offset) / q.slope;
        below += steps < -0.5;
        above += steps > 255.5;
    }
    ASSERT_GT(below, 0u);
    ASSERT_GT(above, 0u);
    const std::string counts = std::to_string(below + above) + " values clipped";
    EXPECT_NE(r.out.find(counts), std::string::npos) << "expected '" << counts << "' in:\n" << r.out;
    EXPECT_NE(r.out.find(std::to_string(below) + " below the range, " + std::to_string(above) + " above"),
              std::string::npos)
        << r.out;
    const ImageStack back = readVolume(out);
    for (std::size_t i = 0; i < back.data.size(); ++i)
        ASSERT_NEAR(back.data[i], std::clamp(expected.data[i], 0.0f, 0.005f), 0.5 * q.slope * 1.0001 + 1e-9) << i;
}

TEST_F(TomoReconOutput, TiffBitsStillWorksWithAWarning) {
    if (!TOMO_WITH_TIFF) GTEST_SKIP() << "--tiff-bits is about TIFF output; this build has no TIFF support";
    const fs::path out = m_dir / "old";
    const ToolRun r = recon(quoted(scan()) + " -o " + quoted(out) + kOptions + " --tiff-bits 16 --range -0.002,0.012");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("warning: --tiff-bits is deprecated; use --output-type uint16"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("output uint16: "), std::string::npos) << r.out;
    const ImageStack expected = readVolume(exact()), back = readVolume(out);
    const double halfStep = 0.5 * quantizationFor(OutputType::UInt16, -0.002f, 0.012f).slope;
    for (std::size_t i = 0; i < back.data.size(); ++i)
        ASSERT_NEAR(back.data[i], expected.data[i], halfStep * 1.0001 + 1e-9); // + the float rounding of the value
}

TEST_F(TomoReconOutput, BadTypeAndRangeOptionsAreOneLineErrors) {
    const std::string in = quoted(scan()) + kOptions + " -o ";
    const std::string h5 = quoted(m_dir / "o.h5"), tif = quoted(m_dir / "o.tif");
    expectOneLineError(in + h5 + " --output-type int16", 2, "--output-type");
    expectOneLineError(in + h5 + " --range 0,1", 2, "--range applies to --output-type uint16 or uint8");
    expectOneLineError(in + h5 + " --output-type float16 --range 0,1", 2, "the output type is float16");
    expectOneLineError(in + h5 + " --output-type uint16 --range 1,1", 2, "--range 1,1: expected MIN < MAX");
    expectOneLineError(in + h5 + " --output-type uint8 --range 0,nan", 2, "--range");
    expectOneLineError(in + h5 + " --tiff-bits 8", 2, "--tiff-bits applies only to TIFF output");
    expectOneLineError(in + tif + " --tiff-bits 8 --output-type uint16", 2,
                       "--tiff-bits 8 contradicts --output-type uint16");
    expectOneLineError(quoted(scan()) + " -o " + h5 + " --output-type uint16 --center-sweep 30:32:1", 2,
                       "--center-sweep with --output-type uint16 needs --range MIN,MAX");
}

} // namespace
} // namespace tomo
