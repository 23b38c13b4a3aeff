#include "flat_field_kernels.h"

#include "cuda_resources.h"

#include "tomo/error.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>
#include <string>

namespace tomo::cuda {

namespace {

constexpr int kThreads = 256;
constexpr float kMinTransmission = 1e-5f; // tomo::kMinTransmission (tomo/preprocess.h)

__device__ inline bool notFinite(float v) { return !isfinite(v); }
// float64 beyond float32's range would become +-inf: refused as inf is (the CPU's firstNotFinite).
__device__ inline bool notFinite(double v) { return !isfinite(v) || fabs(v) > static_cast<double>(FLT_MAX); }
__device__ inline bool notFinite(unsigned char) { return false; }
__device__ inline bool notFinite(unsigned short) { return false; }

struct Minimum {
    __device__ int operator()(int a, int b) const { return b < a ? b : a; }
};
struct Maximum {
    __device__ int operator()(int a, int b) const { return b > a ? b : a; }
};

// One block per line (blockIdx.x = angle, blockIdx.y = row): the line's
// transmissions and bad mask in shared memory, then, where it has bad
// values, tomo::interpolateMasked's arithmetic (thread i owns a contiguous
// segment of columns; block scans find each segment's nearest good columns
// to the left and right), then -log. Products are rounded one by one
// (__fmul_rn, __fadd_rn: no fused multiply-add), as the CPU computes them.
// The scale of pixel (r, c) in projection a: its flat group's, or, between
// two groups, tomo::detail::flatScales of the blended flat.
struct Scales {
    const float* scale;
    const float* flats;
    const int* blendGroups;
    const float* blendWeights;
    std::size_t groupValues;

    __device__ float operator()(int a, std::size_t pixel, float dark) const {
        if (!blendGroups) return scale[pixel];
        const int lower = blendGroups[2 * a], upper = blendGroups[2 * a + 1];
        if (lower == upper) return scale[lower * groupValues + pixel];
        const float w = blendWeights[a];
        const float flat = __fadd_rn(__fmul_rn(__fsub_rn(1.0f, w), flats[lower * groupValues + pixel]),
                                     __fmul_rn(w, flats[upper * groupValues + pixel]));
        const float range = __fsub_rn(flat, dark);
        return range > 0.0f ? __fdiv_rn(1.0f, range) : 0.0f;
    }
};

__device__ inline float logOr(bool takeLog, float t) { return takeLog ? -logf(t) : t; }

template <class T>
__global__ void __launch_bounds__(kThreads)
flatFieldKernel(const T* __restrict__ raw, int projections, int rows, int columns, const float* __restrict__ dark,
                Scales scale, const unsigned char* __restrict__ dead, float saturation, bool interpolate,
                bool takeLog, float* __restrict__ out, unsigned long long* clamped, unsigned long long* interpolated,
                unsigned long long* firstBad, unsigned long long* listed, unsigned long long* badKeys,
                int badKeyCapacity, int rowOffset, int countedFirst, int countedEnd) {
    using Scan = cub::BlockScan<int, kThreads>;
    using Reduce = cub::BlockReduce<int, kThreads>;
    __shared__ union {
        typename Scan::TempStorage scan;
        typename Reduce::TempStorage reduce;
    } temp;
    __shared__ int lineBad, lineNonFinite;
    extern __shared__ float shared[];
    float* t = shared;                                               // columns
    unsigned char* bad = reinterpret_cast<unsigned char*>(t + columns); // columns

    const int a = blockIdx.x, r = blockIdx.y;
    const bool counted = r >= countedFirst && r < countedEnd; // margin rows are counted by their own chunk
    const T* line = raw + (static_cast<std::size_t>(a) * rows + r) * columns;
    const std::size_t pixel0 = static_cast<std::size_t>(r) * columns;
    if (threadIdx.x == 0) lineNonFinite = columns;
    __syncthreads();
    int myBad = 0, myInterpolated = 0;
    for (int c = threadIdx.x; c < columns; c += kThreads) {
        const T value = line[c];
        if (notFinite(value)) atomicMin(&lineNonFinite, c);
        const float v = static_cast<float>(value);
        const float d = dark[pixel0 + c];
        const float tc = fminf(__fmul_rn(__fsub_rn(v, d), scale(a, pixel0 + c, d)), FLT_MAX);
        const bool isBad = !(tc > 0.0f) || (saturation > 0.0f && v >= saturation) || dead[pixel0 + c];
        t[c] = tc;
        bad[c] = isBad;
        myBad += isBad;
        myInterpolated += isBad && !dead[pixel0 + c];
    }
    const int totalBad = Reduce(temp.reduce).Sum(myBad);
    if (threadIdx.x == 0) lineBad = totalBad;
    __syncthreads();
    if (lineNonFinite < columns) { // reported by the host; the line stays unwritten
        if (threadIdx.x == 0)
            atomicMin(firstBad, (static_cast<unsigned long long>(rowOffset + r) * projections + a) * columns +
                                    lineNonFinite);
        return;
    }
    const int nBad = lineBad;
    if (nBad > 0 && nBad < columns && interpolate) {
        const int segment = (columns + kThreads - 1) / kThreads;
        const int begin = min(columns, static_cast<int>(threadIdx.x) * segment), end = min(columns, begin + segment);
        int lastGood = -1, firstGood = columns;
        for (int c = begin; c < end; ++c)
            if (!bad[c]) {
                if (firstGood == columns) firstGood = c;
                lastGood = c;
            }
        int goodBefore; // last good column before this segment, -1 = none
        Scan(temp.scan).ExclusiveScan(lastGood, goodBefore, -1, Maximum());
        __syncthreads();
        // The first good column after this segment: a scan over the threads in reverse order.
        __shared__ int firstGoodOf[kThreads], goodAfterOf[kThreads];
        firstGoodOf[threadIdx.x] = firstGood;
        __syncthreads();
        int goodAfterReversed;
        Scan(temp.scan).ExclusiveScan(firstGoodOf[kThreads - 1 - threadIdx.x], goodAfterReversed, columns, Minimum());
        goodAfterOf[kThreads - 1 - threadIdx.x] = goodAfterReversed;
        __syncthreads();
        int right = goodAfterOf[threadIdx.x];
        // Each run of bad columns between its good neighbours.
        int left = goodBefore;
        for (int c = begin; c < end; ++c) {
            if (!bad[c]) {
                left = c;
                continue;
            }
            int next = c + 1;
            while (next < end && bad[next]) ++next;
            const int rightGood = next < end ? next : right;
            for (int k = c; k < (next < end ? next : end); ++k) {
                if (counted && !dead[pixel0 + k]) { // a bad value, not a dead pixel: listed (rare: one atomic each)
                    const unsigned long long slot = atomicAdd(listed, 1ull);
                    if (slot < static_cast<unsigned long long>(badKeyCapacity))
                        badKeys[slot] = (static_cast<unsigned long long>(rowOffset + r) * projections + a) * columns + k;
                }
                float v;
                if (left < 0) v = t[rightGood];
                else if (rightGood >= columns) v = t[left];
                else {
                    const float w = __fdiv_rn(static_cast<float>(k - left), static_cast<float>(rightGood - left));
                    v = __fadd_rn(__fmul_rn(__fsub_rn(1.0f, w), t[left]), __fmul_rn(w, t[rightGood]));
                }
                out[(static_cast<std::size_t>(r) * projections + a) * columns + k] = logOr(takeLog, v);
            }
            c = (next < end ? next : end) - 1;
        }
        // The good values of the segment.
        for (int c = begin; c < end; ++c)
            if (!bad[c]) out[(static_cast<std::size_t>(r) * projections + a) * columns + c] = logOr(takeLog, t[c]);
        const int interpolatedHere = Reduce(temp.reduce).Sum(myInterpolated);
        if (threadIdx.x == 0 && counted && interpolatedHere > 0)
            atomicAdd(interpolated, static_cast<unsigned long long>(interpolatedHere));
        return;
    }
    // No interpolation: bad values (with interpolation on, a line without a
    // good value: all of it) get the minimum transmission.
    const bool all = interpolate && nBad > 0;
    for (int c = threadIdx.x; c < columns; c += kThreads)
        out[(static_cast<std::size_t>(r) * projections + a) * columns + c] =
            logOr(takeLog, bad[c] || all ? kMinTransmission : t[c]);
    if (threadIdx.x == 0 && counted && nBad > 0)
        atomicAdd(clamped, static_cast<unsigned long long>(all ? columns : nBad));
}

template <class T>
void launchT(const FlatFieldLaunch& L, cudaStream_t stream) {
    const std::size_t sharedBytes = static_cast<std::size_t>(L.columns) * (sizeof(float) + 1);
    if (sharedBytes > 48 * 1024)
        TOMO_CUDA_CHECK(cudaFuncSetAttribute(flatFieldKernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(sharedBytes)));
    const dim3 grid(static_cast<unsigned>(L.projections), static_cast<unsigned>(L.rows));
    const Scales scales{L.d_scale, L.d_flats, L.d_blendGroups, L.d_blendWeights,
                        static_cast<std::size_t>(L.rows) * static_cast<std::size_t>(L.columns)};
    flatFieldKernel<T><<<grid, kThreads, sharedBytes, stream>>>(
        static_cast<const T*>(L.d_raw), L.projections, L.rows, L.columns, L.d_dark, scales, L.d_dead, L.saturation,
        L.interpolate, L.takeLog, L.d_out, L.d_counters, L.d_counters + 1, L.d_counters + 2, L.d_counters + 3,
        L.d_counters + kCounterSlots, kListedKeys, L.rowOffset, L.countedFirst, L.countedEnd);
}

} // namespace

void launchFlatField(const FlatFieldLaunch& L, StreamHandle stream) {
    // Shared memory holds a line's transmissions and mask (227 KiB on sm_90).
    if (L.projections < 1 || L.rows < 1 || L.rows > 65535 || L.columns < 1 || L.columns > 45000)
        throw InvalidArgument("flat-field kernel: " + std::to_string(L.projections) + " projections x " +
                              std::to_string(L.rows) + " rows x " + std::to_string(L.columns) +
                              " columns (expected at most 65535 rows per launch and 45000 columns)");
    switch (L.type) {
    case RawType::UInt8: launchT<unsigned char>(L, stream); break;
    case RawType::UInt16: launchT<unsigned short>(L, stream); break;
    case RawType::Float32: launchT<float>(L, stream); break;
    case RawType::Float64: launchT<double>(L, stream); break;
    }
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void resetFlatFieldCounters(unsigned long long* d_counters, StreamHandle stream) {
    TOMO_CUDA_CHECK(cudaMemsetAsync(d_counters, 0, kCounterWords * sizeof(unsigned long long), stream));
    TOMO_CUDA_CHECK(cudaMemsetAsync(d_counters + 2, 0xff, sizeof(unsigned long long), stream));
}

RawType rawTypeOf(int sampleType) {
    static_assert(static_cast<int>(RawType::UInt8) == 0 && static_cast<int>(RawType::Float64) == 3);
    if (sampleType < 0 || sampleType > 3)
        throw InvalidArgument("flat-field kernel: sample type " + std::to_string(sampleType) + " is not known");
    return static_cast<RawType>(sampleType);
}

} // namespace tomo::cuda
