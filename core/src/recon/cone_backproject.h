// Internal: the two cone-beam back-projectors behind backprojectCone().
// Both compute volume[k][j][i] = scale * sum_p value_p(u, v) / w^2 with
// (u w, v w, w) = P_p (x_i, y_j, z_k, 1), voxels with w <= 0 skipped, value
// bilinear with zeros outside the detector (cone_geometry.h).
#pragma once

#include "tomo/fdk.h"
#include "tomo/worker_pool.h"

#include <span>

namespace tomo::cone {

void backprojectReference(const FilteredProjections& in, const VolumeGrid& grid, double scale,
                          std::span<float> volume, WorkerPool& pool);

/// `clip`: skip the voxels of a line whose projection misses the detector.
void backprojectFast(const FilteredProjections& in, const VolumeGrid& grid, double scale, std::span<float> volume,
                     WorkerPool& pool, bool clip);

} // namespace tomo::cone
