// Launchers of the Paganin kernels (paganin_kernels.cu), the device side of
// DevicePaganin (device_corrections.h): a batch of projections is gathered
// from the chunk into edge-padded real blocks, their half spectra are scaled
// by PaganinFilter's factor, and the filtered rows are cropped back.
//
//   chunk    [block row][projection][column], rows x projections x columns
//   padded   [batch slot][padded row][padded column], the cuFFT R2C input /
//            C2R output, slots paddedRows x paddedColumns apart
//   spectrum [batch slot][padded row][paddedColumns / 2 + 1] complex (float2)
#pragma once

#include "kernel_launch.h"

namespace tomo::cuda {

struct PaganinShape {
    int rows = 0;          ///< block rows (the chunk's rows)
    int columns = 0;
    int paddedRows = 0;    ///< Ny
    int paddedColumns = 0; ///< Nx
    int top = 0;           ///< padded row of block row 0
    int left = 0;          ///< padded column of block column 0
};

/// Projections [firstProjection, firstProjection + count) of the chunk
/// (`projections` in all) into padded slots 0 ... count - 1, edge rows and
/// columns repeated.
void launchPaganinGather(const PaganinShape& shape, const float* d_chunk, int projections, int firstProjection,
                         int count, float* d_padded, StreamHandle stream);

/// Every slot's spectrum value (y, x) times
/// float(norm / (1 + alpha (ky2[y] + kx2[x]))), the double arithmetic of
/// PaganinFilter::apply; norm = 1 / (Ny Nx) undoes cuFFT's unnormalised pair.
void launchPaganinFilter(const PaganinShape& shape, const double* d_ky2, const double* d_kx2, double alpha,
                         double norm, int count, float* d_spectrum, StreamHandle stream);

/// Rows [firstKept, firstKept + keptRows) of slots 0 ... count - 1 back into
/// the chunk's projections firstProjection ... (the other rows untouched).
void launchPaganinScatter(const PaganinShape& shape, const float* d_padded, int count, int firstKept, int keptRows,
                          float* d_chunk, int projections, int firstProjection, StreamHandle stream);

} // namespace tomo::cuda
