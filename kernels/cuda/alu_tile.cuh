// The tile of the ALU strategies (alu.cu, hybrid.cu, oversample.cu): seed 000
// §6 on the H100. Device code only.
//
// A block owns a Tile x Tile square of the grid (on the grid's lattice, so a
// region or a band is a window of the full slice, computed by the same
// arithmetic). Projections go in chunks of kChunk: one thread per projection
// computes the chunk's row constants (RowInfo) into shared memory, in double
// precision. Then, per group of Group projections, the block copies the bins
// each projection needs (from h_m, the lowest bin any pixel of the tile
// reads, seed 000 §6.1) from the packed sinogram in global memory into a
// shared-memory cache, and every thread interpolates its pixels from it.
//
// Warps cover 8 x 4 pixel patches: a warp's 32 lanes then read at most ~12
// distinct cache entries per projection, one shared-memory wavefront even
// for 8-byte entries (a 32-pixel row would read up to 33: two or three).
// A thread's pixels are one column, rows StepRows apart.
//
// Linear ("advanced caching", seed 000 §6.4, one step further): entry k of a
// row holds a_k = v_k - k d_k and d_k = v_{k+1} - v_k, so the contribution
// of a pixel at offset s in [k, k + 1) from h_m is v_k + (s - k) d_k =
// fma(s, d_k, a_k): no fraction to form. k = floor(s) comes from one
// round-down add of 2^23 (seed 000 §6.6: the FP units round, no conversion
// instruction), whose bits, scaled, are the entry's shared-memory address.
// h_m is one bin below the tile's lowest position, so s >= 1 > 0 despite
// rounding, and the add needs no clamp.
//
// Nearest: positions in double as the texture kernels' SnapDouble sampling
// (kernel_launch.h), so the bin is the reference's floor(s + 0.5) at ties;
// the H100's FP64 pipe runs at half the FP32 rate, which is not the limit.
//
// Oversample (seed 000 §7.2): four samples per bin, at offsets 0, 1/4, 1/2,
// 3/4, filtered by the texture unit; a pixel takes the sample nearest to it.
#pragma once

#include "cuda_resources.h"
#include "kernel_launch.h"
#include "sampling.cuh"
#include "vector_ops.cuh"

#include "tomo/error.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <type_traits>

namespace tomo::cuda::alu {

constexpr int kChunk = kAluChunk;

/// Compile-time shape of a block: Tile x Tile pixels, Threads threads
/// (Tile^2 / Threads pixels each), Group projections cached per step, and
/// the occupancy target (blocks per SM) the register cap follows from.
template <int Tile_, int Threads_, int Group_, int MinBlocks_>
struct Shape {
    static constexpr int tile = Tile_, threads = Threads_, group = Group_, minBlocks = MinBlocks_;
    static constexpr int warps = threads / 32;
    static constexpr int warpsAcross = tile / 8;
    static constexpr int warpsDown = warps / warpsAcross;
    static constexpr int stepRows = 4 * warpsDown;
    static constexpr int pixels = tile / stepRows;
    static constexpr int cached = aluCachedBins(tile);
    static constexpr AluShape value{tile, threads, group, minBlocks};
    static_assert(threads % 32 == 0 && warps % warpsAcross == 0 && tile % stepRows == 0, "tile / thread mapping");
    static_assert(threads <= kChunk && kChunk % threads == 0, "row constants: whole steps of threads");
};

/// Slices of one pass: float, float2, float4.
template <int C> struct Vec;
template <> struct Vec<1> { using Type = float; };
template <> struct Vec<2> { using Type = float2; };
template <> struct Vec<4> { using Type = float4; };

__device__ __forceinline__ float fmaV(float s, float d, float a) { return fmaf(s, d, a); }
__device__ __forceinline__ float2 fmaV(float s, float2 d, float2 a) { return make_float2(fmaf(s, d.x, a.x), fmaf(s, d.y, a.y)); }
__device__ __forceinline__ float4 fmaV(float s, float4 d, float4 a) {
    return make_float4(fmaf(s, d.x, a.x), fmaf(s, d.y, a.y), fmaf(s, d.z, a.z), fmaf(s, d.w, a.w));
}
__device__ __forceinline__ float2 operator-(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
__device__ __forceinline__ float4 operator-(float4 a, float4 b) {
    return make_float4(a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w);
}

/// Texel `bin` of a packed row (C floats or halves); 0 outside [0, bins),
/// as the texture unit's border addressing.
template <int C, bool Half>
__device__ __forceinline__ typename Vec<C>::Type loadTexel(const unsigned char* __restrict__ row, int bin, int bins) {
    using V = typename Vec<C>::Type;
    if (bin < 0 || bin >= bins) return zero<V>();
    if constexpr (!Half) {
        return __ldg(reinterpret_cast<const V*>(row) + bin);
    } else if constexpr (C == 1) {
        return __half2float(__ldg(reinterpret_cast<const __half*>(row) + bin));
    } else if constexpr (C == 2) {
        return __half22float2(__ldg(reinterpret_cast<const __half2*>(row) + bin));
    } else {
        const uint2 raw = __ldg(reinterpret_cast<const uint2*>(row) + bin);
        const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&raw.x));
        const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&raw.y));
        return make_float4(a.x, a.y, b.x, b.y);
    }
}

/// What a kernel of this family reads (BackprojectLaunch, device side).
struct TileArgs {
    const unsigned char* __restrict__ sinogram; ///< packed pass: projections rows of `pitch` bytes
    std::size_t pitch;
    int bins;
    cudaTextureObject_t texture;                ///< the same pass as a texture (oversample, hybrid)
    const float4* __restrict__ geometry;        ///< cos, sin, axis_p, - (float)
    const GeometryDouble* __restrict__ geometryDouble;
    int projections;
    int regionX, regionY, regionWidth, regionHeight;
    float centreX, centreY;
    float* __restrict__ slices;
    std::size_t sliceStride;
    int validSlices;
    const float* __restrict__ scale;
    // Tiles: the region's squares on the grid's Tile lattice, row-major from
    // (x0, y0); blocks take them one by one from *tileCounter (zeroed per launch).
    int x0, y0, tilesAcross, tileCount;
    unsigned* tileCounter;
};

/// The block's square and this thread's pixels in it.
template <class S>
struct TilePlace {
    int tileX, tileY; ///< grid coordinates of the square's top-left pixel
    int col, row0;    ///< this thread's column, first row (local); rows row0 + k * stepRows

    __device__ __forceinline__ TilePlace(const TileArgs& a, int tile) {
        tileX = a.x0 + (tile % a.tilesAcross) * S::tile;
        tileY = a.y0 + (tile / a.tilesAcross) * S::tile;
        const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
        col = (warp % S::warpsAcross) * 8 + (lane & 7);
        row0 = (warp / S::warpsAcross) * 4 + (lane >> 3);
    }
};

/// Runs body(TilePlace) for tiles taken from the launch's counter until none
/// is left: a block stays resident (one wave of blocks), so SMs and paths
/// (hybrid) that finish early take more tiles instead of idling at the end.
/// `slot`: a __shared__ int of the kernel.
template <class S, class F>
__device__ __forceinline__ void forEachTile(const TileArgs& a, int* slot, F&& body) {
    for (;;) {
        __syncthreads(); // the previous tile's shared memory and slot are no longer read
        if (threadIdx.x == 0) *slot = static_cast<int>(atomicAdd(a.tileCounter, 1u));
        __syncthreads();
        const int tile = *slot;
        if (tile >= a.tileCount) return;
        body(TilePlace<S>(a, tile));
    }
}

/// Where projection g sees the tile's top-left pixel (`origin`, a detector
/// position) and h_m: one bin below the lowest bin any pixel of the tile
/// reads (the corner given by min(0, cos, -sin, cos - sin), seed 000 §6.1).
struct TileRow {
    double origin;
    int hm;
};
template <class S>
__device__ __forceinline__ TileRow tileRow(const TileArgs& a, const GeometryDouble& g, int tileX, int tileY) {
    const double x0 = static_cast<double>(tileX) - static_cast<double>(a.centreX);
    const double y0 = static_cast<double>(tileY) - static_cast<double>(a.centreY);
    const double origin = fma(-y0, g.sinA, fma(x0, g.cosA, g.axis));
    const double lowest = fmin(fmin(0.0, g.cosA), fmin(-g.sinA, g.cosA - g.sinA)) * (S::tile - 1);
    return {origin, static_cast<int>(floor(origin + lowest)) - 1};
}

/// Row constants of one projection for one tile (RowInfo), linear / oversample:
/// cos, sin (times `factor`), the tile origin's offset from h_m (times
/// factor), h_m as int bits.
template <class S>
__device__ __forceinline__ float4 rowInfo(const TileArgs& a, int p, int tileX, int tileY, float factor) {
    if (p >= a.projections) return make_float4(0.0f, 0.0f, factor, __int_as_float(0)); // padding: s = 1, zeros
    const GeometryDouble g = a.geometryDouble[p];
    const TileRow row = tileRow<S>(a, g, tileX, tileY);
    return make_float4(static_cast<float>(g.cosA) * factor, static_cast<float>(g.sinA) * factor,
                       static_cast<float>(row.origin - row.hm) * factor, __int_as_float(row.hm));
}

/// A thread's pixels relative to its tile's top-left pixel (float positions
/// of the linear and oversample paths: small numbers, so little rounding).
template <class S>
struct LocalPixels {
    float x;
    float y[S::pixels];
    __device__ __forceinline__ explicit LocalPixels(const TilePlace<S>& t) : x(static_cast<float>(t.col)) {
#pragma unroll
        for (int k = 0; k < S::pixels; ++k) y[k] = static_cast<float>(t.row0 + k * S::stepRows);
    }
};

/// Writes a thread's sums (times the float16 scale) where they lie in the region.
template <class S, class V>
__device__ __forceinline__ void storePixels(const TileArgs& a, const TilePlace<S>& t, const V (&acc)[S::pixels]) {
    const float scale = a.scale ? a.scale[1] : 1.0f;
    const int gx = t.tileX + t.col - a.regionX;
#pragma unroll
    for (int k = 0; k < S::pixels; ++k) {
        const int gy = t.tileY + t.row0 + k * S::stepRows - a.regionY;
        if (gx < 0 || gy < 0 || gx >= a.regionWidth || gy >= a.regionHeight) continue;
        float* out = a.slices + static_cast<std::size_t>(gy) * a.regionWidth + gx;
        for (int c = 0; c < a.validSlices; ++c) out[c * a.sliceStride] = component(acc[k], c) * scale;
    }
}

/// The element at byte `offset` of a shared array. Offsets are formed in
/// unsigned arithmetic (the float bits carry a bias that wraps away), and the
/// array's base folds into the load's immediate.
template <class T>
__device__ __forceinline__ const T& sharedAt(const unsigned char* base, unsigned offset) {
    return *reinterpret_cast<const T*>(base + offset);
}

// ------------------------------------------------------------------ linear

template <class S, int C>
struct LinearCache {
    using V = typename Vec<C>::Type;
    struct Entry {
        V a, d; // v_k - k d_k, v_{k+1} - v_k
    };
    float4 info[kChunk];
    Entry entries[S::group][S::cached];
};


/// Linear interpolation on the ALUs, all projections, into acc.
template <class S, int C, bool Half>
__device__ __forceinline__ void linearTile(const TileArgs& a, const TilePlace<S>& t, LinearCache<S, C>& sm,
                                           typename Vec<C>::Type (&acc)[S::pixels]) {
    using V = typename Vec<C>::Type;
    using Entry = typename LinearCache<S, C>::Entry;
    const int tid = static_cast<int>(threadIdx.x);
    const LocalPixels<S> px(t);
    const float x = px.x;
    const auto& y = px.y;
    const auto* cacheBytes = reinterpret_cast<const unsigned char*>(&sm.entries[0][0]);
    // floor(s) + 2^23 as int bits, times the entry size: the address less this constant.
    constexpr unsigned kSize = sizeof(Entry), kBias = 0x4B000000u * kSize;

    // One slice: the next group's bins travel into registers while this
    // group is accumulated (software pipelining), so a block does not wait
    // for its global loads at each step. With 2 or 4 slices the registers
    // it takes would spill; there the loads are issued just before the
    // barrier that precedes the cache's update.
    constexpr bool kPrefetch = C == 1;
    constexpr int kPerThread = (S::group * S::cached + S::threads - 1) / S::threads;
    V next0[kPerThread], next1[kPerThread];
    const auto load = [&](int chunk, int base) {
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) {
            const int e = tid + j * S::threads, g = e / S::cached, k = e - g * S::cached;
            const int p = chunk + base + g;
            next0[j] = next1[j] = zero<V>();
            if (e < S::group * S::cached && p < a.projections) {
                const int bin = __float_as_int(sm.info[base + g].w) + k;
                const unsigned char* row = a.sinogram + static_cast<std::size_t>(p) * a.pitch;
                next0[j] = loadTexel<C, Half>(row, bin, a.bins);
                next1[j] = loadTexel<C, Half>(row, bin + 1, a.bins);
            }
        }
    };

    for (int chunk = 0; chunk < a.projections; chunk += kChunk) {
        __syncthreads(); // the previous chunk's rows are no longer read
        for (int i = tid; i < kChunk; i += S::threads) sm.info[i] = rowInfo<S>(a, chunk + i, t.tileX, t.tileY, 1.0f);
        const int count = min(kChunk, a.projections - chunk);
        __syncthreads(); // info written
        if constexpr (kPrefetch) load(chunk, 0);
        for (int base = 0; base < count; base += S::group) {
            if constexpr (!kPrefetch) load(chunk, base);
            __syncthreads(); // the previous group is no longer read
#pragma unroll
            for (int j = 0; j < kPerThread; ++j) {
                const int e = tid + j * S::threads, g = e / S::cached, k = e - g * S::cached;
                if (e >= S::group * S::cached) continue;
                Entry entry;
                entry.d = next1[j] - next0[j];
                entry.a = fmaV(-static_cast<float>(k), entry.d, next0[j]);
                sm.entries[g][k] = entry;
            }
            __syncthreads();
            if constexpr (kPrefetch)
                if (base + S::group < count) load(chunk, base + S::group);
#pragma unroll
            for (int g = 0; g < S::group; ++g) {
                const float4 r = sm.info[base + g]; // (padding rows: s = 1 on zero entries)
                const float u = fmaf(x, r.x, r.z);
#pragma unroll
                for (int k = 0; k < S::pixels; ++k) {
                    const float s = fmaf(-y[k], r.y, u);
                    const unsigned bits = __float_as_uint(__fadd_rd(s, 0x1p23f)); // floor(s) + 2^23
                    const Entry& e = sharedAt<Entry>(cacheBytes, bits * kSize - kBias + g * S::cached * kSize);
                    acc[k] = acc[k] + fmaV(s, e.d, e.a);
                }
            }
        }
    }
}

// ----------------------------------------------------------------- nearest

template <class S, int C>
struct NearestCache {
    using V = typename Vec<C>::Type;
    GeometryDouble info[kChunk]; // cos, sin, axis, h_m (as a double)
    V entries[S::group][S::cached];
};

template <class S, int C, bool Linear>
using AluCache = std::conditional_t<Linear, LinearCache<S, C>, NearestCache<S, C>>;

/// The host's count of a cache's bytes (kernel_launch.h) is its size.
template <class S, int C, bool Linear>
constexpr bool kAluCacheSizeMatches =
    sizeof(AluCache<S, C, Linear>) == aluCacheBytes(Linear ? AluCacheKind::Linear : AluCacheKind::Nearest, S::value, C);

/// Nearest-neighbour on the ALUs with double positions, into acc.
template <class S, int C, bool Half>
__device__ __forceinline__ void nearestTile(const TileArgs& a, const TilePlace<S>& t, NearestCache<S, C>& sm,
                                            typename Vec<C>::Type (&acc)[S::pixels]) {
    using V = typename Vec<C>::Type;
    const int tid = static_cast<int>(threadIdx.x);
    const double x = static_cast<double>(t.tileX + t.col) - static_cast<double>(a.centreX);
    double y[S::pixels];
#pragma unroll
    for (int k = 0; k < S::pixels; ++k)
        y[k] = static_cast<double>(t.tileY + t.row0 + k * S::stepRows) - static_cast<double>(a.centreY);
    const auto* cacheBytes = reinterpret_cast<const unsigned char*>(&sm.entries[0][0]);

    for (int chunk = 0; chunk < a.projections; chunk += kChunk) {
        __syncthreads();
        for (int i = tid; i < kChunk; i += S::threads) {
            const int p = chunk + i;
            GeometryDouble g{0.0, 0.0, 1.0, 0.0}; // padding: bin 1 of zero entries
            if (p < a.projections) {
                g = a.geometryDouble[p];
                g.unused = tileRow<S>(a, g, t.tileX, t.tileY).hm;
            }
            sm.info[i] = g;
        }
        const int count = min(kChunk, a.projections - chunk);
        for (int base = 0; base < count; base += S::group) {
            __syncthreads();
            for (int e = tid; e < S::group * S::cached; e += S::threads) {
                const int g = e / S::cached, k = e - g * S::cached;
                const int p = chunk + base + g;
                V v = zero<V>();
                if (p < a.projections) {
                    const int bin = static_cast<int>(sm.info[base + g].unused) + k;
                    v = loadTexel<C, Half>(a.sinogram + static_cast<std::size_t>(p) * a.pitch, bin, a.bins);
                }
                sm.entries[g][k] = v;
            }
            __syncthreads();
#pragma unroll
            for (int g = 0; g < S::group; ++g) {
                const GeometryDouble r = sm.info[base + g];
                const double u = fma(x, r.cosA, r.axis);
                // Entry address = (bin + 2^22) * size + offset: (h_m + 2^22) taken off once per row.
                constexpr unsigned kSize = sizeof(V);
                const unsigned rowOffset = static_cast<unsigned>(g * S::cached - static_cast<int>(r.unused) - 4194304) * kSize;
#pragma unroll
                for (int k = 0; k < S::pixels; ++k) {
                    const double s = fma(-y[k], r.sinA, u);
                    const auto bin = static_cast<unsigned>(__double2loint((s + 0x1p-32) + (6755399441055744.0 + 4194304.0)));
                    acc[k] = acc[k] + sharedAt<V>(cacheBytes, bin * kSize + rowOffset); // bin = floor(s + .5) + 2^22
                }
            }
        }
    }
}

// -------------------------------------------------------------- oversample

template <class S, int C>
struct OversampleCache {
    using V = typename Vec<C>::Type;
    float4 info[kChunk];
    V entries[S::group][4 * S::cached];
};
template <class S, int C>
constexpr bool kOversampleCacheSizeMatches =
    sizeof(OversampleCache<S, C>) == aluCacheBytes(AluCacheKind::Oversample, S::value, C);

template <int C>
__device__ __forceinline__ typename Vec<C>::Type fetchTexel(cudaTextureObject_t tex, float u, float row) {
    return tex2D<typename Vec<C>::Type>(tex, u, row);
}

/// Four texture-filtered samples per bin, the nearest one per pixel, into acc.
template <class S, int C>
__device__ __forceinline__ void oversampleTile(const TileArgs& a, const TilePlace<S>& t, OversampleCache<S, C>& sm,
                                               typename Vec<C>::Type (&acc)[S::pixels]) {
    using V = typename Vec<C>::Type;
    const int tid = static_cast<int>(threadIdx.x);
    const LocalPixels<S> px(t);
    const float x = px.x;
    const auto& y = px.y;
    const auto* cacheBytes = reinterpret_cast<const unsigned char*>(&sm.entries[0][0]);
    constexpr int kSamples = 4 * S::cached;
    constexpr unsigned kSize = sizeof(V), kBias = 0x4B000000u * kSize;

    for (int chunk = 0; chunk < a.projections; chunk += kChunk) {
        __syncthreads();
        for (int i = tid; i < kChunk; i += S::threads) sm.info[i] = rowInfo<S>(a, chunk + i, t.tileX, t.tileY, 4.0f);
        const int count = min(kChunk, a.projections - chunk);
        for (int base = 0; base < count; base += S::group) {
            __syncthreads();
            for (int e = tid; e < S::group * kSamples; e += S::threads) {
                const int g = e / kSamples, j = e - g * kSamples;
                const int p = chunk + base + g;
                V v = zero<V>();
                if (p < a.projections) {
                    const float bin = static_cast<float>(__float_as_int(sm.info[base + g].w)) + 0.25f * j;
                    v = fetchTexel<C>(a.texture, bin + 0.5f, static_cast<float>(p) + 0.5f);
                }
                sm.entries[g][j] = v;
            }
            __syncthreads();
#pragma unroll
            for (int g = 0; g < S::group; ++g) {
                const float4 r = sm.info[base + g]; // times 4: s4 = 4 s
                const float u = fmaf(x, r.x, r.z);
#pragma unroll
                for (int k = 0; k < S::pixels; ++k) {
                    const float s4 = fmaf(-y[k], r.y, u);
                    const unsigned bits = __float_as_uint(__fadd_rn(s4, 0x1p23f)); // round(4 s) + 2^23
                    acc[k] = acc[k] + sharedAt<V>(cacheBytes, bits * kSize - kBias + g * kSamples * kSize);
                }
            }
        }
    }
}

// ----------------------------------------------------------------- texture

/// The texture path over the same tile and pixels (hybrid's texture blocks):
/// float4 (cos, sin, axis, -) per projection from shared memory; linear =
/// the texture unit filters, nearest = SnapDouble.
template <class S, int C, bool Linear>
__device__ __forceinline__ void textureTile(const TileArgs& a, const TilePlace<S>& t, GeometryDouble* info,
                                            typename Vec<C>::Type (&acc)[S::pixels]) {
    using V = typename Vec<C>::Type;
    const int tid = static_cast<int>(threadIdx.x);
    const double xd = static_cast<double>(t.tileX + t.col) - static_cast<double>(a.centreX);
    const float x = static_cast<float>(t.tileX + t.col) - a.centreX;
    for (int chunk = 0; chunk < a.projections; chunk += kChunk) {
        __syncthreads();
        for (int i = tid; i < kChunk; i += S::threads) {
            const int p = chunk + i;
            if (p >= a.projections) continue;
            if constexpr (Linear) {
                const float4 g = a.geometry[p];
                info[i] = GeometryDouble{g.x, g.y, g.z, 0.0};
            } else {
                info[i] = a.geometryDouble[p];
            }
        }
        __syncthreads();
        const int count = min(kChunk, a.projections - chunk);
#pragma unroll 2
        for (int i = 0; i < count; ++i) {
            const float row = static_cast<float>(chunk + i) + 0.5f;
            const GeometryDouble g = info[i];
            if constexpr (Linear) {
                const float c = static_cast<float>(g.cosA), s = static_cast<float>(g.sinA);
                const float u = fmaf(x, c, static_cast<float>(g.axis)) + 0.5f;
#pragma unroll
                for (int k = 0; k < S::pixels; ++k) {
                    const float y = static_cast<float>(t.tileY + t.row0 + k * S::stepRows) - a.centreY;
                    acc[k] = acc[k] + fetchTexel<C>(a.texture, fmaf(-y, s, u), row);
                }
            } else {
                const double u = fma(xd, g.cosA, g.axis);
#pragma unroll
                for (int k = 0; k < S::pixels; ++k) {
                    const double y = static_cast<double>(t.tileY + t.row0 + k * S::stepRows) -
                                     static_cast<double>(a.centreY);
                    acc[k] = acc[k] + fetchTexel<C>(a.texture, snapDouble(fma(-y, g.sinA, u)), row);
                }
            }
        }
    }
}

/// TileArgs of a launch with Tile x Tile squares.
inline TileArgs tileArgs(const BackprojectLaunch& L, int tile) {
    TileArgs a{};
    a.sinogram = static_cast<const unsigned char*>(L.d_sinogram);
    a.pitch = L.pitchBytes;
    a.bins = L.bins;
    a.texture = L.texture;
    a.geometry = reinterpret_cast<const float4*>(L.d_geometry);
    a.geometryDouble = L.d_geometryDouble;
    a.projections = L.projections;
    a.regionX = L.regionX;
    a.regionY = L.regionY;
    a.regionWidth = L.regionWidth;
    a.regionHeight = L.regionHeight;
    a.centreX = L.centreX;
    a.centreY = L.centreY;
    a.slices = L.d_slices;
    a.sliceStride = L.sliceStride;
    a.validSlices = L.slices;
    a.scale = L.d_scale;
    a.x0 = L.regionX - L.regionX % tile;
    a.y0 = L.regionY - L.regionY % tile;
    a.tilesAcross = (L.regionX + L.regionWidth - a.x0 + tile - 1) / tile;
    a.tileCount = a.tilesAcross * ((L.regionY + L.regionHeight - a.y0 + tile - 1) / tile);
    a.tileCounter = L.d_counters + kMaxSms;
    return a;
}

/// Zeroes the launch's counters and returns the blocks of one full wave of
/// `kernel` on this device (at most one per tile).
template <class Kernel>
int residentBlocks(Kernel kernel, int threads, const TileArgs& a, const BackprojectLaunch& L, cudaStream_t stream) {
    TOMO_CUDA_CHECK(cudaMemsetAsync(L.d_counters, 0, (kMaxSms + 1) * sizeof(unsigned), stream));
    int device = 0, sms = 0, perSm = 0;
    TOMO_CUDA_CHECK(cudaGetDevice(&device));
    TOMO_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    TOMO_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, threads, 0));
    return std::max(1, std::min(a.tileCount, sms * std::max(perSm, 1)));
}

// ---------------------------------------------------------------- dispatch

template <int I>
using ShapeAt = Shape<kAluShapes[I].tile, kAluShapes[I].threads, kAluShapes[I].group, kAluShapes[I].minBlocks>;

/// f(ShapeAt<index>{}) for a run-time index.
template <int I = 0, class F>
void withShape(int index, F&& f) {
    if constexpr (I < kAluShapeCount) {
        if (index == I) f(ShapeAt<I>{});
        else withShape<I + 1>(index, f);
    } else {
        throw InvalidArgument("ALU shape " + std::to_string(index) + " does not exist (0 to " +
                              std::to_string(kAluShapeCount - 1) + ")");
    }
}

template <int C> struct Channels { static constexpr int value = C; };

/// f(Channels<channels>{}) for 1, 2, 4.
template <class F>
void withChannels(int channels, F&& f) {
    switch (channels) {
    case 1: f(Channels<1>{}); break;
    case 2: f(Channels<2>{}); break;
    case 4: f(Channels<4>{}); break;
    default: throw InvalidArgument(std::to_string(channels) + " slices per pass (expected 1, 2, 4)");
    }
}

/// f(std::bool_constant<value>{}).
template <class F>
void withBool(bool value, F&& f) {
    if (value) f(std::true_type{});
    else f(std::false_type{});
}

/// f(S{}, Channels<C>{}, bool_constant<half>{}, bool_constant<linear>{})
/// for the launch's shape, slices per pass, storage and interpolation.
template <class F>
void withMode(const BackprojectLaunch& L, F&& f) {
    withShape(L.aluShape, [&](auto shape) {
        withChannels(L.channels, [&](auto channels) {
            withBool(L.half, [&](auto half) { withBool(L.linear, [&](auto linear) { f(shape, channels, half, linear); }); });
        });
    });
}

/// Why a shape cannot run this mode (its cache exceeds shared memory).
[[noreturn]] inline void tooLarge(const char* strategy, std::size_t bytes, int channels) {
    throw InvalidArgument(std::string(strategy) + ": this block shape needs " + std::to_string(bytes) +
                          " bytes of shared memory for " + std::to_string(channels) +
                          " slice(s) per pass (at most " + std::to_string(kMaxStaticSharedBytes) +
                          "); choose a shape with fewer projections per step or a smaller tile");
}

} // namespace tomo::cuda::alu
