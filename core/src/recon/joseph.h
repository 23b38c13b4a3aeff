// The arithmetic of the float projector pairs (the CPU "cpu" pair and the
// CUDA pair compile the same functions, so a sample is the same on both):
// per-projection constants, the sample of one ray on one image line
// (forward), one projection's share of one pixel (back). projector.h
// explains the matrix; a "line" is an image row (|cos| >= |sin|: along =
// column) or an image column (along = row), c = |alongCoef| >= 1/sqrt 2.
//
//   forward: the ray of bin k crosses line l at t = fma(l, slope, t0(k))
//     pixels along it; its pixels floor(t) and floor(t) + 1 weigh
//     (1 - f) / c and f / c, f = t - floor(t) (linear interpolation times
//     the ray's length per line, 1 / c)
//   back: pixel (along, line) lies at s = fma(along, alongCoef,
//     fma(line, lineCoef, offset)) on the detector; bins floor(s) and
//     floor(s) + 1 weigh max(0, 1/c - d/c^2) and max(0, 1/c - (1 - d)/c^2),
//     d = s - floor(s)
//
// Both are the same matrix (Joseph's): for a ray and a pixel on it,
// |k - s| = c |t - a|. In float32 the two directions round differently
// (t and s carry ~1e-4 pixel at 2048), so <A x, y> = <x, A^T y> holds to
// ~1e-7 relative rather than to the summation order: the forward's weights
// cost 3 operations per line instead of 11 (no position, no triangle per
// pixel), which is most of a forward sample.
//
// Batches: S slices (1, 2 or 4 lanes) interleaved per element, so one
// position and weight serve S slices and the GPU loads them as one float2 /
// float4 (16-byte accesses on Hopper).
#pragma once

#include "recon/host_device.h"

#include <cmath>
#include <cstring>

namespace tomo::joseph {

/// One projection's constants (two float4 on the GPU).
struct alignas(16) Projection {
    float alongCoef; ///< ds per pixel along a line: cos (rows) or -sin (columns)
    float lineCoef;  ///< ds per line: -sin (rows) or cos (columns)
    float offset;    ///< s at pixel (0, 0): axis - cx cos + cy sin
    float invAlong;  ///< 1 / alongCoef: where along a line the ray of bin k crosses
    float peak;      ///< 1 / c = |invAlong|: a weight's largest value (the ray's length per line)
    float fall;      ///< 1 / c^2: the back weight's fall per bin
    float rows;      ///< 1: lines are image rows; 0: columns
    float slope;     ///< -lineCoef / alongCoef: the crossing's move per line (|slope| <= 1)
};

/// The constants of angle `angle` (radians) and axis column `axis` on a
/// width x height grid (pixel centres per geometry.h). Host only.
inline Projection projection(double angle, double axis, int width, int height) {
    const double c = std::cos(angle), s = std::sin(angle);
    const double cx = (width - 1) / 2.0, cy = (height - 1) / 2.0;
    const bool rows = std::abs(c) >= std::abs(s);
    Projection p{};
    p.alongCoef = static_cast<float>(rows ? c : -s);
    p.lineCoef = static_cast<float>(rows ? -s : c);
    p.offset = static_cast<float>(axis - cx * c + cy * s);
    p.invAlong = 1.0f / p.alongCoef;
    p.peak = std::abs(p.invAlong);
    const float reach = std::abs(p.alongCoef);
    p.fall = 1.0f / (reach * reach);
    p.rows = rows ? 1.0f : 0.0f;
    p.slope = -p.lineCoef * p.invAlong;
    return p;
}

/// max and min without fmaxf's NaN rules (which x86 compilers turn into a
/// library call); the operands here are never NaN.
TOMO_HD float larger(float a, float b) { return a > b ? a : b; }
TOMO_HD float smaller(float a, float b) { return a < b ? a : b; }

/// floor(x) as a float and as an int, for |x| < 2^22. On the GPU one
/// round-down add of 1.5 * 2^23 (whose binade has unit spacing, so the sum
/// is floor(x) + 1.5 * 2^23 exactly and its bits hold floor(x)): full-rate
/// FP32 instead of the conversion unit's FRND and F2I. The same value on
/// both sides, so the CPU and GPU pairs still build the same matrix.
struct Floor {
    float value;
    int index;
};
TOMO_HD Floor floorOf(float x) {
#if defined(__CUDA_ARCH__)
    const float f = __fadd_rd(x, 0x1.8p23f);
    return {f - 0x1.8p23f, __float_as_int(f) - 0x4B400000};
#else
    const float f = std::floor(x);
    return {f, static_cast<int>(f)};
#endif
}

/// Detector position of the pixel at (along, line) of q's lines.
TOMO_HD float position(const Projection& q, float along, float line) {
    return fmaf(along, q.alongCoef, fmaf(line, q.lineCoef, q.offset));
}

/// The back weights' triangle: the weight at d bins from a pixel's
/// position is max(0, peak - d fall); edge = peak - fall, the intercept of
/// the far bin's (1 - d bins away). Joseph: 1/c, 1/c^2; the FBP's linear
/// interpolation (unmatched pair): 1, 1.
struct Triangle {
    float peak, fall, edge;
};
TOMO_HD Triangle triangle(const Projection& q, bool interpolate) {
    const float peak = interpolate ? 1.0f : q.peak, fall = interpolate ? 1.0f : q.fall;
    return {peak, fall, peak - fall};
}

/// Weights of two neighbours around a fractional position: the ray's
/// pixels floor(t), floor(t) + 1 (forward), or a pixel's bins floor(s),
/// floor(s) + 1 (back).
struct Pair {
    Floor at;
    float w0, w1;
};

/// Forward: the pixels around crossing t on a line, linear interpolation
/// times the ray's length per line (q.peak).
TOMO_HD Pair rayWeights(float t, float peak) {
    const Floor a = floorOf(t);
    const float f = t - a.value; // exact but for t in (-1, 0) (Sterbenz)
    return {a, fmaf(-f, peak, peak), f * peak};
}

/// Back: the bins around position s (clamped by the caller to [-2, bins + 1]).
TOMO_HD Pair binWeights(float s, const Triangle& t) {
    const Floor k = floorOf(s);
    const float d = s - k.value;
    return {k, larger(fmaf(-d, t.fall, t.peak), 0.0f), larger(fmaf(d, t.fall, t.edge), 0.0f)};
}

/// S floats of a batch element.
template <int S>
struct Lanes {
    float v[S];
};

template <int S>
TOMO_HD Lanes<S> zeroLanes() {
    Lanes<S> out;
    for (int j = 0; j < S; ++j) out.v[j] = 0.0f;
    return out;
}

template <int S>
TOMO_HD Lanes<S> load(const float* p) {
    Lanes<S> out;
#if defined(__CUDA_ARCH__)
    if constexpr (S == 4) {
        const float4 t = __ldg(reinterpret_cast<const float4*>(p));
        out.v[0] = t.x, out.v[1] = t.y, out.v[2] = t.z, out.v[3] = t.w;
    } else if constexpr (S == 2) {
        const float2 t = __ldg(reinterpret_cast<const float2*>(p));
        out.v[0] = t.x, out.v[1] = t.y;
    } else {
        out.v[0] = __ldg(p);
    }
#else
    std::memcpy(out.v, p, sizeof out.v); // one vector load
#endif
    return out;
}

template <int S>
TOMO_HD void store(float* p, const Lanes<S>& x) {
#if defined(__CUDA_ARCH__)
    if constexpr (S == 4) {
        *reinterpret_cast<float4*>(p) = make_float4(x.v[0], x.v[1], x.v[2], x.v[3]);
    } else if constexpr (S == 2) {
        *reinterpret_cast<float2*>(p) = make_float2(x.v[0], x.v[1]);
    } else {
        *p = x.v[0];
    }
#else
    std::memcpy(p, x.v, sizeof x.v);
#endif
}

/// acc += w0 * a + w1 * b, lane by lane.
template <int S>
TOMO_HD void accumulate(Lanes<S>& acc, float w0, const Lanes<S>& a, float w1, const Lanes<S>& b) {
    for (int j = 0; j < S; ++j) acc.v[j] = fmaf(w1, b.v[j], fmaf(w0, a.v[j], acc.v[j]));
}

/// Where the ray of bin k crosses line 0 (pixels along it); on line l it
/// crosses at crossing(q, start, l).
TOMO_HD float crossingStart(const Projection& q, float k) { return (k - q.offset) * q.invAlong; }
TOMO_HD float crossing(const Projection& q, float start, float line) { return fmaf(line, q.slope, start); }

/// Forward: adds a ray's sample on one line to `acc`. `line` holds the
/// line's `alongCount` elements of S lanes; t = crossing(...) on it.
/// Checked = false: the caller knows both pixels lie on the line
/// (rayInterior), so no bounds are tested; the sum is the same.
template <int S, bool Checked = true>
TOMO_HD void raySample(Lanes<S>& acc, const float* line, int alongCount, float peak, float t) {
    // The pixel before the crossing; bounded by the line range of rayLines
    // (within a pixel or two of the line), so floorOf's range holds.
    const Pair w = rayWeights(t, peak);
    const int i0 = w.at.index;
    if constexpr (!Checked) {
        const float* pixel = line + i0 * S; // and its neighbour S floats on: one address
        accumulate<S>(acc, w.w0, load<S>(pixel), w.w1, load<S>(pixel + S));
        return;
    }
    const bool in0 = i0 >= 0 && i0 < alongCount, in1 = i0 + 1 >= 0 && i0 + 1 < alongCount;
    const int c0 = in0 ? i0 : 0, c1 = in1 ? i0 + 1 : 0;
    accumulate<S>(acc, in0 ? w.w0 : 0.0f, load<S>(line + c0 * S), in1 ? w.w1 : 0.0f, load<S>(line + c1 * S));
}

/// The lines [first, last) of the `lineCount` lines whose crossing with the
/// ray of bin k lies in (lo, hi), give or take a line (|slope| <= 1: within
/// a pixel of it).
TOMO_HD void rayLinesWithin(const Projection& q, float k, float lo, float hi, int lineCount, int& first, int& last) {
    // crossing(line) = start + line * slope
    const float a0 = crossingStart(q, k);
    const float slope = q.slope; // |slope| <= 1
    if (fabsf(slope) < 1e-7f) {
        const bool inside = a0 > lo && a0 < hi;
        first = 0;
        last = inside ? lineCount : 0;
        return;
    }
    float l0 = (lo - a0) / slope, l1 = (hi - a0) / slope;
    if (l0 > l1) {
        const float t = l0;
        l0 = l1;
        l1 = t;
    }
    // Both ends into [-1, lineCount + 1]: a slope just above the threshold
    // puts them far beyond int's range (the conversion would overflow).
    const float none = -1.0f, all = static_cast<float>(lineCount) + 1.0f;
    l0 = smaller(larger(l0, none), all);
    l1 = smaller(larger(l1, none), all);
    first = l0 > 0.0f ? static_cast<int>(l0) : 0;
    last = l1 > 0.0f ? static_cast<int>(l1) + 1 : 0;
    if (last > lineCount) last = lineCount;
    if (first > last) first = last;
}

/// The lines [first, last) whose crossing with the ray of bin k lies within
/// one pixel of the grid's `alongCount` pixels (every line with a non-zero
/// weight, and a few without).
TOMO_HD void rayLines(const Projection& q, float k, int alongCount, int lineCount, int& first, int& last) {
    rayLinesWithin(q, k, -2.0f, static_cast<float>(alongCount) + 1.0f, lineCount, first, last);
}

/// The lines [first, last) where the ray of bin k's two pixels both lie on
/// the line for certain: its crossing in (2, alongCount - 3), so within a
/// line of those bounds still in [1, alongCount - 2] (rounding is far
/// below a pixel). raySample<S, false> may sample them.
TOMO_HD void rayInterior(const Projection& q, float k, int alongCount, int lineCount, int& first, int& last) {
    if (alongCount < 8) { // (2, alongCount - 3) too narrow to leave a line's margin
        first = last = 0;
        return;
    }
    rayLinesWithin(q, k, 2.0f, static_cast<float>(alongCount) - 3.0f, lineCount, first, last);
}

/// Back: adds projection q's share of the pixel at (along, line) of q's
/// lines to `acc`; `row` holds the projection's `bins` elements of S lanes.
template <int S>
TOMO_HD void pixelSample(Lanes<S>& acc, const float* row, int bins, const Projection& q, float along, float line,
                         const Triangle& t) {
    // Clamped to [-2, bins + 1], where both bins read as zero past the edges:
    // an axis far off the detector cannot overflow the conversion.
    const float s = smaller(larger(position(q, along, line), -2.0f), static_cast<float>(bins) + 1.0f);
    const Pair w = binWeights(s, t);
    const int i0 = w.at.index;
    const bool in0 = i0 >= 0 && i0 < bins, in1 = i0 + 1 >= 0 && i0 + 1 < bins;
    const int c0 = in0 ? i0 : 0, c1 = in1 ? i0 + 1 : 0;
    accumulate<S>(acc, in0 ? w.w0 : 0.0f, load<S>(row + c0 * S), in1 ? w.w1 : 0.0f, load<S>(row + c1 * S));
}

/// Lanes (1, 2 or 4) of a batch of `count` slices in the float pairs: every
/// lane of a group carries a slice, bar the last group's.
TOMO_HD int lanesFor(int count) { return count <= 1 ? 1 : count == 2 ? 2 : 4; }

} // namespace tomo::joseph
