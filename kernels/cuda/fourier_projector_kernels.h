// Launchers of the Fourier projector pair's own kernels
// (fourier_projector_kernels.cu); its other steps are gridrec's (phase,
// gather, crop: gridrec_kernels.h) and cuFFT. The operator: tomo/projector.h
// (makeFourierCpuProjector) and fourier_projector.h. Plain C++: device
// memory travels as pointers. Layouts:
//   group     a CUDA pair vector's group: [element][lane], lanes 1, 2 or 4
//             (projector_kernels.h); `valid` of them hold slices
//   rows      [pair][projection][L] complex, acquisition order (the spectra)
//   samples   [pair][canonical row][sampleStride] complex
//   grid      [pair][G][G] complex
// Pair q holds lane 2q in its real part and lane 2q + 1 (when < valid) in
// its imaginary part; a group has up to two pairs.
//
//   packRows         group sinograms -> rows zero-extended to L (back, step 1)
//   placeImage       group images x deapodisation -> the zero grid (forward, 5')
//   interpolate      grid -> each sample the kernel-weighted sum of the grid
//                    points its spreading reaches (forward, 3')
//   fold             samples x band x conj(phase) -> their spectrum bins, a
//                    gather over the bins (forward, 2')
//   unpackRows       rows -> group sinograms (forward, 1'), or with data
//                    SIRT's first half: W (b - A x) and the squares' partial sums
//   step             x = clamp(x + steps V B r) from plain back-projected slices
#pragma once

#include "kernel_launch.h"
#include "projector_kernels.h"

#include <cstddef>

namespace tomo::cuda {

/// Device copies of gridrec::Setup's tables and its sizes.
struct FourierTables {
    const float* d_table = nullptr; ///< kernel (value, slope) pairs, tableLast + 1 of them
    int tableLast = 0;
    float halfWidth = 0.0f;
    int kernelWidth = 0;
    const float* d_deapodizeX = nullptr;
    const float* d_deapodizeY = nullptr;
    const float* d_band = nullptr;      ///< per sample n = k + lastSample
    const double* d_dirX = nullptr;     ///< grid cells per k, per canonical row
    const double* d_dirY = nullptr;
    const double* d_turns = nullptr;    ///< phase turns per k (T / L), per canonical row
    const unsigned char* d_reversed = nullptr;
    const int* d_rowOf = nullptr;       ///< canonical row of acquisition row p (the inverse of Setup::canonical)
    int bins = 0;
    int projections = 0;
    int width = 0, height = 0;          ///< slice grid
    int gridSize = 0;
    int shiftX = 0, shiftY = 0;
    int rowLength = 0;
    int lastSample = 0;
    int sampleStride = 0;
};

/// d_rows of (valid + 1) / 2 pairs from a sinogram group.
void launchPackRows(const FourierTables& tables, const float* d_group, int lanes, int valid, float* d_rows,
                    StreamHandle stream);
/// Every point of the (valid + 1) / 2 grids: pixel (ix, iy) x deapodizeX[ix]
/// deapodizeY[iy] at ((ix - shiftX) mod G, (iy - shiftY) mod G), 0 elsewhere.
void launchPlaceImage(const FourierTables& tables, const float* d_group, int lanes, int valid, float* d_grid,
                      StreamHandle stream);
/// Every sample of `pairs` pairs (0 past 2 lastSample + 1 in a row).
void launchInterpolate(const FourierTables& tables, const float* d_grid, int pairs, float* d_samples,
                       StreamHandle stream);
/// Every spectrum bin of `pairs` pairs.
void launchFold(const FourierTables& tables, const float* d_samples, int pairs, float* d_rows, StreamHandle stream);

/// Blocks of launchUnpackRows (its partial sums per lane).
int unpackBlocks(const FourierTables& tables);
struct UnpackLaunch {
    const float* d_rows = nullptr;       ///< inverse-transformed rows of (valid + 1) / 2 pairs
    int lanes = 1;
    int valid = 1;
    float* d_out = nullptr;              ///< sinogram group (lanes past `valid`: 0)
    /// With data b (a sinogram group): d_out = W (b - A x), W = d_rowWeights
    /// [angle][bin] (or 1 when null), and each block's sum of (b - A x)^2 per
    /// lane into d_partial[block][lane] (unpackBlocks() x lanes).
    const float* d_data = nullptr;
    const float* d_rowWeights = nullptr;
    double* d_partial = nullptr;
};
void launchUnpackRows(const FourierTables& tables, const UnpackLaunch& launch, StreamHandle stream);

/// x = clamp(x + steps[lane] V B r, lower, upper) for an image group of
/// `lanes` lanes, B r the plain slices [lane][pixel] of the lanes < valid
/// (launchCrop's output), V = d_columnWeights (or 1 when null).
void launchStep(const FourierTables& tables, const float* d_plain, int lanes, int valid, const SliceScalars& steps,
                const float* d_columnWeights, float lower, float upper, float* d_group, StreamHandle stream);

} // namespace tomo::cuda
