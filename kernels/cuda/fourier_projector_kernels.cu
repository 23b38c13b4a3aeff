// The Fourier projector pair's kernels (data flow in
// fourier_projector_kernels.h): the adjoints of gridrec's steps and the
// conversions between the pair's lane groups and complex pairs of slices.
#include "fourier_projector_kernels.h"

#include "cuda_resources.h"

#include "tomo/gridrec_gather.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace tomo::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxPairs = 2; // a group of 4 lanes

int blocksFor(long long items) {
    return static_cast<int>(std::clamp<long long>((items + kThreads - 1) / kThreads, 1, 4096));
}

/// Slice `lane` of a group's element (0 for the lanes past `valid`).
__device__ __forceinline__ float laneOf(const float* group, std::size_t element, int lanes, int valid, int lane) {
    return lane < valid ? group[element * lanes + lane] : 0.0f;
}

// threadIdx.x + blockIdx.x * blockDim.x = position n in the row, blockIdx.y
// = projection (grid-stride), blockIdx.z = pair
__global__ void packRowsKernel(FourierTables T, const float* __restrict__ group, int lanes, int valid,
                               float2* __restrict__ rows) {
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= T.rowLength) return;
    const int pair = blockIdx.z;
    for (int p = blockIdx.y; p < T.projections; p += gridDim.y) {
        float2 v = make_float2(0.0f, 0.0f);
        if (n < T.bins) {
            const std::size_t e = static_cast<std::size_t>(p) * T.bins + n;
            v = make_float2(laneOf(group, e, lanes, valid, 2 * pair), laneOf(group, e, lanes, valid, 2 * pair + 1));
        }
        rows[(static_cast<std::size_t>(pair) * T.projections + p) * T.rowLength + n] = v;
    }
}

// threadIdx.x + blockIdx.x * blockDim.x = grid column gx, blockIdx.y = grid
// row gy (grid-stride); every pair of the group. Grid point (gx, gy) is pixel
// ((gx + shiftX) mod G, (gy + shiftY) mod G) where that lies on the slice.
__global__ void placeImageKernel(FourierTables T, const float* __restrict__ group, int lanes, int valid,
                                 float2* __restrict__ grid) {
    const int gx = blockIdx.x * blockDim.x + threadIdx.x;
    const int g = T.gridSize;
    if (gx >= g) return;
    const int pairs = (valid + 1) / 2;
    const int ix = gx + T.shiftX < g ? gx + T.shiftX : gx + T.shiftX - g;
    for (int gy = blockIdx.y; gy < g; gy += gridDim.y) {
        const int iy = gy + T.shiftY < g ? gy + T.shiftY : gy + T.shiftY - g;
        const bool inside = ix < T.width && iy < T.height;
        const float d = inside ? T.d_deapodizeX[ix] * T.d_deapodizeY[iy] : 0.0f;
        const std::size_t e = static_cast<std::size_t>(iy) * T.width + ix;
        for (int q = 0; q < pairs; ++q) {
            float2 v = make_float2(0.0f, 0.0f);
            if (inside)
                v = make_float2(laneOf(group, e, lanes, valid, 2 * q) * d, laneOf(group, e, lanes, valid, 2 * q + 1) * d);
            grid[(static_cast<std::size_t>(q) * g + gy) * g + gx] = v;
        }
    }
}

// threadIdx.x + blockIdx.x * blockDim.x = sample n = k + lastSample of the
// row, blockIdx.y = canonical row (grid-stride); every pair; the kernel
// table in shared memory. The window is the spreading's (gridrec_cpu.cpp,
// spreadRow): jx0 = floor(ux - W/2) + 1 and W points on, the same in y, the
// grid indices round the torus; the positions in double (they reach 2G cells).
__global__ void interpolateKernel(FourierTables T, const float2* __restrict__ grid, int pairs,
                                  float2* __restrict__ samples) {
    extern __shared__ float table[];
    for (int i = threadIdx.x; i < 2 * (T.tableLast + 1); i += blockDim.x) table[i] = T.d_table[i];
    __syncthreads();
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= T.sampleStride) return;
    const int g = T.gridSize;
    const int w = T.kernelWidth;
    const std::size_t gridValues = static_cast<std::size_t>(g) * g;
    const std::size_t pairSamples = static_cast<std::size_t>(T.projections) * T.sampleStride;
    for (int i = blockIdx.y; i < T.projections; i += gridDim.y) {
        float2 out[kMaxPairs] = {make_float2(0.0f, 0.0f), make_float2(0.0f, 0.0f)};
        if (n <= 2 * T.lastSample) {
            const int k = n - T.lastSample;
            const double ux = k * T.d_dirX[i];
            const double uy = k * T.d_dirY[i];
            const int jx0 = static_cast<int>(floor(ux - T.halfWidth)) + 1;
            const int jy0 = static_cast<int>(floor(uy - T.halfWidth)) + 1;
            const float dx0 = static_cast<float>(jx0 - ux);
            const float dy0 = static_cast<float>(jy0 - uy);
            int gx0 = jx0 % g;
            if (gx0 < 0) gx0 += g;
            int gy = jy0 % g;
            if (gy < 0) gy += g;
            for (int v = 0; v < w; ++v, gy = gy + 1 == g ? 0 : gy + 1) {
                const float wy = gridrec::kernelWeight(table, T.tableLast, dy0 + static_cast<float>(v));
                const float2* row = grid + static_cast<std::size_t>(gy) * g;
                float2 sum[kMaxPairs] = {make_float2(0.0f, 0.0f), make_float2(0.0f, 0.0f)};
                for (int t = 0, gx = gx0; t < w; ++t, gx = gx + 1 == g ? 0 : gx + 1) {
                    const float wx = gridrec::kernelWeight(table, T.tableLast, dx0 + static_cast<float>(t));
                    for (int q = 0; q < pairs; ++q) {
                        const float2 s = __ldg(row + q * gridValues + gx);
                        sum[q].x += wx * s.x;
                        sum[q].y += wx * s.y;
                    }
                }
                for (int q = 0; q < pairs; ++q) {
                    out[q].x += wy * sum[q].x;
                    out[q].y += wy * sum[q].y;
                }
            }
        }
        for (int q = 0; q < pairs; ++q)
            samples[q * pairSamples + static_cast<std::size_t>(i) * T.sampleStride + n] = out[q];
    }
}

// threadIdx.x + blockIdx.x * blockDim.x = spectrum bin j, blockIdx.y =
// acquisition row p (grid-stride); every pair. The phase step read bin j
// for the k of its canonical row i with (reversed ? -k : k) = j mod L: here
// the k = m + t L, m = (reversed ? -j : j) mod L, within -last..last (at
// most four: last < 2L), each band[n] conj(phase) sample[i][n], the phase
// computed as launchPhase does.
__global__ void foldKernel(FourierTables T, const float2* __restrict__ samples, int pairs, float2* __restrict__ rows) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int L = T.rowLength;
    if (j >= L) return;
    const int last = T.lastSample;
    const std::size_t pairSamples = static_cast<std::size_t>(T.projections) * T.sampleStride;
    for (int p = blockIdx.y; p < T.projections; p += gridDim.y) {
        const int i = T.d_rowOf[p];
        const int m = T.d_reversed[i] && j != 0 ? L - j : j;
        const double turnsPerK = T.d_turns[i];
        const float2* row = samples + static_cast<std::size_t>(i) * T.sampleStride; // sample n = k + last
        float2 sum[kMaxPairs] = {make_float2(0.0f, 0.0f), make_float2(0.0f, 0.0f)};
        for (int k = m - 2 * L; k <= last; k += L) {
            if (k < -last) continue;
            const double turns = static_cast<double>(k) * turnsPerK;
            const float f = static_cast<float>(turns - floor(turns));
            float s, c;
            sincospif(2.0f * f, &s, &c);
            const float b = T.d_band[k + last];
            for (int q = 0; q < pairs; ++q) {
                const float2 v = row[q * pairSamples + (k + last)];
                sum[q].x += b * (v.x * c + v.y * s);
                sum[q].y += b * (v.y * c - v.x * s);
            }
        }
        for (int q = 0; q < pairs; ++q) rows[(static_cast<std::size_t>(q) * T.projections + p) * L + j] = sum[q];
    }
}

// A grid-stride pass over the elements angle * bins + bin of the group's
// sinograms (S lanes); with data, the block's sums per lane of (b - A x)^2,
// added in a fixed order (deterministic), into partial[block][lane].
template <int S>
__global__ void __launch_bounds__(kThreads) unpackRowsKernel(FourierTables T, UnpackLaunch U) {
    const float2* rows = reinterpret_cast<const float2*>(U.d_rows);
    const std::size_t elements = static_cast<std::size_t>(T.projections) * T.bins;
    const std::size_t pairRows = static_cast<std::size_t>(T.projections) * T.rowLength;
    double squares[S];
    for (int j = 0; j < S; ++j) squares[j] = 0.0;
    for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < elements;
         e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t p = e / T.bins;
        const std::size_t at = p * T.rowLength + (e - p * T.bins);
        const float weight = U.d_rowWeights ? U.d_rowWeights[e] : 1.0f;
#pragma unroll
        for (int j = 0; j < S; ++j) {
            float v = 0.0f;
            if (j < U.valid) {
                const float2 c = rows[(j / 2) * pairRows + at];
                v = j % 2 ? c.y : c.x;
                if (U.d_data) {
                    const float r = U.d_data[e * S + j] - v;
                    squares[j] += static_cast<double>(r) * r;
                    v = weight * r;
                }
            }
            U.d_out[e * S + j] = v;
        }
    }
    if (!U.d_data) return;
    __shared__ double warps[kThreads / 32][S];
#pragma unroll
    for (int j = 0; j < S; ++j)
        for (int offset = 16; offset > 0; offset /= 2) squares[j] += __shfl_down_sync(0xffffffffu, squares[j], offset);
    if (threadIdx.x % 32 == 0)
        for (int j = 0; j < S; ++j) warps[threadIdx.x / 32][j] = squares[j];
    __syncthreads();
    if (threadIdx.x < S) {
        double sum = 0.0;
        for (int w = 0; w < kThreads / 32; ++w) sum += warps[w][threadIdx.x];
        U.d_partial[static_cast<std::size_t>(blockIdx.x) * S + threadIdx.x] = sum;
    }
}

// A grid-stride pass over the pixels of the group; every lane is clamped,
// as the Joseph pair's step does (the lanes past `valid` move by 0).
__global__ void stepKernel(FourierTables T, const float* __restrict__ plain, int lanes, int valid, SliceScalars steps,
                           const float* __restrict__ columnWeights, float lower, float upper, float* group) {
    const std::size_t pixels = static_cast<std::size_t>(T.width) * T.height;
    for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < pixels;
         e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float w = columnWeights ? columnWeights[e] : 1.0f;
        for (int j = 0; j < lanes; ++j) {
            const float delta = j < valid ? steps.v[j] * w * plain[j * pixels + e] : 0.0f;
            group[e * lanes + j] = fminf(fmaxf(group[e * lanes + j] + delta, lower), upper);
        }
    }
}

std::size_t tableBytes(const FourierTables& T) { return 2 * (static_cast<std::size_t>(T.tableLast) + 1) * sizeof(float); }

} // namespace

void launchPackRows(const FourierTables& T, const float* d_group, int lanes, int valid, float* d_rows,
                    StreamHandle stream) {
    const dim3 grid((T.rowLength + kThreads - 1) / kThreads, std::min(T.projections, 65535), (valid + 1) / 2);
    packRowsKernel<<<grid, kThreads, 0, stream>>>(T, d_group, lanes, valid, reinterpret_cast<float2*>(d_rows));
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchPlaceImage(const FourierTables& T, const float* d_group, int lanes, int valid, float* d_grid,
                      StreamHandle stream) {
    const dim3 grid((T.gridSize + kThreads - 1) / kThreads, std::min(T.gridSize, 65535));
    placeImageKernel<<<grid, kThreads, 0, stream>>>(T, d_group, lanes, valid, reinterpret_cast<float2*>(d_grid));
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchInterpolate(const FourierTables& T, const float* d_grid, int pairs, float* d_samples, StreamHandle stream) {
    const dim3 grid((T.sampleStride + kThreads - 1) / kThreads, std::min(T.projections, 65535));
    interpolateKernel<<<grid, kThreads, tableBytes(T), stream>>>(T, reinterpret_cast<const float2*>(d_grid), pairs,
                                                                 reinterpret_cast<float2*>(d_samples));
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchFold(const FourierTables& T, const float* d_samples, int pairs, float* d_rows, StreamHandle stream) {
    const dim3 grid((T.rowLength + kThreads - 1) / kThreads, std::min(T.projections, 65535));
    foldKernel<<<grid, kThreads, 0, stream>>>(T, reinterpret_cast<const float2*>(d_samples), pairs,
                                              reinterpret_cast<float2*>(d_rows));
    TOMO_CUDA_CHECK(cudaGetLastError());
}

int unpackBlocks(const FourierTables& T) {
    return dotBlocks(static_cast<std::size_t>(T.projections) * T.bins); // what the pair's partial sums hold
}

void launchUnpackRows(const FourierTables& T, const UnpackLaunch& U, StreamHandle stream) {
    const int blocks = unpackBlocks(T);
    if (U.lanes == 4) unpackRowsKernel<4><<<blocks, kThreads, 0, stream>>>(T, U);
    else if (U.lanes == 2) unpackRowsKernel<2><<<blocks, kThreads, 0, stream>>>(T, U);
    else unpackRowsKernel<1><<<blocks, kThreads, 0, stream>>>(T, U);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchStep(const FourierTables& T, const float* d_plain, int lanes, int valid, const SliceScalars& steps,
                const float* d_columnWeights, float lower, float upper, float* d_group, StreamHandle stream) {
    stepKernel<<<blocksFor(static_cast<long long>(T.width) * T.height), kThreads, 0, stream>>>(
        T, d_plain, lanes, valid, steps, d_columnWeights, lower, upper, d_group);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
