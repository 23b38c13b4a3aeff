// 360° half acquisition (rotation axis near one detector edge): each view of
// the first 180° joined with its mirrored partner 180° later into one
// double-width sinogram, and the search for the axis (the overlap).
#include "tomo/corrections.h"

#include "corrections/correction_util.h"
#include "tomo/error.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

namespace tomo {

namespace {

constexpr double kPi = std::numbers::pi;
/// Views are those with angle < first + pi - kAngleTolerance (so the view
/// at exactly 180° is a partner, not a view).
constexpr double kAngleTolerance = 1e-6;
/// Partner weights this close to 0 or 1 (rounding of angle + pi) take the
/// nearer projection alone.
constexpr double kSnap = 1e-6;

/// Value of a line at a sub-pixel column, linear, the edge value beyond the ends.
float sampleLinear(const float* line, int n, double x) {
    if (x <= 0.0) return line[0];
    if (x >= n - 1) return line[n - 1];
    const int k = static_cast<int>(x);
    const float w = static_cast<float>(x - k);
    return (1.0f - w) * line[k] + w * line[k + 1];
}

/// The partner of each view, interpolated in angle, [view][column].
std::vector<float> partners(std::span<const float> sinogram, const HalfAcquisitionLayout& l) {
    const int n = l.inputColumns;
    std::vector<float> out(l.views.size() * static_cast<std::size_t>(n));
    for (std::size_t v = 0; v < l.views.size(); ++v) {
        const float* lo = sinogram.data() + static_cast<std::size_t>(l.partnerLower[v]) * n;
        const float* hi = sinogram.data() + static_cast<std::size_t>(l.partnerUpper[v]) * n;
        const float w = l.partnerWeight[v];
        float* dst = out.data() + v * n;
        for (int c = 0; c < n; ++c) dst[c] = (1.0f - w) * lo[c] + w * hi[c];
    }
    return out;
}

/// Separable Gaussian (sigma 2, radius 8 = 4 sigma, scipy's truncation) with
/// half-sample reflection at the edges.
std::vector<float> gaussianSmooth(const std::vector<float>& in, int height, int width) {
    constexpr double kSigma = 2.0;
    constexpr int kRadius = 8;
    std::vector<double> kernel(2 * kRadius + 1);
    double sum = 0.0;
    for (int i = -kRadius; i <= kRadius; ++i) sum += kernel[i + kRadius] = std::exp(-0.5 * i * i / (kSigma * kSigma));
    for (double& k : kernel) k /= sum;
    // One pass along lines of n values, `step` apart within a line and
    // `lineStep` from one line to the next.
    auto pass = [&](const std::vector<float>& src, int lines, int n, int step, int lineStep) {
        std::vector<float> dst(src.size());
        for (int l = 0; l < lines; ++l)
            for (int i = 0; i < n; ++i) {
                double s = 0.0;
                for (int k = -kRadius; k <= kRadius; ++k)
                    s += kernel[k + kRadius] * src[static_cast<std::size_t>(l) * lineStep +
                                                   static_cast<std::size_t>(detail::reflectIndex(i + k, n)) * step];
                dst[static_cast<std::size_t>(l) * lineStep + static_cast<std::size_t>(i) * step] =
                    static_cast<float>(s);
            }
        return dst;
    };
    return pass(pass(in, height, width, 1, width), width, height, width, 1);
}

/// 1 - Pearson correlation of two height x window blocks.
double correlationMetric(const float* a, const float* b, int height, int width, int strideA, int strideB) {
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            const double u = a[static_cast<std::size_t>(y) * strideA + x];
            const double v = b[static_cast<std::size_t>(y) * strideB + x];
            sa += u;
            sb += v;
            saa += u * u;
            sbb += v * v;
            sab += u * v;
        }
    const double n = static_cast<double>(height) * width;
    const double cov = sab - sa * sb / n, va = saa - sa * sa / n, vb = sbb - sb * sb / n;
    if (!(va > 0.0) || !(vb > 0.0)) return 1.0;
    return std::abs(1.0 - cov / std::sqrt(va * vb));
}

/// Curvature of the metric at its minimum and the minimum's sub-sample
/// position (algotom's calculate_curvature).
struct Minimum {
    double curvature = 0.0;
    double position = 0.0;
};

Minimum parabolicMinimum(const std::vector<double>& metric) {
    const int n = static_cast<int>(metric.size());
    const int best = static_cast<int>(std::min_element(metric.begin(), metric.end()) - metric.begin());
    Minimum m;
    m.position = best;
    if (n < 5) return m;
    const int c = std::clamp(best, 2, n - 3);
    // Quadratic coefficient of the least-squares parabola through 5 points.
    m.curvature =
        std::abs((2 * metric[c - 2] - metric[c - 1] - 2 * metric[c] - metric[c + 1] + 2 * metric[c + 2]) / 14.0);
    const double a = (metric[c - 1] + metric[c + 1] - 2 * metric[c]) / 2.0;
    const double b = (metric[c + 1] - metric[c - 1]) / 2.0;
    m.position = c;
    if (a != 0.0) {
        const double vertex = c - b / (2.0 * a);
        if (vertex >= c - 1 && vertex <= c + 1) m.position = vertex;
    }
    return m;
}

} // namespace

HalfAcquisitionLayout planHalfAcquisition(const std::vector<double>& angles, int columns, double axis) {
    const int n = static_cast<int>(angles.size());
    if (n < 4)
        throw InvalidArgument("360-degree half acquisition: " + std::to_string(n) +
                              " projections; expected at least 4");
    for (int p = 1; p < n; ++p)
        if (!(angles[p] > angles[p - 1]))
            throw InvalidArgument("360-degree half acquisition needs increasing angles; projection " +
                                  std::to_string(p) + " is at " + std::to_string(angles[p] * 180 / kPi) +
                                  " deg after " + std::to_string(angles[p - 1] * 180 / kPi));
    const double span = angles.back() - angles.front();
    const double step = span / (n - 1);
    if (span < 2 * kPi - 2.5 * step)
        throw InvalidArgument("360-degree half acquisition needs a 360-degree scan; the angles span " +
                              std::to_string(span * 180 / kPi) +
                              " deg (data without angles: --angles FILE or --angle-range 360)");
    if (!(axis >= 0.0 && axis <= columns - 1))
        throw InvalidArgument("360-degree half acquisition: the axis " + std::to_string(axis) +
                              " is outside the detector (columns 0.." + std::to_string(columns - 1) + ")");

    HalfAcquisitionLayout l;
    l.axis = axis;
    l.inputColumns = columns;
    const double R = std::max(axis, columns - 1 - axis);
    l.columns = 2 * static_cast<int>(std::floor(R)) + 1;
    l.outputAxis = std::floor(R);
    for (int p = 0; p < n && angles[p] < angles.front() + kPi - kAngleTolerance; ++p) {
        const double target = angles[p] + kPi;
        // The last projection at or before the target.
        const int q = static_cast<int>(std::upper_bound(angles.begin(), angles.end(), target) - angles.begin()) - 1;
        const int upper = q + 1 < n ? q + 1 : 0;
        const double upperAngle = q + 1 < n ? angles[q + 1] : angles.front() + 2 * kPi;
        double weight = std::clamp((target - angles[q]) / (upperAngle - angles[q]), 0.0, 1.0);
        int lower = q;
        if (weight > 1.0 - kSnap) lower = upper; // the partner is a projection: no blend
        if (weight < kSnap || weight > 1.0 - kSnap) weight = 0.0;
        l.views.push_back(p);
        l.partnerLower.push_back(lower);
        l.partnerUpper.push_back(weight > 0.0 ? upper : lower);
        l.partnerWeight.push_back(static_cast<float>(weight));
        l.angles.push_back(angles[p]);
    }
    return l;
}

void stitchHalfAcquisition(std::span<const float> sinogram, const HalfAcquisitionLayout& l, std::span<float> out) {
    const int n = l.inputColumns, W = l.columns;
    const std::size_t views = l.views.size();
    if (out.size() != views * W)
        throw InvalidArgument("half-acquisition stitching: output of " + std::to_string(out.size()) +
                              " values; expected " + std::to_string(views * W));
    int highest = 0; // the last projection the layout reads
    for (const auto* list : {&l.views, &l.partnerLower, &l.partnerUpper})
        for (int p : *list) highest = std::max(highest, p);
    if (sinogram.size() % n != 0 || sinogram.size() / n <= static_cast<std::size_t>(highest))
        throw InvalidArgument("half-acquisition stitching: the sinogram holds " + std::to_string(sinogram.size()) +
                              " values, not the 360-degree scan of " + std::to_string(n) +
                              " columns it was planned for");
    // Per output column: where the view and the partner are read, and the view's weight.
    const bool axisOnLeft = l.axis <= (n - 1) / 2.0;
    const double r = std::min(l.axis, n - 1 - l.axis);
    std::vector<double> viewWeight(W);
    for (int j = 0; j < W; ++j) {
        const double s = j - l.outputAxis;
        const double towardView = axisOnLeft ? s : -s; // the view covers towardView >= -r
        viewWeight[j] = r < 0.5 ? (towardView >= 0.0 ? 1.0 : 0.0) : std::clamp((towardView + r) / (2.0 * r), 0.0, 1.0);
    }
    const std::vector<float> partner = partners(sinogram, l);
    for (std::size_t v = 0; v < views; ++v) {
        const float* view = sinogram.data() + static_cast<std::size_t>(l.views[v]) * n;
        const float* mirror = partner.data() + v * n;
        float* dst = out.data() + v * W;
        for (int j = 0; j < W; ++j) {
            const double s = j - l.outputAxis;
            const double w = viewWeight[j];
            const float a = w > 0.0 ? sampleLinear(view, n, l.axis + s) : 0.0f;
            const float b = w < 1.0 ? sampleLinear(mirror, n, l.axis - s) : 0.0f;
            dst[j] = static_cast<float>(w * a + (1.0 - w) * b);
        }
    }
}

HalfAcquisitionAxis findHalfAcquisitionAxis(const Image& sinogram, const std::vector<double>& angles, int window) {
    const int n = sinogram.width;
    if (sinogram.height != static_cast<int>(angles.size()))
        throw InvalidArgument("half-acquisition axis: " + std::to_string(angles.size()) + " angles for a sinogram of " +
                              std::to_string(sinogram.height) + " projections");
    if (window < 6) throw InvalidArgument("half-acquisition axis: the window must be at least 6 columns");
    if (n < 16) throw InvalidArgument("half-acquisition axis: " + std::to_string(n) + " columns are too few to search");
    const HalfAcquisitionLayout l = planHalfAcquisition(angles, n, (n - 1) / 2.0);
    const int h = static_cast<int>(l.views.size());
    std::vector<float> views(static_cast<std::size_t>(h) * n), mirrored(views.size());
    const std::vector<float> partner = partners(sinogram.data, l);
    for (int v = 0; v < h; ++v)
        for (int c = 0; c < n; ++c) {
            views[static_cast<std::size_t>(v) * n + c] = sinogram.at(c, l.views[v]);
            mirrored[static_cast<std::size_t>(v) * n + c] = partner[static_cast<std::size_t>(v) * n + (n - 1 - c)];
        }
    views = gaussianSmooth(views, h, n);
    mirrored = gaussianSmooth(mirrored, h, n);

    // Candidate overlaps o (columns seen by both): with the axis on the
    // left, view columns [o - w, o) meet the mirrored partner's last w
    // columns [n - w, n); on the right, view columns [n - o, n - o + w) meet
    // its first w. w = min(window, o), so narrow overlaps can be found too.
    constexpr int kMinOverlap = 6;
    const int win = std::clamp(window, kMinOverlap, n / 2 - 1);
    struct Side {
        std::vector<double> metric; // index o - kMinOverlap
        Minimum minimum;
    } sides[2]; // 0: axis on the left, 1: on the right
    for (int side = 0; side < 2; ++side) {
        for (int o = kMinOverlap; o <= n; ++o) {
            const int w = std::min(win, o);
            const float* v = views.data() + (side == 0 ? o - w : n - o);
            const float* m = mirrored.data() + (side == 0 ? n - w : 0);
            sides[side].metric.push_back(correlationMetric(v, m, h, w, n, n));
        }
        std::vector<double> normalised = sides[side].metric;
        const double lowest = *std::min_element(normalised.begin(), normalised.end());
        if (lowest != 0.0)
            for (double& m : normalised) m /= lowest;
        sides[side].minimum = parabolicMinimum(normalised);
    }
    const int side = sides[0].minimum.curvature >= sides[1].minimum.curvature ? 0 : 1;
    HalfAcquisitionAxis result;
    result.axisOnLeft = side == 0;
    result.overlap = sides[side].minimum.position + kMinOverlap;
    result.axis = side == 0 ? result.overlap / 2.0 - 0.5 : n - result.overlap / 2.0 - 0.5;
    std::vector<double> sorted = sides[side].metric;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const double median = sorted[sorted.size() / 2];
    const double best = *std::min_element(sides[side].metric.begin(), sides[side].metric.end());
    result.confidence = median > 0.0 ? std::clamp(1.0 - best / median, 0.0, 1.0) : 0.0;
    return result;
}

} // namespace tomo
