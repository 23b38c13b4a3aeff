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

__global__ void logKernel(float* __restrict__ values, std::size_t count, bool toLogs) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; k < count; k += stride)
        values[k] = toLogs ? logf(fmaxf(values[k], kMinTransmission)) : expf(values[k]);
}

// ---- the ring damage guard (tomo::ringChangeSums)

struct GuardValues {
    const float* before;
    const float* after;
    int columns;
    bool transmission;
    __device__ float p(std::size_t i) const {
        return transmission ? -logf(fmaxf(before[i], kMinTransmission)) : before[i];
    }
    // In float, as the CPU stores D: p after - p before.
    __device__ float d(std::size_t i) const {
        const float pAfter = transmission ? -logf(fmaxf(after[i], kMinTransmission)) : after[i];
        return __fsub_rn(pAfter, p(i));
    }
};

constexpr int kNoiseBins = kGuardNoiseBins;
constexpr int kHistogramThreads = 256;

__device__ inline unsigned noiseBin(float step) { return __float_as_uint(fabsf(step)) >> kGuardNoiseShift; }

// blockIdx.y = sinogram; threads over its (projection, column < N - 1) pairs;
// the block's histograms in shared memory, added to the sinogram's at the end.
__global__ void __launch_bounds__(kHistogramThreads)
ringStepsKernel(GuardValues v, int projections, unsigned* __restrict__ histograms) {
    __shared__ unsigned local[2 * kNoiseBins];
    for (int i = threadIdx.x; i < 2 * kNoiseBins; i += kHistogramThreads) local[i] = 0;
    __syncthreads();
    const int N = v.columns;
    const std::size_t sinogram = static_cast<std::size_t>(blockIdx.y) * projections * N;
    const std::size_t pairs = static_cast<std::size_t>(projections) * (N - 1);
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * kHistogramThreads + threadIdx.x; k < pairs;
         k += static_cast<std::size_t>(gridDim.x) * kHistogramThreads) {
        const std::size_t i = sinogram + k / (N - 1) * N + k % (N - 1);
        atomicAdd(&local[noiseBin(__fsub_rn(v.p(i + 1), v.p(i)))], 1u);
        atomicAdd(&local[kNoiseBins + noiseBin(__fsub_rn(v.d(i + 1), v.d(i)))], 1u);
    }
    __syncthreads();
    unsigned* mine = histograms + static_cast<std::size_t>(blockIdx.y) * 2 * kNoiseBins;
    for (int i = threadIdx.x; i < 2 * kNoiseBins; i += kHistogramThreads)
        if (local[i] > 0) atomicAdd(&mine[i], local[i]);
}

// The CPU's smoothedVariance of one column: the column box at each
// projection (clamped), summed in double in the same order, a running box
// along the projections.
template <class Value>
__device__ double smoothedVariance(Value x, std::size_t sinogram, int P, int N, int c, int ha) {
    const int hc = kGuardColumns;
    auto across = [&](int a) {
        const std::size_t row = sinogram + static_cast<std::size_t>(min(max(a, 0), P - 1)) * N;
        double sum = 0.0;
        for (int j = -hc; j <= hc; ++j) sum = __dadd_rn(sum, x(row + min(max(c + j, 0), N - 1)));
        return sum / (2 * hc + 1);
    };
    double window = 0.0;
    for (int i = -ha; i <= ha; ++i) window = __dadd_rn(window, across(i));
    double sum = 0.0, squares = 0.0;
    for (int a = 0; a < P; ++a) {
        const double value = window / (2 * ha + 1);
        sum = __dadd_rn(sum, value);
        squares = __dadd_rn(squares, __dmul_rn(value, value));
        window = __dadd_rn(window, __dsub_rn(across(a + ha + 1), across(a - ha)));
    }
    return fmax(0.0, __dsub_rn(squares, __dmul_rn(sum, sum) / P));
}

// x = column, blockIdx.y = sinogram
__global__ void ringColumnsKernel(GuardValues v, int projections, int ha, double* __restrict__ out) {
    const int N = v.columns, c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= N) return;
    const std::size_t sinogram = static_cast<std::size_t>(blockIdx.y) * projections * N;
    double change = 0.0, magnitude = 0.0;
    for (int a = 0; a < projections; ++a) {
        const std::size_t i = sinogram + static_cast<std::size_t>(a) * N + c;
        change = __dadd_rn(change, v.d(i));
        magnitude = __dadd_rn(magnitude, fabs(static_cast<double>(v.p(i))));
    }
    double* mine = out + (static_cast<std::size_t>(blockIdx.y) * N + c) * 4;
    mine[0] = change;
    mine[1] = magnitude;
    mine[2] = smoothedVariance([&](std::size_t i) { return v.p(i); }, sinogram, projections, N, c, ha);
    mine[3] = smoothedVariance([&](std::size_t i) { return v.d(i); }, sinogram, projections, N, c, ha);
}

} // namespace

void launchLog(float* d_values, std::size_t count, StreamHandle stream) {
    if (count == 0) return;
    const std::size_t blocks = std::min<std::size_t>((count + kThreads - 1) / kThreads, 65535u * 16u);
    logKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(d_values, count, true);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchExp(float* d_values, std::size_t count, StreamHandle stream) {
    if (count == 0) return;
    const std::size_t blocks = std::min<std::size_t>((count + kThreads - 1) / kThreads, 65535u * 16u);
    logKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(d_values, count, false);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchRingChange(const float* d_before, const float* d_after, int count, int projections, int columns,
                      int smoothingAngles, bool transmission, double* d_columns, unsigned* d_histograms,
                      StreamHandle stream) {
    if (count < 1) return;
    if (count > 65535)
        throw InvalidArgument("ring damage guard: " + std::to_string(count) + " sinograms in one launch");
    const GuardValues v{d_before, d_after, columns, transmission};
    TOMO_CUDA_CHECK(cudaMemsetAsync(d_histograms, 0,
                                    static_cast<std::size_t>(count) * 2 * kNoiseBins * sizeof(unsigned), stream));
    if (columns > 1) {
        const std::size_t pairs = static_cast<std::size_t>(projections) * (columns - 1);
        const unsigned blocks =
            static_cast<unsigned>(std::min<std::size_t>((pairs + kHistogramThreads - 1) / kHistogramThreads, 1024));
        ringStepsKernel<<<dim3(blocks, count), kHistogramThreads, 0, stream>>>(v, projections, d_histograms);
    }
    ringColumnsKernel<<<dim3((columns + 127) / 128, count), 128, 0, stream>>>(v, projections, smoothingAngles,
                                                                              d_columns);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

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
