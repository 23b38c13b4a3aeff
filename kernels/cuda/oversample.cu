// "oversample": seed 000 §7.2 on the ALU tile of alu_tile.cuh.
#include "oversample.h"

#include "alu_tile.cuh"
#include "cuda_resources.h"

namespace tomo::cuda {

namespace {

using namespace alu;

template <class S, int C>
__global__ void __launch_bounds__(S::threads, S::minBlocks) oversampleKernel(TileArgs a) {
    using V = typename Vec<C>::Type;
    static_assert(kOversampleCacheSizeMatches<S, C>);
    __shared__ OversampleCache<S, C> sm;
    __shared__ int slot;
    forEachTile<S>(a, &slot, [&](const TilePlace<S>& t) {
        V acc[S::pixels];
#pragma unroll
        for (int k = 0; k < S::pixels; ++k) acc[k] = zero<V>();
        oversampleTile<S, C>(a, t, sm, acc);
        storePixels(a, t, acc);
    });
}

} // namespace

void launchOversample(const BackprojectLaunch& L, StreamHandle stream) {
    if (!L.linear) throw InvalidArgument("oversample: approximates linear interpolation; the texture must filter");
    withShape(L.aluShape, [&](auto shape) {
        using S = decltype(shape);
        withChannels(L.channels, [&](auto channels) {
            constexpr int C = decltype(channels)::value;
            if constexpr (sizeof(OversampleCache<S, C>) > kMaxStaticSharedBytes) {
                tooLarge("oversample", sizeof(OversampleCache<S, C>), C);
            } else {
                const auto kernel = oversampleKernel<S, C>;
                const TileArgs a = tileArgs(L, S::tile);
                kernel<<<residentBlocks(kernel, S::threads, a, L, stream), S::threads, 0, stream>>>(a);
            }
        });
    });
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
