#include "stage_kernels.h"

#include "cuda_resources.h"

#include <cub/block/block_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

namespace tomo::cuda {

namespace {

constexpr int kThreads = 256;
constexpr float kMinTransmission = 1e-5f; // tomo::kMinTransmission (tomo/preprocess.h)

// One block per line: the background mean in double, then the line scaled.
__global__ void __launch_bounds__(kThreads)
backgroundKernel(float* __restrict__ values, int columns, int first, int count, bool lineIntegrals) {
    using Reduce = cub::BlockReduce<double, kThreads>;
    __shared__ typename Reduce::TempStorage temp;
    __shared__ double mean;
    float* line = values + static_cast<std::size_t>(blockIdx.x) * columns;
    double sum = 0.0;
    for (int c = threadIdx.x; c < count; c += kThreads) sum += line[first + c];
    const double total = Reduce(temp).Sum(sum);
    if (threadIdx.x == 0) mean = total / count;
    __syncthreads();
    const double m = mean;
    if (!lineIntegrals && !(m > 0.0)) return;
    for (int c = threadIdx.x; c < columns; c += kThreads)
        line[c] = static_cast<float>(lineIntegrals ? line[c] - m : line[c] / m);
}

__global__ void __launch_bounds__(kThreads)
minusLogKernel(float* __restrict__ values, std::size_t count, unsigned long long* clamped) {
    using Reduce = cub::BlockReduce<int, kThreads>;
    __shared__ typename Reduce::TempStorage temp;
    int mine = 0;
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; k < count; k += stride) {
        float t = values[k];
        if (!(t > 0.0f)) { // Paganin of values near the clamp can dip to 0
            t = kMinTransmission;
            ++mine;
        }
        values[k] = -logf(t);
    }
    const int total = Reduce(temp).Sum(mine);
    if (threadIdx.x == 0 && total > 0) atomicAdd(clamped, static_cast<unsigned long long>(total));
}

} // namespace

void launchBackgroundNormalisation(float* d_values, long long lines, int columns, int first, int count,
                                   bool lineIntegrals, StreamHandle stream) {
    if (lines < 1) return;
    if (lines > 0x7fffffffLL)
        throw InvalidArgument("background normalisation: " + std::to_string(lines) + " lines in one launch");
    backgroundKernel<<<static_cast<unsigned>(lines), kThreads, 0, stream>>>(d_values, columns, first, count,
                                                                             lineIntegrals);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchMinusLog(float* d_values, std::size_t count, unsigned long long* d_clamped, StreamHandle stream) {
    if (count == 0) return;
    const std::size_t blocks = std::min<std::size_t>((count + kThreads - 1) / kThreads, 65535u * 16u);
    minusLogKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(d_values, count, d_clamped);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
