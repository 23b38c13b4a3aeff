// The vector arithmetic of the iterative methods on the CUDA pair's vectors
// ([group][element][lane], projector_kernels.h): per-slice axpby, dot
// products in double with a fixed summation order (two passes: per-block
// partials, then one block per slice), clamping, SIRT's weights, the
// interleaving of uploads and downloads, and the TV steps of projector.h.
// Every kernel is memory-bound: one thread per element and lane group
// (a float, float2 or float4), grid-stride loops.
#include "projector_kernels.h"

#include "block_sum.cuh"
#include "cuda_resources.h"
#include "recon/joseph.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace tomo::cuda {

namespace {

using joseph::Lanes;

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;   // grid-stride loops beyond
constexpr int kDotBlocks = 264;    // per group: 2 per SM of an H100 / H200

int blocksFor(std::size_t n) {
    return static_cast<int>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// blockIdx.y = group; a thread per element (S lanes), grid-stride.
template <int S>
__global__ void axpbyKernel(SliceScalars a, const float* __restrict__ x, SliceScalars b, float* __restrict__ y,
                            std::size_t elements) {
    const int g = static_cast<int>(blockIdx.y);
    const std::size_t base = static_cast<std::size_t>(g) * elements;
    for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < elements;
         e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t i = (base + e) * S;
        const Lanes<S> xv = joseph::load<S>(x + i);
        Lanes<S> yv;
        for (int j = 0; j < S; ++j) yv.v[j] = y[i + j];
        for (int j = 0; j < S; ++j) {
            const float bj = b.v[g * S + j], aj = a.v[g * S + j];
            yv.v[j] = bj == 0.0f ? aj * xv.v[j] : aj * xv.v[j] + bj * yv.v[j];
        }
        joseph::store<S>(y + i, yv);
    }
}

// blockIdx.y = group; the group's elements spread over gridDim.x blocks.
template <int S>
__global__ void __launch_bounds__(kThreads) dotKernel(const float* __restrict__ x, const float* __restrict__ y,
                                                      std::size_t elements, double* partial) {
    const std::size_t base = blockIdx.y * elements;
    double sum[S];
    for (int j = 0; j < S; ++j) sum[j] = 0.0;
    for (std::size_t e = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x; e < elements;
         e += static_cast<std::size_t>(gridDim.x) * kThreads) {
        const Lanes<S> a = joseph::load<S>(x + (base + e) * S), b = joseph::load<S>(y + (base + e) * S);
        for (int j = 0; j < S; ++j) sum[j] += static_cast<double>(a.v[j]) * b.v[j];
    }
    blockSum<kThreads, S>(sum, partial + (static_cast<std::size_t>(blockIdx.y) * gridDim.x + blockIdx.x) * S);
}

// blockIdx.x = group * lanes + lane: one block sums that lane's partials.
__global__ void __launch_bounds__(kThreads) sumPartialsKernel(const double* __restrict__ partial, int blocks,
                                                              int lanes, double* sums) {
    const int g = static_cast<int>(blockIdx.x) / lanes, lane = static_cast<int>(blockIdx.x) % lanes;
    double value[1] = {0.0};
    for (int b = static_cast<int>(threadIdx.x); b < blocks; b += kThreads)
        value[0] += partial[(static_cast<std::size_t>(g) * blocks + b) * lanes + lane];
    blockSum<kThreads, 1>(value, sums + blockIdx.x);
}

__global__ void clampKernel(float* x, std::size_t n, float lower, float upper) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        x[i] = fminf(fmaxf(x[i], lower), upper);
}

__global__ void invertKernel(float* x, std::size_t n, float minimum) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        x[i] = x[i] > minimum ? 1.0f / x[i] : 0.0f;
}

__global__ void fillKernel(float* x, std::size_t n, float value) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        x[i] = value;
}

// One thread per element of the group: gathers (or scatters) its lanes.
__global__ void interleaveKernel(const float* __restrict__ plain, float* __restrict__ group, std::size_t elements,
                                 int lanes, int valid) {
    for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < elements;
         e += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        for (int j = 0; j < lanes; ++j) group[e * lanes + j] = j < valid ? plain[j * elements + e] : 0.0f;
}

__global__ void deinterleaveKernel(const float* __restrict__ group, float* __restrict__ plain, std::size_t elements,
                                   int lanes, int valid) {
    for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < elements;
         e += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        for (int j = 0; j < valid; ++j) plain[j * elements + e] = group[e * lanes + j];
}

// threadIdx.x + blockIdx.x = column, blockIdx.y = row, blockIdx.z = group.
template <int S>
__global__ void tvPrimalKernel(const float* __restrict__ z, const float* __restrict__ p, const float* __restrict__ q,
                               float mu, float lower, float upper, float* __restrict__ x, int width, int height) {
    const int ix = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x), iy = static_cast<int>(blockIdx.y);
    if (ix >= width) return;
    const std::size_t i = (static_cast<std::size_t>(blockIdx.z) * height + iy) * width + ix;
    const Lanes<S> zv = joseph::load<S>(z + i * S), pv = joseph::load<S>(p + i * S), qv = joseph::load<S>(q + i * S);
    Lanes<S> up = joseph::zeroLanes<S>(), left = joseph::zeroLanes<S>();
    if (iy > 0) up = joseph::load<S>(p + (i - width) * S);
    if (ix > 0) left = joseph::load<S>(q + (i - 1) * S);
    Lanes<S> out;
    for (int j = 0; j < S; ++j) {
        const float divergence = pv.v[j] + qv.v[j] - up.v[j] - left.v[j];
        out.v[j] = fminf(fmaxf(zv.v[j] - mu * divergence, lower), upper);
    }
    joseph::store<S>(x + i * S, out);
}

template <int S>
__global__ void tvDualKernel(const float* __restrict__ x, float step, float momentum, float* p, float* q, float* r,
                             float* s, int width, int height) {
    const int ix = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x), iy = static_cast<int>(blockIdx.y);
    if (ix >= width) return;
    const std::size_t i = (static_cast<std::size_t>(blockIdx.z) * height + iy) * width + ix;
    const Lanes<S> xv = joseph::load<S>(x + i * S);
    Lanes<S> below = xv, right = xv; // differences 0 past the last row / column
    if (iy + 1 < height) below = joseph::load<S>(x + (i + width) * S);
    if (ix + 1 < width) right = joseph::load<S>(x + (i + 1) * S);
    Lanes<S> pv, qv, rv, sv;
    for (int j = 0; j < S; ++j) pv.v[j] = p[i * S + j], qv.v[j] = q[i * S + j], rv.v[j] = r[i * S + j], sv.v[j] = s[i * S + j];
    for (int j = 0; j < S; ++j) {
        float a = rv.v[j] + step * (xv.v[j] - below.v[j]);
        float b = sv.v[j] + step * (xv.v[j] - right.v[j]);
        const float norm = fmaxf(1.0f, sqrtf(a * a + b * b));
        a /= norm;
        b /= norm;
        rv.v[j] = a + momentum * (a - pv.v[j]);
        sv.v[j] = b + momentum * (b - qv.v[j]);
        pv.v[j] = a;
        qv.v[j] = b;
    }
    joseph::store<S>(p + i * S, pv);
    joseph::store<S>(q + i * S, qv);
    joseph::store<S>(r + i * S, rv);
    joseph::store<S>(s + i * S, sv);
}

dim3 imageGrid(int width, int height, int groups) {
    return dim3((width + kThreads - 1) / kThreads, height, groups);
}

} // namespace

void launchAxpby(const SliceScalars& a, const float* d_x, const SliceScalars& b, float* d_y, std::size_t elements,
                 int lanes, int groups, StreamHandle stream) {
    const dim3 grid(std::max(1, blocksFor(elements) / std::max(1, std::min(groups, 8))), groups);
    if (lanes == 4) axpbyKernel<4><<<grid, kThreads, 0, stream>>>(a, d_x, b, d_y, elements);
    else if (lanes == 2) axpbyKernel<2><<<grid, kThreads, 0, stream>>>(a, d_x, b, d_y, elements);
    else axpbyKernel<1><<<grid, kThreads, 0, stream>>>(a, d_x, b, d_y, elements);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

int dotBlocks(std::size_t elements) {
    return static_cast<int>(std::clamp<std::size_t>((elements + kThreads - 1) / kThreads, 1, kDotBlocks));
}

void launchDotPartials(const float* d_x, const float* d_y, std::size_t elements, int lanes, int groups,
                       double* d_partial, StreamHandle stream) {
    const dim3 grid(dotBlocks(elements), groups);
    if (lanes == 4) dotKernel<4><<<grid, kThreads, 0, stream>>>(d_x, d_y, elements, d_partial);
    else if (lanes == 2) dotKernel<2><<<grid, kThreads, 0, stream>>>(d_x, d_y, elements, d_partial);
    else dotKernel<1><<<grid, kThreads, 0, stream>>>(d_x, d_y, elements, d_partial);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchSumPartials(const double* d_partial, int blocks, int lanes, int groups, double* d_sums,
                       StreamHandle stream) {
    sumPartialsKernel<<<groups * lanes, kThreads, 0, stream>>>(d_partial, blocks, lanes, d_sums);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchClamp(float* d_x, std::size_t n, float lower, float upper, StreamHandle stream) {
    clampKernel<<<blocksFor(n), kThreads, 0, stream>>>(d_x, n, lower, upper);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchInvertSums(float* d_x, std::size_t n, float minimum, StreamHandle stream) {
    invertKernel<<<blocksFor(n), kThreads, 0, stream>>>(d_x, n, minimum);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchFill(float* d_x, std::size_t n, float value, StreamHandle stream) {
    fillKernel<<<blocksFor(n), kThreads, 0, stream>>>(d_x, n, value);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchInterleave(const float* d_plain, float* d_group, std::size_t elements, int lanes, int valid,
                      StreamHandle stream) {
    interleaveKernel<<<blocksFor(elements), kThreads, 0, stream>>>(d_plain, d_group, elements, lanes, valid);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchDeinterleave(const float* d_group, float* d_plain, std::size_t elements, int lanes, int valid,
                        StreamHandle stream) {
    deinterleaveKernel<<<blocksFor(elements), kThreads, 0, stream>>>(d_group, d_plain, elements, lanes, valid);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchTvPrimal(const float* d_z, const float* d_p, const float* d_q, float mu, float lower, float upper,
                    float* d_x, int width, int height, int lanes, int groups, StreamHandle stream) {
    const dim3 grid = imageGrid(width, height, groups);
    if (lanes == 4) tvPrimalKernel<4><<<grid, kThreads, 0, stream>>>(d_z, d_p, d_q, mu, lower, upper, d_x, width, height);
    else if (lanes == 2) tvPrimalKernel<2><<<grid, kThreads, 0, stream>>>(d_z, d_p, d_q, mu, lower, upper, d_x, width, height);
    else tvPrimalKernel<1><<<grid, kThreads, 0, stream>>>(d_z, d_p, d_q, mu, lower, upper, d_x, width, height);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchTvDual(const float* d_x, float step, float momentum, float* d_p, float* d_q, float* d_r, float* d_s,
                  int width, int height, int lanes, int groups, StreamHandle stream) {
    const dim3 grid = imageGrid(width, height, groups);
    if (lanes == 4) tvDualKernel<4><<<grid, kThreads, 0, stream>>>(d_x, step, momentum, d_p, d_q, d_r, d_s, width, height);
    else if (lanes == 2) tvDualKernel<2><<<grid, kThreads, 0, stream>>>(d_x, step, momentum, d_p, d_q, d_r, d_s, width, height);
    else tvDualKernel<1><<<grid, kThreads, 0, stream>>>(d_x, step, momentum, d_p, d_q, d_r, d_s, width, height);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
