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

// The TV steps: blockIdx.y = group, a grid-stride pass over its pixels;
// the dual's components are images of the group ([component][pixel][lane]).
template <int S, int Axes>
__global__ void tvPrimalKernel(const float* __restrict__ z, const float* __restrict__ p, float mu, float lower,
                               float upper, float* __restrict__ x, TvShape T) {
    const std::size_t pixels = static_cast<std::size_t>(T.width) * T.planeRows * T.planes;
    const std::size_t base = blockIdx.y * pixels, plane = static_cast<std::size_t>(T.planeRows) * T.width;
    const float* dual = p + blockIdx.y * Axes * pixels * S;
    for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < pixels;
         e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t row = e / T.width;
        const bool hasUp = row % T.planeRows > 0, hasLeft = e % T.width > 0, hasBack = row >= T.planeRows;
        const Lanes<S> zv = joseph::load<S>(z + (base + e) * S);
        Lanes<S> d[Axes], before[Axes];
        for (int c = 0; c < Axes; ++c) {
            d[c] = joseph::load<S>(dual + (c * pixels + e) * S);
            before[c] = joseph::zeroLanes<S>();
        }
        if (hasUp) before[0] = joseph::load<S>(dual + (e - T.width) * S);
        if (hasLeft) before[1] = joseph::load<S>(dual + (pixels + e - 1) * S);
        if (Axes == 3 && hasBack) before[Axes - 1] = joseph::load<S>(dual + ((Axes - 1) * pixels + e - plane) * S);
        Lanes<S> out;
        for (int j = 0; j < S; ++j) {
            float divergence = 0.0f;
            for (int c = 0; c < Axes; ++c) divergence += d[c].v[j] - before[c].v[j];
            out.v[j] = fminf(fmaxf(zv.v[j] - mu * divergence, lower), upper);
        }
        joseph::store<S>(x + (base + e) * S, out);
    }
}

template <int S, int Axes>
__global__ void tvDualKernel(const float* __restrict__ x, float step, float momentum, float* p, float* r, TvShape T) {
    const std::size_t pixels = static_cast<std::size_t>(T.width) * T.planeRows * T.planes;
    const std::size_t base = blockIdx.y * pixels, plane = static_cast<std::size_t>(T.planeRows) * T.width;
    const std::size_t dual = blockIdx.y * Axes * pixels;
    for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < pixels;
         e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t row = e / T.width;
        const Lanes<S> xv = joseph::load<S>(x + (base + e) * S);
        Lanes<S> next[Axes]; // the neighbours: differences 0 past a plane's last row, the last column, the last plane
        for (int c = 0; c < Axes; ++c) next[c] = xv;
        if (row % T.planeRows + 1 < T.planeRows) next[0] = joseph::load<S>(x + (base + e + T.width) * S);
        if (e % T.width + 1 < static_cast<std::size_t>(T.width)) next[1] = joseph::load<S>(x + (base + e + 1) * S);
        if (Axes == 3 && row + T.planeRows < static_cast<std::size_t>(T.planeRows) * T.planes)
            next[Axes - 1] = joseph::load<S>(x + (base + e + plane) * S);
        Lanes<S> pv[Axes], rv[Axes];
        for (int c = 0; c < Axes; ++c) {
            pv[c] = joseph::load<S>(p + (dual + c * pixels + e) * S);
            rv[c] = joseph::load<S>(r + (dual + c * pixels + e) * S);
        }
        for (int j = 0; j < S; ++j) {
            float a[Axes], norm2 = 0.0f;
            for (int c = 0; c < Axes; ++c) {
                a[c] = rv[c].v[j] + step * (xv.v[j] - next[c].v[j]);
                norm2 += a[c] * a[c];
            }
            const float norm = fmaxf(1.0f, sqrtf(norm2));
            for (int c = 0; c < Axes; ++c) {
                a[c] /= norm;
                rv[c].v[j] = a[c] + momentum * (a[c] - pv[c].v[j]);
                pv[c].v[j] = a[c];
            }
        }
        for (int c = 0; c < Axes; ++c) {
            joseph::store<S>(p + (dual + c * pixels + e) * S, pv[c]);
            joseph::store<S>(r + (dual + c * pixels + e) * S, rv[c]);
        }
    }
}

template <int Axes>
void launchTvPrimalOf(const float* d_z, const float* d_p, float mu, float lower, float upper, float* d_x,
                      const TvShape& T, int lanes, int groups, StreamHandle stream) {
    const dim3 grid(blocksFor(static_cast<std::size_t>(T.width) * T.planeRows * T.planes), groups);
    if (lanes == 4) tvPrimalKernel<4, Axes><<<grid, kThreads, 0, stream>>>(d_z, d_p, mu, lower, upper, d_x, T);
    else if (lanes == 2) tvPrimalKernel<2, Axes><<<grid, kThreads, 0, stream>>>(d_z, d_p, mu, lower, upper, d_x, T);
    else tvPrimalKernel<1, Axes><<<grid, kThreads, 0, stream>>>(d_z, d_p, mu, lower, upper, d_x, T);
}

template <int Axes>
void launchTvDualOf(const float* d_x, float step, float momentum, float* d_p, float* d_r, const TvShape& T, int lanes,
                    int groups, StreamHandle stream) {
    const dim3 grid(blocksFor(static_cast<std::size_t>(T.width) * T.planeRows * T.planes), groups);
    if (lanes == 4) tvDualKernel<4, Axes><<<grid, kThreads, 0, stream>>>(d_x, step, momentum, d_p, d_r, T);
    else if (lanes == 2) tvDualKernel<2, Axes><<<grid, kThreads, 0, stream>>>(d_x, step, momentum, d_p, d_r, T);
    else tvDualKernel<1, Axes><<<grid, kThreads, 0, stream>>>(d_x, step, momentum, d_p, d_r, T);
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

void launchTvPrimal(const float* d_z, const float* d_p, float mu, float lower, float upper, float* d_x,
                    const TvShape& shape, int lanes, int groups, StreamHandle stream) {
    if (shape.planes > 1) launchTvPrimalOf<3>(d_z, d_p, mu, lower, upper, d_x, shape, lanes, groups, stream);
    else launchTvPrimalOf<2>(d_z, d_p, mu, lower, upper, d_x, shape, lanes, groups, stream);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchTvDual(const float* d_x, float step, float momentum, float* d_p, float* d_r, const TvShape& shape,
                  int lanes, int groups, StreamHandle stream) {
    if (shape.planes > 1) launchTvDualOf<3>(d_x, step, momentum, d_p, d_r, shape, lanes, groups, stream);
    else launchTvDualOf<2>(d_x, step, momentum, d_p, d_r, shape, lanes, groups, stream);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
