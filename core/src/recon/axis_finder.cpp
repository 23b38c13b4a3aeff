// Rotation-axis finder after Vo, Atwood & Drakopoulos, Opt. Express 22 (2014)
// 19078 (TomoPy's and Algotom's find_center_vo).
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
// Before the search, gross outliers (a dead pixel clamped to a huge value, a
// zinger) are replaced by the median of their row neighbours: a dead column
// is consistent with the mirror only where the filled-in edge covers it, so
// it drags the minimum there and inflates every other candidate's metric.
//
// Search: 1 px steps over the search radius on the sinogram smoothed along
// the angles (Gaussian sigma 3 views x 1 bin, as TomoPy), binned 2x, 4x...
// first when it exceeds 2^18 pixels and then re-scanned at 1 px around the
// winner at full size; then sub-pixel: c in 1/8 px steps over +-1.5 px on the
// sinogram smoothed across the bins (1 bin), the mirrored half shifted by a
// Fourier phase ramp (band-limited: no interpolation smoothing that would
// favour some fractions); once as it is and once with the metric smoothed
// along the angles (3 views) in its Fourier domain, where the joined
// 360-degree sinogram is periodic (smoothing the half turn before mirroring
// treats its two ends unlike their continuation and shifts the result), when
// halves of the views disagree unsmoothed by more than 1 px, kept when its
// halves agree twice as well (the smoothing's shift of the answer counted as
// a disagreement). Unsmoothed, the sub-pixel
// metric of a noisy scan is noise: on the Diamond dendrites (360 views, 1260
// columns) it varied 0.1 % over +-3 px and the even and odd views found axes
// 3.4 px apart (0.4 px smoothed); on exact phantoms the smoothing costs
// accuracy (0.27 px instead of < 0.05 px).
//
// Confidence = the smaller of uniqueness and reproducibility (two
// independent checks; their product read a moderate pair as doubtful).
// Uniqueness: how far the best minimum of the coarse metric lies below any
// other local minimum, relative to the median metric (a second, nearly as
// deep minimum means two axes look alike), mapped from [0.4, 0.9] to
// [0, 1]. Reproducibility: the sub-pixel search is repeated on two halves of
// the views, whose noise is independent, for two splits (even / odd views,
// and alternate pairs of neighbouring views); exp(-d^2) of the RMS distance
// d (px) between the halves' axes. A minimum at the edge of the search range
// gives 0. The old measure, 1 - best / median metric, read 0.99 on a
// dead-pixel row whose answer was 2 px off (a few huge metric values set the
// median) and 0.5-0.7 on empty rows 2-3 px off.
//
// Views at non-uniform angles are interpolated onto equal steps first: the
// metric's Fourier transform takes the rows as equally spaced.
#include "tomo/axis_finder.h"

#include "tomo/error.h"
#include "tomo/filter.h"
#include "tomo/worker_pool.h"

#include "recon/fftw_util.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numbers>
#include <numeric>
#include <string>
#include <thread>

namespace tomo {

namespace {

constexpr double kPi = std::numbers::pi;
/// Object size / field of view assumed by the wedge (TomoPy's default).
constexpr double kRatio = 0.5;
/// Angular frequencies |k| <= kDrop are left out: low frequencies carry the
/// object's mean shape rather than the mismatch (TomoPy's default).
constexpr int kDrop = 20;
constexpr int kMinSize = 16;
/// Views farther than this fraction of a step from a uniform grid are
/// interpolated onto one.
constexpr double kUniformTolerance = 0.05;
/// The coarse search runs on at most this many pixels (binned 2x, 4x... above).
constexpr std::size_t kCoarsePixels = std::size_t{1} << 18;
constexpr double kFineRadius = 1.5;
constexpr double kFineStep = 0.125;
/// Gaussian smoothing against noise (TomoPy's sigmas for the integer-step
/// searches): along the angles, and a little across the bins. The sub-pixel
/// search uses only the second (on noisy phantoms: RMS error 0.43 -> 0.27 px).
constexpr double kSmoothAngles = 3.0;
constexpr double kSmoothBins = 1.0;
/// Uniqueness up to kAmbiguous counts as 0 in the confidence, from kUnique
/// as 1 (on noisy phantoms, 60 % of the answers with uniqueness 0.35-0.5 were
/// more than 1 px off, 1 % of those above 0.8).
constexpr double kAmbiguous = 0.4;
constexpr double kUnique = 0.9;
/// The searches on halves of the views cover +-kSplitRadius around the answer.
constexpr double kSplitRadius = 3.0;
/// Halves further apart than this (reproducibility < 0.37) try the metric
/// smoothed along the angles: exact phantoms agree within 1/8 px unsmoothed,
/// which is sharper there.
constexpr double kSmoothAbove = 1.0;
/// Outliers: farther from the median of the 2 kOutlierHalf + 1 row
/// neighbours than kOutlierSigmas robust standard deviations of that
/// distance and kOutlierRange x the 1-99 % range of the row medians (so
/// that the sharp edges of clean data stay).
constexpr int kOutlierHalf = 2;
constexpr double kOutlierSigmas = 10.0;
constexpr double kOutlierRange = 0.25;

/// Evaluates the metric of a 2 rows x cols sinogram (measured half on top).
/// With angularSigma > 0 each wedge frequency is weighted by the transform of
/// a Gaussian of that many views along the angles: the joined 360-degree
/// sinogram smoothed periodically, so the joins of the measured and the
/// mirrored half are smoothed like any other pair of views (smoothing the
/// half turn before mirroring treats its two ends unlike their continuation,
/// which moves the minimum).
class WedgeMetric {
public:
    WedgeMetric(int rows, int cols, double angularSigma) : m_rows(2 * rows), m_cols(cols) {
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
            const double f = static_cast<double>(u) / m_rows; // cycles per view
            const auto weight = static_cast<float>(std::exp(-2.0 * kPi * kPi * angularSigma * angularSigma * f * f));
            for (int v = 2; v <= std::min(vMax, cols / 2); ++v) {
                m_mask.push_back(static_cast<std::uint32_t>(i * spectrumCols + v));
                m_weight.push_back(weight);
            }
        }
        if (m_mask.empty()) throw InvalidArgument("axis finder: the sinogram is too small for the Fourier metric");
    }

    float* top() { return m_in.get(); }
    float* bottom() { return m_in.get() + static_cast<std::size_t>(m_rows / 2) * m_cols; }

    double evaluate() {
        fftwf_execute(m_plan.get());
        double sum = 0.0;
        for (std::size_t k = 0; k < m_mask.size(); ++k)
            sum += m_weight[k] * std::sqrt(std::norm(m_out[m_mask[k]])); // std::abs is a slow hypot
        return sum / static_cast<double>(m_mask.size());
    }

private:
    int m_rows, m_cols;
    fftw::Buffer<float> m_in;
    fftw::Buffer<std::complex<float>> m_out;
    fftw::Plan m_plan;
    std::vector<std::uint32_t> m_mask;
    std::vector<float> m_weight;
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
/// shifted by a Fourier phase ramp (band-limited, no smoothing). mirror() may
/// run on several threads at once.
class FourierMirror {
public:
    explicit FourierMirror(const Image& sino) : m_sino(sino), m_padded(paddedLength(sino.width)) {
        const int rows = sino.height, cols = sino.width;
        const std::size_t half = spectrumLength();
        m_spectra.resize(static_cast<std::size_t>(rows) * half);
        auto row = fftw::allocate<float>(static_cast<std::size_t>(m_padded));
        auto spectrum = fftw::allocate<std::complex<float>>(half);
        auto* spec = reinterpret_cast<fftwf_complex*>(spectrum.get());
        fftw::Plan forward;
        {
            std::lock_guard lock(fftw::plannerMutex());
            forward.reset(fftwf_plan_dft_r2c_1d(m_padded, row.get(), spec, FFTW_ESTIMATE));
            m_inverse.reset(fftwf_plan_dft_c2r_1d(m_padded, spec, row.get(), FFTW_ESTIMATE));
        }
        if (!forward || !m_inverse) throw Error("axis finder: FFTW could not plan a row transform");
        for (int a = 0; a < rows; ++a) {
            float* r = row.get();
            for (int s = 0; s < cols; ++s) r[s] = sino.at(cols - 1 - s, a); // flipped
            // Edge padding, split so the periodic extension is continuous at both ends.
            const int pad = m_padded - cols;
            std::fill(r + cols, r + cols + pad / 2, r[cols - 1]);
            std::fill(r + cols + pad / 2, r + m_padded, r[0]);
            fftwf_execute(forward.get());
            std::copy(spectrum.get(), spectrum.get() + half, m_spectra.begin() + a * half);
        }
    }

    void mirror(double shift, float* out) const {
        const int rows = m_sino.height, cols = m_sino.width;
        const std::size_t half = spectrumLength();
        std::vector<std::complex<float>> phase(half);
        for (std::size_t k = 0; k < half; ++k) {
            const double angle = -2.0 * kPi * static_cast<double>(k) * shift / m_padded;
            phase[k] = std::complex<float>(std::polar(1.0 / m_padded, angle));
        }
        if (m_padded % 2 == 0) phase[half - 1] = static_cast<float>(std::cos(kPi * shift) / m_padded);
        auto row = fftw::allocate<float>(static_cast<std::size_t>(m_padded));
        auto spectrum = fftw::allocate<std::complex<float>>(half);
        for (int a = 0; a < rows; ++a) {
            for (std::size_t k = 0; k < half; ++k) spectrum[k] = m_spectra[a * half + k] * phase[k];
            fftwf_execute_dft_c2r(m_inverse.get(), reinterpret_cast<fftwf_complex*>(spectrum.get()), row.get());
            for (int s = 0; s < cols; ++s) {
                const double src = s - shift; // column of the flipped row
                out[static_cast<std::size_t>(a) * cols + s] =
                    src >= 0.0 && src <= cols - 1 ? row[s] : m_sino.at(s, rows - 1 - a);
            }
        }
    }

private:
    std::size_t spectrumLength() const { return static_cast<std::size_t>(m_padded / 2 + 1); }

    const Image& m_sino;
    int m_padded;
    std::vector<std::complex<float>> m_spectra; // [row][k] of the flipped, padded rows
    fftw::Plan m_inverse;
};

/// The metric of each candidate axis, in candidate order.
struct Curve {
    std::vector<double> axes;
    std::vector<double> metric;

    std::size_t best() const {
        return static_cast<std::size_t>(std::min_element(metric.begin(), metric.end()) - metric.begin());
    }
    double bestAxis() const { return axes[best()]; }
};

/// Memory all threads' WedgeMetrics of one scan may take together.
constexpr std::size_t kScanMemory = std::size_t{2} << 30;

/// Runs `evaluate(candidate, metric)` for every candidate, spread over the
/// hardware threads, each with its own WedgeMetric (FFTW executes plans
/// concurrently; only planning is serialised). Two candidates per thread at
/// least: a WedgeMetric costs about one transform to set up.
template <class Evaluate>
std::vector<double> scanInParallel(const Image& sino, std::size_t candidates, double angularSigma, Evaluate evaluate) {
    std::vector<double> values(candidates);
    const std::size_t metricBytes = 16 * static_cast<std::size_t>(sino.width) * static_cast<std::size_t>(sino.height);
    const std::size_t most = std::max<std::size_t>(std::min(candidates / 2, kScanMemory / metricBytes), 1);
    const int threads = static_cast<int>(std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, most));
    WorkerPool pool(threads);
    pool.parallelFor(threads, [&](int part, int) {
        WedgeMetric metric(sino.height, sino.width, angularSigma);
        std::copy(sino.data.begin(), sino.data.end(), metric.top()); // r2c keeps its input
        for (std::size_t i = part; i < candidates; i += threads) values[i] = evaluate(i, metric);
    });
    return values;
}

/// Metric of each candidate axis (2 (c - centre) must be a whole number).
Curve integerScan(const Image& sino, std::vector<double> candidates) {
    const double centre = (sino.width - 1) / 2.0;
    Curve curve;
    curve.metric = scanInParallel(sino, candidates.size(), 0.0, [&](std::size_t i, WedgeMetric& metric) {
        mirrorInteger(sino, static_cast<int>(std::lround(2.0 * (candidates[i] - centre))), metric.bottom());
        return metric.evaluate();
    });
    curve.axes = std::move(candidates);
    return curve;
}

/// Metric of c = from + k step for |k step| <= radius, by Fourier shifts,
/// smoothed along the angles by angularSigma views (WedgeMetric).
Curve fineScan(const Image& sino, double from, double radius, double step, double maxRadius, double angularSigma) {
    const double centre = (sino.width - 1) / 2.0;
    Curve curve;
    const int n = static_cast<int>(std::lround(radius / step));
    for (int k = -n; k <= n; ++k)
        if (const double c = from + k * step; std::abs(c - centre) <= maxRadius) curve.axes.push_back(c);
    const FourierMirror mirror(sino);
    curve.metric = scanInParallel(sino, curve.axes.size(), angularSigma, [&](std::size_t i, WedgeMetric& metric) {
        mirror.mirror(2.0 * (curve.axes[i] - centre), metric.bottom());
        return metric.evaluate();
    });
    return curve;
}

/// Separable Gaussian smoothing with mirrored edges (sigma 0: none that way).
Image smooth(const Image& in, double sigmaRows, double sigmaCols) {
    auto kernel = [](double sigma) {
        if (sigma <= 0.0) return std::vector<double>{1.0};
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

/// The views of the first 180 degrees in angle order (indices into
/// `angles`), the angle they cover (to the last view's next step) and the
/// median step.
struct HalfTurnViews {
    std::vector<int> kept;
    double covered = 0.0;
    double step = 0.0;
};

/// Throws InvalidArgument (what is missing) unless the views cover about
/// 180 degrees (95 %) with at least kMinSize views.
HalfTurnViews halfTurnViews(const std::vector<double>& angles) {
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
    return {std::move(kept), covered, step};
}

/// The views of the first 180 degrees in angle order, as a sinogram.
Image halfTurn(const Image& sinogram, const std::vector<double>& angles) {
    const std::vector<int> kept = halfTurnViews(angles).kept;
    const double a0 = angles[kept.front()];
    for (int view : kept)
        for (int s = 0; s < sinogram.width; ++s)
            if (!std::isfinite(sinogram.at(s, view)))
                throw DataError("axis finder: sinogram value at view " + std::to_string(view) + ", column " +
                                std::to_string(s) + " is not finite");

    // The metric's Fourier transform takes the views as equally spaced:
    // views at other angles are interpolated onto pi / n steps.
    const int views = static_cast<int>(kept.size());
    const double uniformStep = kPi / views;
    bool uniform = true;
    for (int r = 0; r < views; ++r)
        uniform = uniform && std::abs(angles[kept[r]] - a0 - r * uniformStep) <= kUniformTolerance * uniformStep;
    Image half(sinogram.width, views);
    for (int r = 0, next = 1; r < views; ++r) {
        const double angle = a0 + r * uniformStep;
        while (next < views - 1 && angles[kept[next]] < angle) ++next;
        const int a = uniform ? r : next - 1, b = uniform ? r : next;
        const double span = angles[kept[b]] - angles[kept[a]];
        const double w = span > 0.0 ? std::clamp((angle - angles[kept[a]]) / span, 0.0, 1.0) : 0.0;
        for (int s = 0; s < half.width; ++s)
            half.at(s, r) = static_cast<float>((1.0 - w) * sinogram.at(s, kept[a]) + w * sinogram.at(s, kept[b]));
    }
    return half;
}

/// The value below which a fraction q of `values` lies (q in [0, 1]).
double quantile(std::vector<float> values, double q) {
    const auto k = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1));
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
    return values[k];
}

/// `sino` with gross outliers replaced by the median of their row
/// neighbours (the window shrinks at the detector edges, so an edge column
/// is compared with its inner neighbours); counts them in `replaced`.
Image withoutOutliers(const Image& sino, std::size_t& replaced) {
    const int rows = sino.height, cols = sino.width;
    Image median(cols, rows);
    std::vector<float> window;
    for (int a = 0; a < rows; ++a)
        for (int s = 0; s < cols; ++s) {
            window.clear();
            for (int k = std::max(0, s - kOutlierHalf); k <= std::min(cols - 1, s + kOutlierHalf); ++k)
                window.push_back(sino.at(k, a));
            std::nth_element(window.begin(), window.begin() + static_cast<std::ptrdiff_t>(window.size() / 2),
                             window.end());
            median.at(s, a) = window[window.size() / 2];
        }
    std::vector<float> distance(sino.size());
    for (std::size_t i = 0; i < distance.size(); ++i) distance[i] = std::abs(sino.data[i] - median.data[i]);
    const double sigma = 1.4826 * quantile(distance, 0.5); // robust standard deviation
    const double range = quantile(median.data, 0.99) - quantile(median.data, 0.01); // outliers left out
    const double threshold = std::max(kOutlierSigmas * sigma, kOutlierRange * range);
    Image out = sino;
    replaced = 0;
    for (std::size_t i = 0; i < distance.size(); ++i)
        if (distance[i] > threshold) {
            out.data[i] = median.data[i];
            ++replaced;
        }
    return out;
}

/// Half the views over the same half turn: of the first `period` floor(n /
/// period) views, those whose index modulo `period` lies in [first, first +
/// period / 2) - period 2: the even or the odd views; period 4: pairs of
/// neighbours. The views beyond a whole number of periods are left out, so
/// that both halves meet their mirrored copy with the same gap: a gap unlike
/// the others moves the minimum, and by as much in both halves only when it
/// is the same.
Image halfOfTheViews(const Image& sino, int period, int first) {
    const int used = sino.height / period * period;
    Image out(sino.width, used / 2);
    int r = 0;
    for (int view = 0; view < used; ++view)
        if (view % period >= first && view % period < first + period / 2)
            std::copy_n(&sino.data[static_cast<std::size_t>(view) * sino.width], sino.width,
                        &out.data[static_cast<std::size_t>(r++) * sino.width]);
    return out;
}

/// RMS distance between the axes found on halves of the views (around
/// `axis`, +-kSplitRadius), over two splits: even / odd views, and alternate
/// pairs of neighbours. The halves' views are twice as far apart, so the
/// same angular smoothing is half as many of them. A half whose minimum lies
/// at the edge of its range counts kSplitRadius at least.
double splitDistance(const Image& fine, double axis, double maxRadius, double angularSigma) {
    double squares = 0.0;
    for (const int period : {2, 4}) {
        const Curve a = fineScan(halfOfTheViews(fine, period, 0), axis, kSplitRadius, kFineStep, maxRadius,
                                 angularSigma / 2);
        const Curve b = fineScan(halfOfTheViews(fine, period, period / 2), axis, kSplitRadius, kFineStep, maxRadius,
                                 angularSigma / 2);
        const bool atEdge =
            a.best() == 0 || a.best() + 1 == a.axes.size() || b.best() == 0 || b.best() + 1 == b.axes.size();
        const double d = std::abs(a.bestAxis() - b.bestAxis());
        squares += atEdge ? std::max(d * d, kSplitRadius * kSplitRadius) : d * d;
    }
    return std::sqrt(squares / 2.0);
}

/// Uniqueness of the curve's minimum: (second - best) / (median - best),
/// `second` the lowest local minimum outside the best one's dip (the run
/// of candidates below halfway to the median, widened by 2 on each side).
/// The ends of the range are not counted: the filled-in edges make the
/// metric fall towards them on real scans (Diamond I13).
double uniqueness(const Curve& curve) {
    const std::vector<double>& m = curve.metric;
    const std::size_t best = curve.best(), n = m.size();
    std::vector<double> sorted = m;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n / 2), sorted.end());
    const double median = sorted[n / 2], depth = median - m[best];
    if (depth <= 0.0) return 0.0; // flat: every candidate alike
    const double halfway = m[best] + 0.5 * depth;
    std::size_t lo = best, hi = best;
    while (lo > 0 && m[lo - 1] < halfway) --lo;
    while (hi + 1 < n && m[hi + 1] < halfway) ++hi;
    double second = median;
    for (std::size_t i = 1; i + 1 < n; ++i)
        if ((i + 2 < lo || i > hi + 2) && m[i] <= m[i - 1] && m[i] <= m[i + 1]) second = std::min(second, m[i]);
    return std::clamp((second - m[best]) / depth, 0.0, 1.0);
}

/// `v` with two decimals.
std::string fixed2(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", v);
    return text;
}

} // namespace

bool coversHalfTurn(const std::vector<double>& angles) {
    try {
        const HalfTurnViews views = halfTurnViews(angles);
        return views.covered >= kPi - 0.5 * views.step;
    } catch (const InvalidArgument&) {
        return false;
    }
}

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

    AxisEstimate result;
    const Image sino = withoutOutliers(halfTurn(sinogram, angles), result.outliers);
    const int cols = sino.width;
    const double centre = (cols - 1) / 2.0;
    // Candidates must leave an overlap between the halves.
    const double maxRadius = centre - kSplitRadius - 2.0;
    double radius = searchRadius < 0.0 ? cols / 4.0 : searchRadius;
    radius = std::clamp(radius, 1.0, std::max(maxRadius, 1.0));

    // Coarse: 1 px steps on the sinogram smoothed against noise (binned
    // first when large), then, when binned, 1 px steps at full resolution.
    int factor = 1;
    while (static_cast<std::size_t>(sino.width / factor) * (sino.height / factor) > kCoarsePixels &&
           sino.height / (2 * factor) >= kMinSize)
        factor *= 2;
    const Image coarse = smooth(factor > 1 ? bin(sino, factor) : sino, kSmoothAngles, kSmoothBins);
    const double coarseCentre = (coarse.width - 1) / 2.0;
    const int steps = static_cast<int>(radius / factor);
    std::vector<double> candidates;
    for (int j = -steps; j <= steps; ++j) candidates.push_back(coarseCentre + j);
    const Curve coarseCurve = integerScan(coarse, candidates);
    double best = factor * coarseCurve.bestAxis() + (factor - 1) / 2.0; // binned column -> detector column
    if (factor > 1) {
        candidates.clear();
        for (int j = -factor; j <= factor; ++j)
            if (std::abs(best + j - centre) <= maxRadius) candidates.push_back(best + j);
        best = integerScan(smooth(sino, kSmoothAngles, kSmoothBins), candidates).bestAxis();
    }

    // Sub-pixel, on all views and on two splits of the views into halves;
    // when the halves disagree by more than kSmoothAbove, again with the
    // metric smoothed along the angles, kept if it is twice as reproducible. The
    // smoothing's shift of the answer counts as a disagreement too: it can
    // move all halves alike (on a 91-view Diamond I13 row by 1 px, the halves
    // within 0.2 px of each other).
    const Image fine = smooth(sino, 0.0, kSmoothBins);
    result.axis = fineScan(fine, best, kFineRadius, kFineStep, maxRadius, 0.0).bestAxis();
    result.splitDistance = splitDistance(fine, result.axis, maxRadius, 0.0);
    if (result.splitDistance > kSmoothAbove) {
        const double axis = fineScan(fine, best, kFineRadius, kFineStep, maxRadius, kSmoothAngles).bestAxis();
        const double split = splitDistance(fine, axis, maxRadius, kSmoothAngles);
        const double distance = std::hypot(split, axis - result.axis);
        if (2.0 * distance < result.splitDistance) {
            result.axis = axis;
            result.splitDistance = distance;
        }
    }

    result.uniqueness = uniqueness(coarseCurve);
    const double unique = std::clamp((result.uniqueness - kAmbiguous) / (kUnique - kAmbiguous), 0.0, 1.0);
    const double reproducible = std::exp(-result.splitDistance * result.splitDistance);
    const bool atEdge = coarseCurve.best() == 0 || coarseCurve.best() + 1 == coarseCurve.axes.size();
    result.confidence = atEdge ? 0.0 : std::min(unique, reproducible);
    if (atEdge)
        result.doubt = "the best axis lies at the edge of the search range (detector centre +-" + fixed2(radius) +
                       " px): the true one may be outside";
    else if (result.confidence < kAxisReliable)
        result.doubt = reproducible < unique
                           ? "halves of the views give axes " + fixed2(result.splitDistance) + " px apart"
                           : "another axis looks almost as good (uniqueness " + fixed2(result.uniqueness) + ")";
    result.method = "Vo et al. 2014: Fourier double-wedge metric of the 0-360 degree sinogram mirrored about the "
                    "candidate axis; coarse 1 px, then 1/8 px by Fourier shift";
    return result;
}

} // namespace tomo
