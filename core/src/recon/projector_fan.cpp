// The divergent-beam projector pairs (makeFanProjector, makeConeProjector,
// projector.h): Joseph's ray-driven projector along the rays of the
// projection matrices, and its exact transpose, in double on the CPU; the
// vector arithmetic, SIRT's weights and the TV steps are the host pairs'
// (projector_host.h). A fan beam is the cone beam of one detector row and
// one slice.
//
// In voxel coordinates of the grid (voxel (i, j, k) centred at (i, j, k)),
// the ray of pixel (u, v) of view p runs from the source S along
//     d = m3 + (u - centreU) / focalU * axisU + (v - centreV) / focalV * axisV
// (describeView). Where |d_x| >= |d_y| it is stepped column by column: at
// column i it crosses (y, z) = S + (i - S_x) (d_y, d_z) / d_x and takes the
// volume bilinearly interpolated between the four voxels around that
// crossing (for a fan beam the two pixels: z = 0 exactly); else row by row.
// Each sample counts the path per column (or row), sqrt(1 + slope_y^2 +
// slope_z^2) voxels, so the image holds mu times the voxel size (FDK's
// scaling) when the data are line integrals. back() walks the same rays and
// scatters the same weights: the transpose to rounding, in a fixed order
// (blocks of views, summed block by block) so the result does not depend on
// the threads. A volume is one "slice" of the host pair: nx x (ny nz)
// values, [z][y][x]; sinograms views x (rows columns), [view][row][column].
#include "recon/projector_host.h"

#include "tomo/error.h"
#include "tomo/fdk.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tomo {

namespace {

/// Views per block of the back-projection (each block sums into its own
/// volume), and the most memory those volumes may take.
constexpr int kBackBlocks = 16;
constexpr std::size_t kBackBlocksBytes = std::size_t{1} << 29;

/// One ray in voxel coordinates: along its dominant axis, line l (a column
/// when `alongColumns`, else a row) is crossed at start + l * slope on the
/// other axis of the plane and at startZ + l * slopeZ in z; lines [first,
/// last) can touch the grid.
struct Ray {
    bool alongColumns = true;
    double start = 0.0;
    double slope = 0.0;
    double startZ = 0.0;
    double slopeZ = 0.0;
    double length = 0.0; ///< path per line, voxels
    int first = 0;
    int last = 0;
};

/// Narrows [lo, hi) to the lines l where start + l slope lies in (-1, size).
void narrowLines(double start, double slope, int size, double& lo, double& hi) {
    if (slope != 0.0) {
        const double l1 = (-1.0 - start) / slope, l2 = (size - start) / slope;
        lo = std::max(lo, std::floor(std::min(l1, l2)));
        hi = std::min(hi, std::ceil(std::max(l1, l2)) + 1.0);
    } else if (!(start > -1.0 && start < size)) {
        hi = lo;
    }
}

Geometry baseGeometry(const ConeGeometry& g) {
    // The host pair sizes its sinograms by views x columns; the angles
    // (the sources' directions from the axis) only name the views.
    Geometry out;
    for (const ProjectionMatrix& m : g.views) {
        const ViewFrame f = describeView(m, "a view");
        out.angles.push_back(std::atan2(f.source[0], f.source[1]));
    }
    out.bins = g.columns * g.rows;
    out.axis = (out.bins - 1) / 2.0;
    return out;
}

ReconGeometry sliceOf(const ConeGeometry& g, const VolumeGrid& grid) {
    ReconGeometry r;
    r.geometry = baseGeometry(g);
    r.sliceWidth = grid.nx;
    r.sliceHeight = grid.ny * grid.nz;
    return r;
}

class DivergentPair final : public cpu::HostPair<double> {
public:
    DivergentPair(const ConeGeometry& geometry, const VolumeGrid& grid, const IterativeOptions& options, int threads)
        : HostPair(sliceOf(geometry, grid), FilterOptions{}, options, threads), m_cone(geometry), m_grid(grid) {
        traceRays();
    }

    std::string name() const override {
        return m_cone.rows == 1 ? "cpu-reference fan-beam joseph, matched" : "cpu-reference cone-beam joseph, matched";
    }

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
        throw InvalidArgument(std::string(m_cone.rows == 1 ? "fan" : "cone") +
                              "-beam projector: the rays come from the projection matrices; there is no rotation axis "
                              "to move");
    }

private:
    int lanes(int) const override { return 1; }

    void traceRays() {
        const int W = m_grid.nx, H = m_grid.ny, D = m_grid.nz, U = m_cone.columns, V = m_cone.rows;
        const bool fan = V == 1 && D == 1; // the rays lie in the slice's plane (makeFanProjector checked)
        m_rays.resize(static_cast<std::size_t>(m_cone.viewCount()) * V * U);
        for (int p = 0; p < m_cone.viewCount(); ++p) {
            const ViewFrame f = describeView(m_cone.views[p], "view " + std::to_string(p));
            // Source in voxel coordinates of the grid.
            const double sx = (f.source[0] - m_grid.centre[0]) / m_grid.voxelSize + (W - 1) / 2.0 - m_grid.shift[0];
            const double sy = (f.source[1] - m_grid.centre[1]) / m_grid.voxelSize + (H - 1) / 2.0 - m_grid.shift[1];
            const double sz = (f.source[2] - m_grid.centre[2]) / m_grid.voxelSize + (D - 1) / 2.0 - m_grid.shift[2];
            for (int v = 0; v < V; ++v)
                for (int u = 0; u < U; ++u) {
                    const double tu = (u - f.centreU) / f.focalU, tv = fan ? 0.0 : (v - f.centreV) / f.focalV;
                    double d[3];
                    for (int a = 0; a < 3; ++a) d[a] = f.normal[a] + tu * f.axisU[a] + tv * f.axisV[a];
                    Ray& r = m_rays[(static_cast<std::size_t>(p) * V + v) * U + u];
                    r.alongColumns = std::abs(d[0]) >= std::abs(d[1]);
                    // Along columns: y(i) = sy + (i - sx) dy / dx, z(i) likewise; along rows: x(j), z(j).
                    const double a0 = r.alongColumns ? sx : sy, b0 = r.alongColumns ? sy : sx;
                    const double da = r.alongColumns ? d[0] : d[1], db = r.alongColumns ? d[1] : d[0];
                    const int lines = r.alongColumns ? W : H, across = r.alongColumns ? H : W;
                    r.slope = db / da;
                    r.start = b0 - a0 * r.slope;
                    if (!fan) {
                        r.slopeZ = d[2] / da;
                        r.startZ = sz - a0 * r.slopeZ;
                    }
                    r.length = std::sqrt(1.0 + r.slope * r.slope + r.slopeZ * r.slopeZ);
                    // Lines where the crossing lies inside (-1, across) x (-1, D): the others read only zeros.
                    double lo = 0.0, hi = lines;
                    narrowLines(r.start, r.slope, across, lo, hi);
                    narrowLines(r.startZ, r.slopeZ, D, lo, hi);
                    r.first = static_cast<int>(lo);
                    r.last = std::max(r.first, static_cast<int>(hi));
                }
        }
    }

    /// f(voxel index, weight) for every sample of ray r: the four voxels
    /// around each crossing (two for a fan beam: its z is 0).
    template <class F>
    void walk(const Ray& r, F&& f) const {
        const int W = m_grid.nx, H = m_grid.ny, D = m_grid.nz, across = r.alongColumns ? H : W;
        for (int l = r.first; l < r.last; ++l) {
            const double pos = r.start + l * r.slope, posZ = r.startZ + l * r.slopeZ;
            const double k0 = std::floor(pos), w = pos - k0;
            const double z0 = std::floor(posZ), wz = posZ - z0;
            const int k = static_cast<int>(k0), kz = static_cast<int>(z0);
            for (int up = 0; up < 2; ++up) {
                const int zz = kz + up;
                if (zz < 0 || zz >= D) continue;
                const double along = (up == 0 ? 1.0 - wz : wz) * r.length;
                for (int side = 0; side < 2; ++side) {
                    const int kk = k + side;
                    if (kk < 0 || kk >= across) continue;
                    const std::size_t row = static_cast<std::size_t>(zz) * H;
                    const std::size_t voxel = r.alongColumns ? (row + kk) * W + l : (row + l) * W + kk;
                    f(voxel, (side == 0 ? 1.0 - w : w) * along);
                }
            }
        }
    }

    void project(const Vector& x, Vector& y) override {
        const int P = m_cone.viewCount(), U = m_cone.columns * m_cone.rows; // rays per view
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
        const int P = m_cone.viewCount(), U = m_cone.columns * m_cone.rows; // rays per view
        const std::size_t pixels = x.elements;
        const auto fit = static_cast<int>(std::max<std::size_t>(1, kBackBlocksBytes / (pixels * sizeof(double))));
        const int blocks = std::min({kBackBlocks, P, fit});
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
    std::vector<Ray> m_rays; ///< [view][row][column]
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
    return std::make_unique<DivergentPair>(geometry, grid, options, threads);
}

std::unique_ptr<ProjectorPair> makeConeProjector(const ConeGeometry& geometry, const VolumeGrid& grid,
                                                 const IterativeOptions& options, int threads) {
    geometry.validate();
    grid.validate();
    if (geometry.rows == 1) return makeFanProjector(geometry, grid, options, threads);
    if (!options.matched)
        throw InvalidArgument("cone-beam projector: only the matched back-projector (the transpose) is offered");
    if (options.method == Method::Tv && grid.nz > 1)
        throw InvalidArgument("method tv on cone-beam data is not built: the pairs' total variation is that of one "
                              "slice (sirt and cgls run on the cone-beam pair)");
    requireVolumeBeforeSources(geometry.views, grid);
    for (int p = 0; p < geometry.viewCount(); ++p) {
        // Joseph's stepping walks x or y: a ray steeper in z than in both (a cone over 45 degrees) is not walked.
        const ViewFrame f = describeView(geometry.views[p], "view " + std::to_string(p));
        for (const double tv : {-f.centreV / f.focalV, (geometry.rows - 1 - f.centreV) / f.focalV})
            for (const double tu : {-f.centreU / f.focalU, (geometry.columns - 1 - f.centreU) / f.focalU}) {
                double d[3];
                for (int a = 0; a < 3; ++a) d[a] = f.normal[a] + tu * f.axisU[a] + tv * f.axisV[a];
                if (std::abs(d[2]) > std::max(std::abs(d[0]), std::abs(d[1])))
                    throw InvalidArgument("cone-beam projector: view " + std::to_string(p) +
                                          " has rays steeper along z than across it (a cone over 45 degrees)");
            }
    }
    return std::make_unique<DivergentPair>(geometry, grid, options, threads);
}

} // namespace tomo
