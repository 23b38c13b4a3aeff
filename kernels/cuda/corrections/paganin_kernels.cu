// Paganin kernels (see paganin_kernels.h for the layouts).
#include "paganin_kernels.h"

#include "cuda_resources.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace tomo::cuda {

namespace {

constexpr int kThreads = 128;
constexpr int kMaxGridYZ = 65535;

dim3 gridFor(int x, int y, int z) {
    return dim3((x + kThreads - 1) / kThreads, std::min(y, kMaxGridYZ), std::min(z, kMaxGridYZ));
}

// x = padded column, blockIdx.y (+ grid stride) = padded row, blockIdx.z (+ grid stride) = batch slot.
// Clamped indices are PaganinFilter::apply's padding: edge rows and columns repeated.
__global__ void gatherKernel(PaganinShape S, const float* __restrict__ chunk, int projections, int firstProjection,
                             int count, float* __restrict__ padded) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= S.paddedColumns) return;
    const int column = min(max(x - S.left, 0), S.columns - 1);
    for (int slot = blockIdx.z; slot < count; slot += gridDim.z)
        for (int y = blockIdx.y; y < S.paddedRows; y += gridDim.y) {
            const int row = min(max(y - S.top, 0), S.rows - 1);
            const std::size_t src =
                (static_cast<std::size_t>(row) * projections + firstProjection + slot) * S.columns + column;
            padded[(static_cast<std::size_t>(slot) * S.paddedRows + y) * S.paddedColumns + x] = chunk[src];
        }
}

// x = spectrum column (0 ... Nx / 2), blockIdx.y (+ grid stride) = spectrum row, blockIdx.z (+ grid stride) = slot.
// Each operation rounded on its own (no fused multiply-add), as the CPU computes the factor.
__global__ void filterKernel(PaganinShape S, const double* __restrict__ ky2, const double* __restrict__ kx2,
                             double alpha, double norm, int count, float2* __restrict__ spectrum) {
    const int halfX = S.paddedColumns / 2 + 1;
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= halfX) return;
    for (int y = blockIdx.y; y < S.paddedRows; y += gridDim.y) {
        const double denominator = __dadd_rn(1.0, __dmul_rn(alpha, __dadd_rn(ky2[y], kx2[x])));
        const float factor = __double2float_rn(__ddiv_rn(norm, denominator));
        for (int slot = blockIdx.z; slot < count; slot += gridDim.z) {
            float2& v = spectrum[(static_cast<std::size_t>(slot) * S.paddedRows + y) * halfX + x];
            v.x *= factor;
            v.y *= factor;
        }
    }
}

// x = block column, blockIdx.y (+ grid stride) = kept row index, blockIdx.z (+ grid stride) = slot.
__global__ void scatterKernel(PaganinShape S, const float* __restrict__ padded, int count, int firstKept,
                              int keptRows, float* __restrict__ chunk, int projections, int firstProjection) {
    const int column = blockIdx.x * blockDim.x + threadIdx.x;
    if (column >= S.columns) return;
    for (int slot = blockIdx.z; slot < count; slot += gridDim.z)
        for (int k = blockIdx.y; k < keptRows; k += gridDim.y) {
            const int row = firstKept + k;
            const std::size_t src =
                (static_cast<std::size_t>(slot) * S.paddedRows + row + S.top) * S.paddedColumns + S.left + column;
            chunk[(static_cast<std::size_t>(row) * projections + firstProjection + slot) * S.columns + column] =
                padded[src];
        }
}

} // namespace

void launchPaganinGather(const PaganinShape& shape, const float* d_chunk, int projections, int firstProjection,
                         int count, float* d_padded, StreamHandle stream) {
    gatherKernel<<<gridFor(shape.paddedColumns, shape.paddedRows, count), kThreads, 0, stream>>>(
        shape, d_chunk, projections, firstProjection, count, d_padded);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchPaganinFilter(const PaganinShape& shape, const double* d_ky2, const double* d_kx2, double alpha,
                         double norm, int count, float* d_spectrum, StreamHandle stream) {
    filterKernel<<<gridFor(shape.paddedColumns / 2 + 1, shape.paddedRows, count), kThreads, 0, stream>>>(
        shape, d_ky2, d_kx2, alpha, norm, count, reinterpret_cast<float2*>(d_spectrum));
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchPaganinScatter(const PaganinShape& shape, const float* d_padded, int count, int firstKept, int keptRows,
                          float* d_chunk, int projections, int firstProjection, StreamHandle stream) {
    scatterKernel<<<gridFor(shape.columns, keptRows, count), kThreads, 0, stream>>>(
        shape, d_padded, count, firstKept, keptRows, d_chunk, projections, firstProjection);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
