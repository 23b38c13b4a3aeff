// Filter and packing kernels (see filter_kernels.h for the data flow).
#include "filter_kernels.h"

#include "cuda_resources.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

namespace tomo::cuda {

namespace {

constexpr int kThreads = 256;

int gridFor(long long items) {
    return static_cast<int>(std::min<long long>((items + kThreads - 1) / kThreads, 65535LL * 32));
}

__device__ __forceinline__ float paddedValue(const float* __restrict__ d_rows, int row, int k, int rows, int bins,
                                             int left, bool edge) {
    if (row >= rows) return 0.0f;
    const float* r = d_rows + static_cast<std::size_t>(row) * bins;
    const int i = k - left;
    if (i < 0) return edge ? r[0] : 0.0f;
    if (i >= bins) return edge ? r[bins - 1] : 0.0f;
    return r[i];
}

// threadIdx.x + blockIdx.x * blockDim.x = (pair, position) flattened; grid-stride over all
__global__ void padPairsKernel(FilterLayout L, const float* __restrict__ d_rows, bool edge, float2* __restrict__ d_fft) {
    const long long total = static_cast<long long>(L.pairs) * L.padded;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const int pair = static_cast<int>(i / L.padded);
        const int k = static_cast<int>(i - static_cast<long long>(pair) * L.padded);
        d_fft[i] = make_float2(paddedValue(d_rows, 2 * pair, k, L.rows, L.bins, L.left, edge),
                               paddedValue(d_rows, 2 * pair + 1, k, L.rows, L.bins, L.left, edge));
    }
}

// threadIdx.x + blockIdx.x * blockDim.x = spectrum element (pair, frequency) flattened
__global__ void applyResponseKernel(FilterLayout L, const float* __restrict__ d_response, float2* __restrict__ d_fft) {
    const long long total = static_cast<long long>(L.pairs) * L.padded;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const float h = d_response[i % L.padded];
        float2 v = d_fft[i];
        v.x *= h;
        v.y *= h;
        d_fft[i] = v;
    }
}

__device__ __forceinline__ float filteredValue(const float2* __restrict__ d_fft, const FilterLayout& L, int row,
                                               int bin) {
    const float2 v = d_fft[static_cast<std::size_t>(row >> 1) * L.padded + L.left + bin];
    return (row & 1) ? v.y : v.x;
}

// threadIdx.x + blockIdx.x * blockDim.x = (row, bin) flattened over the valid rows; one atomicMax per block
__global__ void maxAbsKernel(FilterLayout L, const float2* __restrict__ d_fft, const float* __restrict__ d_weights,
                             int projections, unsigned* d_maxBits) {
    float m = 0.0f;
    const long long total = static_cast<long long>(L.rows) * L.bins;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const int row = static_cast<int>(i / L.bins);
        const int bin = static_cast<int>(i - static_cast<long long>(row) * L.bins);
        m = fmaxf(m, fabsf(filteredValue(d_fft, L, row, bin) * d_weights[row % projections]));
    }
    for (int offset = 16; offset > 0; offset >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    __shared__ float warpMax[kThreads / 32];
    if ((threadIdx.x & 31) == 0) warpMax[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < kThreads / 32; ++w) m = fmaxf(m, warpMax[w]);
        if (isfinite(m)) atomicMax(d_maxBits, __float_as_uint(m));
        else atomicMax(d_maxBits, 0x7f7fffffu); // keep the scale finite; the data are broken anyway
    }
}

// single thread: the float16 scale from the maximum
__global__ void halfScaleKernel(const unsigned* d_maxBits, float* d_scale) {
    const float m = __uint_as_float(*d_maxBits);
    int e = 0;
    if (m > 0.0f) {
        // m = f * 2^ex with f in [0.5, 1): m * 2^(14 - ex) lies in [2^13, 2^14)
        int ex = 0;
        (void)frexpf(m, &ex);
        e = min(max(14 - ex, -120), 120);
    }
    d_scale[0] = ldexpf(1.0f, e);
    d_scale[1] = ldexpf(1.0f, -e);
}

template <int Channels, bool Half>
struct Texel;
template <> struct Texel<1, false> { using Type = float; };
template <> struct Texel<2, false> { using Type = float2; };
template <> struct Texel<4, false> { using Type = float4; };
template <> struct Texel<1, true> { using Type = __half; };
template <> struct Texel<2, true> { using Type = __half2; };
struct alignas(8) Half4 { __half2 xy, zw; };
template <> struct Texel<4, true> { using Type = Half4; };

template <int Channels, bool Half>
__device__ __forceinline__ typename Texel<Channels, Half>::Type makeTexel(const float (&v)[4]) {
    if constexpr (Half) {
        if constexpr (Channels == 1) return __float2half_rn(v[0]);
        else if constexpr (Channels == 2) return __floats2half2_rn(v[0], v[1]);
        else return Half4{__floats2half2_rn(v[0], v[1]), __floats2half2_rn(v[2], v[3])};
    } else {
        if constexpr (Channels == 1) return v[0];
        else if constexpr (Channels == 2) return make_float2(v[0], v[1]);
        else return make_float4(v[0], v[1], v[2], v[3]);
    }
}

// threadIdx.x + blockIdx.x * blockDim.x = bin, blockIdx.y (+ grid stride) = projection: one texel per thread
template <int Channels, bool Half>
__global__ void packKernel(PackLaunch P, const float2* __restrict__ d_fft) {
    const int bin = blockIdx.x * blockDim.x + threadIdx.x;
    if (bin >= P.layout.bins) return;
    const float scale = Half ? P.d_scale[0] : 1.0f;
    using T = typename Texel<Channels, Half>::Type;
    for (int p = blockIdx.y; p < P.projections; p += gridDim.y) {
        const float w = P.d_weights[p];
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int c = 0; c < Channels; ++c)
            if (P.firstSlice + c < P.validSlices) {
                // The same rounding as SinogramFilter: filtered value x float(weight).
                const float weighted = filteredValue(d_fft, P.layout, (P.firstSlice + c) * P.projections + p, bin) * w;
                v[c] = Half ? weighted * scale : weighted;
            }
        T* row = reinterpret_cast<T*>(static_cast<char*>(P.d_out) + static_cast<std::size_t>(p) * P.pitchBytes);
        row[bin] = makeTexel<Channels, Half>(v);
    }
}

template <int Channels, bool Half>
void launchPackT(const PackLaunch& P, cudaStream_t stream) {
    const dim3 block(kThreads);
    const dim3 grid((P.layout.bins + kThreads - 1) / kThreads, std::min(P.projections, 65535));
    packKernel<Channels, Half><<<grid, block, 0, stream>>>(P, reinterpret_cast<const float2*>(P.d_fft));
}

} // namespace

void launchPadPairs(const FilterLayout& layout, const float* d_rows, bool edgePadding, float* d_fft,
                    StreamHandle stream) {
    const long long total = static_cast<long long>(layout.pairs) * layout.padded;
    padPairsKernel<<<gridFor(total), kThreads, 0, stream>>>(layout, d_rows, edgePadding,
                                                            reinterpret_cast<float2*>(d_fft));
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchApplyResponse(const FilterLayout& layout, const float* d_response, float* d_fft, StreamHandle stream) {
    const long long total = static_cast<long long>(layout.pairs) * layout.padded;
    applyResponseKernel<<<gridFor(total), kThreads, 0, stream>>>(layout, d_response, reinterpret_cast<float2*>(d_fft));
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchMaxAbsWeighted(const FilterLayout& layout, const float* d_fft, const float* d_weights, int projections,
                          unsigned* d_maxBits, StreamHandle stream) {
    const long long total = static_cast<long long>(layout.rows) * layout.bins;
    maxAbsKernel<<<std::min(gridFor(total), 4096), kThreads, 0, stream>>>(
        layout, reinterpret_cast<const float2*>(d_fft), d_weights, projections, d_maxBits);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchHalfScale(const unsigned* d_maxBits, float* d_scale, StreamHandle stream) {
    halfScaleKernel<<<1, 1, 0, stream>>>(d_maxBits, d_scale);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchPack(const PackLaunch& pack, StreamHandle stream) {
    switch (pack.channels * (pack.half ? -1 : 1)) {
    case 1: launchPackT<1, false>(pack, stream); break;
    case 2: launchPackT<2, false>(pack, stream); break;
    case 4: launchPackT<4, false>(pack, stream); break;
    case -1: launchPackT<1, true>(pack, stream); break;
    case -2: launchPackT<2, true>(pack, stream); break;
    case -4: launchPackT<4, true>(pack, stream); break;
    default: throw InvalidArgument("pack: " + std::to_string(pack.channels) + " channels (expected 1, 2 or 4)");
    }
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
