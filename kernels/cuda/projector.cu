// The CUDA projector pair's projections: Joseph's forward projector (one
// thread per ray) and its transpose (a block per 32 x 32 square of pixels,
// 4 pixels per thread), on 1, 2 or 4 interleaved slices, with SIRT's
// residual and update fused into their last step. The arithmetic is
// core/src/recon/joseph.h's, the same the CPU pair runs: a sample is the
// same on both.
//
// Hopper: every access is one float/float2/float4 of S lanes (16-byte loads
// for 4 slices). Forward: a warp's rays are 8 neighbouring bins of 4
// neighbouring projections, so their pixels on a line are a short run; the
// column projections read a transposed copy of the image, so their runs
// are contiguous too; on the lines where a ray's pixels are certainly on
// the grid (joseph::rayInterior, nearly all of them) no bounds are tested.
// Back: a block copies the ~46 bins its square reads of each projection
// into shared memory (zeros off the detector: no bounds tests) and warps of
// 8 x 4 pixels read ~12 neighbouring entries each (two wavefronts of
// float4). Floors are one round-down add (joseph::floorOf), not the
// conversion unit's FRND and F2I.
#include "projector_kernels.h"

#include "cuda_resources.h"
#include "recon/joseph.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

namespace tomo::cuda {

namespace {

using joseph::Lanes;
using joseph::Projection;

constexpr int kForwardBins = 32;        // bins of a block
constexpr int kForwardProjections = 8;  // projections of a block (8 warps of 8 bins x 4 projections)
constexpr int kForwardThreads = kForwardBins * kForwardProjections;
constexpr int kBackTile = 32;                        // a block's square of pixels
constexpr int kBackThreads = 256;                    // 8 warps of 8 x 4 pixel patches
constexpr int kBackPatchesAcross = kBackTile / 8;    // 4 patches across the square
constexpr int kBackStep = 4 * (kBackThreads / 32 / kBackPatchesAcross); // 8: a thread's rows apart
constexpr int kBackPixels = kBackTile / kBackStep;   // 4 pixels per thread
constexpr int kBackChunk = kBackThreads;             // projections' constants in shared memory at once (8 KiB)
constexpr int kBackGroup = 16;                       // projections whose bins are cached at once
// Bins cached per projection: the square's positions span at most
// (kBackTile - 1) * (|cos| + |sin|) <= 43.9 bins, and a pixel reads
// floor(s) and floor(s) + 1, so 46 bins from floor(the least s) suffice.
constexpr int kBackCached = 48;

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

// A block's 256 rays: 32 bins (blockIdx.x) of 8 projections (blockIdx.y);
// warp threadIdx.y follows 8 neighbouring bins of 4 neighbouring
// projections line by line: their crossings with a line lie within some
// 12 to 20 pixels (a 32-bin row of one projection spans up to 46), so a
// warp's loads touch two or three 128-byte lines instead of five or six.
template <int S, bool Residual>
__global__ void __launch_bounds__(kForwardThreads) forwardKernel(ForwardLaunch L) {
    const JosephGeometry& g = L.geometry;
    const int warp = static_cast<int>(threadIdx.y), lane = static_cast<int>(threadIdx.x);
    const int k = static_cast<int>(blockIdx.x) * kForwardBins + (warp % 4) * 8 + lane % 8;
    const int p = static_cast<int>(blockIdx.y) * kForwardProjections + (warp / 4) * 4 + lane / 8;
    const bool valid = k < g.bins && p < g.projections;
    Lanes<S> acc = joseph::zeroLanes<S>();
    if (valid) {
        const Projection q = g.d_projections[p];
        const bool rows = q.rows != 0.0f;
        const float* lines = rows ? L.d_image : L.d_transposed;
        const int along = rows ? g.width : g.height, count = rows ? g.height : g.width;
        const float kf = static_cast<float>(k);
        // Lines in order as on the CPU; the interior ones without bounds tests.
        int first = 0, last = 0, inFirst = 0, inLast = 0;
        joseph::rayLines(q, kf, along, count, first, last);
        joseph::rayInterior(q, kf, along, count, inFirst, inLast);
        inFirst = min(max(inFirst, first), last);
        inLast = min(max(inLast, inFirst), last);
        // The line's float index and start advance by one line per step
        // (exact: no conversion, no 64-bit multiply per line).
        const float* row = lines + static_cast<std::size_t>(first) * along * S;
        float lf = static_cast<float>(first);
        const float start = joseph::crossingStart(q, kf);
        const auto sample = [&](auto checked, int from, int to) {
            for (int line = from; line < to; ++line, lf += 1.0f, row += along * S)
                joseph::raySample<S, decltype(checked)::value>(acc, row, along, q.peak, joseph::crossing(q, start, lf));
        };
        sample(std::true_type{}, first, inFirst);
        sample(std::false_type{}, inFirst, inLast);
        sample(std::true_type{}, inLast, last);
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

/// One projection's constants for one block's square (backKernel), in
/// shared memory: the detector position s of the square's pixels lies in
/// [low, low + kBackCached - 1) with low = floor(the least s), so the block
/// caches bins [low, low + kBackCached) of the row and no sample needs a
/// bounds check. `address`: the byte offset of the cached bin floor(s) is
/// floor(s) * entry size + address (unsigned, wrapping).
struct alignas(16) BackProjection {
    float alongCoef, lineCoef, offset;
    float peak, fall; ///< joseph::Triangle's (its edge is peak - fall)
    int low;
    unsigned address;
    int rows;
};

/// q's constants for the square of side kBackTile at (x0, y0). A square
/// whose every pixel sees q off the detector (no bin in reach) gets a null
/// projection (s = -1.5 everywhere, low = -2), which reads zeros as the
/// original geometry would: the sums stay bit for bit the same and
/// positions stay small for floorOf.
__device__ BackProjection backProjection(const Projection& q, int bins, bool interpolate, int x0, int y0) {
    const bool rows = q.rows != 0.0f;
    const float a0 = static_cast<float>(rows ? x0 : y0), l0 = static_cast<float>(rows ? y0 : x0);
    const float a1 = a0 + (kBackTile - 1), l1 = l0 + (kBackTile - 1);
    // s is monotonic in each coordinate (fma rounds monotonically): its extremes are at corners.
    const float c00 = joseph::position(q, a0, l0), c01 = joseph::position(q, a0, l1);
    const float c10 = joseph::position(q, a1, l0), c11 = joseph::position(q, a1, l1);
    const float least = fminf(fminf(c00, c01), fminf(c10, c11));
    const float most = fmaxf(fmaxf(c00, c01), fmaxf(c10, c11));
    BackProjection b;
    b.rows = rows;
    const joseph::Triangle t = joseph::triangle(q, interpolate);
    b.peak = t.peak;
    b.fall = t.fall;
    if (most < -1.0f || least >= static_cast<float>(bins)) { // bins floor(s), floor(s) + 1 all outside
        b.alongCoef = b.lineCoef = 0.0f;
        b.offset = -1.5f;
        b.low = -2;
    } else {
        b.alongCoef = q.alongCoef;
        b.lineCoef = q.lineCoef;
        b.offset = q.offset;
        b.low = static_cast<int>(floorf(least));
    }
    b.address = 0u; // set per group slot (backKernel)
    return b;
}

/// S floats of shared memory at a 4 S-byte aligned address: one LDS.64 or LDS.128.
template <int S>
__device__ __forceinline__ Lanes<S> loadShared(const unsigned char* p) {
    Lanes<S> out;
    if constexpr (S == 4) {
        const float4 t = *reinterpret_cast<const float4*>(p);
        out.v[0] = t.x, out.v[1] = t.y, out.v[2] = t.z, out.v[3] = t.w;
    } else if constexpr (S == 2) {
        const float2 t = *reinterpret_cast<const float2*>(p);
        out.v[0] = t.x, out.v[1] = t.y;
    } else {
        out.v[0] = *reinterpret_cast<const float*>(p);
    }
    return out;
}

/// Adds the cached projection's share of the pixel at detector position s
/// to acc: joseph::pixelSample's arithmetic on a cached row (entries of S
/// lanes at `cache`, bin b at byte (b - low) * 4 S). Bins off the detector
/// hold zeros there, where pixelSample gives them weight 0: the same sums.
template <int S>
__device__ __forceinline__ void cachedSample(Lanes<S>& acc, const unsigned char* cache, const BackProjection& b,
                                             const joseph::Triangle& t, float s) {
    const joseph::Pair w = joseph::binWeights(s, t);
    const unsigned at = static_cast<unsigned>(w.at.index) * (4u * S) + b.address;
    joseph::accumulate<S>(acc, w.w0, loadShared<S>(cache + at), w.w1, loadShared<S>(cache + at + 4u * S));
}

// A block owns a kBackTile-square of one group (blockIdx.z); its warps
// cover 8 x 4 pixel patches (a warp's 32 pixels then read ~12 neighbouring
// cached bins per projection: two shared-memory wavefronts of float4), a
// thread one column of kBackPixels pixels kBackStep rows apart. Per chunk
// of projections each thread makes one projection's BackProjection; per
// group of kBackGroup projections the block copies the bins its square
// reads from the sinograms into shared memory (the next group's bins
// travel into registers while this one is summed), then sums them.
template <int S, bool Step>
__global__ void __launch_bounds__(kBackThreads) backKernel(BackLaunch L) {
    struct alignas(16) Cache {
        BackProjection constants[kBackChunk];
        float bins[kBackGroup][kBackCached][S];
    };
    __shared__ Cache sm;
    const JosephGeometry& g = L.geometry;
    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
    const int x0 = static_cast<int>(blockIdx.x) * kBackTile, y0 = static_cast<int>(blockIdx.y) * kBackTile;
    const int ix = x0 + (warp % kBackPatchesAcross) * 8 + (lane % 8);
    const int iy0 = y0 + (warp / kBackPatchesAcross) * 4 + lane / 8; // rows iy0 + k * kBackStep
    const float* sino = L.d_sinograms + static_cast<std::size_t>(blockIdx.z) * g.projections * g.bins * S;
    const auto* cache = reinterpret_cast<const unsigned char*>(&sm.bins[0][0][0]);
    const float fx = static_cast<float>(ix);
    float fy[kBackPixels];
    Lanes<S> acc[kBackPixels];
#pragma unroll
    for (int k = 0; k < kBackPixels; ++k) {
        fy[k] = static_cast<float>(iy0 + k * kBackStep);
        acc[k] = joseph::zeroLanes<S>();
    }
    constexpr int kPerThread = kBackGroup * kBackCached / kBackThreads;
    static_assert(kBackGroup * kBackCached % kBackThreads == 0, "whole entries per thread");
    Lanes<S> next[kPerThread];
    // Bins of the group at `base` of the chunk at p0 into `next` (zeros off the detector).
    const auto load = [&](int p0, int base) {
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) {
            const int e = tid + j * kBackThreads, slot = e / kBackCached, p = p0 + base + slot;
            next[j] = joseph::zeroLanes<S>();
            if (p >= g.projections) continue;
            const int bin = sm.constants[base + slot].low + e % kBackCached;
            if (bin >= 0 && bin < g.bins)
                next[j] = joseph::load<S>(sino + (static_cast<std::size_t>(p) * g.bins + bin) * S);
        }
    };

    for (int p0 = 0; p0 < g.projections; p0 += kBackChunk) {
        const int n = min(kBackChunk, g.projections - p0);
        __syncthreads(); // the previous chunk's constants are no longer read
        for (int i = tid; i < n; i += kBackThreads) {
            BackProjection b = backProjection(g.d_projections[p0 + i], g.bins, L.interpolate, x0, y0);
            const int slot = i % kBackGroup;
            // bin floor(s) is entry floor(s) - low of the slot's row.
            b.address = (static_cast<unsigned>(slot * kBackCached) - static_cast<unsigned>(b.low)) * (4u * S);
            sm.constants[i] = b;
        }
        __syncthreads();
        load(p0, 0);
        for (int base = 0; base < n; base += kBackGroup) {
            __syncthreads(); // the previous group's bins are no longer read
#pragma unroll
            for (int j = 0; j < kPerThread; ++j) {
                const int e = tid + j * kBackThreads;
                joseph::store<S>(sm.bins[e / kBackCached][e % kBackCached], next[j]);
            }
            __syncthreads();
            if (base + kBackGroup < n) load(p0, base + kBackGroup);
            const int count = min(kBackGroup, n - base);
#pragma unroll 4
            for (int i = 0; i < count; ++i) {
                const BackProjection b = sm.constants[base + i];
                const joseph::Triangle t{b.peak, b.fall, b.peak - b.fall}; // as joseph::triangle
                if (b.rows) { // along = column, line = row
#pragma unroll
                    for (int k = 0; k < kBackPixels; ++k)
                        cachedSample<S>(acc[k], cache, b, t, fmaf(fx, b.alongCoef, fmaf(fy[k], b.lineCoef, b.offset)));
                } else { // along = row, line = column
                    const float inner = fmaf(fx, b.lineCoef, b.offset);
#pragma unroll
                    for (int k = 0; k < kBackPixels; ++k)
                        cachedSample<S>(acc[k], cache, b, t, fmaf(fy[k], b.alongCoef, inner));
                }
            }
        }
    }
    if (ix >= g.width) return;
    const std::size_t pixels = static_cast<std::size_t>(g.width) * g.height;
#pragma unroll
    for (int k = 0; k < kBackPixels; ++k) {
        const int iy = iy0 + k * kBackStep;
        if (iy >= g.height) break;
        const std::size_t pixel = static_cast<std::size_t>(iy) * g.width + ix;
        float* out = L.d_image + (blockIdx.z * pixels + pixel) * S;
        if constexpr (Step) {
            const float w = L.d_columnWeights ? L.d_columnWeights[pixel] : 1.0f;
            Lanes<S> x;
            for (int j = 0; j < S; ++j) {
                const float v = out[j] + L.steps.v[blockIdx.z * S + j] * w * acc[k].v[j];
                x.v[j] = fminf(fmaxf(v, L.lower), L.upper);
            }
            joseph::store<S>(out, x);
        } else {
            joseph::store<S>(out, acc[k]);
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
    const dim3 block(kBackThreads);
    const dim3 grid((L.geometry.width + kBackTile - 1) / kBackTile, (L.geometry.height + kBackTile - 1) / kBackTile,
                    L.groups);
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
