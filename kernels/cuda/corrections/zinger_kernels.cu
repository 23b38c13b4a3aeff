#include "zinger_kernels.h"

#include "cuda_resources.h"

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>

namespace tomo::cuda {

namespace {

constexpr int kSumThreads = 256;
constexpr int kMaxPartials = 256;
constexpr int kTileX = 32, kTileY = 8;
constexpr int kMaxGridZ = 65535;

// Partial sums of |value| in double, one per block and image (blockIdx.y);
// a fixed split, so the floor does not depend on timing.
__global__ void __launch_bounds__(kSumThreads)
absSumKernel(const float* __restrict__ images, std::size_t pixels, double* __restrict__ partials) {
    using Reduce = cub::BlockReduce<double, kSumThreads>;
    __shared__ typename Reduce::TempStorage temp;
    const float* image = images + blockIdx.y * pixels;
    double sum = 0.0;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kSumThreads + threadIdx.x; i < pixels;
         i += static_cast<std::size_t>(gridDim.x) * kSumThreads)
        sum += fabsf(image[i]);
    const double total = Reduce(temp).Sum(sum);
    if (threadIdx.x == 0) partials[static_cast<std::size_t>(blockIdx.y) * gridDim.x + blockIdx.x] = total;
}

// floor = float(sum |value| / pixels), as the CPU rounds it.
__global__ void floorKernel(const double* __restrict__ partials, int partialCount, int count, std::size_t pixels,
                            float* __restrict__ floors) {
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= count) return;
    double sum = 0.0;
    for (int p = 0; p < partialCount; ++p) sum += partials[static_cast<std::size_t>(b) * partialCount + p];
    floors[b] = static_cast<float>(sum / static_cast<double>(pixels));
}

struct ClampedImage {
    const float* values;
    int height, width;
    __device__ float operator()(int y, int x) const {
        y = min(max(y, 0), height - 1);
        x = min(max(x, 0), width - 1);
        return values[static_cast<std::size_t>(y) * width + x];
    }
};

// The middle value of the sorted window (what nth_element selects): the
// value with at most `middle` values below it and more than `middle` at or
// below it. Quadratic in the window's size, but only the rare candidates
// that pass the majority test get here.
__device__ float windowMedian(const ClampedImage& at, int y, int x, int half) {
    const int side = 2 * half + 1;
    const int middle = side * side / 2;
    for (int dy = -half; dy <= half; ++dy)
        for (int dx = -half; dx <= half; ++dx) {
            const float v = at(y + dy, x + dx);
            int below = 0, notAbove = 0;
            for (int ey = -half; ey <= half; ++ey)
                for (int ex = -half; ex <= half; ++ex) {
                    const float u = at(y + ey, x + ex);
                    below += u < v;
                    notAbove += u <= v;
                }
            if (below <= middle && notAbove > middle) return v;
        }
    return at(y, x); // only unordered values (NaN) get here
}

// One thread per pixel (a warp along a row, so the warp's rows agree). The
// CPU's test order: the cheap majority count first, the median only where it
// passes; products and differences rounded one by one (no fused
// multiply-add), as the CPU computes them.
__global__ void __launch_bounds__(kTileX * kTileY)
zingerKernel(const float* __restrict__ input, float* __restrict__ output, int height, int width, int half,
             float threshold, float sign, const float* __restrict__ floors, unsigned long long* __restrict__ counts,
             unsigned char* __restrict__ flags) {
    const std::size_t pixels = static_cast<std::size_t>(height) * width;
    const int b = blockIdx.z;
    const ClampedImage at{input + b * pixels, height, width};
    const float floorValue = floors[b];
    const float margin = __fmul_rn(threshold, floorValue);
    const int side = 2 * half + 1;
    const int majority = side * side / 2 + 1;
    const int x = blockIdx.x * kTileX + threadIdx.x;
    for (int y = blockIdx.y * kTileY + threadIdx.y; y < height; y += gridDim.y * kTileY) {
        bool zinger = false;
        if (x < width) {
            const float v = at(y, x);
            const float bound = __fsub_rn(__fmul_rn(sign, v), margin);
            int beyond = 0;
            for (int dy = -half; dy <= half; ++dy)
                for (int dx = -half; dx <= half; ++dx) beyond += __fmul_rn(sign, at(y + dy, x + dx)) < bound;
            if (beyond >= majority) {
                const float m = windowMedian(at, y, x, half);
                zinger = __fmul_rn(sign, __fsub_rn(v, m)) > __fmul_rn(threshold, fmaxf(fabsf(m), floorValue));
                if (zinger) output[b * pixels + static_cast<std::size_t>(y) * width + x] = m;
            }
            if (flags) flags[b * pixels + static_cast<std::size_t>(y) * width + x] = zinger;
        }
        const unsigned found = __ballot_sync(0xffffffffu, zinger);
        if (threadIdx.x == 0 && found) atomicAdd(&counts[b], static_cast<unsigned long long>(__popc(found)));
    }
}

} // namespace

int zingerPartialSums(std::size_t pixels) {
    return static_cast<int>(std::clamp<std::size_t>((pixels + kSumThreads - 1) / kSumThreads, 1, kMaxPartials));
}

void launchZingers(const ZingerLaunch& L, StreamHandle stream) {
    const std::size_t pixels = static_cast<std::size_t>(L.height) * L.width;
    const int partials = zingerPartialSums(pixels);
    TOMO_CUDA_CHECK(cudaMemsetAsync(L.d_counts, 0, static_cast<std::size_t>(L.count) * sizeof(unsigned long long),
                                    stream));
    for (int first = 0; first < L.count; first += kMaxGridZ) {
        const int batch = std::min(kMaxGridZ, L.count - first);
        const std::size_t offset = static_cast<std::size_t>(first) * pixels;
        absSumKernel<<<dim3(partials, batch), kSumThreads, 0, stream>>>(
            L.d_input + offset, pixels, L.d_partialSums + static_cast<std::size_t>(first) * partials);
    }
    floorKernel<<<(L.count + 127) / 128, 128, 0, stream>>>(L.d_partialSums, partials, L.count, pixels, L.d_floors);
    const unsigned rowBlocks = static_cast<unsigned>(std::min((L.height + kTileY - 1) / kTileY, 65535));
    for (int first = 0; first < L.count; first += kMaxGridZ) {
        const int batch = std::min(kMaxGridZ, L.count - first);
        const std::size_t offset = static_cast<std::size_t>(first) * pixels;
        const dim3 grid(static_cast<unsigned>((L.width + kTileX - 1) / kTileX), rowBlocks, batch);
        zingerKernel<<<grid, dim3(kTileX, kTileY), 0, stream>>>(
            L.d_input + offset, L.d_output + offset, L.height, L.width, L.window / 2, L.threshold,
            L.transmission ? 1.0f : -1.0f, L.d_floors + first, L.d_counts + first,
            L.d_flags ? L.d_flags + offset : nullptr);
    }
    TOMO_CUDA_CHECK(cudaGetLastError());
}

std::size_t zingerListScratchBytes(std::size_t pixels) {
    std::size_t bytes = 0;
    TOMO_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, thrust::counting_iterator<int>(0),
                                               static_cast<const unsigned char*>(nullptr), static_cast<int*>(nullptr),
                                               static_cast<int*>(nullptr), static_cast<std::int64_t>(pixels)));
    return bytes;
}

void listZingerIndices(const unsigned char* d_flags, std::size_t pixels, int* d_indices, int* d_listed,
                       void* d_scratch, std::size_t scratchBytes, StreamHandle stream) {
    TOMO_CUDA_CHECK(cub::DeviceSelect::Flagged(d_scratch, scratchBytes, thrust::counting_iterator<int>(0), d_flags,
                                               d_indices, d_listed, static_cast<std::int64_t>(pixels), stream));
}

} // namespace tomo::cuda
