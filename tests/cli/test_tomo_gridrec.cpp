// gridrec through the programs: tomo-recon runs it end to end, refuses bad
// kernel parameters with one line, keeps auto exact without timing even with
// --allow-approximate; tomo-bench labels its GU/s as an equivalent rate and
// runs its live preview.
#include "cli_runner.h"

#include "tomo/gridrec.h"
#include "tomo/registry.h"
#include "tomo/volume_io.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <regex>

namespace tomo {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::quoted;
using test::runTool;
using test::ToolRun;

constexpr int kBins = 64;

class TomoReconGridrec : public testing::Test {
protected:
    void SetUp() override {
#if !TOMO_WITH_HDF5
        GTEST_SKIP() << "the scan is a DXchange file; this build has no HDF5 support";
#endif
        test::writeNoiselessScan(scan(), kBins, 4, 120);
    }
    fs::path scan() const { return m_dir / "scan.h5"; }
    ToolRun recon(const std::string& args) { return runTool(TOMO_RECON_EXE, args, m_dir.path()); }

    test::TempDir m_dir;
};

TEST_F(TomoReconGridrec, ReconstructsCloseToTheExactStrategyAndRecordsIt) {
    const fs::path exact = m_dir / "exact.h5", fast = m_dir / "gridrec.h5";
    ASSERT_EQ(recon(quoted(scan()) + " -o " + quoted(exact) + " --center 31.5 --strategy cpu-reference -q").exitCode, 0);
    const ToolRun r = recon(quoted(scan()) + " -o " + quoted(fast) +
                            " --center 31.5 --strategy cpu-gridrec --tuning kernel=5,band=2 -q --reference " +
                            quoted(exact));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // Within 1 % of FBP with band 2 (tests/core/test_gridrec.cpp), printed as a percentage.
    EXPECT_LT(test::numberAfter(r.out, "relative error"), 1.0) << r.out;
    EXPECT_GT(test::numberAfter(r.out, "relative error"), 0.0) << r.out;
    const std::string bytes = test::readText(fast);
    for (const char* text : {"cpu-gridrec", "kernel=5,band=2"})
        EXPECT_NE(bytes.find(text), std::string::npos) << "'" << text << "' not recorded";
}

TEST_F(TomoReconGridrec, BadKernelParametersAreOneLine) {
    const std::string out = " -o " + quoted(m_dir / "o.h5") + " --center 31.5 --strategy cpu-gridrec";
    test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon", quoted(scan()) + out + " --tuning kernel=1", m_dir.path(), 2,
                             "kernel=1 (expected an integer 2 to 16)");
    test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon", quoted(scan()) + out + " --tuning oversampling=9",
                             m_dir.path(), 2, "oversampling=9 (expected a number 1.25 to 3)");
    test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon", quoted(scan()) + out + " --interp nearest", m_dir.path(), 2,
                             "use interpolation linear");
}

TEST_F(TomoReconGridrec, AllowApproximateWithoutTimingStaysExact) {
    // The tests run with TOMO_AUTOTUNE=off: nothing measures gridrec's
    // error, so auto keeps the exact preferred strategy.
    const fs::path out = m_dir / "auto.h5";
    const ToolRun r = recon(quoted(scan()) + " -o " + quoted(out) + " --center 31.5 --allow-approximate -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // The run config recorded in the output names the strategy that ran: an exact one.
    const std::string bytes = test::readText(out);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(bytes, m, std::regex(R"re("strategy": "([^"]+)")re")));
    const Backend* ran = BackendRegistry::instance().find(m[1].str());
    ASSERT_NE(ran, nullptr) << m[1];
    EXPECT_TRUE(ran->isExact()) << m[1];
}

TEST(TomoBenchGridrec, EquivalentRateAndPreview) {
    test::TempDir dir;
    const auto file = dir / "b.json";
    const ToolRun r = runTool(TOMO_BENCH_EXE,
                              "--projections 48 --size 48 --slices 3 --repeat 1 --warmup 0 --strategy cpu,cpu-gridrec "
                              "--interp linear --precision float32 --slices-per-pass 1 --json " + quoted(file),
                              dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("'GU/s' is the equivalent rate"), std::string::npos) << r.out;
    const json doc = json::parse(test::readText(file));
    ASSERT_EQ(doc["results"].size(), 2u);
    for (const json& row : doc["results"]) {
        EXPECT_EQ(row["gups_equivalent"].get<bool>(), row["strategy"] == "cpu-gridrec") << row.dump();
        EXPECT_GT(row["gups"].get<double>(), 0.0);
    }
    const ToolRun p = runTool(TOMO_BENCH_EXE, "--preview --strategy cpu-gridrec --projections 48 --size 48 --repeat 2",
                              dir.path());
    ASSERT_EQ(p.exitCode, 0) << p.err;
    EXPECT_NE(p.out.find("cpu-gridrec"), std::string::npos) << p.out;
    EXPECT_EQ(p.out.find("skipped"), std::string::npos) << p.out;
}

} // namespace
} // namespace tomo
