// The gridrec kernels (data flow in gridrec_kernels.h, the method in
// tomo/gridrec.h).
#include "gridrec_kernels.h"

#include "cuda_resources.h"

#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

namespace tomo::cuda {

namespace {

constexpr int kThreads = 256;

int blocksFor(long long items) {
    return static_cast<int>(std::min<long long>((items + kThreads - 1) / kThreads, 65535LL * 32));
}

// threadIdx.x + blockIdx.x * blockDim.x = position n in the row, blockIdx.y
// = projection (grid-stride), blockIdx.z = pair: one complex value each
__global__ void packRowsKernel(PackRowsLaunch P, const float2* __restrict__ fft, float2* __restrict__ rows) {
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= P.rowLength) return;
    const int pair = blockIdx.z;
    for (int p = blockIdx.y; p < P.projections; p += gridDim.y) {
        float2 v = make_float2(0.0f, 0.0f);
        if (n < P.layout.bins) {
            const float w = P.d_weights[p];
            // Row r of the filter's workspace: complex row r / 2, real part
            // for even r, imaginary for odd (filter_kernels.h), bin n at left + n.
            const int r0 = 2 * pair * P.projections + p;
            const float2 a = fft[static_cast<size_t>(r0 >> 1) * P.layout.padded + P.layout.left + n];
            v.x = ((r0 & 1) ? a.y : a.x) * w;
            if (2 * pair + 1 < P.slices) {
                const int r1 = r0 + P.projections;
                const float2 b = fft[static_cast<size_t>(r1 >> 1) * P.layout.padded + P.layout.left + n];
                v.y = ((r1 & 1) ? b.y : b.x) * w;
            }
        }
        rows[(static_cast<size_t>(pair) * P.projections + p) * P.rowLength + n] = v;
    }
}

// threadIdx.x + blockIdx.x * blockDim.x = (row, n) flattened over the new rows
__global__ void extendRowsKernel(const float2* __restrict__ from, int fromLength, float2* __restrict__ to,
                                 int toLength, int bins, long long total) {
    const float scale = 1.0f / static_cast<float>(fromLength);
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long row = i / toLength;
        const int n = static_cast<int>(i - row * toLength);
        float2 v = make_float2(0.0f, 0.0f);
        if (n < bins) {
            v = from[row * fromLength + n];
            v.x *= scale;
            v.y *= scale;
        }
        to[i] = v;
    }
}

// threadIdx.x + blockIdx.x * blockDim.x = sample n = k + lastSample of the row,
// blockIdx.y = canonical row (grid-stride), blockIdx.z = pair
__global__ void phaseKernel(PhaseLaunch P) {
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= P.sampleStride) return;
    const int pair = blockIdx.z;
    const int L = P.rowLength;
    const float2* spectra = reinterpret_cast<const float2*>(P.d_spectra) + static_cast<size_t>(pair) * P.projections * L;
    float2* samples = reinterpret_cast<float2*>(P.d_samples) + static_cast<size_t>(pair) * P.projections * P.sampleStride;
    for (int i = blockIdx.y; i < P.projections; i += gridDim.y) {
        float2 out = make_float2(0.0f, 0.0f);
        if (n <= 2 * P.lastSample) {
            const int k = n - P.lastSample;
            int j = (P.d_reversed[i] ? -k : k) % L; // spectrum index, mod L
            if (j < 0) j += L;
            const float2 v = spectra[static_cast<size_t>(P.d_canonical[i]) * L + j];
            // exp(2 pi i k T / L): whole turns removed in double (k T / L
            // reaches 1e8 turns), the fraction's sine and cosine in float.
            const double turns = static_cast<double>(k) * P.d_turns[i];
            const float f = static_cast<float>(turns - floor(turns));
            float s, c;
            sincospif(2.0f * f, &s, &c);
            const float b = P.d_band[n];
            out = make_float2(b * (v.x * c - v.y * s), b * (v.x * s + v.y * c));
        }
        samples[static_cast<size_t>(i) * P.sampleStride + n] = out;
    }
}

// threadIdx = point in a kGatherTile^2 tile, blockIdx.x = position in the
// heavy-first tile order, blockIdx.y = group of N pairs from `firstPair` (one
// search for the rows within reach serves them all); the kernel table in
// shared memory
template <int N>
__global__ void __launch_bounds__(kGatherTile * kGatherTile) gatherKernel(GatherLaunch P, int firstPair) {
    extern __shared__ float table[];
    for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < 2 * (P.view.tableLast + 1); i += blockDim.x * blockDim.y)
        table[i] = P.view.table[i];
    __syncthreads();
    const int g = P.view.gridSize;
    const int tilesAcross = (P.columns + kGatherTile - 1) / kGatherTile;
    const int tile = P.d_tiles[blockIdx.x];
    const int jx = (tile % tilesAcross) * kGatherTile + threadIdx.x;
    const int jy = (tile / tilesAcross) * kGatherTile + threadIdx.y;
    if (jx >= P.columns || jy >= g) return;
    const int pair = firstPair + static_cast<int>(blockIdx.y) * N;
    gridrec::GatherView v = P.view;
    v.table = table;
    v.samples += P.pairSamples * pair;
    float re[N], im[N];
    gridrec::gatherPoints<N>(v, P.pairSamples, jx, jy, re, im);
    for (int n = 0; n < N; ++n) {
        float2* grid = reinterpret_cast<float2*>(P.d_grid) + static_cast<size_t>(pair + n) * g * g;
        grid[static_cast<size_t>(jy) * P.columns + jx] = make_float2(re[n], im[n]);
    }
}

// The kernel table into shared memory (every thread of the block takes part).
__device__ void loadTable(const gridrec::GatherView& view, float* table) {
    for (int i = threadIdx.x; i < 2 * (view.tableLast + 1); i += blockDim.x) table[i] = view.table[i];
    __syncthreads();
}

// The shared memory loadTable fills: a launch's dynamic share.
std::size_t tableBytes(const gridrec::GatherView& view) {
    return 2 * (static_cast<std::size_t>(view.tableLast) + 1) * sizeof(float);
}

struct CountTaps {
    int taps = 0;
    __host__ __device__ void operator()(size_t, float) { ++taps; }
};

/// Writes tap t at index[t * Stride] (a group's lanes interleaved: Stride
/// kTapGroup; a heavy point's run: 1).
template <int Stride>
struct WriteTaps {
    int* index;
    float* weight;
    int taps = 0;
    __host__ __device__ void operator()(size_t sample, float w) {
        index[static_cast<size_t>(taps) * Stride] = static_cast<int>(sample);
        weight[static_cast<size_t>(taps) * Stride] = w;
        ++taps;
    }
};

// threadIdx.x + blockIdx.x * blockDim.x = point p of the lone slice's half
// grid (jy = p / columns, jx = p % columns); a block's kTapWindow points are
// sorted by their taps, most first, into its slots (order: the point of each
// slot, -1 past the grid), so that a warp's group holds points of like
// counts; widths[group] = the most taps of its points, widths[groups] = 0
// (the scan's end); a heavy point goes to the list and sorts as past the grid
__global__ void __launch_bounds__(kTapWindow) countTapsKernel(GatherLaunch P, int* order, long long* widths,
                                                              long long points, long long groups, HeavyList heavy) {
    using Sort = cub::BlockRadixSort<int, kTapWindow, 1, int>;
    __shared__ typename Sort::TempStorage sortSpace;
    const long long p = blockIdx.x * static_cast<long long>(kTapWindow) + threadIdx.x; // whole blocks
    int taps[1] = {-1};
    int point[1] = {static_cast<int>(p)};
    if (p < points) {
        CountTaps count;
        gridrec::visitPoint(P.view, static_cast<int>(p % P.columns), static_cast<int>(p / P.columns), count);
        taps[0] = count.taps;
        if (count.taps > kHeavyTaps) {
            if (const int h = atomicAdd(heavy.d_count, 1); h < heavy.capacity) {
                heavy.d_points[h] = static_cast<int>(p);
                heavy.d_taps[h] = count.taps;
            }
            taps[0] = -1;
        }
    }
    Sort(sortSpace).SortDescending(taps, point); // thread t: the block's t-th
    order[p] = taps[0] < 0 ? -1 : point[0];
    const int width = __reduce_max_sync(0xffffffffu, taps[0] < 0 ? 0 : taps[0]);
    if (p % kTapGroup == 0) widths[p / kTapGroup] = width;
    if (p == 0) widths[groups] = 0;
}

// threadIdx.x + blockIdx.x * blockDim.x = slot p (of point order[p])
__global__ void fillTapsKernel(GatherLaunch P, TapMatrix M, int* index, float* weight, long long groups) {
    extern __shared__ float table[];
    loadTable(P.view, table);
    const long long p = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (p >= groups * kTapGroup) return;
    const long long group = p / kTapGroup;
    const size_t first = static_cast<size_t>(M.d_offsets[group]) * kTapGroup + p % kTapGroup;
    WriteTaps<kTapGroup> write{index + first, weight + first};
    if (const int point = M.d_order[p]; point >= 0) {
        gridrec::GatherView v = P.view;
        v.table = table;
        gridrec::visitPoint(v, point % P.columns, point / P.columns, write);
    }
    // The group's other points have more: weight 0 (of sample 0) adds nothing.
    const int width = static_cast<int>(M.d_offsets[group + 1] - M.d_offsets[group]);
    while (write.taps < width) write(0, 0.0f);
}

// threadIdx.x + blockIdx.x * blockDim.x = heavy point h
__global__ void fillHeavyTapsKernel(GatherLaunch P, HeavyTaps H, int* index, float* weight) {
    extern __shared__ float table[];
    loadTable(P.view, table);
    const int h = blockIdx.x * blockDim.x + threadIdx.x;
    if (h >= H.count) return;
    const long long first = H.d_offsets[h];
    WriteTaps<1> write{index + first, weight + first};
    gridrec::GatherView v = P.view;
    v.table = table;
    const int point = H.d_points[h];
    gridrec::visitPoint(v, point % P.columns, point / P.columns, write);
}

// blockIdx.x = heavy point h (the most taps first): each thread sums every
// kHeavyThreads-th tap, then the warps' sums by shuffles and the block's in
// warp order
__global__ void __launch_bounds__(kHeavyThreads)
    heavyGatherKernel(HeavyTaps H, const float2* __restrict__ samples, float2* __restrict__ grid) {
    const int h = blockIdx.x;
    const long long end = H.d_offsets[h + 1];
    float re = 0.0f, im = 0.0f;
#pragma unroll 4
    for (long long t = H.d_offsets[h] + threadIdx.x; t < end; t += kHeavyThreads) {
        const float w = __ldg(H.d_weight + t);
        const float2 s = __ldg(samples + __ldg(H.d_index + t));
        re += w * s.x;
        im += w * s.y;
    }
    for (int offset = kTapGroup / 2; offset > 0; offset /= 2) {
        re += __shfl_down_sync(0xffffffffu, re, offset);
        im += __shfl_down_sync(0xffffffffu, im, offset);
    }
    __shared__ float2 warpSums[kHeavyThreads / kTapGroup];
    if (threadIdx.x % kTapGroup == 0) warpSums[threadIdx.x / kTapGroup] = make_float2(re, im);
    __syncthreads();
    if (threadIdx.x == 0) {
        float2 sum = warpSums[0];
        for (int w = 1; w < kHeavyThreads / kTapGroup; ++w) {
            sum.x += warpSums[w].x;
            sum.y += warpSums[w].y;
        }
        grid[H.d_points[h]] = sum;
    }
}

// threadIdx.x + blockIdx.x * blockDim.x = slot p: the sums of the search's
// gather (gridrec::SumSamples) of point order[p] in its order, from the
// matrix; the lanes of a warp read their taps side by side, as many each
__global__ void matrixGatherKernel(TapMatrix M, const float2* __restrict__ samples, float2* __restrict__ grid,
                                   long long groups) {
    const long long p = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (p >= groups * kTapGroup) return;
    const long long group = p / kTapGroup;
    const long long end = M.d_offsets[group + 1] * kTapGroup;
    float re = 0.0f, im = 0.0f;
    // Unrolled: several taps' loads in flight (the samples' reads are scattered).
#pragma unroll 4
    for (long long t = M.d_offsets[group] * kTapGroup + p % kTapGroup; t < end; t += kTapGroup) {
        const float w = __ldg(M.d_weight + t);
        const float2 s = __ldg(samples + __ldg(M.d_index + t));
        re += w * s.x;
        im += w * s.y;
    }
    if (const int point = M.d_order[p]; point >= 0) grid[point] = make_float2(re, im);
}

// threadIdx.x + blockIdx.x * blockDim.x = region column, blockIdx.y = region
// row (grid-stride), blockIdx.z = pair
__global__ void cropKernel(CropLaunch P) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= P.regionWidth) return;
    const int pair = blockIdx.z;
    const int g = P.gridSize;
    const int ix = P.regionX + x;
    int gx = ix - P.shiftX;
    if (gx < 0) gx += g;
    const float dx = P.d_deapodizeX[ix];
    const size_t pixels = static_cast<size_t>(P.regionWidth) * P.regionHeight;
    const float2* grid = reinterpret_cast<const float2*>(P.d_grid) + static_cast<size_t>(pair) * g * g;
    float* first = P.d_out + 2 * pair * pixels;
    const bool second = 2 * pair + 1 < P.slices;
    const size_t realStride = 2 * static_cast<size_t>(g / 2 + 1); // a lone slice's real grid
    for (int y = blockIdx.y; y < P.regionHeight; y += gridDim.y) {
        const int iy = P.regionY + y;
        int gy = iy - P.shiftY;
        if (gy < 0) gy += g;
        const float d = dx * P.d_deapodizeY[iy];
        if (second) {
            const float2 v = grid[static_cast<size_t>(gy) * g + gx];
            first[static_cast<size_t>(y) * P.regionWidth + x] = v.x * d;
            first[pixels + static_cast<size_t>(y) * P.regionWidth + x] = v.y * d;
        } else {
            const float v = reinterpret_cast<const float*>(grid)[gy * realStride + gx];
            first[static_cast<size_t>(y) * P.regionWidth + x] = v * d;
        }
    }
}

} // namespace

void launchPackRows(const PackRowsLaunch& P, StreamHandle stream) {
    const int pairs = (P.slices + 1) / 2;
    const dim3 grid((P.rowLength + kThreads - 1) / kThreads, std::min(P.projections, 65535), pairs);
    packRowsKernel<<<grid, kThreads, 0, stream>>>(P, reinterpret_cast<const float2*>(P.d_fft),
                                                  reinterpret_cast<float2*>(P.d_rows));
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchExtendRows(const float* d_from, int fromLength, float* d_to, int toLength, int bins, int rows,
                      StreamHandle stream) {
    const long long total = static_cast<long long>(rows) * toLength;
    extendRowsKernel<<<blocksFor(total), kThreads, 0, stream>>>(reinterpret_cast<const float2*>(d_from), fromLength,
                                                                reinterpret_cast<float2*>(d_to), toLength, bins, total);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchPhase(const PhaseLaunch& P, StreamHandle stream) {
    const dim3 grid((P.sampleStride + kThreads - 1) / kThreads, std::min(P.projections, 65535), P.pairs);
    phaseKernel<<<grid, kThreads, 0, stream>>>(P);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchGather(const GatherLaunch& P, StreamHandle stream) {
    const std::size_t shared = tableBytes(P.view);
    const dim3 block(kGatherTile, kGatherTile);
    // Groups of kGatherPairs pairs, then of two, then one.
    int pair = 0;
    auto launch = [&](auto pairsPerThread) {
        constexpr int n = decltype(pairsPerThread)::value;
        if (const int groups = (P.pairs - pair) / n; groups > 0) {
            gatherKernel<n><<<dim3(P.tiles, groups), block, shared, stream>>>(P, pair);
            TOMO_CUDA_CHECK(cudaGetLastError());
            pair += groups * n;
        }
    };
    launch(std::integral_constant<int, kGatherPairs>{});
    launch(std::integral_constant<int, 2>{});
    launch(std::integral_constant<int, 1>{});
}

std::size_t countTapsWorkBytes(const GatherLaunch& P) {
    std::size_t bytes = 0;
    TOMO_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const long long*>(nullptr),
                                                  static_cast<long long*>(nullptr), tapGroups(P) + 1));
    return bytes;
}

void launchCountTaps(const GatherLaunch& P, int* d_order, long long* d_widths, long long* d_offsets, void* d_work,
                     std::size_t workBytes, const HeavyList& heavy, StreamHandle stream) {
    const long long groups = tapGroups(P);
    TOMO_CUDA_CHECK(cudaMemsetAsync(heavy.d_count, 0, sizeof(int), stream));
    countTapsKernel<<<static_cast<unsigned>(groups * kTapGroup / kTapWindow), kTapWindow, 0, stream>>>(
        P, d_order, d_widths, lonePoints(P), groups, heavy);
    TOMO_CUDA_CHECK(cudaGetLastError());
    TOMO_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_work, workBytes, d_widths, d_offsets, groups + 1, stream));
}

void launchFillTaps(const GatherLaunch& P, const TapMatrix& M, int* d_index, float* d_weight, StreamHandle stream) {
    const long long groups = tapGroups(P);
    const std::size_t shared = tableBytes(P.view);
    fillTapsKernel<<<blocksFor(groups * kTapGroup), kThreads, shared, stream>>>(P, M, d_index, d_weight, groups);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchFillHeavyTaps(const GatherLaunch& P, const HeavyTaps& H, int* d_index, float* d_weight,
                         StreamHandle stream) {
    if (H.count == 0) return;
    const std::size_t shared = tableBytes(P.view);
    fillHeavyTapsKernel<<<blocksFor(H.count), kThreads, shared, stream>>>(P, H, d_index, d_weight);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchMatrixGather(const GatherLaunch& P, const TapMatrix& M, const HeavyTaps& H, StreamHandle stream) {
    const auto* samples = reinterpret_cast<const float2*>(P.view.samples);
    auto* grid = reinterpret_cast<float2*>(P.d_grid);
    if (H.count > 0) { // first: they take longest
        heavyGatherKernel<<<H.count, kHeavyThreads, 0, stream>>>(H, samples, grid);
        TOMO_CUDA_CHECK(cudaGetLastError());
    }
    const long long groups = tapGroups(P);
    matrixGatherKernel<<<blocksFor(groups * kTapGroup), kThreads, 0, stream>>>(M, samples, grid, groups);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchCrop(const CropLaunch& P, StreamHandle stream) {
    const int pairs = (P.slices + 1) / 2;
    const dim3 grid((P.regionWidth + kThreads - 1) / kThreads, std::min(P.regionHeight, 65535), pairs);
    cropKernel<<<grid, kThreads, 0, stream>>>(P);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
