// Open-beam columns of intensities without flat fields (tomo/corrections.h,
// findBackgroundColumns): without them the log of raw counts carries
// -ln(open beam) into every line integral.
#include "tomo/corrections.h"

#include "corrections/correction_util.h"
#include "tomo/error.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tomo {

namespace {

constexpr int kMedianHalf = 2;    ///< B0: running median of 5 columns
constexpr double kSigmas = 6.0;   ///< candidates and open columns: within 6 noise sigmas of the open beam
constexpr double kTolerance = 0.02; ///< ... and 2 % at least (a weaker dip is no offset worth the name)
constexpr int kPenumbra = 2;      ///< columns left out at the inner end of a run
constexpr int kLeast = 4;         ///< fewer open columns are no usable level

float median(std::vector<float> v) {
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
}

/// The open columns of one sinogram (1 = open), and its B0 level's mean.
std::vector<std::uint8_t> openColumns(const Image& s, double& level) {
    const int P = s.height, N = s.width;
    std::vector<double> b0(static_cast<std::size_t>(P));
    std::vector<float> window;
    for (int a = 0; a < P; ++a) {
        double top = 0.0;
        for (int c = 0; c < N; ++c) {
            window.clear();
            for (int j = -kMedianHalf; j <= kMedianHalf; ++j) window.push_back(s.at(detail::clampIndex(c + j, N), a));
            top = std::max(top, static_cast<double>(median(window)));
        }
        b0[a] = top;
    }
    double sum = 0.0;
    for (double b : b0) sum += b;
    level = sum / P;
    std::vector<std::uint8_t> open(static_cast<std::size_t>(N), 0);
    if (!(level > 0.0)) return open;

    auto q = [&](int c, int a, const std::vector<double>& beam) {
        return beam[a] > 0.0 ? s.at(c, a) / beam[a] : 0.0;
    };
    std::vector<float> steps;
    steps.reserve(static_cast<std::size_t>(P) * (N - 1));
    for (int a = 0; a < P; ++a)
        for (int c = 0; c + 1 < N; ++c) steps.push_back(static_cast<float>(std::abs(q(c + 1, a, b0) - q(c, a, b0))));
    const double noise = steps.empty() ? 0.0 : 1.4826 * median(steps) / std::sqrt(2.0);

    // Candidates, and each projection's open beam from them.
    std::vector<int> candidates;
    std::vector<float> column(static_cast<std::size_t>(P));
    for (int c = 0; c < N; ++c) {
        for (int a = 0; a < P; ++a) column[a] = static_cast<float>(q(c, a, b0));
        if (median(column) >= 1.0 - kSigmas * noise) candidates.push_back(c);
    }
    if (candidates.empty()) return open;
    std::vector<double> beam(static_cast<std::size_t>(P), 0.0);
    for (int a = 0; a < P; ++a) {
        for (int c : candidates) beam[a] += s.at(c, a);
        beam[a] /= static_cast<double>(candidates.size());
    }
    const double floor = 1.0 - std::max(kTolerance, kSigmas * noise / std::sqrt(3.0));
    for (int c = 0; c < N; ++c) {
        bool isOpen = true;
        for (int a = 0; a < P && isOpen; ++a) {
            const double mean = (q(c, detail::clampIndex(a - 1, P), beam) + q(c, a, beam) +
                                 q(c, detail::clampIndex(a + 1, P), beam)) / 3.0;
            isOpen = mean >= floor;
        }
        open[c] = isOpen;
    }
    return open;
}

} // namespace

BackgroundColumns findBackgroundColumns(const std::vector<Image>& intensities) {
    if (intensities.empty() || intensities.front().width < 1 || intensities.front().height < 1)
        throw InvalidArgument("open-beam columns: no sinogram to look at");
    const int N = intensities.front().width;
    std::vector<std::uint8_t> open(static_cast<std::size_t>(N), 1);
    BackgroundColumns found;
    for (const Image& s : intensities) {
        if (s.width != N)
            throw InvalidArgument("open-beam columns: sinograms of " + std::to_string(s.width) + " and " +
                                  std::to_string(N) + " columns");
        double level = 0.0;
        const std::vector<std::uint8_t> here = openColumns(s, level);
        for (int c = 0; c < N; ++c) open[c] = open[c] && here[c];
        found.openBeam += level / static_cast<double>(intensities.size());
    }
    int left = 0, right = 0;
    while (left < N && open[left]) ++left;
    while (right < N && open[N - 1 - right]) ++right;
    const int run = std::max(left, right) - kPenumbra;
    if (left == N || run < kLeast) return found; // nothing, or no object at all
    found.count = run;
    found.first = left >= right ? 0 : N - run;
    return found;
}

} // namespace tomo
