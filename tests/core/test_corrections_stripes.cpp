// Stripe (ring) removal: stripes of several widths and strengths added to an
// exact phantom sinogram, the stripe detector, the wavelet filters, and the
// stripe energy of real scans before and after.
#include "corrections_test_helpers.h"
#include "test_support.h"
#include "tomo/corrections.h"
#include "tomo/preprocess.h"
#include "tomo/worker_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
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
// sits on a slope of the object), 11 % (all), 17.5 % (wavelet with algotom's
// defaults, which keep 39 % of the zero frequency of even-height bands; 7.5 %
// with the earlier Daubechies-5, sigma 2, which damaged objects on the axis).
TEST(StripeRemoval, SortingRemovesNarrowStripes) {
    checkRemoval(stripedPhantom(), RingMethod::Sorting, 0.3);
}
TEST(StripeRemoval, AllRemovesNarrowStripes) {
    checkRemoval(stripedPhantom(), RingMethod::All, 0.2);
}
TEST(StripeRemoval, WaveletRemovesNarrowStripes) {
    checkRemoval(stripedPhantom(), RingMethod::Wavelet, 0.25);
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

TEST(StripeRemoval, Daubechies9IsAnOrthonormalWavelet) {
    const auto h = daubechies9();
    ASSERT_EQ(h.size(), 18u);
    double sum = 0.0;
    for (double v : h) sum += v;
    EXPECT_NEAR(sum, std::sqrt(2.0), 1e-14);
    for (int shift = 0; shift < 9; ++shift) {
        double dot = 0.0;
        for (int k = 0; k + 2 * shift < 18; ++k) dot += h[k] * h[k + 2 * shift];
        EXPECT_NEAR(dot, shift == 0 ? 1.0 : 0.0, 1e-14) << shift;
    }
    // Vanishing moments of the high-pass: 9 for db9 (so smooth columns give no detail).
    for (int moment = 0; moment < 9; ++moment) {
        double m = 0.0;
        for (int k = 0; k < 18; ++k) m += (k % 2 ? -1.0 : 1.0) * std::pow(k, moment) * h[17 - k];
        EXPECT_NEAR(m, 0.0, 1e-9 * std::pow(17.0, moment)) << moment;
    }
}

TEST(StripeRemoval, WaveletLeavesAStripeFreeSinogramAlmostUnchangedAndRemovesAStripe) {
    // A sinogram of smooth sinusoids (no component constant along the angles
    // in its details) changes little; a single stripe on it mostly goes
    // (measured: 21 % of it left, as algotom's remove_stripe_based_wavelet_fft
    // with level 4 and size 2 leaves, the two within 1e-6; 43 % with its
    // defaults, level 5 and size 1).
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
    EXPECT_LT(after, 0.3 * before);
    // Stripe-free: the sinusoids stay.
    Image clean = s;
    removeStripesWavelet(clean.data, P, N, 4, 2.0);
    double change = 0.0, size = 0.0;
    for (std::size_t i = 0; i < s.data.size(); ++i) {
        change += std::abs(clean.data[i] - s.data[i]);
        size += std::abs(s.data[i]);
    }
    EXPECT_LT(change, 0.01 * size);
}

TEST(StripeRemoval, WaveletPaddingLevelsAndDampingAreAlgotoms) {
    // pad = min(150, floor(0.1 min(P, N))), levels at most floor(log2(min / 16)).
    const WaveletPadding a = waveletPadding(91, 160, 5); // the I13 scan: 9 rows and columns, 109 x 178
    EXPECT_EQ(a.pad, 9);
    EXPECT_EQ(a.height, 109);
    EXPECT_EQ(a.width, 178);
    EXPECT_EQ(a.levels, 2); // log2(109 / 16) = 2.8
    const WaveletPadding b = waveletPadding(3000, 4000, 5);
    EXPECT_EQ(b.pad, 150);
    EXPECT_EQ(b.levels, 5);
    EXPECT_EQ(waveletPadding(20, 20, 5).levels, 0); // 24 x 24: below 32
    // The damping: algotom's window centred at ceil(n / 2) - 1 of the shifted
    // spectrum, averaged over k and -k by the real part.
    const double sigma = 1.0;
    auto w = [&](double x) { return 1.0 - std::exp(-x * x / (2 * sigma * sigma)); };
    EXPECT_NEAR(waveletDamping(0, 64, sigma), w(1), 1e-15); // even: 0.39 of the zero frequency kept
    EXPECT_NEAR(waveletDamping(1, 64, sigma), 0.5 * (w(2) + w(0)), 1e-15);
    EXPECT_NEAR(waveletDamping(5, 64, sigma), 0.5 * (w(6) + w(-4)), 1e-15);
    EXPECT_NEAR(waveletDamping(32, 64, sigma), w(-31), 1e-15); // Nyquist
    EXPECT_EQ(waveletDamping(0, 63, sigma), 0.0); // odd: centred
    EXPECT_NEAR(waveletDamping(3, 63, sigma), w(3), 1e-15);
    // Too small for a level: nothing changes.
    std::vector<float> tiny(20 * 20);
    for (std::size_t i = 0; i < tiny.size(); ++i) tiny[i] = static_cast<float>(i % 7);
    const std::vector<float> copy = tiny;
    removeStripesWavelet(tiny, 20, 20, 5, 1.0);
    EXPECT_EQ(tiny, copy);
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

/// Row `row` of a real scan through the stage with `rings`: the corrected
/// sinogram and what the corrections found.
Image ringsOn(DatasetReader& reader, int row, RingMethod m, PreprocessStats& stats, double sigma = 0.0) {
    CorrectionOptions o;
    o.rings.method = m;
    if (sigma > 0.0) o.rings.waveletSigma = sigma;
    return PreprocessingStage(reader, o).load(row, 1, &stats).slice(0);
}

/// The damage guard of each method on one row: whether it is flagged as expected.
void expectGuard(const std::string& relative, int row, std::initializer_list<std::pair<RingMethod, bool>> expected) {
    const auto path = test::realData(relative);
    TOMO_REQUIRE_FILE(path);
    auto reader = openDataset(path);
    for (const auto& [m, flagged] : expected) {
        PreprocessStats stats;
        ringsOn(*reader, row, m, stats);
        const PreprocessStats::RingDamage& g = stats.rings;
        std::printf("MEASURED %s row %d %s: %s%s\n", relative.c_str(), row, std::string(ringMethodName(m)).c_str(),
                    g.summary().c_str(), g.exceeded() ? " - flagged" : "");
        EXPECT_EQ(g.rows, 1);
        EXPECT_EQ(g.nonStripeRow, row);
        EXPECT_EQ(g.exceeded(), flagged) << ringMethodName(m) << ": " << g.summary();
    }
}

// The limits (5 % of the angular signal, 0.25 % of the integral) sit between
// these, measured with algotom's functions and here alike: tooth dead 0.081
// (-0.14 %), large 0.058 (-0.41 %), all 0.109 (-0.62 %), sorting 0.026
// (-0.04 %); I13 row 70 sorting 0.160 (-2.7 %), all 0.462 (-15 %), wavelet 0
// (0.00 %); dendrites sorting 0.013 (-0.01 %).
TEST(RingGuardRealData, FlagsTheToothWithDeadLargeAndAllNotWithSorting) {
    expectGuard("aps_tooth/tooth.h5", 0,
                {{RingMethod::Dead, true}, {RingMethod::Large, true}, {RingMethod::All, true},
                 {RingMethod::Sorting, false}, {RingMethod::Wavelet, false}});
}
TEST(RingGuardRealData, FlagsI13Row70WithSortingAndAll) {
    expectGuard("dls_i13_24737/i13_24737_dxchange.h5", 70,
                {{RingMethod::Sorting, true}, {RingMethod::All, true}, {RingMethod::Wavelet, false}});
}
TEST(RingGuardRealData, LeavesTheDendritesWithSortingAlone) {
    expectGuard("dls_i12_dendrites/dendrites_sino.h5", 0, {{RingMethod::Sorting, false}});
}

TEST(RingGuard, AStripeIsNoDamageAndAWedgeCutOutIs) {
    // A smooth object off the axis, with counting noise: a stripe added and
    // taken away again changes nothing but a stripe (0); a part of the
    // object's trace removed in a third of the views is damage.
    const StripedPhantom s = stripedPhantom();
    Image striped = s.clean; // full stripes only (stripedPhantom's partial one is not constant along the angles)
    for (int a = 0; a < kAngles; ++a)
        for (const int c : {40, 71, 72, 150}) striped.at(c, a) *= 1.03f;
    const RingChange none = ringChange(ringChangeSums(striped.data, s.clean.data, kAngles, kBins, ValueKind::Transmission));
    EXPECT_LT(none.nonStripe, 1e-3) << "undoing the stripes"; // measured 0: below the noise
    Image cut = s.clean;
    for (int a = 0; a < kAngles / 3; ++a)
        for (int c = 100; c < 130; ++c) cut.at(c, a) = std::sqrt(cut.at(c, a)); // half the line integral
    const RingChange wedge = ringChange(ringChangeSums(s.clean.data, cut.data, kAngles, kBins, ValueKind::Transmission));
    EXPECT_GT(wedge.nonStripe, PreprocessStats::RingDamage::kNonStripeLimit);
    EXPECT_LT(wedge.meanChange, 0.0);
    // A column of line integrals lowered everywhere: a stripe, but the integral changes.
    Image p = minusLog(s.clean), lowered = p;
    for (int a = 0; a < kAngles; ++a)
        for (int c = 110; c < 140; ++c) lowered.at(c, a) *= 0.5f;
    const RingChange centred = ringChange(ringChangeSums(p.data, lowered.data, kAngles, kBins, ValueKind::LineIntegral));
    EXPECT_LT(centred.meanChange, -PreprocessStats::RingDamage::kMeanChangeLimit);
}

TEST(StripeRemoval, WaveletMakesNoImpossibleTransmissions) {
    // A dense disc on the axis (T down to 0.0006, sharp edges constant along
    // the angles) and a stripe: on the transmissions, algotom's wavelet
    // method rings below 0 inside the disc (4500 values <= 0, measured with
    // algotom; they were clamped to p = 11.5 and counted as the data's).
    // On their logs nothing can be <= 0.
    constexpr int P = 180, N = 128;
    ImageStack counts(N, P, 1);
    for (int a = 0; a < P; ++a)
        for (int c = 0; c < N; ++c) {
            const double x = (c - 63.5) / 30.0;
            const double p = std::abs(x) < 1.0 ? 6.0 * std::sqrt(1.0 - x * x) + 0.5 : 0.0;
            counts.image(0)[static_cast<std::size_t>(a) * N + c] =
                static_cast<float>(20000.0 * std::exp(-p) * (c == 20 ? 1.1 : 1.0));
        }
    test::CountsDataset d(counts, uniformAngles(P));
    d.addFlatGroup(-1, std::vector<float>(N, 20000.0f));
    for (const double sigma : {1.0, 0.5}) {
        CorrectionOptions o;
        o.rings.method = RingMethod::Wavelet;
        o.rings.waveletSigma = sigma;
        PreprocessStats stats;
        const Image p = PreprocessingStage(d, o).load(0, 1, &stats).slice(0);
        EXPECT_EQ(stats.clamped, 0u) << sigma;
        EXPECT_EQ(stats.clampedByCorrections, 0u) << sigma;
        const float most = *std::max_element(p.data.begin(), p.data.end());
        EXPECT_LT(most, 8.0f) << sigma; // no value near the clamp's 11.5 (the disc's centre is 6.5)
    }
}

TEST(StripeRemovalRealData, I13WaveletKeepsTheObjectAndMakesNoImpossibleValues) {
    // Before: Daubechies 5, sigma 2, five levels on transmissions - row 70's
    // object (a 20 px disc on the axis) lost half its mean, and with sigma
    // 0.5 row 65 got transmissions <= 0, clamped to p = 11.5 and blamed on
    // the data. Now algotom's choices, on the logs: measured object mean
    // x0.997 (row 70), no value clamped.
    const auto path = test::realData("dls_i13_24737/i13_24737_dxchange.h5");
    TOMO_REQUIRE_FILE(path);
    auto reader = openDataset(path);
    const auto& angles = reader->info().angles;
    for (const auto& [row, sigma] : {std::pair{70, 0.0}, std::pair{65, 0.5}, std::pair{120, 0.0}}) {
        PreprocessStats before, after;
        const Image plain = ringsOn(*reader, row, RingMethod::Off, before);
        const Image removed = ringsOn(*reader, row, RingMethod::Wavelet, after, sigma);
        EXPECT_EQ(after.clamped, before.clamped) << row;
        EXPECT_EQ(after.clampedByCorrections, 0u) << row;
        const Image a = test::fbp(plain, angles, 85.85), b = test::fbp(removed, angles, 85.85);
        std::vector<float> sorted = a.data;
        std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(0.995 * sorted.size()), sorted.end());
        const float bright = 0.5f * sorted[static_cast<std::size_t>(0.995 * sorted.size())];
        double objectA = 0.0, objectB = 0.0;
        for (std::size_t i = 0; i < a.data.size(); ++i)
            if (a.data[i] > bright) {
                objectA += a.data[i];
                objectB += b.data[i];
            }
        std::printf("MEASURED I13 row %d wavelet (sigma %g): object mean x%.4f, %s\n", row,
                    sigma > 0.0 ? sigma : RingOptions{}.waveletSigma, objectB / objectA, after.rings.summary().c_str());
        EXPECT_NEAR(objectB / objectA, 1.0, 0.01) << row; // measured within 0.004
        EXPECT_FALSE(after.rings.exceeded()) << row;
    }
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
