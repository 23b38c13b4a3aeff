// Wavelet-Fourier stripe removal on the GPU (DeviceWaveletStripes through
// tomo::cuda::removeStripesWaveletOnGpu) equals core's removeStripesWavelet
// (algotom's: Daubechies 9, padded, levels limited by the padded size, its
// damping window) within 1e-5 of the largest value, on striped sinograms of
// even, odd, wide, tiny and deep-level shapes; invalid arguments throw as on
// the CPU. Skips without a GPU.
#include "cuda_test_util.h"

#include "tomo/corrections.h"
#include "tomo/cuda/wavelet.h"
#include "tomo/error.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

namespace tomo::cudatest {
namespace {

/// Deterministic value in [0, 1) for an index (splitmix64's finaliser).
double hashUnit(std::uint64_t i) {
    i += 0x9e3779b97f4a7c15ULL;
    i = (i ^ (i >> 30)) * 0xbf58476d1ce4e5b9ULL;
    i = (i ^ (i >> 27)) * 0x94d049bb133111ebULL;
    i ^= i >> 31;
    return static_cast<double>(i >> 11) * 0x1.0p-53;
}

/// Transmissions of a smooth object (two discs off the axis, so their traces
/// are sinusoids), times a column gain that makes vertical stripes (narrow
/// ones of either sign, a three-column band, one nearly dead column), plus
/// noise of 0.5 %.
std::vector<float> stripedSinogram(int projections, int columns) {
    std::vector<float> s(static_cast<std::size_t>(projections) * columns);
    std::vector<double> gain(static_cast<std::size_t>(columns), 1.0);
    for (int c = 0; c < columns; ++c)
        if (c % 11 == 3) gain[c] += (c % 2 ? 0.05 : -0.04);
    for (int c = columns / 3; c < std::min(columns, columns / 3 + 3); ++c) gain[c] += 0.1;
    gain[static_cast<std::size_t>(columns) * 2 / 3] = 0.3;
    const auto chord = [](double offset, double radius) {
        return offset * offset < radius * radius ? 2.0 * std::sqrt(radius * radius - offset * offset) : 0.0;
    };
    for (int a = 0; a < projections; ++a) {
        const double theta = std::numbers::pi * a / projections;
        for (int c = 0; c < columns; ++c) {
            const double x = (c - 0.5 * (columns - 1)) / columns; // -0.5 ... 0.5 across the detector
            const double p =
                1.5 * chord(x - 0.15 * std::cos(theta), 0.25) + 0.8 * chord(x + 0.2 * std::sin(theta), 0.1);
            const std::size_t i = static_cast<std::size_t>(a) * columns + c;
            s[i] = static_cast<float>(std::exp(-p) * gain[c] + 0.005 * (hashUnit(i) - 0.5));
        }
    }
    return s;
}

struct Case {
    int projections, columns, level;
    double sigma;
};

std::string describe(const Case& c) {
    return std::to_string(c.projections) + " x " + std::to_string(c.columns) + ", level " + std::to_string(c.level) +
           ", sigma " + std::to_string(c.sigma);
}

/// Runs both and checks max |gpu - cpu| <= 1e-5 max |cpu|; with
/// requireChange also that the CPU changed the sinogram by far more than
/// that, so a GPU that did nothing fails.
void expectGpuEqualsCpu(const Case& c, bool requireChange) {
    SCOPED_TRACE(describe(c));
    const std::vector<float> input = stripedSinogram(c.projections, c.columns);
    std::vector<float> cpu = input, gpu = input;
    removeStripesWavelet(cpu, c.projections, c.columns, c.level, c.sigma);
    cuda::removeStripesWaveletOnGpu(gpu, c.projections, c.columns, c.level, c.sigma);
    double largest = 0.0, worst = 0.0, change = 0.0;
    for (std::size_t i = 0; i < cpu.size(); ++i) {
        largest = std::max(largest, std::abs(static_cast<double>(cpu[i])));
        // NaN fails the comparison below through the negated test.
        const double difference = std::abs(static_cast<double>(gpu[i]) - cpu[i]);
        worst = std::isnan(difference) ? std::numeric_limits<double>::infinity() : std::max(worst, difference);
        change = std::max(change, std::abs(static_cast<double>(cpu[i]) - input[i]));
    }
    ASSERT_GT(largest, 0.0);
    EXPECT_LE(worst / largest, 1e-5) << "max |gpu - cpu| " << worst << ", max |cpu| " << largest;
    if (requireChange) {
        EXPECT_GT(change / largest, 1e-3) << "the CPU barely changed the sinogram: the comparison would prove little";
    }
}

TEST(CudaWavelet, EqualsCpuOnStripedSinograms) {
    TOMO_REQUIRE_CUDA();
    // Padded to 410 x 306 (4 levels at most), 199 x 115 and 76 x 312 (2 levels).
    for (const auto& [projections, columns] : {std::pair{360, 256}, std::pair{181, 97}, std::pair{64, 300}})
        for (int level : {1, 3, 5})
            for (double sigma : {RingOptions{}.waveletSigma, 2.0, 4.0})
                expectGpuEqualsCpu({projections, columns, level, sigma}, true);
    // The default on a large row: 150 rows and columns of padding, 5 levels.
    expectGpuEqualsCpu({1600, 1800, RingOptions{}.waveletLevel, RingOptions{}.waveletSigma}, true);
}

TEST(CudaWavelet, EqualsCpuOnTinyShapesAndDeepLevels) {
    TOMO_REQUIRE_CUDA();
    // Shapes too small for one level after padding (left as they are), and
    // levels beyond what the padded shape allows (12 -> 2, 20 -> 1, 5 -> 1
    // on 48 x 708, whose bands are shorter than the filter along the angles).
    for (const Case& c : {Case{1, 1, 1, 2.0}, Case{7, 5, 3, 2.0}, Case{3, 2, 4, 4.0}, Case{181, 97, 12, 2.0},
                          Case{50, 33, 20, 4.0}, Case{40, 700, 5, 1.0}})
        expectGpuEqualsCpu(c, false);
}

TEST(CudaWavelet, RejectsInvalidArgumentsAsTheCpu) {
    TOMO_REQUIRE_CUDA();
    std::vector<float> values(6, 1.0f);
    const auto bothThrow = [&](int projections, int columns, int level, double sigma) {
        SCOPED_TRACE(std::to_string(projections) + " x " + std::to_string(columns) + ", level " +
                     std::to_string(level) + ", sigma " + std::to_string(sigma));
        EXPECT_THROW(removeStripesWavelet(values, projections, columns, level, sigma), InvalidArgument);
        EXPECT_THROW(cuda::removeStripesWaveletOnGpu(values, projections, columns, level, sigma), InvalidArgument);
    };
    bothThrow(2, 3, 0, 2.0);
    bothThrow(2, 3, 21, 2.0);
    bothThrow(2, 3, 3, 0.0);
    bothThrow(2, 3, 3, -1.0);
    bothThrow(2, 3, 3, std::numeric_limits<double>::quiet_NaN());
    bothThrow(3, 3, 3, 2.0); // 9 values expected, 6 given
    bothThrow(0, 6, 3, 2.0);
}

} // namespace
} // namespace tomo::cudatest
