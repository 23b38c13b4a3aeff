// The divergent-beam pair's kernels (divergent_projector_kernels.h). A
// thread traces its ray from its view's frame (recon/divergent_ray.h, in
// double, as the CPU pair) and walks it: the forward sums the four voxels
// of each crossing read through the read-only cache; the back-projection
// adds the same weights times its value into the volume with atomics
// (the exact transpose; a gather needs each voxel's rays, which a
// projective map of the detector makes irregular).
#include "divergent_projector_kernels.h"

#include "block_sum.cuh"
#include "cuda_resources.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace tomo::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kForwardBlocks = 1056; // 8 per SM of an H100 / H200; grid-stride beyond

int blocksFor(std::size_t n) {
    return static_cast<int>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, 8192));
}

__device__ divergent::Ray rayOf(const DivergentRays& R, std::size_t i) {
    const std::size_t perView = static_cast<std::size_t>(R.columns) * R.rows;
    const int p = static_cast<int>(i / perView);
    const int rest = static_cast<int>(i - p * perView);
    return divergent::trace(R.d_views[p], rest % R.columns, rest / R.columns, R.volume);
}

__global__ void __launch_bounds__(kThreads)
    forwardKernel(DivergentRays R, const float* __restrict__ image, float* __restrict__ out,
                  const float* __restrict__ data, const float* __restrict__ rowWeights, double* partial) {
    const std::size_t rays = static_cast<std::size_t>(R.views) * R.columns * R.rows;
    double squares[1] = {0.0};
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x; i < rays;
         i += static_cast<std::size_t>(gridDim.x) * kThreads) {
        double sum = 0.0;
        divergent::walk(rayOf(R, i), R.volume, [&](std::size_t voxel, double w) { sum += w * __ldg(image + voxel); });
        auto value = static_cast<float>(sum);
        if (data) {
            const float r = data[i] - value;
            squares[0] += static_cast<double>(r) * r;
            value = rowWeights ? rowWeights[i] * r : r;
        }
        out[i] = value;
    }
    if (data) blockSum<kThreads, 1>(squares, partial + blockIdx.x);
}

__global__ void __launch_bounds__(kThreads)
    backKernel(DivergentRays R, const float* __restrict__ sinogram, float* image) {
    const std::size_t rays = static_cast<std::size_t>(R.views) * R.columns * R.rows;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x; i < rays;
         i += static_cast<std::size_t>(gridDim.x) * kThreads) {
        const double value = sinogram[i];
        if (value == 0.0) continue; // adds nothing (SIRT's rays that miss the grid)
        divergent::walk(rayOf(R, i), R.volume,
                        [&](std::size_t voxel, double w) { atomicAdd(image + voxel, static_cast<float>(w * value)); });
    }
}

__global__ void stepKernel(const float* __restrict__ back, std::size_t voxels, float step,
                           const float* __restrict__ columnWeights, float lower, float upper, float* image) {
    for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < voxels;
         e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float v = columnWeights ? columnWeights[e] * back[e] : back[e];
        image[e] = fminf(fmaxf(image[e] + step * v, lower), upper);
    }
}

} // namespace

int divergentForwardBlocks() { return kForwardBlocks; }

void launchDivergentForward(const DivergentRays& rays, const float* d_image, float* d_out, const float* d_data,
                            const float* d_rowWeights, double* d_partial, StreamHandle stream) {
    forwardKernel<<<kForwardBlocks, kThreads, 0, stream>>>(rays, d_image, d_out, d_data, d_rowWeights, d_partial);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchDivergentBack(const DivergentRays& rays, const float* d_sinogram, float* d_image, StreamHandle stream) {
    const std::size_t count = static_cast<std::size_t>(rays.views) * rays.columns * rays.rows;
    backKernel<<<blocksFor(count), kThreads, 0, stream>>>(rays, d_sinogram, d_image);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchDivergentStep(const float* d_back, std::size_t voxels, float step, const float* d_columnWeights,
                         float lower, float upper, float* d_image, StreamHandle stream) {
    stepKernel<<<blocksFor(voxels), kThreads, 0, stream>>>(d_back, voxels, step, d_columnWeights, lower, upper,
                                                           d_image);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
