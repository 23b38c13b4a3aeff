// Geometry validation and the angular weights of the back-projection sum.
#include "tomo/error.h"
#include "tomo/geometry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <numeric>
#include <string>
#include <vector>

namespace tomo {
namespace {

constexpr double kPi = std::numbers::pi;
// Weights are a few additions/subtractions of angles <= 2 pi in double: any
// error beyond a few ulp of pi (1e-15) is a wrong formula, not rounding.
constexpr double kTol = 1e-12;

template <typename F>
std::string invalidArgumentMessage(F&& f) {
    try {
        f();
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    ADD_FAILURE() << "no InvalidArgument thrown";
    return {};
}

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

Geometry simpleGeometry() {
    Geometry g;
    g.angles = {0.0, 0.5, 1.0};
    g.bins = 8;
    g.axis = g.detectorCentre();
    return g;
}

TEST(Geometry, ValidGeometryPasses) {
    EXPECT_NO_THROW(simpleGeometry().validate());
    EXPECT_DOUBLE_EQ(simpleGeometry().detectorCentre(), 3.5);
}

TEST(Geometry, ErrorsNameTheField) {
    auto g = simpleGeometry();
    g.angles.clear();
    EXPECT_NE(invalidArgumentMessage([&] { g.validate(); }).find("angles"), std::string::npos);

    g = simpleGeometry();
    g.bins = 0;
    EXPECT_NE(invalidArgumentMessage([&] { g.validate(); }).find("bins"), std::string::npos);

    g = simpleGeometry();
    g.angles[1] = std::nan("");
    EXPECT_NE(invalidArgumentMessage([&] { g.validate(); }).find("angles[1]"), std::string::npos);

    g = simpleGeometry();
    g.axis = INFINITY;
    EXPECT_NE(invalidArgumentMessage([&] { g.validate(); }).find("axis"), std::string::npos);

    g = simpleGeometry();
    g.axisOffsets = {1.0, 2.0};
    EXPECT_NE(invalidArgumentMessage([&] { g.validate(); }).find("axisOffsets"), std::string::npos);
}

TEST(Geometry, AxisAtAddsTheOffset) {
    auto g = simpleGeometry();
    EXPECT_DOUBLE_EQ(g.axisAt(2), 3.5);
    g.axisOffsets = {0.0, 0.25, -1.0};
    EXPECT_DOUBLE_EQ(g.axisAt(1), 3.75);
    EXPECT_DOUBLE_EQ(g.axisAt(2), 2.5);
}

TEST(ReconGeometry, FullSliceIsBinsSquaredWithTheWholeRegion) {
    const auto r = ReconGeometry::fullSlice(simpleGeometry());
    EXPECT_EQ(r.sliceWidth, 8);
    EXPECT_EQ(r.sliceHeight, 8);
    EXPECT_EQ(r.region, (Region{0, 0, 8, 8}));
    EXPECT_NO_THROW(r.validate());
}

TEST(ReconGeometry, RegionMustLieInsideTheGrid) {
    auto r = ReconGeometry::fullSlice(simpleGeometry());
    r.region = {4, 4, 5, 4}; // one column too wide
    EXPECT_NE(invalidArgumentMessage([&] { r.validate(); }).find("region"), std::string::npos);
    r.region = {-1, 0, 2, 2};
    EXPECT_THROW(r.validate(), InvalidArgument);
    r.region = {0, 0, 0, 0}; // empty
    EXPECT_THROW(r.validate(), InvalidArgument);
    r.region = {3, 5, 5, 3}; // touches the far corner exactly
    EXPECT_NO_THROW(r.validate());
    r.region = {0, 0, 8, 8};
    r.sliceWidth = 0;
    EXPECT_THROW(r.validate(), InvalidArgument);
}

TEST(AngularWeights, Uniform180DegreesGivesPiOverN) {
    const int n = 180;
    std::vector<double> angles(n);
    for (int i = 0; i < n; ++i) angles[i] = kPi * i / n;
    const auto w = angularWeights(angles);
    ASSERT_EQ(w.size(), angles.size());
    for (double v : w) EXPECT_NEAR(v, kPi / n, kTol);
    EXPECT_NEAR(sum(w), kPi, kTol);
}

TEST(AngularWeights, FullTurnCountsEachLineTwiceAtHalfWeight) {
    // 0..360 degrees, end excluded: every line is measured at a and a + 180,
    // so each view gets half of its 180-degree share, pi / n.
    const int n = 360;
    std::vector<double> angles(n);
    for (int i = 0; i < n; ++i) angles[i] = 2.0 * kPi * i / n;
    const auto w = angularWeights(angles);
    for (double v : w) EXPECT_NEAR(v, kPi / n, kTol);
    EXPECT_NEAR(sum(w), kPi, kTol);
}

TEST(AngularWeights, FullTurnWithHalfStepOffsetInterleaves) {
    // Second half offset by half a step: the lines interleave, every gap is
    // half a step, so again each view gets pi / n.
    const int half = 90;
    std::vector<double> angles;
    for (int i = 0; i < half; ++i) angles.push_back(kPi * i / half);
    for (int i = 0; i < half; ++i) angles.push_back(kPi + kPi * (i + 0.5) / half);
    const auto w = angularWeights(angles);
    for (double v : w) EXPECT_NEAR(v, kPi / (2 * half), kTol);
}

TEST(AngularWeights, DuplicatedEndViewSharesOneWeight) {
    // 0..180 degrees with both ends: views 0 and n are the same line and
    // share one step's weight; degrees converted as a file would give them.
    const int n = 100;
    std::vector<double> angles(n + 1);
    for (int i = 0; i <= n; ++i) angles[i] = (180.0 * i / n) * kPi / 180.0;
    const auto w = angularWeights(angles);
    const double step = kPi / n;
    EXPECT_NEAR(w[0], step / 2, kTol);
    EXPECT_NEAR(w[n], step / 2, kTol);
    for (int i = 1; i < n; ++i) EXPECT_NEAR(w[i], step, kTol);
    EXPECT_NEAR(sum(w), kPi, kTol);
}

TEST(AngularWeights, NonUniformStepsGiveHalfTheNeighbouringGaps) {
    // Basalt-like: steps of 0.21, 0.35 and 0.56 degrees in an irregular
    // pattern over ~180 degrees, views listed in a shuffled order.
    const double deg = kPi / 180.0;
    const double pattern[] = {0.21, 0.35, 0.56, 0.35, 0.21, 0.21, 0.56};
    std::vector<double> sorted{0.0};
    for (int i = 0; sorted.back() + pattern[i % 7] * deg < kPi - 0.3 * deg; ++i)
        sorted.push_back(sorted.back() + pattern[i % 7] * deg);
    const int n = static_cast<int>(sorted.size());
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    for (int i = 0; i < n; ++i) std::swap(order[i], order[(i * 7919) % n]);
    std::vector<double> angles(n);
    for (int i = 0; i < n; ++i) angles[i] = sorted[order[i]];

    const auto w = angularWeights(angles);
    for (int i = 0; i < n; ++i) {
        const int k = order[i];
        const double prev = k > 0 ? sorted[k - 1] : sorted[n - 1] - kPi;
        const double next = k + 1 < n ? sorted[k + 1] : sorted[0] + kPi;
        EXPECT_NEAR(w[i], 0.5 * (next - prev), kTol) << "view " << i << " at " << angles[i] / deg << " deg";
    }
    EXPECT_NEAR(sum(w), kPi, kTol);
}

TEST(AngularWeights, LimitedAngleGivesTheEdgesTheMedianStep) {
    // 0..120 degrees in 1-degree steps: the 61-degree gap to 180 is a missing
    // wedge; the edge views get half a step on that side, not half the wedge.
    const double deg = kPi / 180.0;
    std::vector<double> angles;
    for (int i = 0; i < 120; ++i) angles.push_back(i * deg);
    const auto w = angularWeights(angles);
    for (double v : w) EXPECT_NEAR(v, deg, kTol);
    EXPECT_NEAR(sum(w), 120 * deg, kTol);
}

TEST(AngularWeights, AnglesOutsideZeroToPiAreTakenModuloPi) {
    // -90..+90 degrees is the same set of lines as 0..180.
    const int n = 60;
    std::vector<double> angles(n);
    for (int i = 0; i < n; ++i) angles[i] = -kPi / 2 + kPi * i / n;
    for (double v : angularWeights(angles)) EXPECT_NEAR(v, kPi / n, kTol);
}

TEST(AngularWeights, RejectsTooFewOrNonFiniteAngles) {
    EXPECT_THROW(angularWeights({0.0}), InvalidArgument);
    EXPECT_THROW(angularWeights({}), InvalidArgument);
    EXPECT_NE(invalidArgumentMessage([] { angularWeights({0.0, std::nan(""), 1.0}); }).find("angles[1]"),
              std::string::npos);
}

} // namespace
} // namespace tomo
