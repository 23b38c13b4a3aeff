// "tex-standard": seed 000 §5.1 Algorithm 1, faithful to the paper.
#include "tex_standard.h"

#include "cuda_resources.h"
#include "sampling.cuh"
#include "vector_ops.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>

namespace tomo::cuda {

namespace {

constexpr int kTile = 16;

/// The per-projection constants: float4 (cos, sin, axis_p, -) or, for
/// Sampling::SnapDouble, the same in double. 64 KiB, all constant memory has.
union ConstantGeometry {
    float4 single[kTexStandardMaxProjections];
    GeometryDouble dual[kTexStandardMaxProjectionsDouble];
};
static_assert(sizeof(ConstantGeometry) == 65536, "constant memory holds 64 KiB");
__constant__ ConstantGeometry c_geometry;

// threadIdx = pixel in the 16x16 tile, blockIdx = tile of the region; each thread loops over all projections
template <class F, Sampling S>
__global__ void __launch_bounds__(kTile * kTile)
texStandardKernel(cudaTextureObject_t tex, int projections, int firstProjection, bool accumulate, int regionX,
                  int regionY, int regionWidth, int regionHeight, float centreX, float centreY,
                  float* __restrict__ d_slices, std::size_t sliceStride, int slices, const float* __restrict__ d_scale) {
    const int gx = blockIdx.x * kTile + threadIdx.x;
    const int gy = blockIdx.y * kTile + threadIdx.y;
    if (gx >= regionWidth || gy >= regionHeight) return;
    const float x = static_cast<float>(regionX + gx) - centreX;
    const float y = static_cast<float>(regionY + gy) - centreY;

    F sum = zero<F>();
    for (int p = 0; p < projections; ++p) {
        const float row = static_cast<float>(firstProjection + p) + 0.5f;
        float u;
        if constexpr (S == Sampling::SnapDouble) {
            const GeometryDouble c = c_geometry.dual[p];
            const double xd = static_cast<double>(regionX + gx) - static_cast<double>(centreX);
            const double yd = static_cast<double>(regionY + gy) - static_cast<double>(centreY);
            u = snapDouble(fma(-yd, c.sinA, fma(xd, c.cosA, c.axis)));
        } else {
            const float4 c = c_geometry.single[p]; // cos, sin, axis_p
            u = fmaf(-y, c.y, fmaf(x, c.x, c.z) + 0.5f);
        }
        sum = sum + tex2D<F>(tex, u, row);
    }

    const float scale = d_scale ? d_scale[1] : 1.0f;
    float* out = d_slices + static_cast<std::size_t>(gy) * regionWidth + gx;
    for (int c = 0; c < slices; ++c) {
        const float v = component(sum, c) * scale;
        out[c * sliceStride] = accumulate ? out[c * sliceStride] + v : v;
    }
}

/// Which constants are in c_geometry on each device.
struct ConstantState {
    std::mutex mutex;
    std::uint64_t version = 0;
    int batch = -1;
    bool dual = false;
};
ConstantState& constantState(int device) {
    static ConstantState states[64];
    return states[std::clamp(device, 0, 63)];
}

template <class F, Sampling S>
void launchT(const BackprojectLaunch& L, cudaStream_t stream, int firstProjection, int count, bool accumulate) {
    const dim3 block(kTile, kTile);
    const dim3 grid((L.regionWidth + kTile - 1) / kTile, (L.regionHeight + kTile - 1) / kTile);
    texStandardKernel<F, S><<<grid, block, 0, stream>>>(L.texture, count, firstProjection, accumulate, L.regionX,
                                                         L.regionY, L.regionWidth, L.regionHeight, L.centreX,
                                                         L.centreY, L.d_slices, L.sliceStride, L.slices, L.d_scale);
}

template <class F>
void launchSampling(const BackprojectLaunch& L, cudaStream_t stream, int first, int count, bool accumulate) {
    switch (L.sampling) {
    case Sampling::Hardware: launchT<F, Sampling::Hardware>(L, stream, first, count, accumulate); break;
    case Sampling::SnapDouble: launchT<F, Sampling::SnapDouble>(L, stream, first, count, accumulate); break;
    }
}

} // namespace

void launchTexStandard(const BackprojectLaunch& L, StreamHandle stream) {
    int device = 0;
    TOMO_CUDA_CHECK(cudaGetDevice(&device));
    ConstantState& state = constantState(device);
    const bool dual = L.sampling == Sampling::SnapDouble;
    const int perBatch = dual ? kTexStandardMaxProjectionsDouble : kTexStandardMaxProjections;
    const int batches = (L.projections + perBatch - 1) / perBatch;
    if (L.planes != 1) throw InvalidArgument("tex-standard reads one texture per pass (planes = 1)");
    for (int b = 0; b < batches; ++b) {
        const int first = b * perBatch;
        const int count = std::min(perBatch, L.projections - first);
        std::lock_guard lock(state.mutex);
        if (state.version != L.geometryVersion || state.batch != b || state.dual != dual) {
            // Kernels in flight (of any plan, on any thread) may still read
            // the old constants: let them finish.
            TOMO_CUDA_CHECK(cudaDeviceSynchronize());
            // The new constants must be on the device before this launch and
            // every later one with the same version, on whichever stream (the
            // banded preview launches on two). A plain cudaMemcpyToSymbol
            // from pageable memory may return before its DMA on the legacy
            // stream lands, and the plans' non-blocking streams do not wait
            // for the legacy stream: under load a kernel read the previous
            // plan's axis (a 10%-of-peak error). Copy on `stream` and wait.
            const void* source = dual ? static_cast<const void*>(L.h_geometryDouble + first)
                                      : static_cast<const void*>(L.h_geometry + static_cast<std::size_t>(first) * 4);
            const std::size_t bytes = static_cast<std::size_t>(count) * (dual ? sizeof(GeometryDouble) : sizeof(float4));
            TOMO_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_geometry, source, bytes, 0, cudaMemcpyHostToDevice, stream));
            TOMO_CUDA_CHECK(cudaStreamSynchronize(stream));
            state.version = L.geometryVersion;
            state.batch = b;
            state.dual = dual;
        }
        switch (L.channels) {
        case 1: launchSampling<float>(L, stream, first, count, b > 0); break;
        case 2: launchSampling<float2>(L, stream, first, count, b > 0); break;
        case 4: launchSampling<float4>(L, stream, first, count, b > 0); break;
        default: throw InvalidArgument("tex-standard: " + std::to_string(L.channels) + " channels (expected 1, 2, 4)");
        }
        TOMO_CUDA_CHECK(cudaGetLastError());
    }
}

std::string texStandardProbe() {
    cudaFuncAttributes attributes{};
    const cudaError_t error = cudaFuncGetAttributes(&attributes, texStandardKernel<float, Sampling::Hardware>);
    if (error == cudaSuccess) return {};
    (void)cudaGetLastError();
    return cudaGetErrorString(error);
}

} // namespace tomo::cuda
