// The "cpu" projector pair: joseph.h's float arithmetic (the CUDA pair's,
// operation for operation) on the worker threads, S = 1, 2 or 4 slices
// interleaved so one position and weight serve S slices.
//
// Forward: one task = one projection of one group of S slices; it walks the
// lines of the image (rows, or for the column projections the rows of a
// transposed copy) and adds each line's sample to the bins whose rays cross
// it, so the image is read line by line. Back: one task = one image row of
// one group; per projection, every pixel of the row adds its two bins.
// Both add in the CUDA kernels' order (lines, projections ascending).
#include "recon/joseph.h"
#include "recon/projector_host.h"

#include "cpu_clones.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tomo {

namespace {

using joseph::Lanes;
using joseph::Projection;

/// One projection of one group: the rays of every bin over `lineCount`
/// lines of `alongCount` elements; out holds bins x S zeros on entry.
template <int S>
TOMO_CPU_CLONES void projectRays(const float* lines, int alongCount, int lineCount, const Projection& q, int bins,
                                 float* out) {
    for (int line = 0; line < lineCount; ++line) {
        const float inner = fmaf(static_cast<float>(line), q.lineCoef, q.offset);
        // Bins whose ray can cross this line within the grid.
        const float s0 = fmaf(-1.0f, q.alongCoef, inner);
        const float s1 = fmaf(static_cast<float>(alongCount), q.alongCoef, inner);
        const int first = std::max(0, static_cast<int>(std::floor(std::min(s0, s1))));
        const int last = std::min(bins - 1, static_cast<int>(std::ceil(std::max(s0, s1))));
        const float* data = lines + static_cast<std::size_t>(line) * alongCount * S;
        const float lf = static_cast<float>(line);
        for (int k = first; k <= last; ++k) {
            Lanes<S> acc = joseph::load<S>(out + static_cast<std::size_t>(k) * S);
            const float t = joseph::crossing(q, joseph::crossingStart(q, static_cast<float>(k)), lf);
            joseph::raySample<S>(acc, data, alongCount, q.peak, t);
            joseph::store<S>(out + static_cast<std::size_t>(k) * S, acc);
        }
    }
}

/// One image row `iy` of one group: every projection's share of its pixels.
template <int S>
TOMO_CPU_CLONES void backprojectRow(const float* sino, int bins, const Projection* qs, int projections, int width,
                                    int iy, bool interpolate, float* out) {
    const float fy = static_cast<float>(iy);
    for (int p = 0; p < projections; ++p) {
        const Projection& q = qs[p];
        const float* row = sino + static_cast<std::size_t>(p) * bins * S;
        const joseph::Triangle triangle = joseph::triangle(q, interpolate);
        const bool rows = q.rows != 0.0f;
        for (int ix = 0; ix < width; ++ix) {
            Lanes<S> acc = joseph::load<S>(out + static_cast<std::size_t>(ix) * S);
            const float fx = static_cast<float>(ix);
            joseph::pixelSample<S>(acc, row, bins, q, rows ? fx : fy, rows ? fy : fx, triangle);
            joseph::store<S>(out + static_cast<std::size_t>(ix) * S, acc);
        }
    }
}

class FastPair final : public cpu::HostPair<float> {
public:
    FastPair(const ReconGeometry& geometry, const FilterOptions& filter, const IterativeOptions& options, int threads)
        : HostPair(geometry, filter, options, threads) {
        geometryChanged();
    }

    std::string name() const override { return std::string("cpu joseph, ") + (m_matched ? "matched" : "unmatched"); }

private:
    int lanes(int count) const override { return joseph::lanesFor(count); }

    void geometryChanged() override {
        const Geometry& g = m_geometry.geometry;
        m_constants.clear();
        for (int p = 0; p < g.projections(); ++p)
            m_constants.push_back(joseph::projection(g.angles[p], g.axisAt(p), m_geometry.sliceWidth, m_geometry.sliceHeight));
    }

    void project(const Vector& x, Vector& y) override {
        const int W = m_geometry.sliceWidth, H = m_geometry.sliceHeight, S = x.lanes;
        const int P = m_geometry.geometry.projections(), bins = m_geometry.geometry.bins;
        // The column projections read a transposed copy: their lines are contiguous there.
        const bool anyColumns = std::any_of(m_constants.begin(), m_constants.end(), [](const Projection& q) { return q.rows == 0.0f; });
        Vector transposed(Space::Image, anyColumns ? x.count() : 1, S, anyColumns ? x.elements : 0);
        if (anyColumns) {
            constexpr int kBlock = 32;
            const int blocks = (W + kBlock - 1) / kBlock;
            pool().parallelFor(x.groups * blocks, [&](int task, int) {
                const int g = task / blocks, ix0 = task % blocks * kBlock, ix1 = std::min(W, ix0 + kBlock);
                const float* src = x.group(g);
                float* dst = transposed.group(g);
                for (int iy = 0; iy < H; ++iy)
                    for (int ix = ix0; ix < ix1; ++ix)
                        for (int j = 0; j < S; ++j)
                            dst[(static_cast<std::size_t>(ix) * H + iy) * S + j] = src[(static_cast<std::size_t>(iy) * W + ix) * S + j];
            });
        }
        pool().parallelFor(x.groups * P, [&](int task, int) {
            const int g = task / P, p = task % P;
            const Projection& q = m_constants[p];
            const bool rows = q.rows != 0.0f;
            const float* lines = rows ? x.group(g) : transposed.group(g);
            float* out = y.group(g) + static_cast<std::size_t>(p) * bins * S;
            const int along = rows ? W : H, count = rows ? H : W;
            if (S == 4) projectRays<4>(lines, along, count, q, bins, out);
            else if (S == 2) projectRays<2>(lines, along, count, q, bins, out);
            else projectRays<1>(lines, along, count, q, bins, out);
        });
    }

    void backProject(const Vector& y, Vector& x, bool interpolate) override {
        const int W = m_geometry.sliceWidth, H = m_geometry.sliceHeight, S = x.lanes;
        const int P = m_geometry.geometry.projections(), bins = m_geometry.geometry.bins;
        pool().parallelFor(x.groups * H, [&](int task, int) {
            const int g = task / H, iy = task % H;
            const float* sino = y.group(g);
            float* out = x.group(g) + static_cast<std::size_t>(iy) * W * S;
            if (S == 4) backprojectRow<4>(sino, bins, m_constants.data(), P, W, iy, interpolate, out);
            else if (S == 2) backprojectRow<2>(sino, bins, m_constants.data(), P, W, iy, interpolate, out);
            else backprojectRow<1>(sino, bins, m_constants.data(), P, W, iy, interpolate, out);
        });
    }

    std::vector<Projection> m_constants;
};

} // namespace

std::unique_ptr<ProjectorPair> makeCpuProjector(const ReconGeometry& geometry, const FilterOptions& filter,
                                                const IterativeOptions& options, int threads) {
    return std::make_unique<FastPair>(geometry, filter, options, threads);
}

} // namespace tomo
