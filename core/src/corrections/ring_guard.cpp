// The ring damage guard (tomo/corrections.h): what a stripe removal changed
// that is not a stripe. The arithmetic the GPU repeats
// (kernels/cuda/corrections/stage_kernels.cu): per column, the box sums
// along the angles run in double in the same order.
#include "tomo/corrections.h"

#include "corrections/correction_util.h"
#include "tomo/error.h"
#include "tomo/preprocess.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

namespace tomo {

namespace {

float lineIntegral(float v, ValueKind kind) {
    return kind == ValueKind::Transmission ? -std::log(std::max(v, kMinTransmission)) : v;
}

std::uint32_t noiseBin(float step) {
    return std::bit_cast<std::uint32_t>(std::abs(step)) >> kRingNoiseShift;
}

/// The column box of x ([a][c], P x N) at every value: the mean of the
/// 2 hc + 1 values around it in its projection (clamped), summed in double
/// in column order (as the GPU sums it).
std::vector<double> acrossColumns(const std::vector<float>& x, int P, int N, WorkerPool* pool) {
    const int hc = kRingGuardColumns;
    std::vector<double> u(x.size());
    detail::forRanges(pool, P, [&](int a0, int a1) {
        for (int a = a0; a < a1; ++a) {
            const std::size_t row = static_cast<std::size_t>(a) * N;
            for (int c = 0; c < N; ++c) {
                double sum = 0.0;
                for (int j = -hc; j <= hc; ++j) sum += x[row + static_cast<std::size_t>(std::clamp(c + j, 0, N - 1))];
                u[row + c] = sum / (2 * hc + 1);
            }
        }
    });
    return u;
}

/// sum over a of (x~ - mean x~)^2 of one column c, x~ the box average of
/// 2 ha + 1 projections (clamped) of the column boxes u (acrossColumns).
double smoothedVariance(const std::vector<double>& u, int P, int N, int c, int ha) {
    auto across = [&](int a) { return u[static_cast<std::size_t>(std::clamp(a, 0, P - 1)) * N + c]; };
    double window = 0.0;
    for (int i = -ha; i <= ha; ++i) window += across(i);
    double sum = 0.0, squares = 0.0;
    for (int a = 0; a < P; ++a) {
        const double v = window / (2 * ha + 1);
        sum += v;
        squares += v * v;
        window += across(a + ha + 1) - across(a - ha);
    }
    return std::max(0.0, squares - sum * sum / P);
}

/// (1.4826 median)^2 / 2 of the steps counted in `histogram`: the median
/// placed linearly inside its bin.
double noiseVariance(const std::vector<std::uint32_t>& histogram) {
    std::uint64_t total = 0;
    for (std::uint32_t n : histogram) total += n;
    if (total == 0) return 0.0;
    const double rank = 0.5 * static_cast<double>(total - 1); // the median's rank, from 0
    std::uint64_t below = 0;
    for (int b = 0; b < kRingNoiseBins; ++b) {
        const std::uint32_t n = histogram[static_cast<std::size_t>(b)];
        if (n > 0 && static_cast<double>(below + n) > rank) {
            const double lo = std::bit_cast<float>(static_cast<std::uint32_t>(b) << kRingNoiseShift);
            const double hi = std::bit_cast<float>(static_cast<std::uint32_t>(b + 1) << kRingNoiseShift);
            const double median = lo + (rank - static_cast<double>(below) + 0.5) / n * (hi - lo);
            return 1.4826 * 1.4826 * median * median / 2.0;
        }
        below += n;
    }
    return 0.0;
}

} // namespace

int ringGuardAngles(int projections) {
    return std::max(1, static_cast<int>(std::lround(0.04 * projections)));
}

RingChangeSums ringChangeSums(std::span<const float> before, std::span<const float> after, int projections,
                              int columns, ValueKind kind, WorkerPool* pool) {
    const int P = projections, N = columns;
    const std::size_t values = static_cast<std::size_t>(std::max(P, 0)) * static_cast<std::size_t>(std::max(N, 0));
    if (P < 1 || N < 1 || before.size() != values || after.size() != values)
        throw InvalidArgument("ring damage guard: " + std::to_string(before.size()) + " and " +
                              std::to_string(after.size()) + " values for " + std::to_string(P) +
                              " projections x " + std::to_string(N) + " columns");
    RingChangeSums s;
    s.projections = P;
    s.columns = N;
    std::vector<float> p(values), d(values);
    for (std::size_t i = 0; i < values; ++i) {
        p[i] = lineIntegral(before[i], kind);
        d[i] = lineIntegral(after[i], kind) - p[i];
    }
    s.signalSteps.assign(kRingNoiseBins, 0);
    s.changeSteps.assign(kRingNoiseBins, 0);
    for (int a = 0; a < P; ++a)
        for (int c = 0; c + 1 < N; ++c) {
            const std::size_t i = static_cast<std::size_t>(a) * N + c;
            ++s.signalSteps[noiseBin(p[i + 1] - p[i])];
            ++s.changeSteps[noiseBin(d[i + 1] - d[i])];
        }
    // Column by column, as the GPU's threads; summed in column order.
    const int ha = ringGuardAngles(P);
    const std::vector<double> boxP = acrossColumns(p, P, N, pool), boxD = acrossColumns(d, P, N, pool);
    std::vector<double> change(static_cast<std::size_t>(N)), magnitude(change.size()), signal(change.size()),
        nonStripe(change.size());
    detail::forRanges(pool, N, [&](int c0, int c1) {
        for (int c = c0; c < c1; ++c) {
            for (int a = 0; a < P; ++a) {
                change[c] += d[static_cast<std::size_t>(a) * N + c];
                magnitude[c] += std::abs(p[static_cast<std::size_t>(a) * N + c]);
            }
            signal[c] = smoothedVariance(boxP, P, N, c, ha);
            nonStripe[c] = smoothedVariance(boxD, P, N, c, ha);
        }
    });
    for (int c = 0; c < N; ++c) {
        s.changeSum += change[c];
        s.lineIntegralSum += magnitude[c];
        s.signalEnergy += signal[c];
        s.nonStripeEnergy += nonStripe[c];
    }
    return s;
}

RingChange ringChange(const RingChangeSums& s) {
    RingChange r;
    const double values = static_cast<double>(s.projections) * s.columns;
    const double g = 1.0 / ((2 * ringGuardAngles(s.projections) + 1) * (2 * kRingGuardColumns + 1));
    const double signalNoise = values * g * noiseVariance(s.signalSteps);
    const double changeNoise = values * g * noiseVariance(s.changeSteps);
    const double signal = std::max(s.signalEnergy - signalNoise, signalNoise);
    if (signal > 0.0) r.nonStripe = std::sqrt(std::max(0.0, s.nonStripeEnergy - changeNoise) / signal);
    if (s.lineIntegralSum > 0.0) r.meanChange = s.changeSum / s.lineIntegralSum;
    return r;
}

} // namespace tomo
