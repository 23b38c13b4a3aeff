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

namespace tomo {
struct PreprocessStats;
}

namespace tomo::cuda {

/// The kernel's counters: clamped, interpolated, first NaN/inf key, listed,
/// then up to kListedKeys keys of interpolated values (the CPU's list limit,
/// PreprocessStats::kListLimit).
constexpr int kCounterSlots = 4;
constexpr int kListedKeys = 1000;
constexpr std::size_t kCounterWords = kCounterSlots + kListedKeys;

enum class RawType { UInt8, UInt16, Float32, Float64 };

struct FlatFieldLaunch {
    const void* d_raw = nullptr;   ///< projections x rows x columns values of `type`
    RawType type = RawType::UInt16;
    int projections = 0;
    int rows = 0;
    int columns = 0;
    const float* d_dark = nullptr;  ///< rows x columns
    const float* d_scale = nullptr; ///< rows x columns (per flat group with blends)
    /// Several flat groups (tomo::ChunkConstants::blends): per projection
    /// its two groups (lower, upper) and the weight of upper; d_flats holds
    /// every group's rows x columns flat and d_scale every group's scale.
    /// Null: one scale for every projection.
    const int* d_blendGroups = nullptr;
    const float* d_blendWeights = nullptr;
    const float* d_flats = nullptr;
    const unsigned char* d_dead = nullptr; ///< rows x columns, 0 or 1
    float saturation = 0.0f;        ///< 0 = none
    bool interpolate = false;
    bool takeLog = true;            ///< false: the transmissions t themselves
    float* d_out = nullptr;         ///< rows x projections x columns
    /// The counters (kCounterWords, set up by resetFlatFieldCounters): the
    /// values clamped, the values interpolated (dead pixels not counted), the
    /// smallest key ((rowOffset + row) * projections + angle) * columns +
    /// column of a NaN/inf raw value (float types), the interpolated values
    /// listed, then the keys of the first kListedKeys of them listed (in no
    /// order: flatFieldStats sorts them).
    unsigned long long* d_counters = nullptr;
    int rowOffset = 0;
    /// Rows whose clamped and interpolated values are counted and listed
    /// (a chunk's output rows, not its margin).
    int countedFirst = 0;
    int countedEnd = 1 << 30;
};

void launchFlatField(const FlatFieldLaunch& launch, StreamHandle stream);

/// Sets kCounterWords counters to their start on `stream` (zero, the
/// NaN/inf key to "none": all bits set).
void resetFlatFieldCounters(unsigned long long* d_counters, StreamHandle stream);

/// The counters, read back to the host, as statistics of rows counted from
/// `firstRow`: clamped, badValueCount and badValues (sorted in row, angle,
/// column order: the CPU's list when there are at most kListedKeys, else
/// kListedKeys of them). Throws tomo::DataError naming `source`, the row,
/// angle and column when the kernel met a NaN/inf raw value.
void readFlatFieldStats(const unsigned long long* counters, const std::string& source, int firstRow, int projections,
                        int columns, PreprocessStats& stats);

/// RawType of a tomo::SampleType (uint8, uint16, float32, float64 in that order).
RawType rawTypeOf(int sampleType);

} // namespace tomo::cuda
