// The GPU twin of removeStripesWavelet (tomo/corrections.h), host array in
// and out: what tests use to check DeviceWaveletStripes against its CPU
// definition. Plain C++ (no CUDA types).
#pragma once

#include <span>

namespace tomo::cuda {

/// removeStripesWavelet on `device` (same arguments; no pool): uploads the
/// sinogram, runs DeviceWaveletStripes, downloads it and waits. Throws
/// InvalidArgument as the CPU function, and DeviceError / OutOfMemory.
void removeStripesWaveletOnGpu(std::span<float> sinogram, int projections, int columns, int level, double sigma,
                               int device = 0);

} // namespace tomo::cuda
