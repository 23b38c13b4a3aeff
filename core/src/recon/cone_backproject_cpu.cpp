// Cone-beam "cpu": the fast back-projector (seed 002 §3.3, §4).
//
// Layout: each filtered view is copied with a border of zeros (one pixel
// before, two after, in both directions), so that a position clamped into
// [0, columns + 1] x [0, rows + 1] (padded pixels) reads exactly the zeros
// that lie outside the detector: the inner loop needs no branch and no mask.
//
// Work: one task = 16 voxel lines along x at one z; their float
// accumulators stay in L1 while every view adds to them. Per view and
// line, u w, v w and w are linear in i, and the range of i whose projection
// lands on the detector is found by solving those linear inequalities (the
// line-wise clipping of seed 002 §3.3): the voxels outside read only
// zeros, so skipping them changes nothing. The line update is one plain
// loop GCC vectorises (gathers for the four corner pixels), compiled for
// AVX-512, AVX2 and baseline x86-64 (target_clones).
#include "recon/cone_backproject.h"

#include "cpu_clones.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace tomo::cone {

namespace {

constexpr int kLinesPerTask = 16;

/// Coefficients of one view along one line: (u w, v w, w) = a + b * i in
/// padded pixel units.
struct LineCoefficients {
    float au, bu, av, bv, aw, bw;
};

/// Adds value(u, v) / w^2 to acc[lo .. hi) (padded positions clamped). The
/// arithmetic of a voxel does not depend on the range, so clipping cannot
/// change a voxel it keeps.
TOMO_CPU_CLONES void updateLine(const float* __restrict img, int stride, LineCoefficients c, float uMax, float vMax,
                                int lo, int hi, float* __restrict acc) {
    for (int n = lo; n < hi; ++n) {
        const float t = static_cast<float>(n);
        const float r = 1.0f / (c.aw + c.bw * t);
        const float u = std::min(std::max((c.au + c.bu * t) * r, 0.0f), uMax);
        const float v = std::min(std::max((c.av + c.bv * t) * r, 0.0f), vMax);
        const int iu = static_cast<int>(u); // u, v >= 0: truncation is floor
        const int iv = static_cast<int>(v);
        const float fu = u - static_cast<float>(iu);
        const float fv = v - static_cast<float>(iv);
        const int at = iv * stride + iu;
        const float top = img[at] + fu * (img[at + 1] - img[at]);
        const float bottom = img[at + stride] + fu * (img[at + stride + 1] - img[at + stride]);
        acc[n] += (top + fv * (bottom - top)) * (r * r);
    }
}

/// The i in [0, n) where alpha + beta * i > 0 for every constraint: strict
/// ones (in front of the source) exactly, detector ones widened by a voxel
/// on each side (the extra voxels read zeros). Empty: lo >= hi.
struct Range {
    int lo, hi;
};

class Clipper {
public:
    explicit Clipper(int n) : m_n(n) {}
    void require(double alpha, double beta) { bound(alpha, beta, m_lo, m_hi); }
    void requireStrictly(double alpha, double beta) { bound(alpha, beta, m_strictLo, m_strictHi); }
    Range range() const {
        const double lo = std::max({0.0, std::floor(m_lo), std::floor(m_strictLo) + 1.0});
        const double hi = std::min({static_cast<double>(m_n), std::ceil(m_hi) + 1.0, std::ceil(m_strictHi)});
        return lo < hi ? Range{static_cast<int>(lo), static_cast<int>(hi)} : Range{0, 0};
    }

private:
    static void bound(double alpha, double beta, double& lo, double& hi) {
        if (beta > 0.0) lo = std::max(lo, -alpha / beta);
        else if (beta < 0.0) hi = std::min(hi, -alpha / beta);
        else if (!(alpha > 0.0)) lo = kInf, hi = -kInf; // never true along this line
    }
    static constexpr double kInf = std::numeric_limits<double>::infinity();
    double m_lo = -kInf, m_hi = kInf, m_strictLo = -kInf, m_strictHi = kInf;
    int m_n;
};

} // namespace

void backprojectFast(const FilteredProjections& in, const VolumeGrid& grid, double scale, std::span<float> volume,
                     WorkerPool& pool, bool clip) {
    const int cols = in.columns, rows = in.rows;
    const int stride = cols + 3;
    const std::size_t padded = static_cast<std::size_t>(stride) * (rows + 3);
    const int views = static_cast<int>(in.views.size());
    std::vector<float> images(padded * views, 0.0f);
    pool.parallelFor(views, [&](int p, int) {
        const float* src = in.data.data() + static_cast<std::size_t>(p) * cols * rows;
        float* dst = images.data() + padded * p;
        for (int r = 0; r < rows; ++r)
            std::copy(src + static_cast<std::size_t>(r) * cols, src + static_cast<std::size_t>(r + 1) * cols,
                      dst + static_cast<std::size_t>(r + 1) * stride + 1);
    });

    const int blocksY = (grid.ny + kLinesPerTask - 1) / kLinesPerTask;
    const double x0 = grid.x(0);
    const float uMax = static_cast<float>(cols + 1), vMax = static_cast<float>(rows + 1);
    std::vector<std::vector<float>> accumulators(pool.threads(),
                                                 std::vector<float>(static_cast<std::size_t>(kLinesPerTask) * grid.nx));
    pool.parallelFor(grid.nz * blocksY, [&](int task, int thread) {
        const int k = task / blocksY;
        const int j0 = task % blocksY * kLinesPerTask;
        const int lines = std::min(kLinesPerTask, grid.ny - j0);
        std::vector<float>& acc = accumulators[thread];
        std::fill(acc.begin(), acc.end(), 0.0f);
        const double z = grid.z(k);
        for (int p = 0; p < views; ++p) {
            const auto& m = in.views[p].m;
            const float* img = images.data() + padded * p;
            // Padded positions: u + 1 = (u w + w) / w, likewise v.
            const double bu = (m[0] + m[8]) * grid.voxelSize, bv = (m[4] + m[8]) * grid.voxelSize;
            const double bw = m[8] * grid.voxelSize;
            for (int l = 0; l < lines; ++l) {
                const auto [uw, vw, w] = in.views[p].apply(x0, grid.y(j0 + l), z);
                const double au = uw + w, av = vw + w;
                Clipper clipper(grid.nx);
                clipper.requireStrictly(w, bw); // in front of the source
                if (clip) {
                    clipper.require(au, bu);                                   // u + 1 > 0
                    clipper.require((cols + 1) * w - au, (cols + 1) * bw - bu); // u + 1 < columns + 1
                    clipper.require(av, bv);
                    clipper.require((rows + 1) * w - av, (rows + 1) * bw - bv);
                }
                const Range r = clipper.range();
                if (r.lo >= r.hi) continue;
                const LineCoefficients c{static_cast<float>(au), static_cast<float>(bu), static_cast<float>(av),
                                         static_cast<float>(bv), static_cast<float>(w),  static_cast<float>(bw)};
                updateLine(img, stride, c, uMax, vMax, r.lo, r.hi, acc.data() + static_cast<std::size_t>(l) * grid.nx);
            }
        }
        for (int l = 0; l < lines; ++l) {
            float* out = volume.data() + (static_cast<std::size_t>(k) * grid.ny + j0 + l) * grid.nx;
            for (int i = 0; i < grid.nx; ++i)
                out[i] = static_cast<float>(scale * acc[static_cast<std::size_t>(l) * grid.nx + i]);
        }
    });
}

} // namespace tomo::cone
