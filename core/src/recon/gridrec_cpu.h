// The steps of the CPU gridrec plan (the method: tomo/gridrec.h), shared
// with the CPU Fourier projector pair (projector_fourier.cpp), which also
// runs their transposes (interpolateSamples, foldSamples, placeSlices and
// the forward grid transform).
#pragma once

#include "recon/fftw_util.h"
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

/// The transpose of spread(): each sample the kernel-weighted sum of the
/// grid points spread() adds it to (the same windows and weights, folded
/// round the torus). Reads the grid as spread() writes it, and fills its
/// margins with the folded copies first (hence not const).
void interpolateSamples(const Setup& setup, std::complex<float>* grid, std::size_t stride,
                        std::complex<float>* samples, WorkerPool& pool);

/// The transpose (conjugate) of phaseSamples(): spectrum row canonical[i] =
/// the sum over its samples of band[k] conj(exp(2 pi i k shifts[i] / L))
/// times the sample, at the index phaseSamples read it from (overwrites
/// every row's first rowLength values).
void foldSamples(const Setup& setup, const std::complex<float>* samples, std::span<const double> shifts,
                 std::complex<float>* spectra, std::size_t spectrumStride, WorkerPool& pool);

/// FFTW plans of the G x G grid (rows of `stride` complex values, data from
/// kGridPad): one row, and kColumnBlock columns at once.
struct GridPlans {
    fftw::Plan rows, columns;
    int sign = FFTW_BACKWARD;
};
/// Throws Error when FFTW cannot plan. `grid`: memory of the layout above.
GridPlans planGrid(int gridSize, std::complex<float>* grid, std::size_t stride, int sign);
/// The 2D DFT of the grid as far as the slice needs it: backward (the
/// reconstruction) every row, then the columns slice pixels fall on;
/// forward (its adjoint, the grid zero outside the slice's columns) those
/// columns, then every row.
void transformGrid(const Setup& setup, std::complex<float>* grid, std::size_t stride, const GridPlans& plans,
                   WorkerPool& pool);

/// Slice pixel (ix, iy) = grid[(iy - shiftY) mod G][(ix - shiftX) mod G] x
/// deapodizeX[ix] deapodizeY[iy]: real part into `first`, imaginary part
/// into `second` (nullptr: dropped); [row][column] of the whole grid.
void cropSlices(const Setup& setup, const std::complex<float>* grid, std::size_t stride, float* first, float* second,
                WorkerPool& pool);
/// The transpose of cropSlices(): the grid zero but at those points, which
/// get (first + i second) x the deapodisation (second nullptr: 0).
void placeSlices(const Setup& setup, const float* first, const float* second, std::complex<float>* grid,
                 std::size_t stride, WorkerPool& pool);

} // namespace tomo::gridrec
