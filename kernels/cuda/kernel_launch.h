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
    // The ALU strategies (alu, hybrid, oversample) read the packed pass directly:
    const void* d_sinogram = nullptr;   ///< texels of the pass: projections rows of pitchBytes (planes == 1)
    std::size_t pitchBytes = 0;
    int bins = 0;
    bool half = false;                  ///< texels are float16
    bool linear = true;                 ///< interpolation (ALU strategies; nearest = double positions)
    int aluShape = 0;                   ///< index in kAluShapes
    int textureShare = 0;               ///< hybrid: texture blocks per 16 on each SM (0 to 16)
    unsigned* d_counters = nullptr;     ///< kMaxSms per-SM tickets (hybrid) + the tile counter; zeroed by the launcher
};

/// Block shapes of the ALU strategies (seed 000 §6.9): a Tile x Tile square
/// per block of `threads` (tile^2 / threads pixels per thread), `group`
/// projections cached per step, the occupancy target in blocks per SM (the
/// register cap: 65536 / (threads x minBlocks)). Tuning picks one by index.
struct AluShape {
    int tile, threads, group, minBlocks;
};
inline constexpr AluShape kAluShapes[] = {
    {32, 256, 16, 4}, // 4 pixels per thread, <= 64 registers
    {32, 256, 16, 6}, // the same at 75% occupancy, <= 40 registers
    {32, 128, 16, 8}, // 8 pixels per thread, <= 64 registers
    {64, 256, 8, 2},  // 16 pixels per thread, <= 128 registers
    {64, 256, 16, 3}, // 16 pixels per thread, more projections per step, <= 85 registers
    {32, 256, 8, 4},  // 4 pixels per thread, 8 projections per step (4 slices' oversampling fits)
};
inline constexpr int kAluShapeCount = static_cast<int>(sizeof(kAluShapes) / sizeof(kAluShapes[0]));
inline constexpr int kMaxSms = 1024; ///< hybrid's per-SM ticket counters (%smid < this)
inline constexpr int kAluCounters = kMaxSms + 1; ///< counters of one ALU launch (BackprojectLaunch::d_counters)

/// Bins a tile's row needs: (tile - 1) * sqrt(2) spread, one below (h_m),
/// one for the linear neighbour, one for rounding; a multiple of 4.
constexpr int aluCachedBins(int tile) { return ((tile - 1) * 1414214 / 1000000 + 1 + 3 + 3) / 4 * 4; }

inline constexpr std::size_t kMaxStaticSharedBytes = 48 * 1024; ///< a block's static shared memory
inline constexpr int kAluChunk = 256; ///< projections whose row constants a block stages at once

enum class AluCacheKind { Linear, Nearest, Oversample };

/// Bytes of the shared-memory cache of one block (alu_tile.cuh checks it).
constexpr std::size_t aluCacheBytes(AluCacheKind kind, const AluShape& shape, int channels) {
    const std::size_t value = 4u * static_cast<std::size_t>(channels);
    const std::size_t rows = static_cast<std::size_t>(shape.group) * aluCachedBins(shape.tile);
    switch (kind) {
    case AluCacheKind::Linear: return kAluChunk * 16u + rows * 2u * value;
    case AluCacheKind::Nearest: return kAluChunk * 32u + rows * value;
    case AluCacheKind::Oversample: return kAluChunk * 16u + 4u * rows * value;
    }
    return 0;
}

} // namespace tomo::cuda
