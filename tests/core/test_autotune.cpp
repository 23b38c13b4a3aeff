// The `auto` strategy's autotuner: the choice, the cache file (written,
// reused, rebuilt when corrupt or stale) and the cases that skip timing.
#include "tomo/autotune.h"
#include "tomo/error.h"
#include "tomo/phantom.h"
#include "tomo/registry.h"

#include "renamed_backend.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tomo {
namespace {

using nlohmann::json;

using test::RenamedBackend;
using test::ScopedEnv;

/// A plan of another strategy that waits `delay` in every backproject().
class DelayedPlan final : public ReconstructionPlan {
public:
    DelayedPlan(std::unique_ptr<ReconstructionPlan> inner, std::chrono::milliseconds delay)
        : ReconstructionPlan(inner->geometry(), inner->options()), m_inner(std::move(inner)), m_delay(delay) {}
    void setSinograms(std::span<const float> sinograms, int count) override { m_inner->setSinograms(sinograms, count); }
    void backproject(std::span<float> slices) override {
        std::this_thread::sleep_for(m_delay);
        m_inner->backproject(slices);
    }
    void setAxis(double axis, std::span<const double> offsets) override { m_inner->setAxis(axis, offsets); }
    void setRegion(const Region& region) override { m_inner->setRegion(region); }
    int maxSlices() const override { return m_inner->maxSlices(); }
    std::size_t memoryBytes() const override { return m_inner->memoryBytes(); }

private:
    std::unique_ptr<ReconstructionPlan> m_inner;
    std::chrono::milliseconds m_delay;
};

/// `cpu` with kernel parameters: tuning "slow" waits 30 ms per call, "fast"
/// does not, "" (the default) waits 10 ms; anything else is refused.
class TunableBackend final : public Backend {
public:
    explicit TunableBackend(const Backend& inner) : m_inner(inner) {}
    std::string name() const override { return "cpu-tunable"; }
    std::string description() const override { return "test: cpu with tunings"; }
    std::string family() const override { return "cpu"; }
    std::string unavailableReason() const override { return {}; }
    std::vector<std::string> tuningCandidates(const ReconOptions&) const override { return {"", "slow", "fast"}; }
    void checkOptions(const ReconOptions& options) const override {
        if (options.tuning != "" && options.tuning != "slow" && options.tuning != "fast")
            throw InvalidArgument("cpu-tunable: tuning '" + options.tuning + "'");
    }
    std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry,
                                                   const ReconOptions& options) const override {
        checkOptions(options);
        ReconOptions inner = options;
        inner.strategy = "cpu";
        inner.tuning.clear();
        // "slow" far behind: its timing must stay above "fast"'s on a loaded
        // machine, where a 30 ms margin was once lost to the scheduler.
        const auto delay = std::chrono::milliseconds(options.tuning == "slow" ? 150 : options.tuning == "fast" ? 0 : 10);
        return std::make_unique<DelayedPlan>(m_inner.createPlan(geometry, inner), delay);
    }

private:
    const Backend& m_inner;
};

const Backend& registered(const char* name) {
    const Backend* b = BackendRegistry::instance().find(name);
    if (!b) throw std::runtime_error(std::string("strategy '") + name + "' is not registered");
    return *b;
}

/// The two CPU strategies in registry order (the last is the preferred one).
std::vector<const Backend*> cpuCandidates() {
    return {&registered("cpu-reference"), &registered("cpu")};
}

/// 180 views of 256 bins, the full 256 x 256 slice: the reference takes
/// ~20 ms a call on 2 cores, `cpu` 5-10 times less.
ReconGeometry problem(int bins = 256, int views = 180) {
    Geometry g;
    g.angles = uniformAngles(views);
    g.bins = bins;
    g.axis = g.detectorCentre();
    return ReconGeometry::fullSlice(std::move(g));
}

json readJson(const std::filesystem::path& path) {
    std::ifstream in(path);
    return json::parse(in); // throws (and fails the test) if the tuner wrote no valid JSON
}

/// The one entry of the cache file (fails the test if there is not exactly one).
json onlyEntry(const std::filesystem::path& path) {
    const json cache = readJson(path);
    EXPECT_EQ(1, cache.at("version"));
    const json& entries = cache.at("entries");
    EXPECT_EQ(1u, entries.size()) << entries.dump(2);
    return entries.empty() ? json::object() : entries.begin().value();
}

/// The candidate an entry timed fastest: what the tuner must have chosen.
/// (Which one that is depends on the machine's load: `cpu` is 5-10x faster
/// than `cpu-reference` alone, not under a parallel test run.)
std::string fastestIn(const json& entry) {
    std::string fastest;
    double best = 0.0;
    for (const auto& [name, seconds] : entry.at("seconds").items())
        if (fastest.empty() || seconds.get<double>() < best) {
            fastest = name;
            best = seconds.get<double>();
        }
    return fastest;
}

void writeText(const std::filesystem::path& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
}

class Autotune : public testing::Test {
protected:
    test::TempDir m_dir;
    std::filesystem::path m_cache = m_dir / "tune" / "autotune.json"; // folder created by the tuner
    // Independent of the environment the tests run in (CI may set these).
    ScopedEnv m_enabled{"TOMO_AUTOTUNE", nullptr};
    ScopedEnv m_cachePath{"TOMO_AUTOTUNE_CACHE", m_cache.c_str()};
};

TEST_F(Autotune, KernelParameterSetsAreCandidatesAndTheWinnersIsKept) {
    const TunableBackend tunable(registered("cpu"));
    const std::vector<const Backend*> candidates{&tunable};
    Autotuner tuner(m_cache);
    const Autotuner::Choice choice = tuner.chooseTuned(candidates, problem(), ReconOptions{});
    EXPECT_EQ(&tunable, choice.backend);
    EXPECT_EQ(3, tuner.timedCandidates());
    const json entry = onlyEntry(m_cache);
    EXPECT_EQ((json{"cpu-tunable", "cpu-tunable[slow]", "cpu-tunable[fast]"}), entry.at("candidates"));
    EXPECT_EQ("cpu-tunable", entry.at("strategy"));
    // The tuning timed fastest is chosen and kept. Which one that is depends
    // on the load: "fast" alone, but under a parallel test run the default's
    // 10 ms went unnoticed in the noise (2-core machine, ctest -j4).
    EXPECT_EQ(fastestIn(entry), choice.tuning.empty() ? "cpu-tunable" : "cpu-tunable[" + choice.tuning + "]");
    EXPECT_EQ(choice.tuning, entry.value("tuning", std::string())); // none kept for the default
    EXPECT_LT(entry.at("seconds").at("cpu-tunable[fast]").get<double>(),
              entry.at("seconds").at("cpu-tunable[slow]").get<double>());

    // Another process (a new tuner) reads the winner and its tuning from the file.
    Autotuner second(m_cache);
    const Autotuner::Choice again = second.chooseTuned(candidates, problem(), ReconOptions{});
    EXPECT_EQ(choice.tuning, again.tuning);
    EXPECT_EQ(0, second.timedCandidates());

    // A tuning the user gives is kept: it is the only candidate of that strategy.
    ReconOptions fixed;
    fixed.tuning = "slow";
    Autotuner third(m_dir / "other.json");
    EXPECT_EQ("slow", third.chooseTuned(candidates, problem(), fixed).tuning);
    EXPECT_EQ(0, third.timedCandidates()); // a single candidate is not timed

    // Without timing, the preferred strategy with its default tuning.
    ScopedEnv off("TOMO_AUTOTUNE", "off");
    EXPECT_EQ("", Autotuner(m_dir / "x.json").chooseTuned(candidates, problem(), ReconOptions{}).tuning);
}

TEST_F(Autotune, AutoResolvesToAnAvailableStrategyAndCachesIt) {
    const int timedBefore = Autotuner::instance().timedCandidates();
    const ReconOptions options; // "auto", linear, float32, 1 slice per pass
    const Backend& chosen = BackendRegistry::instance().resolve(options, problem());
    EXPECT_TRUE(chosen.unavailableReason().empty());
    EXPECT_TRUE(chosen.isExact());
    EXPECT_NO_THROW(chosen.checkOptions(options));
    EXPECT_GE(Autotuner::instance().timedCandidates() - timedBefore, 2);

    ASSERT_TRUE(std::filesystem::exists(m_cache));
    const json cache = readJson(m_cache);
    ASSERT_EQ(1u, cache.at("entries").size());
    const std::string key = cache.at("entries").begin().key();
    EXPECT_NE(std::string::npos, key.find("|projections=180|bins=256|region=256x256|linear|float32|slicesPerPass=1"))
        << key;
    EXPECT_EQ(chosen.name(), cache.at("entries").at(key).at("strategy").get<std::string>());

    // Again in this process: the remembered choice, no timing.
    const int timedAfter = Autotuner::instance().timedCandidates();
    EXPECT_EQ(&chosen, &BackendRegistry::instance().resolve(options, problem()));
    EXPECT_EQ(timedAfter, Autotuner::instance().timedCandidates());
    // createPlan("auto") runs the chosen strategy.
    EXPECT_EQ(chosen.name(), createPlan(problem(), options)->options().strategy);
}

TEST_F(Autotune, ChoosesTheFastestTimedCandidateAndRecordsEveryTime) {
    Autotuner tuner(m_cache);
    const auto candidates = cpuCandidates();
    const std::string chosen = tuner.choose(candidates, problem(), ReconOptions{}).name();
    EXPECT_EQ(2, tuner.timedCandidates());

    const json entry = onlyEntry(m_cache);
    EXPECT_EQ(chosen, entry.at("strategy").get<std::string>());
    EXPECT_EQ(fastestIn(entry), chosen);
    EXPECT_EQ((json{"cpu-reference", "cpu"}), entry.at("candidates"));
    const double fast = entry.at("seconds").at("cpu");
    const double reference = entry.at("seconds").at("cpu-reference");
    std::printf("MEASURED autotune 256x256x180: cpu %.2f ms, cpu-reference %.2f ms (%.1fx)\n", fast * 1e3,
                reference * 1e3, reference / fast);
    EXPECT_GT(fast, 0.0);
    EXPECT_GT(reference, 0.0);
    EXPECT_EQ((json{256, 256}), entry.at("timedRegion")); // small enough to be timed whole
}

TEST_F(Autotune, ASecondTunerReadsTheCacheFileWithoutTiming) {
    const auto candidates = cpuCandidates();
    Autotuner first(m_cache);
    const Backend& chosen = first.choose(candidates, problem(), ReconOptions{});
    ASSERT_EQ(2, first.timedCandidates());

    Autotuner second(m_cache); // a new process, as far as memory goes
    EXPECT_EQ(&chosen, &second.choose(candidates, problem(), ReconOptions{}));
    EXPECT_EQ(0, second.timedCandidates());

    // Another shape, or other options, is another entry and is timed.
    ReconOptions nearest;
    nearest.interpolation = Interpolation::Nearest;
    second.choose(candidates, problem(), nearest);
    EXPECT_EQ(2, second.timedCandidates());
    EXPECT_EQ(2u, readJson(m_cache).at("entries").size());
}

TEST_F(Autotune, ACorruptCacheFileIsIgnoredAndReplaced) {
    const auto candidates = cpuCandidates();
    for (const std::string corrupt : {"{ not json", "", "[1, 2]", R"({"version": 99, "entries": {}})",
                                      R"({"version": 1, "entries": []})"}) {
        SCOPED_TRACE("cache file: '" + corrupt + "'");
        std::filesystem::create_directories(m_cache.parent_path());
        writeText(m_cache, corrupt);
        Autotuner tuner(m_cache);
        const std::string chosen = tuner.choose(candidates, problem(), ReconOptions{}).name();
        EXPECT_EQ(2, tuner.timedCandidates());
        EXPECT_EQ(chosen, onlyEntry(m_cache).at("strategy").get<std::string>());
        EXPECT_EQ(fastestIn(onlyEntry(m_cache)), chosen);
    }
}

TEST_F(Autotune, AnEntryOfAnotherShapeOrBrokenEntryIsRetuned) {
    const auto candidates = cpuCandidates();
    Autotuner first(m_cache);
    first.choose(candidates, problem(), ReconOptions{});
    json cache = readJson(m_cache);
    const std::string key = cache.at("entries").begin().key();

    cache["entries"][key] = json{{"strategy", 7}}; // well-formed JSON, not an entry
    writeText(m_cache, cache.dump());
    Autotuner second(m_cache);
    const std::string chosen = second.choose(candidates, problem(), ReconOptions{}).name();
    EXPECT_EQ(2, second.timedCandidates());
    const json entry = readJson(m_cache).at("entries").at(key);
    EXPECT_EQ(chosen, entry.at("strategy").get<std::string>());
    EXPECT_EQ(fastestIn(entry), chosen);
}

TEST_F(Autotune, ACachedStrategyThatNoLongerExistsIsRetuned) {
    const auto candidates = cpuCandidates();
    Autotuner first(m_cache);
    first.choose(candidates, problem(), ReconOptions{});
    json cache = readJson(m_cache);
    for (auto& [key, entry] : cache.at("entries").items()) entry["strategy"] = "retired-strategy";
    writeText(m_cache, cache.dump());

    Autotuner second(m_cache);
    const std::string chosen = second.choose(candidates, problem(), ReconOptions{}).name();
    EXPECT_EQ(2, second.timedCandidates());
    EXPECT_EQ(chosen, onlyEntry(m_cache).at("strategy").get<std::string>());
    EXPECT_EQ(fastestIn(onlyEntry(m_cache)), chosen);
}

TEST_F(Autotune, ANewCandidateMakesTheCachedChoiceStale) {
    const auto cpuPair = cpuCandidates();
    Autotuner tuner(m_cache);
    tuner.choose(cpuPair, problem(), ReconOptions{});
    ASSERT_EQ(2, tuner.timedCandidates());

    // A build with one more strategy: its cached choice was made without it.
    const RenamedBackend newcomer("cpu-newcomer", registered("cpu"), false);
    const std::vector<const Backend*> three{cpuPair[0], cpuPair[1], &newcomer};
    const std::string winner = tuner.choose(three, problem(), ReconOptions{}).name();
    EXPECT_EQ(5, tuner.timedCandidates());
    EXPECT_EQ((json{"cpu-reference", "cpu", "cpu-newcomer"}), onlyEntry(m_cache).at("candidates"));
    EXPECT_EQ(fastestIn(onlyEntry(m_cache)), winner);
}

TEST_F(Autotune, ACandidateThatCannotPlanIsLeftOut) {
    // The preferred candidate fails like a GPU out of memory: the other wins.
    const RenamedBackend failing("gpu-without-memory", registered("cpu"), true);
    const std::vector<const Backend*> candidates{&registered("cpu-reference"), &failing};
    Autotuner tuner(m_cache);
    EXPECT_EQ("cpu-reference", tuner.choose(candidates, problem(), ReconOptions{}).name());
    EXPECT_FALSE(onlyEntry(m_cache).at("seconds").contains("gpu-without-memory"));

    // When none can run, the preferred one is returned, and nothing cached:
    // its own createPlan will report the reason.
    const RenamedBackend alsoFailing("gpu-2", registered("cpu"), true);
    const std::vector<const Backend*> none{&alsoFailing, &failing};
    EXPECT_EQ(&failing, &tuner.choose(none, problem(), ReconOptions{}));
    EXPECT_EQ(1u, readJson(m_cache).at("entries").size());
}

TEST_F(Autotune, LargeRegionsAreTimedOnAPart) {
    // 1000 views of 2048 bins: the whole 2048 x 2048 slice would take the
    // reference ~6 s a call on 2 cores, so only a part of at most 2^26
    // updates is timed. How long tuning takes is printed, not asserted.
    Autotuner tuner(m_cache);
    const auto start = std::chrono::steady_clock::now();
    const std::string chosen = tuner.choose(cpuCandidates(), problem(2048, 1000), ReconOptions{}).name();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("MEASURED autotune of 2048x2048x1000 took %.2f s\n", seconds);

    const json entry = onlyEntry(m_cache);
    EXPECT_EQ(fastestIn(entry), chosen);
    const int width = entry.at("timedRegion").at(0);
    const int height = entry.at("timedRegion").at(1);
    EXPECT_EQ(width, height); // the aspect ratio of the region
    EXPECT_LT(width, 2048);
    EXPECT_LE(static_cast<double>(width) * height * 1000, 67108864.0); // 2^26 updates
    EXPECT_NE(std::string::npos, readJson(m_cache).at("entries").begin().key().find("region=2048x2048"));
}

TEST_F(Autotune, OffMeansThePreferredCandidateWithoutTimingOrCache) {
    const ScopedEnv off("TOMO_AUTOTUNE", "off");
    Autotuner tuner(m_cache);
    EXPECT_EQ("cpu", tuner.choose(cpuCandidates(), problem(), ReconOptions{}).name()); // last registered
    EXPECT_EQ(0, tuner.timedCandidates());
    EXPECT_FALSE(std::filesystem::exists(m_cache));
}

TEST_F(Autotune, OneCandidateOrNoGeometryIsNotTimed) {
    Autotuner tuner(m_cache);
    const std::vector<const Backend*> one{&registered("cpu-reference")};
    EXPECT_EQ("cpu-reference", tuner.choose(one, problem(), ReconOptions{}).name());
    // The GUI checks options with an empty geometry: nothing to time.
    EXPECT_EQ("cpu", tuner.choose(cpuCandidates(), ReconGeometry{}, ReconOptions{}).name());
    EXPECT_EQ(0, tuner.timedCandidates());
    EXPECT_FALSE(std::filesystem::exists(m_cache));
}

TEST_F(Autotune, OptionsNoBackendAcceptsAreInvalidArgument) {
    ReconOptions options;
    options.slicesPerPass = 3; // every strategy packs 1, 2 or 4
    try {
        BackendRegistry::instance().resolve(options, problem());
        FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string::npos, std::string(e.what()).find("slices per pass 3")) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(m_cache));
}

TEST(AutotuneCachePath, FollowsTheEnvironment) {
    const ScopedEnv xdg("XDG_CACHE_HOME", "/xdg-cache");
    const ScopedEnv home("HOME", "/home/someone");
    {
        const ScopedEnv explicitPath("TOMO_AUTOTUNE_CACHE", "/elsewhere/tune.json");
        EXPECT_EQ(std::filesystem::path("/elsewhere/tune.json"), defaultAutotuneCachePath());
    }
    const ScopedEnv noExplicitPath("TOMO_AUTOTUNE_CACHE", nullptr);
    EXPECT_EQ(std::filesystem::path("/xdg-cache/tomo-workstation/autotune.json"), defaultAutotuneCachePath());
    const ScopedEnv noXdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(std::filesystem::path("/home/someone/.cache/tomo-workstation/autotune.json"), defaultAutotuneCachePath());
}

} // namespace
} // namespace tomo
