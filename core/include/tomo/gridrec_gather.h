// gridrec's spreading step in its gather form: the value of one grid point
// as the sum of the phased spectrum samples within the kernel's reach. The
// body of the CUDA gather kernel (kernels/cuda/gridrec_kernels.cu, one
// thread per grid point, no atomics); the tests run it on the host against
// the CPU plan's spreading (tests/core/test_gridrec.cpp).
//
// Plain C++17 without the standard library, so nvcc and the host compiler
// both take it. The method and the layouts are described in tomo/gridrec.h.
#pragma once

#include <math.h>
#include <stddef.h>

#if defined(__CUDACC__)
#define TOMO_GRIDREC_HD __host__ __device__ __forceinline__
#else
#define TOMO_GRIDREC_HD inline
#endif

namespace tomo::gridrec {

/// Entries of the kernel table per grid cell (linear interpolation between
/// entries: relative error below 1e-5 of the kernel for every width).
inline constexpr int kTableScale = 256;

/// Along a canonical line, |cells per k| below this counts as "parallel to
/// that axis" (the coordinate moves less than 0.01 cell over the whole row).
inline constexpr float kParallel = 1e-6f;

/// The kernel at distance `d` (grid cells) from its centre: `table` holds
/// (value, slope) pairs at d = i / kTableScale, i = 0..last; entries at and
/// beyond the half-width are 0, so any |d| beyond it weighs 0.
TOMO_GRIDREC_HD float kernelWeight(const float* table, int last, float d) {
    const float far = static_cast<float>(last);
    float x = fabsf(d) * static_cast<float>(kTableScale);
    x = x < far ? x : far; // (not fminf: a library call on the host)
    const int i = static_cast<int>(x);
    return table[2 * i] + (x - static_cast<float>(i)) * table[2 * i + 1];
}

/// What the gather reads; pointers into host or device memory alike.
struct GatherView {
    int gridSize = 0;       ///< G: grid index j stands for frequency (j or j - G) / G cycles per pixel
    int copies = 1;         ///< ceil(B): the samples lie within B G cells of the origin
    double radius = 0.0;    ///< the farthest sample from the origin (cells): lastSample G / L
    int lastSample = 0;     ///< a row's samples are k = -lastSample .. lastSample (ceil(B L) - 1)
    int sampleStride = 0;   ///< complex values from one sample row to the next (>= 2 lastSample + 1)
    int projections = 0;
    float halfWidth = 0.0f; ///< W / 2 grid cells
    const float* table = nullptr;
    int tableLast = 0;
    /// Canonical order (angles mod pi, ascending): sample k of row i lies at
    /// k * (dirX[i], dirY[i]) grid cells; invX/invY their reciprocals (0
    /// where |dir| < kParallel).
    const double* dirX = nullptr;
    const double* dirY = nullptr;
    const float* invX = nullptr;
    const float* invY = nullptr;
    /// binStart[b]: first canonical row with angle >= b * pi / bins;
    /// binStart[bins] = projections.
    const int* binStart = nullptr;
    int bins = 0;
    /// [row][k + lastSample] complex (re, im), sampleStride complex values per row.
    const float* samples = nullptr;
};

/// Narrows [lo, hi] to the k with |q - k * dir| < halfWidth (inv = 1 / dir,
/// 0 when parallel); false when none is left.
TOMO_GRIDREC_HD bool narrowTo(float q, float inv, float halfWidth, float& lo, float& hi) {
    if (inv == 0.0f) return fabsf(q) < halfWidth;
    const float a = (q - halfWidth) * inv;
    const float b = (q + halfWidth) * inv;
    lo = fmaxf(lo, fminf(a, b));
    hi = fminf(hi, fmaxf(a, b));
    return lo <= hi;
}

/// First canonical row of `bin`, bins counted on from 0 round the circle
/// for at most one turn either way, -bins <= bin < 2 bins (bin b >= bins is
/// bin b - bins one turn on: rows + projections). No division: it runs for
/// every copy of every grid point.
TOMO_GRIDREC_HD int binStartOf(const GatherView& v, int bin) {
    const int turn = bin < 0 ? -1 : (bin >= v.bins ? 1 : 0);
    return v.binStart[bin - turn * v.bins] + turn * v.projections;
}

/// Calls visit(sample, w) for each sample within the kernel's reach of the
/// point (qx, qy) (grid cells, one unfolded copy of a grid point), `sample`
/// the complex index row * sampleStride + k + lastSample into a pair's
/// samples, `w` its kernel weight. Candidate rows are the lines through the
/// origin that pass within halfWidth * sqrt(2) of the point, found by their
/// angle; each gives the k range where the sample lies inside the W x W
/// window.
template <class Visit>
TOMO_GRIDREC_HD void visitCopy(const GatherView& v, double qx, double qy, Visit& visit) {
    constexpr float kPi = 3.14159265358979f;
    const float hw = v.halfWidth;
    const float reach = hw * 1.41421356f;
    const float fx = static_cast<float>(qx);
    const float fy = static_cast<float>(qy);
    const float rho = sqrtf(fx * fx + fy * fy);
    int first = 0;
    int count = v.projections;
    if (rho > reach) {
        float phi = atan2f(-fy, fx); // line direction (cos, -sin)
        if (phi < 0.0f) phi += kPi;
        // Slack for the rounding of the float angles (atan2f, asinf, pi in
        // float: a few 1e-7 radians), a hundred times over: at most a part
        // of a row's spacing, so few rows are looked at in vain.
        constexpr float kSlack = 1e-4f;
        const float binsPerRadian = static_cast<float>(v.bins) / kPi;
        const float delta = asinf(fminf(1.0f, reach / rho)) + kSlack; // < pi / 2 + kSlack
        const int lo = static_cast<int>(floorf((phi - delta) * binsPerRadian));
        const int hi = static_cast<int>(floorf((phi + delta) * binsPerRadian)) + 1;
        first = binStartOf(v, lo);
        const int end = binStartOf(v, hi);
        count = end - first < v.projections ? end - first : v.projections;
        if (first < 0) first += v.projections; // -projections <= first < 2 projections
        else if (first >= v.projections) first -= v.projections;
    }
    const int last = v.lastSample;
    for (int n = 0, i = first; n < count; ++n, i = i + 1 == v.projections ? 0 : i + 1) {
        float kLo = static_cast<float>(-last);
        float kHi = static_cast<float>(last);
        if (!narrowTo(fx, v.invX[i], hw, kLo, kHi) || !narrowTo(fy, v.invY[i], hw, kLo, kHi)) continue;
        const int k0 = static_cast<int>(ceilf(kLo));
        const int k1 = static_cast<int>(floorf(kHi));
        if (k0 > k1) continue;
        // The offset to the first sample in double (positions reach 2G
        // cells); the next ones step by the direction in float.
        const double ax = v.dirX[i];
        const double ay = v.dirY[i];
        float dx = static_cast<float>(qx - k0 * ax);
        float dy = static_cast<float>(qy - k0 * ay);
        const float sx = static_cast<float>(ax);
        const float sy = static_cast<float>(ay);
        size_t sample = static_cast<size_t>(i) * static_cast<size_t>(v.sampleStride) + static_cast<size_t>(k0 + last);
        for (int k = k0; k <= k1; ++k, ++sample) {
            visit(sample, kernelWeight(v.table, v.tableLast, dx) * kernelWeight(v.table, v.tableLast, dy));
            dx -= sx;
            dy -= sy;
        }
    }
}

/// visitCopy for every unfolded copy of grid point (jx, jy), jx, jy in
/// [0, G), that some sample can reach: the samples lie within `radius` < B G,
/// so the copies are jx or jx - G, plus a multiple of G up to B G on each
/// axis. The order of the visits is the order of a gather's sums.
template <class Visit>
TOMO_GRIDREC_HD void visitPoint(const GatherView& v, int jx, int jy, Visit& visit) {
    const int g = v.gridSize;
    const double reach = v.radius + static_cast<double>(v.halfWidth) * 1.41421356;
    const int lx = jx < g / 2 ? jx : jx - g;
    const int ly = jy < g / 2 ? jy : jy - g;
    for (int a = -v.copies; a <= v.copies; ++a) {
        const double qx = static_cast<double>(lx) + static_cast<double>(a) * g;
        if (fabs(qx) >= reach) continue;
        for (int b = -v.copies; b <= v.copies; ++b) {
            const double qy = static_cast<double>(ly) + static_cast<double>(b) * g;
            if (qx * qx + qy * qy >= reach * reach) continue;
            visitCopy(v, qx, qy, visit);
        }
    }
}

/// Sums the samples of N pairs of slices (`pairFloats` apart from
/// v.samples) into (re[n], im[n]) with their weights.
template <int N>
struct SumSamples {
    const float* samples;
    size_t pairFloats;
    float* re;
    float* im;
    TOMO_GRIDREC_HD void operator()(size_t sample, float w) {
        const float* s = samples + 2 * sample;
        for (int n = 0; n < N; ++n) {
            re[n] += w * s[n * pairFloats];
            im[n] += w * s[n * pairFloats + 1];
        }
    }
};

/// The value of grid point (jx, jy) for N pairs of slices (samples
/// `pairFloats` apart; each pair's value the same as alone: the same sums
/// in the same order). The N pairs share the search for the rows within
/// reach and the kernel weights.
template <int N>
TOMO_GRIDREC_HD void gatherPoints(const GatherView& v, size_t pairFloats, int jx, int jy, float* re, float* im) {
    for (int n = 0; n < N; ++n) re[n] = im[n] = 0.0f;
    SumSamples<N> sum{v.samples, pairFloats, re, im};
    visitPoint(v, jx, jy, sum);
}

/// gatherPoints of one pair.
TOMO_GRIDREC_HD void gatherPoint(const GatherView& v, int jx, int jy, float& re, float& im) {
    gatherPoints<1>(v, 0, jx, jy, &re, &im);
}

} // namespace tomo::gridrec
