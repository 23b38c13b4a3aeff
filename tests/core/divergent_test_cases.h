// The fan- and cone-beam geometries and grids of the divergent-beam pairs'
// tests, shared by the CPU (test_projector_fan.cpp) and the GPU
// (tests/cuda/test_cuda_divergent_projector.cpp).
#pragma once

#include "cone_test_scan.h"

#include "tomo/cone_geometry.h"
#include "tomo/geometry.h"

#include <array>

namespace tomo::divergenttest {

/// A flat-detector fan: `views` over `range`, 80 columns of 1.2 at the
/// detector (0.8 at the axis: source-axis 200, source-detector 300), the
/// central ray `offset` columns off the detector centre.
inline ConeGeometry fan(int views, double range, double offset = 0.0) {
    CircularConeGeometry c;
    c.angles = uniformAngles(views, range);
    c.sourceAxis = 200.0;
    c.sourceDetector = 300.0;
    c.columns = 80;
    c.pixelWidth = 1.2;
    c.offsetU = offset;
    return ConeGeometry::circular(c);
}

inline VolumeGrid box(int nx, int ny, int nz, double voxel, std::array<double, 3> centre = {}) {
    VolumeGrid g;
    g.nx = nx;
    g.ny = ny;
    g.nz = nz;
    g.voxelSize = voxel;
    g.centre = centre;
    return g;
}

inline VolumeGrid slice(int nx, int ny, double voxel, double cx = 0.0, double cy = 0.0) {
    return box(nx, ny, 1, voxel, {cx, cy, 0.0});
}

/// A circular cone beam: `views` over 360 degrees, 48 x 40 pixels of 1.5 at
/// the detector (magnification 2: source-axis 150, source-detector 300),
/// the central ray `offsetU`, `offsetV` pixels off the detector centre.
inline ConeGeometry cone(int views, double offsetU = 0.0, double offsetV = 0.0) {
    CircularConeGeometry c = test::circularCone(views, 48, 40, 1.5, 150.0, 300.0);
    c.offsetU = offsetU;
    c.offsetV = offsetV;
    return ConeGeometry::circular(c);
}

} // namespace tomo::divergenttest
