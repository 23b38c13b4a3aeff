// The ALU strategies (alu, hybrid, oversample): every mode against
// cpu-reference, every block shape, tile borders and regions, hybrid at the
// ends of its share equal to its two paths, oversample's error between
// nearest's and linear's, and the tuning option's checks (these run without
// a GPU too).
#include "cuda_test_util.h"
#include "test_support.h"

#include "tomo/dataset.h"
#include "tomo/preprocess.h"

#include <cstring>
#include <tuple>

namespace tomo::cudatest {
namespace {

// Tolerances (relative RMSE per slice) of the ALU paths, with why.
//  * linear and nearest are exact arithmetic from the texels (linear: float
//    positions relative to the tile, nearest: double positions): texture
//    nearest's bounds (gpu_test_util.h), 1e-5 for float32 and 2e-4 for
//    float16, in both interpolations;
//  * hybrid linear: its texture blocks filter with 8-bit weights.
constexpr double kAluFloat = kNearestFloat;

double aluTolerance(const std::string& strategy, Interpolation i, Precision p) {
    if (strategy == "hybrid") return tolerance(i, p);
    return tolerance(Interpolation::Nearest, p);
}

ReconOptions tuned(const std::string& strategy, Interpolation i, Precision p, int spp, const std::string& tuning) {
    ReconOptions o = optionsFor(strategy, i, p, spp);
    o.tuning = tuning;
    return o;
}

/// 256 bins, 256 angles, 5 slices, 256x256 grid.
const Dataset& mainDataset() {
    static const Dataset d = phantomDataset(256, 256, 5);
    return d;
}

/// 301 bins, 361 angles (not a multiple of any projection group, over a
/// 256-projection chunk), 3 slices, a 300 x 301 grid (not a multiple of any tile).
const Dataset& oddDataset() {
    static const Dataset d = phantomDataset(301, 361, 3, 300, 301);
    return d;
}

using Mode = ModeParam;

class AluModes : public ::testing::TestWithParam<Mode> {};

TEST_P(AluModes, MatchesCpuReferenceOnPhantom) {
    TOMO_REQUIRE_CUDA();
    const auto& [strategy, interp, precision, spp] = GetParam();
    for (const Dataset* d : {&mainDataset(), &oddDataset()}) {
        const auto& ref = reference(*d, d->geometry, interp);
        const auto out = run(strategy, *d, d->geometry, optionsFor(strategy, interp, precision, spp));
        const Errors e = compare(out, ref, d->slices);
        report(d->key + " " + describe(strategy, interp, precision, spp), e);
        EXPECT_TRUE(e.allWritten);
        EXPECT_LE(e.relative, aluTolerance(strategy, interp, precision)) << d->key;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cuda, AluModes,
    ::testing::Combine(::testing::Values(std::string("alu"), std::string("hybrid")),
                       ::testing::Values(Interpolation::Nearest, Interpolation::Linear),
                       ::testing::Values(Precision::Float32, Precision::Float16), ::testing::Values(1, 2, 4)),
    modeTestName);

TEST(CudaAlu, RealScanEveryModeMatchesTheReference) {
    TOMO_REQUIRE_CUDA();
    // The APS tooth (shared/data/real, SOURCES.md): 181 views over 180
    // degrees, 640 bins, axis 295.9; its 2 rows, as 5 slices (0, 1, 0, 1, 0:
    // a full and a partial pass of 2 and 4 slices).
    if (!TOMO_WITH_HDF5) GTEST_SKIP() << "the APS tooth is an HDF5 file; this build reads no HDF5";
    const auto path = test::realData("aps_tooth/tooth.h5");
    TOMO_REQUIRE_FILE(path);
    // Any error opening a file that is there is a failure, with its message.
    const std::unique_ptr<DatasetReader> reader = openDataset(path);
    const ImageStack rows = loadSinograms(*reader, 0, 2);
    Dataset d;
    Geometry g;
    g.angles = reader->info().angles;
    g.bins = reader->info().columns;
    g.axis = 295.9;
    d.geometry = ReconGeometry::fullSlice(g);
    for (int s = 0; s < 5; ++s) {
        const auto first = rows.data.begin() + static_cast<std::ptrdiff_t>((s % 2) * rows.imageSize());
        d.sinograms.insert(d.sinograms.end(), first, first + static_cast<std::ptrdiff_t>(rows.imageSize()));
    }
    d.slices = 5;
    d.key = "aps-tooth-rows-01010";
    for (const char* strategy : {"alu", "hybrid"})
        for (auto interp : {Interpolation::Nearest, Interpolation::Linear}) {
            const auto& ref = reference(d, d.geometry, interp);
            for (auto precision : {Precision::Float32, Precision::Float16})
                for (int spp : {1, 2, 4}) {
                    const auto out = run(strategy, d, d.geometry, optionsFor(strategy, interp, precision, spp));
                    const Errors e = compare(out, ref, d.slices);
                    report("APS tooth " + describe(strategy, interp, precision, spp), e);
                    EXPECT_TRUE(e.allWritten);
                    EXPECT_LE(e.relative, aluTolerance(strategy, interp, precision))
                        << describe(strategy, interp, precision, spp);
                }
        }
}

TEST(CudaAlu, EveryShapeMatchesTheReference) {
    TOMO_REQUIRE_CUDA();
    const Dataset& d = oddDataset();
    for (auto interp : {Interpolation::Linear, Interpolation::Nearest})
        for (int spp : {1, 2, 4}) {
            const auto& ref = reference(d, d.geometry, interp);
            for (const std::string& tuning : backendNamed("alu").tuningCandidates(optionsFor("alu", interp, Precision::Float32, spp))) {
                const auto out = run("alu", d, d.geometry, tuned("alu", interp, Precision::Float32, spp, tuning));
                const Errors e = compare(out, ref, d.slices);
                report(describe("alu", interp, Precision::Float32, spp, tuning), e);
                EXPECT_TRUE(e.allWritten) << tuning;
                EXPECT_LE(e.relative, kAluFloat) << tuning;
            }
        }
}

TEST(CudaAlu, RegionEqualsWindowOfFullSlice) {
    TOMO_REQUIRE_CUDA();
    const Dataset& d = mainDataset();
    const Region roi{37, 53, 101, 77}; // crosses tile borders of every shape
    ReconGeometry roiGeometry = d.geometry;
    roiGeometry.region = roi;
    for (const char* strategy : {"alu", "hybrid", "oversample"})
        for (const char* tuning : {"shape=0", "shape=3"})
            for (auto [interp, precision, spp] : {std::tuple{Interpolation::Linear, Precision::Float32, 1},
                                                  std::tuple{Interpolation::Linear, Precision::Float16, 2},
                                                  std::tuple{Interpolation::Nearest, Precision::Float16, 4}}) {
                if (std::string(strategy) == "oversample" && interp == Interpolation::Nearest) continue;
                const auto options = tuned(strategy, interp, precision, spp, tuning);
                const auto full = run(strategy, d, d.geometry, options);
                const auto part = run(strategy, d, roiGeometry, options);
                const std::vector<float> window = windowOf(full, d, roi);
                const Errors e = compare(part, window, d.slices);
                report("ROI vs full window " + describe(strategy, interp, precision, spp, tuning), e);
                EXPECT_TRUE(e.allWritten);
                if (std::string(strategy) != "hybrid") // hybrid: a tile's path depends on its SM's ticket
                    EXPECT_TRUE(e.identical) << describe(strategy, interp, precision, spp, tuning);
                else
                    EXPECT_LE(e.relative, aluTolerance(strategy, interp, precision));

                // The live preview: setRegion on a kept plan, banded or not.
                auto plan = backendNamed(strategy).createPlan(d.geometry, options);
                plan->setSinograms(d.sinograms, d.slices);
                plan->setRegion(roi);
                std::vector<float> again(part.size(), -12345.0f);
                plan->backproject(again);
                if (std::string(strategy) != "hybrid") {
                    EXPECT_EQ(0, std::memcmp(again.data(), part.data(), part.size() * sizeof(float)));
                }
            }
}

TEST(CudaAlu, OffsetsAndLiveAxisMatchTheReference) {
    TOMO_REQUIRE_CUDA();
    const Dataset& d = mainDataset();
    const int projections = d.geometry.geometry.projections();
    std::vector<double> offsets(static_cast<std::size_t>(projections));
    for (int p = 0; p < projections; ++p) offsets[p] = 2.5 * std::sin(0.37 * p) + 0.3;
    ReconGeometry shifted = d.geometry;
    shifted.geometry.axisOffsets = offsets;
    shifted.geometry.axis += 1.75;
    for (const char* strategy : {"alu", "hybrid"})
        for (auto interp : {Interpolation::Nearest, Interpolation::Linear}) {
            const auto& ref = reference(d, shifted, interp, "offsets+1.75");
            const auto options = optionsFor(strategy, interp, Precision::Float32, 2);
            const auto out = run(strategy, d, shifted, options);
            Errors e = compare(out, ref, d.slices);
            report("offsets vs cpu-reference " + describe(strategy, interp, Precision::Float32, 2), e);
            EXPECT_LE(e.relative, aluTolerance(strategy, interp, Precision::Float32));
            // setAxis on a kept plan = a plan made with that axis.
            auto plan = backendNamed(strategy).createPlan(d.geometry, options);
            plan->setSinograms(d.sinograms, d.slices);
            plan->setAxis(shifted.geometry.axis, offsets);
            std::vector<float> live(out.size(), -12345.0f);
            plan->backproject(live);
            e = compare(live, ref, d.slices);
            EXPECT_LE(e.relative, aluTolerance(strategy, interp, Precision::Float32));
            if (std::string(strategy) == "alu") {
                EXPECT_EQ(0, std::memcmp(live.data(), out.data(), out.size() * 4));
            }
        }
}

TEST(CudaAlu, MultiSliceEqualsSingleSlice) {
    TOMO_REQUIRE_CUDA();
    const Dataset& d = mainDataset();
    for (auto interp : {Interpolation::Nearest, Interpolation::Linear}) {
        const auto single = run("alu", d, d.geometry, optionsFor("alu", interp, Precision::Float32, 1));
        for (int spp : {2, 4}) {
            const auto multi = run("alu", d, d.geometry, optionsFor("alu", interp, Precision::Float32, spp));
            const Errors e = compare(multi, single, d.slices);
            report("alu x" + std::to_string(spp) + " vs x1 " + std::string(interpolationName(interp)), e);
            EXPECT_LE(e.relative, 1e-6);
        }
    }
}

TEST(CudaHybrid, ShareZeroIsAluShareSixteenIsTexture) {
    TOMO_REQUIRE_CUDA();
    static const Dataset d = phantomDataset(1024, 256, 1);
    const int width = d.geometry.sliceWidth;
    for (auto interp : {Interpolation::Linear, Interpolation::Nearest}) {
        const auto alu = run("alu", d, d.geometry, tuned("alu", interp, Precision::Float32, 1, "shape=0"));
        const auto none = run("hybrid", d, d.geometry, tuned("hybrid", interp, Precision::Float32, 1, "shape=0,share=0"));
        const auto all = run("hybrid", d, d.geometry, tuned("hybrid", interp, Precision::Float32, 1, "shape=0,share=16"));
        const auto texture = run("tex-optimized", d, d.geometry, optionsFor("tex-optimized", interp, Precision::Float32, 1));
        EXPECT_EQ(0, std::memcmp(none.data(), alu.data(), alu.size() * sizeof(float))) << "share 0 = alu";
        // The same texture fetches summed in another order.
        const Errors e = compare(all, texture, 1);
        report("hybrid share=16 vs tex-optimized " + std::string(interpolationName(interp)), e);
        EXPECT_LE(e.relative, 1e-6);
        const auto mixed = run("hybrid", d, d.geometry, tuned("hybrid", interp, Precision::Float32, 1, "shape=0,share=8"));
        if (interp == Interpolation::Nearest) {
            // Nearest: both paths pick the same texel per projection and add in the same order.
            EXPECT_EQ(0, std::memcmp(all.data(), alu.data(), alu.size() * sizeof(float))) << "nearest: texture = ALU";
            EXPECT_EQ(0, std::memcmp(mixed.data(), alu.data(), alu.size() * sizeof(float))) << "nearest: mixed = ALU";
            continue;
        }
        // Linear, in between: each 32x32 tile is one path's result, bit for bit, and both paths ran.
        int aluTiles = 0, textureTiles = 0, otherTiles = 0;
        for (int ty = 0; ty < width / 32; ++ty)
            for (int tx = 0; tx < width / 32; ++tx) {
                bool isAlu = true, isTexture = true;
                for (int y = ty * 32; y < ty * 32 + 32; ++y)
                    for (int x = tx * 32; x < tx * 32 + 32; ++x) {
                        const std::size_t i = static_cast<std::size_t>(y) * width + x;
                        isAlu = isAlu && mixed[i] == alu[i];
                        isTexture = isTexture && mixed[i] == all[i];
                    }
                aluTiles += isAlu;
                textureTiles += isTexture && !isAlu;
                otherTiles += !isAlu && !isTexture;
            }
        std::printf("MEASURED hybrid share=8 linear: %d ALU tiles, %d texture tiles, %d neither\n", aluTiles,
                    textureTiles, otherTiles);
        EXPECT_EQ(0, otherTiles);
        EXPECT_GT(aluTiles, 0);
        EXPECT_GT(textureTiles, 0);
    }
}

TEST(CudaOversample, ErrorSitsBetweenNearestAndLinear) {
    TOMO_REQUIRE_CUDA();
    const Dataset& d = oddDataset();
    const auto& linearRef = reference(d, d.geometry, Interpolation::Linear);
    for (auto precision : {Precision::Float32, Precision::Float16})
        for (int spp : {1, 2, 4}) {
            const auto over = run("oversample", d, d.geometry, optionsFor("oversample", Interpolation::Linear, precision, spp));
            const auto nearest = run("alu", d, d.geometry, optionsFor("alu", Interpolation::Nearest, precision, spp));
            const auto linear = run("alu", d, d.geometry, optionsFor("alu", Interpolation::Linear, precision, spp));
            const Errors eo = compare(over, linearRef, d.slices);
            const Errors en = compare(nearest, linearRef, d.slices);
            const Errors el = compare(linear, linearRef, d.slices);
            std::printf("MEASURED vs cpu-reference linear, %s x%d: oversample %.3g, nearest %.3g, linear %.3g\n",
                        std::string(precisionName(precision)).c_str(), spp, eo.relative, en.relative, el.relative);
            EXPECT_TRUE(eo.allWritten);
            EXPECT_LT(eo.relative, en.relative);
            EXPECT_GT(eo.relative, el.relative);
        }
}

// ------------------------------------------------- without a GPU as well

std::string errorOf(const std::string& strategy, const ReconOptions& o) {
    try {
        backendNamed(strategy).checkOptions(o);
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return {};
}

TEST(CudaAluOptions, TuningIsCheckedWithClearMessages) {
    const ReconOptions linear = optionsFor("alu", Interpolation::Linear, Precision::Float32, 1);
    EXPECT_EQ("", errorOf("alu", tuned("alu", Interpolation::Linear, Precision::Float32, 1, "shape=3")));
    EXPECT_EQ("", errorOf("hybrid", tuned("hybrid", Interpolation::Linear, Precision::Float32, 2, "shape=1,share=16")));
    EXPECT_NE(std::string::npos, errorOf("alu", tuned("alu", Interpolation::Linear, Precision::Float32, 1, "shape=99"))
                                     .find("shape=99 (expected an integer 0 to"));
    EXPECT_NE(std::string::npos, errorOf("alu", tuned("alu", Interpolation::Linear, Precision::Float32, 1, "share=4"))
                                     .find("unknown tuning 'share=4'"));
    EXPECT_NE(std::string::npos, errorOf("hybrid", tuned("hybrid", Interpolation::Linear, Precision::Float32, 1, "share=17"))
                                     .find("share=17 (expected an integer 0 to 16)"));
    EXPECT_NE(std::string::npos, errorOf("alu", tuned("alu", Interpolation::Linear, Precision::Float32, 1, "shape="))
                                     .find("expected an integer"));
    EXPECT_NE(std::string::npos,
              errorOf("tex-optimized", tuned("tex-optimized", Interpolation::Linear, Precision::Float32, 1, "shape=1"))
                  .find("takes no tuning"));
    // A shape whose cache does not fit: four slices' oversampling with 16 projections per step.
    EXPECT_NE(std::string::npos,
              errorOf("oversample", tuned("oversample", Interpolation::Linear, Precision::Float32, 4, "shape=0"))
                  .find("bytes of shared memory for 4 slice(s)"));
    EXPECT_NE(std::string::npos, errorOf("oversample", optionsFor("oversample", Interpolation::Nearest, Precision::Float32, 1))
                                     .find("approximates linear interpolation"));
    (void)linear;
}

TEST(CudaAluOptions, TuningCandidatesAllPassTheirCheck) {
    for (const char* strategy : {"alu", "hybrid", "oversample"})
        for (auto interp : {Interpolation::Linear, Interpolation::Nearest})
            for (int spp : {1, 2, 4}) {
                if (std::string(strategy) == "oversample" && interp == Interpolation::Nearest) continue;
                const ReconOptions o = optionsFor(strategy, interp, Precision::Float32, spp);
                const auto candidates = backendNamed(strategy).tuningCandidates(o);
                ASSERT_FALSE(candidates.empty());
                EXPECT_EQ("", errorOf(strategy, o)) << "the default";
                for (const std::string& t : candidates)
                    EXPECT_EQ("", errorOf(strategy, tuned(strategy, interp, Precision::Float32, spp, t)))
                        << strategy << " " << t;
            }
    EXPECT_EQ(std::vector<std::string>{""}, backendNamed("tex-optimized").tuningCandidates(ReconOptions{}));
    EXPECT_FALSE(backendNamed("oversample").isExact());
    EXPECT_TRUE(backendNamed("alu").isExact());
    EXPECT_TRUE(backendNamed("hybrid").isExact());
}

} // namespace
} // namespace tomo::cudatest
