// Element-wise helpers for the accumulator types of the texture kernels
// (float, float2, float4: 1, 2 or 4 slices per pass). Device code only.
#pragma once

#include <cuda_runtime.h>

namespace tomo::cuda {

__device__ __forceinline__ float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float4 operator+(float4 a, float4 b) {
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

__device__ __forceinline__ float component(float v, int) { return v; }
__device__ __forceinline__ float component(float2 v, int c) { return c == 0 ? v.x : v.y; }
__device__ __forceinline__ float component(float4 v, int c) {
    return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
}

template <class F> __device__ __forceinline__ F zero();
template <> __device__ __forceinline__ float zero<float>() { return 0.0f; }
template <> __device__ __forceinline__ float2 zero<float2>() { return make_float2(0.0f, 0.0f); }
template <> __device__ __forceinline__ float4 zero<float4>() { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }

__device__ __forceinline__ float shflXor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
__device__ __forceinline__ float2 shflXor(float2 v, int mask) {
    return make_float2(shflXor(v.x, mask), shflXor(v.y, mask));
}
__device__ __forceinline__ float4 shflXor(float4 v, int mask) {
    return make_float4(shflXor(v.x, mask), shflXor(v.y, mask), shflXor(v.z, mask), shflXor(v.w, mask));
}

} // namespace tomo::cuda
