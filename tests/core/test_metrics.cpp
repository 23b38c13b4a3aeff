// Quality figures and line profiles.
#include "tomo/error.h"
#include "tomo/metrics.h"
#include "tomo/worker_pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>
#include <vector>

namespace tomo {
namespace {

Image fromValues(int w, int h, std::vector<float> v) {
    Image img(w, h);
    img.data = std::move(v);
    return img;
}

TEST(CompareImages, KnownImagesGiveExactFigures) {
    // reference 0 1 2 3, result 0 1 2 5: one error of 2 in 4 pixels.
    const Image ref = fromValues(2, 2, {0, 1, 2, 3});
    const Image res = fromValues(2, 2, {0, 1, 2, 5});
    const auto m = compareImages(res, ref);
    EXPECT_EQ(m.pixels, 4u);
    EXPECT_DOUBLE_EQ(m.maxAbsError, 2.0);
    EXPECT_DOUBLE_EQ(m.rmse, 1.0);                              // sqrt(4 / 4)
    EXPECT_DOUBLE_EQ(m.psnr, 10.0 * std::log10(9.0 / 1.0));     // range 3, MSE 1
    EXPECT_DOUBLE_EQ(m.referenceRange, 3.0);
    EXPECT_DOUBLE_EQ(m.relativeError, std::sqrt(4.0 / 14.0));   // |d| = 2, |ref| = sqrt(14)
}

TEST(CompareImages, IdenticalImagesHaveInfinitePsnr) {
    const Image a = fromValues(3, 1, {1, 2, 3});
    const auto m = compareImages(a, a);
    EXPECT_EQ(m.rmse, 0.0);
    EXPECT_EQ(m.maxAbsError, 0.0);
    EXPECT_EQ(m.relativeError, 0.0);
    EXPECT_TRUE(std::isinf(m.psnr) && m.psnr > 0);
}

TEST(CompareImages, MaskSelectsThePixels) {
    const Image ref = fromValues(2, 2, {0, 1, 2, 3});
    const Image res = fromValues(2, 2, {10, 1, 2, 4});
    const std::vector<std::uint8_t> mask = {0, 1, 1, 1};
    const auto m = compareImages(res, ref, mask);
    EXPECT_EQ(m.pixels, 3u);
    EXPECT_DOUBLE_EQ(m.maxAbsError, 1.0);
    EXPECT_DOUBLE_EQ(m.rmse, std::sqrt(1.0 / 3.0));
    EXPECT_DOUBLE_EQ(m.psnr, 10.0 * std::log10(4.0 / (1.0 / 3.0))); // range over the mask: 3 - 1
    EXPECT_DOUBLE_EQ(m.referenceRange, 2.0);
}

TEST(CompareImages, RejectsMismatchedSizesEmptyMasksAndNaN) {
    const Image a(4, 2), b(2, 4);
    EXPECT_THROW(compareImages(a, b), InvalidArgument);
    const std::vector<std::uint8_t> wrongSize(3, 1), none(8, 0);
    EXPECT_THROW(compareImages(a, a, wrongSize), InvalidArgument);
    EXPECT_THROW(compareImages(a, a, none), InvalidArgument);
    Image n(4, 2);
    n.data[5] = std::nanf("");
    EXPECT_THROW(compareImages(n, a), DataError);
}

TEST(CompareImages, ThreadsGiveTheSameFiguresAndTheFirstNaN) {
    Image ref(301, 257), res(301, 257);
    for (std::size_t i = 0; i < ref.data.size(); ++i) {
        ref.data[i] = std::sin(0.001f * static_cast<float>(i));
        res.data[i] = ref.data[i] + 1e-3f * std::cos(0.37f * static_cast<float>(i));
    }
    const std::vector<std::uint8_t> mask = discMask(301, 257, 120.0);
    WorkerPool pool(4);
    for (const auto& m : {std::span<const std::uint8_t>(), std::span<const std::uint8_t>(mask)}) {
        const QualityMetrics one = compareImages(res, ref, m), many = compareImages(res, ref, m, &pool);
        EXPECT_EQ(many.pixels, one.pixels);
        EXPECT_EQ(many.maxAbsError, one.maxAbsError);
        EXPECT_NEAR(many.rmse, one.rmse, 1e-12 * one.rmse);
        EXPECT_NEAR(many.psnr, one.psnr, 1e-9);
        EXPECT_NEAR(many.relativeError, one.relativeError, 1e-12 * one.relativeError);
    }
    // Two NaNs in different parts: the message names the first.
    res.data[60000] = std::nanf("");
    ref.data[70001] = std::nanf("");
    try {
        compareImages(res, ref, {}, &pool);
        ADD_FAILURE() << "no DataError";
    } catch (const DataError& e) {
        EXPECT_NE(std::string(e.what()).find("NaN in the result at pixel (101, 199)"), std::string::npos) << e.what();
    }
}

TEST(DiscMask, SelectsPixelCentresInsideTheRadius) {
    // 4x4 grid: centres at +-0.5, +-1.5; radius 1 keeps the 4 inner pixels
    // (distance 0.707), radius 1.6 adds the 8 edge-middle ones (1.58).
    const auto m1 = discMask(4, 4, 1.0);
    int count = 0;
    for (auto v : m1) count += v;
    EXPECT_EQ(count, 4);
    EXPECT_EQ(m1[1 * 4 + 1], 1);
    EXPECT_EQ(m1[0], 0);
    count = 0;
    for (auto v : discMask(4, 4, 1.6)) count += v;
    EXPECT_EQ(count, 12);
}

TEST(LineProfile, LinearRampIsSampledExactly) {
    // v = 2x + 3y + 1 is reproduced exactly by bilinear interpolation.
    Image img(10, 8);
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 10; ++x) img.at(x, y) = static_cast<float>(2 * x + 3 * y + 1);
    const auto p = lineProfile(img, 0.5, 1.25, 8.0, 6.5);
    const double length = std::hypot(7.5, 5.25);
    ASSERT_EQ(p.size(), static_cast<std::size_t>(std::floor(length)) + 1); // one sample per pixel of length
    for (std::size_t i = 0; i < p.size(); ++i) {
        const double t = static_cast<double>(i) / (p.size() - 1);
        const double x = 0.5 + 7.5 * t, y = 1.25 + 5.25 * t;
        EXPECT_NEAR(p[i].distance, t * length, 1e-12);
        EXPECT_NEAR(p[i].value, 2 * x + 3 * y + 1, 1e-9);
    }
    // The last row and column are reachable, the end points are included.
    const auto edge = lineProfile(img, 9.0, 7.0, 0.0, 0.0, 5);
    ASSERT_EQ(edge.size(), 5u);
    EXPECT_DOUBLE_EQ(edge.front().value, 2 * 9 + 3 * 7 + 1);
    EXPECT_DOUBLE_EQ(edge.back().value, 1.0);
}

TEST(LineProfile, PointsOutsideTheImageAreNaN) {
    Image img(4, 4, 1.0f);
    const auto p = lineProfile(img, -2.0, 1.0, 2.0, 1.0, 5);
    EXPECT_TRUE(std::isnan(p[0].value));
    EXPECT_TRUE(std::isnan(p[1].value));
    EXPECT_DOUBLE_EQ(p[2].value, 1.0);
    EXPECT_THROW(lineProfile(img, 0, 0, 1, 1, 1), InvalidArgument);
    EXPECT_THROW(lineProfile(Image{}, 0, 0, 1, 1), InvalidArgument);
}

} // namespace
} // namespace tomo
