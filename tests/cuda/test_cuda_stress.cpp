// The workstation's pattern under load: several plans of every CUDA strategy
// alive at once on separate threads (the live preview's plan beside a
// reference or compare-modes plan), each alternating setAxis / setRegion /
// backproject, now and then filtering anew (setSinograms, reconstruct) while
// the others run. Every result must equal, bit for bit, what a fresh plan
// computes alone on one thread: a plan must never see another plan's
// constants, tables or buffers, nor a copy still in flight.
//
// TOMO_STRESS_ROUNDS sets the rounds per thread (default 40; run hundreds on
// a GPU machine, several processes at once, to load the device). Skips
// without a GPU.
#include "cuda_test_util.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tomo::cudatest {
namespace {

int stressRounds() {
    const char* value = std::getenv("TOMO_STRESS_ROUNDS");
    const int rounds = value ? std::atoi(value) : 0;
    return rounds > 0 ? rounds : 40;
}

/// TOMO_CUDA_BAND_ROWS for the plans created in its lifetime (read by the
/// plan's constructor; set only while no other thread creates plans).
class BandRowsSetting {
public:
    explicit BandRowsSetting(const char* value) {
        if (const char* old = std::getenv("TOMO_CUDA_BAND_ROWS")) m_old = old, m_had = true;
        setenv("TOMO_CUDA_BAND_ROWS", value, 1);
    }
    ~BandRowsSetting() {
        if (m_had) setenv("TOMO_CUDA_BAND_ROWS", m_old.c_str(), 1);
        else unsetenv("TOMO_CUDA_BAND_ROWS");
    }
    BandRowsSetting(const BandRowsSetting&) = delete;
    BandRowsSetting& operator=(const BandRowsSetting&) = delete;

private:
    std::string m_old;
    bool m_had = false;
};

struct Config {
    const char* strategy;
    Interpolation interpolation;
    Precision precision;
    int slicesPerPass;
    int count; // slices kept: count > slicesPerPass runs several passes (not banded)
};

struct Step {
    double axisShift;
    bool withOffsets;
    Region region;
};

std::string describe(const Config& c) {
    return std::string(c.strategy) + " " + std::string(interpolationName(c.interpolation)) + " " +
           std::string(precisionName(c.precision)) + " x" + std::to_string(c.slicesPerPass) + " (" +
           std::to_string(c.count) + " slice(s))";
}

TEST(CudaStress, ConcurrentPlansOnThreadsEqualFreshPlans) {
    TOMO_REQUIRE_CUDA();
    static const Dataset d = phantomDataset(256, 256, 2);
    const int projections = d.geometry.geometry.projections();
    std::vector<double> offsets(static_cast<std::size_t>(projections));
    for (int p = 0; p < projections; ++p) offsets[p] = 1.5 * std::sin(0.11 * p);

    const Config configs[] = {
        {"tex-standard", Interpolation::Linear, Precision::Float32, 1, 1},
        {"tex-standard", Interpolation::Nearest, Precision::Float32, 1, 1},
        {"tex-standard", Interpolation::Linear, Precision::Float16, 2, 2},
        {"tex-optimized", Interpolation::Linear, Precision::Float32, 1, 1},
        {"tex-optimized", Interpolation::Nearest, Precision::Float32, 1, 2},
        {"tex-optimized", Interpolation::Linear, Precision::Float16, 4, 2},
        {"alu", Interpolation::Linear, Precision::Float32, 1, 1},
        {"alu", Interpolation::Nearest, Precision::Float16, 4, 2},
        {"oversample", Interpolation::Linear, Precision::Float32, 2, 2},
    };
    const Region full = d.geometry.region;
    // Full slice and tall regions run banded (32-row bands), short ones as one launch.
    const Step steps[] = {{0.75, false, full},
                          {-2.25, true, full},
                          {0.5, false, Region{9, 40, 200, 150}},
                          {1.25, true, Region{0, 0, 256, 64}},
                          {-0.5, false, Region{100, 100, 20, 20}},
                          {0.0, false, full}};
    constexpr int kSteps = static_cast<int>(std::size(steps));
    auto geometryFor = [&](const Step& s) {
        ReconGeometry g = d.geometry;
        g.geometry.axis = d.geometry.geometry.axis + s.axisShift;
        if (s.withOffsets) g.geometry.axisOffsets = offsets;
        g.region = s.region;
        return g;
    };
    auto optionsOf = [](const Config& c) {
        return optionsFor(c.strategy, c.interpolation, c.precision, c.slicesPerPass);
    };

    // What a fresh plan computes alone, one launch per pass.
    std::vector<std::vector<std::vector<float>>> expected(std::size(configs));
    {
        BandRowsSetting oneLaunch("0");
        for (std::size_t c = 0; c < std::size(configs); ++c)
            for (const Step& s : steps) {
                const ReconGeometry g = geometryFor(s);
                auto plan = backendNamed(configs[c].strategy).createPlan(g, optionsOf(configs[c]));
                std::vector<float> out(static_cast<std::size_t>(configs[c].count) * g.region.pixels(), -12345.0f);
                plan->reconstruct(d.slice(0, configs[c].count), configs[c].count, out);
                expected[c].push_back(std::move(out));
            }
    }

    // Two plans of every configuration, each on its own thread, all at once.
    constexpr int kPlansPerConfig = 2;
    const int rounds = stressRounds();
    std::atomic<long> mismatches{0}, results{0};
    std::mutex messagesMutex;
    std::vector<std::string> messages;
    std::vector<std::string> errors;
    {
        BandRowsSetting banded("32");
        std::vector<std::jthread> threads;
        for (std::size_t c = 0; c < std::size(configs); ++c)
            for (int k = 0; k < kPlansPerConfig; ++k)
                threads.emplace_back([&, c, k] {
                    const Config& config = configs[c];
                    const int thread = static_cast<int>(c) * kPlansPerConfig + k;
                    const auto sinograms = d.slice(0, config.count);
                    try {
                        std::unique_ptr<ReconstructionPlan> plan;
                        for (int r = 0; r < rounds; ++r) {
                            const int stepIndex = (r * 5 + thread) % kSteps;
                            const Step& step = steps[stepIndex];
                            const ReconGeometry g = geometryFor(step);
                            const auto& want = expected[c][static_cast<std::size_t>(stepIndex)];
                            std::vector<float> out(want.size(), -12345.0f);
                            if (!plan || r % 16 == 15) {
                                // A new plan: its filter tables and texels are uploaded
                                // while the other threads' kernels run.
                                plan = backendNamed(config.strategy).createPlan(d.geometry, optionsOf(config));
                                plan->setSinograms(sinograms, config.count);
                            }
                            plan->setAxis(g.geometry.axis, g.geometry.axisOffsets);
                            plan->setRegion(g.region);
                            if (r % 8 == 7)
                                plan->reconstruct(sinograms, config.count, out); // upload + filter + back-project
                            else
                                plan->backproject(out);
                            ++results;
                            if (std::memcmp(out.data(), want.data(), want.size() * sizeof(float)) != 0) {
                                ++mismatches;
                                const Errors e = compare(out, want, config.count);
                                std::lock_guard lock(messagesMutex);
                                if (messages.size() < 20)
                                    messages.push_back(describe(config) + " thread " + std::to_string(thread) +
                                                       " round " + std::to_string(r) + " step " +
                                                       std::to_string(stepIndex) + ": max difference " +
                                                       std::to_string(e.maxOfPeak) + " of the peak");
                            }
                        }
                    } catch (const std::exception& e) {
                        std::lock_guard lock(messagesMutex);
                        errors.push_back(describe(config) + " thread " + std::to_string(thread) + ": " + e.what());
                    }
                });
    }
    std::printf("MEASURED stress %zu plans on threads x %d rounds: %ld results, %ld differ from a fresh plan\n",
                std::size(configs) * kPlansPerConfig, rounds, results.load(), mismatches.load());
    std::fflush(stdout);
    for (const std::string& e : errors) ADD_FAILURE() << e;
    for (const std::string& m : messages) ADD_FAILURE() << m;
    EXPECT_EQ(results.load(), static_cast<long>(std::size(configs)) * kPlansPerConfig * rounds);
    EXPECT_EQ(mismatches.load(), 0);
}

} // namespace
} // namespace tomo::cudatest
