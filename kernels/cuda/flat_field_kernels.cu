#include "flat_field_kernels.h"

#include "cuda_resources.h"

#include "tomo/error.h"

#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>
#include <string>

namespace tomo::cuda {

namespace {

constexpr int kThreads = 256;
constexpr float kMinTransmission = 1e-5f; // tomo::kMinTransmission (tomo/flat_field.h)

__device__ inline bool notFinite(float v) { return !isfinite(v); }
__device__ inline bool notFinite(double v) { return !isfinite(v); }
__device__ inline bool notFinite(unsigned char) { return false; }
__device__ inline bool notFinite(unsigned short) { return false; }

// blockIdx.x = angle x column blocks (column fastest), blockIdx.y = row;
// reads and writes are contiguous along the column in both layouts.
template <class T>
__global__ void __launch_bounds__(kThreads)
flatFieldKernel(const T* __restrict__ raw, int projections, int rows, int columns, const float* __restrict__ dark,
                const float* __restrict__ scale, float* __restrict__ out, unsigned long long* clamped,
                unsigned long long* firstBad, int rowOffset) {
    const int columnBlocks = (columns + kThreads - 1) / kThreads;
    const int a = static_cast<int>(blockIdx.x / columnBlocks);
    const int c = static_cast<int>(blockIdx.x % columnBlocks) * kThreads + threadIdx.x;
    const int r = blockIdx.y;
    bool none = false;
    if (c < columns) {
        const T value = raw[(static_cast<std::size_t>(a) * rows + r) * columns + c];
        if (notFinite(value))
            atomicMin(firstBad, (static_cast<unsigned long long>(rowOffset + r) * projections + a) * columns + c);
        const std::size_t pixel = static_cast<std::size_t>(r) * columns + c;
        float t = fminf((static_cast<float>(value) - dark[pixel]) * scale[pixel], FLT_MAX);
        none = !(t > 0.0f);
        t = none ? kMinTransmission : t;
        out[(static_cast<std::size_t>(r) * projections + a) * columns + c] = -logf(t);
    }
    // One atomic per warp for its clamped values.
    const unsigned ballot = __ballot_sync(0xffffffffu, none);
    if ((threadIdx.x & 31) == 0 && ballot) atomicAdd(clamped, static_cast<unsigned long long>(__popc(ballot)));
}

template <class T>
void launchT(const FlatFieldLaunch& L, cudaStream_t stream) {
    const unsigned columnBlocks = (static_cast<unsigned>(L.columns) + kThreads - 1) / kThreads;
    const dim3 grid(columnBlocks * static_cast<unsigned>(L.projections), static_cast<unsigned>(L.rows));
    flatFieldKernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(L.d_raw), L.projections, L.rows,
                                                      L.columns, L.d_dark, L.d_scale, L.d_out, L.d_clamped,
                                                      L.d_firstBad, L.rowOffset);
}

} // namespace

void launchFlatField(const FlatFieldLaunch& L, StreamHandle stream) {
    if (L.projections < 1 || L.rows < 1 || L.rows > 65535 || L.columns < 1 ||
        (static_cast<long long>(L.columns) + kThreads - 1) / kThreads * L.projections > 0x7fffffffLL)
        throw InvalidArgument("flat-field kernel: " + std::to_string(L.projections) + " projections x " +
                              std::to_string(L.rows) + " rows x " + std::to_string(L.columns) +
                              " columns is more than one launch covers");
    switch (L.type) {
    case RawType::UInt8: launchT<unsigned char>(L, stream); break;
    case RawType::UInt16: launchT<unsigned short>(L, stream); break;
    case RawType::Float32: launchT<float>(L, stream); break;
    case RawType::Float64: launchT<double>(L, stream); break;
    }
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void throwIfNotFinite(unsigned long long key, const std::string& source, int firstRow, int projections, int columns) {
    if (key == ~0ull) return;
    const unsigned long long perRow = static_cast<unsigned long long>(projections) * static_cast<unsigned>(columns);
    throw DataError(source + ": value is not finite (NaN or inf) at row " +
                    std::to_string(firstRow + static_cast<long long>(key / perRow)) + ", angle " +
                    std::to_string(key / static_cast<unsigned>(columns) % static_cast<unsigned>(projections)) +
                    ", column " + std::to_string(key % static_cast<unsigned>(columns)) + "; expected finite values");
}

RawType rawTypeOf(int sampleType) {
    static_assert(static_cast<int>(RawType::UInt8) == 0 && static_cast<int>(RawType::Float64) == 3);
    if (sampleType < 0 || sampleType > 3)
        throw InvalidArgument("flat-field kernel: sample type " + std::to_string(sampleType) + " is not known");
    return static_cast<RawType>(sampleType);
}

} // namespace tomo::cuda
