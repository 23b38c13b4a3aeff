// The ellipsoid phantom in cone/fan-beam world coordinates: exact
// divergent-ray line integrals (ray-ellipsoid intersection) and the true
// volume.
#include "tomo/phantom.h"

#include "tomo/error.h"
#include "tomo/worker_pool.h"

#include "recon/cpu_plan.h"

#include <cmath>
#include <functional>
#include <string>

namespace tomo {

namespace {

using Vec3 = std::array<double, 3>;

/// A point or direction in the ellipsoid's own frame, where it is the unit
/// ball (or, for c == 0, the unit cylinder along z: z dropped).
Vec3 toUnitFrame(const Ellipsoid& e, const Vec3& phantomVector, bool isPoint) {
    const double dx = phantomVector[0] - (isPoint ? e.x0 : 0.0);
    const double dy = phantomVector[1] - (isPoint ? e.y0 : 0.0);
    const double dz = phantomVector[2] - (isPoint ? e.z0 : 0.0);
    const double c = std::cos(e.phi), s = std::sin(e.phi);
    return {(dx * c + dy * s) / e.a, (-dx * s + dy * c) / e.b, e.c == 0.0 ? 0.0 : dz / e.c};
}

void checkPhantom(const ConePhantom& ph) {
    if (!(ph.radius > 0.0) || !std::isfinite(ph.radius))
        throw InvalidArgument("cone phantom: radius must be a finite value > 0");
    if (!std::isfinite(ph.attenuation)) throw InvalidArgument("cone phantom: attenuation must be finite");
}

/// Phantom point of a world vector (ConePhantom's placement).
Vec3 toPhantom(const ConePhantom& phantom, const Vec3& world) {
    const double R = phantom.radius;
    return {world[0] / R, -world[1] / R, world[2] / R};
}

/// One view's rays: from `source` along direction(u, v) (world, any length)
/// through detector position (u, v), pixel centres at whole numbers.
struct ViewRays {
    Vec3 source;
    std::function<Vec3(double u, double v)> direction;
};

/// Sum over the ellipsoids of density x chord along the line from
/// `starts` (the source in each ellipsoid's unit frame) along world `direction`.
double lineIntegral(const ConePhantom& phantom, const std::vector<Vec3>& starts, const Vec3& direction) {
    const double length = std::sqrt(direction[0] * direction[0] + direction[1] * direction[1] + direction[2] * direction[2]);
    const Vec3 dp = toPhantom(phantom, direction);
    double sum = 0.0;
    for (std::size_t n = 0; n < phantom.shapes.size(); ++n) {
        const Ellipsoid& e = phantom.shapes[n];
        const Vec3 q = starts[n], k = toUnitFrame(e, dp, false);
        // |q + t k|^2 = 1: the chord is 2 sqrt(B^2 - A C) / A in t.
        const double A = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        const double B = q[0] * k[0] + q[1] * k[1] + q[2] * k[2];
        const double C = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] - 1.0;
        const double disc = B * B - A * C;
        if (A > 0.0 && disc > 0.0) sum += e.density * 2.0 * std::sqrt(disc) / A * length;
    }
    return sum;
}

/// [view][row][column] line integrals, each pixel the mean of
/// subsamples x subsamples rays spread over its area.
ImageStack projectViews(const ConePhantom& phantom, int cols, int rows, int views, int subsamples,
                        const std::function<ViewRays(int view)>& raysOf) {
    checkPhantom(phantom);
    if (subsamples < 1) throw InvalidArgument("phantom: subsamples is " + std::to_string(subsamples) + " (expected >= 1)");
    ImageStack out(cols, rows, views);
    WorkerPool pool(cpu::resolveThreads(0));
    pool.parallelFor(views, [&](int p, int) {
        const ViewRays rays = raysOf(p);
        std::vector<Vec3> starts;
        for (const Ellipsoid& e : phantom.shapes) starts.push_back(toUnitFrame(e, toPhantom(phantom, rays.source), true));
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) {
                double sum = 0.0;
                for (int sv = 0; sv < subsamples; ++sv)
                    for (int su = 0; su < subsamples; ++su)
                        sum += lineIntegral(phantom, starts,
                                            rays.direction(c + (su + 0.5) / subsamples - 0.5,
                                                           r + (sv + 0.5) / subsamples - 0.5));
                out.data[(static_cast<std::size_t>(p) * rows + r) * cols + c] =
                    static_cast<float>(sum * phantom.attenuation / (subsamples * subsamples));
            }
    });
    return out;
}

} // namespace

ImageStack projectPhantomCone(const ConePhantom& phantom, const ConeGeometry& geometry, int subsamples) {
    geometry.validate();
    return projectViews(phantom, geometry.columns, geometry.rows, geometry.viewCount(), subsamples, [&](int p) {
        const ViewFrame f = describeView(geometry.views[p], "view " + std::to_string(p));
        return ViewRays{f.source, [f](double u, double v) {
                            const double tu = (u - f.centreU) / f.focalU, tv = (v - f.centreV) / f.focalV;
                            Vec3 d{};
                            for (int i = 0; i < 3; ++i) d[i] = f.normal[i] + tu * f.axisU[i] + tv * f.axisV[i];
                            return d;
                        }};
    });
}

ImageStack projectPhantomCone(const ConePhantom& phantom, const CircularConeGeometry& geometry, int subsamples) {
    if (geometry.detector == DetectorShape::Flat)
        return projectPhantomCone(phantom, ConeGeometry::circular(geometry), subsamples);
    geometry.validate();
    const CircularConeGeometry& g = geometry;
    const double centreV = (g.rows - 1) / 2.0 + g.offsetV;
    return projectViews(phantom, g.columns, g.rows, static_cast<int>(g.angles.size()), subsamples, [&](int p) {
        // Source and detector axes of the circular conventions (cone_geometry.h).
        const double s = std::sin(g.angles[p]), c = std::cos(g.angles[p]);
        const Vec3 source{g.sourceAxis * s, g.sourceAxis * c, 0.0};
        return ViewRays{source, [&g, s, c, centreV](double u, double v) {
                            // The pixel on the cylinder of radius D about the source, seen from the source.
                            const double angle = g.columnAngle(u), D = g.sourceDetector;
                            const double across = D * std::sin(angle), along = D * std::cos(angle);
                            return Vec3{across * c - along * s, -across * s - along * c, (v - centreV) * g.rowPitch()};
                        }};
    });
}

ImageStack rasterizePhantomVolume(const ConePhantom& phantom, const VolumeGrid& grid, int subsamples) {
    checkPhantom(phantom);
    grid.validate();
    if (subsamples < 1) throw InvalidArgument("phantom: subsamples is " + std::to_string(subsamples) + " (expected >= 1)");
    ImageStack out(grid.nx, grid.ny, grid.nz);
    const double h = grid.voxelSize;
    WorkerPool pool(cpu::resolveThreads(0));
    pool.parallelFor(grid.nz * grid.ny, [&](int task, int) {
        const int k = task / grid.ny, j = task % grid.ny;
        for (int i = 0; i < grid.nx; ++i) {
            double sum = 0.0;
            for (int sz = 0; sz < subsamples; ++sz)
                for (int sy = 0; sy < subsamples; ++sy)
                    for (int sx = 0; sx < subsamples; ++sx) {
                        const double off[3] = {(sx + 0.5) / subsamples - 0.5, (sy + 0.5) / subsamples - 0.5,
                                               (sz + 0.5) / subsamples - 0.5};
                        const Vec3 p = toPhantom(
                            phantom, {grid.x(i) + off[0] * h, grid.y(j) + off[1] * h, grid.z(k) + off[2] * h});
                        for (const Ellipsoid& e : phantom.shapes) {
                            const Vec3 q = toUnitFrame(e, p, true);
                            if (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] <= 1.0) sum += e.density;
                        }
                    }
            out.data[(static_cast<std::size_t>(k) * grid.ny + j) * grid.nx + i] =
                static_cast<float>(sum / (subsamples * subsamples * subsamples) * phantom.attenuation * h);
        }
    });
    return out;
}

} // namespace tomo
