// gridrec's parameters, sizes and tables (the method: tomo/gridrec.h).
#include "tomo/gridrec.h"
#include "tomo/tuning_text.h"

#include "tomo/error.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <cstdio>
#include <numeric>

namespace tomo::gridrec {

namespace {

constexpr double kPi = std::numbers::pi;

/// Extra row length beyond what the axis needs, so that small axis moves
/// (the live preview's) keep the kept spectra.
int rowMargin(int bins) { return 4 + bins / 32; }

/// Rows longer than this many times the detector plus the slice's diagonal
/// mean an axis far off the detector: refused rather than allocated.
constexpr double kMaxRowFactor = 8.0;

bool is7Smooth(long long n) {
    for (int p : {2, 3, 5, 7})
        while (n % p == 0) n /= p;
    return n == 1;
}

/// The smallest 7-smooth multiple of `multiple` that is >= n (FFT-friendly).
int smoothAtLeast(long long n, int multiple) {
    long long m = std::max<long long>(n, multiple);
    m = (m + multiple - 1) / multiple * multiple;
    while (!is7Smooth(m)) m += multiple;
    return static_cast<int>(m);
}

/// I0, the modified Bessel function of the first kind (power series; exact
/// to double rounding for the arguments of these kernels, below ~50).
double besselI0(double x) {
    const double q = 0.25 * x * x;
    double term = 1.0, sum = 1.0;
    for (int k = 1; k < 500 && term > 1e-17 * sum; ++k) {
        term *= q / (static_cast<double>(k) * k);
        sum += term;
    }
    return sum;
}

/// R: the farthest pixel centre of the slice grid from the rotation axis.
double gridRadius(const ReconGeometry& g) {
    return std::hypot((g.sliceWidth - 1) / 2.0, (g.sliceHeight - 1) / 2.0);
}

/// The row length (in double: it may be huge) that no pixel of the grid
/// wraps round in: see tomo/gridrec.h.
double rowLengthNeededFor(const Geometry& g, double radius) {
    double needed = g.bins + 2.0;
    for (int p = 0; p < g.projections(); ++p) {
        const double a = g.axisAt(p);
        needed = std::max({needed, a + radius + 1.0 + 2.0, g.bins - a + radius + 2.0});
    }
    return std::ceil(needed);
}

int chooseRowLength(const Geometry& g, double radius, int minimum) {
    const double needed = rowLengthNeededFor(g, radius);
    const double limit = kMaxRowFactor * (g.bins + 2.0 * radius) + 64.0;
    if (needed > limit)
        throw InvalidArgument("strategy 'gridrec': the rotation axis lies too far off the detector (its rows would "
                              "need " + std::to_string(static_cast<long long>(std::min(needed, 1e18))) +
                              " bins; at most " + std::to_string(static_cast<long long>(limit)) + ")");
    return smoothAtLeast(std::max<long long>(minimum, static_cast<long long>(needed) + rowMargin(g.bins)), 2);
}

} // namespace

Parameters parseParameters(std::string_view strategy, std::string_view tuning) {
    const std::string who = "strategy '" + std::string(strategy) + "'";
    Parameters p;
    for (const TuningItem& item : tuningItems(tuning)) {
        const std::string_view key = item.key;
        if (key == "kernel")
            p.kernelWidth = static_cast<int>(tuningNumber(item, kMinKernelWidth, kMaxKernelWidth, true, who));
        else if (key == "oversampling")
            p.oversampling = tuningNumber(item, kMinOversampling, kMaxOversampling, false, who);
        else if (key == "band")
            p.band = tuningNumber(item, kMinBand, kMaxBand, false, who);
        else
            throw InvalidArgument(who + ": unknown tuning '" + std::string(item.text) + "' (expected kernel=" +
                                  std::to_string(kMinKernelWidth) + ".." + std::to_string(kMaxKernelWidth) +
                                  ", oversampling=1.25..3, band=1..2, comma-separated)");
    }
    return p;
}

Parameters checkOptions(std::string_view strategy, const ReconOptions& options) {
    const std::string who = "strategy '" + std::string(strategy) + "'";
    if (options.interpolation != Interpolation::Linear)
        throw InvalidArgument(who + " reproduces linear interpolation (in frequency): use interpolation linear");
    if (options.precision != Precision::Float32)
        throw InvalidArgument(who + " does not support precision " + std::string(precisionName(options.precision)) +
                              " (supported: float32)");
    if (options.slicesPerPass != 1 && options.slicesPerPass != 2 && options.slicesPerPass != 4)
        throw InvalidArgument(who + " does not support slicesPerPass " + std::to_string(options.slicesPerPass) +
                              " (supported: 1, 2, 4)");
    return parseParameters(strategy, options.tuning);
}

std::string parametersText(const Parameters& p) {
    char text[96];
    std::snprintf(text, sizeof text, "kernel=%d,oversampling=%g,band=%g", p.kernelWidth, p.oversampling, p.band);
    return text;
}

std::vector<std::string> tuningCandidates() {
    // The default, a smaller grid (less FFT and fewer grid points, 1e-3
    // gridding error), a narrower kernel (fewer taps, 4e-3).
    const Parameters defaults;
    return {parametersText(defaults), parametersText({4, 1.5, defaults.band}), parametersText({3, 2.0, defaults.band})};
}

int rowLengthFor(const ReconGeometry& geometry) {
    return chooseRowLength(geometry.geometry, gridRadius(geometry), 0);
}

Setup::Setup(const ReconGeometry& geometry, const Parameters& p, int minRowLength) : parameters(p) {
    geometry.validate();
    const Geometry& g = geometry.geometry;
    bins = g.bins;
    projections = g.projections();
    width = geometry.sliceWidth;
    height = geometry.sliceHeight;
    shiftX = width / 2;
    shiftY = height / 2;
    m_halfX = shiftX - (width - 1) / 2.0;
    m_halfY = shiftY - (height - 1) / 2.0;
    m_radius = gridRadius(geometry);
    rowLength = chooseRowLength(g, m_radius, minRowLength);

    const int size = std::max(width, height);
    gridSize = smoothAtLeast(static_cast<long long>(std::ceil(p.oversampling * size)), 8);
    const double sigma = static_cast<double>(gridSize) / size;
    const int w = p.kernelWidth;
    halfWidth = 0.5f * static_cast<float>(w);
    // Beatty et al. 2005, eq. 5: the Kaiser-Bessel shape of least aliasing
    // for this width and oversampling.
    beta = kPi * std::sqrt(std::max(0.0, (w / sigma) * (w / sigma) * (sigma - 0.5) * (sigma - 0.5) - 0.8));
    const double i0Beta = besselI0(beta);

    // The kernel, shifted by its edge value so that it falls to 0 there:
    // phi(t) = (I0(beta sqrt(1 - (2t/W)^2)) - 1) / (I0(beta) - 1), |t| < W/2.
    auto kernel = [&](double t) {
        const double u = 2.0 * t / w;
        return u * u < 1.0 ? (besselI0(beta * std::sqrt(1.0 - u * u)) - 1.0) / (i0Beta - 1.0) : 0.0;
    };
    tableLast = static_cast<int>(std::ceil(halfWidth * kTableScale)) + 1;
    std::vector<double> values(static_cast<std::size_t>(tableLast) + 2, 0.0);
    for (int i = 0; i <= tableLast; ++i) values[i] = kernel(static_cast<double>(i) / kTableScale);
    table.resize(2 * (static_cast<std::size_t>(tableLast) + 1));
    for (int i = 0; i <= tableLast; ++i) {
        table[2 * i] = static_cast<float>(values[i]);
        table[2 * i + 1] = static_cast<float>(values[i + 1] - values[i]);
    }
    // Its Fourier transform, integral phi(t) exp(2 pi i xi t) dt: the
    // Kaiser-Bessel part W sinh(z)/z, z = sqrt(beta^2 - (pi W xi)^2) (sin for
    // imaginary z), less the shift's box W sinc(W xi).
    auto transform = [&](double xi) {
        const double a = kPi * w * xi;
        const double z2 = beta * beta - a * a;
        const double z = std::sqrt(std::abs(z2));
        const double kb = z < 1e-9 ? 1.0 : (z2 > 0.0 ? std::sinh(z) : std::sin(z)) / z;
        const double box = a == 0.0 ? 1.0 : std::sin(a) / a;
        return w * (kb - box) / (i0Beta - 1.0);
    };
    deapodizeX.resize(static_cast<std::size_t>(width));
    for (int ix = 0; ix < width; ++ix)
        deapodizeX[ix] = static_cast<float>(1.0 / transform(static_cast<double>(ix - shiftX) / gridSize));
    deapodizeY.resize(static_cast<std::size_t>(height));
    for (int iy = 0; iy < height; ++iy)
        deapodizeY[iy] = static_cast<float>(1.0 / transform(static_cast<double>(iy - shiftY) / gridSize));

    m_lastSample = static_cast<int>(std::ceil(p.band * rowLength)) - 1;
    band.resize(2 * static_cast<std::size_t>(lastSample()) + 1);
    for (int k = -lastSample(); k <= lastSample(); ++k) {
        const double x = kPi * k / rowLength;
        const double sinc = k == 0 ? 1.0 : std::sin(x) / x;
        band[k + lastSample()] = static_cast<float>(sinc * sinc / rowLength);
    }

    // Canonical order: angle mod pi ascending; a view in the second half
    // turn is its line reversed.
    m_cos.resize(projections);
    m_sin.resize(projections);
    std::vector<double> folded(projections);
    std::vector<unsigned char> odd(projections);
    for (int p = 0; p < projections; ++p) {
        const double a = g.angles[p];
        m_cos[p] = std::cos(a);
        m_sin[p] = std::sin(a);
        double turns = std::floor(a / kPi);
        double f = a - turns * kPi;
        if (f >= kPi) f -= kPi, turns += 1.0;
        if (f < 0.0) f += kPi, turns -= 1.0;
        folded[p] = f;
        odd[p] = std::fmod(std::abs(turns), 2.0) != 0.0;
    }
    canonical.resize(projections);
    std::iota(canonical.begin(), canonical.end(), 0);
    std::stable_sort(canonical.begin(), canonical.end(), [&](int a, int b) { return folded[a] < folded[b]; });
    const double r = static_cast<double>(gridSize) / rowLength; // grid cells per k
    reversed.resize(projections);
    dirX.resize(projections);
    dirY.resize(projections);
    invX.resize(projections);
    invY.resize(projections);
    const int angleBins = std::max(64, 4 * projections);
    binStart.assign(static_cast<std::size_t>(angleBins) + 1, projections);
    for (int i = 0, b = 0; i < projections; ++i) {
        const int p = canonical[i];
        reversed[i] = odd[p];
        dirX[i] = r * std::cos(folded[p]);
        dirY[i] = -r * std::sin(folded[p]);
        invX[i] = std::abs(dirX[i]) < kParallel ? 0.0f : static_cast<float>(1.0 / dirX[i]);
        invY[i] = std::abs(dirY[i]) < kParallel ? 0.0f : static_cast<float>(1.0 / dirY[i]);
        for (; b <= angleBins && b * kPi / angleBins <= folded[p]; ++b) binStart[b] = i;
    }
    binStart[angleBins] = projections;
}

int Setup::rowLengthNeeded(const Geometry& g) const {
    return static_cast<int>(std::min(rowLengthNeededFor(g, m_radius), 2e9));
}

std::vector<double> Setup::phaseShifts(const Geometry& g) const {
    std::vector<double> shifts(static_cast<std::size_t>(projections));
    for (int i = 0; i < projections; ++i) {
        const int p = canonical[i];
        const double t = g.axisAt(p) + m_halfX * m_cos[p] - m_halfY * m_sin[p];
        shifts[i] = reversed[i] ? -t : t;
    }
    return shifts;
}

GatherView Setup::gatherView(const float* samples) const {
    GatherView v;
    v.gridSize = gridSize;
    v.copies = static_cast<int>(std::ceil(parameters.band));
    v.radius = static_cast<double>(lastSample()) * gridSize / rowLength;
    v.lastSample = lastSample();
    v.sampleStride = sampleStride();
    v.projections = projections;
    v.halfWidth = halfWidth;
    v.table = table.data();
    v.tableLast = tableLast;
    v.dirX = dirX.data();
    v.dirY = dirY.data();
    v.invX = invX.data();
    v.invY = invY.data();
    v.binStart = binStart.data();
    v.bins = static_cast<int>(binStart.size()) - 1;
    v.samples = samples;
    return v;
}

std::size_t Setup::spectrumBytes() const {
    return static_cast<std::size_t>(projections) * static_cast<std::size_t>(rowLength) * 8;
}

std::size_t Setup::samplesBytes() const {
    return static_cast<std::size_t>(projections) * static_cast<std::size_t>(sampleStride()) * 8;
}

std::size_t Setup::gridBytes() const {
    return static_cast<std::size_t>(gridSize) * static_cast<std::size_t>(gridSize) * 8;
}

} // namespace tomo::gridrec
