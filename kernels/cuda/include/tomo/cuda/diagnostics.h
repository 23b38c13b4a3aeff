// Pieces of the CUDA backend exposed for tests, tomo-cuda-bench and tools.
// Plain C++ (no CUDA types).
#pragma once

#include "tomo/backend.h"
#include "tomo/filter.h"
#include "tomo/preprocess.h"

#include <span>
#include <vector>

namespace tomo::cuda {

/// Filters `rowCount` rows of `bins` values on `device` with exactly the code
/// path of the texture plans (cuFFT, two real rows packed as one complex row,
/// tomo::filterResponse, row r multiplied by weights[r % weights.size()]) and
/// returns them; the GPU twin of tomo::SinogramFilter::apply.
/// Throws InvalidArgument (sizes), DeviceError, OutOfMemory.
std::vector<float> filterRowsOnGpu(std::span<const float> rows, int rowCount, int bins, const FilterOptions& options,
                                   std::span<const double> weights, int device = 0);

/// flatFieldRawRows (tomo/flat_field.h) of `raw` on `device` with the
/// plans' kernel, returning the sinograms [row][angle][column] and the
/// clamped count; the GPU twin of the CPU's preprocessing. Throws as
/// flatFieldRawRows, DeviceError, OutOfMemory.
std::vector<float> flatFieldOnGpu(const RawRows& raw, const FlatFieldRows& field, PreprocessStats* stats = nullptr,
                                  int device = 0);

/// Texture fetches per second for one texel layout: `precision` float32 or
/// float16 storage, `channels` 1, 2 or 4 (float, float2, float4 / half, half2,
/// half4), `interpolation` linear (bilinear filtering) or nearest (point
/// sampling). measureTextureFetchRate(device) is (Float32, 1, Linear).
/// Throws as measureTextureFetchRate.
double measureTextureFetchRate(int device, Precision precision, int channels, Interpolation interpolation);

} // namespace tomo::cuda
