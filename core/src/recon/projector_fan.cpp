// The divergent-beam projector pair of the CPU (makeFanProjector,
// makeConeProjector, projector.h): Joseph's ray-driven projector along the
// rays of the projection matrices (recon/divergent_ray.h, the same samples
// as the CUDA pair's), and its exact transpose, in double; the vector
// arithmetic, SIRT's weights and the TV steps are the host pairs'
// (projector_host.h). A fan beam is the cone beam of one detector row and
// one slice. back() walks the same rays as forward() and scatters the same
// weights: the transpose to rounding, in a fixed order (blocks of views,
// summed block by block) so the result does not depend on the threads.
#include "recon/divergent_setup.h"
#include "recon/projector_host.h"

#include "tomo/error.h"
#include "tomo/fdk.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace tomo {

namespace {

/// Views per block of the back-projection (each block sums into its own
/// volume), and the most memory those volumes may take.
constexpr int kBackBlocks = 16;
constexpr std::size_t kBackBlocksBytes = std::size_t{1} << 29;

std::atomic<ConeGpuProjector> g_gpuProjector{nullptr};

class DivergentPair final : public cpu::HostPair<double> {
public:
    DivergentPair(const ConeGeometry& geometry, const VolumeGrid& grid, const IterativeOptions& options, int threads)
        : HostPair(divergentSliceGeometry(geometry, grid), FilterOptions{}, options, threads, grid.nz), m_cone(geometry),
          m_grid(grid), m_volume(divergentVolume(geometry, grid)) {
        traceRays();
    }

    std::string name() const override {
        return "cpu-reference " + divergentPairKind(m_cone) + ", matched";
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

    void setAxis(double, std::span<const double>) override { refuseDivergentAxis(m_cone); }

private:
    int lanes(int) const override { return 1; }

    void traceRays() {
        const std::vector<divergent::View> views = divergentViews(m_cone, m_grid);
        const int U = m_cone.columns, V = m_cone.rows;
        m_rays.resize(views.size() * V * U);
        for (std::size_t p = 0; p < views.size(); ++p)
            for (int v = 0; v < V; ++v)
                for (int u = 0; u < U; ++u) m_rays[(p * V + v) * U + u] = divergent::trace(views[p], u, v, m_volume);
    }

    template <class F>
    void walk(const divergent::Ray& r, F&& f) const {
        if (m_volume.fan)
            divergent::walkFan(r, m_volume, f);
        else
            divergent::walk(r, m_volume, f);
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
    divergent::Volume m_volume;
    std::vector<divergent::Ray> m_rays; ///< [view][row][column]
};

} // namespace

std::vector<divergent::View> divergentViews(const ConeGeometry& geometry, const VolumeGrid& grid) {
    const double half[3] = {(grid.nx - 1) / 2.0, (grid.ny - 1) / 2.0, (grid.nz - 1) / 2.0};
    std::vector<divergent::View> views;
    for (int p = 0; p < geometry.viewCount(); ++p) {
        const ViewFrame f = describeView(geometry.views[p], "view " + std::to_string(p));
        divergent::View v{};
        for (int a = 0; a < 3; ++a) {
            v.source[a] = (f.source[a] - grid.centre[a]) / grid.voxelSize + half[a] - grid.shift[a];
            v.normal[a] = f.normal[a];
            v.axisU[a] = f.axisU[a];
            v.axisV[a] = f.axisV[a];
        }
        v.centreU = f.centreU;
        v.centreV = f.centreV;
        v.focalU = f.focalU;
        v.focalV = f.focalV;
        views.push_back(v);
    }
    return views;
}

divergent::Volume divergentVolume(const ConeGeometry& geometry, const VolumeGrid& grid) {
    // makeFanProjector checked that the rays of a one-row detector lie in the one slice's plane.
    return {grid.nx, grid.ny, grid.nz, geometry.rows == 1 && grid.nz == 1};
}

ReconGeometry divergentSliceGeometry(const ConeGeometry& geometry, const VolumeGrid& grid) {
    ReconGeometry r;
    for (const ProjectionMatrix& m : geometry.views) {
        const ViewFrame f = describeView(m, "a view");
        r.geometry.angles.push_back(std::atan2(f.source[0], f.source[1]));
    }
    r.geometry.bins = geometry.columns * geometry.rows;
    r.geometry.axis = (r.geometry.bins - 1) / 2.0;
    r.sliceWidth = grid.nx;
    r.sliceHeight = grid.ny * grid.nz;
    return r;
}

std::string divergentPairKind(const ConeGeometry& geometry) {
    return geometry.rows == 1 ? "fan-beam joseph" : "cone-beam joseph";
}

void refuseDivergentAxis(const ConeGeometry& geometry) {
    throw InvalidArgument(std::string(geometry.rows == 1 ? "fan" : "cone") +
                          "-beam projector: the rays come from the projection matrices; there is no rotation axis "
                          "to move");
}

void setConeGpuProjector(ConeGpuProjector projector) { g_gpuProjector.store(projector); }

namespace {

std::unique_ptr<ProjectorPair> makeDivergentPair(const ConeGeometry& geometry, const VolumeGrid& grid,
                                                 const IterativeOptions& options, int threads,
                                                 std::optional<int> gpu) {
    if (!gpu) return std::make_unique<DivergentPair>(geometry, grid, options, threads);
    const ConeGpuProjector make = g_gpuProjector.load();
    if (!make)
        throw DeviceError("the GPU " + divergentPairKind(geometry) +
                          " projector pair needs a build with CUDA (this one has none; use the cpu pair)");
    return make(geometry, grid, options, *gpu);
}

} // namespace

std::unique_ptr<ProjectorPair> makeFanProjector(const ConeGeometry& geometry, const VolumeGrid& grid,
                                                const IterativeOptions& options, int threads, std::optional<int> gpu) {
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
    return makeDivergentPair(geometry, grid, options, threads, gpu);
}

std::unique_ptr<ProjectorPair> makeConeProjector(const ConeGeometry& geometry, const VolumeGrid& grid,
                                                 const IterativeOptions& options, int threads, std::optional<int> gpu) {
    geometry.validate();
    grid.validate();
    if (geometry.rows == 1) return makeFanProjector(geometry, grid, options, threads, gpu);
    if (!options.matched)
        throw InvalidArgument("cone-beam projector: only the matched back-projector (the transpose) is offered");
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
    return makeDivergentPair(geometry, grid, options, threads, gpu);
}

} // namespace tomo
