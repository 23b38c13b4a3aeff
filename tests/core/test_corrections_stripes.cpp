// Stripe (ring) removal: stripes of several widths and strengths added to an
// exact phantom sinogram, the stripe detector, the wavelet filters, and the
// stripe energy of real scans before and after.
#include "corrections_test_helpers.h"
#include "test_support.h"
#include "tomo/corrections.h"
#include "tomo/preprocess.h"
#include "tomo/worker_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

namespace tomo {
namespace {

using test::columnMeanEnergy;
using test::phantomError;
using test::stripeEnergy;

constexpr int kBins = 256;
constexpr int kAngles = 360;
/// Counting noise of the synthetic scans, in line-integral units: about
/// 40000 counts per pixel. Vo's detectors assume noisy data (algotom refuses
/// noise-free input), and the air columns of an exact sinogram are perfectly
/// constant, which the dead-stripe step takes for dead columns.
constexpr float kNoise = 0.005f;

struct StripedPhantom {
    PhantomSpec spec = test::phantom2D(kBins);
    std::vector<double> angles = uniformAngles(kAngles);
    Image clean;   ///< transmissions exp(-p) of the exact line integrals, with counting noise
    Image striped; ///< with the stripes
};

/// Transmission sinograms as the stage removes stripes from them (before the
/// log). Stripes are detector gain errors, factors exp(-s) on a column: s of
/// 0.01 to 0.05 (the phantom's p reaches 0.64), full stripes of width 1, 2,
/// 3 and 5 columns, brighter and darker, one partial (a third of the
/// projections); a 12-column stripe of strength `wide` when not 0.
StripedPhantom stripedPhantom(float wide = 0.0f) {
    StripedPhantom s;
    s.clean = projectPhantom(s.spec, s.angles).slice(0);
    std::mt19937 rng(11);
    std::normal_distribution<float> noise(0.0f, kNoise);
    for (float& v : s.clean.data) v = std::exp(-(v + noise(rng)));
    s.striped = s.clean;
    struct Stripe {
        int column, width;
        float strength;
        int firstAngle, lastAngle;
    };
    std::vector<Stripe> stripes = {{40, 1, 0.03f, 0, kAngles},   {60, 1, 0.02f, 0, kAngles},
                                   {71, 2, -0.02f, 0, kAngles},  {100, 3, 0.05f, 0, kAngles},
                                   {123, 1, 0.01f, 0, kAngles},  {150, 5, -0.015f, 0, kAngles},
                                   {170, 1, -0.03f, 0, kAngles}, {190, 2, 0.04f, 120, 240}};
    if (wide != 0.0f) stripes.push_back({205, 12, wide, 0, kAngles});
    for (const Stripe& st : stripes)
        for (int a = st.firstAngle; a < st.lastAngle; ++a)
            for (int c = st.column; c < st.column + st.width; ++c) s.striped.at(c, a) *= std::exp(-st.strength);
    return s;
}

Image minusLog(Image t) {
    for (float& v : t.data) v = -std::log(v);
    return t;
}

/// Line integrals after stripe removal on the transmissions.
Image removed(const Image& transmissions, const RingOptions& options) {
    Image out = transmissions;
    WorkerPool pool(2);
    removeStripes(out.data, out.height, out.width, options, &pool);
    return minusLog(std::move(out));
}

RingOptions method(RingMethod m) {
    RingOptions o;
    o.method = m;
    return o;
}

/// Each method on the striped and on the stripe-free scan: the stripes must
/// go (what removal leaves of their column means of p) and cost no more than
/// 1.1x the phantom error of the stripe-free scan after the same removal.
/// What a method itself costs on a stripe-free Shepp-Logan is printed, not
/// asserted: its median across 21 or 51 columns flattens the sharp sinogram
/// edges of this small phantom, and none of the published methods stays
/// within 1.1x of the unprocessed error here (measured: sorting 1.5x, all
/// 1.7x, wavelet 3.5x).
void checkRemoval(const StripedPhantom& s, RingMethod m, double residualBound) {
    const Image cleanP = minusLog(s.clean), stripedP = minusLog(s.striped);
    const double faultFree = phantomError(cleanP, s.angles, s.spec);
    const double faulty = phantomError(stripedP, s.angles, s.spec);
    ASSERT_GT(faulty, 1.3 * faultFree) << "the stripes must matter for the test to mean anything";
    const Image fixedStriped = removed(s.striped, method(m));
    const Image fixedClean = removed(s.clean, method(m));
    const double error = phantomError(fixedStriped, s.angles, s.spec);
    const double cleanError = phantomError(fixedClean, s.angles, s.spec);
    const double residual = columnMeanEnergy(fixedStriped, fixedClean) / columnMeanEnergy(stripedP, cleanP);
    std::printf("MEASURED rings %s: phantom RMSE %.3g with stripes removed, %.3g stripe-free removed, %.3g "
                "stripe-free, %.3g with stripes (removal alone costs %.2fx); stripe energy left %.1f %%\n",
                std::string(ringMethodName(m)).c_str(), error, cleanError, faultFree, faulty, cleanError / faultFree,
                100 * residual);
    EXPECT_LE(error, 1.1 * cleanError) << ringMethodName(m);
    EXPECT_LT(residual, residualBound) << ringMethodName(m);
}

// Bounds: measured stripe energy left 20 % (sorting: the 5-column stripe
// sits on a slope of the object), 11 % (all), 7.5 % (wavelet).
TEST(StripeRemoval, SortingRemovesNarrowStripes) {
    checkRemoval(stripedPhantom(), RingMethod::Sorting, 0.3);
}
TEST(StripeRemoval, AllRemovesNarrowStripes) {
    checkRemoval(stripedPhantom(), RingMethod::All, 0.2);
}
TEST(StripeRemoval, WaveletRemovesNarrowStripes) {
    checkRemoval(stripedPhantom(), RingMethod::Wavelet, 0.15);
}

TEST(StripeRemoval, WideStripesNeedTheLargeStripeStep) {
    // A 12-column stripe (10 % gain error) is wider than half the sorting
    // window (21): the median keeps most of it. The large-stripe step
    // (window 51) finds it and puts in the median of its sorted neighbours,
    // which the stripe itself still pulls (measured: 82 % left after
    // sorting, 23 % after large).
    const StripedPhantom s = stripedPhantom(0.1f);
    const Image cleanP = minusLog(s.clean), stripedP = minusLog(s.striped);
    auto wideResidual = [&](RingMethod m) {
        const Image fixed = removed(s.striped, method(m)), reference = removed(s.clean, method(m));
        double left = 0.0, added = 0.0;
        for (int c = 205; c < 217; ++c)
            for (int a = 0; a < kAngles; ++a) {
                left += fixed.at(c, a) - reference.at(c, a);
                added += stripedP.at(c, a) - cleanP.at(c, a);
            }
        return left / added;
    };
    const double sorting = wideResidual(RingMethod::Sorting), large = wideResidual(RingMethod::Large);
    std::printf("MEASURED 12-column stripe left: %.1f %% after sorting, %.1f %% after large\n", 100 * sorting,
                100 * large);
    EXPECT_GT(sorting, 0.6);
    EXPECT_LT(std::abs(large), 0.35);
    // A weaker wide stripe (3 %) with the narrow ones: "all" as above.
    checkRemoval(stripedPhantom(0.03f), RingMethod::All, 0.25);
}

TEST(StripeRemoval, DeadColumnIsInterpolatedBetweenItsNeighbours) {
    StripedPhantom s = stripedPhantom();
    Image stuck = s.clean;
    for (int a = 0; a < kAngles; ++a) stuck.at(97, a) = 0.6f; // a column stuck at one value
    Image fixed = stuck;
    removeDeadStripes(fixed.data, fixed.height, fixed.width, 3.0, 51);
    // Marked: 97 and its two neighbours (dilation); 95 and 99 are the ends.
    for (int a = 0; a < kAngles; ++a) {
        ASSERT_FLOAT_EQ(fixed.at(97, a), 0.5f * (stuck.at(95, a) + stuck.at(99, a))) << a;
        ASSERT_FLOAT_EQ(fixed.at(96, a), 0.75f * stuck.at(95, a) + 0.25f * stuck.at(99, a)) << a;
        ASSERT_EQ(fixed.at(94, a), stuck.at(94, a)) << a;
    }
    // The stripe-free scan: nothing stands out, nothing changes.
    Image clean = s.clean;
    removeDeadStripes(clean.data, clean.height, clean.width, 3.0, 51);
    EXPECT_EQ(clean.data, s.clean.data);
}

TEST(StripeRemoval, SortingKeepsAStripeFreeSinogramWhereItIsMonotonicAcrossColumns) {
    // Each sorted rank a linear ramp across the columns: the median of a
    // monotonic window is its centre, so nothing changes.
    Image ramp(64, 50);
    for (int a = 0; a < 50; ++a)
        for (int c = 0; c < 64; ++c) ramp.at(c, a) = 0.01f * c + 0.1f * ((a * 7) % 50);
    Image out = ramp;
    removeStripesSorting(out.data, 50, 64, 21);
    for (int a = 0; a < 50; ++a)
        for (int c = 10; c < 54; ++c) ASSERT_FLOAT_EQ(out.at(c, a), ramp.at(c, a)) << a << "," << c;
}

TEST(StripeRemoval, DetectStripesFindsTheOutliersOfARatioList) {
    std::vector<float> ratios(100);
    std::mt19937 rng(3);
    std::normal_distribution<float> noise(1.0f, 0.01f);
    for (float& r : ratios) r = noise(rng);
    ratios[17] = 1.2f;
    ratios[60] = 0.8f;
    const auto mask = detectStripes(ratios, 3.0);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(mask[i], i == 17 || i == 60 ? 1 : 0) << i;
    // Noise-free ratios: the noise floor 1e-5 still lets a clear outlier through.
    std::vector<float> flat(50, 1.0f);
    flat[10] = 1.01f;
    const auto m2 = detectStripes(flat, 3.0);
    EXPECT_EQ(std::accumulate(m2.begin(), m2.end(), 0), 1);
    EXPECT_EQ(m2[10], 1);
    std::vector<float> few(7, 1.0f);
    few[3] = 5.0f;
    EXPECT_EQ(detectStripes(few, 3.0), std::vector<std::uint8_t>(7, 0)) << "fewer than 8 values: no decision";
}

TEST(StripeRemoval, Daubechies5IsAnOrthonormalWavelet) {
    const auto h = daubechies5();
    ASSERT_EQ(h.size(), 10u);
    double sum = 0.0;
    for (double v : h) sum += v;
    EXPECT_NEAR(sum, std::sqrt(2.0), 1e-14);
    for (int shift = 0; shift < 5; ++shift) {
        double dot = 0.0;
        for (int k = 0; k + 2 * shift < 10; ++k) dot += h[k] * h[k + 2 * shift];
        EXPECT_NEAR(dot, shift == 0 ? 1.0 : 0.0, 1e-14) << shift;
    }
    // Vanishing moments of the high-pass: 5 for db5 (so smooth columns give no detail).
    for (int moment = 0; moment < 5; ++moment) {
        double m = 0.0;
        for (int k = 0; k < 10; ++k) m += (k % 2 ? -1.0 : 1.0) * std::pow(k, moment) * h[9 - k];
        EXPECT_NEAR(m, 0.0, 1e-9 * std::pow(10.0, moment)) << moment;
    }
}

TEST(StripeRemoval, WaveletLeavesAStripeFreeSinogramAlmostUnchangedAndRemovesAStripe) {
    // A sinogram of smooth sinusoids (no component constant along the angles
    // in its details) changes little; a single stripe on it goes.
    const int P = 180, N = 128;
    Image s(N, P);
    for (int a = 0; a < P; ++a)
        for (int c = 0; c < N; ++c) s.at(c, a) = 1.0f + 0.5f * std::sin(0.05f * c + 0.07f * a);
    Image striped = s;
    for (int a = 0; a < P; ++a) striped.at(64, a) += 0.3f;
    Image out = striped;
    removeStripesWavelet(out.data, P, N, 4, 2.0);
    double before = 0.0, after = 0.0;
    for (int a = 20; a < P - 20; ++a) {
        before += std::abs(striped.at(64, a) - s.at(64, a));
        after += std::abs(out.at(64, a) - s.at(64, a));
    }
    EXPECT_LT(after, 0.2 * before);
}

TEST(StripeRemoval, ResultsDoNotDependOnTheThreadCount) {
    const StripedPhantom s = stripedPhantom(0.1f);
    for (RingMethod m : {RingMethod::All, RingMethod::Wavelet}) {
        Image one = s.striped, many = s.striped;
        removeStripes(one.data, one.height, one.width, method(m), nullptr);
        WorkerPool pool(3);
        removeStripes(many.data, many.height, many.width, method(m), &pool);
        EXPECT_EQ(one.data, many.data) << ringMethodName(m);
    }
}

TEST(StripeRemoval, WrongSizesAreRefused) {
    std::vector<float> v(10);
    EXPECT_THROW(removeStripesSorting(v, 3, 4, 21), InvalidArgument);
    EXPECT_THROW(removeStripesWavelet(v, 2, 5, 0, 2.0), InvalidArgument);
    EXPECT_THROW(removeStripesWavelet(v, 2, 5, 3, 0.0), InvalidArgument);
}

/// The real scan's sinogram and its stripe energy before and after "all".
void checkRealStripes(const std::string& relative, double expectedFactor) {
    const auto path = test::realData(relative);
    TOMO_REQUIRE_FILE(path);
    auto reader = openDataset(path);
    CorrectionOptions o;
    const Image before = PreprocessingStage(*reader, o).load(0, 1).slice(0);
    o.rings.method = RingMethod::All;
    const Image after = PreprocessingStage(*reader, o).load(0, 1).slice(0);
    const double eBefore = stripeEnergy(before), eAfter = stripeEnergy(after);
    std::printf("MEASURED %s stripe energy: %.4g before, %.4g after 'all' (%.1fx less)\n", relative.c_str(), eBefore,
                eAfter, eBefore / eAfter);
    EXPECT_GT(eBefore, expectedFactor * eAfter);
}

TEST(StripeRemovalRealData, Dendrites) {
    checkRealStripes("dls_i12_dendrites/dendrites_sino.h5", 5.0);
}
TEST(StripeRemovalRealData, Basalt) {
    checkRealStripes("psi_neutron_basalt/basalt_sino.h5", 5.0);
}

TEST(StripeRemovalSpeed, RingsAndZingersOnA2048Row) {
    // A 2048 x 2048 row of transmissions: smooth sinusoids, 40 one-column
    // stripes, 500 zingers. Both are found; the time is printed, never asserted.
    const int n = 2048;
    Image s(n, n);
    for (int a = 0; a < n; ++a)
        for (int c = 0; c < n; ++c) s.at(c, a) = 0.6f + 0.3f * std::sin(0.01f * c + 0.003f * a) * std::cos(0.002f * c);
    const Image clean = s;
    for (int k = 0; k < 40; ++k)
        for (int a = 0; a < n; ++a) s.at(50 * k + 7, a) *= 1.02f;
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> pick(0, n - 1);
    std::vector<PixelPosition> planted;
    for (int k = 0; k < 500; ++k) {
        const int a = pick(rng), c = pick(rng);
        if (c % 50 == 7) continue;
        if (std::find_if(planted.begin(), planted.end(), [&](const PixelPosition& p) {
                return std::abs(p.projection - a) <= 1 && std::abs(p.column - c) <= 1;
            }) != planted.end())
            continue;
        s.at(c, a) *= 2.0f;
        planted.push_back({0, a, c});
    }
    WorkerPool pool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    using Clock = std::chrono::steady_clock;
    auto seconds = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    ZingerOptions z;
    z.enabled = true;
    auto t0 = Clock::now();
    const std::size_t zingers = removeZingers(s.data, n, n, z, ValueKind::Transmission, nullptr, 0, &pool);
    const double zingerSeconds = seconds(t0);
    const double before = columnMeanEnergy(s, clean);
    t0 = Clock::now();
    removeStripes(s.data, n, n, method(RingMethod::Sorting), &pool);
    const double ringSeconds = seconds(t0);
    std::printf("MEASURED 2048x2048 row on %d threads: zingers %.0f ms + rings (sorting) %.0f ms = %.0f ms\n",
                pool.threads(), 1e3 * zingerSeconds, 1e3 * ringSeconds, 1e3 * (zingerSeconds + ringSeconds));
    EXPECT_EQ(zingers, planted.size());
    EXPECT_LT(columnMeanEnergy(s, clean), 0.01 * before);
}

} // namespace
} // namespace tomo
