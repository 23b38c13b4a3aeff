// Launchers of the stage's element-wise steps on the device
// (stage_kernels.cu): the beam-intensity normalisation, the logs around the
// wavelet stripe removal of transmissions, the ring damage guard's sums and
// the final -log, with the CPU stage's arithmetic (tomo/preprocess.h, steps
// 4, 5 and 7; tomo/corrections.h, ringChangeSums).
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

/// values = log(max(values, kMinTransmission)) (toLogs) or exp(values).
void launchLog(float* d_values, std::size_t count, StreamHandle stream);
void launchExp(float* d_values, std::size_t count, StreamHandle stream);

/// tomo::kRingGuardColumns, kRingNoiseShift, kRingNoiseBins (tomo/corrections.h
/// is C++20; the corrector checks that they agree).
inline constexpr int kGuardColumns = 3;
inline constexpr int kGuardNoiseShift = 19;
inline constexpr int kGuardNoiseBins = 1 << (31 - kGuardNoiseShift);

/// The damage guard's sums (tomo::ringChangeSums) of `count` sinograms
/// (projections x columns each, one after another) before and after a
/// stripe removal: per sinogram and column, in d_columns[(b * columns + c)
/// * 4 + i], i = 0: sum of D, 1: sum of |p|, 2: sum over the projections of
/// (p~ - mean p~)^2, 3: the same of D~ (each as the CPU sums it, in double);
/// per sinogram the two step histograms in d_histograms[(b * 2 + h) *
/// kGuardNoiseBins + bin] (h = 0: p, 1: D), zeroed by the launcher.
/// smoothingAngles = tomo::ringGuardAngles(projections); `transmission`:
/// values are transmissions (p = -log max(T, kMin)).
void launchRingChange(const float* d_before, const float* d_after, int count, int projections, int columns,
                      int smoothingAngles, bool transmission, double* d_columns, unsigned* d_histograms,
                      StreamHandle stream);

} // namespace tomo::cuda
