// Wavelet stripe-removal kernels (see wavelet_kernels.h for the data flow).
// Sums use __dmul_rn / __dadd_rn: the CPU build (no -march, so no FMA on
// x86-64) rounds every product and sum, and fused multiply-adds here would
// make the float results differ from it in their last bit now and then.
#include "wavelet_kernels.h"

#include "cuda_resources.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace tomo::cuda {

namespace {

constexpr int kBlockX = 32, kBlockY = 8;
/// Coefficients one output of the inverse reads: k = t/2 ... t/2 + (F - 2) / 2.
constexpr int kSynthesisTerms = (kWaveletTaps - 2) / 2 + 1;

dim3 gridFor(int xCount, int yCount) {
    return dim3(static_cast<unsigned>((xCount + kBlockX - 1) / kBlockX),
                static_cast<unsigned>(std::min((yCount + kBlockY - 1) / kBlockY, 65535)));
}

/// core's detail::reflectIndex: half-sample reflection, periodic with period 2n.
__device__ __forceinline__ int reflectIndex(int i, int n) {
    const int period = 2 * n;
    int j = i % period;
    if (j < 0) j += period;
    return j < n ? j : period - 1 - j;
}

/// x[index(2k + 1 - j)] x decLo[j] (and decHi[j]) summed over j ascending.
template <class Load, class Index>
__device__ __forceinline__ void accumulate(const WaveletFilters& f, int newest, Load load, Index index, float& lo,
                                           float& hi) {
    double a = 0.0, d = 0.0;
#pragma unroll
    for (int j = 0; j < kWaveletTaps; ++j) {
        const double v = load(index(newest - j));
        a = __dadd_rn(a, __dmul_rn(f.decLo[j], v));
        d = __dadd_rn(d, __dmul_rn(f.decHi[j], v));
    }
    lo = static_cast<float>(a);
    hi = static_cast<float>(d);
}

/// The CPU's dwtLine at coefficient k of a line of n values read by
/// load(index): lo = sum_j decLo[j] x[2k + 1 - j], hi likewise. Only the
/// coefficients near the ends need the (costly) reflected index.
template <class Load>
__device__ __forceinline__ void analyse(const WaveletFilters& f, int k, int n, Load load, float& lo, float& hi) {
    const int newest = 2 * k + 1;
    if (newest - (kWaveletTaps - 1) >= 0 && newest < n)
        accumulate(f, newest, load, [](int i) { return i; }, lo, hi);
    else
        accumulate(f, newest, load, [n](int i) { return reflectIndex(i, n); }, lo, hi);
}

/// The CPU's idwtLine at outputs t = 2b and 2b + 1 of m coefficient pairs
/// (read by lo(k), hi(k)): both need k = b ... min(m - 1, b + 4), with taps
/// t + F - 2 - 2k; sums in ascending k as the CPU's.
template <class LoadLo, class LoadHi>
__device__ __forceinline__ void synthesisePair(const WaveletFilters& f, int b, int m, LoadLo lo, LoadHi hi,
                                               float& even, float& odd) {
    double e = 0.0, o = 0.0;
#pragma unroll
    for (int q = 0; q < kSynthesisTerms; ++q) {
        const int k = b + q;
        if (k < m) {
            const double l = lo(k), h = hi(k);
            const int evenTap = kWaveletTaps - 2 - 2 * q, oddTap = evenTap + 1;
            e = __dadd_rn(e, __dadd_rn(__dmul_rn(l, f.recLo[evenTap]), __dmul_rn(h, f.recHi[evenTap])));
            o = __dadd_rn(o, __dadd_rn(__dmul_rn(l, f.recLo[oddTap]), __dmul_rn(h, f.recHi[oddTap])));
        }
    }
    even = static_cast<float>(e);
    odd = static_cast<float>(o);
}

// x = padded column; each thread sums its source column, then writes the padded column
__global__ void waveletPadKernel(const float* __restrict__ d_sinogram, int projections, int columns, int pad,
                                 float* __restrict__ d_padded) {
    const int width = columns + 2 * pad;
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= width) return;
    const int c = min(max(x - pad, 0), columns - 1);
    double sum = 0.0;
    for (int a = 0; a < projections; ++a) sum = __dadd_rn(sum, d_sinogram[static_cast<std::size_t>(a) * columns + c]);
    const float mean = static_cast<float>(sum / projections);
    for (int y = 0; y < projections + 2 * pad; ++y)
        d_padded[static_cast<std::size_t>(y) * width + x] =
            y >= pad && y < pad + projections ? d_sinogram[static_cast<std::size_t>(y - pad) * columns + c] : mean;
}

// x = coefficient k along the row, y (+ grid stride) = row
__global__ void waveletRowsKernel(const __grid_constant__ WaveletFilters f, const float* __restrict__ d_in,
                                  int inPitch, int rows, int width, int m, int top, int sourceRows,
                                  float* __restrict__ d_lo, float* __restrict__ d_hi) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= m) return;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < rows; y += gridDim.y * blockDim.y) {
        const int source = min(max(y - top, 0), sourceRows - 1);
        const float* line = d_in + static_cast<std::size_t>(source) * inPitch;
        const std::size_t out = static_cast<std::size_t>(y) * m + k;
        analyse(f, k, width, [&](int i) { return line[i]; }, d_lo[out], d_hi[out]);
    }
}

// x = column, y (+ grid stride) = coefficient k along the column
__global__ void waveletColumnsKernel(const __grid_constant__ WaveletFilters f, const float* __restrict__ d_lo,
                                     const float* __restrict__ d_hi, int height, int m, int width,
                                     float* __restrict__ d_approx, float* __restrict__ d_horizontal,
                                     float* __restrict__ d_vertical, float* __restrict__ d_diagonal) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= width) return;
    for (int k = blockIdx.y * blockDim.y + threadIdx.y; k < m; k += gridDim.y * blockDim.y) {
        const std::size_t out = static_cast<std::size_t>(k) * width + x;
        analyse(f, k, height, [&](int i) { return d_lo[static_cast<std::size_t>(i) * width + x]; }, d_approx[out],
                d_horizontal[out]);
        analyse(f, k, height, [&](int i) { return d_hi[static_cast<std::size_t>(i) * width + x]; }, d_vertical[out],
                d_diagonal[out]);
    }
}

// x = column, y (+ grid stride) = frequency k
__global__ void dampSpectrumKernel(float2* __restrict__ d_spectrum, const float* __restrict__ d_damping, int half,
                                   int width) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= width) return;
    for (int k = blockIdx.y * blockDim.y + threadIdx.y; k < half; k += gridDim.y * blockDim.y) {
        const float g = d_damping[k];
        float2& v = d_spectrum[static_cast<std::size_t>(k) * width + x];
        v.x *= g;
        v.y *= g;
    }
}

// x = column, y (+ grid stride) = output row pair b (rows 2b, 2b + 1; the inverse's length 2m - F + 2 is even)
__global__ void inverseWaveletColumnsKernel(const __grid_constant__ WaveletFilters f, InverseColumns L, int pairs) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= L.bandWidth) return;
    const int m = L.bandHeight;
    const auto band = [&](const float* d_band, int pitch) {
        return [=](int k) { return d_band[static_cast<std::size_t>(k) * pitch + x]; };
    };
    for (int b = blockIdx.y * blockDim.y + threadIdx.y; b < pairs; b += gridDim.y * blockDim.y) {
        const std::size_t even = static_cast<std::size_t>(2 * b) * L.bandWidth + x, odd = even + L.bandWidth;
        synthesisePair(f, b, m, band(L.d_approx, L.approxPitch), band(L.d_horizontal, L.bandWidth), L.d_lo[even],
                       L.d_lo[odd]);
        synthesisePair(f, b, m, band(L.d_vertical, L.bandWidth), band(L.d_diagonal, L.bandWidth), L.d_hi[even],
                       L.d_hi[odd]);
    }
}

// x = output column pair b (columns 2b, 2b + 1), y (+ grid stride) = output row
__global__ void inverseWaveletRowsKernel(const __grid_constant__ WaveletFilters f, const float* __restrict__ d_lo,
                                         const float* __restrict__ d_hi, int bandWidth, int firstRow, int rows,
                                         int outWidth, float* __restrict__ d_out, int outPitch) {
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * b >= outWidth) return;
    for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < rows; r += gridDim.y * blockDim.y) {
        const std::size_t in = static_cast<std::size_t>(firstRow + r) * bandWidth;
        float even = 0.0f, odd = 0.0f;
        synthesisePair(f, b, bandWidth, [&](int k) { return d_lo[in + k]; }, [&](int k) { return d_hi[in + k]; },
                       even, odd);
        float* out = d_out + static_cast<std::size_t>(r) * outPitch + 2 * b;
        out[0] = even;
        if (2 * b + 1 < outWidth) out[1] = odd;
    }
}

} // namespace

void launchWaveletPad(const float* d_sinogram, int projections, int columns, int pad, float* d_padded,
                      StreamHandle stream) {
    const int width = columns + 2 * pad;
    waveletPadKernel<<<(width + 127) / 128, 128, 0, stream>>>(d_sinogram, projections, columns, pad, d_padded);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchWaveletRows(const WaveletFilters& filters, const float* d_in, int inPitch, int rows, int width, int top,
                       int sourceRows, float* d_lo, float* d_hi, StreamHandle stream) {
    const int m = waveletCoefficients(width);
    waveletRowsKernel<<<gridFor(m, rows), dim3(kBlockX, kBlockY), 0, stream>>>(filters, d_in, inPitch, rows, width, m,
                                                                                top, sourceRows, d_lo, d_hi);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchWaveletColumns(const WaveletFilters& filters, const float* d_lo, const float* d_hi, int height, int width,
                          float* d_approx, float* d_horizontal, float* d_vertical, float* d_diagonal,
                          StreamHandle stream) {
    const int m = waveletCoefficients(height);
    waveletColumnsKernel<<<gridFor(width, m), dim3(kBlockX, kBlockY), 0, stream>>>(
        filters, d_lo, d_hi, height, m, width, d_approx, d_horizontal, d_vertical, d_diagonal);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchDampSpectrum(float* d_spectrum, const float* d_damping, int half, int width, StreamHandle stream) {
    dampSpectrumKernel<<<gridFor(width, half), dim3(kBlockX, kBlockY), 0, stream>>>(
        reinterpret_cast<float2*>(d_spectrum), d_damping, half, width);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchInverseWaveletColumns(const WaveletFilters& filters, const InverseColumns& launch, StreamHandle stream) {
    const int pairs = inverseWaveletLength(launch.bandHeight) / 2;
    inverseWaveletColumnsKernel<<<gridFor(launch.bandWidth, pairs), dim3(kBlockX, kBlockY), 0, stream>>>(
        filters, launch, pairs);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

void launchInverseWaveletRows(const WaveletFilters& filters, const float* d_lo, const float* d_hi, int bandWidth,
                              int firstRow, int rows, int outWidth, float* d_out, int outPitch, StreamHandle stream) {
    inverseWaveletRowsKernel<<<gridFor((outWidth + 1) / 2, rows), dim3(kBlockX, kBlockY), 0, stream>>>(
        filters, d_lo, d_hi, bandWidth, firstRow, rows, outWidth, d_out, outPitch);
    TOMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace tomo::cuda
