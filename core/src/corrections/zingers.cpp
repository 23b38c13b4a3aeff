// Zingers (outliers from stray radiation hitting the detector): values far
// above their local median, replaced by it.
#include "tomo/corrections.h"

#include "corrections/correction_util.h"
#include "tomo/error.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tomo {

std::size_t removeZingers(std::span<float> image, int height, int width, const ZingerOptions& options, ValueKind kind,
                          std::vector<PixelPosition>* positions, std::size_t maxPositions, WorkerPool* pool) {
    if (height < 1 || width < 1 || image.size() != static_cast<std::size_t>(height) * static_cast<std::size_t>(width))
        throw InvalidArgument("zinger removal: " + std::to_string(image.size()) + " values for " +
                              std::to_string(height) + " x " + std::to_string(width));
    if (options.window < 3 || options.window % 2 == 0)
        throw InvalidArgument("zinger removal: the window must be odd and >= 3, got " + std::to_string(options.window));
    double sumAbs = 0.0;
    for (float v : image) sumAbs += std::abs(v);
    const float floor = static_cast<float>(sumAbs / static_cast<double>(image.size()));
    const float t = static_cast<float>(options.threshold);
    const int half = options.window / 2;
    const int count = options.window * options.window;
    const int majority = count / 2 + 1;
    // Excess of `v` over the median `m`, in the direction of a zinger.
    const float sign = kind == ValueKind::Transmission ? 1.0f : -1.0f;

    const std::vector<float> input(image.begin(), image.end());
    auto at = [&](int y, int x) {
        return input[static_cast<std::size_t>(detail::clampIndex(y, height)) * width + detail::clampIndex(x, width)];
    };
    const int ranges = pool ? 4 * pool->threads() : 1;
    std::vector<std::size_t> found(static_cast<std::size_t>(ranges), 0);
    std::vector<std::vector<PixelPosition>> lists(static_cast<std::size_t>(ranges));
    auto work = [&](int range) {
        std::vector<float> window(static_cast<std::size_t>(count));
        const int y0 = static_cast<int>(static_cast<long long>(height) * range / ranges);
        const int y1 = static_cast<int>(static_cast<long long>(height) * (range + 1) / ranges);
        for (int y = y0; y < y1; ++y)
            for (int x = 0; x < width; ++x) {
                const float v = input[static_cast<std::size_t>(y) * width + x];
                // A zinger exceeds its median by more than t * floor at least,
                // so a majority of its window lies beyond v - t * floor: most
                // values fail this cheap test and need no median.
                const float bound = sign * v - t * floor;
                int beyond = 0;
                for (int dy = -half; dy <= half; ++dy)
                    for (int dx = -half; dx <= half; ++dx) beyond += sign * at(y + dy, x + dx) < bound;
                if (beyond < majority) continue;
                int k = 0;
                for (int dy = -half; dy <= half; ++dy)
                    for (int dx = -half; dx <= half; ++dx) window[k++] = at(y + dy, x + dx);
                std::nth_element(window.begin(), window.begin() + count / 2, window.end());
                const float m = window[count / 2];
                if (sign * (v - m) > t * std::max(std::abs(m), floor)) {
                    image[static_cast<std::size_t>(y) * width + x] = m;
                    ++found[range];
                    if (positions && lists[range].size() < maxPositions) lists[range].push_back({0, y, x});
                }
            }
    };
    if (ranges == 1)
        work(0);
    else
        pool->parallelFor(ranges, [&](int range, int) { work(range); });

    std::size_t total = 0;
    for (int r = 0; r < ranges; ++r) {
        total += found[r];
        if (!positions) continue;
        for (const PixelPosition& p : lists[r]) {
            if (positions->size() >= maxPositions) break;
            positions->push_back(p);
        }
    }
    return total;
}

} // namespace tomo
