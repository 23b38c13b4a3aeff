// The live preview on the GPU: the banded back-projection of one pass (row
// bands whose downloads overlap the next bands' kernels, texture_plan.h)
// equals one launch bit for bit; setAxis on a kept plan equals a fresh plan;
// PreviewSession with a GPU strategy gives the same images when the region
// changes between runs (its result memory is prepared in the background).
// PreviewLatency2048 measures the axis-change -> slice latency of issue 4
// and its parts (MEASURED lines, no timing assertion). Skips without a GPU.
#include "cuda_test_util.h"

#include "tomo/preview.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <tuple>

namespace tomo::cudatest {
namespace {

const char* kStrategies[] = {"tex-standard", "tex-optimized", "alu"}; // deterministic ones (not hybrid)

/// Sets TOMO_CUDA_BAND_ROWS for the plans created in its lifetime.
class BandRows {
public:
    explicit BandRows(const char* value) {
        if (const char* old = std::getenv("TOMO_CUDA_BAND_ROWS")) m_old = old, m_had = true;
        if (value) setenv("TOMO_CUDA_BAND_ROWS", value, 1);
        else unsetenv("TOMO_CUDA_BAND_ROWS");
    }
    ~BandRows() {
        if (m_had) setenv("TOMO_CUDA_BAND_ROWS", m_old.c_str(), 1);
        else unsetenv("TOMO_CUDA_BAND_ROWS");
    }
    BandRows(const BandRows&) = delete;
    BandRows& operator=(const BandRows&) = delete;

private:
    std::string m_old;
    bool m_had = false;
};

std::string describe(const std::string& strategy, Interpolation i, Precision p, int spp, int count) {
    return strategy + " " + std::string(interpolationName(i)) + " " + std::string(precisionName(p)) + " x" +
           std::to_string(spp) + " (" + std::to_string(count) + " slice(s))";
}

/// backproject() of `count` slices (one pass) on a fresh plan made with
/// TOMO_CUDA_BAND_ROWS = bandRows (nullptr = automatic).
std::vector<float> backprojectOnce(const std::string& strategy, const Dataset& d, const ReconGeometry& geometry,
                                   const ReconOptions& options, int count, const char* bandRows,
                                   StageTimes* times = nullptr) {
    BandRows scope(bandRows);
    auto plan = backendNamed(strategy).createPlan(geometry, options);
    plan->setSinograms(d.slice(0, count), count);
    std::vector<float> out(static_cast<std::size_t>(count) * geometry.region.pixels(), -12345.0f);
    plan->backproject(out);
    if (times) *times = plan->lastStageTimes();
    return out;
}

TEST(CudaPreview, BandedBackprojectEqualsOneLaunch) {
    TOMO_REQUIRE_CUDA();
    // 256 bins/angles, 5 slices; bands of 16 and 48 rows (the last one
    // partial: 256 = 5 x 48 + 16), the full grid and an odd region.
    static const Dataset d = phantomDataset(256, 256, 5);
    ReconGeometry roi = d.geometry;
    roi.region = Region{37, 21, 181, 203};
    for (const char* strategy : kStrategies)
        for (auto [interp, precision, spp, count] :
             {std::tuple{Interpolation::Linear, Precision::Float32, 1, 1},
              std::tuple{Interpolation::Nearest, Precision::Float32, 1, 1},
              std::tuple{Interpolation::Linear, Precision::Float32, 2, 2},
              std::tuple{Interpolation::Linear, Precision::Float32, 4, 3},
              std::tuple{Interpolation::Linear, Precision::Float16, 4, 4},
              std::tuple{Interpolation::Nearest, Precision::Float16, 2, 1}}) {
            const auto options = optionsFor(strategy, interp, precision, spp);
            for (const ReconGeometry* g : {&d.geometry, static_cast<const ReconGeometry*>(&roi)}) {
                const auto one = backprojectOnce(strategy, d, *g, options, count, "0");
                for (const char* rows : {"16", "48"}) {
                    StageTimes t;
                    const auto banded = backprojectOnce(strategy, d, *g, options, count, rows, &t);
                    const Errors e = compare(banded, one, count);
                    report("banded(" + std::string(rows) + ") vs one launch " +
                               describe(strategy, interp, precision, spp, count) +
                               (g == &roi ? " ROI" : ""),
                           e);
                    EXPECT_TRUE(e.allWritten);
                    EXPECT_TRUE(e.identical) << "max difference " << e.maxOfPeak << " of the peak";
                    EXPECT_GT(t.backproject, 0.0);
                    EXPECT_GT(t.download, 0.0);
                }
            }
        }
}

TEST(CudaPreview, BandedSetAxisAndRegionOnAKeptPlan) {
    TOMO_REQUIRE_CUDA();
    // The live sequence on one plan (banded: 32 rows): axis moves, offsets,
    // region changes, each equal to a fresh plan's one-launch result.
    static const Dataset d = phantomDataset(256, 256, 1);
    const int projections = d.geometry.geometry.projections();
    std::vector<double> offsets(static_cast<std::size_t>(projections));
    for (int p = 0; p < projections; ++p) offsets[p] = 1.5 * std::sin(0.11 * p);
    for (const char* strategy : kStrategies)
        for (auto interp : {Interpolation::Linear, Interpolation::Nearest}) {
            const auto options = optionsFor(strategy, interp, Precision::Float32, 1);
            BandRows banded("32");
            auto plan = backendNamed(strategy).createPlan(d.geometry, options);
            plan->setSinograms(d.slice(0), 1);
            struct Step {
                double axisShift;
                bool withOffsets;
                Region region;
            };
            const Region full = d.geometry.region;
            for (const Step& step : {Step{0.75, false, full}, Step{-2.25, true, full}, Step{0.5, false, {9, 40, 200, 150}},
                                     Step{0.0, false, full}}) {
                const double axis = d.geometry.geometry.axis + step.axisShift;
                const std::vector<double> o = step.withOffsets ? offsets : std::vector<double>{};
                plan->setAxis(axis, o);
                plan->setRegion(step.region);
                std::vector<float> live(step.region.pixels(), -12345.0f);
                plan->backproject(live);

                ReconGeometry g = d.geometry;
                g.geometry.axis = axis;
                g.geometry.axisOffsets = o;
                g.region = step.region;
                const auto fresh = backprojectOnce(strategy, d, g, options, 1, "0");
                const Errors e = compare(live, fresh, 1);
                EXPECT_TRUE(e.allWritten);
                EXPECT_TRUE(e.identical) << strategy << " " << interpolationName(interp) << " axis shift "
                                         << step.axisShift << ": max difference " << e.maxOfPeak << " of the peak";
            }
        }
}

TEST(CudaPreview, SessionImagesAcrossRegionChanges) {
    TOMO_REQUIRE_CUDA();
    // PreviewSession with tex-optimized: full slice, region, full slice again
    // (the prepared result memory changes size), each equal to a fresh plan.
    static const Dataset d = phantomDataset(256, 256, 1);
    ImageStack stack(d.geometry.geometry.bins, d.geometry.geometry.projections(), 1);
    stack.data = d.sinograms;
    PreviewSession session(makeMemoryDataset(std::move(stack), d.geometry.geometry.angles));
    const auto options = optionsFor("tex-optimized", Interpolation::Linear, Precision::Float32, 1);
    const Region full = d.geometry.region;
    int step = 0;
    for (const Region& region : {full, Region{10, 20, 100, 90}, full, full}) {
        PreviewRequest request;
        request.options = options;
        request.axis = d.geometry.geometry.axis + 0.25 * step++;
        request.region = region;
        const PreviewResult r = session.run(request);
        ASSERT_EQ(r.slice.width, region.width);
        ASSERT_EQ(r.slice.height, region.height);
        ReconGeometry g = d.geometry;
        g.geometry.axis = *request.axis;
        g.region = region;
        const auto fresh = run("tex-optimized", d, g, options);
        EXPECT_EQ(0, std::memcmp(r.slice.data.data(), fresh.data(), fresh.size() * sizeof(float)))
            << "step " << step;
    }
    EXPECT_EQ(session.filterRuns(), 1);
}

TEST(CudaPreview, GrowingSessionAddsTheNewProjectionsOnTheGpu) {
    TOMO_REQUIRE_CUDA();
    // A live scan on a GPU strategy: each update adds the new projections
    // to the kept slice (their slice comes down into page-locked memory the
    // session keeps for the next update) and equals a fresh session on the
    // same projections. Float sums in another order: at most 3.3e-7 of the
    // peak with the cpu strategy in this test; the bound is 1e-5.
    static const Dataset d = phantomDataset(256, 240, 1);
    const std::vector<double>& angles = d.geometry.geometry.angles;
    const int bins = d.geometry.geometry.bins;
    const auto snapshot = [&](int n) {
        ImageStack stack(bins, n, 1);
        std::copy_n(d.sinograms.begin(), static_cast<std::size_t>(n) * bins, stack.data.begin());
        return std::shared_ptr<DatasetReader>(
            makeMemoryDataset(std::move(stack), std::vector<double>(angles.begin(), angles.begin() + n)));
    };
    PreviewRequest request;
    request.options = optionsFor("alu", Interpolation::Linear, Precision::Float32, 1);
    request.axis = d.geometry.geometry.axis;
    PreviewSession live(snapshot(100));
    live.grow(snapshot(130)); // from here on the session keeps its slice to add to
    (void)live.run(request);
    int added = 0;
    for (const int n : {131, 160, 200, 240}) {
        live.grow(snapshot(n));
        const PreviewResult got = live.run(request);
        const PreviewResult want = PreviewSession(snapshot(n)).run(request);
        ASSERT_EQ(got.slice.data.size(), want.slice.data.size());
        double diff = 0.0, peak = 0.0;
        for (std::size_t i = 0; i < want.slice.data.size(); ++i) {
            diff = std::max(diff, std::abs(static_cast<double>(got.slice.data[i]) - want.slice.data[i]));
            peak = std::max(peak, std::abs(static_cast<double>(want.slice.data[i])));
        }
        EXPECT_LE(diff, 1e-5 * peak) << n << " projections";
        EXPECT_LT(got.addedProjections, n / 2) << n << " projections: the update made the whole slice";
        added += got.addedProjections;
    }
    EXPECT_GT(added, 0);
}

double medianOf(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

TEST(CudaPreview, PreviewLatency2048) {
    TOMO_REQUIRE_CUDA();
    // Issue 4: 2048^2 slice from 2048 projections, axis change -> finished
    // slice, tex-optimized linear float32 x1. Banded vs one launch (equal
    // images), and the parts of the latency: setAxis, a new 2048^2 Image,
    // kernel, download (lastStageTimes), PreviewSession::run.
    using Clock = std::chrono::steady_clock;
    auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count() * 1e3; };
    constexpr int kSize = 2048, kRuns = 15;
    static const Dataset d = phantomDataset(kSize, kSize, 1);
    const auto options = optionsFor("tex-optimized", Interpolation::Linear, Precision::Float32, 1);
    const double centre = d.geometry.geometry.axis;
    std::vector<float> images[2];
    for (int banded = 0; banded < 2; ++banded) {
        BandRows rows(banded ? nullptr : "0");
        auto plan = backendNamed("tex-optimized").createPlan(d.geometry, options);
        plan->setSinograms(d.slice(0), 1);
        std::vector<double> setAxis, image, wall, kernel, download;
        std::vector<float> out(d.geometry.region.pixels());
        for (int i = 0; i < kRuns + 2; ++i) {
            const auto t0 = Clock::now();
            plan->setAxis(centre + 0.25 * (i % 8 + 1), {});
            const auto t1 = Clock::now();
            {
                const Image fresh(kSize, kSize); // what PreviewSession::run allocated before the back-projection
                volatile float touch = fresh.data[fresh.data.size() / 2];
                (void)touch;
            }
            const auto t2 = Clock::now();
            plan->backproject(out);
            const auto t3 = Clock::now();
            if (i < 2) continue; // warm-up
            const StageTimes t = plan->lastStageTimes();
            setAxis.push_back(ms(t0, t1));
            image.push_back(ms(t1, t2));
            wall.push_back(ms(t2, t3));
            kernel.push_back(t.backproject * 1e3);
            download.push_back(t.download * 1e3);
        }
        plan->setAxis(centre, {});
        plan->backproject(out);
        images[banded] = out;
        std::printf("MEASURED preview2048 %-9s setAxis %.3f ms, new Image %.3f ms, backproject %.3f ms "
                    "(kernel %.3f, download busy %.3f), %.1f GU/s kernel\n",
                    banded ? "banded" : "one-launch", medianOf(setAxis), medianOf(image), medianOf(wall),
                    medianOf(kernel), medianOf(download),
                    static_cast<double>(kSize) * kSize * kSize / (medianOf(kernel) * 1e-3) / 1e9);
        std::fflush(stdout);
    }
    const Errors e = compare(images[1], images[0], 1);
    report("preview2048 banded vs one launch tex-optimized linear float32 x1", e);
    EXPECT_TRUE(e.identical);

    // The session, as tomo-bench --preview times it (a new axis every run).
    for (int banded = 0; banded < 2; ++banded) {
        BandRows rows(banded ? nullptr : "0");
        ImageStack stack(kSize, kSize, 1);
        stack.data = d.sinograms;
        PreviewSession session(makeMemoryDataset(std::move(stack), d.geometry.geometry.angles));
        PreviewRequest request;
        request.options = options;
        request.axis = centre;
        (void)session.run(request);
        std::vector<double> total, bp;
        for (int i = 0; i < kRuns + 2; ++i) {
            request.axis = centre + 0.25 * (i % 8 + 1);
            const auto t0 = Clock::now();
            const PreviewResult r = session.run(request);
            const auto t1 = Clock::now();
            if (i < 2) continue;
            total.push_back(ms(t0, t1));
            bp.push_back(r.secondsBackproject * 1e3);
        }
        std::printf("MEASURED preview2048 session %-9s run %.3f ms (backproject %.3f ms)\n",
                    banded ? "banded" : "one-launch", medianOf(total), medianOf(bp));
        std::fflush(stdout);
    }
}

} // namespace
} // namespace tomo::cudatest
