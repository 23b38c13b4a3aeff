// Launchers of the filter kernels (filter_kernels.cu): the GPU side of
// tomo::SinogramFilter plus the packing into texture layout (seed 004 §II,
// seed 000 §5.2-5.3). Rows are numbered r = slice * projections + p.
//
//   padPairs      rows -> complex rows: row 2j in the real parts, row 2j + 1
//                 in the imaginary parts, each centred in `padded` values with
//                 zero or edge padding exactly as SinogramFilter does
//   applyResponse spectrum x the real, even response (both rows at once)
//   maxAbsWeighted / halfScale   the power-of-two scale of float16 storage
//   pack          filtered rows x angular weight -> interleaved texels
//                 (float, float2, float4 or half, half2, half4)
#pragma once

#include "kernel_launch.h"

#include <cstddef>

namespace tomo::cuda {

struct FilterLayout {
    int rows = 0;     ///< valid rows; rows beyond (up to 2 * pairs) are zero
    int pairs = 0;    ///< complex rows in the FFT buffer
    int bins = 0;
    int padded = 0;   ///< FFT length (tomo::paddedLength(bins))
    int left = 0;     ///< offset of bin 0 in the padded row: (padded - bins) / 2
};

/// d_rows: rows x bins; d_fft: pairs x padded complex (float2).
void launchPadPairs(const FilterLayout& layout, const float* d_rows, bool edgePadding, float* d_fft,
                    StreamHandle stream);

/// d_fft[j][k] *= d_response[k] (full length `padded`, real and even).
void launchApplyResponse(const FilterLayout& layout, const float* d_response, float* d_fft, StreamHandle stream);

/// *d_maxBits = max(*d_maxBits, bits of max |row r[bin] * weight(r)|) over the
/// valid rows (float bits of a non-negative value compare as unsigned).
void launchMaxAbsWeighted(const FilterLayout& layout, const float* d_fft, const float* d_weights, int projections,
                          unsigned* d_maxBits, StreamHandle stream);

/// d_scale = {2^e, 2^-e} with e chosen so that max * 2^e lies in [2^13, 2^14):
/// far from float16 overflow (65504) and from its subnormals (6.1e-5), and
/// exact to undo. {1, 1} when the maximum is 0.
void launchHalfScale(const unsigned* d_maxBits, float* d_scale, StreamHandle stream);

struct PackLaunch {
    const float* d_fft = nullptr;   ///< filtered complex rows (after the inverse FFT)
    FilterLayout layout;
    int projections = 0;
    int channels = 1;               ///< slices per texel: 1, 2, 4
    int firstSlice = 0;             ///< texel channel c holds slice firstSlice + c of the chunk
    int validSlices = 1;            ///< slices >= validSlices are written as 0
    bool half = false;              ///< float16 storage
    const float* d_weights = nullptr; ///< angular weight per projection
    const float* d_scale = nullptr; ///< float16 only: {scale, 1 / scale}
    void* d_out = nullptr;          ///< texel (bin, p) at d_out + p * pitchBytes + bin * texel bytes
    std::size_t pitchBytes = 0;
};
void launchPack(const PackLaunch& pack, StreamHandle stream);

/// Bytes of one texel.
inline int texelBytes(int channels, bool half) { return channels * (half ? 2 : 4); }

} // namespace tomo::cuda
