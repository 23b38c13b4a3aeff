// DeviceWaveletStripes: removeStripesWavelet (core/src/corrections/stripes_wavelet.cpp)
// on the device. The CPU's steps in its order, on buffers sized once for the
// shape: the sinogram padded (tomo::waveletPadding), waveletPadding(...).levels
// pywt dwt2 steps, each vertical-detail band damped along the projections by
// a batched cuFFT R2C / x notch / C2R, then the idwt2 steps back and the
// sinogram's own rows and columns copied out of the last one. One apply() at
// a time per object: every call uses the same scratch and plans.
#include "device_corrections.h"

#include "cuda_resources.h"
#include "wavelet_kernels.h"

#include "tomo/cuda/wavelet.h"
#include "tomo/error.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

namespace tomo::cuda {

namespace {

/// Batched 1D transforms down every column of a height x width band (pitch
/// width, real or complex values): R2C from the band to height / 2 + 1 rows
/// of half spectra, or C2R back. Planned without a work area; the caller
/// gives it one (shared by all plans of a shape, as they run one after
/// another on one stream).
FftPlan columnPlan(int device, cufftType type, int height, int width) {
    const bool forward = type == CUFFT_R2C;
    FftLayout l;
    l.n[0] = height;
    l.inembed[0] = forward ? height : height / 2 + 1;
    l.onembed[0] = forward ? height / 2 + 1 : height;
    l.istride = l.ostride = width;
    l.idist = l.odist = 1;
    l.type = type;
    l.batch = width;
    return FftPlan(device, l,
                   "the cuFFT plan (" + std::to_string(width) + " columns of " + std::to_string(height) + ")");
}

/// The CPU's filter set: dec_lo from core, the others by the quadrature-mirror
/// relations (rec_lo[k] = dec_lo[F-1-k], rec_hi[k] = (-1)^k dec_lo[k],
/// dec_hi[k] = rec_hi[F-1-k]), which only reorder and negate: bit for bit the CPU's.
WaveletFilters daubechies9Filters() {
    const std::span<const double> decLo = daubechies9();
    if (decLo.size() != kWaveletTaps)
        throw Error("wavelet stripe removal: core's Daubechies-9 filter has " + std::to_string(decLo.size()) +
                    " taps (expected " + std::to_string(kWaveletTaps) + ")");
    WaveletFilters f{};
    for (int k = 0; k < kWaveletTaps; ++k) {
        f.decLo[k] = decLo[k];
        f.recLo[k] = decLo[kWaveletTaps - 1 - k];
        f.recHi[k] = (k % 2 ? -1.0 : 1.0) * decLo[k];
    }
    for (int k = 0; k < kWaveletTaps; ++k) f.decHi[k] = f.recHi[kWaveletTaps - 1 - k];
    return f;
}

/// Bands start on 256-byte boundaries (coalesced rows, aligned cuFFT input).
std::size_t alignedFloats(std::size_t count) {
    return (count + 63) / 64 * 64;
}

std::size_t area(int height, int width) {
    return static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
}

} // namespace

struct DeviceWaveletStripes::Impl {
    /// One dwt2 step: its input (inHeight x inWidth) and its bands (height x width).
    struct Step {
        int inHeight = 0, inWidth = 0, height = 0, width = 0;
        std::size_t horizontal = 0, vertical = 0, diagonal = 0; ///< offsets of the bands in `bands`
        std::size_t damping = 0;                                ///< offset of the notch in `damping`
        FftPlan forward, inverse;
    };

    int device = 0, projections = 0, columns = 0;
    WaveletPadding shape;
    WaveletFilters filters{};
    std::vector<Step> steps;
    DeviceBuffer<float> padded;       ///< the padded sinogram, step 0's input
    DeviceBuffer<float> bands;        ///< every step's three detail bands
    DeviceBuffer<float> approx[2];    ///< approximations, alternating (decomposition and reconstruction)
    DeviceBuffer<float> lo, hi;       ///< between the two passes of a step
    DeviceBuffer<cufftComplex> spectrum;
    DeviceBuffer<float> damping;      ///< every step's notch, 1 / n folded in as the CPU does
    DeviceBuffer<unsigned char> fftWork;
};

DeviceWaveletStripes::DeviceWaveletStripes(int device, int projections, int columns, int level, double sigma)
    : m_impl(std::make_unique<Impl>()) {
    // The CPU's checks and messages (its sinogram size check is the host twin's).
    if (projections < 1 || columns < 1)
        throw InvalidArgument("wavelet stripe removal: " + std::to_string(projections) + " projections x " +
                              std::to_string(columns) + " columns");
    if (!(sigma > 0.0)) throw InvalidArgument("wavelet stripe removal: sigma must be > 0");
    if (level < 1 || level > 20) throw InvalidArgument("wavelet stripe removal: level must be 1 ... 20");

    Impl& m = *m_impl;
    m.device = device;
    m.projections = projections;
    m.columns = columns;
    m.shape = waveletPadding(projections, columns, level);
    m.filters = daubechies9Filters();
    if (m.shape.levels < 1) return; // too small for one level: apply() leaves it as it is

    // Shapes and buffer sizes of every step, the notches as the CPU computes them.
    std::vector<float> notches;
    std::size_t bandFloats = 0, approxFloats = 0, lineFloats = 0, spectrumValues = 0;
    int height = m.shape.height, width = m.shape.width;
    m.steps = std::vector<Impl::Step>(static_cast<std::size_t>(m.shape.levels));
    for (int n = 0; n < m.shape.levels; ++n) {
        Impl::Step& s = m.steps[n];
        s.inHeight = height;
        s.inWidth = width;
        s.height = waveletCoefficients(height);
        s.width = waveletCoefficients(width);
        const std::size_t band = alignedFloats(area(s.height, s.width));
        s.horizontal = bandFloats;
        s.vertical = bandFloats + band;
        s.diagonal = bandFloats + 2 * band;
        bandFloats += 3 * band;
        const int inverseHeight = inverseWaveletLength(s.height), inverseWidth = inverseWaveletLength(s.width);
        lineFloats = std::max({lineFloats, area(height, s.width), area(inverseHeight, s.width)});
        approxFloats = std::max({approxFloats, area(s.height, s.width), area(inverseHeight, inverseWidth)});
        const int half = s.height / 2 + 1;
        spectrumValues = std::max(spectrumValues, area(half, s.width));
        s.damping = notches.size();
        for (int k = 0; k < half; ++k)
            notches.push_back(static_cast<float>(waveletDamping(k, s.height, sigma) / s.height));
        height = s.height;
        width = s.width;
    }

    DeviceScope scope(device);
    m.padded = DeviceBuffer<float>(device, area(m.shape.height, m.shape.width), "the padded sinogram");
    m.bands = DeviceBuffer<float>(device, bandFloats, "the wavelet bands");
    m.approx[0] = DeviceBuffer<float>(device, approxFloats, "the wavelet approximations");
    m.approx[1] = DeviceBuffer<float>(device, approxFloats, "the wavelet approximations");
    m.lo = DeviceBuffer<float>(device, lineFloats, "the wavelet passes");
    m.hi = DeviceBuffer<float>(device, lineFloats, "the wavelet passes");
    m.spectrum = DeviceBuffer<cufftComplex>(device, spectrumValues, "the vertical bands' spectra");
    m.damping = DeviceBuffer<float>(device, notches.size(), "the Gaussian notches");
    std::size_t workBytes = 0;
    for (Impl::Step& s : m.steps) {
        s.forward = columnPlan(device, CUFFT_R2C, s.height, s.width);
        s.inverse = columnPlan(device, CUFFT_C2R, s.height, s.width);
        workBytes = std::max({workBytes, s.forward.workBytes(), s.inverse.workBytes()});
    }
    if (workBytes > 0) {
        m.fftWork = DeviceBuffer<unsigned char>(device, workBytes, "the cuFFT work area");
        for (Impl::Step& s : m.steps) {
            TOMO_CUFFT_CHECK(cufftSetWorkArea(s.forward.get(), m.fftWork.get()));
            TOMO_CUFFT_CHECK(cufftSetWorkArea(s.inverse.get(), m.fftWork.get()));
        }
    }
    // Landed before the constructor returns, so apply() on any stream sees it.
    const Stream upload = Stream::create();
    copyToDeviceNow(m.damping.get(), notches.data(), notches.size() * sizeof(float), upload.get());
}

DeviceWaveletStripes::~DeviceWaveletStripes() = default;

void DeviceWaveletStripes::apply(float* d_sinogram, StreamHandle stream) {
    Impl& m = *m_impl;
    if (m.steps.empty()) return;
    DeviceScope scope(m.device);
    float* const bands = m.bands.get();
    float* const lo = m.lo.get();
    float* const hi = m.hi.get();

    // Decomposition: step 0 reads the padded sinogram.
    launchWaveletPad(d_sinogram, m.projections, m.columns, m.shape.pad, m.padded.get(), stream);
    const float* input = m.padded.get();
    int inputPitch = m.shape.width, top = 0, sourceRows = m.shape.height;
    for (std::size_t n = 0; n < m.steps.size(); ++n) {
        const Impl::Step& s = m.steps[n];
        float* const approx = m.approx[n % 2].get();
        float* const vertical = bands + s.vertical;
        launchWaveletRows(m.filters, input, inputPitch, s.inHeight, s.inWidth, top, sourceRows, lo, hi, stream);
        launchWaveletColumns(m.filters, lo, hi, s.inHeight, s.width, approx, bands + s.horizontal, vertical,
                             bands + s.diagonal, stream);
        TOMO_CUFFT_CHECK(cufftSetStream(s.forward.get(), stream));
        TOMO_CUFFT_CHECK(cufftExecR2C(s.forward.get(), vertical, m.spectrum.get()));
        launchDampSpectrum(reinterpret_cast<float*>(m.spectrum.get()), m.damping.get() + s.damping,
                           s.height / 2 + 1, s.width, stream);
        TOMO_CUFFT_CHECK(cufftSetStream(s.inverse.get(), stream));
        TOMO_CUFFT_CHECK(cufftExecC2R(s.inverse.get(), m.spectrum.get(), vertical));
        input = approx;
        inputPitch = s.width;
        top = 0;
        sourceRows = s.height;
    }

    // Reconstruction: each approximation is read through its own pitch, which
    // crops it to the bands' size as the CPU does.
    for (std::size_t n = m.steps.size(); n-- > 0;) {
        const Impl::Step& s = m.steps[n];
        InverseColumns columns;
        columns.d_approx = input;
        columns.approxPitch = inputPitch;
        columns.d_horizontal = bands + s.horizontal;
        columns.d_vertical = bands + s.vertical;
        columns.d_diagonal = bands + s.diagonal;
        columns.bandHeight = s.height;
        columns.bandWidth = s.width;
        columns.d_lo = lo;
        columns.d_hi = hi;
        launchInverseWaveletColumns(m.filters, columns, stream);
        const int outHeight = inverseWaveletLength(s.height), outWidth = inverseWaveletLength(s.width);
        float* const out = input == m.approx[0].get() ? m.approx[1].get() : m.approx[0].get();
        launchInverseWaveletRows(m.filters, lo, hi, s.width, 0, outHeight, outWidth, out, outWidth, stream);
        input = out;
        inputPitch = outWidth;
    }
    // The sinogram's own rows and columns (the inverse may be one longer than the padded input).
    const int pad = m.shape.pad;
    TOMO_CUDA_CHECK(cudaMemcpy2DAsync(d_sinogram, static_cast<std::size_t>(m.columns) * sizeof(float),
                                      input + static_cast<std::size_t>(pad) * inputPitch + pad,
                                      static_cast<std::size_t>(inputPitch) * sizeof(float),
                                      static_cast<std::size_t>(m.columns) * sizeof(float), m.projections,
                                      cudaMemcpyDeviceToDevice, stream));
}

void removeStripesWaveletOnGpu(std::span<float> sinogram, int projections, int columns, int level, double sigma,
                               int device) {
    if (projections < 1 || columns < 1 ||
        sinogram.size() != static_cast<std::size_t>(projections) * static_cast<std::size_t>(columns))
        throw InvalidArgument("wavelet stripe removal: " + std::to_string(sinogram.size()) + " values for " +
                              std::to_string(projections) + " projections x " + std::to_string(columns) + " columns");
    DeviceWaveletStripes stripes(device, projections, columns, level, sigma);
    DeviceScope scope(device);
    const Stream stream = Stream::create();
    DeviceBuffer<float> d_sinogram(device, sinogram.size(), "the sinogram");
    const std::size_t bytes = sinogram.size() * sizeof(float);
    TOMO_CUDA_CHECK(cudaMemcpyAsync(d_sinogram.get(), sinogram.data(), bytes, cudaMemcpyHostToDevice, stream.get()));
    stripes.apply(d_sinogram.get(), stream.get());
    TOMO_CUDA_CHECK(cudaMemcpyAsync(sinogram.data(), d_sinogram.get(), bytes, cudaMemcpyDeviceToHost, stream.get()));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
}

} // namespace tomo::cuda
