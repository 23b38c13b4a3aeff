// Rotation-axis finder after Vo, Atwood & Drakopoulos, Opt. Express 22 (2014)
// 19078 (TomoPy's find_center_vo).
//
// For a candidate axis c, the views a + 180 degrees are synthesised from the
// measured 0-180 degree views by mirroring each row about c:
// row(a + pi)(s) = row(a)(2c - s). Stacked under the measured half, this is a
// full 360-degree sinogram, which is consistent only when c is right. The
// 2D Fourier transform of a consistent sinogram has almost no energy in the
// double wedge |k_bins| <= K |k_angles| (an object of radius r pixels
// has angular frequencies only up to ~r times its detector frequency), so
// the metric is the mean |FFT| inside that wedge, and the smallest wins.
//
// Search: 1 px steps over the search radius on the sinogram smoothed along
// the angles (Gaussian sigma 3 views x 1 bin, as TomoPy), binned 2x, 4x...
// first when it exceeds 2^18 pixels and then re-scanned at 1 px around the
// winner at full size; then sub-pixel: c in 1/8 px steps over +-1.5 px on
// the unsmoothed sinogram, the mirrored half shifted by a Fourier phase ramp
// (band-limited: no interpolation smoothing that would favour some
// fractions). Confidence: 1 - best / median metric of the first scan.
#include "tomo/axis_finder.h"

#include "tomo/error.h"
#include "tomo/filter.h"

#include "recon/fftw_util.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numbers>
#include <numeric>
#include <string>

namespace tomo {

namespace {

constexpr double kPi = std::numbers::pi;
/// Object size / field of view assumed by the wedge (TomoPy's default).
constexpr double kRatio = 0.5;
/// Angular frequencies |k| <= kDrop are left out: low frequencies carry the
/// object's mean shape rather than the mismatch (TomoPy's default).
constexpr int kDrop = 20;
constexpr int kMinSize = 16;
/// The coarse search runs on at most this many pixels (binned 2x, 4x... above).
constexpr std::size_t kCoarsePixels = std::size_t{1} << 18;
constexpr double kFineRadius = 1.5;
/// Gaussian smoothing of the integer-step searches (TomoPy's sigmas):
/// along the angles against noise, and a little across the bins.
constexpr double kSmoothAngles = 3.0;
constexpr double kSmoothBins = 1.0;
constexpr double kFineStep = 0.125;

/// Evaluates the metric of a 2 rows x cols sinogram (measured half on top).
class WedgeMetric {
public:
    WedgeMetric(int rows, int cols) : m_rows(2 * rows), m_cols(cols) {
        const std::size_t spectrumCols = static_cast<std::size_t>(cols / 2 + 1);
        m_in = fftw::allocate<float>(static_cast<std::size_t>(m_rows) * cols);
        m_out = fftw::allocate<std::complex<float>>(static_cast<std::size_t>(m_rows) * spectrumCols);
        {
            std::lock_guard lock(fftw::plannerMutex());
            m_plan.reset(fftwf_plan_dft_r2c_2d(m_rows, cols, m_in.get(),
                                               reinterpret_cast<fftwf_complex*>(m_out.get()), FFTW_ESTIMATE));
        }
        if (!m_plan) throw Error("axis finder: FFTW could not plan a 2D transform");
        // Wedge: |v| <= K |u| (TomoPy's _create_mask), without the lowest
        // angular frequencies and the three central detector frequencies.
        const double K = (m_rows - 1.0) / (kPi * m_rows * kRatio);
        const int drop = std::min(kDrop, m_rows / 8);
        for (int i = 0; i < m_rows; ++i) {
            const int u = i <= m_rows / 2 ? i : m_rows - i;
            if (u <= drop) continue;
            const int vMax = static_cast<int>(std::lround(u * K));
            for (int v = 2; v <= std::min(vMax, cols / 2); ++v)
                m_mask.push_back(static_cast<std::uint32_t>(i * spectrumCols + v));
        }
        if (m_mask.empty()) throw InvalidArgument("axis finder: the sinogram is too small for the Fourier metric");
    }

    float* top() { return m_in.get(); }
    float* bottom() { return m_in.get() + static_cast<std::size_t>(m_rows / 2) * m_cols; }

    double evaluate() {
        fftwf_execute(m_plan.get());
        double sum = 0.0;
        for (std::uint32_t i : m_mask) sum += std::sqrt(std::norm(m_out[i])); // std::abs is a slow hypot
        return sum / static_cast<double>(m_mask.size());
    }

private:
    int m_rows, m_cols;
    fftw::Buffer<float> m_in;
    fftw::Buffer<std::complex<float>> m_out;
    fftw::Plan m_plan;
    std::vector<std::uint32_t> m_mask;
};

/// Writes the mirrored half for an integer shift = 2 (c - centre): row a,
/// column s takes column 2c - s = cols - 1 + shift - s of row a; where that
/// falls off the detector, the angle-reversed sinogram fills in (TomoPy's
/// choice: it keeps the texture, so a large shift is not rewarded with a
/// flat, low-energy patch).
void mirrorInteger(const Image& sino, int shift, float* out) {
    const int rows = sino.height, cols = sino.width;
    for (int a = 0; a < rows; ++a)
        for (int s = 0; s < cols; ++s) {
            const int src = cols - 1 + shift - s;
            out[static_cast<std::size_t>(a) * cols + s] =
                src >= 0 && src < cols ? sino.at(src, a) : sino.at(s, rows - 1 - a);
        }
}

/// The mirrored half for any real shift: each flipped row, edge-padded, is
/// shifted by a Fourier phase ramp (band-limited, no smoothing).
class FourierMirror {
public:
    explicit FourierMirror(const Image& sino) : m_sino(sino), m_padded(paddedLength(sino.width)) {
        const int rows = sino.height, cols = sino.width;
        const std::size_t half = static_cast<std::size_t>(m_padded / 2 + 1);
        m_spectra.resize(static_cast<std::size_t>(rows) * half);
        m_row = fftw::allocate<float>(static_cast<std::size_t>(m_padded));
        m_spectrum = fftw::allocate<std::complex<float>>(half);
        auto* spec = reinterpret_cast<fftwf_complex*>(m_spectrum.get());
        {
            std::lock_guard lock(fftw::plannerMutex());
            m_forward.reset(fftwf_plan_dft_r2c_1d(m_padded, m_row.get(), spec, FFTW_ESTIMATE));
            m_inverse.reset(fftwf_plan_dft_c2r_1d(m_padded, spec, m_row.get(), FFTW_ESTIMATE));
        }
        if (!m_forward || !m_inverse) throw Error("axis finder: FFTW could not plan a row transform");
        for (int a = 0; a < rows; ++a) {
            float* r = m_row.get();
            for (int s = 0; s < cols; ++s) r[s] = sino.at(cols - 1 - s, a); // flipped
            // Edge padding, split so the periodic extension is continuous at both ends.
            const int pad = m_padded - cols;
            std::fill(r + cols, r + cols + pad / 2, r[cols - 1]);
            std::fill(r + cols + pad / 2, r + m_padded, r[0]);
            fftwf_execute(m_forward.get());
            std::copy(m_spectrum.get(), m_spectrum.get() + half, m_spectra.begin() + a * half);
        }
    }

    void mirror(double shift, float* out) {
        const int rows = m_sino.height, cols = m_sino.width;
        const std::size_t half = static_cast<std::size_t>(m_padded / 2 + 1);
        std::vector<std::complex<float>> phase(half);
        for (std::size_t k = 0; k < half; ++k) {
            const double angle = -2.0 * kPi * static_cast<double>(k) * shift / m_padded;
            phase[k] = std::complex<float>(std::polar(1.0 / m_padded, angle));
        }
        if (m_padded % 2 == 0) phase[half - 1] = static_cast<float>(std::cos(kPi * shift) / m_padded);
        for (int a = 0; a < rows; ++a) {
            for (std::size_t k = 0; k < half; ++k) m_spectrum[k] = m_spectra[a * half + k] * phase[k];
            fftwf_execute(m_inverse.get());
            for (int s = 0; s < cols; ++s) {
                const double src = s - shift; // column of the flipped row
                out[static_cast<std::size_t>(a) * cols + s] =
                    src >= 0.0 && src <= cols - 1 ? m_row[s] : m_sino.at(s, rows - 1 - a);
            }
        }
    }

private:
    const Image& m_sino;
    int m_padded;
    std::vector<std::complex<float>> m_spectra; // [row][k] of the flipped, padded rows
    fftw::Buffer<float> m_row;
    fftw::Buffer<std::complex<float>> m_spectrum;
    fftw::Plan m_forward, m_inverse;
};

/// Metric of each candidate axis (2 (c - centre) must be a whole number).
std::vector<double> integerScan(const Image& sino, const std::vector<double>& candidates) {
    WedgeMetric metric(sino.height, sino.width);
    std::copy(sino.data.begin(), sino.data.end(), metric.top()); // r2c keeps its input
    const double centre = (sino.width - 1) / 2.0;
    std::vector<double> values;
    for (double c : candidates) {
        mirrorInteger(sino, static_cast<int>(std::lround(2.0 * (c - centre))), metric.bottom());
        values.push_back(metric.evaluate());
    }
    return values;
}

std::size_t argmin(const std::vector<double>& v) {
    return static_cast<std::size_t>(std::min_element(v.begin(), v.end()) - v.begin());
}

/// Separable Gaussian smoothing with mirrored edges.
Image smooth(const Image& in, double sigmaRows, double sigmaCols) {
    auto kernel = [](double sigma) {
        const int r = static_cast<int>(std::ceil(4.0 * sigma));
        std::vector<double> k(2 * r + 1);
        for (int i = -r; i <= r; ++i) k[i + r] = std::exp(-0.5 * i * i / (sigma * sigma));
        const double sum = std::accumulate(k.begin(), k.end(), 0.0);
        for (double& v : k) v /= sum;
        return k;
    };
    auto reflect = [](int i, int n) {
        while (i < 0 || i >= n) i = i < 0 ? -i - 1 : 2 * n - i - 1;
        return i;
    };
    const std::vector<double> kr = kernel(sigmaRows), kc = kernel(sigmaCols);
    const int rr = static_cast<int>(kr.size() / 2), rc = static_cast<int>(kc.size() / 2);
    Image tmp(in.width, in.height), out(in.width, in.height);
    for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x) {
            double sum = 0.0;
            for (int i = -rc; i <= rc; ++i) sum += kc[i + rc] * in.at(reflect(x + i, in.width), y);
            tmp.at(x, y) = static_cast<float>(sum);
        }
    for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x) {
            double sum = 0.0;
            for (int i = -rr; i <= rr; ++i) sum += kr[i + rr] * tmp.at(x, reflect(y + i, in.height));
            out.at(x, y) = static_cast<float>(sum);
        }
    return out;
}

/// Block average by `factor` in both directions (remainders dropped).
Image bin(const Image& in, int factor) {
    Image out(in.width / factor, in.height / factor);
    for (int y = 0; y < out.height; ++y)
        for (int x = 0; x < out.width; ++x) {
            double sum = 0.0;
            for (int j = 0; j < factor; ++j)
                for (int i = 0; i < factor; ++i) sum += in.at(x * factor + i, y * factor + j);
            out.at(x, y) = static_cast<float>(sum / (factor * factor));
        }
    return out;
}

/// The views of the first 180 degrees in angle order, as a sinogram.
Image halfTurn(const Image& sinogram, const std::vector<double>& angles) {
    const int n = static_cast<int>(angles.size());
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return angles[a] < angles[b]; });
    std::vector<double> steps;
    for (int i = 1; i < n; ++i)
        if (double d = angles[order[i]] - angles[order[i - 1]]; d > 0.0) steps.push_back(d);
    if (steps.empty()) throw InvalidArgument("axis finder: all angles are equal (expected ~180 degrees of views)");
    std::nth_element(steps.begin(), steps.begin() + steps.size() / 2, steps.end());
    const double step = steps[steps.size() / 2];

    // A view at a0 + 180 degrees repeats the first one mirrored: drop it and all beyond.
    const double a0 = angles[order[0]];
    std::vector<int> kept;
    for (int i : order)
        if (angles[i] - a0 < kPi - 0.5 * step) kept.push_back(i);
    const double covered = angles[kept.back()] - a0 + step;
    if (covered < 0.95 * kPi)
        throw InvalidArgument("axis finder: the angles cover " + std::to_string(covered * 180.0 / kPi) +
                              " degrees (expected about 180: the method mirrors views a and a + 180)");
    if (static_cast<int>(kept.size()) < kMinSize)
        throw InvalidArgument("axis finder: " + std::to_string(kept.size()) + " views within 180 degrees (expected >= " +
                              std::to_string(kMinSize) + ")");
    Image half(sinogram.width, static_cast<int>(kept.size()));
    for (int r = 0; r < half.height; ++r)
        for (int s = 0; s < half.width; ++s) {
            const float v = sinogram.at(s, kept[r]);
            if (!std::isfinite(v))
                throw DataError("axis finder: sinogram value at view " + std::to_string(kept[r]) + ", column " +
                                std::to_string(s) + " is not finite");
            half.at(s, r) = v;
        }
    return half;
}

} // namespace

AxisEstimate findRotationAxis(const Image& sinogram, const std::vector<double>& angles, double searchRadius) {
    if (sinogram.width < kMinSize || sinogram.height < kMinSize ||
        sinogram.data.size() != static_cast<std::size_t>(sinogram.width) * sinogram.height)
        throw InvalidArgument("axis finder: sinogram is " + std::to_string(sinogram.width) + "x" +
                              std::to_string(sinogram.height) + " (expected at least " + std::to_string(kMinSize) +
                              " bins x " + std::to_string(kMinSize) + " views)");
    if (angles.size() != static_cast<std::size_t>(sinogram.height))
        throw InvalidArgument("axis finder: " + std::to_string(angles.size()) + " angles for " +
                              std::to_string(sinogram.height) + " sinogram rows (expected one per row)");
    for (std::size_t i = 0; i < angles.size(); ++i)
        if (!std::isfinite(angles[i]))
            throw InvalidArgument("axis finder: angles[" + std::to_string(i) + "] is not finite");

    if (std::isnan(searchRadius))
        throw InvalidArgument("axis finder: searchRadius is NaN (expected pixels >= 0, or < 0 for bins / 4)");

    const Image sino = halfTurn(sinogram, angles);
    const int cols = sino.width;
    const double centre = (cols - 1) / 2.0;
    // Candidates must leave an overlap between the halves.
    const double maxRadius = centre - kFineRadius - 2.0;
    double radius = searchRadius < 0.0 ? cols / 4.0 : searchRadius;
    radius = std::clamp(radius, 1.0, std::max(maxRadius, 1.0));

    // Coarse: 1 px steps on the sinogram smoothed against noise (binned
    // first when large), then, when binned, 1 px steps at full resolution.
    int factor = 1;
    while (static_cast<std::size_t>(sino.width / factor) * (sino.height / factor) > kCoarsePixels &&
           sino.height / (2 * factor) >= kMinSize)
        factor *= 2;
    const Image smoothed = smooth(sino, kSmoothAngles, kSmoothBins);
    const Image coarse = factor > 1 ? smooth(bin(sino, factor), kSmoothAngles, kSmoothBins) : smoothed;
    const double coarseCentre = (coarse.width - 1) / 2.0;
    const int steps = static_cast<int>(radius / factor);
    std::vector<double> candidates;
    for (int j = -steps; j <= steps; ++j) candidates.push_back(coarseCentre + j);
    const std::vector<double> coarseMetric = integerScan(coarse, candidates);
    double best = candidates[argmin(coarseMetric)];
    best = factor * best + (factor - 1) / 2.0; // binned column -> detector column
    if (factor > 1) {
        candidates.clear();
        for (int j = -factor; j <= factor; ++j)
            if (std::abs(best + j - centre) <= maxRadius) candidates.push_back(best + j);
        best = candidates[argmin(integerScan(smoothed, candidates))];
    }

    // Sub-pixel: 1/8 px steps on the unsmoothed sinogram.
    {
        WedgeMetric metric(sino.height, cols);
        FourierMirror mirror(sino);
        std::copy(sino.data.begin(), sino.data.end(), metric.top()); // r2c keeps its input
        const int n = static_cast<int>(std::lround(kFineRadius / kFineStep));
        std::vector<double> fine, values;
        for (int i = -n; i <= n; ++i) {
            const double c = best + i * kFineStep;
            if (std::abs(c - centre) > maxRadius) continue;
            mirror.mirror(2.0 * (c - centre), metric.bottom());
            fine.push_back(c);
            values.push_back(metric.evaluate());
        }
        best = fine[argmin(values)];
    }

    AxisEstimate result;
    result.axis = best;
    std::vector<double> sorted = coarseMetric;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const double median = sorted[sorted.size() / 2];
    const double minimum = *std::min_element(coarseMetric.begin(), coarseMetric.end());
    result.confidence = median > 0.0 ? std::clamp(1.0 - minimum / median, 0.0, 1.0) : 0.0;
    result.method = "Vo et al. 2014: Fourier double-wedge metric of the 0-360 degree sinogram mirrored about the "
                    "candidate axis; coarse 1 px, then 1/8 px by Fourier shift";
    return result;
}

} // namespace tomo
