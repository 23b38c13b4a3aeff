// Half-acquisition stitching kernel (see half_acquisition_kernels.h).
#include "half_acquisition_kernels.h"

#include "cuda_resources.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace tomo::cuda {

namespace {

constexpr int kThreads = 128;
constexpr int kMaxGridYZ = 65535;

// The CPU's float expression (1 - w) a + w b, each operation rounded on its
// own (no fused multiply-add), as the CPU build computes it.
__device__ __forceinline__ float blend(float a, float b, float w) {
    return __fadd_rn(__fmul_rn(__fsub_rn(1.0f, w), a), __fmul_rn(w, b));
}

// half_acquisition.cpp's sampleLinear on a line whose value at column c is
// value(c): linear, the edge value beyond the ends.
template <class Value>
__device__ __forceinline__ float sampleLinear(Value value, int n, double x) {
    if (x <= 0.0) return value(0);
    if (x >= n - 1) return value(n - 1);
    const int k = static_cast<int>(x);
    const float w = __double2float_rn(x - k);
    return blend(value(k), value(k + 1), w);
}

// x = output column, blockIdx.y (+ grid stride) = view, blockIdx.z (+ grid stride) = sinogram.
// The partner line is interpolated in angle on the fly, each value as the
// CPU's partners() stores it.
__global__ void stitchKernel(StitchLaunch L) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= L.columns) return;
    const int n = L.inputColumns;
    const double s = j - L.outputAxis;
    const double w = L.d_viewWeight[j];
    for (int k = blockIdx.z; k < L.count; k += gridDim.z) {
        const float* sinogram = L.d_in + static_cast<std::size_t>(k) * L.inputProjections * n;
        for (int v = blockIdx.y; v < L.views; v += gridDim.y) {
            const float* view = sinogram + static_cast<std::size_t>(L.d_views[v]) * n;
            const float* lower = sinogram + static_cast<std::size_t>(L.d_partnerLower[v]) * n;
            const float* upper = sinogram + static_cast<std::size_t>(L.d_partnerUpper[v]) * n;
            const float partnerWeight = L.d_partnerWeight[v];
            const float a = w > 0.0 ? sampleLinear([=](int c) { return view[c]; }, n, L.axis + s) : 0.0f;
            const float b =
                w < 1.0 ? sampleLinear([=](int c) { return blend(lower[c], upper[c], partnerWeight); }, n, L.axis - s)
                        : 0.0f;
            L.d_out[(static_cast<std::size_t>(k) * L.views + v) * L.columns + j] =
                __double2float_rn(__dadd_rn(__dmul_rn(w, a), __dmul_rn(__dsub_rn(1.0, w), b)));
        }
    }
}

} // namespace

void launchStitch(const StitchLaunch& launch, StreamHandle stream) {
    const dim3 grid((launch.columns + kThreads - 1) / kThreads, std::min(launch.views, kMaxGridYZ),
                    std::min(launch.count, kMaxGridYZ));
    stitchKernel<<<grid, kThreads, 0, stream>>>(launch);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
