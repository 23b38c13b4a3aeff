// A block's sum per lane, in a fixed order (warp shuffles, then the warps'
// sums by thread 0), so the iterative methods' dot products and residual
// norms come out the same from run to run.
#pragma once

#include <cuda_runtime.h>

namespace tomo::cuda {

/// Sums each lane's `value` over a one-dimensional block of `Threads`
/// threads and writes the sums to out[lane] (thread 0).
template <int Threads, int S>
__device__ void blockSum(double (&value)[S], double* out) {
    __shared__ double warps[Threads / 32][S];
    for (int j = 0; j < S; ++j)
        for (int offset = 16; offset > 0; offset /= 2) value[j] += __shfl_down_sync(0xffffffffu, value[j], offset);
    if (threadIdx.x % 32 == 0)
        for (int j = 0; j < S; ++j) warps[threadIdx.x / 32][j] = value[j];
    __syncthreads();
    if (threadIdx.x == 0)
        for (int j = 0; j < S; ++j) {
            double sum = 0.0;
            for (int w = 0; w < Threads / 32; ++w) sum += warps[w][j];
            out[j] = sum;
        }
}

} // namespace tomo::cuda
