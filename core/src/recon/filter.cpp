#include "tomo/filter.h"

#include "tomo/error.h"

#include "recon/fftw_util.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <memory>
#include <mutex>
#include <numbers>
#include <string>

namespace tomo {

namespace {

struct WindowName {
    FilterWindow window;
    std::string_view name;
};
constexpr WindowName kWindows[] = {
    {FilterWindow::RamLak, "ram-lak"},   {FilterWindow::SheppLogan, "shepp-logan"},
    {FilterWindow::Cosine, "cosine"},    {FilterWindow::Hamming, "hamming"},
    {FilterWindow::Hann, "hann"},
};

bool is7Smooth(int n) {
    for (int p : {2, 3, 5, 7})
        while (n % p == 0) n /= p;
    return n == 1;
}

/// Window value at nu = frequency / Nyquist in [0, 1] (the definitions of
/// scikit-image's iradon and TomoPy).
double window(FilterWindow w, double nu) {
    constexpr double pi = std::numbers::pi;
    switch (w) {
    case FilterWindow::RamLak: return 1.0;
    case FilterWindow::SheppLogan: {
        const double x = 0.5 * pi * nu;
        return x == 0.0 ? 1.0 : std::sin(x) / x;
    }
    case FilterWindow::Cosine: return std::cos(0.5 * pi * nu);
    case FilterWindow::Hamming: return 0.54 + 0.46 * std::cos(pi * nu);
    case FilterWindow::Hann: return 0.5 + 0.5 * std::cos(pi * nu);
    }
    return 1.0;
}

} // namespace

std::string_view filterWindowName(FilterWindow w) {
    for (const auto& e : kWindows)
        if (e.window == w) return e.name;
    return "ram-lak";
}

FilterWindow parseFilterWindow(std::string_view name) {
    for (const auto& e : kWindows)
        if (e.name == name) return e.window;
    throw InvalidArgument("filter window '" + std::string(name) +
                          "' is not known (expected ram-lak, shepp-logan, cosine, hamming or hann)");
}

std::string_view paddingName(Padding p) { return p == Padding::Zero ? "zero" : "edge"; }

Padding parsePadding(std::string_view name) {
    if (name == "zero") return Padding::Zero;
    if (name == "edge") return Padding::Edge;
    throw InvalidArgument("padding '" + std::string(name) + "' is not known (expected zero or edge)");
}

int paddedLength(int bins) {
    if (bins < 1) throw InvalidArgument("filter: bins is " + std::to_string(bins) + " (expected >= 1)");
    int n = 2 * bins;
    while (!is7Smooth(n)) ++n;
    return n;
}

namespace {

std::vector<float> computeFilterResponse(int padded, const FilterOptions& options) {
    constexpr double pi = std::numbers::pi;
    const int half = padded / 2;
    // The kernel is real and even, so its DFT is the cosine sum
    //   H(k) = h(0) + 2 sum_{m odd, m < padded/2} h(m) cos(2 pi k m / padded)
    //          [+ h(padded/2) (-1)^k when padded is even: that tap appears once].
    // cos values come from one table indexed by (k m) mod padded, in double.
    std::vector<double> cosTable(static_cast<std::size_t>(padded));
    for (int j = 0; j < padded; ++j) cosTable[j] = std::cos(2.0 * pi * j / padded);
    auto h = [](int m) { return m % 2 ? -1.0 / (pi * pi * double(m) * double(m)) : 0.0; };
    const bool even = padded % 2 == 0;
    const int lastPair = even ? half - 1 : half; // m with both +m and -m taps distinct

    std::vector<float> response(static_cast<std::size_t>(half) + 1);
    for (int k = 0; k <= half; ++k) {
        double sum = 0.25;
        for (int m = 1; m <= lastPair; m += 2)
            sum += 2.0 * h(m) * cosTable[static_cast<std::size_t>((static_cast<long long>(k) * m) % padded)];
        if (even) sum += h(half) * (k % 2 ? -1.0 : 1.0);
        const double nu = static_cast<double>(k) / (0.5 * padded);
        response[k] = static_cast<float>(sum * window(options.window, std::min(nu, 1.0)) / padded);
    }
    return response;
}

} // namespace

std::vector<float> filterResponse(int padded, const FilterOptions& options) {
    if (padded < 2) throw InvalidArgument("filter: padded length is " + std::to_string(padded) + " (expected >= 2)");
    // The sum above costs padded^2 / 4 steps (11 ms for 2048 bins, measured
    // on the 2-core build machine), and a live preview makes a plan, so a
    // response, for every slice of every update: the few in use are kept.
    static std::mutex mutex;
    static std::map<std::pair<int, FilterWindow>, std::vector<float>> kept;
    constexpr std::size_t kKept = 16;
    const std::pair key(padded, options.window);
    const std::lock_guard lock(mutex);
    if (const auto it = kept.find(key); it != kept.end()) return it->second;
    if (kept.size() >= kKept) kept.clear();
    return kept.emplace(key, computeFilterResponse(padded, options)).first->second;
}

struct SinogramFilter::Impl {
    FilterOptions options;
    std::vector<float> response;
    fftw::Buffer<float> row;
    fftw::Buffer<std::complex<float>> spectrum;
    fftw::Plan forward;
    fftw::Plan inverse;
};

SinogramFilter::SinogramFilter(int bins, const FilterOptions& options)
    : m_bins(bins), m_padded(paddedLength(bins)) {
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    impl->response = filterResponse(m_padded, options);
    impl->row = fftw::allocate<float>(static_cast<std::size_t>(m_padded));
    impl->spectrum = fftw::allocate<std::complex<float>>(static_cast<std::size_t>(m_padded / 2 + 1));
    auto* spec = reinterpret_cast<fftwf_complex*>(impl->spectrum.get());
    {
        std::lock_guard lock(fftw::plannerMutex());
        impl->forward.reset(fftwf_plan_dft_r2c_1d(m_padded, impl->row.get(), spec, FFTW_ESTIMATE));
        impl->inverse.reset(fftwf_plan_dft_c2r_1d(m_padded, spec, impl->row.get(), FFTW_ESTIMATE));
    }
    if (!impl->forward || !impl->inverse)
        throw Error("filter: FFTW could not plan a transform of length " + std::to_string(m_padded));
    m_impl = impl.release();
}

SinogramFilter::~SinogramFilter() { delete m_impl; }

void SinogramFilter::apply(std::span<float> rows, int rowCount, std::span<const double> rowWeights) {
    if (rowCount < 0 || rows.size() != static_cast<std::size_t>(rowCount) * static_cast<std::size_t>(m_bins))
        throw InvalidArgument("filter: " + std::to_string(rows.size()) + " values for " + std::to_string(rowCount) +
                              " rows of " + std::to_string(m_bins) + " bins (expected rows * bins)");
    Impl& im = *m_impl;
    float* buf = im.row.get();
    std::complex<float>* spec = im.spectrum.get();
    const int n = m_bins;
    // The row sits in the middle of the padded buffer; the circular
    // convolution then never wraps one end of the row onto the other
    // (padded >= 2 * bins covers every distance between two bins).
    const int left = (m_padded - n) / 2;
    for (int r = 0; r < rowCount; ++r) {
        float* row = rows.data() + static_cast<std::size_t>(r) * n;
        const float lo = im.options.padding == Padding::Edge ? row[0] : 0.0f;
        const float hi = im.options.padding == Padding::Edge ? row[n - 1] : 0.0f;
        std::fill(buf, buf + left, lo);
        std::copy(row, row + n, buf + left);
        std::fill(buf + left + n, buf + m_padded, hi);

        fftwf_execute_dft_r2c(im.forward.get(), buf, reinterpret_cast<fftwf_complex*>(spec));
        for (std::size_t k = 0; k < im.response.size(); ++k) spec[k] *= im.response[k];
        fftwf_execute_dft_c2r(im.inverse.get(), reinterpret_cast<fftwf_complex*>(spec), buf);

        const float weight = rowWeights.empty() ? 1.0f : static_cast<float>(rowWeights[r % rowWeights.size()]);
        for (int i = 0; i < n; ++i) row[i] = buf[left + i] * weight;
    }
}

} // namespace tomo
