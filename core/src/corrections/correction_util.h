// Internal: what the correction files share - splitting work over a
// WorkerPool, index extension at array ends, and a sliding-window median.
#pragma once

#include "tomo/worker_pool.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace tomo::detail {

/// Calls work(begin, end) for consecutive ranges covering [0, count): about
/// four per thread of `pool`, or one range on the caller without a pool.
template <typename Work>
void forRanges(WorkerPool* pool, int count, Work&& work) {
    if (count <= 0) return;
    const int threads = pool ? pool->threads() : 1;
    const int ranges = std::min(count, threads == 1 ? 1 : 4 * threads);
    if (ranges == 1) {
        work(0, count);
        return;
    }
    pool->parallelFor(ranges, [&](int r, int) {
        const long long begin = static_cast<long long>(count) * r / ranges;
        const long long end = static_cast<long long>(count) * (r + 1) / ranges;
        work(static_cast<int>(begin), static_cast<int>(end));
    });
}

/// Index i of a line of n values extended by half-sample reflection
/// (... x1 x0 | x0 x1 ... x[n-1] | x[n-1] x[n-2] ...; scipy's "reflect"),
/// periodic with period 2n so any i works.
inline int reflectIndex(int i, int n) {
    const int period = 2 * n;
    int j = i % period;
    if (j < 0) j += period;
    return j < n ? j : period - 1 - j;
}

inline int clampIndex(int i, int n) {
    return std::clamp(i, 0, n - 1);
}

/// out[i] = median of in[(i - w/2 ... i + w/2) * stride] (w odd), the line
/// of n values extended by reflectIndex. A sorted window slides along the
/// line: each step removes the value leaving and inserts the one entering.
/// `in` and `out` must not overlap; `window` is scratch.
inline void slidingMedianReflect(const float* in, std::ptrdiff_t stride, int n, int w, float* out,
                                 std::ptrdiff_t outStride, std::vector<float>& window) {
    const int half = w / 2;
    auto at = [&](int i) { return in[reflectIndex(i, n) * stride]; };
    window.resize(static_cast<std::size_t>(w));
    for (int k = 0; k < w; ++k) window[k] = at(k - half);
    std::sort(window.begin(), window.end());
    for (int i = 0;; ++i) {
        out[i * outStride] = window[half];
        if (i + 1 == n) break;
        const float leaving = at(i - half), entering = at(i + half + 1);
        if (leaving == entering) continue;
        // Erase one copy of `leaving` and insert `entering`, keeping the order.
        auto pos = std::lower_bound(window.begin(), window.end(), leaving);
        if (entering > leaving) {
            auto ins = std::lower_bound(pos + 1, window.end(), entering);
            std::move(pos + 1, ins, pos);
            *(ins - 1) = entering;
        } else {
            auto ins = std::upper_bound(window.begin(), pos, entering);
            std::move_backward(ins, pos, pos + 1);
            *ins = entering;
        }
    }
}

} // namespace tomo::detail
