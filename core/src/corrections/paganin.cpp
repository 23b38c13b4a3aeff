// Paganin single-distance phase retrieval: a 2D low-pass of the transmission
// of whole projections (FFTW, edge-padded).
#include "tomo/corrections.h"

#include "recon/fftw_util.h"
#include "tomo/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <complex>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

namespace tomo {

namespace {

/// hc in metre keV: wavelength = kHcMetreKeV / energy.
constexpr double kHcMetreKeV = 1.23984193e-9;
/// Share of the kernel's profile the margin may leave out.
constexpr double kMarginTail = 1e-8;

double alphaOf(const PaganinOptions& o) {
    const double wavelength = kHcMetreKeV / o.energyKeV;
    return o.distanceM * wavelength * o.deltaOverBeta / (4.0 * std::numbers::pi);
}

/// The smallest length >= n whose prime factors are 2, 3, 5, 7.
int smoothLength(int n) {
    for (int m = std::max(n, 1);; ++m) {
        int r = m;
        for (int p : {2, 3, 5, 7})
            while (r % p == 0) r /= p;
        if (r == 1) return m;
    }
}

/// (2 pi f / pixel)^2 for the FFT frequencies f = i / n (signed; `half`
/// keeps only i = 0 ... n/2, the r2c layout).
std::vector<double> squaredFrequencies(int n, double pixel, bool half) {
    std::vector<double> k2(static_cast<std::size_t>(half ? n / 2 + 1 : n));
    for (std::size_t i = 0; i < k2.size(); ++i) {
        const int signedIndex = static_cast<int>(i) <= n / 2 ? static_cast<int>(i) : static_cast<int>(i) - n;
        const double k = 2.0 * std::numbers::pi * signedIndex / (n * pixel);
        k2[i] = k * k;
    }
    return k2;
}

} // namespace

struct PaganinFilter::Impl {
    PaganinTransform t;
    fftw::Plan forward, inverse;
};

double PaganinFilter::kernelLength(const PaganinOptions& options) {
    return std::sqrt(alphaOf(options)) / options.pixelSizeM;
}

int PaganinFilter::margin(const PaganinOptions& options) {
    const double m = std::ceil(kernelLength(options) * std::log(1.0 / kMarginTail));
    if (!(m < 1e6)) { // NaN or absurd: caught by the option checks, kept finite here
        char length[32];
        std::snprintf(length, sizeof length, "%.3g", kernelLength(options));
        throw InvalidArgument(std::string("Paganin: the kernel is ") + length +
                              " pixels long, far beyond any detector; check delta/beta, the energy, distance and "
                              "pixel size");
    }
    return std::max(1, static_cast<int>(m));
}

PaganinTransform PaganinFilter::transform(int rows, int columns, const PaganinOptions& options) {
    if (rows < 1 || columns < 1)
        throw InvalidArgument("Paganin: a block of " + std::to_string(rows) + " x " + std::to_string(columns) +
                              " pixels; expected at least 1 x 1");
    if (!(options.deltaOverBeta > 0 && options.energyKeV > 0 && options.distanceM > 0 && options.pixelSizeM > 0))
        throw InvalidArgument("Paganin: delta/beta, energy, distance and pixel size must all be > 0");
    const int m = margin(options);
    PaganinTransform t;
    t.rows = rows;
    t.columns = columns;
    t.paddedRows = smoothLength(rows + 2 * m);
    t.paddedColumns = smoothLength(columns + 2 * m);
    t.top = (t.paddedRows - rows) / 2;
    t.left = (t.paddedColumns - columns) / 2;
    t.alpha = alphaOf(options);
    t.ky2 = squaredFrequencies(t.paddedRows, options.pixelSizeM, false);
    t.kx2 = squaredFrequencies(t.paddedColumns, options.pixelSizeM, true);
    return t;
}

PaganinFilter::PaganinFilter(int rows, int columns, const PaganinOptions& options) {
    auto impl = std::make_unique<Impl>();
    impl->t = transform(rows, columns, options);
    const PaganinTransform& t = impl->t;
    const std::size_t real = static_cast<std::size_t>(t.paddedRows) * t.paddedColumns;
    const std::size_t spectrum = static_cast<std::size_t>(t.paddedRows) * (t.paddedColumns / 2 + 1);
    auto in = fftw::allocate<float>(real);
    auto out = fftw::allocate<std::complex<float>>(spectrum);
    auto* spec = reinterpret_cast<fftwf_complex*>(out.get());
    {
        std::lock_guard lock(fftw::plannerMutex());
        impl->forward.reset(
            fftwf_plan_dft_r2c_2d(t.paddedRows, t.paddedColumns, in.get(), spec, FFTW_ESTIMATE));
        impl->inverse.reset(
            fftwf_plan_dft_c2r_2d(t.paddedRows, t.paddedColumns, spec, in.get(), FFTW_ESTIMATE));
    }
    if (!impl->forward || !impl->inverse)
        throw Error("Paganin: FFTW could not plan a " + std::to_string(t.paddedRows) + " x " +
                    std::to_string(t.paddedColumns) + " transform");
    m_impl = impl.release();
}

PaganinFilter::~PaganinFilter() {
    delete m_impl;
}

int PaganinFilter::rows() const {
    return m_impl->t.rows;
}
int PaganinFilter::columns() const {
    return m_impl->t.columns;
}

void PaganinFilter::apply(std::span<float> block) const {
    const PaganinTransform& im = m_impl->t;
    if (block.size() != static_cast<std::size_t>(im.rows) * im.columns)
        throw InvalidArgument("Paganin: " + std::to_string(block.size()) + " values for a block of " +
                              std::to_string(im.rows) + " x " + std::to_string(im.columns));
    const int Ny = im.paddedRows, Nx = im.paddedColumns, halfX = Nx / 2 + 1;
    auto buffer = fftw::allocate<float>(static_cast<std::size_t>(Ny) * Nx);
    auto spectrum = fftw::allocate<std::complex<float>>(static_cast<std::size_t>(Ny) * halfX);
    for (int y = 0; y < Ny; ++y) {
        const float* src = block.data() + static_cast<std::size_t>(std::clamp(y - im.top, 0, im.rows - 1)) * im.columns;
        float* dst = buffer.get() + static_cast<std::size_t>(y) * Nx;
        std::fill(dst, dst + im.left, src[0]);
        std::copy(src, src + im.columns, dst + im.left);
        std::fill(dst + im.left + im.columns, dst + Nx, src[im.columns - 1]);
    }
    auto* spec = reinterpret_cast<fftwf_complex*>(spectrum.get());
    fftwf_execute_dft_r2c(m_impl->forward.get(), buffer.get(), spec);
    const double norm = 1.0 / (static_cast<double>(Ny) * Nx);
    for (int y = 0; y < Ny; ++y) {
        std::complex<float>* row = spectrum.get() + static_cast<std::size_t>(y) * halfX;
        for (int x = 0; x < halfX; ++x) row[x] *= static_cast<float>(norm / (1.0 + im.alpha * (im.ky2[y] + im.kx2[x])));
    }
    fftwf_execute_dft_c2r(m_impl->inverse.get(), spec, buffer.get());
    for (int r = 0; r < im.rows; ++r) {
        const float* src = buffer.get() + static_cast<std::size_t>(r + im.top) * Nx + im.left;
        std::copy(src, src + im.columns, block.data() + static_cast<std::size_t>(r) * im.columns);
    }
}

} // namespace tomo
