// Launchers of the divergent-beam pair's kernels (divergent_projector_kernels.cu):
// Joseph's projector along the rays of recon/divergent_ray.h, one thread
// per ray (the detector's columns of a row on neighbouring threads), and
// its transpose as atomic additions of the same samples into the volume.
// Plain C++: no CUDA type; d_ = device pointer. One lane: a vector is one
// volume [z][y][x], its sinogram [view][row][column].
#pragma once

#include "kernel_launch.h"
#include "recon/divergent_ray.h"

#include <cstddef>

namespace tomo::cuda {

struct DivergentRays {
    const divergent::View* d_views = nullptr; ///< one per view
    int views = 0;
    int columns = 0; ///< detector
    int rows = 0;
    divergent::Volume volume;
};

/// Blocks of launchDivergentForward (its partial sums).
int divergentForwardBlocks();
/// d_out = A x, or with d_data SIRT's first half: d_out = W (b - A x), W =
/// d_rowWeights (or 1 when null), and each block's sum of (b - A x)^2 into
/// d_partial[divergentForwardBlocks()].
void launchDivergentForward(const DivergentRays& rays, const float* d_image, float* d_out, const float* d_data,
                            const float* d_rowWeights, double* d_partial, StreamHandle stream);
/// d_image += A^T y (atomic additions: the order of the sums varies).
void launchDivergentBack(const DivergentRays& rays, const float* d_sinogram, float* d_image, StreamHandle stream);
/// x = clamp(x + step V d_back), V = d_columnWeights (or 1 when null).
void launchDivergentStep(const float* d_back, std::size_t voxels, float step, const float* d_columnWeights,
                         float lower, float upper, float* d_image, StreamHandle stream);

} // namespace tomo::cuda
