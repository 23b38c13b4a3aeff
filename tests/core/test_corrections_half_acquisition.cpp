// 360° half acquisition: the stitching layout, a half-acquisition scan of
// the Shepp-Logan phantom stitched against the full-field scan, the axis
// search, the stage, and the real 360° neutron sinogram.
#include "corrections_test_helpers.h"
#include "io_test_helpers.h"
#include "test_support.h"
#include "tomo/corrections.h"
#include "tomo/preprocess.h"
#include "tomo/preview.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#if TOMO_WITH_TIFF
#include <tiffio.h>
#endif

namespace tomo {
namespace {

constexpr double kPi = std::numbers::pi;

TEST(HalfAcquisitionLayout, PairsEachViewWithItsPartnerHalfATurnLater) {
    // 0 ... 359 degrees: partner of view p is p + 180 exactly.
    std::vector<double> angles = uniformAngles(360, 2 * kPi);
    HalfAcquisitionLayout l = planHalfAcquisition(angles, 100, 20.5);
    ASSERT_EQ(l.views.size(), 180u);
    for (int p = 0; p < 180; ++p) {
        EXPECT_EQ(l.views[p], p);
        EXPECT_EQ(l.partnerLower[p], p + 180);
        EXPECT_EQ(l.partnerUpper[p], p + 180);
        EXPECT_EQ(l.partnerWeight[p], 0.0f);
        EXPECT_DOUBLE_EQ(l.angles[p], angles[p]);
    }
    EXPECT_EQ(l.columns, 2 * 78 + 1); // R = 99 - 20.5 = 78.5
    EXPECT_DOUBLE_EQ(l.outputAxis, 78.0);

    // 0 ... 360 with both ends (the sarepy layout, 459 views): view 228's
    // partner is 457; a step that does not divide 180 degrees interpolates.
    std::vector<double> closed(459);
    for (int i = 0; i < 459; ++i) closed[i] = 2 * kPi * i / 458;
    l = planHalfAcquisition(closed, 50, 40.0);
    EXPECT_EQ(l.views.size(), 229u);
    EXPECT_EQ(l.partnerLower[228], 457);
    std::vector<double> odd(361);
    for (int i = 0; i < 361; ++i) odd[i] = 2 * kPi * i / 361;
    l = planHalfAcquisition(odd, 50, 10.0);
    EXPECT_EQ(l.partnerLower[0], 180);
    EXPECT_EQ(l.partnerUpper[0], 181);
    EXPECT_NEAR(l.partnerWeight[0], 0.5f, 1e-6f);
    // The last view's partner lies between the last projection and the first + 360.
    EXPECT_EQ(l.partnerLower.back(), 360);
    EXPECT_EQ(l.partnerUpper.back(), 0);
}

TEST(HalfAcquisitionLayout, RefusesWhatIsNotA360DegreeScan) {
    EXPECT_TRUE(
        test::contains(test::messageOf<InvalidArgument>([] { planHalfAcquisition(uniformAngles(180), 100, 10.0); }),
                       "needs a 360-degree scan"));
    std::vector<double> back = uniformAngles(360, 2 * kPi);
    std::swap(back[3], back[4]);
    EXPECT_TRUE(test::contains(test::messageOf<InvalidArgument>([&] { planHalfAcquisition(back, 100, 10.0); }),
                               "increasing angles"));
    EXPECT_TRUE(test::contains(
        test::messageOf<InvalidArgument>([] { planHalfAcquisition(uniformAngles(360, 2 * kPi), 100, 120.0); }),
        "outside the detector"));
}

/// A half-acquisition scan of the phantom: the full field of 255 columns
/// (axis at column 127) over 360°, of which the detector sees columns
/// 107 ... 254 (axis at its column 20).
struct HalfScan {
    static constexpr int kFull = 255, kFirst = 107, kAngles = 720;
    PhantomSpec spec = test::phantom2D(kFull);
    std::vector<double> angles = uniformAngles(kAngles, 2 * kPi);
    Image full; ///< the full-field 360° sinogram
    Image half; ///< what the half detector sees
};

HalfScan halfScan() {
    HalfScan s;
    s.full = projectPhantom(s.spec, s.angles).slice(0);
    s.half = Image(HalfScan::kFull - HalfScan::kFirst, HalfScan::kAngles);
    for (int a = 0; a < HalfScan::kAngles; ++a)
        for (int c = 0; c < s.half.width; ++c) s.half.at(c, a) = s.full.at(c + HalfScan::kFirst, a);
    return s;
}

TEST(HalfAcquisition, StitchedPhantomIsTheFullFieldSinogram) {
    const HalfScan s = halfScan();
    const HalfAcquisitionLayout l = planHalfAcquisition(s.angles, s.half.width, 20.0);
    ASSERT_EQ(l.columns, HalfScan::kFull);
    Image stitched(l.columns, static_cast<int>(l.views.size()));
    stitchHalfAcquisition(s.half.data, l, stitched.data);
    double worst = 0.0;
    for (int v = 0; v < stitched.height; ++v)
        for (int c = 0; c < stitched.width; ++c)
            worst = std::max(worst, double(std::abs(stitched.at(c, v) - s.full.at(c, v))));
    EXPECT_LT(worst, 1e-5);

    // The reconstruction: as good as the full-field one over 180 degrees.
    Image firstHalf(HalfScan::kFull, HalfScan::kAngles / 2);
    std::copy_n(s.full.data.begin(), firstHalf.data.size(), firstHalf.data.begin());
    const double fullError = test::phantomError(firstHalf, l.angles, s.spec);
    const double stitchedError = test::phantomError(stitched, l.angles, s.spec);
    std::printf("MEASURED half acquisition (axis 20 of 148 columns): RMSE %.3g stitched, %.3g full field\n",
                stitchedError, fullError);
    EXPECT_LE(stitchedError, 1.01 * fullError);
}

TEST(HalfAcquisition, HalvesThatDifferAreBlendedLinearlyAcrossTheOverlap) {
    // The beam drifted between the halves: every projection of the second
    // 180 degrees reads 0.1 more (a flat field 10% off, after the log). The
    // stitched row takes the partner alone left of the overlap, the view
    // alone right of it, and passes linearly from one to the other over the
    // 2 r + 1 = 41 columns both see (r = 20, the axis's distance from the
    // detector edge), centred on the stitched axis (127): no step anywhere.
    constexpr float kDrift = 0.1f;
    HalfScan s = halfScan();
    for (int a = HalfScan::kAngles / 2; a < HalfScan::kAngles; ++a)
        for (int c = 0; c < s.half.width; ++c) s.half.at(c, a) += kDrift;
    const HalfAcquisitionLayout l = planHalfAcquisition(s.angles, s.half.width, 20.0);
    ASSERT_EQ(l.columns, HalfScan::kFull);
    Image stitched(l.columns, static_cast<int>(l.views.size()));
    stitchHalfAcquisition(s.half.data, l, stitched.data);
    constexpr double r = 20.0, axis = 127.0;
    double worst = 0.0;
    for (int v = 0; v < stitched.height; ++v)
        for (int j = 0; j < stitched.width; ++j) {
            const double viewShare = std::clamp((j - axis + r) / (2 * r), 0.0, 1.0);
            const double expected = s.full.at(j, v) + (1.0 - viewShare) * kDrift;
            worst = std::max(worst, std::abs(stitched.at(j, v) - expected));
        }
    // Float rounding: measured 4.7e-8, 1e-6 is 20x that. A ramp over the
    // middle half of the overlap is up to a quarter of the drift off.
    EXPECT_LT(worst, 1e-6);
}

/// The half detector sampled `shift` px further right (0 < shift < 1): the
/// axis moves from column 20 to 20 - shift.
Image shiftedHalf(const HalfScan& s, double shift) {
    Image shifted(s.half.width - 1, s.half.height);
    const float w = static_cast<float>(shift);
    for (int a = 0; a < shifted.height; ++a)
        for (int c = 0; c < shifted.width; ++c)
            shifted.at(c, a) = (1.0f - w) * s.half.at(c, a) + w * s.half.at(c + 1, a); // sampled at c + shift
    return shifted;
}

TEST(HalfAcquisition, SubPixelAxisAndItsSearch) {
    const HalfScan s = halfScan();
    constexpr double kSubPixelAxisTolerance = 0.05;
    // Shifts whose overlap (2 axis + 1 columns) has a fraction of 0.2 and
    // 0.5: an overlap rounded to whole columns would be 0.1 and 0.25 px off.
    for (const double shift : {0.4, 0.75}) {
        const double axis = 20.0 - shift;
        const Image shifted = shiftedHalf(s, shift);
        const HalfAcquisitionAxis found = findHalfAcquisitionAxis(shifted, s.angles, 100);
        std::printf("MEASURED half-acquisition axis search: %.3f (true %.2f), overlap %.2f, confidence %.2f\n",
                    found.axis, axis, found.overlap, found.confidence);
        EXPECT_TRUE(found.axisOnLeft);
        // Measured errors 0.016 px (shift 0.4) and 0.018 px (0.75); 0.05 px
        // is about 3x the larger.
        EXPECT_NEAR(found.axis, axis, kSubPixelAxisTolerance) << "shift " << shift;
        EXPECT_GT(found.confidence, 0.5);
        // Mirrored detector: the axis on the right.
        Image mirrored(shifted.width, shifted.height);
        for (int a = 0; a < shifted.height; ++a)
            for (int c = 0; c < shifted.width; ++c) mirrored.at(c, a) = shifted.at(shifted.width - 1 - c, a);
        const HalfAcquisitionAxis right = findHalfAcquisitionAxis(mirrored, s.angles, 100);
        EXPECT_FALSE(right.axisOnLeft);
        EXPECT_NEAR(right.axis, shifted.width - 1 - axis, kSubPixelAxisTolerance) << "shift " << shift;
    }

    const Image shifted = shiftedHalf(s, 0.4);
    // Stitched at the sub-pixel axis: column j is at s = j - 126 from the
    // axis, sampled linearly at 19.6 + s of a detector itself sampled at
    // + 0.4: the full field's column 127 + s blurred by (0.24, 0.52, 0.24).
    const HalfAcquisitionLayout l = planHalfAcquisition(s.angles, shifted.width, 19.6);
    ASSERT_EQ(l.columns, 253);
    Image stitched(l.columns, static_cast<int>(l.views.size()));
    stitchHalfAcquisition(shifted.data, l, stitched.data);
    double worst = 0.0;
    for (int v = 0; v < stitched.height; ++v)
        for (int j = 1; j < l.columns - 1; ++j) {
            const int k = 127 + j - 126;
            const float expected = 0.24f * s.full.at(k - 1, v) + 0.52f * s.full.at(k, v) + 0.24f * s.full.at(k + 1, v);
            worst = std::max(worst, double(std::abs(stitched.at(j, v) - expected)));
        }
    EXPECT_LT(worst, 1e-5);
}

TEST(HalfAcquisition, TheStageStitchesAndFindsTheAxis) {
    const HalfScan s = halfScan();
    ImageStack stack(s.half.width, s.half.height, 2);
    std::copy(s.half.data.begin(), s.half.data.end(), stack.data.begin());
    std::copy(s.half.data.begin(), s.half.data.end(), stack.data.begin() + static_cast<std::ptrdiff_t>(s.half.size()));
    auto reader = makeMemoryDataset(stack, s.angles);
    CorrectionOptions o;
    o.halfAcquisition.enabled = true;
    PreprocessingStage stage(*reader, o);
    ASSERT_TRUE(stage.foundHalfAcquisitionAxis());
    ASSERT_TRUE(stage.options().halfAcquisition.axis);
    EXPECT_NEAR(*stage.options().halfAcquisition.axis, 20.0, 0.5);
    EXPECT_EQ(stage.outputProjections(), HalfScan::kAngles / 2);
    EXPECT_EQ(stage.outputColumns(), HalfScan::kFull);
    EXPECT_EQ(stage.outputAxis(), std::optional<double>(127.0));
    EXPECT_EQ(stage.load(1, 1).width, HalfScan::kFull);

    // The preview reconstructs the stitched row on the stitched grid.
    auto session = std::make_shared<PreviewSession>(makeMemoryDataset(stack, s.angles));
    PreviewRequest request;
    request.corrections.halfAcquisition.enabled = true;
    request.corrections.halfAcquisition.axis = 20.0;
    request.options.strategy = "cpu";
    const PreviewResult r = session->run(request);
    EXPECT_EQ(r.gridSize, HalfScan::kFull);
    EXPECT_DOUBLE_EQ(r.axis, 127.0);
    EXPECT_EQ(r.projections, HalfScan::kAngles / 2);
}

#if TOMO_WITH_TIFF
/// The sarepy 360° sinogram (uint16, 459 x 503) read with libtiff.
ImageStack readSarepy(const std::filesystem::path& path) {
    TIFF* tif = TIFFOpen(path.c_str(), "r");
    if (!tif) throw IoError("cannot open " + path.string());
    std::uint32_t width = 0, height = 0;
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width);
    TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height);
    ImageStack out(static_cast<int>(width), static_cast<int>(height), 1);
    std::vector<std::uint16_t> line(width);
    for (std::uint32_t y = 0; y < height; ++y) {
        if (TIFFReadScanline(tif, line.data(), y) < 0) throw IoError("cannot read " + path.string());
        for (std::uint32_t x = 0; x < width; ++x) out.data[static_cast<std::size_t>(y) * width + x] = line[x];
    }
    TIFFClose(tif);
    return out;
}

TEST(HalfAcquisitionRealData, SarepyNeutron360) {
    const auto tif = test::realData("sarepy_neutron_360/sinogram_360_neutron_image.tif");
    const auto anglesFile = test::realData("sarepy_neutron_360/angles_deg.txt");
    TOMO_REQUIRE_FILE(tif);
    TOMO_REQUIRE_FILE(anglesFile);
    const std::vector<double> angles = readAnglesFile(anglesFile);
    test::CountsDataset d(readSarepy(tif), angles, SampleType::UInt16);
    // As sarepy's example: columns 0-29 are the open beam, zeros interpolated.
    CorrectionOptions o;
    o.flatField.backgroundCount = 30;
    o.halfAcquisition.enabled = true;
    PreprocessingStage stage(d, o);
    PreprocessStats stats;
    const Image stitched = stage.load(0, 1, &stats).slice(0);
    const double axis = *stage.options().halfAcquisition.axis;
    std::printf("MEASURED sarepy 360: axis %.2f (confidence %.2f; SOURCES.md estimate 244.6-245.3), %zu values <= 0 "
                "interpolated, stitched %d x %d\n",
                axis, stage.foundHalfAcquisitionAxis()->confidence, stats.badValueCount, stitched.width,
                stitched.height);
    EXPECT_NEAR(axis, 244.9, 1.0);
    EXPECT_EQ(stats.badValueCount, 214u); // SOURCES.md: 214 pixels <= 0
    EXPECT_TRUE(stage.warnings().empty());

    // Stitched and reconstructed over 180 degrees = the plain 360 degree
    // reconstruction around the same axis, on the same grid.
    CorrectionOptions plain;
    plain.flatField.backgroundCount = 30;
    const Image sinogram360 = PreprocessingStage(d, plain).load(0, 1).slice(0);
    const Image direct = test::fbp(sinogram360, angles, axis);
    const Image viaStitch = test::fbp(stitched, stage.outputAngles(), *stage.outputAxis());
    // Both grids are centred on the axis: compare the common part.
    const int shift = static_cast<int>(std::lround(*stage.outputAxis() - (direct.width - 1) / 2.0));
    double num = 0, da = 0, db = 0, ma = 0, mb = 0;
    int count = 0;
    for (int y = 100; y < 400; ++y)
        for (int x = 100; x < 400; ++x) {
            ma += direct.at(x, y);
            mb += viaStitch.at(x + shift, y + shift);
            ++count;
        }
    ma /= count;
    mb /= count;
    for (int y = 100; y < 400; ++y)
        for (int x = 100; x < 400; ++x) {
            const double a = direct.at(x, y) - ma, b = viaStitch.at(x + shift, y + shift) - mb;
            num += a * b;
            da += a * a;
            db += b * b;
        }
    const double correlation = num / std::sqrt(da * db);
    std::printf("MEASURED sarepy 360: stitched vs direct 360 reconstruction, correlation %.4f\n", correlation);
    EXPECT_GT(correlation, 0.99);
}
#endif

} // namespace
} // namespace tomo
