// The GPU zinger and stripe corrections (kernels/cuda/corrections) against
// their CPU definitions (tomo/corrections.h): zingers and the sorting method
// exactly, the large / dead / all methods within 1e-5 of the largest value.
// Synthetic transmission sinograms: Gaussian traces on sinusoids, counting
// noise, stripes of several widths and strengths, a dead and a noisy column.
#include "cuda_test_util.h"
#include "tomo/corrections.h"
#include "tomo/cuda/corrections.h"
#include "tomo/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace tomo {
namespace {

std::vector<float> stripedSinogram(int projections, int columns, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> noise(0.0f, 0.005f);
    std::vector<float> s(static_cast<std::size_t>(projections) * columns);
    const double pi = std::acos(-1.0);
    for (int a = 0; a < projections; ++a) {
        const double angle = pi * a / projections;
        for (int c = 0; c < columns; ++c) {
            const double x = (c - 0.5 * columns) / columns;
            // Two off-centre blobs and a centred disc, as line integrals.
            double p = 0.6 * std::exp(-std::pow((x - 0.25 * std::cos(angle)) / 0.08, 2)) +
                       0.4 * std::exp(-std::pow((x + 0.15 * std::sin(angle + 1.0)) / 0.05, 2)) +
                       (std::abs(x) < 0.3 ? 0.3 * std::sqrt(0.09 - x * x) / 0.3 : 0.0);
            s[static_cast<std::size_t>(a) * columns + c] = static_cast<float>(std::exp(-(p + noise(rng))));
        }
    }
    struct Stripe {
        double where; // fraction of the width
        int width;
        float strength;
    };
    for (const Stripe& st : {Stripe{0.15, 1, 0.03f}, Stripe{0.3, 2, -0.02f}, Stripe{0.45, 3, 0.05f},
                             Stripe{0.6, 5, -0.015f}, Stripe{0.75, 1, 0.04f}}) {
        const int first = static_cast<int>(st.where * columns), last = std::min(columns, first + st.width);
        for (int c = first; c < last; ++c)
            for (int a = 0; a < projections; ++a)
                s[static_cast<std::size_t>(a) * columns + c] *= std::exp(-st.strength);
    }
    // A dead column (constant) and a noisy one.
    const int dead = columns / 5, noisy = (4 * columns) / 5 + 1;
    std::normal_distribution<float> wild(0.0f, 0.1f);
    for (int a = 0; a < projections; ++a) {
        s[static_cast<std::size_t>(a) * columns + dead] = 0.5f;
        s[static_cast<std::size_t>(a) * columns + noisy] *= std::exp(wild(rng));
    }
    return s;
}

// max |gpu - cpu| / max |cpu|.
double relativeError(const std::vector<float>& gpu, const std::vector<float>& cpu) {
    double largest = 0.0, error = 0.0;
    for (std::size_t i = 0; i < cpu.size(); ++i) {
        largest = std::max(largest, std::abs(static_cast<double>(cpu[i])));
        error = std::max(error, std::abs(static_cast<double>(gpu[i]) - cpu[i]));
    }
    return largest > 0.0 ? error / largest : error;
}

std::size_t differentValues(const std::vector<float>& a, const std::vector<float>& b) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < a.size(); ++i) n += !(a[i] == b[i]);
    return n;
}

// ---------------------------------------------------------------- zingers

struct ZingerCase {
    ValueKind kind;
    int window;
    int height, width;
};

std::string zingerName(const ::testing::TestParamInfo<ZingerCase>& info) {
    const ZingerCase& z = info.param;
    return std::string(z.kind == ValueKind::Transmission ? "Transmission" : "LineIntegral") + "Window" +
           std::to_string(z.window) + "_" + std::to_string(z.height) + "x" + std::to_string(z.width);
}

class CudaZingers : public ::testing::TestWithParam<ZingerCase> {};

TEST_P(CudaZingers, EqualTheCpuValuesCountAndPositions) {
    TOMO_REQUIRE_CUDA();
    const ZingerCase z = GetParam();
    std::vector<float> image = stripedSinogram(z.height, z.width, 5);
    if (z.kind == ValueKind::LineIntegral)
        for (float& v : image) v = -std::log(v);
    // Zingers: single pixels and small clusters, bright in transmissions
    // and dark in line integrals, some on the image's edges.
    std::mt19937 rng(9);
    std::uniform_int_distribution<int> row(0, z.height - 1), column(0, z.width - 1);
    const float excess = z.kind == ValueKind::Transmission ? 1.8f : 0.4f;
    const int planted = z.height * z.width / 150;
    for (int k = 0; k < planted; ++k) {
        const int y = k % 17 == 0 ? 0 : row(rng), x = k % 13 == 0 ? z.width - 1 : column(rng);
        float& v = image[static_cast<std::size_t>(y) * z.width + x];
        v = z.kind == ValueKind::Transmission ? v * excess : v - excess;
        if (k % 5 == 0 && x + 1 < z.width) image[static_cast<std::size_t>(y) * z.width + x + 1] = v;
    }
    ZingerOptions options;
    options.enabled = true;
    options.window = z.window;

    std::vector<float> cpu = image, gpu = image;
    std::vector<PixelPosition> cpuPositions, gpuPositions;
    const std::size_t cpuCount =
        removeZingers(cpu, z.height, z.width, options, z.kind, &cpuPositions, std::size_t{1} << 30);
    const std::size_t gpuCount =
        cuda::removeZingersOnGpu(gpu, z.height, z.width, options, z.kind, &gpuPositions, std::size_t{1} << 30);
    EXPECT_GT(cpuCount, static_cast<std::size_t>(planted / 4)); // the case has zingers to find
    EXPECT_EQ(gpuCount, cpuCount);
    EXPECT_EQ(differentValues(gpu, cpu), 0u);
    EXPECT_TRUE(gpuPositions == cpuPositions);

    // A capped list keeps the first positions, after what the list held.
    std::vector<PixelPosition> cpuFew = {{3, 1, 2}}, gpuFew = {{3, 1, 2}};
    std::vector<float> cpu2 = image, gpu2 = image;
    removeZingers(cpu2, z.height, z.width, options, z.kind, &cpuFew, 7);
    cuda::removeZingersOnGpu(gpu2, z.height, z.width, options, z.kind, &gpuFew, 7);
    ASSERT_EQ(cpuFew.size(), std::min<std::size_t>(7, 1 + cpuCount));
    EXPECT_TRUE(gpuFew == cpuFew);
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaZingers,
                         ::testing::Values(ZingerCase{ValueKind::Transmission, 3, 360, 256},
                                           ZingerCase{ValueKind::Transmission, 5, 360, 256},
                                           ZingerCase{ValueKind::LineIntegral, 3, 360, 256},
                                           ZingerCase{ValueKind::LineIntegral, 5, 181, 97},
                                           ZingerCase{ValueKind::Transmission, 7, 181, 97},
                                           ZingerCase{ValueKind::Transmission, 3, 1, 300},
                                           // The default window (5) on a flat row, as the stage runs it.
                                           ZingerCase{ValueKind::Transmission, ZingerOptions{}.window, 1, 300}),
                         zingerName);

TEST(CudaZingersArguments, BadArgumentsThrowAsOnTheCpu) {
    TOMO_REQUIRE_CUDA();
    std::vector<float> image(60, 1.0f);
    ZingerOptions options;
    options.window = 4;
    EXPECT_THROW(cuda::removeZingersOnGpu(image, 6, 10, options, ValueKind::Transmission), InvalidArgument);
    options.window = 1;
    EXPECT_THROW(cuda::removeZingersOnGpu(image, 6, 10, options, ValueKind::Transmission), InvalidArgument);
    options.window = 3;
    EXPECT_THROW(cuda::removeZingersOnGpu(image, 7, 10, options, ValueKind::Transmission), InvalidArgument);
    EXPECT_THROW(cuda::removeZingersOnGpu(image, 0, 60, options, ValueKind::Transmission), InvalidArgument);
    EXPECT_EQ(cuda::removeZingersOnGpu(image, 6, 10, options, ValueKind::Transmission), 0u);
}

// ---------------------------------------------------------------- stripes

struct StripeCase {
    RingMethod method;
    int projections, columns;
    int sortingWindow, largeWindow;
};

std::string stripeName(const ::testing::TestParamInfo<StripeCase>& info) {
    const StripeCase& s = info.param;
    std::string name(ringMethodName(s.method));
    name[0] = static_cast<char>(std::toupper(name[0]));
    return name + "_" + std::to_string(s.projections) + "x" + std::to_string(s.columns) + "_w" +
           std::to_string(s.sortingWindow) + "_" + std::to_string(s.largeWindow);
}

class CudaStripes : public ::testing::TestWithParam<StripeCase> {};

TEST_P(CudaStripes, EqualTheCpuDefinition) {
    TOMO_REQUIRE_CUDA();
    const StripeCase s = GetParam();
    const std::vector<float> input = stripedSinogram(s.projections, s.columns, 3);
    RingOptions options;
    options.method = s.method;
    options.sortingWindow = s.sortingWindow;
    options.largeWindow = s.largeWindow;
    std::vector<float> cpu = input, gpu = input;
    removeStripes(cpu, s.projections, s.columns, options);
    cuda::removeStripesOnGpu(gpu, s.projections, s.columns, options);
    EXPECT_GT(differentValues(cpu, input), 0u) << "the CPU left the sinogram as it was: the case tests nothing";
    if (s.method == RingMethod::Sorting)
        EXPECT_EQ(differentValues(gpu, cpu), 0u);
    else
        EXPECT_LE(relativeError(gpu, cpu), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaStripes,
                         ::testing::Values(StripeCase{RingMethod::Sorting, 360, 256, 21, 51},
                                           StripeCase{RingMethod::Sorting, 181, 97, 5, 51},
                                           // A window longer than the row: the reflection repeats.
                                           StripeCase{RingMethod::Sorting, 40, 9, 31, 51},
                                           StripeCase{RingMethod::Large, 360, 256, 21, 51},
                                           StripeCase{RingMethod::Large, 181, 97, 21, 31},
                                           StripeCase{RingMethod::Dead, 360, 256, 21, 51},
                                           StripeCase{RingMethod::Dead, 181, 97, 21, 31},
                                           StripeCase{RingMethod::All, 360, 256, 21, 51},
                                           StripeCase{RingMethod::All, 181, 97, 11, 31},
                                           // Wider than a shared-memory tile holds.
                                           StripeCase{RingMethod::Sorting, 70, 1200, 1001, 51}),
                         stripeName);

TEST(CudaStripesMethods, TheDeadColumnIsInterpolated) {
    TOMO_REQUIRE_CUDA();
    // The dead method's comparison means something only if its detector
    // fires (on the CPU it replaces the constant column and its neighbours).
    const int P = 360, N = 256;
    std::vector<float> gpu = stripedSinogram(P, N, 3);
    RingOptions options;
    options.method = RingMethod::Dead;
    cuda::removeStripesOnGpu(gpu, P, N, options);
    for (int a = 0; a < P; a += 37) EXPECT_NE(gpu[static_cast<std::size_t>(a) * N + N / 5], 0.5f) << "projection " << a;
}

TEST(CudaStripesArguments, BadArgumentsThrowInvalidArgument) {
    TOMO_REQUIRE_CUDA();
    std::vector<float> sinogram(200, 1.0f);
    RingOptions options;
    options.method = RingMethod::Sorting;
    EXPECT_THROW(cuda::removeStripesOnGpu(sinogram, 10, 21, options), InvalidArgument); // 210 values expected
    EXPECT_THROW(cuda::removeStripesOnGpu(sinogram, 0, 200, options), InvalidArgument);
    options.sortingWindow = 4;
    EXPECT_THROW(cuda::removeStripesOnGpu(sinogram, 10, 20, options), InvalidArgument);
    options.sortingWindow = 21;
    options.method = RingMethod::Large;
    options.snr = 1.0;
    EXPECT_THROW(cuda::removeStripesOnGpu(sinogram, 10, 20, options), InvalidArgument);
    options.snr = 3.0;
    options.dropRatio = 0.9;
    EXPECT_THROW(cuda::removeStripesOnGpu(sinogram, 10, 20, options), InvalidArgument);
    options.dropRatio = 0.1;
    options.method = RingMethod::Dead;
    options.largeWindow = 2;
    EXPECT_THROW(cuda::removeStripesOnGpu(sinogram, 10, 20, options), InvalidArgument);
    // Off does nothing, whatever the sizes (as the CPU).
    options.method = RingMethod::Off;
    EXPECT_NO_THROW(cuda::removeStripesOnGpu(sinogram, 10, 21, options));
}

} // namespace
} // namespace tomo
