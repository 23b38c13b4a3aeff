// Stripe (ring) removal in the sinogram: the sorting, large-stripe and
// dead-stripe methods of Vo, Atwood & Drakopoulos, Opt. Express 26, 28396
// (2018), with the definitions of corrections.h (algotom's, re-written).
#include "tomo/corrections.h"

#include "corrections/correction_util.h"
#include "tomo/error.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

namespace tomo {

namespace {

void checkSinogram(std::span<const float> sinogram, int projections, int columns, const char* what) {
    if (projections < 1 || columns < 1 ||
        sinogram.size() != static_cast<std::size_t>(projections) * static_cast<std::size_t>(columns))
        throw InvalidArgument(std::string(what) + ": " + std::to_string(sinogram.size()) + " values for " +
                              std::to_string(projections) + " projections x " + std::to_string(columns) + " columns");
}

/// out[c * rows + r] = in[r * cols + c], in tiles that stay in cache.
void transpose(const float* in, int rows, int cols, float* out, WorkerPool* pool) {
    constexpr int kTile = 64;
    const int tileRows = (rows + kTile - 1) / kTile;
    detail::forRanges(pool, tileRows, [&](int t0, int t1) {
        for (int r0 = t0 * kTile; r0 < std::min(rows, t1 * kTile); r0 += kTile)
            for (int c0 = 0; c0 < cols; c0 += kTile)
                for (int c = c0; c < std::min(cols, c0 + kTile); ++c)
                    for (int r = r0; r < std::min(rows, r0 + kTile); ++r)
                        out[static_cast<std::size_t>(c) * rows + r] = in[static_cast<std::size_t>(r) * cols + c];
    });
}

/// A sort key ordering floats as numbers, then by projection index (ties).
std::uint64_t sortKey(float v, int index) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u; // monotonic in v
    return (static_cast<std::uint64_t>(bits) << 32) | static_cast<std::uint32_t>(index);
}

float keyValue(std::uint64_t key) {
    std::uint32_t bits = static_cast<std::uint32_t>(key >> 32);
    bits = (bits & 0x80000000u) ? bits & 0x7fffffffu : ~bits;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

/// Every column of a sinogram sorted along the projections: values by rank
/// as an image [rank][column], and the projection each came from
/// (column-major, index[c * P + rank]).
struct SortedColumns {
    int projections = 0;
    int columns = 0;
    std::vector<float> values; // [rank][column]
    std::vector<int> index;    // [column][rank]
};

SortedColumns sortColumns(std::span<const float> sinogram, int P, int N, WorkerPool* pool) {
    SortedColumns s{P, N, std::vector<float>(sinogram.size()), std::vector<int>(sinogram.size())};
    std::vector<float> byColumn(sinogram.size()); // [column][projection], then [column][rank]
    transpose(sinogram.data(), P, N, byColumn.data(), pool);
    detail::forRanges(pool, N, [&](int c0, int c1) {
        std::vector<std::uint64_t> keys(static_cast<std::size_t>(P));
        for (int c = c0; c < c1; ++c) {
            float* column = byColumn.data() + static_cast<std::size_t>(c) * P;
            for (int a = 0; a < P; ++a) keys[a] = sortKey(column[a], a);
            std::sort(keys.begin(), keys.end());
            int* index = s.index.data() + static_cast<std::size_t>(c) * P;
            for (int r = 0; r < P; ++r) {
                column[r] = keyValue(keys[r]);
                index[r] = static_cast<int>(keys[r] & 0xffffffffu);
            }
        }
    });
    transpose(byColumn.data(), N, P, s.values.data(), pool);
    return s;
}

/// The median across columns (window w, reflected) of every rank of the
/// sorted image, [rank][column].
std::vector<float> medianAcrossColumns(const SortedColumns& s, int w, WorkerPool* pool) {
    std::vector<float> out(s.values.size());
    const int N = s.columns;
    detail::forRanges(pool, s.projections, [&](int r0, int r1) {
        std::vector<float> window;
        for (int r = r0; r < r1; ++r) {
            const std::size_t row = static_cast<std::size_t>(r) * N;
            detail::slidingMedianReflect(s.values.data() + row, 1, N, w, out.data() + row, 1, window);
        }
    });
    return out;
}

/// Writes sorted values ([rank][column]) back to their projections, for
/// the columns where `take(c)` is true.
template <typename Take>
void sortBack(const SortedColumns& s, const std::vector<float>& values, std::span<float> sinogram, Take take,
              WorkerPool* pool) {
    const int P = s.projections, N = s.columns;
    std::vector<float> byColumn(values.size()), placed(values.size());
    transpose(values.data(), P, N, byColumn.data(), pool);
    transpose(sinogram.data(), P, N, placed.data(), pool);
    detail::forRanges(pool, N, [&](int c0, int c1) {
        for (int c = c0; c < c1; ++c) {
            if (!take(c)) continue;
            const std::size_t base = static_cast<std::size_t>(c) * P;
            for (int r = 0; r < P; ++r) placed[base + s.index[base + r]] = byColumn[base + r];
        }
    });
    transpose(placed.data(), N, P, sinogram.data(), pool);
}

std::vector<std::uint8_t> dilate(const std::vector<std::uint8_t>& mask) {
    std::vector<std::uint8_t> out(mask.size(), 0);
    for (std::size_t i = 0; i < mask.size(); ++i)
        out[i] = mask[i] || (i > 0 && mask[i - 1]) || (i + 1 < mask.size() && mask[i + 1]);
    return out;
}

} // namespace

std::vector<std::uint8_t> detectStripes(std::span<const float> ratios, double snr) {
    const int n = static_cast<int>(ratios.size());
    std::vector<std::uint8_t> mask(ratios.size(), 0);
    if (n < 8) return mask;
    std::vector<float> sorted(ratios.begin(), ratios.end());
    std::sort(sorted.begin(), sorted.end());
    // Least-squares line through the middle half of the sorted values.
    const int drop = n / 4;
    const int first = drop, last = n - drop - 2;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double count = last - first + 1;
    for (int x = first; x <= last; ++x) {
        sx += x;
        sy += sorted[x];
        sxx += static_cast<double>(x) * x;
        sxy += x * static_cast<double>(sorted[x]);
    }
    const double slope = (count * sxy - sx * sy) / (count * sxx - sx * sx);
    const double intercept = (sy - slope * sx) / count;
    const double yEnd = intercept + slope * (n - 1);
    const double noise = std::max(std::abs(yEnd - intercept), 1e-5);
    const bool high = std::abs(sorted[n - 1] - yEnd) / noise >= snr;
    const bool low = std::abs(intercept - sorted[0]) / noise >= snr;
    const double upper = yEnd + noise * snr * 0.5, lower = intercept - noise * snr * 0.5;
    for (int i = 0; i < n; ++i) mask[i] = (high && ratios[i] > upper) || (low && ratios[i] <= lower);
    return mask;
}

void removeStripesSorting(std::span<float> sinogram, int projections, int columns, int window, WorkerPool* pool) {
    checkSinogram(sinogram, projections, columns, "sorting stripe removal");
    const SortedColumns sorted = sortColumns(sinogram, projections, columns, pool);
    const std::vector<float> smoothed = medianAcrossColumns(sorted, window, pool);
    sortBack(
        sorted, smoothed, sinogram, [](int) { return true; }, pool);
}

void removeLargeStripes(std::span<float> sinogram, int projections, int columns, double snr, int window,
                        double dropRatio, WorkerPool* pool) {
    checkSinogram(sinogram, projections, columns, "large stripe removal");
    const int P = projections, N = columns;
    const SortedColumns sorted = sortColumns(sinogram, P, N, pool);
    const std::vector<float> smoothed = medianAcrossColumns(sorted, window, pool);
    const int drop = static_cast<int>(0.5 * std::clamp(dropRatio, 0.0, 0.8) * P);
    std::vector<double> sortedSum(static_cast<std::size_t>(N), 0.0), smoothedSum(sortedSum.size(), 0.0);
    for (int r = drop; r < P - drop; ++r)
        for (int c = 0; c < N; ++c) {
            sortedSum[c] += sorted.values[static_cast<std::size_t>(r) * N + c];
            smoothedSum[c] += smoothed[static_cast<std::size_t>(r) * N + c];
        }
    std::vector<float> ratio(static_cast<std::size_t>(N));
    for (int c = 0; c < N; ++c)
        ratio[c] = smoothedSum[c] != 0.0 ? static_cast<float>(sortedSum[c] / smoothedSum[c]) : 1.0f;
    const std::vector<std::uint8_t> mask = dilate(detectStripes(ratio, snr));
    detail::forRanges(pool, P, [&](int a0, int a1) {
        for (int a = a0; a < a1; ++a) {
            float* row = sinogram.data() + static_cast<std::size_t>(a) * N;
            for (int c = 0; c < N; ++c) row[c] /= ratio[c];
        }
    });
    sortBack(
        sorted, smoothed, sinogram, [&](int c) { return mask[c] != 0; }, pool);
}

void removeDeadStripes(std::span<float> sinogram, int projections, int columns, double snr, int window,
                       WorkerPool* pool) {
    checkSinogram(sinogram, projections, columns, "dead stripe removal");
    const int P = projections, N = columns;
    // Each column against its own running mean along the projections: a
    // dead column does not follow the object and stands out.
    constexpr int kSmoothing = 10;
    constexpr int kBefore = kSmoothing / 2, kAfter = kSmoothing - kBefore - 1;
    std::vector<float> diff(static_cast<std::size_t>(N));
    detail::forRanges(pool, N, [&](int c0, int c1) {
        for (int c = c0; c < c1; ++c) {
            auto at = [&](int a) {
                return static_cast<double>(sinogram[static_cast<std::size_t>(detail::reflectIndex(a, P)) * N + c]);
            };
            double windowSum = 0.0;
            for (int a = -kBefore; a <= kAfter; ++a) windowSum += at(a);
            double sum = 0.0;
            for (int a = 0; a < P; ++a) {
                sum += std::abs(at(a) - windowSum / kSmoothing);
                windowSum += at(a + kAfter + 1) - at(a - kBefore);
            }
            diff[c] = static_cast<float>(sum);
        }
    });
    std::vector<float> background(static_cast<std::size_t>(N)), scratch;
    detail::slidingMedianReflect(diff.data(), 1, N, window, background.data(), 1, scratch);
    double mean = 0.0;
    for (float b : background) mean += std::abs(b);
    mean /= N;
    std::vector<float> ratio(static_cast<std::size_t>(N));
    for (int c = 0; c < N; ++c) {
        const double b = background[c] != 0.0f ? background[c] : mean;
        ratio[c] = b != 0.0 ? static_cast<float>(diff[c] / b) : 1.0f;
    }
    std::vector<std::uint8_t> mask = dilate(detectStripes(ratio, snr));
    for (int c = 0; c < std::min(2, N); ++c) mask[c] = mask[N - 1 - c] = 0;
    const auto marked = std::count(mask.begin(), mask.end(), std::uint8_t{1});
    if (marked == 0 || marked >= N / 3) return;
    detail::forRanges(pool, P, [&](int a0, int a1) {
        for (int a = a0; a < a1; ++a)
            interpolateMasked(sinogram.subspan(static_cast<std::size_t>(a) * N, static_cast<std::size_t>(N)), mask);
    });
}

void removeStripes(std::span<float> sinogram, int projections, int columns, const RingOptions& o, WorkerPool* pool) {
    switch (o.method) {
    case RingMethod::Off:
        return;
    case RingMethod::Sorting:
        removeStripesSorting(sinogram, projections, columns, o.sortingWindow, pool);
        return;
    case RingMethod::Large:
        removeLargeStripes(sinogram, projections, columns, o.snr, o.largeWindow, o.dropRatio, pool);
        return;
    case RingMethod::Dead:
        removeDeadStripes(sinogram, projections, columns, o.snr, o.largeWindow, pool);
        return;
    case RingMethod::All:
        removeDeadStripes(sinogram, projections, columns, o.snr, o.largeWindow, pool);
        removeLargeStripes(sinogram, projections, columns, o.snr, o.largeWindow, o.dropRatio, pool);
        removeStripesSorting(sinogram, projections, columns, o.sortingWindow, pool);
        return;
    case RingMethod::Wavelet:
        removeStripesWavelet(sinogram, projections, columns, o.waveletLevel, o.waveletSigma, pool);
        return;
    }
}

} // namespace tomo
