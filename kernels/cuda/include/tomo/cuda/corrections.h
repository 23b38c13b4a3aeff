// The GPU twins of the corrections of tomo/corrections.h, host arrays in and
// out, on `device`: what tests and tools use to check a device correction
// against its CPU definition (the stage itself keeps the data on the device:
// kernels/cuda/corrections/device_corrections.h). Plain C++ (no CUDA types).
// Each throws as its CPU twin, and DeviceError / OutOfMemory.
#pragma once

#include "tomo/corrections.h"

#include <cstddef>
#include <span>
#include <vector>

namespace tomo::cuda {

/// removeZingers on the GPU (same arguments; no pool).
std::size_t removeZingersOnGpu(std::span<float> image, int height, int width, const ZingerOptions& options,
                               ValueKind kind, std::vector<PixelPosition>* positions = nullptr,
                               std::size_t maxPositions = 0, int device = 0);

/// removeStripes on the GPU (every method, wavelet included).
void removeStripesOnGpu(std::span<float> sinogram, int projections, int columns, const RingOptions& options,
                        int device = 0);

/// PaganinFilter(rows, columns, options).apply(block) on the GPU.
void paganinOnGpu(std::span<float> block, int rows, int columns, const PaganinOptions& options, int device = 0);

/// stitchHalfAcquisition on the GPU.
void stitchHalfAcquisitionOnGpu(std::span<const float> sinogram, const HalfAcquisitionLayout& layout,
                                std::span<float> out, int device = 0);

} // namespace tomo::cuda
