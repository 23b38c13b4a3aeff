// The ramp filter: padded lengths, the frequency response against Kak &
// Slaney's band-limited kernel, the windows, and FFT filtering against a
// direct spatial convolution.
#include "tomo/error.h"
#include "tomo/filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

namespace tomo {
namespace {

constexpr double kPi = std::numbers::pi;

/// Kak & Slaney eq. 61 (tau = 1): h(0) = 1/4, h(odd n) = -1 / (pi n)^2, else 0.
double kernel(int n) {
    if (n == 0) return 0.25;
    return n % 2 ? -1.0 / (kPi * kPi * double(n) * double(n)) : 0.0;
}

bool is7Smooth(int n) {
    for (int p : {2, 3, 5, 7})
        while (n % p == 0) n /= p;
    return n == 1;
}

/// The spatial kernel a response stands for: inverse DFT of the even
/// extension R(P - k) = R(k) (the response already holds the 1/P).
double spatialTap(const std::vector<float>& response, int padded, int n) {
    double sum = 0.0;
    for (int k = 0; k < padded; ++k) {
        const int kk = k <= padded / 2 ? k : padded - k;
        sum += response[kk] * std::cos(2.0 * kPi * k * n / padded);
    }
    return sum;
}

TEST(PaddedLength, IsTheSmallest7SmoothLengthOfAtLeastTwiceTheBins) {
    for (int bins = 1; bins <= 3000; ++bins) {
        const int p = paddedLength(bins);
        ASSERT_GE(p, 2 * bins);
        ASSERT_TRUE(is7Smooth(p)) << p;
        for (int q = 2 * bins; q < p; ++q) ASSERT_FALSE(is7Smooth(q)) << "bins " << bins << ": " << q << " < " << p;
    }
    EXPECT_EQ(paddedLength(256), 512);
    EXPECT_EQ(paddedLength(101), 210);
    EXPECT_EQ(paddedLength(640), 1280);
    EXPECT_THROW(paddedLength(0), InvalidArgument);
}

TEST(FilterResponse, IsTheTransformOfTheKakSlaneyKernel) {
    // Inverting the real, even response must give back h(n) for |n| < P/2:
    // the response is the exact DFT of the band-limited kernel (float
    // storage: 1e-7 relative per value, summed over P = 512 values -> 1e-6).
    for (int padded : {512, 210, 135}) { // even, even with odd half, odd
        const auto r = filterResponse(padded, FilterOptions{FilterWindow::RamLak, Padding::Zero});
        ASSERT_EQ(r.size(), static_cast<std::size_t>(padded / 2 + 1));
        for (int n : {0, 1, 2, 3, 4, 5, 17, padded / 2 - 1}) {
            EXPECT_NEAR(spatialTap(r, padded, n), kernel(n), 1e-6) << "P " << padded << " n " << n;
            EXPECT_NEAR(spatialTap(r, padded, padded - n), kernel(n), 1e-6) << "even kernel, P " << padded;
        }
    }
}

TEST(FilterResponse, DcAndNyquistFollowKakSlaney) {
    const int padded = 512;
    const auto r = filterResponse(padded, FilterOptions{FilterWindow::RamLak, Padding::Zero});
    // H(0) = sum of the taps = 1/4 - 2 sum_{odd m < P/2} 1/(pi m)^2 (+ the
    // single tap at P/2 when it is odd): small and positive, ~2/(pi^2 P),
    // where an unbounded ramp would be 0. H(1/2) = 1/4 + 2 sum 1/(pi m)^2,
    // just below the ideal ramp's 1/2.
    double dc = 0.25, nyquist = 0.25;
    for (int m = 1; m < padded / 2; m += 2) {
        dc += 2.0 * kernel(m);
        nyquist -= 2.0 * kernel(m);
    }
    // The response holds the 1/P of the inverse transform; 1e-6 relative is float storage.
    EXPECT_NEAR(r[0] * padded, dc, 1e-6 * dc);
    EXPECT_NEAR(dc, 2.0 / (kPi * kPi * padded), 0.01 * dc);
    EXPECT_NEAR(r[padded / 2] * padded, nyquist, 1e-6);
    EXPECT_NEAR(nyquist, 0.5 - 2.0 / (kPi * kPi * padded), 1e-4);
    // In between it is the ramp |f| (f in cycles per bin) to within the
    // band-limiting error, which is largest at low frequencies (~1 / P).
    for (int k : {64, 128, 192}) EXPECT_NEAR(r[k] * padded, double(k) / padded, 2.0 / padded) << k;
}

TEST(FilterResponse, WindowsCutHighFrequenciesInTheExpectedOrder) {
    const int padded = 1024;
    const int half = padded / 2;
    const FilterWindow order[] = {FilterWindow::RamLak, FilterWindow::SheppLogan, FilterWindow::Cosine,
                                  FilterWindow::Hamming, FilterWindow::Hann};
    const auto ramLak = filterResponse(padded, {FilterWindow::RamLak, Padding::Zero});
    double previousEnergy = INFINITY;
    for (FilterWindow w : order) {
        const auto r = filterResponse(padded, {w, Padding::Zero});
        // All windows are 1 at DC and never amplify.
        EXPECT_FLOAT_EQ(r[0], ramLak[0]) << filterWindowName(w);
        for (int k = 0; k <= half; ++k) ASSERT_LE(r[k], ramLak[k] * (1 + 1e-6)) << filterWindowName(w);
        // Energy in the upper half band (relative to the ramp): ram-lak 0.5,
        // shepp-logan ~0.39, cosine ~0.19, hamming ~0.12, hann ~0.09.
        double energy = 0.0;
        for (int k = half / 2; k <= half; ++k) energy += r[k] / ramLak[k];
        energy /= half;
        EXPECT_LT(energy, previousEnergy) << filterWindowName(w);
        previousEnergy = energy;
    }
    // Values at Nyquist relative to the ramp (window definitions of
    // scikit-image / TomoPy): sinc(1/2) = 2/pi, cos(pi/2) = 0, 0.08, 0.
    auto atNyquist = [&](FilterWindow w) { return filterResponse(padded, {w, Padding::Zero})[half] / ramLak[half]; };
    EXPECT_NEAR(atNyquist(FilterWindow::SheppLogan), 2.0 / kPi, 1e-6);
    EXPECT_NEAR(atNyquist(FilterWindow::Cosine), 0.0, 1e-6);
    EXPECT_NEAR(atNyquist(FilterWindow::Hamming), 0.08, 1e-6);
    EXPECT_NEAR(atNyquist(FilterWindow::Hann), 0.0, 1e-6);
}

TEST(SinogramFilter, ZeroPaddedFilteringEqualsTheDirectConvolution) {
    // Zero padding to >= 2 bins makes the FFT's circular convolution the
    // linear convolution with the kernel h for every pair of bins.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 2.0f);
    for (int bins : {64, 37, 1}) {
        const int rows = 3;
        std::vector<float> data(static_cast<std::size_t>(rows) * bins);
        for (float& v : data) v = dist(rng);
        const std::vector<float> input = data;
        SinogramFilter filter(bins, {FilterWindow::RamLak, Padding::Zero});
        EXPECT_EQ(filter.padded(), paddedLength(bins));
        filter.apply(data, rows);
        for (int r = 0; r < rows; ++r)
            for (int i = 0; i < bins; ++i) {
                double expected = 0.0;
                for (int j = 0; j < bins; ++j) expected += input[r * bins + j] * kernel(i - j);
                // Float FFTs: measured <= 1.4e-7 for rows up to 2048 bins of
                // values <= 2 (outputs ~0.6); 1e-6 is float rounding with margin.
                EXPECT_NEAR(data[r * bins + i], expected, 1e-6) << "bins " << bins << " row " << r << " bin " << i;
            }
    }
}

TEST(SinogramFilter, EdgePaddingKeepsAConstantRowFlat) {
    // With edge padding a constant row is constant on the whole padded
    // circle, so only the DC term survives: every output is c * H(0). Zero
    // padding instead sees a box, whose filtered edges overshoot.
    const int bins = 50;
    std::vector<float> row(bins, 3.0f);
    SinogramFilter edge(bins, {FilterWindow::RamLak, Padding::Edge});
    edge.apply(row, 1);
    const double dc = filterResponse(edge.padded(), {FilterWindow::RamLak, Padding::Edge})[0] * edge.padded();
    for (float v : row) EXPECT_NEAR(v, 3.0 * dc, 1e-5);

    std::vector<float> zeroRow(bins, 3.0f);
    SinogramFilter zero(bins, {FilterWindow::RamLak, Padding::Zero});
    zero.apply(zeroRow, 1);
    EXPECT_GT(zeroRow[0], 3.0 * dc + 0.1);
}

TEST(SinogramFilter, EdgePaddingRepeatsEachEndsOwnValue) {
    // A row whose ends differ (an object wider than the field, denser on the
    // left) with structure inside: edge padding puts row[0] in the left half
    // of the padding and row[n - 1] in the right half, and the FFT filters
    // that padded circle. The oracle is the same circle convolved directly
    // with the Kak-Slaney kernel in double (the tap at distance d is
    // h(min(d, P - d)): the circular kernel whose DFT is the response).
    for (int bins : {50, 37}) { // padded 100 (even split) and 75 (odd: one more on the right)
        std::vector<float> row(bins);
        for (int i = 0; i < bins; ++i)
            row[i] = static_cast<float>(2.0 - 1.5 * i / (bins - 1) + 0.3 * std::sin(0.7 * i));
        const std::vector<float> input = row;
        SinogramFilter filter(bins, {FilterWindow::RamLak, Padding::Edge});
        filter.apply(row, 1);

        const int padded = filter.padded(), left = (padded - bins) / 2;
        std::vector<double> circle(padded);
        for (int j = 0; j < padded; ++j)
            circle[j] = j < left ? input.front() : j < left + bins ? input[j - left] : input.back();
        double worst = 0.0;
        for (int i = 0; i < bins; ++i) {
            double expected = 0.0;
            for (int j = 0; j < padded; ++j) {
                const int d = ((left + i - j) % padded + padded) % padded;
                expected += circle[j] * kernel(std::min(d, padded - d));
            }
            worst = std::max(worst, std::abs(row[i] - expected));
        }
        // Float FFTs of values <= 2.3: measured 5.9e-8, float rounding; 1e-6
        // as for zero padding. A wrong value in either padding moves the
        // outputs near that end by ~1e-2.
        EXPECT_LT(worst, 1e-6) << "bins " << bins;
    }
}

TEST(SinogramFilter, RowWeightsAreAppliedCyclically) {
    const int bins = 16, rows = 4;
    std::vector<float> a(static_cast<std::size_t>(rows) * bins), b;
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(std::sin(0.3 * i));
    b = a;
    SinogramFilter filter(bins, {});
    filter.apply(a, rows);
    const std::vector<double> weights = {2.0, 0.5};
    filter.apply(b, rows, weights);
    for (int r = 0; r < rows; ++r)
        for (int i = 0; i < bins; ++i)
            EXPECT_FLOAT_EQ(b[r * bins + i], static_cast<float>(a[r * bins + i] * weights[r % 2]));
}

TEST(SinogramFilter, RejectsWrongSizes) {
    EXPECT_THROW(SinogramFilter(0, {}), InvalidArgument);
    SinogramFilter filter(8, {});
    std::vector<float> data(15);
    EXPECT_THROW(filter.apply(data, 2), InvalidArgument);
}

TEST(FilterNames, RoundTripAndUnknownNamesListTheValidOnes) {
    for (FilterWindow w : {FilterWindow::RamLak, FilterWindow::SheppLogan, FilterWindow::Cosine,
                           FilterWindow::Hamming, FilterWindow::Hann})
        EXPECT_EQ(parseFilterWindow(filterWindowName(w)), w);
    EXPECT_EQ(filterWindowName(FilterWindow::SheppLogan), "shepp-logan");
    try {
        parseFilterWindow("parzen");
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("hamming"), std::string::npos) << e.what();
    }
    EXPECT_EQ(parsePadding(paddingName(Padding::Zero)), Padding::Zero);
    EXPECT_EQ(parsePadding(paddingName(Padding::Edge)), Padding::Edge);
    EXPECT_THROW(parsePadding("mirror"), InvalidArgument);
}

} // namespace
} // namespace tomo
