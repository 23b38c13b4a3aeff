#include "stripe_kernels.h"

#include "cuda_resources.h"

#include <cub/device/device_segmented_sort.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>

namespace tomo::cuda {

namespace {

constexpr int kMaxGridZ = 65535;
constexpr int kMaxGridY = 65535;

// The CPU's sortKey without the index: unsigned order = numeric order
// (negative zero before positive zero, as the CPU sorts them).
__device__ inline std::uint32_t sortKey(float v) {
    const std::uint32_t bits = __float_as_uint(v);
    return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}

__device__ inline float keyValue(std::uint32_t key) {
    return __uint_as_float((key & 0x80000000u) ? key & 0x7fffffffu : ~key);
}

// detail::reflectIndex (half-sample reflection, period 2n).
__device__ inline int reflectIndex(int i, int n) {
    if (i >= 0 && i < n) return i;
    const int period = 2 * n;
    int j = i % period;
    if (j < 0) j += period;
    return j < n ? j : period - 1 - j;
}

// ------------------------------------------------------------ sort keys

constexpr int kTransposeTile = 32, kTransposeRows = 8;

// A shared-memory transpose: rows of the sinogram in, column segments out.
__global__ void __launch_bounds__(kTransposeTile * kTransposeRows)
sortKeysKernel(const float* __restrict__ sinograms, int projections, int columns, std::uint32_t* __restrict__ keys,
               int* __restrict__ index) {
    __shared__ std::uint32_t tile[kTransposeTile][kTransposeTile + 1];
    const std::size_t b = blockIdx.z;
    const int c0 = blockIdx.x * kTransposeTile, a0 = blockIdx.y * kTransposeTile;
    const float* sinogram = sinograms + b * projections * columns;
    for (int i = threadIdx.y; i < kTransposeTile; i += kTransposeRows) {
        const int a = a0 + i, c = c0 + threadIdx.x;
        if (a < projections && c < columns)
            tile[i][threadIdx.x] = sortKey(sinogram[static_cast<std::size_t>(a) * columns + c]);
    }
    __syncthreads();
    for (int i = threadIdx.y; i < kTransposeTile; i += kTransposeRows) {
        const int c = c0 + i, a = a0 + threadIdx.x;
        if (c < columns && a < projections) {
            const std::size_t out = (b * columns + c) * projections + a;
            keys[out] = tile[threadIdx.x][i];
            index[out] = a;
        }
    }
}

struct SegmentStart {
    std::int64_t length;
    __host__ __device__ std::int64_t operator()(std::int64_t segment) const { return segment * length; }
};

auto segmentStarts(int projections) {
    return thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), SegmentStart{projections});
}

// ------------------------------------------------------ median across columns

// A block: kMedianRanks ranks x kMedianColumns columns of output, the
// ranks' values over the columns the windows need in shared memory (read
// along the ranks, coalesced). A thread: kMedianOutputs neighbouring
// outputs of one rank. Each value of their windows' union is a candidate;
// its counts of values below / not above it slide over the outputs'
// windows, and the candidate with at most `half` below and more than
// `half` not above is the median (exactly the sorted window's middle value).
constexpr int kMedianRanks = 64;
constexpr int kMedianColumns = 32;
constexpr int kMedianOutputs = 16;
constexpr int kMedianThreads = kMedianRanks * kMedianColumns / kMedianOutputs;

// Row stride of the tile: 1 more than a multiple of 16, so the warp's 16
// ranks x 2 threads fall in 32 different banks.
int medianTileStride(int window) {
    const int span = kMedianColumns + window - 1;
    return (span - 1 + 15) / 16 * 16 + 1;
}

std::size_t medianTileBytes(int window) {
    return static_cast<std::size_t>(kMedianRanks) * medianTileStride(window) * sizeof(float);
}

__global__ void __launch_bounds__(kMedianThreads)
medianTileKernel(const std::uint32_t* __restrict__ sorted, int projections, int columns, int window, int stride,
                 float* __restrict__ smoothed) {
    extern __shared__ float tile[]; // [rank][window column]
    const std::size_t b = blockIdx.z;
    const int c0 = blockIdx.x * kMedianColumns, r0 = blockIdx.y * kMedianRanks;
    const int half = window / 2, span = kMedianColumns + window - 1;
    const std::uint32_t* keys = sorted + b * columns * projections;
    for (int e = threadIdx.x; e < span * kMedianRanks; e += kMedianThreads) {
        const int i = e % kMedianRanks, j = e / kMedianRanks;
        const int r = r0 + i, c = reflectIndex(c0 - half + j, columns);
        tile[i * stride + j] = r < projections ? keyValue(keys[static_cast<std::size_t>(c) * projections + r]) : 0.0f;
    }
    __syncthreads();
    const int i = threadIdx.x / 2, first = (threadIdx.x % 2) * kMedianOutputs;
    const int r = r0 + i;
    if (r >= projections) return;
    const float* row = tile + i * stride + first; // output k's window: row[k ... k + window - 1]
    float result[kMedianOutputs];
#pragma unroll
    for (int k = 0; k < kMedianOutputs; ++k) result[k] = row[k + half]; // kept only for unordered values (NaN)
    for (int x = 0; x < kMedianOutputs + window - 1; ++x) {
        const float v = row[x];
        int below = 0, notAbove = 0;
        for (int y = 0; y < window; ++y) {
            const float u = row[y];
            below += u < v;
            notAbove += u <= v;
        }
#pragma unroll
        for (int k = 0; k < kMedianOutputs; ++k) {
            if (k > 0) {
                const float leaving = row[k - 1], entering = row[k + window - 1];
                below += static_cast<int>(entering < v) - static_cast<int>(leaving < v);
                notAbove += static_cast<int>(entering <= v) - static_cast<int>(leaving <= v);
            }
            if (x >= k && x < k + window && below <= half && notAbove > half) result[k] = v;
        }
    }
#pragma unroll
    for (int k = 0; k < kMedianOutputs; ++k) {
        const int c = c0 + first + k;
        if (c < columns) smoothed[(b * columns + c) * projections + r] = result[k];
    }
}

// Windows too wide for a shared-memory tile: one output per thread, the
// window read from global memory (the same selection rule).
__global__ void medianWideKernel(const std::uint32_t* __restrict__ sorted, int projections, int columns, int window,
                                 std::size_t firstSegment, float* __restrict__ smoothed) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= projections) return;
    const std::size_t segment = firstSegment + blockIdx.y; // b * columns + c
    const std::size_t b = segment / columns;
    const int c = static_cast<int>(segment % columns), half = window / 2;
    const std::uint32_t* keys = sorted + b * columns * projections;
    auto at = [&](int k) {
        return keyValue(keys[static_cast<std::size_t>(reflectIndex(c - half + k, columns)) * projections + r]);
    };
    float result = at(half);
    for (int x = 0; x < window; ++x) {
        const float v = at(x);
        int below = 0, notAbove = 0;
        for (int y = 0; y < window; ++y) {
            const float u = at(y);
            below += u < v;
            notAbove += u <= v;
        }
        if (below <= half && notAbove > half) {
            result = v;
            break;
        }
    }
    smoothed[segment * projections + r] = result;
}

// ---------------------------------------------------------- large stripes

constexpr int kWarp = 32;
constexpr int kRatioThreads = 256;

// One warp per column segment: the double sums over the kept ranks.
__global__ void __launch_bounds__(kRatioThreads)
ratioKernel(const std::uint32_t* __restrict__ sorted, const float* __restrict__ smoothed, std::size_t segments,
            int projections, int drop, float* __restrict__ ratios) {
    const std::size_t segment = (static_cast<std::size_t>(blockIdx.x) * kRatioThreads + threadIdx.x) / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (segment >= segments) return; // the whole warp
    const std::uint32_t* keys = sorted + segment * projections;
    const float* values = smoothed + segment * projections;
    double sortedSum = 0.0, smoothedSum = 0.0;
    for (int r = drop + lane; r < projections - drop; r += kWarp) {
        sortedSum += keyValue(keys[r]);
        smoothedSum += values[r];
    }
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
        sortedSum += __shfl_down_sync(0xffffffffu, sortedSum, offset);
        smoothedSum += __shfl_down_sync(0xffffffffu, smoothedSum, offset);
    }
    if (lane == 0) ratios[segment] = smoothedSum != 0.0 ? static_cast<float>(sortedSum / smoothedSum) : 1.0f;
}

constexpr int kElementThreads = 256;

__global__ void __launch_bounds__(kElementThreads)
divideKernel(float* __restrict__ sinograms, const float* __restrict__ ratios, std::size_t total, int projections,
             int columns) {
    const std::size_t perSinogram = static_cast<std::size_t>(projections) * columns;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kElementThreads + threadIdx.x; i < total;
         i += static_cast<std::size_t>(gridDim.x) * kElementThreads) {
        const std::size_t b = i / perSinogram;
        const int c = static_cast<int>(i % columns);
        sinograms[i] = __fdiv_rn(sinograms[i], ratios[b * columns + c]);
    }
}

// blockIdx.x = column segment, blockIdx.y (strided) = a group of ranks.
__global__ void __launch_bounds__(kElementThreads)
sortBackKernel(const float* __restrict__ smoothed, const int* __restrict__ sortedIndex,
               const std::uint8_t* __restrict__ take, float* __restrict__ sinograms, int projections, int columns) {
    const std::size_t segment = blockIdx.x;
    if (take && !take[segment]) return;
    const std::size_t b = segment / columns;
    const int c = static_cast<int>(segment % columns);
    float* sinogram = sinograms + b * projections * columns;
    for (int r = blockIdx.y * kElementThreads + threadIdx.x; r < projections; r += gridDim.y * kElementThreads) {
        const std::size_t from = segment * projections + r;
        sinogram[static_cast<std::size_t>(sortedIndex[from]) * columns + c] = smoothed[from];
    }
}

// ----------------------------------------------------------- dead stripes

constexpr int kSmoothing = 10; // removeDeadStripes' running mean
constexpr int kBefore = kSmoothing / 2, kAfter = kSmoothing - kBefore - 1;

// One thread per column (a warp reads a row's neighbouring columns), the
// CPU's running double sum step by step, so the sums are the CPU's.
__global__ void __launch_bounds__(kElementThreads)
deadDiffKernel(const float* __restrict__ sinograms, std::size_t segments, int projections, int columns,
               float* __restrict__ diffs, std::uint32_t* __restrict__ diffKeys) {
    const std::size_t segment = static_cast<std::size_t>(blockIdx.x) * kElementThreads + threadIdx.x;
    if (segment >= segments) return;
    const std::size_t b = segment / columns;
    const int c = static_cast<int>(segment % columns);
    const float* column = sinograms + b * projections * columns + c;
    auto at = [&](int a) {
        return static_cast<double>(column[static_cast<std::size_t>(reflectIndex(a, projections)) * columns]);
    };
    double windowSum = 0.0;
    for (int a = -kBefore; a <= kAfter; ++a) windowSum += at(a);
    double sum = 0.0;
    for (int a = 0; a < projections; ++a) {
        sum += fabs(at(a) - windowSum / kSmoothing);
        windowSum += at(a + kAfter + 1) - at(a - kBefore);
    }
    const float diff = static_cast<float>(sum);
    diffs[segment] = diff;
    diffKeys[segment] = sortKey(diff);
}

// blockIdx.x: columns, blockIdx.y (strided): rows of the batch. Marked
// columns read only unmarked ones, so rows need no ordering.
__global__ void __launch_bounds__(kElementThreads)
interpolateKernel(float* __restrict__ sinograms, const ColumnNeighbours* __restrict__ neighbours, int rows,
                  int projections, int columns) {
    const int c = blockIdx.x * kElementThreads + threadIdx.x;
    if (c >= columns) return;
    for (int row = blockIdx.y; row < rows; row += gridDim.y) {
        const ColumnNeighbours n = neighbours[static_cast<std::size_t>(row / projections) * columns + c];
        if (n.left == kColumnKept) continue;
        float* line = sinograms + static_cast<std::size_t>(row) * columns;
        float v;
        if (n.left < 0)
            v = line[n.right];
        else if (n.right >= columns)
            v = line[n.left];
        else {
            const float w = __fdiv_rn(static_cast<float>(c - n.left), static_cast<float>(n.right - n.left));
            v = __fadd_rn(__fmul_rn(__fsub_rn(1.0f, w), line[n.left]), __fmul_rn(w, line[n.right]));
        }
        line[c] = v;
    }
}

unsigned blocksFor(std::size_t threads, int perBlock) {
    return static_cast<unsigned>(std::min<std::size_t>((threads + perBlock - 1) / perBlock, 1u << 20));
}

} // namespace

void launchColumnSortKeys(const float* d_sinograms, SinogramBatch batch, std::uint32_t* d_keys, int* d_index,
                          StreamHandle stream) {
    const std::size_t perSinogram = static_cast<std::size_t>(batch.projections) * batch.columns;
    for (int first = 0; first < batch.count; first += kMaxGridZ) {
        const dim3 grid((batch.columns + kTransposeTile - 1) / kTransposeTile,
                        (batch.projections + kTransposeTile - 1) / kTransposeTile,
                        std::min(kMaxGridZ, batch.count - first));
        const std::size_t offset = first * perSinogram;
        sortKeysKernel<<<grid, dim3(kTransposeTile, kTransposeRows), 0, stream>>>(
            d_sinograms + offset, batch.projections, batch.columns, d_keys + offset, d_index + offset);
    }
    TOMO_CUDA_CHECK(cudaGetLastError());
}

std::size_t columnSortScratchBytes(SinogramBatch batch) {
    std::size_t bytes = 0;
    const auto starts = segmentStarts(batch.projections);
    TOMO_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(
        nullptr, bytes, static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr),
        static_cast<const int*>(nullptr), static_cast<int*>(nullptr), static_cast<std::int64_t>(batch.values()),
        static_cast<std::int64_t>(batch.count) * batch.columns, starts, starts + 1));
    return bytes;
}

void sortColumns(const std::uint32_t* d_keysIn, std::uint32_t* d_keysOut, const int* d_indexIn, int* d_indexOut,
                 SinogramBatch batch, void* d_scratch, std::size_t scratchBytes, StreamHandle stream) {
    const auto starts = segmentStarts(batch.projections);
    TOMO_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(
        d_scratch, scratchBytes, d_keysIn, d_keysOut, d_indexIn, d_indexOut, static_cast<std::int64_t>(batch.values()),
        static_cast<std::int64_t>(batch.count) * batch.columns, starts, starts + 1, stream));
}

void launchMedianAcrossColumns(const std::uint32_t* d_sortedKeys, SinogramBatch batch, int window, float* d_smoothed,
                               StreamHandle stream) {
    const std::size_t perSinogram = static_cast<std::size_t>(batch.projections) * batch.columns;
    const std::size_t tileBytes = medianTileBytes(window);
    int device = 0, sharedLimit = 0;
    TOMO_CUDA_CHECK(cudaGetDevice(&device));
    TOMO_CUDA_CHECK(cudaDeviceGetAttribute(&sharedLimit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (tileBytes <= static_cast<std::size_t>(sharedLimit)) {
        if (tileBytes > 48 * 1024)
            TOMO_CUDA_CHECK(cudaFuncSetAttribute(medianTileKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(tileBytes)));
        for (int first = 0; first < batch.count; first += kMaxGridZ) {
            const dim3 grid((batch.columns + kMedianColumns - 1) / kMedianColumns,
                            (batch.projections + kMedianRanks - 1) / kMedianRanks,
                            std::min(kMaxGridZ, batch.count - first));
            const std::size_t offset = first * perSinogram;
            medianTileKernel<<<grid, kMedianThreads, tileBytes, stream>>>(
                d_sortedKeys + offset, batch.projections, batch.columns, window, medianTileStride(window),
                d_smoothed + offset);
        }
    } else {
        const std::size_t segments = static_cast<std::size_t>(batch.count) * batch.columns;
        for (std::size_t first = 0; first < segments; first += kMaxGridY) {
            const dim3 grid((batch.projections + 127) / 128,
                            static_cast<unsigned>(std::min<std::size_t>(kMaxGridY, segments - first)));
            medianWideKernel<<<grid, 128, 0, stream>>>(d_sortedKeys, batch.projections, batch.columns, window, first,
                                                       d_smoothed);
        }
    }
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchLargeStripeRatios(const std::uint32_t* d_sortedKeys, const float* d_smoothed, SinogramBatch batch,
                             int drop, float* d_ratios, StreamHandle stream) {
    const std::size_t segments = static_cast<std::size_t>(batch.count) * batch.columns;
    const unsigned blocks = static_cast<unsigned>((segments * kWarp + kRatioThreads - 1) / kRatioThreads);
    ratioKernel<<<blocks, kRatioThreads, 0, stream>>>(d_sortedKeys, d_smoothed, segments, batch.projections, drop,
                                                      d_ratios);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchDivideColumns(float* d_sinograms, const float* d_ratios, SinogramBatch batch, StreamHandle stream) {
    divideKernel<<<blocksFor(batch.values(), kElementThreads), kElementThreads, 0, stream>>>(
        d_sinograms, d_ratios, batch.values(), batch.projections, batch.columns);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchSortBack(const float* d_smoothed, const int* d_sortedIndex, const std::uint8_t* d_take, float* d_sinograms,
                    SinogramBatch batch, StreamHandle stream) {
    const unsigned segments = static_cast<unsigned>(batch.count) * static_cast<unsigned>(batch.columns);
    const unsigned rankGroups =
        static_cast<unsigned>(std::min((batch.projections + kElementThreads - 1) / kElementThreads, kMaxGridY));
    sortBackKernel<<<dim3(segments, rankGroups), kElementThreads, 0, stream>>>(d_smoothed, d_sortedIndex, d_take,
                                                                              d_sinograms, batch.projections,
                                                                              batch.columns);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchDeadStripeDiffs(const float* d_sinograms, SinogramBatch batch, float* d_diffs, std::uint32_t* d_diffKeys,
                           StreamHandle stream) {
    const std::size_t segments = static_cast<std::size_t>(batch.count) * batch.columns;
    deadDiffKernel<<<static_cast<unsigned>((segments + kElementThreads - 1) / kElementThreads), kElementThreads, 0,
                     stream>>>(d_sinograms, segments, batch.projections, batch.columns, d_diffs, d_diffKeys);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchInterpolateColumns(float* d_sinograms, const ColumnNeighbours* d_neighbours, SinogramBatch batch,
                              StreamHandle stream) {
    const int rows = batch.count * batch.projections;
    const dim3 grid((batch.columns + kElementThreads - 1) / kElementThreads, std::min(rows, kMaxGridY));
    interpolateKernel<<<grid, kElementThreads, 0, stream>>>(d_sinograms, d_neighbours, rows, batch.projections,
                                                           batch.columns);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
