// Cone-beam "cpu": the fast back-projector (seeds 001 §3.1 and 002 §3.3, §4).
//
// Layout: each filtered view is copied with a border of zeros (one pixel
// before, two after, in both directions), so that a position clamped into
// [0, columns + 1] x [0, rows + 1] (padded pixels) reads exactly the zeros
// that lie outside the detector: the inner loops need no branch and no mask.
//
// Two kernels, both with clipping (the voxels whose projection misses the
// detector are skipped; they would read only zeros, so results do not
// change) and plain loops GCC vectorises, compiled for AVX-512, AVX2 and
// baseline x86-64 (target_clones):
//  * columns (circular orbits, any matrix whose u w and w do not depend on
//    z): along a voxel column u and w are constant and v is linear in z
//    (seed 001's "sharing"); views are stored transposed (a detector column
//    contiguous), the two detector columns around u are mixed once per
//    column and view, and each voxel reads two values of that mixed line.
//    One task = 16 columns of one row (accumulators [column][z] in L1).
//  * lines (any matrices): along a voxel line in x, u w, v w and w are
//    linear in i; per view and line the range of i that lands on the
//    detector is solved from those linear inequalities (seed 002 §3.3), and
//    each voxel reads four pixels. One task = 16 lines of one slice.
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

/// One voxel column's share of one view: padded column iu + fu, padded
/// rows v = v0 + dv k for k in [lo, hi), mixed line entries [tLo, tHi).
struct ColumnView {
    int column; ///< within the task
    int iu, lo, hi, tLo, tHi;
    float fu, v0, dv, weight;
};

/// Adds one view to the columns of a task: per column, the two detector
/// columns around u are mixed into one line (contiguous, vectorised), then
/// each voxel reads two entries of it at v (gathers) and adds weight x value.
TOMO_CPU_CLONES void accumulateView(const ColumnView* __restrict columns, int count, const float* __restrict img,
                                    int colStride, float vMax, float* __restrict mixed, float* __restrict acc,
                                    int nz) {
    for (int n = 0; n < count; ++n) {
        const ColumnView& c = columns[n];
        const float* __restrict c0 = img + static_cast<std::size_t>(c.iu) * colStride;
        const float* __restrict c1 = c0 + colStride;
        for (int t = c.tLo; t < c.tHi; ++t) mixed[t] = c0[t] + c.fu * (c1[t] - c0[t]);
        float* __restrict out = acc + static_cast<std::size_t>(c.column) * nz;
        for (int k = c.lo; k < c.hi; ++k) {
            const float v = std::min(std::max(c.v0 + c.dv * static_cast<float>(k), 0.0f), vMax);
            const int iv = static_cast<int>(v); // v >= 0: truncation is floor
            const float fv = v - static_cast<float>(iv);
            out[k] += c.weight * (mixed[iv] + fv * (mixed[iv + 1] - mixed[iv]));
        }
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

/// Views with a zero border; `transposed`: [u][v] (a detector column
/// contiguous), else [v][u]. Padded index = pixel index + 1.
std::vector<float> padViews(const FilteredProjections& in, bool transposed, WorkerPool& pool) {
    const int cols = in.columns, rows = in.rows;
    const std::size_t padded = static_cast<std::size_t>(cols + 3) * (rows + 3);
    std::vector<float> images(padded * in.views.size(), 0.0f);
    pool.parallelFor(static_cast<int>(in.views.size()), [&](int p, int) {
        const float* src = in.data.data() + static_cast<std::size_t>(p) * cols * rows;
        float* dst = images.data() + padded * p;
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c)
                dst[transposed ? static_cast<std::size_t>(c + 1) * (rows + 3) + r + 1
                               : static_cast<std::size_t>(r + 1) * (cols + 3) + c + 1] =
                    src[static_cast<std::size_t>(r) * cols + c];
    });
    return images;
}

/// Every view's u w and w independent of z (a circular orbit about z).
bool columnsAligned(const FilteredProjections& in) {
    return std::all_of(in.views.begin(), in.views.end(),
                       [](const ProjectionMatrix& p) { return p.m[2] == 0.0 && p.m[10] == 0.0; });
}

constexpr int kColumnsPerTask = 16;

void backprojectColumns(const FilteredProjections& in, const VolumeGrid& grid, double scale, std::span<float> volume,
                        WorkerPool& pool, bool clip) {
    const int cols = in.columns, rows = in.rows, nz = grid.nz;
    const int colStride = rows + 3;
    const std::size_t padded = static_cast<std::size_t>(cols + 3) * colStride;
    const std::vector<float> images = padViews(in, true, pool);
    const int views = static_cast<int>(in.views.size());
    const int blocksX = (grid.nx + kColumnsPerTask - 1) / kColumnsPerTask;
    const float vMax = static_cast<float>(rows + 1);
    struct Scratch {
        std::vector<float> acc, mixed;
        std::vector<ColumnView> columns;
    };
    std::vector<Scratch> scratch(pool.threads());
    pool.parallelFor(grid.ny * blocksX, [&](int task, int thread) {
        const int j = task / blocksX;
        const int i0 = task % blocksX * kColumnsPerTask;
        const int columns = std::min(kColumnsPerTask, grid.nx - i0);
        Scratch& s = scratch[thread];
        s.acc.assign(static_cast<std::size_t>(kColumnsPerTask) * nz, 0.0f);
        s.mixed.resize(static_cast<std::size_t>(colStride));
        s.columns.resize(kColumnsPerTask);
        const double y = grid.y(j), z0 = grid.z(0);
        for (int p = 0; p < views; ++p) {
            const auto& m = in.views[p].m;
            int count = 0;
            for (int c = 0; c < columns; ++c) {
                const double x = grid.x(i0 + c);
                const double w = m[8] * x + m[9] * y + m[11];
                if (!(w > 0.0)) continue; // behind the source
                const double rw = 1.0 / w;
                double u = (m[0] * x + m[1] * y + m[3]) * rw + 1.0; // padded
                if (clip && !(u > 0.0 && u < cols + 1.0)) continue;
                u = std::clamp(u, 0.0, cols + 1.0);
                // Padded v along the column: v0 + dv k.
                const double v0 = (m[4] * x + m[5] * y + m[6] * z0 + m[7]) * rw + 1.0;
                const double dv = m[6] * grid.voxelSize * rw;
                Clipper clipper(nz);
                if (clip) {
                    clipper.require(v0, dv);
                    clipper.require(rows + 1.0 - v0, -dv);
                }
                const Range r = clipper.range();
                if (r.lo >= r.hi) continue;
                // The mixed entries the voxels read, a row of margin for rounding.
                const double va = std::clamp(v0 + dv * r.lo, 0.0, rows + 1.0);
                const double vb = std::clamp(v0 + dv * (r.hi - 1), 0.0, rows + 1.0);
                const int iu = static_cast<int>(u);
                s.columns[count++] = {c,
                                      iu,
                                      r.lo,
                                      r.hi,
                                      std::max(0, static_cast<int>(std::min(va, vb)) - 1),
                                      std::min(rows + 3, static_cast<int>(std::max(va, vb)) + 3),
                                      static_cast<float>(u - iu),
                                      static_cast<float>(v0),
                                      static_cast<float>(dv),
                                      static_cast<float>(rw * rw)};
            }
            accumulateView(s.columns.data(), count, images.data() + padded * p, colStride, vMax, s.mixed.data(),
                           s.acc.data(), nz);
        }
        for (int c = 0; c < columns; ++c)
            for (int k = 0; k < nz; ++k)
                volume[(static_cast<std::size_t>(k) * grid.ny + j) * grid.nx + i0 + c] =
                    static_cast<float>(scale * s.acc[static_cast<std::size_t>(c) * nz + k]);
    });
}

void backprojectLines(const FilteredProjections& in, const VolumeGrid& grid, double scale, std::span<float> volume,
                      WorkerPool& pool, bool clip) {
    const int cols = in.columns, rows = in.rows;
    const int stride = cols + 3;
    const std::size_t padded = static_cast<std::size_t>(stride) * (rows + 3);
    const int views = static_cast<int>(in.views.size());
    const std::vector<float> images = padViews(in, false, pool);
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

} // namespace

void backprojectFast(const FilteredProjections& in, const VolumeGrid& grid, double scale, std::span<float> volume,
                     WorkerPool& pool, bool clip) {
    // Short columns (a fan beam's single slice) leave the per-column work
    // of the column kernel unshared: lines are faster there.
    constexpr int kShortestColumns = 8;
    if (columnsAligned(in) && grid.nz >= kShortestColumns) backprojectColumns(in, grid, scale, volume, pool, clip);
    else backprojectLines(in, grid, scale, volume, pool, clip);
}

} // namespace tomo::cone
