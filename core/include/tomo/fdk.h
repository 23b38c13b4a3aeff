// FDK (Feldkamp-Davis-Kress) reconstruction of cone- and fan-beam scans.
//
//   fdkFilter():       cosine pre-weight, Parker weight (short scans), ramp
//                      filter along detector rows (core's SinogramFilter),
//                      angular weight / pixel size at the isocentre
//   backprojectCone(): sum over views of value(u, v) / w^2 (bilinear
//                      detector interpolation, distance weight 1/w^2 of the
//                      normalised matrices), "cpu-reference" (double),
//                      "cpu" (float, threads, line-wise clipping, SIMD) or
//                      "cuda" (the GPU: layered texture, several voxels per
//                      thread along z; kernels/cuda/cone_backproject.cu)
//
// Scaled like the parallel-beam FBP: the volume holds attenuation per voxel
// (mu times voxelSize) when the projections are line integrals.
#pragma once

#include "tomo/cone_geometry.h"
#include "tomo/filter.h"
#include "tomo/image.h"

#include <array>
#include <span>
#include <string_view>
#include <vector>

namespace tomo {

enum class ConeBackprojector {
    Reference, ///< "cpu-reference": plain loops in double, the oracle
    Fast,      ///< "cpu": float, threads, line-wise clipping, vectorised inner loop
    Cuda,      ///< "cuda": the GPU's texture unit interpolates (8-bit weights)
};
std::string_view coneBackprojectorName(ConeBackprojector b);
/// Throws InvalidArgument listing the names ("cpu", "cpu-reference", "cuda").
ConeBackprojector parseConeBackprojector(std::string_view name);

/// Where the time went, seconds: the back-projection's (the GPU's transfers
/// apart; all of it is `backproject` on the CPU), and, from
/// reconstructFdk, the weighting and ramp filter (on the GPU: its kernels
/// and FFTs; `upload` is then the raw projections').
struct ConeStageTimes {
    double upload = 0.0;
    double backproject = 0.0;
    double download = 0.0;
    double filter = 0.0;
};

struct FdkOptions {
    FilterOptions filter;
    ConeBackprojector backprojector = ConeBackprojector::Fast;
    int threads = 0; ///< 0 = all hardware threads
    int device = 0;  ///< GPU index of the "cuda" back-projector
    /// When set, backprojectCone() writes its stage times here.
    ConeStageTimes* times = nullptr;
    /// Fast back-projector only: skip, per view and voxel line, the voxels
    /// whose projection misses the detector (seed 002 §3.3). Turned off only
    /// to check that clipping changes nothing.
    bool clip = true;
};

/// How the views cover the circle, as FDK weighs them.
struct ScanCoverage {
    double span = 0.0;     ///< radians from the first to the last source position
    double step = 0.0;     ///< median angular step between views
    double fanAngle = 0.0; ///< full fan angle of the detector's columns
    /// Less than a full turn: Parker weights (needs span >= pi + fanAngle).
    bool shortScan = false;
};

/// Projections ready for back-projection: [view][row][column] values and
/// one matrix per view (filtered data of fdkFilter with normalised matrices,
/// or data already filtered elsewhere, e.g. RabbitCT's, with its matrices).
struct FilteredProjections {
    int columns = 0;
    int rows = 0;
    std::vector<ProjectionMatrix> views;
    std::vector<float> data;
    ScanCoverage coverage;
};

/// What FDK multiplies each view by (fdkFilter on the CPU, the GPU's FDK on
/// the device): before the ramp filter, pixel (row r, column c) of view p by
///     columnWeights[p][c] / sqrt(1 + ((c - centreU) / focalU)^2 + ((r - centreV) / focalV)^2)
/// (the cosine of the ray's angle to the central ray, times Parker's weight
/// on a short scan), and the filtered rows of view p by rowWeights[p]
/// (d_beta / the pixel size at the isocentre).
struct FdkWeights {
    int columns = 0;
    int rows = 0;
    std::vector<std::array<double, 4>> frames; ///< per view: centreU, centreV, focalU, focalV
    std::vector<float> columnWeights;          ///< [view][column]; empty on a full turn (all 1)
    std::vector<double> rowWeights;            ///< per view
    std::vector<ProjectionMatrix> normalised;  ///< per view: the back-projection's matrices
    ScanCoverage coverage;
};

/// Throws InvalidArgument as fdkFilter for the geometry.
FdkWeights fdkWeights(const ConeGeometry& geometry);

/// Weights and filters `projections` ([view][row][column] line integrals,
/// viewCount * rows * columns values). Throws InvalidArgument for a size
/// mismatch, an invalid geometry, fewer than 2 views, or a short scan that
/// covers less than 180 degrees plus the fan angle (naming both).
FilteredProjections fdkFilter(const ConeGeometry& geometry, std::span<const float> projections,
                              const FdkOptions& options = {});

/// The GPU back-projector a build with CUDA provides (the backend registry
/// installs it when it is created; BackendRegistry::instance()). Same
/// contract as backprojectCone; throws DeviceError / OutOfMemory.
using ConeGpuBackprojector = void (*)(const FilteredProjections& projections, const VolumeGrid& grid, double scale,
                                      std::span<float> volume, int device, ConeStageTimes* times);
void setConeGpuBackprojector(ConeGpuBackprojector backprojector);

/// The whole FDK on the GPU (weights, ramp filter with cuFFT, back-projection;
/// installed with the back-projector): reconstructFdk's "cuda" path, so the
/// projections cross the bus once, unfiltered. Throws DeviceError / OutOfMemory.
using ConeGpuFdk = void (*)(const FdkWeights& weights, std::span<const float> projections, const FilterOptions& filter,
                            const VolumeGrid& grid, double scale, std::span<float> volume, int device,
                            ConeStageTimes* times);
void setConeGpuFdk(ConeGpuFdk fdk);

/// volume[k][j][i] = scale * sum over views of value(u, v) / w^2 at voxel
/// (i, j, k) of `grid`. Throws InvalidArgument for sizes that do not match,
/// DeviceError for "cuda" without a CUDA build or device.
void backprojectCone(const FilteredProjections& projections, const VolumeGrid& grid, double scale,
                     std::span<float> volume, const FdkOptions& options = {});

/// fdkFilter then backprojectCone with scale = grid.voxelSize; for "cuda"
/// all of it on the GPU (ConeGpuFdk). options.times gets every stage.
ImageStack reconstructFdk(const ConeGeometry& geometry, std::span<const float> projections, const VolumeGrid& grid,
                          const FdkOptions& options = {});

} // namespace tomo
