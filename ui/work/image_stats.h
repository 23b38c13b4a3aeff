// Value statistics of an image for display: range, histogram and the
// percentiles the automatic window uses. Plain C++ (computed on the worker).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace tomo {
class WorkerPool;
}

namespace tomo::ui {

struct ImageStats {
    float min = 0.0f;
    float max = 0.0f;
    double mean = 0.0;
    std::size_t finite = 0;        ///< values that are not NaN / inf
    std::vector<int> histogram;    ///< counts of equal bins over [min, max]
    /// Automatic display window: the 0.5 % and 99.5 % percentiles
    /// (so a few hot pixels do not wash out the image).
    float autoLow = 0.0f;
    float autoHigh = 1.0f;

    /// Lower edge of histogram bin i.
    double binEdge(std::size_t i) const {
        return min + (max - min) * static_cast<double>(i) / static_cast<double>(histogram.empty() ? 1 : histogram.size());
    }
};

/// Calls part(first, count, index) over about equal parts of [0, n), one per
/// thread of `pool` (index = the part), or once over all of it without one.
void inParts(std::size_t n, tomo::WorkerPool* pool, const std::function<void(std::size_t, std::size_t, int)>& part);

/// One pass for the range, one for a fine histogram (percentiles accurate to
/// (max - min) / 4096) and the coarse `bins`-bin histogram for display;
/// both passes spread over `pool` when given (the result is the same).
ImageStats computeStats(std::span<const float> values, int bins = 256,
                        double lowPercentile = 0.5, double highPercentile = 99.5, tomo::WorkerPool* pool = nullptr);

/// Where the background ends: the first minimum of the (5-bin smoothed)
/// histogram after its highest peak, which in a CT volume is the air or
/// background around the sample; without such a minimum, where the counts
/// fall below 1 % of the peak. `min` for an empty histogram.
float backgroundThreshold(const ImageStats& stats);

/// Percentile (0..100) of the values from a fine histogram as computeStats does;
/// NaN / inf ignored; 0 for no finite values.
float percentile(std::span<const float> values, double p);

} // namespace tomo::ui
