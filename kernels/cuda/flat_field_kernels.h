// Launcher of the flat-field kernel (flat_field_kernels.cu): the GPU side of
// tomo::flatFieldRawRows (tomo/preprocess.h), with the same arithmetic on the
// same per-pixel constants:
//   t = min((raw - dark) * scale, FLT_MAX); bad where t <= 0, raw >= the
//   saturation (when > 0) or a dead pixel; bad values interpolated along the
//   line (interpolate) or set to kMinTransmission (counted); out = -log(t)
// from raw rows as stored (projection order [angle][row][column]) to float
// sinograms [row][angle][column], the layout the filter reads.
#pragma once

#include "kernel_launch.h"

#include <cstddef>
#include <string>

namespace tomo::cuda {

enum class RawType { UInt8, UInt16, Float32, Float64 };

struct FlatFieldLaunch {
    const void* d_raw = nullptr;   ///< projections x rows x columns values of `type`
    RawType type = RawType::UInt16;
    int projections = 0;
    int rows = 0;
    int columns = 0;
    const float* d_dark = nullptr;  ///< rows x columns
    const float* d_scale = nullptr; ///< rows x columns
    const unsigned char* d_dead = nullptr; ///< rows x columns, 0 or 1
    float saturation = 0.0f;        ///< 0 = none
    bool interpolate = false;
    float* d_out = nullptr;         ///< rows x projections x columns
    /// Added to: the values clamped and the values interpolated (dead pixels
    /// not counted), and lowered to: the smallest key ((rowOffset + row) *
    /// projections + angle) * columns + column of a NaN/inf raw value (float
    /// types; stays as it was when there is none).
    unsigned long long* d_clamped = nullptr;
    unsigned long long* d_interpolated = nullptr;
    unsigned long long* d_firstBad = nullptr;
    int rowOffset = 0;
};

void launchFlatField(const FlatFieldLaunch& launch, StreamHandle stream);

/// Throws tomo::DataError naming `source`, the row (firstRow + the key's
/// row), angle and column of a d_firstBad key, unless the key is "none"
/// (all bits set, as the counters start).
void throwIfNotFinite(unsigned long long key, const std::string& source, int firstRow, int projections, int columns);

/// RawType of a tomo::SampleType (uint8, uint16, float32, float64 in that order).
RawType rawTypeOf(int sampleType);

} // namespace tomo::cuda
