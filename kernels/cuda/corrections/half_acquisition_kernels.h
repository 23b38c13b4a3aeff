// Launcher of the half-acquisition stitching kernel
// (half_acquisition_kernels.cu), the device side of DeviceHalfAcquisition
// (device_corrections.h): stitchHalfAcquisition's sampling and blending,
// with the CPU's float and double operations rounded one by one.
#pragma once

#include "kernel_launch.h"

namespace tomo::cuda {

struct StitchLaunch {
    const float* d_in = nullptr; ///< count sinograms of inputProjections x inputColumns
    int count = 0;
    int inputProjections = 0;
    int inputColumns = 0;
    double axis = 0.0;       ///< HalfAcquisitionLayout::axis
    double outputAxis = 0.0; ///< HalfAcquisitionLayout::outputAxis
    int views = 0;           ///< output rows
    int columns = 0;         ///< output columns
    const int* d_views = nullptr;          ///< views entries: the input projection of each output row
    const int* d_partnerLower = nullptr;   ///< views entries
    const int* d_partnerUpper = nullptr;   ///< views entries
    const float* d_partnerWeight = nullptr; ///< views entries: the weight of partnerUpper
    const double* d_viewWeight = nullptr;  ///< columns entries: the view's share of each output column
    float* d_out = nullptr;                ///< count sinograms of views x columns
};

void launchStitch(const StitchLaunch& launch, StreamHandle stream);

} // namespace tomo::cuda
