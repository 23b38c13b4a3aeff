#include "work/image_stats.h"

#include "tomo/worker_pool.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace tomo::ui {
namespace {

constexpr int kFineBins = 4096;

struct Range {
    float min = std::numeric_limits<float>::infinity();
    float max = -std::numeric_limits<float>::infinity();
    double sum = 0.0;
    std::size_t finite = 0;
};

Range rangeOf(std::span<const float> values) {
    Range r;
    for (float v : values) {
        if (!std::isfinite(v)) continue;
        r.min = std::min(r.min, v);
        r.max = std::max(r.max, v);
        r.sum += v;
        ++r.finite;
    }
    if (r.finite == 0) r.min = r.max = 0.0f;
    return r;
}

std::vector<int> histogramOf(std::span<const float> values, float lo, float hi, int bins) {
    std::vector<int> h(static_cast<std::size_t>(std::max(1, bins)), 0);
    const double scale = hi > lo ? bins / (static_cast<double>(hi) - lo) : 0.0;
    for (float v : values) {
        if (!std::isfinite(v)) continue;
        int i = static_cast<int>((v - lo) * scale);
        h[static_cast<std::size_t>(std::clamp(i, 0, bins - 1))]++;
    }
    return h;
}

/// Value at which the cumulative count reaches p percent, interpolated in the bin.
float percentileFromHistogram(const std::vector<int>& h, std::size_t total, float lo, float hi, double p) {
    if (total == 0) return 0.0f;
    const double target = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(total);
    const double width = (static_cast<double>(hi) - lo) / static_cast<double>(h.size());
    double cumulative = 0.0;
    for (std::size_t i = 0; i < h.size(); ++i) {
        if (cumulative + h[i] >= target && h[i] > 0) {
            const double f = (target - cumulative) / h[i];
            return static_cast<float>(lo + (static_cast<double>(i) + f) * width);
        }
        cumulative += h[i];
    }
    return hi;
}

} // namespace

void inParts(std::size_t n, tomo::WorkerPool* pool, const std::function<void(std::size_t, std::size_t, int)>& part) {
    const int parts = pool ? pool->threads() : 1;
    const std::size_t size = (n + static_cast<std::size_t>(parts) - 1) / static_cast<std::size_t>(parts);
    auto run = [&](int i, int) {
        const std::size_t first = std::min(n, static_cast<std::size_t>(i) * size);
        part(first, std::min(size, n - first), i);
    };
    if (pool) pool->parallelFor(parts, run);
    else run(0, 0);
}

ImageStats computeStats(std::span<const float> values, int bins, double lowPercentile, double highPercentile,
                        tomo::WorkerPool* pool) {
    const int parts = pool ? pool->threads() : 1;
    std::vector<Range> ranges(static_cast<std::size_t>(parts));
    inParts(values.size(), pool, [&](std::size_t first, std::size_t count, int i) {
        ranges[static_cast<std::size_t>(i)] = rangeOf(values.subspan(first, count));
    });
    Range r;
    for (const Range& p : ranges) {
        r.min = std::min(r.min, p.min);
        r.max = std::max(r.max, p.max);
        r.sum += p.sum;
        r.finite += p.finite;
    }
    if (r.finite == 0) r.min = r.max = 0.0f;

    std::vector<std::vector<int>> fines(static_cast<std::size_t>(parts)), coarses(static_cast<std::size_t>(parts));
    inParts(values.size(), pool, [&](std::size_t first, std::size_t count, int i) {
        fines[static_cast<std::size_t>(i)] = histogramOf(values.subspan(first, count), r.min, r.max, kFineBins);
        coarses[static_cast<std::size_t>(i)] = histogramOf(values.subspan(first, count), r.min, r.max, bins);
    });
    auto merged = [](std::vector<std::vector<int>>& parts) {
        for (std::size_t p = 1; p < parts.size(); ++p)
            for (std::size_t k = 0; k < parts[0].size(); ++k) parts[0][k] += parts[p][k];
        return std::move(parts[0]);
    };
    const std::vector<int> fine = merged(fines);

    ImageStats s;
    s.min = r.min;
    s.max = r.max;
    s.finite = r.finite;
    s.mean = r.finite ? r.sum / static_cast<double>(r.finite) : 0.0;
    s.autoLow = percentileFromHistogram(fine, r.finite, r.min, r.max, lowPercentile);
    s.autoHigh = percentileFromHistogram(fine, r.finite, r.min, r.max, highPercentile);
    if (!(s.autoHigh > s.autoLow)) {
        s.autoLow = r.min;
        s.autoHigh = r.max > r.min ? r.max : r.min + 1.0f;
    }
    s.histogram = merged(coarses);
    return s;
}

float backgroundThreshold(const ImageStats& s) {
    const auto n = static_cast<int>(s.histogram.size());
    if (n == 0) return s.min;
    std::vector<double> smooth(static_cast<std::size_t>(n), 0.0);
    for (int i = 0; i < n; ++i) {
        int count = 0;
        for (int k = std::max(0, i - 2); k <= std::min(n - 1, i + 2); ++k, ++count) smooth[i] += s.histogram[k];
        smooth[i] /= count;
    }
    const int peak = static_cast<int>(std::max_element(smooth.begin(), smooth.end()) - smooth.begin());
    // Down the peak's right flank to the first real rise (20 % above the lowest so far).
    int lowest = peak;
    for (int i = peak + 1; i < n; ++i) {
        if (smooth[i] < smooth[lowest]) lowest = i;
        else if (smooth[i] > 1.2 * smooth[lowest] + 1.0) return static_cast<float>(s.binEdge(static_cast<std::size_t>(lowest)));
    }
    for (int i = peak + 1; i < n; ++i)
        if (smooth[i] < 0.01 * smooth[peak]) return static_cast<float>(s.binEdge(static_cast<std::size_t>(i)));
    return static_cast<float>(s.binEdge(static_cast<std::size_t>(std::min(n - 1, peak + 1))));
}

float percentile(std::span<const float> values, double p) {
    const Range r = rangeOf(values);
    return percentileFromHistogram(histogramOf(values, r.min, r.max, kFineBins), r.finite, r.min, r.max, p);
}

} // namespace tomo::ui
