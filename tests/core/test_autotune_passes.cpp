// `auto` choosing the slices per pass with the strategy (ReconOptions::
// slicesPerPass 0): the choice logic against a fake timing source, so the
// ranking is known, not measured.
#include "tomo/autotune.h"
#include "tomo/error.h"
#include "tomo/phantom.h"
#include "tomo/registry.h"

#include "renamed_backend.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tomo {
namespace {

using nlohmann::json;

/// TOMO_AUTOTUNE for the test: nullptr = timing on (ctest turns it off for
/// every test), "off"; the old value back afterwards. The tuners here have
/// their own cache files, never the user's.
class AutotuneSetting {
public:
    explicit AutotuneSetting(const char* value) {
        if (const char* old = std::getenv("TOMO_AUTOTUNE")) m_old = old;
        if (value) ::setenv("TOMO_AUTOTUNE", value, 1);
        else ::unsetenv("TOMO_AUTOTUNE");
    }
    ~AutotuneSetting() {
        if (m_old) ::setenv("TOMO_AUTOTUNE", m_old->c_str(), 1);
        else ::unsetenv("TOMO_AUTOTUNE");
    }
    AutotuneSetting(const AutotuneSetting&) = delete;
    AutotuneSetting& operator=(const AutotuneSetting&) = delete;

private:
    std::optional<std::string> m_old;
};

/// Seconds per slice = timed pixels x the candidate's cost per pixel: a
/// candidate of more slices per pass is timed on fewer pixels (the same
/// updates per call), which the tuner must scale back. Records each call.
struct FakeTiming {
    std::map<std::string, double> nanosecondsPerPixel; ///< by "strategy@slicesPerPass"
    std::vector<std::pair<std::string, std::size_t>> calls; ///< candidate, timed pixels

    Autotuner::Timing timing() {
        return [this](const ReconGeometry& geometry, const ReconOptions& options) {
            const std::string name = options.strategy + "@" + std::to_string(options.slicesPerPass);
            calls.emplace_back(name, geometry.region.pixels());
            const auto cost = nanosecondsPerPixel.find(name);
            if (cost == nanosecondsPerPixel.end()) throw InvalidArgument("no fake time for " + name);
            return 1e-9 * cost->second * static_cast<double>(geometry.region.pixels());
        };
    }
};

std::vector<const Backend*> cpuCandidates() {
    const BackendRegistry& r = BackendRegistry::instance();
    return {r.find("cpu-reference"), r.find("cpu")}; // cpu takes 1, 2 or 4 slices per pass, the reference 1
}

/// Large enough that every candidate is timed on a part of the region
/// (2^26 updates: ~93k pixels at one slice per pass of 720 views).
ReconGeometry largeProblem() {
    Geometry g;
    g.angles = uniformAngles(720);
    g.bins = 1024;
    g.axis = g.detectorCentre();
    return ReconGeometry::fullSlice(std::move(g));
}

ReconOptions passesLeftToTheTuner() {
    ReconOptions o;
    o.slicesPerPass = 0;
    return o;
}

json onlyEntry(const std::filesystem::path& path) {
    std::ifstream in(path);
    const json cache = json::parse(in);
    EXPECT_EQ(1u, cache.at("entries").size());
    return cache.at("entries").begin().value();
}

TEST(AutotunePasses, EachStrategyIsTimedAtEverySlicesPerPassItTakesAndTheFastestPerSliceWins) {
    AutotuneSetting on(nullptr);
    test::TempDir dir;
    FakeTiming fake;
    // Per pixel of its timed region: cpu@4 would "win" on raw call time
    // (its region has half the pixels of cpu@2's), but per slice cpu@2 is
    // the fastest: 2 ns x P against 3 ns x P/2 x 2.
    fake.nanosecondsPerPixel = {{"cpu-reference@1", 10.0}, {"cpu@1", 4.0}, {"cpu@2", 2.0}, {"cpu@4", 3.0}};
    Autotuner tuner(dir / "autotune.json", fake.timing());
    const Autotuner::Choice choice = tuner.chooseTuned(cpuCandidates(), largeProblem(), passesLeftToTheTuner());
    EXPECT_EQ(choice.backend->name(), "cpu");
    EXPECT_EQ(choice.slicesPerPass, 2);
    EXPECT_EQ(choice.tuning, "");

    std::map<std::string, std::size_t> pixels(fake.calls.begin(), fake.calls.end());
    ASSERT_EQ(pixels.size(), 4u) << "each candidate timed once";
    // The same updates per call: half the pixels at twice the slices.
    EXPECT_NEAR(double(pixels["cpu@2"]) / pixels["cpu@1"], 0.5, 0.02);
    EXPECT_NEAR(double(pixels["cpu@4"]) / pixels["cpu@1"], 0.25, 0.02);
    EXPECT_EQ(pixels["cpu-reference@1"], pixels["cpu@1"]);

    const json entry = onlyEntry(dir / "autotune.json");
    EXPECT_EQ(entry.at("candidates"), (json{"cpu-reference@1", "cpu@1", "cpu@2", "cpu@4"}));
    EXPECT_EQ(entry.at("strategy"), "cpu");
    EXPECT_EQ(entry.at("slicesPerPass"), 2);
    // Seconds per slice of the same region for all: 2 < 3 < 4 < 10.
    const json& s = entry.at("seconds");
    EXPECT_LT(s.at("cpu@2").get<double>(), s.at("cpu@4").get<double>());
    EXPECT_LT(s.at("cpu@4").get<double>(), s.at("cpu@1").get<double>());
    EXPECT_NEAR(s.at("cpu@1").get<double>() / s.at("cpu@2").get<double>(), 2.0, 1e-9);

    // Another process reads the choice, slices per pass included, untimed.
    FakeTiming none;
    Autotuner second(dir / "autotune.json", none.timing());
    const Autotuner::Choice again = second.chooseTuned(cpuCandidates(), largeProblem(), passesLeftToTheTuner());
    EXPECT_EQ(again.backend->name(), "cpu");
    EXPECT_EQ(again.slicesPerPass, 2);
    EXPECT_TRUE(none.calls.empty());
}

TEST(AutotunePasses, FixedSlicesPerPassAreKeptAndOnlyTheStrategyIsTuned) {
    AutotuneSetting on(nullptr);
    test::TempDir dir;
    FakeTiming fake;
    fake.nanosecondsPerPixel = {{"cpu-reference@1", 1.0}, {"cpu@1", 4.0}, {"cpu@2", 0.5}};
    Autotuner tuner(dir / "autotune.json", fake.timing());
    const Autotuner::Choice choice = tuner.chooseTuned(cpuCandidates(), largeProblem(), ReconOptions{});
    EXPECT_EQ(choice.backend->name(), "cpu-reference");
    EXPECT_EQ(choice.slicesPerPass, 1);
    EXPECT_EQ(fake.calls.size(), 2u); // cpu@2 was never a candidate
    const json entry = onlyEntry(dir / "autotune.json");
    EXPECT_EQ(entry.at("candidates"), (json{"cpu-reference", "cpu"}));
    EXPECT_FALSE(entry.contains("slicesPerPass"));
}

TEST(AutotunePasses, WithoutTimingThePreferredStrategyAtOneSlicePerPass) {
    test::TempDir dir;
    AutotuneSetting off("off"); // as ctest runs every test
    FakeTiming fake;
    Autotuner tuner(dir / "autotune.json", fake.timing());
    const Autotuner::Choice choice = tuner.chooseTuned(cpuCandidates(), largeProblem(), passesLeftToTheTuner());
    EXPECT_EQ(choice.backend->name(), "cpu");
    EXPECT_EQ(choice.slicesPerPass, 1);
    EXPECT_TRUE(fake.calls.empty());
    EXPECT_FALSE(std::filesystem::exists(dir / "autotune.json"));
}

TEST(AutotunePasses, TheRegistryResolvesSlicesPerPassOnlyForAuto) {
    AutotuneSetting off("off");
    const BackendRegistry& registry = BackendRegistry::instance();
    const ReconOptions resolved = registry.resolveOptions(passesLeftToTheTuner(), largeProblem());
    EXPECT_NE(resolved.slicesPerPass, 0);
    EXPECT_NO_THROW(registry.find(resolved.strategy)->checkOptions(resolved));
    ReconOptions named = passesLeftToTheTuner();
    named.strategy = "cpu";
    EXPECT_THROW(registry.resolveOptions(named, largeProblem()), InvalidArgument);
}

TEST(AutotunePasses, GpuCandidatesAreTimedOnTheRegionOfOneSlicePerPass) {
    AutotuneSetting on(nullptr);
    test::TempDir dir;
    FakeTiming fake;
    fake.nanosecondsPerPixel = {{"gpu-like@1", 4.0}, {"gpu-like@2", 2.0}, {"gpu-like@4", 3.0}};
    // The CPU strategy `cpu` posing as a GPU one: the tuner times GPU candidates otherwise.
    const test::RenamedBackend gpu("gpu-like", *BackendRegistry::instance().find("cpu"), false, "cuda");
    const std::vector<const Backend*> candidates{&gpu};
    Autotuner tuner(dir / "autotune.json", fake.timing());
    // 2048^2 from 2048 views: a GPU times up to 2^33 updates per call, the
    // whole slice at one slice per pass, a quarter of it at four.
    Geometry g;
    g.angles = uniformAngles(2048);
    g.bins = 2048;
    g.axis = g.detectorCentre();
    const Autotuner::Choice choice =
        tuner.chooseTuned(candidates, ReconGeometry::fullSlice(std::move(g)), passesLeftToTheTuner());
    EXPECT_EQ(choice.slicesPerPass, 2);
    std::map<std::string, std::size_t> pixels(fake.calls.begin(), fake.calls.end());
    ASSERT_EQ(pixels.size(), 3u) << "each candidate timed once";
    // A smaller region would read fewer detector bins (a smaller footprint in
    // the GPU's cache) than the whole slice the run then reconstructs.
    EXPECT_EQ(pixels["gpu-like@2"], pixels["gpu-like@1"]);
    EXPECT_EQ(pixels["gpu-like@4"], pixels["gpu-like@1"]);
}

} // namespace
} // namespace tomo
