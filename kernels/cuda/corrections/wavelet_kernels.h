// Launchers of the wavelet stripe-removal kernels (wavelet_kernels.cu): the
// device side of removeStripesWavelet (core/src/corrections/stripes_wavelet.cpp),
// driven by DeviceWaveletStripes (stripes_wavelet.cpp). Each kernel is one
// loop of the CPU definition with its arithmetic: double accumulation of float
// inputs in the CPU's order, rounded to float once per output.
//
//   waveletPad           the sinogram padded as the CPU pads it (columns'
//                        means above and below, edge columns left and right)
//   waveletRows          one pass of pywt's dwt along each row (axis 1)
//   waveletColumns       the pass along the columns (axis 0) -> the four bands
//   dampSpectrum         a vertical band's half spectra x the Gaussian notch
//   inverseWaveletColumns / inverseWaveletRows   pywt's idwt2, the two passes
//
// Planes are row-major; `pitch` is the distance in floats between rows.
#pragma once

#include "kernel_launch.h"

#include <cstddef>

namespace tomo::cuda {

inline constexpr int kWaveletTaps = 18;

/// The four Daubechies-9 filters (tomo::daubechies9() and the quadrature-
/// mirror relations of the CPU). Passed to every launch by value: kernel
/// parameters live in constant memory, and every thread reads the same tap.
struct WaveletFilters {
    double decLo[kWaveletTaps];
    double decHi[kWaveletTaps];
    double recLo[kWaveletTaps];
    double recHi[kWaveletTaps];
};

/// Coefficients of a line of n values: (n + F - 1) / 2.
constexpr int waveletCoefficients(int n) { return (n + kWaveletTaps - 1) / 2; }

/// Length of the inverse of m coefficients: 2 m - F + 2.
constexpr int inverseWaveletLength(int m) { return 2 * m - kWaveletTaps + 2; }

/// d_padded (projections + 2 pad rows x columns + 2 pad, pitch columns + 2
/// pad) = the sinogram with `pad` rows of each column's mean (summed in
/// double in row order, rounded to float) above and below, then `pad`
/// copies of the edge columns left and right (tomo::waveletPadding).
void launchWaveletPad(const float* d_sinogram, int projections, int columns, int pad, float* d_padded,
                      StreamHandle stream);

/// lo[y][k], hi[y][k] (pitch waveletCoefficients(width)) for y < rows: the
/// dwt of input row clamp(y - top, 0, sourceRows - 1) of `width` values.
void launchWaveletRows(const WaveletFilters& filters, const float* d_in, int inPitch, int rows, int width, int top,
                       int sourceRows, float* d_lo, float* d_hi, StreamHandle stream);

/// The dwt along the columns of lo and hi (height x width, pitch width):
/// lo -> approximation and horizontal detail, hi -> vertical and diagonal
/// detail, each waveletCoefficients(height) x width.
void launchWaveletColumns(const WaveletFilters& filters, const float* d_lo, const float* d_hi, int height, int width,
                          float* d_approx, float* d_horizontal, float* d_vertical, float* d_diagonal,
                          StreamHandle stream);

/// d_spectrum[k][x] *= d_damping[k] for k < half, x < width (complex
/// values interleaved, pitch width complex values).
void launchDampSpectrum(float* d_spectrum, const float* d_damping, int half, int width, StreamHandle stream);

struct InverseColumns {
    const float* d_approx = nullptr;  ///< at least bandHeight x bandWidth, pitch approxPitch (cropped by the pitch)
    int approxPitch = 0;
    const float* d_horizontal = nullptr; ///< bandHeight x bandWidth each, pitch bandWidth
    const float* d_vertical = nullptr;
    const float* d_diagonal = nullptr;
    int bandHeight = 0;
    int bandWidth = 0;
    float* d_lo = nullptr;            ///< inverseWaveletLength(bandHeight) x bandWidth: idwt(approx, horizontal)
    float* d_hi = nullptr;            ///< the same size: idwt(vertical, diagonal)
};
void launchInverseWaveletColumns(const WaveletFilters& filters, const InverseColumns& launch, StreamHandle stream);

/// out[y - firstRow][t] = idwt(lo[y], hi[y])[t] for firstRow <= y < firstRow
/// + rows, t < outWidth (<= inverseWaveletLength(bandWidth)); lo and hi
/// have pitch bandWidth.
void launchInverseWaveletRows(const WaveletFilters& filters, const float* d_lo, const float* d_hi, int bandWidth,
                              int firstRow, int rows, int outWidth, float* d_out, int outPitch, StreamHandle stream);

} // namespace tomo::cuda
