// The CUDA projector pair's projections: Joseph's forward projector (one
// thread per ray) and its transpose (one thread per two pixels), on
// 1, 2 or 4 interleaved slices, with SIRT's residual and update fused into
// their last step. The arithmetic is core/src/recon/joseph.h's, the same the
// CPU pair runs, so both kernels build the same matrix bit for bit.
//
// Hopper: every access is one float/float2/float4 of S lanes (16-byte loads
// for 4 slices); a ray's two pixels on a line and a pixel's two bins are
// neighbours, so a warp's 32 rays (or pixels) read a contiguous run of
// memory; the column projections read a transposed copy of the image, so
// their runs are contiguous too. Projection constants are read from shared
// memory (the back kernel) or once per warp (the forward kernel).
#include "projector_kernels.h"

#include "cuda_resources.h"
#include "recon/joseph.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace tomo::cuda {

namespace {

using joseph::Lanes;
using joseph::Projection;

constexpr int kForwardBins = 32;        // threadIdx.x: bins of a warp
constexpr int kForwardProjections = 8;  // threadIdx.y: a warp per projection
constexpr int kForwardThreads = kForwardBins * kForwardProjections;
constexpr int kBackWidth = 32;          // threadIdx.x: columns of a tile
constexpr int kBackRows = 8;            // threadIdx.y: rows y and y + 8 of a 32 x 16 tile
constexpr int kBackTileRows = 2 * kBackRows;
constexpr int kBackThreads = kBackWidth * kBackRows;
constexpr int kBackChunk = 256;         // projections' constants staged in shared memory at once (8 KiB)

/// Sums each lane's `value` over the block (kForwardThreads threads) in a
/// fixed order and writes them to out[lane] (thread 0).
template <int S>
__device__ void blockSum(double (&value)[S], double* out) {
    __shared__ double warps[kForwardProjections][S];
    for (int j = 0; j < S; ++j)
        for (int offset = 16; offset > 0; offset /= 2) value[j] += __shfl_down_sync(0xffffffffu, value[j], offset);
    if (threadIdx.x == 0)
        for (int j = 0; j < S; ++j) warps[threadIdx.y][j] = value[j];
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0)
        for (int j = 0; j < S; ++j) {
            double sum = 0.0;
            for (int w = 0; w < kForwardProjections; ++w) sum += warps[w][j];
            out[j] = sum;
        }
}

// threadIdx.x = bin (blockIdx.x * 32 + x), threadIdx.y = projection
// (blockIdx.y * 8 + y): a warp follows 32 neighbouring rays of one
// projection line by line.
template <int S, bool Residual>
__global__ void __launch_bounds__(kForwardThreads) forwardKernel(ForwardLaunch L) {
    const JosephGeometry& g = L.geometry;
    const int k = static_cast<int>(blockIdx.x) * kForwardBins + static_cast<int>(threadIdx.x);
    const int p = static_cast<int>(blockIdx.y) * kForwardProjections + static_cast<int>(threadIdx.y);
    const bool valid = k < g.bins && p < g.projections;
    Lanes<S> acc = joseph::zeroLanes<S>();
    if (valid) {
        const Projection q = g.d_projections[p];
        const bool rows = q.rows != 0.0f;
        const float* lines = rows ? L.d_image : L.d_transposed;
        const int along = rows ? g.width : g.height, count = rows ? g.height : g.width;
        const float kf = static_cast<float>(k);
        int first = 0, last = 0;
        joseph::rayLines(q, kf, along, count, first, last);
        for (int line = first; line < last; ++line) {
            const float inner = fmaf(static_cast<float>(line), q.lineCoef, q.offset);
            joseph::raySample<S>(acc, lines + static_cast<std::size_t>(line) * along * S, along, q, kf, inner);
        }
    }
    const std::size_t at = (static_cast<std::size_t>(p) * g.bins + k) * S;
    if constexpr (Residual) {
        double squares[S];
        for (int j = 0; j < S; ++j) squares[j] = 0.0;
        if (valid) {
            const Lanes<S> data = joseph::load<S>(L.d_data + at);
            const float w = L.d_rowWeights ? L.d_rowWeights[static_cast<std::size_t>(p) * g.bins + k] : 1.0f;
            Lanes<S> r;
            for (int j = 0; j < S; ++j) {
                const float d = data.v[j] - acc.v[j];
                squares[j] = static_cast<double>(d) * d;
                r.v[j] = d * w;
            }
            joseph::store<S>(L.d_out + at, r);
        }
        blockSum<S>(squares, L.d_partial + (static_cast<std::size_t>(blockIdx.y) * gridDim.x + blockIdx.x) * S);
    } else if (valid) {
        joseph::store<S>(L.d_out + at, acc);
    }
}

// threadIdx.x = column of a 32 x 16 tile, threadIdx.y = rows y and y + 8 of
// it; blockIdx.z = group. Each thread sums every projection's two bins for
// its two pixels.
template <int S, bool Step>
__global__ void __launch_bounds__(kBackThreads) backKernel(BackLaunch L) {
    __shared__ Projection constants[kBackChunk];
    const JosephGeometry& g = L.geometry;
    const int ix = static_cast<int>(blockIdx.x) * kBackWidth + static_cast<int>(threadIdx.x);
    const int iy0 = static_cast<int>(blockIdx.y) * kBackTileRows + static_cast<int>(threadIdx.y);
    const int iy1 = iy0 + kBackRows;
    const float* sino = L.d_sinograms + static_cast<std::size_t>(blockIdx.z) * g.projections * g.bins * S;
    const float fx = static_cast<float>(ix), fy0 = static_cast<float>(iy0), fy1 = static_cast<float>(iy1);
    const int tid = static_cast<int>(threadIdx.y) * kBackWidth + static_cast<int>(threadIdx.x);
    Lanes<S> acc0 = joseph::zeroLanes<S>(), acc1 = joseph::zeroLanes<S>();
    for (int p0 = 0; p0 < g.projections; p0 += kBackChunk) {
        const int n = min(kBackChunk, g.projections - p0);
        __syncthreads();
        for (int i = tid; i < n; i += kBackThreads) constants[i] = g.d_projections[p0 + i];
        __syncthreads();
        for (int i = 0; i < n; ++i) {
            const Projection& q = constants[i];
            const float* row = sino + static_cast<std::size_t>(p0 + i) * g.bins * S;
            const float reach = L.interpolate ? 1.0f : q.reach, scale = L.interpolate ? 1.0f : q.scale;
            const bool rows = q.rows != 0.0f;
            joseph::pixelSample<S>(acc0, row, g.bins, q, rows ? fx : fy0, rows ? fy0 : fx, reach, scale);
            joseph::pixelSample<S>(acc1, row, g.bins, q, rows ? fx : fy1, rows ? fy1 : fx, reach, scale);
        }
    }
    if (ix >= g.width) return;
    const std::size_t pixels = static_cast<std::size_t>(g.width) * g.height;
    for (int half = 0; half < 2; ++half) {
        const int iy = half ? iy1 : iy0;
        if (iy >= g.height) break;
        const Lanes<S>& acc = half ? acc1 : acc0;
        const std::size_t pixel = static_cast<std::size_t>(iy) * g.width + ix;
        float* out = L.d_image + (blockIdx.z * pixels + pixel) * S;
        if constexpr (Step) {
            const float w = L.d_columnWeights ? L.d_columnWeights[pixel] : 1.0f;
            Lanes<S> x;
            for (int j = 0; j < S; ++j) {
                const float v = out[j] + L.steps.v[blockIdx.z * S + j] * w * acc.v[j];
                x.v[j] = fminf(fmaxf(v, L.lower), L.upper);
            }
            joseph::store<S>(out, x);
        } else {
            joseph::store<S>(out, acc);
        }
    }
}

// threadIdx = (column, row / 4) of a 32 x 32 tile of elements of S lanes.
template <int S>
__global__ void __launch_bounds__(256) transposeKernel(const float* __restrict__ in, float* __restrict__ out, int width,
                                                       int height) {
    __shared__ float tile[32][32 * S + 1]; // + 1 float per row: the column reads hit 32 banks
    const int x0 = static_cast<int>(blockIdx.x) * 32, y0 = static_cast<int>(blockIdx.y) * 32;
    for (int r = static_cast<int>(threadIdx.y); r < 32; r += 8) {
        const int x = x0 + static_cast<int>(threadIdx.x), y = y0 + r;
        if (x < width && y < height) {
            const Lanes<S> v = joseph::load<S>(in + (static_cast<std::size_t>(y) * width + x) * S);
            for (int j = 0; j < S; ++j) tile[r][threadIdx.x * S + j] = v.v[j];
        }
    }
    __syncthreads();
    for (int r = static_cast<int>(threadIdx.y); r < 32; r += 8) {
        const int y = y0 + static_cast<int>(threadIdx.x), x = x0 + r; // out row = x, out column = y
        if (x < width && y < height) {
            Lanes<S> v;
            for (int j = 0; j < S; ++j) v.v[j] = tile[threadIdx.x][r * S + j];
            joseph::store<S>(out + (static_cast<std::size_t>(x) * height + y) * S, v);
        }
    }
}

template <int S>
void forwardFor(const ForwardLaunch& L, cudaStream_t stream) {
    const dim3 block(kForwardBins, kForwardProjections);
    const dim3 grid((L.geometry.bins + kForwardBins - 1) / kForwardBins,
                    (L.geometry.projections + kForwardProjections - 1) / kForwardProjections);
    if (L.d_data) forwardKernel<S, true><<<grid, block, 0, stream>>>(L);
    else forwardKernel<S, false><<<grid, block, 0, stream>>>(L);
}

template <int S>
void backFor(const BackLaunch& L, cudaStream_t stream) {
    const dim3 block(kBackWidth, kBackRows);
    const dim3 grid((L.geometry.width + kBackWidth - 1) / kBackWidth,
                    (L.geometry.height + kBackTileRows - 1) / kBackTileRows, L.groups);
    if (L.step) backKernel<S, true><<<grid, block, 0, stream>>>(L);
    else backKernel<S, false><<<grid, block, 0, stream>>>(L);
}

} // namespace

int forwardBlocks(const JosephGeometry& g) {
    return ((g.bins + kForwardBins - 1) / kForwardBins) *
           ((g.projections + kForwardProjections - 1) / kForwardProjections);
}

void launchForward(const ForwardLaunch& L, StreamHandle stream) {
    if (L.lanes == 4) forwardFor<4>(L, stream);
    else if (L.lanes == 2) forwardFor<2>(L, stream);
    else forwardFor<1>(L, stream);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchBack(const BackLaunch& L, StreamHandle stream) {
    if (L.lanes == 4) backFor<4>(L, stream);
    else if (L.lanes == 2) backFor<2>(L, stream);
    else backFor<1>(L, stream);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchTranspose(const float* d_in, float* d_out, int width, int height, int lanes, StreamHandle stream) {
    const dim3 block(32, 8), grid((width + 31) / 32, (height + 31) / 32);
    if (lanes == 4) transposeKernel<4><<<grid, block, 0, stream>>>(d_in, d_out, width, height);
    else if (lanes == 2) transposeKernel<2><<<grid, block, 0, stream>>>(d_in, d_out, width, height);
    else transposeKernel<1><<<grid, block, 0, stream>>>(d_in, d_out, width, height);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
