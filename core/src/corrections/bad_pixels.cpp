// Dead, zero and saturated values: interpolated along the detector row from
// their unmasked neighbours (so no clamped value reaches the filter).
#include "tomo/corrections.h"

#include "tomo/error.h"

#include <string>

namespace tomo {

bool interpolateMasked(std::span<float> line, std::span<const std::uint8_t> mask) {
    if (mask.size() != line.size())
        throw InvalidArgument("interpolateMasked: " + std::to_string(mask.size()) + " mask values for a line of " +
                              std::to_string(line.size()));
    const int n = static_cast<int>(line.size());
    int left = -1; // last unmasked column seen
    for (int c = 0; c < n;) {
        if (!mask[c]) {
            left = c++;
            continue;
        }
        int right = c;
        while (right < n && mask[right]) ++right; // first unmasked after the run, or n
        if (left < 0 && right == n) return false;
        for (int k = c; k < right; ++k) {
            if (left < 0)
                line[k] = line[right];
            else if (right == n)
                line[k] = line[left];
            else {
                const float w = static_cast<float>(k - left) / static_cast<float>(right - left);
                line[k] = (1.0f - w) * line[left] + w * line[right];
            }
        }
        c = right;
    }
    return true;
}

} // namespace tomo
