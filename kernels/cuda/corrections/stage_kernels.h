// Launchers of the stage's element-wise steps on the device
// (stage_kernels.cu): the beam-intensity normalisation and the final -log,
// with the CPU stage's arithmetic (tomo/preprocess.h, steps 4 and 7).
#pragma once

#include "kernel_launch.h"

#include <cstddef>

namespace tomo::cuda {

/// Each of `lines` lines of `columns` values divided by the mean of its
/// columns [first, first + count) (in double), or, for line integrals, that
/// mean subtracted; lines whose mean is not > 0 stay as they are
/// (transmissions only).
void launchBackgroundNormalisation(float* d_values, long long lines, int columns, int first, int count,
                                   bool lineIntegrals, StreamHandle stream);

/// values = -log(values), values that are not > 0 set to the minimum
/// transmission (tomo::kMinTransmission) first and counted into *d_clamped.
void launchMinusLog(float* d_values, std::size_t count, unsigned long long* d_clamped, StreamHandle stream);

} // namespace tomo::cuda
