#include "image_stats.h"

#include <algorithm>
#include <cmath>
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

ImageStats computeStats(std::span<const float> values, int bins, double lowPercentile, double highPercentile) {
    ImageStats s;
    const Range r = rangeOf(values);
    s.min = r.min;
    s.max = r.max;
    s.finite = r.finite;
    s.mean = r.finite ? r.sum / static_cast<double>(r.finite) : 0.0;
    const std::vector<int> fine = histogramOf(values, r.min, r.max, kFineBins);
    s.autoLow = percentileFromHistogram(fine, r.finite, r.min, r.max, lowPercentile);
    s.autoHigh = percentileFromHistogram(fine, r.finite, r.min, r.max, highPercentile);
    if (!(s.autoHigh > s.autoLow)) {
        s.autoLow = r.min;
        s.autoHigh = r.max > r.min ? r.max : r.min + 1.0f;
    }
    s.histogram = histogramOf(values, r.min, r.max, bins);
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
