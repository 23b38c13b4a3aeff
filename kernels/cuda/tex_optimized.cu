// "tex-optimized": seed 004 Algorithm 1 with the constants in shared memory
// (seed 000 Algorithm 5), for 1, 2 or 4 slices per pass.
#include "tex_optimized.h"

#include "cuda_resources.h"
#include "sampling.cuh"
#include "vector_ops.cuh"

#include <cuda_runtime.h>

namespace tomo::cuda {

namespace {

constexpr int kTile = 16;
constexpr int kThreads = 256;
constexpr int kGeometryChunk = 256; // projections staged in shared memory at a time (one per thread)
constexpr int kPartialStride = 72;  // 64 pixels + 8: the 4 phases' rows start in different banks

static_assert(kGeometryChunk == kThreads, "one thread loads one projection's constants");

/// Occupancy target (blocks per SM, i.e. the register cap) and unrolling of
/// the projection loop (texture fetches in flight per thread = 4 x unroll).
/// (SnapDouble keeps its double positions in registers: less unrolling.)
template <class F, Sampling S> struct Tuning;
template <Sampling S> struct Tuning<float, S> {
    static constexpr int minBlocks = 8, unroll = S == Sampling::SnapDouble ? 2 : 4;
};
template <Sampling S> struct Tuning<float2, S> { static constexpr int minBlocks = 6, unroll = 2; };
template <Sampling S> struct Tuning<float4, S> { static constexpr int minBlocks = 4, unroll = 2; };

/// Four float32 slices as two float2 planes: a float4 texel filters at a
/// quarter of the float2 rate on the H100 (measured 255 vs 1026 G fetches/s),
/// two float2 fetches at half the float2 rate: 2x the float4 throughput.
struct SplitFloat4 {};
template <class F> struct Accumulator { using Type = F; };
template <> struct Accumulator<SplitFloat4> { using Type = float4; };
template <Sampling S> struct Tuning<SplitFloat4, S> { static constexpr int minBlocks = 4, unroll = 2; };

template <class F>
__device__ __forceinline__ typename Accumulator<F>::Type fetch(cudaTextureObject_t tex, cudaTextureObject_t, float u,
                                                               float row) {
    return tex2D<F>(tex, u, row);
}
template <>
__device__ __forceinline__ float4 fetch<SplitFloat4>(cudaTextureObject_t tex, cudaTextureObject_t tex2, float u,
                                                     float row) {
    const float2 a = tex2D<float2>(tex, u, row);
    const float2 b = tex2D<float2>(tex2, u, row);
    return make_float4(a.x, a.y, b.x, b.y);
}

template <Sampling S> struct GeometryEntry { using Type = float4; };
template <> struct GeometryEntry<Sampling::SnapDouble> { using Type = GeometryDouble; };

// Pixel of a 16x4 strip for the low 6 bits of a thread index: bits 0-3 walk a
// 4x4 square along a Z-order curve, bits 4-5 pick one of 4 squares along x.
__device__ __forceinline__ int stripX(int t) { return ((t >> 4) & 3) * 4 + ((t >> 2) & 1) * 2 + (t & 1); }
__device__ __forceinline__ int stripY(int t) { return ((t >> 3) & 1) * 2 + ((t >> 1) & 1); }

// threadIdx.x bits 0-5 = pixel of a 16x4 strip (Z-order 4x4 squares), bits 6-7 = projection phase (p % 4); q = strip (rows +4q); blockIdx = 16x16 tile of the region
template <class T, Sampling S>
__global__ void __launch_bounds__(kThreads, Tuning<T, S>::minBlocks)
texOptimizedKernel(cudaTextureObject_t tex, cudaTextureObject_t tex2,
                   const typename GeometryEntry<S>::Type* __restrict__ d_geometry,
                   int projections, int regionX, int regionY, int regionWidth, int regionHeight, float centreX,
                   float centreY, float* __restrict__ d_slices, std::size_t sliceStride, int slices,
                   const float* __restrict__ d_scale) {
    using Entry = typename GeometryEntry<S>::Type;
    using F = typename Accumulator<T>::Type;
    union Shared {
        Entry geometry[kGeometryChunk];
        F partial[4][kPartialStride];
    };
    __shared__ Shared sm;
    __shared__ F tile[kTile][kTile];

    const int tid = threadIdx.x;
    const int phase = tid >> 6;
    const int ix = regionX + static_cast<int>(blockIdx.x) * kTile + stripX(tid);
    const int iy0 = regionY + static_cast<int>(blockIdx.y) * kTile + stripY(tid);
    const float x = static_cast<float>(ix) - centreX;
    float y[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) y[q] = static_cast<float>(iy0 + 4 * q) - centreY;
    // Double positions use the same exactly representable pixel coordinates.
    const double xd = static_cast<double>(ix) - static_cast<double>(centreX);
    const double yd = static_cast<double>(iy0) - static_cast<double>(centreY);

    F acc[4] = {zero<F>(), zero<F>(), zero<F>(), zero<F>()};
    for (int base = 0; base < projections; base += kGeometryChunk) {
        const int count = min(kGeometryChunk, projections - base);
        __syncthreads(); // the previous chunk is no longer read
        if (tid < count) sm.geometry[tid] = d_geometry[base + tid];
        __syncthreads();
#pragma unroll Tuning<T, S>::unroll
        for (int i = phase; i < count; i += 4) {
            const Entry g = sm.geometry[i];
            const float row = static_cast<float>(base + i) + 0.5f;
            if constexpr (S == Sampling::SnapDouble) {
                const double t = fma(xd, g.cosA, g.axis);
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    acc[q] = acc[q] + fetch<T>(tex, tex2, snapDouble(fma(-(yd + 4.0 * q), g.sinA, t)), row);
            } else {
                const float t = fmaf(x, g.x, g.z) + 0.5f; // cos, sin, axis_p
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[q] = acc[q] + fetch<T>(tex, tex2, fmaf(-y[q], g.y, t), row);
            }
        }
    }

    // Reduction: 4 consecutive lanes hold the 4 phases of one pixel.
    const int pixel = tid >> 2;
    const int part = tid & 3;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        __syncthreads(); // geometry (q = 0) or the previous strip's partial sums are no longer read
        sm.partial[phase][tid & 63] = acc[q];
        __syncthreads();
        F v = sm.partial[part][pixel];
        v = v + shflXor(v, 1);
        v = v + shflXor(v, 2);
        if (part == 0) tile[stripY(pixel) + 4 * q][stripX(pixel)] = v;
    }
    __syncthreads();

    // Coalesced writes: thread = pixel of the tile in row-major order.
    const int gx = static_cast<int>(blockIdx.x) * kTile + (tid & 15);
    const int gy = static_cast<int>(blockIdx.y) * kTile + (tid >> 4);
    if (gx < regionWidth && gy < regionHeight) {
        const F v = tile[tid >> 4][tid & 15];
        const float scale = d_scale ? d_scale[1] : 1.0f;
        float* out = d_slices + static_cast<std::size_t>(gy) * regionWidth + gx;
        for (int c = 0; c < slices; ++c) out[c * sliceStride] = component(v, c) * scale;
    }
}

template <class T, Sampling S>
void launchT(const BackprojectLaunch& L, cudaStream_t stream) {
    const dim3 grid((L.regionWidth + kTile - 1) / kTile, (L.regionHeight + kTile - 1) / kTile);
    const auto* geometry = S == Sampling::SnapDouble
                               ? reinterpret_cast<const typename GeometryEntry<S>::Type*>(L.d_geometryDouble)
                               : reinterpret_cast<const typename GeometryEntry<S>::Type*>(L.d_geometry);
    texOptimizedKernel<T, S><<<grid, kThreads, 0, stream>>>(L.texture, L.texture2, geometry, L.projections, L.regionX,
                                                            L.regionY, L.regionWidth, L.regionHeight, L.centreX,
                                                            L.centreY, L.d_slices, L.sliceStride, L.slices, L.d_scale);
}

template <class T>
void launchSampling(const BackprojectLaunch& L, cudaStream_t stream) {
    switch (L.sampling) {
    case Sampling::Hardware: launchT<T, Sampling::Hardware>(L, stream); break;
    case Sampling::SnapDouble: launchT<T, Sampling::SnapDouble>(L, stream); break;
    }
}

} // namespace

void launchTexOptimized(const BackprojectLaunch& L, StreamHandle stream) {
    switch (L.channels) {
    case 1: launchSampling<float>(L, stream); break;
    case 2: launchSampling<float2>(L, stream); break;
    case 4:
        if (L.planes == 2) launchSampling<SplitFloat4>(L, stream);
        else launchSampling<float4>(L, stream);
        break;
    default: throw InvalidArgument("tex-optimized: " + std::to_string(L.channels) + " channels (expected 1, 2, 4)");
    }
    TOMO_CUDA_CHECK(cudaGetLastError());
}

std::string texOptimizedProbe() {
    cudaFuncAttributes attributes{};
    const cudaError_t error = cudaFuncGetAttributes(&attributes, texOptimizedKernel<float, Sampling::Hardware>);
    if (error == cudaSuccess) return {};
    (void)cudaGetLastError();
    return cudaGetErrorString(error);
}

} // namespace tomo::cuda
