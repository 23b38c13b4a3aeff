// What the divergent-beam pairs of the CPU (projector_fan.cpp) and the GPU
// (kernels/cuda/divergent_projector.cpp) take from a ConeGeometry and a
// VolumeGrid: the views in voxel coordinates (recon/divergent_ray.h) and
// the parallel-beam shape their vectors borrow (a volume is one "slice" of
// nx x (ny nz) values, [z][y][x]; its sinogram views x (rows columns),
// [view][row][column]).
#pragma once

#include "recon/divergent_ray.h"

#include "tomo/cone_geometry.h"
#include "tomo/geometry.h"

#include <string>
#include <vector>

namespace tomo {

std::vector<divergent::View> divergentViews(const ConeGeometry& geometry, const VolumeGrid& grid);
divergent::Volume divergentVolume(const ConeGeometry& geometry, const VolumeGrid& grid);
/// Views x (rows columns) "bins", an nx x (ny nz) "slice"; the angles (the
/// sources' directions from the axis) only name the views.
ReconGeometry divergentSliceGeometry(const ConeGeometry& geometry, const VolumeGrid& grid);
/// "fan-beam joseph" or "cone-beam joseph".
std::string divergentPairKind(const ConeGeometry& geometry);
/// The pairs' setAxis(): throws InvalidArgument (the rays come from the matrices).
[[noreturn]] void refuseDivergentAxis(const ConeGeometry& geometry);

} // namespace tomo
