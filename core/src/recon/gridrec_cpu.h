// The steps of the CPU gridrec plan that the tests check on their own: the
// phased samples and the spreading (the method: tomo/gridrec.h).
#pragma once

#include "tomo/gridrec.h"
#include "tomo/worker_pool.h"

#include <complex>
#include <cstddef>
#include <span>

namespace tomo::gridrec {

/// Grid rows hold this many complex values of margin on each side: a
/// kernel window that reaches past an edge lands there and is folded back.
inline constexpr int kGridPad = 8;

/// The samples of one pair of slices, canonical rows of sampleStride()
/// values ([i][k + L - 1]): spectrum row canonical[i] (`spectra`: rows of
/// `spectrumStride` values in acquisition order), k reversed for reversed
/// rows, times band[k] and exp(2 pi i k shifts[i] / L) (by recurrence along
/// the row, in double).
void phaseSamples(const Setup& setup, const std::complex<float>* spectra, std::size_t spectrumStride,
                  std::span<const double> shifts, std::complex<float>* samples, WorkerPool& pool);

/// Spreads the samples onto the G x G grid: row j of the grid starts at
/// grid + j * stride + kGridPad (stride >= G + 2 kGridPad). Bands of rows
/// run in parallel, each writing only its own rows (no atomics); the
/// samples' windows are folded round the torus. Overwrites the whole grid.
void spread(const Setup& setup, const std::complex<float>* samples, std::complex<float>* grid, std::size_t stride,
            WorkerPool& pool);

} // namespace tomo::gridrec
