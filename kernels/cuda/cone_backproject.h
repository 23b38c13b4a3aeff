// Launcher of the cone-beam back-projection (cone_backproject.cu): seed 002's
// voxel-driven loop on the GPU. Views are layers of a float texture (border
// addressing: 0 outside the detector, bilinear in between, as cpu-reference),
// their normalised 3x4 matrices in constant memory; a thread sums 8 voxels
// of one (x, y) column along z, stepping (u w, v w, w) by the matrix's z
// column. Plain C++ header.
#pragma once

#include "kernel_launch.h"

namespace tomo::cuda {

/// Views one launch takes: their matrices fill 48 KiB of constant memory.
inline constexpr int kConeMaxViews = 1024;

struct ConeLaunch {
    TextureHandle texture = 0; ///< layered float texture, one layer per view of the batch
    int views = 0;             ///< layers (<= kConeMaxViews); matrices uploaded with uploadConeMatrices
    int nx = 0, ny = 0, nz = 0; ///< voxels of this slab
    float x0 = 0, y0 = 0, z0 = 0; ///< centre of voxel (0, 0, 0) of the slab
    float voxelSize = 0;
    float scale = 1;
    bool accumulate = false;   ///< add to d_volume (a later batch of views)
    float* d_volume = nullptr; ///< [k][j][i] of the slab
};

/// Copies `views` row-major 3x4 float matrices to constant memory on
/// `stream` and waits for them (no kernel may be running with the old ones).
void uploadConeMatrices(const float* h_matrices, int views, StreamHandle stream);

void launchConeBackproject(const ConeLaunch& launch, StreamHandle stream);

/// FDK's weighting before the ramp filter (tomo::FdkWeights), in place:
/// pixel (r, c) of view p times columnWeights[p][c] / sqrt(1 + tu^2 + tv^2),
/// tu = (c - centreU) / focalU, tv = (r - centreV) / focalV.
struct ConeWeightLaunch {
    float* d_views = nullptr;                ///< [view][row][column]
    int views = 0, rows = 0, columns = 0;
    const float* d_frames = nullptr;         ///< per view: centreU, centreV, 1 / focalU, 1 / focalV
    const float* d_columnWeights = nullptr;  ///< [view][column], or null (all 1)
};
void launchConeWeight(const ConeWeightLaunch& launch, StreamHandle stream);

} // namespace tomo::cuda
