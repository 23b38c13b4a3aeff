// Paganin phase retrieval: against the analytic projection of a homogeneous
// sphere propagated with the transport-of-intensity equation, and chunked
// reading with the row margin against one-shot.
#include "corrections_test_helpers.h"
#include "io_test_helpers.h"
#include "test_support.h"
#include "tomo/corrections.h"
#include "tomo/preprocess.h"
#include "tomo/preview.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <algorithm>
#include <numbers>

namespace tomo {
namespace {

using test::CountsDataset;

/// A homogeneous sphere and its imaging, in SI units, with the physics
/// written out here independently of the filter: wavelength from the
/// photon energy, mu = 4 pi beta / wavelength.
struct Sphere {
    static constexpr int kSize = 128;      // detector rows = columns
    static constexpr double kPixel = 1e-6; // m
    static constexpr double kRadius = 30;  // pixels
    static constexpr double kEnergyKeV = 20.0;
    static constexpr double kDistance = 0.05; // m
    static constexpr double kDeltaOverBeta = 100.0;
    /// 1.23984193e-6 eV m (h c) / 20 keV.
    static double wavelength() { return 1.23984193e-6 / (kEnergyKeV * 1e3); }
    /// mu chosen so the centre's line integral mu * 2R is 0.5.
    static double mu() { return 0.5 / (2 * kRadius * kPixel); }
    static double delta() { return kDeltaOverBeta * mu() * wavelength() / (4 * std::numbers::pi); }

    static PaganinOptions options() {
        PaganinOptions o;
        o.enabled = true;
        o.deltaOverBeta = kDeltaOverBeta;
        o.energyKeV = kEnergyKeV;
        o.distanceM = kDistance;
        o.pixelSizeM = kPixel;
        return o;
    }

    /// mu * thickness at pixel (x, y): the exact line integral.
    static double lineIntegral(double x, double y) {
        const double c = (kSize - 1) / 2.0;
        const double r2 = (x - c) * (x - c) + (y - c) * (y - c);
        return r2 < kRadius * kRadius ? mu() * 2 * std::sqrt(kRadius * kRadius - r2) * kPixel : 0.0;
    }

    /// Intensity at the detector (Paganin 2002, eq. 5, the TIE for one
    /// material): I / I0 = (1 - distance delta / mu * laplacian) exp(-mu T),
    /// blurred by a detector response (Gaussian, sigma 1 px; it commutes
    /// with the Laplacian and keeps the sphere's edge, whose slope is
    /// infinite, finite). Computed on a 4x finer grid, Laplacian by central
    /// differences, averaged over each pixel.
    static Image intensity() {
        constexpr int kSub = 4;
        constexpr int kFine = kSize * kSub;
        const double h = kPixel / kSub;
        std::vector<double> e(static_cast<std::size_t>(kFine) * kFine), blurred(e.size()), tmp(e.size());
        for (int y = 0; y < kFine; ++y)
            for (int x = 0; x < kFine; ++x)
                e[static_cast<std::size_t>(y) * kFine + x] =
                    std::exp(-lineIntegral((x + 0.5) / kSub - 0.5, (y + 0.5) / kSub - 0.5));
        constexpr int kRadius = 4 * kSub; // 4 sigma
        std::vector<double> g(2 * kRadius + 1);
        double norm = 0.0;
        for (int i = -kRadius; i <= kRadius; ++i) norm += g[i + kRadius] = std::exp(-0.5 * i * i / (kSub * kSub));
        auto clampAt = [](int i) { return std::clamp(i, 0, kFine - 1); };
        for (int y = 0; y < kFine; ++y)
            for (int x = 0; x < kFine; ++x) {
                double sum = 0.0;
                for (int i = -kRadius; i <= kRadius; ++i)
                    sum += g[i + kRadius] * e[static_cast<std::size_t>(y) * kFine + clampAt(x + i)];
                tmp[static_cast<std::size_t>(y) * kFine + x] = sum / norm;
            }
        for (int y = 0; y < kFine; ++y)
            for (int x = 0; x < kFine; ++x) {
                double sum = 0.0;
                for (int i = -kRadius; i <= kRadius; ++i)
                    sum += g[i + kRadius] * tmp[static_cast<std::size_t>(clampAt(y + i)) * kFine + x];
                blurred[static_cast<std::size_t>(y) * kFine + x] = sum / norm;
            }
        const double k = kDistance * delta() / mu();
        auto at = [&](int x, int y) { return blurred[static_cast<std::size_t>(clampAt(y)) * kFine + clampAt(x)]; };
        Image out(kSize, kSize);
        for (int y = 0; y < kSize; ++y)
            for (int x = 0; x < kSize; ++x) {
                double sum = 0.0;
                for (int sy = 0; sy < kSub; ++sy)
                    for (int sx = 0; sx < kSub; ++sx) {
                        const int fx = x * kSub + sx, fy = y * kSub + sy;
                        const double laplacian =
                            (at(fx + 1, fy) + at(fx - 1, fy) + at(fx, fy + 1) + at(fx, fy - 1) - 4 * at(fx, fy)) /
                            (h * h);
                        sum += at(fx, fy) - k * laplacian;
                    }
                out.at(x, y) = static_cast<float>(sum / (kSub * kSub));
            }
        return out;
    }
};

/// A dataset whose every projection is the sphere's intensity (a sphere on
/// the axis looks the same from every angle), flat 10000, no dark.
std::unique_ptr<CountsDataset> sphereDataset(int projections) {
    const Image intensity = Sphere::intensity();
    const int n = Sphere::kSize;
    ImageStack counts(n, projections, n);
    for (int r = 0; r < n; ++r)
        for (int a = 0; a < projections; ++a)
            for (int c = 0; c < n; ++c)
                counts.data[(static_cast<std::size_t>(r) * projections + a) * n + c] = 10000.0f * intensity.at(c, r);
    auto d = std::make_unique<CountsDataset>(std::move(counts), uniformAngles(projections));
    d->addFlatGroup(-1, std::vector<float>(static_cast<std::size_t>(n) * n, 10000.0f));
    return d;
}

TEST(Paganin, RecoversTheProjectedThicknessOfASphere) {
    auto d = sphereDataset(2);
    CorrectionOptions o;
    o.paganin = Sphere::options();
    const int n = Sphere::kSize;
    const ImageStack retrieved = PreprocessingStage(*d, o).load(0, n);
    const ImageStack plain = PreprocessingStage(*d, {}).load(0, n);
    // Inside 0.7 R (the detector blur rounds the edge off).
    double worst = 0.0, worstPlain = 0.0, centre = Sphere::lineIntegral((n - 1) / 2.0, (n - 1) / 2.0);
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) {
            const double cx = (n - 1) / 2.0, dx = c - cx, dy = r - cx;
            if (dx * dx + dy * dy > 0.49 * Sphere::kRadius * Sphere::kRadius) continue;
            const double truth = Sphere::lineIntegral(c, r);
            const std::size_t i = (static_cast<std::size_t>(r) * 2 + 1) * n + c; // projection 1
            worst = std::max(worst, std::abs(retrieved.data[i] - truth));
            worstPlain = std::max(worstPlain, std::abs(plain.data[i] - truth));
        }
    std::printf("MEASURED Paganin sphere: max error inside 0.7 R %.2g with retrieval, %.2g without (centre mu T = "
                "%.2g, kernel %.2f px, margin %d rows)\n",
                worst, worstPlain, centre, PaganinFilter::kernelLength(o.paganin), PaganinFilter::margin(o.paganin));
    EXPECT_LT(worst, 0.01 * centre);
    EXPECT_GT(worstPlain, 0.05 * centre) << "propagation must matter for the test to mean anything";
}

TEST(Paganin, ChunkedWithTheMarginEqualsOneShot) {
    auto d = sphereDataset(3);
    CorrectionOptions o;
    o.paganin = Sphere::options();
    PreprocessingStage stage(*d, o);
    const int n = Sphere::kSize, margin = stage.rowMargin();
    EXPECT_EQ(margin, PaganinFilter::margin(o.paganin));
    const ImageStack oneShot = stage.load(0, n);
    double worst = 0.0;
    for (int first = 0; first < n; first += 7) {
        const int rows = std::min(7, n - first);
        const ImageStack chunk = stage.load(first, rows);
        for (std::size_t i = 0; i < chunk.data.size(); ++i)
            worst = std::max(worst, double(std::abs(chunk.data[i] - oneShot.data[first * chunk.imageSize() + i])));
    }
    // |dp| = relative difference of the retrieved transmission.
    std::printf("MEASURED Paganin chunks of 7 rows vs one-shot: max |dp| %.2g (margin %d rows)\n", worst, margin);
    EXPECT_LE(worst, 1e-6);

    // Without the margin the chunk's edge rows differ: the margin is what makes them equal.
    RawChunk raw = stage.read(40, 7);
    ASSERT_EQ(raw.type, SampleType::Float32);
    const float* stored = reinterpret_cast<const float*>(raw.values.data()); // [projection][block row][column]
    PaganinFilter filter(7, n, o.paganin);
    std::vector<float> projection(static_cast<std::size_t>(7) * n);
    for (int r = 0; r < 7; ++r) // projection 0, the chunk's own rows
        for (int c = 0; c < n; ++c) projection[r * n + c] = stored[static_cast<std::size_t>(margin + r) * n + c] / 1e4f;
    filter.apply(projection);
    double edge = 0.0;
    for (int c = 0; c < n; ++c)
        edge = std::max(edge, double(std::abs(-std::log(projection[c]) - oneShot.data[(std::size_t{40} * 3) * n + c])));
    EXPECT_GT(edge, 1e-3);
}

TEST(Paganin, OptionsAreCheckedAndLogCorrectedDataRefused) {
    CorrectionOptions o;
    o.paganin = Sphere::options();
    o.paganin.energyKeV = 0.0;
    EXPECT_TRUE(test::contains(test::messageOf<InvalidArgument>([&] { o.validate(); }), "--energy"));
    o.paganin = Sphere::options();
    auto memory = makeMemoryDataset(ImageStack(8, 4, 2), uniformAngles(4));
    EXPECT_TRUE(
        test::contains(test::messageOf<InvalidArgument>([&] { PreprocessingStage(*memory, o); }), "needs intensities"));
    EXPECT_THROW(PaganinFilter(0, 5, Sphere::options()), InvalidArgument);
    PaganinFilter f(3, 4, Sphere::options());
    std::vector<float> wrong(11);
    EXPECT_THROW(f.apply(wrong), InvalidArgument);
}

} // namespace
} // namespace tomo
