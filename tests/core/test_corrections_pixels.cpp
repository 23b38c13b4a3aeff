// Corrections of single values and of the flat field: zingers, dead and
// saturated pixels, flat groups blended by projection index, beam-intensity
// normalisation, the raw-counts warning, and the i13 dead pixel.
#include "corrections_test_helpers.h"
#include "io_test_helpers.h"
#include "test_support.h"
#include "tomo/corrections.h"
#include "tomo/preprocess.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

namespace tomo {
namespace {

using test::CountsDataset;
using test::phantomError;

constexpr int kBins = 256;
constexpr int kAngles = 360;
constexpr float kFlat = 20000.0f;
constexpr float kDark = 100.0f;

/// A one-row phantom scan as raw counts (noise-free) with one flat and one dark.
struct CountsScan {
    PhantomSpec spec = test::phantom2D(kBins);
    std::vector<double> angles = uniformAngles(kAngles);
    ImageStack lineIntegrals;
    std::unique_ptr<CountsDataset> dataset;
};

CountsScan countsScan() {
    CountsScan s;
    s.lineIntegrals = projectPhantom(s.spec, s.angles);
    s.dataset = std::make_unique<CountsDataset>(test::countsOf(s.lineIntegrals, kFlat, kDark), s.angles);
    s.dataset->addFlatGroup(-1, std::vector<float>(kBins, kFlat));
    s.dataset->setDark(std::vector<float>(kBins, kDark));
    return s;
}

Image corrected(CountsDataset& d, const CorrectionOptions& o, PreprocessStats* stats = nullptr, int row = 0) {
    return PreprocessingStage(d, o).load(row, 1, stats).slice(0);
}

// ---------------------------------------------------------------- zingers

TEST(Zingers, ReplacedByTheMedianAndReported) {
    // 5 x 5 of 10s with one zinger, and a 2-pixel one: the median of their
    // windows is 10.
    Image image(5, 5, 10.0f);
    image.at(1, 1) = 30.0f;
    image.at(3, 3) = 25.0f;
    image.at(4, 3) = 25.0f;
    ZingerOptions o;
    o.enabled = true;
    std::vector<PixelPosition> where;
    EXPECT_EQ(removeZingers(image.data, 5, 5, o, ValueKind::Transmission, &where, 10), 3u);
    EXPECT_EQ(image.data, std::vector<float>(25, 10.0f));
    EXPECT_EQ(where, (std::vector<PixelPosition>{{0, 1, 1}, {0, 3, 3}, {0, 3, 4}}));
}

TEST(Zingers, TheReplacementIsTheMedianOfItsWindowOnAVaryingBackground) {
    // A random background, so that the values of a window are all different
    // and the median is the one middle value (a uniform background would
    // hide a replacement taken from the wrong place of the window).
    constexpr int H = 29, W = 31;
    Image image(W, H);
    std::mt19937 rng(17);
    std::uniform_real_distribution<float> background(1.0f, 1.2f); // all within the threshold (0.3)
    for (float& v : image.data) v = background(rng);
    std::set<std::pair<int, int>> planted;
    for (int y = 1; y < H; y += 6)
        for (int x = 2; x < W; x += 7) {
            image.at(x, y) = 10.0f; // 8x the background
            planted.insert({y, x});
        }
    for (const int window : {3, 5, 7}) {
        Image fixed = image;
        ZingerOptions o;
        o.enabled = true;
        o.window = window;
        std::vector<PixelPosition> where;
        ASSERT_EQ(removeZingers(fixed.data, H, W, o, ValueKind::Transmission, &where, 1000), planted.size());
        for (const PixelPosition& p : where) {
            ASSERT_TRUE(planted.count({p.projection, p.column})) << p.projection << ", " << p.column;
            std::vector<float> values; // the window of the input, edges replicated
            for (int dy = -window / 2; dy <= window / 2; ++dy)
                for (int dx = -window / 2; dx <= window / 2; ++dx)
                    values.push_back(image.at(std::clamp(p.column + dx, 0, W - 1), std::clamp(p.projection + dy, 0, H - 1)));
            std::sort(values.begin(), values.end());
            EXPECT_EQ(fixed.at(p.column, p.projection), values[values.size() / 2])
                << "window " << window << " at " << p.projection << ", " << p.column;
        }
        for (std::size_t i = 0; i < image.data.size(); ++i) // nothing else touched
            if (!planted.count({static_cast<int>(i / W), static_cast<int>(i % W)})) {
                ASSERT_EQ(fixed.data[i], image.data[i]) << i;
            }
    }
}

TEST(Zingers, LineIntegralsLookForDarkOutliersAndTheThresholdIsRelative) {
    Image p(7, 7, 2.0f);
    p.at(3, 3) = 1.0f; // 50 % below its median: a zinger in a line integral
    p.at(5, 1) = 3.0f; // above: not a zinger here
    ZingerOptions o;
    o.enabled = true;
    o.threshold = 0.4;
    EXPECT_EQ(removeZingers(p.data, 7, 7, o, ValueKind::LineIntegral), 1u);
    EXPECT_EQ(p.at(3, 3), 2.0f);
    EXPECT_EQ(p.at(5, 1), 3.0f);
    o.threshold = 0.6; // 1.0 is only 50 % below
    Image q(7, 7, 2.0f);
    q.at(3, 3) = 1.0f;
    EXPECT_EQ(removeZingers(q.data, 7, 7, o, ValueKind::LineIntegral), 0u);
}

TEST(Zingers, NoiseAroundZeroIsNotTakenForZingers) {
    // Line integrals of air: noise around 0 next to an object at 50. The
    // floor (the sinogram's mean |p|) keeps the noise below the threshold.
    Image p(40, 40, 0.0f);
    std::mt19937 rng(1);
    std::normal_distribution<float> noise(0.0f, 0.02f);
    for (int y = 0; y < 40; ++y)
        for (int x = 0; x < 40; ++x) p.at(x, y) = (x >= 20 ? 50.0f : 0.0f) + noise(rng);
    ZingerOptions o;
    o.enabled = true;
    EXPECT_EQ(removeZingers(p.data, 40, 40, o, ValueKind::LineIntegral), 0u);
}

TEST(Zingers, OnAPhantomScanTheErrorStaysTheFaultFreeOne) {
    CountsScan s = countsScan();
    const double faultFree = phantomError(corrected(*s.dataset, {}), s.angles, s.spec);
    // Zingers: excess counts of 1x to 3x the flat at 300 places, some two wide.
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> angle(0, kAngles - 1), column(10, kBins - 11);
    std::uniform_real_distribution<float> excess(1.0f, 3.0f);
    std::set<std::pair<int, int>> planted;
    for (int k = 0; k < 300; ++k) {
        const int a = angle(rng), c = column(rng);
        if (planted.count({a, c - 1}) || planted.count({a, c + 1}) || planted.count({a - 1, c}) ||
            planted.count({a + 1, c}))
            continue;
        s.dataset->counts().image(0)[static_cast<std::size_t>(a) * kBins + c] += excess(rng) * kFlat;
        planted.insert({a, c});
    }
    const double faulty = phantomError(corrected(*s.dataset, {}), s.angles, s.spec);
    CorrectionOptions o;
    o.zingers.enabled = true;
    PreprocessStats stats;
    const double fixed = phantomError(corrected(*s.dataset, o, &stats), s.angles, s.spec);
    std::printf("MEASURED zingers on the phantom: RMSE %.3g fixed, %.3g fault-free, %.3g with zingers; %zu of %zu "
                "found\n",
                fixed, faultFree, faulty, stats.zingerCount, planted.size());
    ASSERT_GT(faulty, 1.5 * faultFree);
    EXPECT_LE(fixed, 1.1 * faultFree);
    EXPECT_EQ(stats.zingerCount, planted.size());
    std::set<std::pair<int, int>> found;
    for (const PixelPosition& p : stats.zingers) found.insert({p.projection, p.column});
    EXPECT_EQ(found, planted);
}

TEST(Zingers, InTheFlatTheyAreRemovedBeforeTheFlatIsUsed) {
    CountsScan s = countsScan();
    const Image clean = corrected(*s.dataset, {});
    std::vector<float> flat(kBins, kFlat);
    flat[77] = 3 * kFlat; // a zinger in the (mean) flat: a ring in every slice
    CountsDataset d(s.dataset->counts(), s.angles);
    d.addFlatGroup(-1, flat);
    d.setDark(std::vector<float>(kBins, kDark));
    CorrectionOptions o;
    o.zingers.enabled = true;
    PreprocessStats stats;
    const Image fixed = corrected(d, o, &stats);
    EXPECT_EQ(stats.flatZingerCount, 1u);
    for (int a = 0; a < kAngles; ++a) ASSERT_NEAR(fixed.at(77, a), clean.at(77, a), 1e-5f) << a;
}

#if TOMO_WITH_HDF5
/// The median of the window x window values around each value, edges
/// replicated (scipy's median_filter with mode "nearest").
Image medianFiltered(const Image& in, int window) {
    Image out(in.width, in.height);
    std::vector<float> values;
    for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x) {
            values.clear();
            for (int dy = -window / 2; dy <= window / 2; ++dy)
                for (int dx = -window / 2; dx <= window / 2; ++dx)
                    values.push_back(in.at(std::clamp(x + dx, 0, in.width - 1), std::clamp(y + dy, 0, in.height - 1)));
            std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
            out.at(x, y) = values[values.size() / 2];
        }
    return out;
}

TEST(ZingersRealData, PsiBasaltTheDefaultCatchesClusteredZingers) {
    // How it is measured (independently of the method under test):
    //  * reference r = the 9 x 9 median of the log-corrected sinogram (a
    //    cluster of up to 40 values cannot outvote it);
    //  * sigma = 1.4826 x the median absolute deviation of v - r over the
    //    values > 0 (the data's noise, robustly);
    //  * outliers = values below r by more than 4.5 sigma (zingers are dark
    //    in line integrals; Gaussian noise passes 4.5 sigma about once in
    //    these 530 x 627 values);
    //  * false replacements = replaced values that are not outliers, as a
    //    share of the replaced values;
    //  * streak energy = sum over the outliers of (value - r)^2, after over
    //    before the correction (what FBP smears into streaks).
    // Measured: the old default (3 x 3) replaced 1632 values, 4.2 % of them
    // false, and left 0.21 of the streak energy (clusters of 3+ values
    // outvote a 3 x 3 median); 5 x 5: 1869 values, 2.6 % false, 0.051 left.
    const auto path = test::realData("psi_neutron_basalt/basalt_sino.h5");
    TOMO_REQUIRE_FILE(path);
    auto reader = openDataset(path);
    const Image before = loadSinograms(*reader, 0, 1).slice(0);
    CorrectionOptions o;
    o.zingers.enabled = true; // the defaults otherwise
    PreprocessStats stats;
    const Image after = PreprocessingStage(*reader, o).load(0, 1, &stats).slice(0);

    const Image r = medianFiltered(before, 9);
    std::vector<float> residual;
    for (std::size_t i = 0; i < before.data.size(); ++i)
        if (before.data[i] > 0.0f) residual.push_back(before.data[i] - r.data[i]);
    auto median = [](std::vector<float> v) {
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        return v[v.size() / 2];
    };
    const float centre = median(residual);
    for (float& e : residual) e = std::abs(e - centre);
    const double sigma = 1.4826 * median(residual);
    std::size_t outliers = 0, replaced = 0, falseReplaced = 0;
    double energyBefore = 0.0, energyAfter = 0.0;
    for (std::size_t i = 0; i < before.data.size(); ++i) {
        const bool outlier = r.data[i] - before.data[i] > 4.5 * sigma;
        const bool changed = after.data[i] != before.data[i];
        outliers += outlier;
        replaced += changed;
        falseReplaced += changed && !outlier;
        if (outlier) {
            energyBefore += std::pow(before.data[i] - r.data[i], 2);
            energyAfter += std::pow(after.data[i] - r.data[i], 2);
        }
    }
    const double falseShare = static_cast<double>(falseReplaced) / static_cast<double>(replaced);
    const double energy = energyAfter / energyBefore;
    std::printf("MEASURED basalt zingers: %zu outliers (4.5 sigma = %.3g), %zu replaced (%zu counted), %.3f false, "
                "streak energy %.3f of before\n",
                outliers, 4.5 * sigma, replaced, stats.zingerCount, falseShare, energy);
    EXPECT_EQ(replaced, stats.zingerCount);
    EXPECT_LE(falseShare, 0.10);
    EXPECT_LE(energy, 0.15);
}
#endif

// ------------------------------------------------------------ dead pixels

TEST(InterpolateMasked, LinearBetweenNeighboursAndNearestAtTheEnds) {
    std::vector<float> line{9, 1, 9, 9, 4, 5, 9};
    const std::vector<std::uint8_t> mask{1, 0, 1, 1, 0, 0, 1};
    ASSERT_TRUE(interpolateMasked(line, mask));
    EXPECT_EQ(line, (std::vector<float>{1, 1, 2, 3, 4, 5, 5}));
    std::vector<float> all{1, 2};
    EXPECT_FALSE(interpolateMasked(all, std::vector<std::uint8_t>{1, 1}));
    EXPECT_EQ(all, (std::vector<float>{1, 2}));
    EXPECT_THROW(interpolateMasked(all, std::vector<std::uint8_t>{1}), InvalidArgument);
}

TEST(DeadPixels, ADeadColumnIsInterpolatedAndTheErrorStaysTheFaultFreeOne) {
    CountsScan s = countsScan();
    const double faultFree = phantomError(corrected(*s.dataset, {}), s.angles, s.spec);
    // Column 97 dead: no signal in the data, flat and dark alike.
    std::vector<float> flat(kBins, kFlat), dark(kBins, kDark);
    flat[97] = dark[97] = 0.0f;
    ImageStack counts = s.dataset->counts();
    for (int a = 0; a < kAngles; ++a) counts.image(0)[static_cast<std::size_t>(a) * kBins + 97] = 0.0f;
    CountsDataset d(counts, s.angles);
    d.addFlatGroup(-1, flat);
    d.setDark(dark);
    PreprocessStats fixedStats, clampedStats;
    const double fixed = phantomError(corrected(d, {}, &fixedStats), s.angles, s.spec);
    const double clamped = phantomError(corrected(d, CorrectionOptions::none(), &clampedStats), s.angles, s.spec);
    std::printf("MEASURED dead column: RMSE %.3g interpolated, %.3g fault-free, %.3g clamped\n", fixed, faultFree,
                clamped);
    EXPECT_LE(fixed, 1.1 * faultFree);
    EXPECT_GT(clamped, 2 * faultFree);
    EXPECT_EQ(fixedStats.deadPixelCount, 1u);
    EXPECT_EQ(fixedStats.deadPixels, (std::vector<PixelPosition>{{0, -1, 97}}));
    EXPECT_EQ(fixedStats.clamped, 0u);
    EXPECT_EQ(fixedStats.badValueCount, 0u) << "the dead pixel's values are not counted again";
    EXPECT_EQ(clampedStats.clamped, static_cast<std::size_t>(kAngles));
}

TEST(DeadPixels, SaturatedAndZeroValuesAreInterpolatedAlongTheRow) {
    // uint16 data: 65535 is saturated; a value at the dark level has no transmission.
    Image counts(6, 2, 1000.0f);
    counts.at(2, 0) = 65535.0f;
    counts.at(4, 1) = 10.0f;
    counts.at(1, 1) = 500.0f;
    counts.at(5, 0) = 61000.0f; // bright, but below the uint16 limit
    ImageStack stack(6, 2, 1);
    stack.data = counts.data;
    CountsDataset d(stack, {0.0, 1.0}, SampleType::UInt16);
    d.addFlatGroup(-1, std::vector<float>(6, 2010.0f));
    d.setDark(std::vector<float>(6, 10.0f));
    PreprocessStats stats;
    const Image p = corrected(d, {}, &stats);
    const float half = static_cast<float>(-std::log(990.0 / 2000.0));
    EXPECT_NEAR(p.at(2, 0), half, 1e-6f); // between two equal neighbours
    EXPECT_NEAR(p.at(4, 1), half, 1e-6f);
    EXPECT_EQ(stats.badValueCount, 2u);
    EXPECT_EQ(stats.badValues, (std::vector<PixelPosition>{{0, 0, 2}, {0, 1, 4}}));
    // A saturation level of the user's (a detector that saturates early).
    CorrectionOptions o;
    o.badPixels.saturation = 60000.0;
    const Image q = corrected(d, o, &stats);
    EXPECT_EQ(stats.badValues, (std::vector<PixelPosition>{{0, 0, 2}, {0, 0, 5}, {0, 1, 4}}));
    EXPECT_NEAR(q.at(5, 0), half, 1e-6f); // the nearest good value at the end of the row
}

TEST(DeadPixels, I13RowZeroMatchesRowOneAfterTheFix) {
    const auto path = test::realData("dls_i13_24737/i13_24737_dxchange.h5");
    TOMO_REQUIRE_FILE(path);
    auto reader = openDataset(path);
    const DatasetInfo& info = reader->info();
    constexpr double kAxis = 85.85; // SOURCES.md
    auto rowMean = [&](const CorrectionOptions& o, int row, PreprocessStats* stats) {
        const Image slice = test::fbp(PreprocessingStage(*reader, o).load(row, 1, stats).slice(0), info.angles, kAxis);
        return std::accumulate(slice.data.begin(), slice.data.end(), 0.0) / static_cast<double>(slice.size());
    };
    PreprocessStats stats;
    const double row0 = rowMean({}, 0, &stats), row1 = rowMean({}, 1, nullptr);
    const double clamped = rowMean(CorrectionOptions::none(), 0, nullptr);
    std::printf("MEASURED i13 slice means: row 0 %.4g fixed (%.4g clamped), row 1 %.4g\n", row0, clamped, row1);
    EXPECT_NEAR(row0, row1, 0.1 * std::abs(row1));
    EXPECT_GT(std::abs(clamped - row1), std::abs(row1)) << "the clamped pixel used to wreck the row";
    EXPECT_EQ(stats.deadPixels, (std::vector<PixelPosition>{{0, -1, 0}}));
}

// ------------------------------------------------------------- flat field

TEST(FlatBlend, LinearInTheProjectionIndexClampedOutside) {
    const std::vector<double> positions{-1.0, 49.5, 100.0};
    FlatBlend b = flatBlend(positions, 0);
    EXPECT_EQ(b.lower, 0);
    EXPECT_EQ(b.upper, 1);
    EXPECT_DOUBLE_EQ(b.weight, 1.0 / 50.5);
    b = flatBlend(positions, 70);
    EXPECT_EQ(b.lower, 1);
    EXPECT_EQ(b.upper, 2);
    EXPECT_DOUBLE_EQ(b.weight, 20.5 / 50.5);
    b = flatBlend(std::vector<double>{3.5, 10.0}, 2);
    EXPECT_EQ(b.lower, 0);
    EXPECT_EQ(b.upper, 0);
    b = flatBlend(std::vector<double>{3.5, 10.0}, 10);
    EXPECT_EQ(b.lower, 1);
    EXPECT_EQ(b.upper, 1);
    EXPECT_THROW(flatBlend(std::vector<double>{}, 0), InvalidArgument);
    EXPECT_THROW(flatBlend(std::vector<double>{5.0, 1.0}, 0), InvalidArgument);
}

TEST(FlatField, FlatsBeforeAndAfterAreInterpolatedByProjectionIndex) {
    // The beam drifts linearly from 20000 to 14000 counts over the scan;
    // flats are taken before (-1) and after (P).
    const int P = 50, N = 40, R = 3;
    ImageStack p(N, P, R);
    for (std::size_t i = 0; i < p.data.size(); ++i) p.data[i] = 0.2f + 0.001f * static_cast<float>(i % 97);
    auto beam = [&](double position) { return 20000.0 - 6000.0 * (position + 1) / (P + 1); };
    ImageStack counts = p;
    for (int r = 0; r < R; ++r)
        for (int a = 0; a < P; ++a)
            for (int c = 0; c < N; ++c) {
                float& v = counts.data[(static_cast<std::size_t>(r) * P + a) * N + c];
                v = kDark + static_cast<float>(beam(a)) * std::exp(-v);
            }
    CountsDataset d(counts, uniformAngles(P));
    d.addFlatGroup(-1, std::vector<float>(static_cast<std::size_t>(R) * N, static_cast<float>(kDark + beam(-1))));
    d.addFlatGroup(P, std::vector<float>(static_cast<std::size_t>(R) * N, static_cast<float>(kDark + beam(P))));
    d.setDark(std::vector<float>(static_cast<std::size_t>(R) * N, kDark));
    const ImageStack blended = PreprocessingStage(d, {}).load(0, R);
    EXPECT_EQ(d.flatGroupReads, 2);
    double worst = 0.0;
    for (std::size_t i = 0; i < p.data.size(); ++i)
        worst = std::max(worst, double(std::abs(blended.data[i] - p.data[i])));
    EXPECT_LT(worst, 2e-6);
    // One mean flat (the readers' single group) is off by the drift.
    CountsDataset mean(counts, uniformAngles(P));
    mean.addFlatGroup(-1, std::vector<float>(static_cast<std::size_t>(R) * N, static_cast<float>(kDark + 17000.0)));
    mean.setDark(std::vector<float>(static_cast<std::size_t>(R) * N, kDark));
    const ImageStack averaged = PreprocessingStage(mean, {}).load(0, R);
    EXPECT_GT(std::abs(averaged.data[0] - p.data[0]), 0.1);
}

TEST(FlatField, BeamIntensityIsNormalisedFromBackgroundColumns) {
    // No flats; the source flickers by +-5 % from projection to projection.
    // Columns 0..7 see only the beam.
    const int P = 30, N = 64;
    ImageStack counts(N, P, 1);
    std::vector<float> truth(static_cast<std::size_t>(P) * N);
    for (int a = 0; a < P; ++a) {
        const float beam = 30000.0f * (1.0f + 0.05f * std::sin(1.3f * a));
        for (int c = 0; c < N; ++c) {
            const float p = c < 8 ? 0.0f : 0.5f + 0.01f * c;
            truth[static_cast<std::size_t>(a) * N + c] = p;
            counts.data[static_cast<std::size_t>(a) * N + c] = beam * std::exp(-p);
        }
    }
    CountsDataset d(counts, uniformAngles(P), SampleType::Float32);
    CorrectionOptions o;
    o.flatField.backgroundFirst = 0;
    o.flatField.backgroundCount = 8;
    PreprocessingStage stage(d, o);
    const ImageStack normalised = stage.load(0, 1);
    for (std::size_t i = 0; i < truth.size(); ++i) ASSERT_NEAR(normalised.data[i], truth[i], 2e-6) << i;
    EXPECT_TRUE(stage.warnings().empty());

    // Without them, by default: found (columns 0..7, less 2 at the object's
    // side), said, and the same values.
    PreprocessingStage found(d, {});
    EXPECT_EQ(found.options().flatField.backgroundFirst, 0);
    EXPECT_EQ(found.options().flatField.backgroundCount, 6);
    ASSERT_TRUE(found.foundBackgroundColumns());
    EXPECT_NEAR(found.foundBackgroundColumns()->openBeam, 30000.0, 0.05 * 30000.0);
    const ImageStack automatic = found.load(0, 1);
    for (std::size_t i = 0; i < truth.size(); ++i) ASSERT_NEAR(automatic.data[i], truth[i], 2e-6) << i;
    ASSERT_EQ(found.warnings().size(), 1u);
    EXPECT_TRUE(test::contains(found.warnings()[0], "the mean of columns 0:6"));
    EXPECT_TRUE(test::contains(found.warnings()[0], "found automatically"));

    // Not looked for: -log of counts, and a warning that says by how much
    // that is off and what to do.
    o.flatField.backgroundCount = 0;
    o.flatField.findBackground = false;
    PreprocessingStage raw(d, o);
    const ImageStack minusLogCounts = raw.load(0, 1);
    EXPECT_LT(minusLogCounts.data[0], -10.0f);
    ASSERT_EQ(raw.warnings().size(), 1u);
    EXPECT_TRUE(test::contains(raw.warnings()[0], "without flat fields"));
    EXPECT_TRUE(test::contains(raw.warnings()[0], "every line integral carries C = -ln(open beam)"));
    EXPECT_TRUE(test::contains(raw.warnings()[0], "--background-columns"));
    EXPECT_FALSE(raw.foundBackgroundColumns());

    o.flatField.backgroundFirst = 60; // 60 + 8 > 64
    o.flatField.backgroundCount = 8;
    EXPECT_TRUE(
        test::contains(test::messageOf<InvalidArgument>([&] { PreprocessingStage(d, o); }), "--background-columns"));
}

TEST(FlatField, NonFiniteFlatNamesTheFileRowAndColumn) {
    CountsScan s = countsScan();
    std::vector<float> flat(kBins, kFlat);
    flat[5] = std::numeric_limits<float>::quiet_NaN();
    CountsDataset d(s.dataset->counts(), s.angles);
    d.addFlatGroup(-1, flat);
    const auto message = test::messageOf<DataError>([&] { corrected(d, {}); });
    EXPECT_TRUE(test::contains(message, "memory-counts: flat field is NaN at row 0, column 5"));
}

} // namespace
} // namespace tomo
