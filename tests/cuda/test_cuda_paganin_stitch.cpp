// The GPU twins of Paganin phase retrieval and 360° half-acquisition
// stitching against their CPU definitions (tomo/corrections.h): Paganin on
// noisy synthetic transmissions of odd and even shapes with short and long
// kernels (cuFFT against FFTW: 1e-5 of the largest value), stitching of
// synthetic 360° sinograms with the axis left or right of centre, fractional
// axes and non-uniform angles (interpolation only: 1e-6), and the CPU's
// argument checks. Skips without a GPU.
#include "cuda_test_util.h"

#include "tomo/corrections.h"
#include "tomo/cuda/corrections.h"

#include <cmath>
#include <numbers>
#include <random>

namespace tomo::cudatest {
namespace {

constexpr double kPi = std::numbers::pi;

/// max |a - b| / max |b|.
double relativeToMax(std::span<const float> a, std::span<const float> b) {
    double worst = 0.0, largest = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
        largest = std::max(largest, std::abs(static_cast<double>(b[i])));
    }
    return worst / largest;
}

PaganinOptions paganinOptions(double deltaOverBeta, double energyKeV, double distanceM, double pixelSizeM) {
    return {true, deltaOverBeta, energyKeV, distanceM, pixelSizeM};
}

/// Transmissions of a smooth object (two overlapping Gaussian blobs) times
/// 5% multiplicative noise: structure at every frequency, values in (0, 1].
std::vector<float> transmissions(int rows, int columns, unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> noise(-0.05f, 0.05f);
    std::vector<float> t(static_cast<std::size_t>(rows) * columns);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < columns; ++c) {
            const double y = (r + 0.5) / rows, x = (c + 0.5) / columns;
            const double thickness = 1.5 * std::exp(-((x - 0.4) * (x - 0.4) + (y - 0.5) * (y - 0.5)) / 0.02) +
                                     0.8 * std::exp(-((x - 0.7) * (x - 0.7) + (y - 0.3) * (y - 0.3)) / 0.005);
            t[static_cast<std::size_t>(r) * columns + c] =
                static_cast<float>(std::exp(-thickness)) * (0.95f + noise(random));
        }
    return t;
}

struct PaganinCase {
    const char* name;
    PaganinOptions options;
};

/// A kernel of about 7 pixels (margin 130: padding dominates small blocks),
/// one of about 14 (margin 259) and one far below a pixel (margin 1, the
/// smallest: padding by the block's own size only).
std::vector<PaganinCase> paganinCases() {
    return {{"short kernel", paganinOptions(200.0, 20.0, 0.05, 1e-6)},
            {"long kernel", paganinOptions(1500.0, 25.0, 0.3, 3e-6)},
            {"sub-pixel kernel", paganinOptions(1.0, 30.0, 0.001, 5e-6)}};
}

TEST(CudaPaganin, MatchesCpuOnOddAndEvenShapes) {
    TOMO_REQUIRE_CUDA();
    const std::pair<int, int> shapes[] = {{37, 211}, {64, 64}, {9, 500}, {1, 1}, {120, 33}};
    unsigned seed = 1;
    for (const PaganinCase& c : paganinCases())
        for (const auto& [rows, columns] : shapes) {
            SCOPED_TRACE(std::string(c.name) + ", " + std::to_string(rows) + " x " + std::to_string(columns) +
                         ", margin " + std::to_string(PaganinFilter::margin(c.options)));
            const std::vector<float> input = transmissions(rows, columns, seed++);
            std::vector<float> cpu = input, gpu = input;
            PaganinFilter(rows, columns, c.options).apply(cpu);
            cuda::paganinOnGpu(gpu, rows, columns, c.options);
            EXPECT_LE(relativeToMax(gpu, cpu), 1e-5);
            // The comparison means something only where the filter changes the data.
            if (PaganinFilter::margin(c.options) > 1 && rows * columns > 1) {
                EXPECT_GT(relativeToMax(input, cpu), 1e-3);
            }
        }
}

TEST(CudaPaganin, RejectsBadArgumentsLikeTheCpu) {
    TOMO_REQUIRE_CUDA();
    const PaganinOptions good = paganinOptions(200.0, 20.0, 0.05, 1e-6);
    std::vector<float> block(64);
    EXPECT_THROW(cuda::paganinOnGpu(block, 0, 64, good), InvalidArgument);
    EXPECT_THROW(cuda::paganinOnGpu(block, 64, 0, good), InvalidArgument);
    EXPECT_THROW(cuda::paganinOnGpu(block, 8, 9, good), InvalidArgument); // 64 values for 72
    for (PaganinOptions bad : {paganinOptions(0.0, 20.0, 0.05, 1e-6), paganinOptions(200.0, -1.0, 0.05, 1e-6),
                               paganinOptions(200.0, 20.0, 0.0, 1e-6), paganinOptions(200.0, 20.0, 0.05, 0.0)}) {
        EXPECT_THROW(PaganinFilter(8, 8, bad), InvalidArgument);
        EXPECT_THROW(cuda::paganinOnGpu(block, 8, 8, bad), InvalidArgument);
    }
}

/// Increasing angles over [0, 2 pi) with steps of 0.5 to 1.5 times the mean:
/// most partners fall between two projections, and the last views' partners
/// between the last projection and the first + 2 pi.
std::vector<double> irregularAngles(int count, unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> step(0.5, 1.5);
    std::vector<double> steps(static_cast<std::size_t>(count));
    for (double& s : steps) s = step(random);
    double total = 0.0;
    for (double s : steps) total += s;
    std::vector<double> angles(static_cast<std::size_t>(count));
    double a = 0.3; // not at 0: the first angle is arbitrary
    for (int p = 0; p < count; ++p) {
        angles[p] = a;
        a += steps[p] * 2 * kPi / total;
    }
    return angles;
}

/// A 360° sinogram of a few points rotating about `axis`, each a Gaussian
/// trace, plus a ramp across the columns and noise.
std::vector<float> sinogram360(const std::vector<double>& angles, int columns, double axis, unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> noise(-0.02f, 0.02f);
    struct Point {
        double radius, phase, height;
    };
    const Point points[] = {{0.3 * columns, 0.2, 1.0}, {0.6 * columns, 2.0, 0.5}, {0.1 * columns, 4.0, 0.8}};
    std::vector<float> s(angles.size() * columns);
    for (std::size_t p = 0; p < angles.size(); ++p)
        for (int c = 0; c < columns; ++c) {
            double v = 0.2 + 0.001 * c;
            for (const Point& q : points) {
                const double u = c - (axis + q.radius * std::cos(angles[p] + q.phase));
                v += q.height * std::exp(-u * u / 8.0);
            }
            s[p * columns + c] = static_cast<float>(v) + noise(random);
        }
    return s;
}

TEST(CudaStitch, HalfAcquisitionMatchesCpu) {
    TOMO_REQUIRE_CUDA();
    constexpr int kColumns = 97;
    // Left and right of centre, fractional and integer, near the edge (r < 0.5:
    // no overlap ramp) and at the centre (everything overlaps).
    const double axes[] = {10.3, 20.5, 15.0, 0.2, 85.7, kColumns - 1 - 0.25, 70.0, (kColumns - 1) / 2.0};
    unsigned seed = 11;
    for (const int projections : {181, 360})
        for (const double axis : axes) {
            SCOPED_TRACE("axis " + std::to_string(axis) + ", " + std::to_string(projections) + " projections");
            const std::vector<double> angles = irregularAngles(projections, seed);
            const std::vector<float> sinogram = sinogram360(angles, kColumns, axis, seed++);
            const HalfAcquisitionLayout layout = planHalfAcquisition(angles, kColumns, axis);
            const bool blends = std::any_of(layout.partnerWeight.begin(), layout.partnerWeight.end(),
                                            [](float w) { return w > 0.01f && w < 0.99f; });
            ASSERT_TRUE(blends) << "the angles should put partners between projections";
            std::vector<float> cpu(layout.views.size() * layout.columns), gpu(cpu.size(), -1.0f);
            stitchHalfAcquisition(sinogram, layout, cpu);
            cuda::stitchHalfAcquisitionOnGpu(sinogram, layout, gpu);
            EXPECT_LE(relativeToMax(gpu, cpu), 1e-6);
        }
}

TEST(CudaStitch, HalfAcquisitionRejectsBadSizesLikeTheCpu) {
    TOMO_REQUIRE_CUDA();
    constexpr int kColumns = 40;
    const std::vector<double> angles = irregularAngles(60, 5);
    const HalfAcquisitionLayout layout = planHalfAcquisition(angles, kColumns, 8.5);
    const std::vector<float> sinogram = sinogram360(angles, kColumns, 8.5, 5);
    std::vector<float> out(layout.views.size() * layout.columns);
    std::vector<float> shortOut(out.size() - 1);
    const std::span<const float> fewerProjections(sinogram.data(), sinogram.size() - kColumns * 10);
    const std::span<const float> partialRow(sinogram.data(), sinogram.size() - 1);
    EXPECT_THROW(stitchHalfAcquisition(sinogram, layout, shortOut), InvalidArgument);
    EXPECT_THROW(cuda::stitchHalfAcquisitionOnGpu(sinogram, layout, shortOut), InvalidArgument);
    for (std::span<const float> bad : {fewerProjections, partialRow}) {
        EXPECT_THROW(stitchHalfAcquisition(bad, layout, out), InvalidArgument);
        EXPECT_THROW(cuda::stitchHalfAcquisitionOnGpu(bad, layout, out), InvalidArgument);
    }
    EXPECT_NO_THROW(cuda::stitchHalfAcquisitionOnGpu(sinogram, layout, out));
}

} // namespace
} // namespace tomo::cudatest
