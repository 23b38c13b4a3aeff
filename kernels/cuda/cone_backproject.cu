// Cone-beam back-projection on the GPU (seed 002 Listing 1, seed 001 §3.1's
// idea of several voxels per thread along z).
#include "cone_backproject.h"

#include "cuda_resources.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace tomo::cuda {

namespace {

constexpr int kVoxelsAlongZ = 8;
constexpr int kBlock = 16;

__constant__ float4 c_matrices[3 * kConeMaxViews]; // rows of each view's matrix

// threadIdx = (i, j) of a 16x16 column block, blockIdx.z = a run of 8 voxels along z
__global__ void __launch_bounds__(kBlock * kBlock)
coneKernel(cudaTextureObject_t tex, int views, int nx, int ny, int nz, float x0, float y0, float z0, float voxelSize,
           float scale, bool accumulate, float* __restrict__ volume) {
    const int i = static_cast<int>(blockIdx.x) * kBlock + static_cast<int>(threadIdx.x);
    const int j = static_cast<int>(blockIdx.y) * kBlock + static_cast<int>(threadIdx.y);
    const int k0 = static_cast<int>(blockIdx.z) * kVoxelsAlongZ;
    if (i >= nx || j >= ny) return;
    const float x = x0 + static_cast<float>(i) * voxelSize;
    const float y = y0 + static_cast<float>(j) * voxelSize;
    const float z = z0 + static_cast<float>(k0) * voxelSize;
    float acc[kVoxelsAlongZ] = {};
    for (int p = 0; p < views; ++p) {
        const float4 a = c_matrices[3 * p], b = c_matrices[3 * p + 1], c = c_matrices[3 * p + 2];
        float uw = fmaf(a.z, z, fmaf(a.y, y, fmaf(a.x, x, a.w)));
        float vw = fmaf(b.z, z, fmaf(b.y, y, fmaf(b.x, x, b.w)));
        float w = fmaf(c.z, z, fmaf(c.y, y, fmaf(c.x, x, c.w)));
        const float du = a.z * voxelSize, dv = b.z * voxelSize, dw = c.z * voxelSize;
#pragma unroll
        for (int q = 0; q < kVoxelsAlongZ; ++q) {
            if (w > 0.0f) { // in front of the source
                const float inv = __frcp_rn(w);
                const float value = tex2DLayered<float>(tex, fmaf(uw, inv, 0.5f), fmaf(vw, inv, 0.5f), p);
                acc[q] = fmaf(value * inv, inv, acc[q]);
            }
            uw += du;
            vw += dv;
            w += dw;
        }
    }
#pragma unroll
    for (int q = 0; q < kVoxelsAlongZ; ++q) {
        const int k = k0 + q;
        if (k >= nz) break;
        float* out = volume + (static_cast<std::size_t>(k) * ny + j) * nx + i;
        *out = accumulate ? *out + acc[q] * scale : acc[q] * scale;
    }
}

// grid stride over the pixels of all views
__global__ void coneWeightKernel(ConeWeightLaunch L) {
    const long long total = static_cast<long long>(L.views) * L.rows * L.columns;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const int c = static_cast<int>(i % L.columns);
        const long long line = i / L.columns;
        const int r = static_cast<int>(line % L.rows);
        const int p = static_cast<int>(line / L.rows);
        const float4 f = reinterpret_cast<const float4*>(L.d_frames)[p];
        const float tu = (static_cast<float>(c) - f.x) * f.z;
        const float tv = (static_cast<float>(r) - f.y) * f.w;
        float w = rsqrtf(1.0f + tu * tu + tv * tv);
        if (L.d_columnWeights) w *= L.d_columnWeights[static_cast<long long>(p) * L.columns + c];
        L.d_views[i] *= w;
    }
}

} // namespace

void launchConeWeight(const ConeWeightLaunch& L, StreamHandle stream) {
    const long long total = static_cast<long long>(L.views) * L.rows * L.columns;
    if (total == 0) return;
    constexpr int kThreads = 256;
    const int blocks = static_cast<int>(std::min<long long>((total + kThreads - 1) / kThreads, 65535LL * 32));
    coneWeightKernel<<<blocks, kThreads, 0, stream>>>(L);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void uploadConeMatrices(const float* h_matrices, int views, StreamHandle stream) {
    if (views < 1 || views > kConeMaxViews)
        throw InvalidArgument("cone back-projection: " + std::to_string(views) + " views in one batch (1 to " +
                              std::to_string(kConeMaxViews) + ")");
    TOMO_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_matrices, h_matrices, static_cast<std::size_t>(views) * 12 * sizeof(float),
                                            0, cudaMemcpyHostToDevice, stream));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void launchConeBackproject(const ConeLaunch& L, StreamHandle stream) {
    const dim3 block(kBlock, kBlock);
    const dim3 grid(static_cast<unsigned>((L.nx + kBlock - 1) / kBlock), static_cast<unsigned>((L.ny + kBlock - 1) / kBlock),
                    static_cast<unsigned>((L.nz + kVoxelsAlongZ - 1) / kVoxelsAlongZ));
    coneKernel<<<grid, block, 0, stream>>>(L.texture, L.views, L.nx, L.ny, L.nz, L.x0, L.y0, L.z0, L.voxelSize, L.scale,
                                           L.accumulate, L.d_volume);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
