// The "cpu-reference" projector pair: Joseph's forward projector and its
// transpose written as the formulas read (projector.h), in double: the
// oracle the float pairs are tested against.
//
// Forward, ray of bin k at angle a (centred pixel coordinates x, y):
//   |cos a| >= |sin a|: for every row y, x_k = (k - axis + y sin a) / cos a;
//       sum of the image linearly interpolated at x_k, times 1 / |cos a|
//   else: for every column x, y_k = (x cos a + axis - k) / sin a; likewise
//       along the column, times 1 / |sin a|
// Back, pixel (x, y): s = x cos a - y sin a + axis; bins k = floor(s) and
//   floor(s) + 1 with weight max(0, 1 - |k - s| / c) / c, c = max(|cos a|,
//   |sin a|) (the transpose), or max(0, 1 - |k - s|) (the FBP's interpolation).
#include "recon/projector_host.h"

#include <cmath>
#include <string>
#include <vector>

namespace tomo {

namespace {

class ReferencePair final : public cpu::HostPair<double> {
public:
    ReferencePair(const ReconGeometry& geometry, const FilterOptions& filter, const IterativeOptions& options,
                  int threads)
        : HostPair(geometry, filter, options, threads) {}

    std::string name() const override {
        return std::string("cpu-reference joseph, ") + (m_matched ? "matched" : "unmatched");
    }

private:
    int lanes(int) const override { return 1; }

    struct Trig {
        std::vector<double> cosA, sinA, axis;
    };
    Trig trig() const {
        const Geometry& g = m_geometry.geometry;
        Trig t;
        for (int p = 0; p < g.projections(); ++p) {
            t.cosA.push_back(std::cos(g.angles[p]));
            t.sinA.push_back(std::sin(g.angles[p]));
            t.axis.push_back(g.axisAt(p));
        }
        return t;
    }

    void project(const Vector& x, Vector& y) override {
        const Trig t = trig();
        const int W = m_geometry.sliceWidth, H = m_geometry.sliceHeight;
        const int P = m_geometry.geometry.projections(), bins = m_geometry.geometry.bins;
        const double cx = (W - 1) / 2.0, cy = (H - 1) / 2.0;
        pool().parallelFor(x.count() * P, [&](int task, int) {
            const int slice = task / P, p = task % P;
            const double* img = x.group(slice);
            auto at = [&](double ix, double iy) { // whole numbers, zero outside
                return ix >= 0 && ix < W && iy >= 0 && iy < H
                           ? img[static_cast<std::size_t>(iy) * W + static_cast<std::size_t>(ix)]
                           : 0.0;
            };
            double* out = y.group(slice) + static_cast<std::size_t>(p) * bins;
            const double c = t.cosA[p], s = t.sinA[p], axis = t.axis[p];
            for (int k = 0; k < bins; ++k) {
                double sum = 0.0;
                if (std::abs(c) >= std::abs(s)) {
                    for (int iy = 0; iy < H; ++iy) {
                        const double fx = (k - axis + (iy - cy) * s) / c + cx;
                        const double i0 = std::floor(fx), w = fx - i0;
                        sum += (1.0 - w) * at(i0, iy) + w * at(i0 + 1.0, iy);
                    }
                    out[k] = sum / std::abs(c);
                } else {
                    for (int ix = 0; ix < W; ++ix) {
                        const double fy = ((ix - cx) * c + axis - k) / s + cy;
                        const double i0 = std::floor(fy), w = fy - i0;
                        sum += (1.0 - w) * at(ix, i0) + w * at(ix, i0 + 1.0);
                    }
                    out[k] = sum / std::abs(s);
                }
            }
        });
    }

    void backProject(const Vector& y, Vector& x, bool interpolate) override {
        const Trig t = trig();
        const int W = m_geometry.sliceWidth, H = m_geometry.sliceHeight;
        const int P = m_geometry.geometry.projections(), bins = m_geometry.geometry.bins;
        const double cx = (W - 1) / 2.0, cy = (H - 1) / 2.0;
        pool().parallelFor(x.count() * H, [&](int task, int) {
            const int slice = task / H, iy = task % H;
            const double* sino = y.group(slice);
            double* out = x.group(slice) + static_cast<std::size_t>(iy) * W;
            for (int ix = 0; ix < W; ++ix) {
                double sum = 0.0;
                for (int p = 0; p < P; ++p) {
                    const double s = (ix - cx) * t.cosA[p] - (iy - cy) * t.sinA[p] + t.axis[p];
                    const double c = interpolate ? 1.0 : std::max(std::abs(t.cosA[p]), std::abs(t.sinA[p]));
                    const double k0 = std::floor(s);
                    for (const double k : {k0, k0 + 1.0}) {
                        if (k < 0.0 || k >= bins) continue;
                        const double w = std::max(0.0, 1.0 - std::abs(k - s) / c) / c;
                        sum += w * sino[static_cast<std::size_t>(p) * bins + static_cast<std::size_t>(k)];
                    }
                }
                out[ix] = sum;
            }
        });
    }
};

} // namespace

std::unique_ptr<ProjectorPair> makeReferenceProjector(const ReconGeometry& geometry, const FilterOptions& filter,
                                                      const IterativeOptions& options, int threads) {
    return std::make_unique<ReferencePair>(geometry, filter, options, threads);
}

} // namespace tomo
