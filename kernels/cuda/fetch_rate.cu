// Texture fetch-rate micro-benchmark.
#include "fetch_rate.h"

#include "cuda_resources.h"
#include "vector_ops.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

namespace tomo::cuda {

namespace {

constexpr int kWidth = 1024;
constexpr int kHeight = 64;
constexpr int kThreads = 256;
constexpr int kFetchesPerIteration = 4;

__device__ __forceinline__ float sumOf(float v) { return v; }
__device__ __forceinline__ float sumOf(float2 v) { return v.x + v.y; }
__device__ __forceinline__ float sumOf(float4 v) { return v.x + v.y + v.z + v.w; }

// threadIdx.x = lane: neighbouring lanes sample points a quarter texel apart (overlapping footprints, as the Z-order mapping gives); warps walk rows; 4 independent fetches per iteration
template <class F>
__global__ void __launch_bounds__(kThreads) fetchRateKernel(cudaTextureObject_t tex, int iterations, float* d_sink) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    float u = 4.0f + 0.25f * lane + 7.0f * (blockIdx.x & 63);
    const float v = 0.5f + ((warp + blockIdx.x) & (kHeight / kFetchesPerIteration - 1)) * kFetchesPerIteration;
    F acc = zero<F>();
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int f = 0; f < kFetchesPerIteration; ++f) acc = acc + tex2D<F>(tex, u + 0.37f * f, v + f);
        u += 1.13f;
        if (u > kWidth - 16.0f) u -= kWidth - 24.0f;
    }
    const float s = sumOf(acc);
    if (s == 1234.5f) d_sink[blockIdx.x * blockDim.x + threadIdx.x] = s; // keeps the fetches alive
}

template <class F>
float timeLaunches(cudaTextureObject_t tex, int blocks, int iterations, float* d_sink, int repetitions) {
    Event start = Event::create(true), stop = Event::create(true);
    fetchRateKernel<F><<<blocks, kThreads>>>(tex, iterations, d_sink); // warm-up
    TOMO_CUDA_CHECK(cudaGetLastError());
    std::vector<float> ms;
    for (int r = 0; r < repetitions; ++r) {
        TOMO_CUDA_CHECK(cudaEventRecord(start.get()));
        fetchRateKernel<F><<<blocks, kThreads>>>(tex, iterations, d_sink);
        TOMO_CUDA_CHECK(cudaGetLastError());
        TOMO_CUDA_CHECK(cudaEventRecord(stop.get()));
        TOMO_CUDA_CHECK(cudaEventSynchronize(stop.get()));
        float t = 0.0f;
        TOMO_CUDA_CHECK(cudaEventElapsedTime(&t, start.get(), stop.get()));
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

} // namespace

double runFetchRateBenchmark(bool half, int channels, bool linear) {
    int device = 0;
    TOMO_CUDA_CHECK(cudaGetDevice(&device));
    int sms = 0;
    TOMO_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));

    cudaChannelFormatDesc format{};
    switch (channels * (half ? -1 : 1)) {
    case 1: format = cudaCreateChannelDesc<float>(); break;
    case 2: format = cudaCreateChannelDesc<float2>(); break;
    case 4: format = cudaCreateChannelDesc<float4>(); break;
    case -1: format = cudaCreateChannelDescHalf(); break;
    case -2: format = cudaCreateChannelDescHalf2(); break;
    case -4: format = cudaCreateChannelDescHalf4(); break;
    default: throw InvalidArgument("fetch rate: " + std::to_string(channels) + " channels (expected 1, 2 or 4)");
    }
    const int texel = channels * (half ? 2 : 4);
    CudaArray array(device, format, kWidth, kHeight, "the fetch-rate texture");
    {
        // Smooth non-zero content (never time on zeros).
        std::vector<unsigned char> bytes(static_cast<std::size_t>(kWidth) * kHeight * texel);
        for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>((i * 37 + 11) % 251);
        if (half)
            for (std::size_t i = 1; i < bytes.size(); i += 2) bytes[i] = 0x3c; // exponent of ~1.0: finite halves
        else
            for (std::size_t i = 3; i < bytes.size(); i += 4) bytes[i] = 0x3f; // floats around 0.5-1
        TOMO_CUDA_CHECK(cudaMemcpy2DToArray(array.get(), 0, 0, bytes.data(), static_cast<std::size_t>(kWidth) * texel,
                                            static_cast<std::size_t>(kWidth) * texel, kHeight,
                                            cudaMemcpyHostToDevice));
    }
    cudaResourceDesc resource{};
    resource.resType = cudaResourceTypeArray;
    resource.res.array.array = array.get();
    cudaTextureDesc texture{};
    texture.addressMode[0] = cudaAddressModeClamp;
    texture.addressMode[1] = cudaAddressModeClamp;
    texture.filterMode = linear ? cudaFilterModeLinear : cudaFilterModePoint;
    texture.readMode = cudaReadModeElementType;
    texture.normalizedCoords = 0;
    TextureObject tex(resource, texture);

    const int blocks = sms * 8; // full occupancy (2048 threads per SM)
    DeviceBuffer<float> sink(device, static_cast<std::size_t>(blocks) * kThreads, "the fetch-rate sink");
    // Size the run from a short probe so each timed launch takes ~15 ms.
    int iterations = 256;
    float ms = 0.0f;
    for (int attempt = 0; attempt < 4; ++attempt) {
        ms = channels == 1   ? timeLaunches<float>(tex.get(), blocks, iterations, sink.get(), 1)
             : channels == 2 ? timeLaunches<float2>(tex.get(), blocks, iterations, sink.get(), 1)
                             : timeLaunches<float4>(tex.get(), blocks, iterations, sink.get(), 1);
        if (ms > 5.0f) break;
        iterations = static_cast<int>(std::min(1 << 20, static_cast<int>(iterations * std::max(2.0f, 15.0f / std::max(ms, 0.01f)))));
    }
    ms = channels == 1   ? timeLaunches<float>(tex.get(), blocks, iterations, sink.get(), 7)
         : channels == 2 ? timeLaunches<float2>(tex.get(), blocks, iterations, sink.get(), 7)
                         : timeLaunches<float4>(tex.get(), blocks, iterations, sink.get(), 7);
    const double fetches = static_cast<double>(blocks) * kThreads * iterations * kFetchesPerIteration;
    return fetches / (ms * 1e-3);
}

} // namespace tomo::cuda
