// "alu": seed 000 §6 (Algorithm 6 with the advanced caching of §6.4 and the
// rounding of §6.6), shapes of §6.9; the tile itself is in alu_tile.cuh.
#include "alu.h"

#include "alu_tile.cuh"
#include "cuda_resources.h"

namespace tomo::cuda {

namespace {

using namespace alu;

template <class S, int C, bool Half, bool Linear>
__global__ void __launch_bounds__(S::threads, S::minBlocks) aluKernel(TileArgs a) {
    using V = typename Vec<C>::Type;
    static_assert(kAluCacheSizeMatches<S, C, Linear>);
    __shared__ AluCache<S, C, Linear> sm;
    __shared__ int slot;
    forEachTile<S>(a, &slot, [&](const TilePlace<S>& t) {
        V acc[S::pixels];
#pragma unroll
        for (int k = 0; k < S::pixels; ++k) acc[k] = zero<V>();
        if constexpr (Linear) linearTile<S, C, Half>(a, t, sm, acc);
        else nearestTile<S, C, Half>(a, t, sm, acc);
        storePixels(a, t, acc);
    });
}

} // namespace

void launchAlu(const BackprojectLaunch& L, StreamHandle stream) {
    withMode(L, [&](auto shape, auto channels, auto half, auto linear) {
        using S = decltype(shape);
        constexpr int C = decltype(channels)::value;
        constexpr bool H = decltype(half)::value, Lin = decltype(linear)::value;
        if constexpr (sizeof(AluCache<S, C, Lin>) > kMaxStaticSharedBytes) {
            tooLarge("alu", sizeof(AluCache<S, C, Lin>), C);
        } else {
            const auto kernel = aluKernel<S, C, H, Lin>;
            const TileArgs a = tileArgs(L, S::tile);
            kernel<<<residentBlocks(kernel, S::threads, a, L, stream), S::threads, 0, stream>>>(a);
        }
    });
    TOMO_CUDA_CHECK(cudaGetLastError());
}

std::string aluProbe() {
    cudaFuncAttributes attributes{};
    const cudaError_t error = cudaFuncGetAttributes(&attributes, aluKernel<ShapeAt<0>, 1, false, true>);
    if (error == cudaSuccess) return {};
    (void)cudaGetLastError();
    return cudaGetErrorString(error);
}

} // namespace tomo::cuda
