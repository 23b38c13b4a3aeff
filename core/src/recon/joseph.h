// The arithmetic of the float projector pairs (the CPU "cpu" pair and the
// CUDA pair compile the same functions): per-projection constants, the
// sample of one ray on one image line (forward), one projection's share of
// one pixel (back). projector.h explains the matrix; here is how both
// directions compute its entries with the same float operations:
//
//   s = fma(along, alongCoef, fma(line, lineCoef, offset))
//   w = max(0, reach - |k - s|) * scale
//
// where a "line" is an image row (|cos| >= |sin|: along = column) or an
// image column (along = row). The forward kernel walks the lines of a ray
// and picks the two pixels around its crossing; the back kernel takes the
// two bins around s of each pixel: for one (pixel, bin) both evaluate the
// same expression on the same operands, so the two matrices are equal bit
// for bit and <A x, y> = <x, A^T y> holds to the summation order.
//
// Batches: S slices (1, 2 or 4 lanes) interleaved per element, so one
// position and weight serve S slices and the GPU loads them as one float2 /
// float4 (16-byte accesses on Hopper).
#pragma once

#include <cmath>
#include <cstring>

#if defined(__CUDACC__)
#define TOMO_HD __host__ __device__ __forceinline__
#else
#define TOMO_HD inline
#endif

namespace tomo::joseph {

/// One projection's constants (two float4 on the GPU).
struct alignas(16) Projection {
    float alongCoef; ///< ds per pixel along a line: cos (rows) or -sin (columns)
    float lineCoef;  ///< ds per line: -sin (rows) or cos (columns)
    float offset;    ///< s at pixel (0, 0): axis - cx cos + cy sin
    float invAlong;  ///< 1 / alongCoef: where along a line the ray of bin k crosses
    float reach;     ///< c = |alongCoef|: the triangle's half-width in bins
    float scale;     ///< 1 / c^2
    float rows;      ///< 1: lines are image rows; 0: columns
    float unused;
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
    p.reach = std::abs(p.alongCoef);
    p.scale = 1.0f / (p.reach * p.reach);
    p.rows = rows ? 1.0f : 0.0f;
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

/// Weight joining bin k with a pixel at position s: the triangle of
/// half-width `reach` times `scale` (Joseph: reach c, scale 1/c^2; the FBP's
/// linear interpolation: 1, 1).
TOMO_HD float weight(float k, float s, float reach, float scale) {
    return larger(reach - fabsf(k - s), 0.0f) * scale;
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

/// Forward: adds the ray of bin k's sample on one line to `acc`. `line`
/// holds the line's `alongCount` elements of S lanes; `inner` =
/// fma(line index, lineCoef, offset). Checked = false: the caller knows
/// both pixels lie on the line (rayInterior), so no bounds are tested; the
/// sum is the same.
template <int S, bool Checked = true>
TOMO_HD void raySample(Lanes<S>& acc, const float* line, int alongCount, const Projection& q, float k, float inner) {
    // The pixel before the crossing; bounded by the line range of rayLines
    // (within a pixel or two of the line), so floorOf's range holds.
    const Floor a = floorOf((k - inner) * q.invAlong);
    const float a0 = a.value;
    const float w0 = weight(k, fmaf(a0, q.alongCoef, inner), q.reach, q.scale);
    const float w1 = weight(k, fmaf(a0 + 1.0f, q.alongCoef, inner), q.reach, q.scale);
    const int i0 = a.index;
    if constexpr (!Checked) {
        const float* pixel = line + i0 * S; // and its neighbour S floats on: one address
        accumulate<S>(acc, w0, load<S>(pixel), w1, load<S>(pixel + S));
        return;
    }
    const bool in0 = i0 >= 0 && i0 < alongCount, in1 = i0 + 1 >= 0 && i0 + 1 < alongCount;
    const int c0 = in0 ? i0 : 0, c1 = in1 ? i0 + 1 : 0;
    accumulate<S>(acc, in0 ? w0 : 0.0f, load<S>(line + c0 * S), in1 ? w1 : 0.0f, load<S>(line + c1 * S));
}

/// The lines [first, last) of the `lineCount` lines whose crossing with the
/// ray of bin k lies in (lo, hi), give or take a line (|slope| <= 1: within
/// a pixel of it).
TOMO_HD void rayLinesWithin(const Projection& q, float k, float lo, float hi, int lineCount, int& first, int& last) {
    // crossing(line) = (k - offset) / alongCoef - line * lineCoef / alongCoef
    const float a0 = (k - q.offset) * q.invAlong;
    const float slope = -q.lineCoef * q.invAlong; // |slope| <= 1
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
                         float reach, float scale) {
    // Clamped to [-2, bins + 1], where both bins read as zero past the edges:
    // an axis far off the detector cannot overflow the conversion.
    const float s = smaller(larger(position(q, along, line), -2.0f), static_cast<float>(bins) + 1.0f);
    const Floor f = floorOf(s);
    const float k0 = f.value;
    const float w0 = weight(k0, s, reach, scale);
    const float w1 = weight(k0 + 1.0f, s, reach, scale);
    const int i0 = f.index;
    const bool in0 = i0 >= 0 && i0 < bins, in1 = i0 + 1 >= 0 && i0 + 1 < bins;
    const int c0 = in0 ? i0 : 0, c1 = in1 ? i0 + 1 : 0;
    accumulate<S>(acc, in0 ? w0 : 0.0f, load<S>(row + c0 * S), in1 ? w1 : 0.0f, load<S>(row + c1 * S));
}

/// Lanes (1, 2 or 4) of a batch of `count` slices in the float pairs: every
/// lane of a group carries a slice, bar the last group's.
TOMO_HD int lanesFor(int count) { return count <= 1 ? 1 : count == 2 ? 2 : 4; }

} // namespace tomo::joseph
