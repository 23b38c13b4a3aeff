// "hybrid": seed 000 §7.1. Blocks pick their path by a ticket of the SM they
// run on, so each SM keeps the chosen mix of texture and ALU blocks whatever
// order the scheduler hands blocks out in.
#include "hybrid.h"

#include "alu_tile.cuh"
#include "cuda_resources.h"

namespace tomo::cuda {

namespace {

using namespace alu;

template <class S, int C, bool Linear>
union HybridShared {
    AluCache<S, C, Linear> alu;
    GeometryDouble info[kChunk];
};

template <class S, int C, bool Half, bool Linear>
__global__ void __launch_bounds__(S::threads, S::minBlocks)
hybridKernel(TileArgs a, int textureShare, unsigned* __restrict__ tickets) {
    using V = typename Vec<C>::Type;
    static_assert(kAluCacheSizeMatches<S, C, Linear>);
    __shared__ HybridShared<S, C, Linear> sm;
    __shared__ int useTexture, slot;
    if (threadIdx.x == 0) {
        // The k-th block of an SM takes the texture path when k * share mod 16
        // < share: `share` of every 16, spread evenly (also over few blocks).
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        const unsigned ticket = atomicAdd(tickets + smid % kMaxSms, 1u);
        useTexture = static_cast<int>((ticket * static_cast<unsigned>(textureShare)) % 16u) < textureShare;
    }
    // (forEachTile's first barrier publishes useTexture.)
    forEachTile<S>(a, &slot, [&](const TilePlace<S>& t) {
        V acc[S::pixels];
#pragma unroll
        for (int k = 0; k < S::pixels; ++k) acc[k] = zero<V>();
        if (useTexture) textureTile<S, C, Linear>(a, t, sm.info, acc);
        else if constexpr (Linear) linearTile<S, C, Half>(a, t, sm.alu, acc);
        else nearestTile<S, C, Half>(a, t, sm.alu, acc);
        storePixels(a, t, acc);
    });
}

} // namespace

void launchHybrid(const BackprojectLaunch& L, StreamHandle stream) {
    if (L.textureShare < 0 || L.textureShare > 16)
        throw InvalidArgument("hybrid: texture share " + std::to_string(L.textureShare) + " of 16 (expected 0 to 16)");
    withMode(L, [&](auto shape, auto channels, auto half, auto linear) {
        using S = decltype(shape);
        constexpr int C = decltype(channels)::value;
        constexpr bool H = decltype(half)::value, Lin = decltype(linear)::value;
        if constexpr (sizeof(HybridShared<S, C, Lin>) > kMaxStaticSharedBytes) {
            tooLarge("hybrid", sizeof(HybridShared<S, C, Lin>), C);
        } else {
            const auto kernel = hybridKernel<S, C, H, Lin>;
            const TileArgs a = tileArgs(L, S::tile);
            kernel<<<residentBlocks(kernel, S::threads, a, L, stream), S::threads, 0, stream>>>(a, L.textureShare,
                                                                                                   L.d_counters);
        }
    });
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
