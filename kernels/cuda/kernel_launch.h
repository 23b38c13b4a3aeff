// Plain C++ description of one back-projection launch, shared by the
// launchers of every texture strategy (tex_standard.h, tex_optimized.h).
// No CUDA header needed: streams and texture objects travel as their
// underlying handle types. d_ = device pointer, h_ = host pointer.
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace tomo::cuda {

using StreamHandle = CUstream_st*;      // cudaStream_t
using TextureHandle = unsigned long long; // cudaTextureObject_t

/// Per-projection geometry constants, one float4 each (seed 000 §5.7):
///   x = cos(angle_p), y = sin(angle_p), z = axis + offset_p (detector column
///   of the rotation axis), w = min(0, cos, -sin, cos - sin): the lowest
///   detector offset of a unit square's corners from its (0, 0) corner (times
///   N for an N x N tile: the first bin a tile needs; for the ALU kernels).
/// A pixel (ix, iy) of the grid samples the row at
///   s = (ix - centreX) * cos - (iy - centreY) * sin + axis_p,
/// fetched at texture coordinate (s + 0.5, p + 0.5) with border addressing.
inline constexpr int kGeometryFloats = 4;

/// The same constants in double precision (cos, sin, axis_p, unused), for
/// Sampling::SnapDouble.
struct alignas(16) GeometryDouble {
    double cosA, sinA, axis, unused;
};

/// How the sampling position along a sinogram row becomes a texture
/// coordinate (texel k's centre is at k + 0.5):
///   Hardware   s + 0.5 computed in float, straight to the texture unit, which
///              filters (linear: 8-bit weights) or picks floor() (nearest):
///              the paper's way, and the only one for linear;
///   SnapDouble nearest only: s computed in double (the FP64 pipe of sm_90,
///              no conversion instruction), k = floor(s + 0.5), fetch at the
///              centre k + 0.5. Float32 positions flip ties of floor(s + 0.5)
///              against a double reference (measured 1.5e-3 relative RMSE on
///              the 256^2 phantom); double positions match it (7.7e-6, the
///              float32 filter's rounding) for ~1% of speed.
enum class Sampling { Hardware, SnapDouble };

struct BackprojectLaunch {
    TextureHandle texture = 0;          ///< packed filtered sinogram: width bins, height projections
    TextureHandle texture2 = 0;         ///< planes == 2: slices 2 and 3 (float2)
    int channels = 1;                   ///< slices per pass: 1, 2, 4 (float/half, float2/half2, float4/half4)
    int planes = 1;                     ///< 2: four float32 slices as two float2 textures (tex-optimized)
    const float* d_geometry = nullptr;  ///< projections x float4 (see above), 16-byte aligned
    const float* h_geometry = nullptr;  ///< the same constants on the host
    const GeometryDouble* d_geometryDouble = nullptr; ///< Sampling::SnapDouble: projections entries
    const GeometryDouble* h_geometryDouble = nullptr; ///< the same on the host
    Sampling sampling = Sampling::Hardware;
    std::uint64_t geometryVersion = 0;  ///< unique per content of the constants (process-wide)
    int projections = 0;
    int regionX = 0, regionY = 0, regionWidth = 0, regionHeight = 0; ///< computed rectangle of the grid
    float centreX = 0.0f, centreY = 0.0f;  ///< (sliceWidth - 1) / 2, (sliceHeight - 1) / 2
    float* d_slices = nullptr;          ///< output [channel][row][column] of the region
    std::size_t sliceStride = 0;        ///< floats from one channel's slice to the next
    int slices = 1;                     ///< channels written (the last pass of a chunk may be partial)
    const float* d_scale = nullptr;     ///< {scale, 1 / scale} of float16 storage; nullptr = 1
};

} // namespace tomo::cuda
