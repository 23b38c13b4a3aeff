// The fan-beam projector pair (makeFanProjector, projector.h): Joseph's
// ray-driven projector along the divergent rays of a one-row detector, and
// its exact transpose, in double on the CPU; the vector arithmetic, SIRT's
// weights and the TV steps are the host pairs' (projector_host.h).
//
// In pixel coordinates of the slice grid (pixel (i, j) centred at (i, j)),
// the ray of column u of view p runs from the source S along
//     d = m3 + (u - centreU) / focalU * axisU         (describeView)
// Where |d_x| >= |d_y| it is stepped column by column: at column i it
// crosses y = S_y + (i - S_x) d_y / d_x and takes the image linearly
// interpolated between the two pixels around that crossing; else row by
// row. Each sample counts the path per column (or row), sqrt(1 + slope^2)
// pixels, so the image holds mu times the pixel size (FDK's scaling) when
// the data are line integrals. back() walks the same rays and scatters the
// same weights: the transpose to rounding, in a fixed order (blocks of views,
// summed block by block) so the result does not depend on the threads.
#include "recon/projector_host.h"

#include "tomo/error.h"
#include "tomo/fdk.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tomo {

namespace {

/// Views per block of the back-projection (each block sums into its own image).
constexpr int kBackBlocks = 16;

/// One ray in pixel coordinates: along its dominant axis, line l (a column
/// when `alongColumns`, else a row) is crossed at position start + l * slope
/// on the other axis; lines [first, last) can touch the grid.
struct Ray {
    bool alongColumns = true;
    double start = 0.0;
    double slope = 0.0;
    double length = 0.0; ///< path per line, pixels
    int first = 0;
    int last = 0;
};

Geometry baseGeometry(const ConeGeometry& g) {
    // The host pair sizes its sinograms by views x columns; the angles
    // (the sources' directions from the axis) only name the views.
    Geometry out;
    for (const ProjectionMatrix& m : g.views) {
        const ViewFrame f = describeView(m, "a view");
        out.angles.push_back(std::atan2(f.source[0], f.source[1]));
    }
    out.bins = g.columns;
    out.axis = (g.columns - 1) / 2.0;
    return out;
}

ReconGeometry sliceOf(const ConeGeometry& g, const VolumeGrid& grid) {
    ReconGeometry r;
    r.geometry = baseGeometry(g);
    r.sliceWidth = grid.nx;
    r.sliceHeight = grid.ny;
    return r;
}

class FanPair final : public cpu::HostPair<double> {
public:
    FanPair(const ConeGeometry& geometry, const VolumeGrid& grid, const IterativeOptions& options, int threads)
        : HostPair(sliceOf(geometry, grid), FilterOptions{}, options, threads), m_cone(geometry), m_grid(grid) {
        traceRays();
    }

    std::string name() const override { return "cpu-reference fan-beam joseph, matched"; }

    /// FDK of each slice's data (it refuses a scan short of 180 degrees + the fan).
    void filteredBackprojection(const BatchVector& b, BatchVector& x) override {
        requireSpace(b, Space::Sinogram, "FBP: data");
        requireSpace(x, Space::Image, "FBP: image");
        requireSameCount(b, x, "FBP");
        std::vector<float> data(sliceValues(Space::Sinogram) * b.count());
        download(b, data);
        std::vector<float> images;
        const std::size_t perSlice = sliceValues(Space::Sinogram);
        for (int s = 0; s < b.count(); ++s) {
            const ImageStack slice = reconstructFdk(
                m_cone, std::span<const float>(data).subspan(s * perSlice, perSlice), m_grid, FdkOptions{});
            images.insert(images.end(), slice.data.begin(), slice.data.end());
        }
        upload(images, x);
    }

    void setAxis(double, std::span<const double>) override {
        throw InvalidArgument("fan-beam projector: the rays come from the projection matrices; there is no rotation "
                              "axis to move");
    }

private:
    int lanes(int) const override { return 1; }

    void traceRays() {
        const int W = m_grid.nx, H = m_grid.ny, U = m_cone.columns;
        m_rays.resize(static_cast<std::size_t>(m_cone.viewCount()) * U);
        for (int p = 0; p < m_cone.viewCount(); ++p) {
            const ViewFrame f = describeView(m_cone.views[p], "view " + std::to_string(p));
            // Source in pixel coordinates of the grid.
            const double sx = (f.source[0] - m_grid.centre[0]) / m_grid.voxelSize + (W - 1) / 2.0 - m_grid.shift[0];
            const double sy = (f.source[1] - m_grid.centre[1]) / m_grid.voxelSize + (H - 1) / 2.0 - m_grid.shift[1];
            for (int u = 0; u < U; ++u) {
                const double t = (u - f.centreU) / f.focalU;
                const double dx = f.normal[0] + t * f.axisU[0], dy = f.normal[1] + t * f.axisU[1];
                Ray& r = m_rays[static_cast<std::size_t>(p) * U + u];
                r.alongColumns = std::abs(dx) >= std::abs(dy);
                // Along columns: position y(i) = sy + (i - sx) dy / dx; along rows: x(j) likewise.
                const double a0 = r.alongColumns ? sx : sy, b0 = r.alongColumns ? sy : sx;
                const double da = r.alongColumns ? dx : dy, db = r.alongColumns ? dy : dx;
                const int lines = r.alongColumns ? W : H, across = r.alongColumns ? H : W;
                r.slope = db / da;
                r.start = b0 - a0 * r.slope;
                r.length = std::sqrt(1.0 + r.slope * r.slope);
                // Lines where the crossing lies in (-1, across): the others read only zeros.
                double lo = 0.0, hi = lines;
                if (r.slope != 0.0) {
                    const double l1 = (-1.0 - r.start) / r.slope, l2 = (across - r.start) / r.slope;
                    lo = std::max(lo, std::floor(std::min(l1, l2)));
                    hi = std::min(hi, std::ceil(std::max(l1, l2)) + 1.0);
                } else if (!(r.start > -1.0 && r.start < across)) {
                    hi = 0.0;
                }
                r.first = static_cast<int>(lo);
                r.last = std::max(r.first, static_cast<int>(hi));
            }
        }
    }

    /// f(pixel index, weight) for every sample of ray r: the two pixels around each crossing.
    template <class F>
    void walk(const Ray& r, F&& f) const {
        const int W = m_grid.nx, H = m_grid.ny, across = r.alongColumns ? H : W;
        for (int l = r.first; l < r.last; ++l) {
            const double pos = r.start + l * r.slope;
            const double k0 = std::floor(pos), w = pos - k0;
            const int k = static_cast<int>(k0);
            for (int side = 0; side < 2; ++side) {
                const int kk = k + side;
                if (kk < 0 || kk >= across) continue;
                const std::size_t pixel = r.alongColumns ? static_cast<std::size_t>(kk) * W + l
                                                         : static_cast<std::size_t>(l) * W + kk;
                f(pixel, (side == 0 ? 1.0 - w : w) * r.length);
            }
        }
    }

    void project(const Vector& x, Vector& y) override {
        const int P = m_cone.viewCount(), U = m_cone.columns;
        pool().parallelFor(x.count() * P, [&](int task, int) {
            const int slice = task / P, p = task % P;
            const double* img = x.group(slice);
            double* out = y.group(slice) + static_cast<std::size_t>(p) * U;
            for (int u = 0; u < U; ++u) {
                double sum = 0.0;
                walk(m_rays[static_cast<std::size_t>(p) * U + u], [&](std::size_t i, double w) { sum += w * img[i]; });
                out[u] = sum;
            }
        });
    }

    void backProject(const Vector& y, Vector& x, bool) override {
        const int P = m_cone.viewCount(), U = m_cone.columns;
        const std::size_t pixels = x.elements;
        const int blocks = std::min(kBackBlocks, P);
        for (int slice = 0; slice < x.count(); ++slice) {
            std::vector<double> partial(static_cast<std::size_t>(blocks) * pixels, 0.0);
            const double* sino = y.group(slice);
            pool().parallelFor(blocks, [&](int block, int) {
                double* img = partial.data() + static_cast<std::size_t>(block) * pixels;
                for (int p = block * P / blocks; p < (block + 1) * P / blocks; ++p)
                    for (int u = 0; u < U; ++u) {
                        const double v = sino[static_cast<std::size_t>(p) * U + u];
                        walk(m_rays[static_cast<std::size_t>(p) * U + u], [&](std::size_t i, double w) { img[i] += w * v; });
                    }
            });
            double* out = x.group(slice);
            for (int block = 0; block < blocks; ++block)
                for (std::size_t i = 0; i < pixels; ++i) out[i] += partial[static_cast<std::size_t>(block) * pixels + i];
        }
    }

    ConeGeometry m_cone;
    VolumeGrid m_grid;
    std::vector<Ray> m_rays; ///< [view][column]
};

} // namespace

std::unique_ptr<ProjectorPair> makeFanProjector(const ConeGeometry& geometry, const VolumeGrid& grid,
                                                const IterativeOptions& options, int threads) {
    geometry.validate();
    grid.validate();
    if (geometry.rows != 1)
        throw InvalidArgument("fan-beam projector: the detector has " + std::to_string(geometry.rows) +
                              " rows (expected 1: a fan beam)");
    if (grid.nz != 1)
        throw InvalidArgument("fan-beam projector: the volume has " + std::to_string(grid.nz) +
                              " slices (expected 1: a fan beam)");
    if (!options.matched)
        throw InvalidArgument("fan-beam projector: only the matched back-projector (the transpose) is offered");
    requireVolumeBeforeSources(geometry.views, grid);
    for (int p = 0; p < geometry.viewCount(); ++p) {
        // The rays must lie in the slice's plane: source and detector row at the grid's height.
        const ViewFrame f = describeView(geometry.views[p], "view " + std::to_string(p));
        const double scale = std::max(1.0, std::hypot(f.source[0], f.source[1]));
        if (std::abs(f.source[2] - grid.middle()[2]) > 1e-6 * scale || std::abs(f.normal[2]) > 1e-9 ||
            std::abs(f.axisU[2]) > 1e-9)
            throw InvalidArgument("fan-beam projector: view " + std::to_string(p) +
                                  " does not lie in the slice's plane (expected a circular fan beam about z)");
    }
    return std::make_unique<FanPair>(geometry, grid, options, threads);
}

} // namespace tomo
