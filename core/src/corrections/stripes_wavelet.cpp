// Münch et al., Opt. Express 17, 8567 (2009): stripes removed by damping the
// low angular frequencies of the vertical wavelet details, with the choices
// of algotom's remove_stripe_based_wavelet_fft (Daubechies 9, its padding,
// level limit and damping window). A small DWT with pywt's "symmetric"
// boundary convention.
#include "tomo/corrections.h"

#include "corrections/correction_util.h"
#include "recon/fftw_util.h"
#include "tomo/error.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

namespace tomo {

namespace {

constexpr int kTaps = 18;
/// Daubechies 9 decomposition low-pass (pywt "db9" dec_lo).
constexpr std::array<double, kTaps> kDb9DecLo = {
    3.93473203162716e-05,  -0.0002519631889427101, 0.00023038576352319597, 0.0018476468830562265,
    -0.00428150368246343,  -0.004723204757751397,  0.022361662123679096,   0.00025094711483145197,
    -0.06763282906132997,  0.03072568147933338,    0.14854074933810638,    -0.09684078322297646,
    -0.2932737832791749,   0.13319738582500756,    0.6572880780513005,     0.6048231236901112,
    0.24383467461259034,   0.038077947363878345};

/// The four filters by the quadrature-mirror relations of an orthogonal
/// wavelet: rec_lo[k] = dec_lo[F-1-k], rec_hi[k] = (-1)^k dec_lo[k],
/// dec_hi[k] = rec_hi[F-1-k].
struct Filters {
    std::array<double, kTaps> decLo{}, decHi{}, recLo{}, recHi{};
    Filters() {
        decLo = kDb9DecLo;
        for (int k = 0; k < kTaps; ++k) {
            recLo[k] = decLo[kTaps - 1 - k];
            recHi[k] = (k % 2 ? -1.0 : 1.0) * decLo[k];
        }
        for (int k = 0; k < kTaps; ++k) decHi[k] = recHi[kTaps - 1 - k];
    }
};
const Filters& filters() {
    static const Filters f;
    return f;
}

/// Coefficients of a line of n values: (n + F - 1) / 2.
int coefficientCount(int n) {
    return (n + kTaps - 1) / 2;
}

/// lo[k], hi[k] = sum_j filter[j] x[2k + 1 - j], x extended by half-sample
/// reflection (pywt's downsampling convolution in "symmetric" mode).
void dwtLine(const float* x, std::ptrdiff_t xs, int n, float* lo, float* hi, std::ptrdiff_t os) {
    const Filters& f = filters();
    const int m = coefficientCount(n);
    for (int k = 0; k < m; ++k) {
        double a = 0.0, d = 0.0;
        for (int j = 0; j < kTaps; ++j) {
            const double v = x[detail::reflectIndex(2 * k + 1 - j, n) * xs];
            a += f.decLo[j] * v;
            d += f.decHi[j] * v;
        }
        lo[k * os] = static_cast<float>(a);
        hi[k * os] = static_cast<float>(d);
    }
}

/// The inverse (pywt's idwt, "valid" part of the upsampled convolution):
/// y[t] = sum_k lo[k] rec_lo[t + F - 2 - 2k] + hi[k] rec_hi[t + F - 2 - 2k]
/// for t = 0 ... outN - 1 (outN <= 2m - F + 2).
void idwtLine(const float* lo, std::ptrdiff_t loStride, const float* hi, std::ptrdiff_t hiStride, int m, float* y,
              std::ptrdiff_t ys, int outN) {
    const Filters& f = filters();
    for (int t = 0; t < outN; ++t) {
        double s = 0.0;
        const int kMax = std::min(m - 1, (t + kTaps - 2) / 2);
        for (int k = t / 2; k <= kMax; ++k) {
            const int i = t + kTaps - 2 - 2 * k;
            s += lo[k * loStride] * f.recLo[i] + hi[k * hiStride] * f.recHi[i];
        }
        y[t * ys] = static_cast<float>(s);
    }
}

/// A row-major 2D array.
struct Plane {
    int height = 0, width = 0;
    std::vector<float> v;
    Plane() = default;
    Plane(int h, int w) : height(h), width(w), v(static_cast<std::size_t>(h) * w) {}
    float* at(int y, int x) { return v.data() + static_cast<std::size_t>(y) * width + x; }
    const float* at(int y, int x) const { return v.data() + static_cast<std::size_t>(y) * width + x; }
};

struct Level {
    Plane horizontal, vertical, diagonal; // pywt's cH, cV, cD
};

/// One 2D step (pywt's dwt2): `a` becomes the approximation, the details
/// are returned. Columns first (axis 1), then rows (axis 0).
Level decompose(Plane& a, WorkerPool* pool) {
    const int h2 = coefficientCount(a.height), w2 = coefficientCount(a.width);
    Plane lo(a.height, w2), hi(a.height, w2);
    detail::forRanges(pool, a.height, [&](int y0, int y1) {
        for (int y = y0; y < y1; ++y) dwtLine(a.at(y, 0), 1, a.width, lo.at(y, 0), hi.at(y, 0), 1);
    });
    Plane approx(h2, w2);
    Level level{Plane(h2, w2), Plane(h2, w2), Plane(h2, w2)};
    detail::forRanges(pool, w2, [&](int x0, int x1) {
        for (int x = x0; x < x1; ++x) {
            dwtLine(lo.at(0, x), w2, a.height, approx.at(0, x), level.horizontal.at(0, x), w2);
            dwtLine(hi.at(0, x), w2, a.height, level.vertical.at(0, x), level.diagonal.at(0, x), w2);
        }
    });
    a = std::move(approx);
    return level;
}

/// The inverse step (pywt's idwt2): approximation `a`, cropped to the
/// details' size, and the details -> the approximation one level finer
/// (2 h2 - F + 2 rows, 2 w2 - F + 2 columns).
Plane reconstruct(const Plane& a, const Level& level, WorkerPool* pool) {
    const int h2 = level.vertical.height, w2 = level.vertical.width;
    const int H = 2 * h2 - kTaps + 2, W = 2 * w2 - kTaps + 2;
    Plane lo(H, w2), hi(H, w2);
    detail::forRanges(pool, w2, [&](int x0, int x1) {
        for (int x = x0; x < x1; ++x) {
            idwtLine(a.at(0, x), a.width, level.horizontal.at(0, x), w2, h2, lo.at(0, x), w2, H);
            idwtLine(level.vertical.at(0, x), w2, level.diagonal.at(0, x), w2, h2, hi.at(0, x), w2, H);
        }
    });
    Plane out(H, W);
    detail::forRanges(pool, H, [&](int y0, int y1) {
        for (int y = y0; y < y1; ++y) idwtLine(lo.at(y, 0), 1, hi.at(y, 0), 1, w2, out.at(y, 0), 1, W);
    });
    return out;
}

/// Multiplies each column's spectrum along the rows by waveletDamping (the
/// inverse transform's 1 / n folded in).
void dampColumns(Plane& p, double sigma, WorkerPool* pool) {
    const int n = p.height, half = n / 2 + 1;
    std::vector<float> damping(static_cast<std::size_t>(half));
    for (int k = 0; k < half; ++k) damping[k] = static_cast<float>(waveletDamping(k, n, sigma) / n);
    fftw::Plan forward, inverse;
    {
        auto line = fftw::allocate<float>(static_cast<std::size_t>(n));
        auto spectrum = fftw::allocate<std::complex<float>>(static_cast<std::size_t>(half));
        auto* spec = reinterpret_cast<fftwf_complex*>(spectrum.get());
        std::lock_guard lock(fftw::plannerMutex());
        forward.reset(fftwf_plan_dft_r2c_1d(n, line.get(), spec, FFTW_ESTIMATE));
        inverse.reset(fftwf_plan_dft_c2r_1d(n, spec, line.get(), FFTW_ESTIMATE));
    }
    if (!forward || !inverse) throw Error("wavelet stripe removal: FFTW could not plan length " + std::to_string(n));
    detail::forRanges(pool, p.width, [&](int x0, int x1) {
        auto line = fftw::allocate<float>(static_cast<std::size_t>(n));
        auto spectrum = fftw::allocate<std::complex<float>>(static_cast<std::size_t>(half));
        auto* spec = reinterpret_cast<fftwf_complex*>(spectrum.get());
        for (int x = x0; x < x1; ++x) {
            for (int y = 0; y < n; ++y) line[y] = *p.at(y, x);
            fftwf_execute_dft_r2c(forward.get(), line.get(), spec);
            for (int k = 0; k < half; ++k) spectrum[k] *= damping[k];
            fftwf_execute_dft_c2r(inverse.get(), spec, line.get());
            for (int y = 0; y < n; ++y) *p.at(y, x) = line[y];
        }
    });
}

} // namespace

std::span<const double> daubechies9() {
    return kDb9DecLo;
}

double waveletDamping(int k, int n, double sigma) {
    // algotom's window 1 - exp(-x^2 / (2 sigma^2)) over the shifted spectrum,
    // x = index - (ceil(n / 2) - 1); the shifted index of frequency k is
    // k + n / 2. The real part of the inverse averages k and -k.
    const int shift = n / 2 - ((n + 1) / 2 - 1); // 1 for even n, 0 for odd
    auto window = [&](int x) { return -std::expm1(-static_cast<double>(x) * x / (2.0 * sigma * sigma)); };
    if (n % 2 == 0 && k == n / 2) return window(shift - k); // the Nyquist frequency is its own partner
    return 0.5 * (window(k + shift) + window(shift - k));
}

WaveletPadding waveletPadding(int projections, int columns, int level) {
    WaveletPadding w;
    w.pad = std::min(150, static_cast<int>(0.1 * std::min(projections, columns)));
    w.height = projections + 2 * w.pad;
    w.width = columns + 2 * w.pad;
    int most = 0; // floor(log2(min(height, width) / 16))
    while ((16 << (most + 1)) <= std::min(w.height, w.width)) ++most;
    if (std::min(w.height, w.width) < 16) most = 0;
    w.levels = std::min(level, most);
    return w;
}

void removeStripesWavelet(std::span<float> sinogram, int projections, int columns, int level, double sigma,
                          WorkerPool* pool) {
    if (projections < 1 || columns < 1 ||
        sinogram.size() != static_cast<std::size_t>(projections) * static_cast<std::size_t>(columns))
        throw InvalidArgument("wavelet stripe removal: " + std::to_string(sinogram.size()) + " values for " +
                              std::to_string(projections) + " projections x " + std::to_string(columns) + " columns");
    if (!(sigma > 0.0)) throw InvalidArgument("wavelet stripe removal: sigma must be > 0");
    if (level < 1 || level > 20) throw InvalidArgument("wavelet stripe removal: level must be 1 ... 20");
    const WaveletPadding shape = waveletPadding(projections, columns, level);
    if (shape.levels < 1) return; // too small for one level (algotom: pywt's level 0 returns it as it is)
    // Each column's mean above and below (so the angular FFTs do not wrap one
    // end of the sinogram onto the other), then the edge columns repeated.
    const int pad = shape.pad;
    std::vector<float> mean(static_cast<std::size_t>(columns));
    for (int c = 0; c < columns; ++c) {
        double sum = 0.0;
        for (int y = 0; y < projections; ++y) sum += sinogram[static_cast<std::size_t>(y) * columns + c];
        mean[c] = static_cast<float>(sum / projections);
    }
    Plane a(shape.height, shape.width);
    for (int y = 0; y < a.height; ++y) {
        const bool inside = y >= pad && y < pad + projections;
        const float* src = inside ? sinogram.data() + static_cast<std::size_t>(y - pad) * columns : mean.data();
        for (int x = 0; x < a.width; ++x) *a.at(y, x) = src[std::clamp(x - pad, 0, columns - 1)];
    }
    std::vector<Level> levels;
    for (int n = 0; n < shape.levels; ++n) {
        levels.push_back(decompose(a, pool));
        dampColumns(levels.back().vertical, sigma, pool);
    }
    for (int n = shape.levels - 1; n >= 0; --n) a = reconstruct(a, levels[n], pool);
    for (int y = 0; y < projections; ++y)
        std::copy(a.at(y + pad, pad), a.at(y + pad, pad) + columns,
                  sinogram.data() + static_cast<std::size_t>(y) * columns);
}

} // namespace tomo
