// One ray of the divergent-beam projector pairs (makeFanProjector,
// makeConeProjector in tomo/projector.h): the CPU pair (projector_fan.cpp)
// and the CUDA pair (kernels/cuda/divergent_projector_kernels.cu) compile
// the same functions, so a sample is the same on both (in double).
//
// In voxel coordinates of the grid (voxel (i, j, k) centred at (i, j, k)),
// the ray of pixel (u, v) of a view runs from the source S along
//     d = normal + (u - centreU) / focalU axisU + (v - centreV) / focalV axisV
// (describeView). Where |d_x| >= |d_y| it is stepped column by column: at
// column i it crosses (y, z) = S + (i - S_x) (d_y, d_z) / d_x and takes the
// volume bilinearly interpolated between the four voxels around that
// crossing (two for a fan beam: its z is 0 exactly); else row by row. Each
// sample counts the path per column (or row), sqrt(1 + slope^2 + slopeZ^2)
// voxels, so the image holds mu times the voxel size (FDK's scaling) when
// the data are line integrals.
#pragma once

#include "recon/host_device.h"

#include <math.h>
#include <stddef.h>

namespace tomo::divergent {

/// One view in voxel coordinates of the grid (the source) and the
/// detector's frame (describeView's unit vectors, pixels).
struct View {
    double source[3];
    double normal[3];
    double axisU[3];
    double axisV[3];
    double centreU, centreV, focalU, focalV;
};

/// The grid's voxels; `fan`: one detector row and one slice, the rays lie
/// in the slice's plane (z = 0 on every ray).
struct Volume {
    int nx = 0, ny = 0, nz = 0;
    bool fan = false;
};

/// Along its dominant axis, line l (a column when `alongColumns`, else a
/// row) is crossed at start + l slope on the other axis of the plane and at
/// startZ + l slopeZ in z; lines [first, last) can touch the grid.
struct Ray {
    bool alongColumns;
    double start, slope, startZ, slopeZ;
    double length; ///< path per line, voxels
    int first, last;
};

/// Narrows [lo, hi) to the lines l where start + l slope lies in (-1, size).
TOMO_HD void narrowLines(double start, double slope, int size, double& lo, double& hi) {
    if (slope != 0.0) {
        const double l1 = (-1.0 - start) / slope, l2 = (size - start) / slope;
        lo = fmax(lo, floor(fmin(l1, l2)));
        hi = fmin(hi, ceil(fmax(l1, l2)) + 1.0);
    } else if (!(start > -1.0 && start < size)) {
        hi = lo;
    }
}

/// The ray of detector pixel (u, v) of view f.
TOMO_HD Ray trace(const View& f, int u, int v, const Volume& g) {
    const double tu = (u - f.centreU) / f.focalU, tv = g.fan ? 0.0 : (v - f.centreV) / f.focalV;
    double d[3];
    for (int a = 0; a < 3; ++a) d[a] = f.normal[a] + tu * f.axisU[a] + tv * f.axisV[a];
    Ray r;
    r.alongColumns = fabs(d[0]) >= fabs(d[1]);
    // Along columns: y(i) = sy + (i - sx) dy / dx, z(i) likewise; along rows: x(j), z(j).
    const double a0 = r.alongColumns ? f.source[0] : f.source[1], b0 = r.alongColumns ? f.source[1] : f.source[0];
    const double da = r.alongColumns ? d[0] : d[1], db = r.alongColumns ? d[1] : d[0];
    const int lines = r.alongColumns ? g.nx : g.ny, across = r.alongColumns ? g.ny : g.nx;
    r.slope = db / da;
    r.start = b0 - a0 * r.slope;
    r.slopeZ = g.fan ? 0.0 : d[2] / da;
    r.startZ = g.fan ? 0.0 : f.source[2] - a0 * r.slopeZ;
    r.length = sqrt(1.0 + r.slope * r.slope + r.slopeZ * r.slopeZ);
    // Lines where the crossing lies inside (-1, across) x (-1, nz): the others read only zeros.
    double lo = 0.0, hi = lines;
    narrowLines(r.start, r.slope, across, lo, hi);
    narrowLines(r.startZ, r.slopeZ, g.nz, lo, hi);
    r.first = static_cast<int>(lo);
    r.last = hi > lo ? static_cast<int>(hi) : r.first;
    return r;
}

/// f(voxel index, weight) for every sample of ray r: the four voxels around
/// each crossing ([z][y][x] indices; two for a fan beam).
template <class F>
TOMO_HD void walk(const Ray& r, const Volume& g, F&& f) {
    const int across = r.alongColumns ? g.ny : g.nx;
    for (int l = r.first; l < r.last; ++l) {
        const double pos = r.start + l * r.slope, posZ = r.startZ + l * r.slopeZ;
        const double k0 = floor(pos), w = pos - k0;
        const double z0 = floor(posZ), wz = posZ - z0;
        const int k = static_cast<int>(k0), kz = static_cast<int>(z0);
        for (int up = 0; up < 2; ++up) {
            const int zz = kz + up;
            if (zz < 0 || zz >= g.nz) continue;
            const double along = (up == 0 ? 1.0 - wz : wz) * r.length;
            for (int side = 0; side < 2; ++side) {
                const int kk = k + side;
                if (kk < 0 || kk >= across) continue;
                const size_t row = static_cast<size_t>(zz) * g.ny;
                const size_t voxel = r.alongColumns ? (row + kk) * g.nx + l : (row + l) * g.nx + kk;
                f(voxel, (side == 0 ? 1.0 - w : w) * along);
            }
        }
    }
}

/// walk() for a fan beam (g.fan: z = 0 on every ray, one slice): the same
/// samples with the same weights in the same order (z's weight 1 - 0 and its
/// second voxel, beyond the slice, dropped), without the branches of z.
template <class F>
TOMO_HD void walkFan(const Ray& r, const Volume& g, F&& f) {
    const int across = r.alongColumns ? g.ny : g.nx;
    const size_t lineStep = r.alongColumns ? 1 : static_cast<size_t>(g.nx);
    const size_t acrossStep = r.alongColumns ? static_cast<size_t>(g.nx) : 1;
    for (int l = r.first; l < r.last; ++l) {
        const double pos = r.start + l * r.slope;
        const double k0 = floor(pos), w = pos - k0;
        const int k = static_cast<int>(k0);
        const size_t line = static_cast<size_t>(l) * lineStep;
        if (k >= 0 && k < across) f(line + static_cast<size_t>(k) * acrossStep, (1.0 - w) * r.length);
        if (k + 1 >= 0 && k + 1 < across) f(line + static_cast<size_t>(k + 1) * acrossStep, w * r.length);
    }
}

} // namespace tomo::divergent
