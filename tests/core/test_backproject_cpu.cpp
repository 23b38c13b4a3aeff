// Conformance suite of the CPU back-projection strategies: every backend of
// family "cpu" in the registry x interpolation x slices per pass, checked
// against the analytic phantom and against "cpu-reference" (the oracle).
#include "tomo/backend.h"
#include "tomo/error.h"
#include "tomo/metrics.h"
#include "tomo/phantom.h"
#include "tomo/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

namespace tomo {
namespace {

constexpr double kPi = std::numbers::pi;

struct Case {
    std::string backend;
    Interpolation interpolation;
    int slicesPerPass;
};

std::string caseName(const testing::TestParamInfo<Case>& info) {
    std::string name = info.param.backend + "_" + std::string(interpolationName(info.param.interpolation)) + "_spp" +
                       std::to_string(info.param.slicesPerPass);
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
}

/// Every option combination an exact CPU backend of this build accepts
/// (the approximate cpu-gridrec has its own suite, test_gridrec.cpp).
std::vector<Case> cpuCases() {
    std::vector<Case> cases;
    for (const Backend* b : BackendRegistry::instance().backends()) {
        if (b->family() != "cpu" || !b->isExact()) continue;
        for (Interpolation i : {Interpolation::Linear, Interpolation::Nearest})
            for (int spp : {1, 2, 4}) {
                ReconOptions o;
                o.strategy = b->name();
                o.interpolation = i;
                o.slicesPerPass = spp;
                try {
                    b->checkOptions(o);
                    cases.push_back({b->name(), i, spp});
                } catch (const InvalidArgument&) {
                }
            }
    }
    return cases;
}

/// Same, without the oracle itself (for comparisons against it).
std::vector<Case> nonReferenceCases() {
    auto cases = cpuCases();
    std::erase_if(cases, [](const Case& c) { return c.backend == "cpu-reference"; });
    return cases;
}

ReconOptions optionsFor(const Case& c, int threads = 2) {
    ReconOptions o;
    o.strategy = c.backend;
    o.interpolation = c.interpolation;
    o.slicesPerPass = c.slicesPerPass;
    o.threads = threads;
    return o;
}

std::vector<float> reconstruct(const ReconGeometry& g, const ReconOptions& o, const std::vector<float>& sinograms,
                               int count) {
    auto plan = createPlan(g, o);
    std::vector<float> out(static_cast<std::size_t>(count) * g.region.pixels());
    plan->reconstruct(sinograms, count, out);
    return out;
}

/// ||a - b|| / ||b|| over all values, or where mask != 0.
double relativeRmse(const std::vector<float>& a, const std::vector<float>& b,
                    const std::vector<std::uint8_t>& mask = {}) {
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!mask.empty() && !mask[i]) continue;
        num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        den += double(b[i]) * b[i];
    }
    return std::sqrt(num / den);
}

std::string sci(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", v);
    return text;
}

/// Relative RMSE allowed against cpu-reference (double accumulation). The
/// float strategies sum ~400 float terms per pixel (relative rounding
/// ~sqrt(400) * 6e-8 ~ 1e-6 at worst) and, for linear, compute positions in
/// float (< 1e-5 bins, a ~1e-7 relative change of the image); nearest uses
/// double positions, so it picks the same bins. Measured: linear 2.9e-7,
/// nearest 1.3e-7; 1e-5 leaves room for other sizes and CPUs.
constexpr double kReferenceTolerance = 1e-5;

/// The same where positions fall exactly on half-integers: with the axis at
/// (bins - 1) / 2 for even bins, the diagonal pixels at 45 and 135 degrees
/// project exactly onto the axis, x.5, and nearest's choice between the two
/// bins there depends on the last bit of cos vs sin and the order of the
/// operations, which every strategy may do differently (measured up to
/// 4.8e-4 from ~20 such pixels per view pair). Linear is continuous there.
double tieTolerance(Interpolation i) { return i == Interpolation::Linear ? kReferenceTolerance : 1e-3; }

/// The 2D Shepp-Logan phantom on 256 bins, 360 views over 180 degrees,
/// detector integration by 4 rays per bin.
struct PhantomScan {
    PhantomSpec spec;
    Geometry geometry;
    std::vector<float> sinogram;
    Image truth;
    std::vector<std::uint8_t> mask;

    static const PhantomScan& get() {
        static const PhantomScan scan = [] {
            PhantomScan s;
            s.spec.shapes = sheppLogan2D();
            s.spec.bins = 256;
            s.geometry.angles = uniformAngles(360);
            s.geometry.bins = 256;
            s.geometry.axis = s.geometry.detectorCentre();
            s.sinogram = projectPhantom(s.spec, s.geometry.angles, 4).data;
            s.truth = rasterizePhantom(s.spec, 0, 256, 256, 4);
            // Inside the phantom (radius 0.9 * 128 = 115 px), away from the
            // field edge where FBP of a finite detector is not meaningful.
            s.mask = discMask(256, 256, 110.0);
            return s;
        }();
        return scan;
    }

    double errorOf(const std::vector<float>& slice) const {
        Image img(256, 256);
        img.data = slice;
        return compareImages(img, truth, mask).relativeError;
    }
};

class CpuConformance : public testing::TestWithParam<Case> {};
class CpuVersusReference : public testing::TestWithParam<Case> {};

INSTANTIATE_TEST_SUITE_P(AllCpu, CpuConformance, testing::ValuesIn(cpuCases()), caseName);
INSTANTIATE_TEST_SUITE_P(AllCpu, CpuVersusReference, testing::ValuesIn(nonReferenceCases()), caseName);

TEST(CpuRegistry, HasBothCpuStrategies) {
    const auto cases = cpuCases();
    auto has = [&](const char* name) {
        return std::any_of(cases.begin(), cases.end(), [&](const Case& c) { return c.backend == name; });
    };
    EXPECT_TRUE(has("cpu-reference"));
    EXPECT_TRUE(has("cpu"));
    EXPECT_EQ(cases.size(), 8u); // reference: 2 interpolations; cpu: 2 x {1, 2, 4}
}

TEST_P(CpuConformance, FbpOfTheExactSinogramMatchesThePhantom) {
    const auto& scan = PhantomScan::get();
    const auto out = reconstruct(ReconGeometry::fullSlice(scan.geometry), optionsFor(GetParam()), scan.sinogram, 1);
    const double error = scan.errorOf(out);
    // Relative RMSE against the true image inside the disc, measured 0.085
    // (linear) and 0.096 (nearest) for 360 views on 256 bins: the residue is
    // the blur/ringing of a band-limited FBP at the phantom's sharp edges
    // (the skull ring alone is a 1:0.2 step), not a shift or scale error.
    const double bound = GetParam().interpolation == Interpolation::Linear ? 0.10 : 0.115;
    EXPECT_LT(error, bound);
    RecordProperty("relative_rmse_vs_phantom", sci(error));

    // The same image upside down scores far worse: the orientation is right.
    std::vector<float> flipped(out.size());
    for (int y = 0; y < 256; ++y)
        std::copy_n(out.begin() + (255 - y) * 256, 256, flipped.begin() + y * 256);
    EXPECT_GT(scan.errorOf(flipped), 3 * error);
}

TEST_P(CpuConformance, FullTurnScanGivesTheSameImage) {
    // 720 views over 360 degrees: each line twice at half the weight.
    const auto& scan = PhantomScan::get();
    Geometry g = scan.geometry;
    g.angles = uniformAngles(720, 2 * kPi);
    const auto sino = projectPhantom(scan.spec, g.angles, 4).data;
    const auto full = reconstruct(ReconGeometry::fullSlice(g), optionsFor(GetParam()), sino, 1);
    const auto half = reconstruct(ReconGeometry::fullSlice(scan.geometry), optionsFor(GetParam()), scan.sinogram, 1);
    // The second half adds views at new angles, so the images differ only in
    // angular sampling (~1%), while a doubled weight would be a 100% error.
    EXPECT_LT(relativeRmse(full, half), 0.03);
    EXPECT_LT(scan.errorOf(full), scan.errorOf(half) * 1.05);
}

TEST_P(CpuConformance, NonUniformAnglesWeighEachViewByItsOwnGap) {
    // An interrupted scan: 240 views over the first 90 degrees, then 80 over
    // the other 90 (angular weights 1 : 3). 320 rows are filtered as 5 tasks
    // of 64 rows, so each task must take the weights of its own rows; the
    // truth is the analytic phantom, not another strategy (all CPU
    // strategies share the filtering).
    const auto& scan = PhantomScan::get();
    Geometry g = scan.geometry;
    g.angles.clear();
    for (int i = 0; i < 240; ++i) g.angles.push_back(0.5 * kPi * i / 240);
    for (int i = 0; i < 80; ++i) g.angles.push_back(0.5 * kPi + 0.5 * kPi * i / 80);
    const auto sino = projectPhantom(scan.spec, g.angles, 4).data;
    const double error = scan.errorOf(reconstruct(ReconGeometry::fullSlice(g), optionsFor(GetParam()), sino, 1));
    // Relative RMSE inside the disc, measured 0.0857 (linear) and 0.108
    // (nearest; the sparse half's coarse steps) against 0.085 and 0.096 for
    // 360 uniform views; allowed 1.2x.
    const double measured = GetParam().interpolation == Interpolation::Linear ? 0.0857 : 0.108;
    EXPECT_LT(error, 1.2 * measured);
    RecordProperty("relative_rmse_vs_phantom", sci(error));
}

TEST_P(CpuConformance, AWrongAxisGivesALargerError) {
    const auto& scan = PhantomScan::get();
    const double right = scan.errorOf(
        reconstruct(ReconGeometry::fullSlice(scan.geometry), optionsFor(GetParam()), scan.sinogram, 1));
    for (double shift : {-3.0, 3.0}) {
        Geometry g = scan.geometry;
        g.axis += shift;
        const double wrong = scan.errorOf(reconstruct(ReconGeometry::fullSlice(g), optionsFor(GetParam()), scan.sinogram, 1));
        // Doubled edges everywhere: measured 0.86-0.88 for +-3 px (vs 0.085-0.096).
        EXPECT_GT(wrong, 3 * right) << "axis shifted by " << shift;
        RecordProperty(shift < 0 ? "error_axis_minus_3" : "error_axis_plus_3", sci(wrong));
    }
}

TEST_P(CpuConformance, UniformOffsetsEqualAShiftedAxis) {
    const auto& scan = PhantomScan::get();
    Geometry withAxis = scan.geometry;
    withAxis.axis += 2.0;
    Geometry withOffsets = scan.geometry;
    withOffsets.axisOffsets.assign(withOffsets.angles.size(), 2.0);
    const auto a = reconstruct(ReconGeometry::fullSlice(withAxis), optionsFor(GetParam()), scan.sinogram, 1);
    const auto b = reconstruct(ReconGeometry::fullSlice(withOffsets), optionsFor(GetParam()), scan.sinogram, 1);
    // axis + offset is the same double either way: identical arithmetic.
    EXPECT_EQ(a, b);
}

TEST_P(CpuConformance, PerProjectionOffsetsUndoAShiftedSinogram) {
    // Each view is measured with the axis moved by an alternating whole
    // number of bins; the offsets tell the back-projection where it was.
    // Objects stay inside the field (radius 0.7), so no data fall off.
    PhantomSpec spec;
    spec.shapes = sheppLogan2D();
    spec.bins = 128;
    spec.radiusFraction = 0.7;
    Geometry g;
    g.bins = 128;
    g.angles = uniformAngles(180);
    g.axis = g.detectorCentre();
    const auto sino = projectPhantom(spec, g.angles, 2).data;
    std::vector<float> moved(sino.size(), 0.0f);
    std::vector<double> offsets(g.angles.size());
    for (int p = 0; p < g.projections(); ++p) {
        const int d = (p % 3) - 1; // -1, 0, +1, ...
        offsets[p] = d;
        for (int k = 0; k < 128; ++k)
            if (k - d >= 0 && k - d < 128) moved[p * 128 + k] = sino[p * 128 + k - d];
    }
    const auto expected = reconstruct(ReconGeometry::fullSlice(g), optionsFor(GetParam()), sino, 1);
    Geometry gm = g;
    gm.axisOffsets = offsets;
    const auto got = reconstruct(ReconGeometry::fullSlice(gm), optionsFor(GetParam()), moved, 1);
    // Same values at the same positions (the filter is shift-invariant and
    // the rows move inside zero margins), except where a ray leaves the
    // detector in one case and not the other: compare inside the disc
    // whose rays stay 1 bin inside the detector. Float rounding only.
    const auto inside = discMask(128, 128, 61.0);
    EXPECT_LT(relativeRmse(got, expected, inside), tieTolerance(GetParam().interpolation));
    // Without the offsets the image is clearly wrong.
    const auto ignored = reconstruct(ReconGeometry::fullSlice(g), optionsFor(GetParam()), moved, 1);
    EXPECT_GT(relativeRmse(ignored, expected, inside), 0.1);
}

TEST_P(CpuConformance, RegionIsTheSameWindowOfTheFullSlice) {
    const auto& scan = PhantomScan::get();
    ReconGeometry full = ReconGeometry::fullSlice(scan.geometry);
    const auto whole = reconstruct(full, optionsFor(GetParam()), scan.sinogram, 1);
    ReconGeometry part = full;
    part.region = {37, 101, 150, 77}; // odd offset, not a multiple of any tile
    const auto window = reconstruct(part, optionsFor(GetParam()), scan.sinogram, 1);
    std::vector<float> expected;
    for (int y = 0; y < 77; ++y)
        for (int x = 0; x < 150; ++x) expected.push_back(whole[(101 + y) * 256 + 37 + x]);
    // Other tiles, so positions round differently: float rounding, and
    // exact ties for nearest.
    EXPECT_LT(relativeRmse(window, expected), tieTolerance(GetParam().interpolation));
}

TEST_P(CpuConformance, OddSizesMatchTheReference) {
    // 101 bins, 97 views over 180 degrees, a 120 x 90 grid, region 37 x 29
    // at an odd offset, axis off-centre by a fraction.
    PhantomSpec spec;
    spec.shapes = sheppLogan2D();
    spec.bins = 101;
    Geometry g;
    g.bins = 101;
    g.angles = uniformAngles(97);
    g.axis = g.detectorCentre() + 0.37;
    const auto sino = projectPhantom(spec, g.angles, 2).data;
    ReconGeometry rg;
    rg.geometry = g;
    rg.sliceWidth = 120;
    rg.sliceHeight = 90;
    rg.region = {13, 41, 37, 29};
    const auto got = reconstruct(rg, optionsFor(GetParam()), sino, 1);
    ReconGeometry fullGrid = rg;
    fullGrid.region = {0, 0, 120, 90};
    ReconOptions ref = optionsFor(GetParam());
    ref.strategy = "cpu-reference";
    ref.slicesPerPass = 1;
    const auto whole = reconstruct(fullGrid, ref, sino, 1);
    std::vector<float> expected;
    for (int y = 0; y < 29; ++y)
        for (int x = 0; x < 37; ++x) expected.push_back(whole[(41 + y) * 120 + 13 + x]);
    EXPECT_LT(relativeRmse(got, expected), kReferenceTolerance);
}

TEST_P(CpuConformance, SeveralSlicesEqualOneAtATime) {
    // Five different rows of the 3D phantom: with 2 or 4 slices per pass the
    // last pass is partial.
    PhantomSpec spec;
    spec.bins = 96;
    spec.rows = 7; // rows 1..5 cut the phantom
    Geometry g;
    g.bins = 96;
    g.angles = uniformAngles(120);
    g.axis = g.detectorCentre();
    const auto stack = projectPhantom(spec, g.angles, 1);
    const std::size_t sinoSize = 96 * 120, sliceSize = 96 * 96;
    std::vector<float> five(stack.data.begin() + sinoSize, stack.data.begin() + 6 * sinoSize);
    const ReconGeometry rg = ReconGeometry::fullSlice(g);
    const auto together = reconstruct(rg, optionsFor(GetParam()), five, 5);
    for (int z = 0; z < 5; ++z) {
        std::vector<float> one(five.begin() + z * sinoSize, five.begin() + (z + 1) * sinoSize);
        const auto alone = reconstruct(rg, optionsFor(GetParam()), one, 1);
        const std::vector<float> part(together.begin() + z * sliceSize, together.begin() + (z + 1) * sliceSize);
        // Each slice goes through the same operations in its own lane.
        EXPECT_LT(relativeRmse(part, alone), 1e-6) << "slice " << z;
    }
}

TEST_P(CpuConformance, RaysThatMissTheDetectorContributeNothing) {
    // An axis far off the detector: every position is outside [-1, bins].
    const auto& scan = PhantomScan::get();
    // +-1e300: beyond every integer type (no conversion may overflow).
    for (double axis : {-1e300, -1e9, -200.0, 800.0, 1e12, 1e300}) { // pixels reach +-181 px from the axis
        Geometry g = scan.geometry;
        g.axis = axis;
        const auto out = reconstruct(ReconGeometry::fullSlice(g), optionsFor(GetParam()), scan.sinogram, 1);
        EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == 0.0f; })) << "axis " << axis;
    }
}

TEST_P(CpuConformance, ThreadCountDoesNotChangeTheResult) {
    const auto& scan = PhantomScan::get();
    const auto rg = ReconGeometry::fullSlice(scan.geometry);
    // Each pixel is summed by one thread in a fixed order: bit-identical.
    EXPECT_EQ(reconstruct(rg, optionsFor(GetParam(), 1), scan.sinogram, 1),
              reconstruct(rg, optionsFor(GetParam(), 3), scan.sinogram, 1));
}

TEST_P(CpuConformance, SetAxisAndSetRegionKeepTheFilteredData) {
    const auto& scan = PhantomScan::get();
    ReconGeometry rg = ReconGeometry::fullSlice(scan.geometry);
    auto plan = createPlan(rg, optionsFor(GetParam()));
    plan->setSinograms(scan.sinogram, 1);
    std::vector<float> first(rg.region.pixels());
    plan->backproject(first);
    const StageTimes times = plan->lastStageTimes();
    EXPECT_GT(times.filter, 0.0);
    EXPECT_GT(times.backproject, 0.0);

    plan->setAxis(rg.geometry.axis + 1.5, {});
    plan->setRegion({10, 20, 30, 40});
    std::vector<float> moved(30 * 40);
    plan->backproject(moved);
    ReconGeometry shifted = rg;
    shifted.geometry.axis += 1.5;
    shifted.region = {10, 20, 30, 40};
    EXPECT_EQ(moved, reconstruct(shifted, optionsFor(GetParam()), scan.sinogram, 1));
    EXPECT_EQ(plan->geometry().region, (Region{10, 20, 30, 40}));
    EXPECT_GE(plan->memoryBytes(), scan.sinogram.size() * sizeof(float));
}

TEST_P(CpuConformance, PlanRejectsWrongCallsNamingTheProblem) {
    const auto& scan = PhantomScan::get();
    ReconGeometry rg = ReconGeometry::fullSlice(scan.geometry);
    auto plan = createPlan(rg, optionsFor(GetParam()));
    std::vector<float> out(rg.region.pixels());
    EXPECT_THROW(plan->backproject(out), InvalidArgument); // nothing set yet
    EXPECT_THROW(plan->setSinograms(std::span<const float>(scan.sinogram).first(100), 1), InvalidArgument);
    EXPECT_THROW(plan->setSinograms(scan.sinogram, 0), InvalidArgument);
    std::vector<float> tooMany(scan.sinogram.size() * (plan->maxSlices() + 1));
    EXPECT_THROW(plan->setSinograms(tooMany, plan->maxSlices() + 1), InvalidArgument);
    plan->setSinograms(scan.sinogram, 1);
    std::vector<float> small(10);
    EXPECT_THROW(plan->backproject(small), InvalidArgument);
    const std::vector<double> threeOffsets = {1, 2, 3};
    EXPECT_THROW(plan->setAxis(100.0, threeOffsets), InvalidArgument);
    EXPECT_THROW(plan->setAxis(NAN, {}), InvalidArgument);
    EXPECT_THROW(plan->setRegion({200, 0, 100, 10}), InvalidArgument);
    EXPECT_EQ(plan->geometry().region, rg.region); // unchanged after the failures
    plan->backproject(out);
}

TEST_P(CpuVersusReference, MatchesTheReference) {
    // A real scan-like case: the phantom with an off-centre axis and a few
    // per-projection offsets, full grid.
    const auto& scan = PhantomScan::get();
    Geometry g = scan.geometry;
    g.axis += 0.3;
    g.axisOffsets.resize(g.angles.size());
    for (std::size_t p = 0; p < g.axisOffsets.size(); ++p) g.axisOffsets[p] = 0.25 * std::sin(0.1 * p);
    const auto rg = ReconGeometry::fullSlice(g);
    ReconOptions ref = optionsFor(GetParam());
    ref.strategy = "cpu-reference";
    ref.slicesPerPass = 1;
    const auto expected = reconstruct(rg, ref, scan.sinogram, 1);
    const auto got = reconstruct(rg, optionsFor(GetParam()), scan.sinogram, 1);
    const double error = relativeRmse(got, expected);
    EXPECT_LT(error, kReferenceTolerance);
    RecordProperty("relative_rmse_vs_reference", sci(error));
}

TEST(CpuOptions, UnsupportedOptionsNameTheOption) {
    auto message = [](const char* strategy, auto change) {
        ReconOptions o;
        o.strategy = strategy;
        change(o);
        const Backend* b = BackendRegistry::instance().find(strategy);
        EXPECT_NE(b, nullptr);
        try {
            b->checkOptions(o);
        } catch (const InvalidArgument& e) {
            // createPlan refuses the same way.
            EXPECT_THROW(b->createPlan(ReconGeometry::fullSlice(PhantomScan::get().geometry), o), InvalidArgument);
            return std::string(e.what());
        }
        ADD_FAILURE() << strategy << " accepted the options";
        return std::string();
    };
    for (const char* s : {"cpu-reference", "cpu"}) {
        EXPECT_NE(message(s, [](ReconOptions& o) { o.precision = Precision::Float16; }).find("float16"),
                  std::string::npos);
        EXPECT_NE(message(s, [](ReconOptions& o) { o.slicesPerPass = 3; }).find("slicesPerPass"), std::string::npos);
        EXPECT_NE(message(s, [](ReconOptions& o) { o.threads = -1; }).find("threads"), std::string::npos);
    }
    const std::string spp = message("cpu-reference", [](ReconOptions& o) { o.slicesPerPass = 2; });
    EXPECT_NE(spp.find("supported: 1"), std::string::npos) << spp;
    EXPECT_NE(message("cpu", [](ReconOptions& o) { o.slicesPerPass = 8; }).find("1, 2, 4"), std::string::npos);
}

TEST(CpuPlan, MaxSlicesKeepsTheMemoryBounded) {
    // 8192 views x 4096 bins: 128 MiB per sinogram; the plans keep 1 GiB at
    // most (cpu: filtered + values + differences, 3 copies; reference: 1).
    Geometry g;
    g.bins = 4096;
    g.angles = uniformAngles(8192);
    g.axis = g.detectorCentre();
    ReconOptions o;
    o.strategy = "cpu";
    EXPECT_EQ(createPlan(ReconGeometry::fullSlice(g), o)->maxSlices(), 2);
    o.strategy = "cpu-reference";
    EXPECT_EQ(createPlan(ReconGeometry::fullSlice(g), o)->maxSlices(), 8);
    // Small problems are capped at 64 slices per call.
    EXPECT_EQ(createPlan(ReconGeometry::fullSlice(PhantomScan::get().geometry), o)->maxSlices(), 64);
}

TEST(CpuPlan, InvalidGeometryIsRefused) {
    Geometry g;
    g.bins = 16;
    ReconOptions o;
    o.strategy = "cpu";
    EXPECT_THROW(createPlan(ReconGeometry::fullSlice(g), o), InvalidArgument); // no angles
    g.angles = {0.0};
    EXPECT_THROW(createPlan(ReconGeometry::fullSlice(g), o), InvalidArgument); // one angle: no angular weight
}

} // namespace
} // namespace tomo
