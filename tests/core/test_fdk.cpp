// Cone- and fan-beam geometry, FDK and the cone-beam back-projectors,
// checked against the analytic phantom (exact divergent-ray projections).
#include "tomo/cone_geometry.h"
#include "tomo/error.h"
#include "tomo/fdk.h"
#include "tomo/metrics.h"
#include "tomo/phantom.h"
#include "tomo/cpu_backends.h"

#include "test_support.h"

#include "cone_test_scan.h"
#include "io_test_helpers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <numbers>

namespace tomo {
namespace {

constexpr double kPi = std::numbers::pi;

using test::contains;
using test::messageOf;

/// Magnification 2, a 96 x `rows` detector of 1 mm pixels 300 mm from the
/// source: the phantom below fills a fan of +-5.5 of its +-9.1 degrees.
CircularConeGeometry narrowScan(double rangeRadians, int views, int rows) {
    return test::circularCone(views, 96, rows, 1.0, 150.0, 300.0, rangeRadians);
}

/// Magnification 2 with the source 40 mm from the axis: the phantom below
/// fills a fan of +-21 of the detector's +-25.8 degrees (where a curved
/// detector read as a flat one of its pixel pitch puts the phantom's edge
/// 1.6 columns off) and, up to 27 mm high, `rows` <= 64 of 1 mm.
CircularConeGeometry wideScan(DetectorShape detector, int rows) {
    const double pitch = detector == DetectorShape::Curved ? 0.75 : 80.0 * std::tan(0.45) / 48; // the same fan
    CircularConeGeometry g = test::circularCone(180, 96, rows, pitch, 40.0, 80.0);
    g.pixelHeight = 1.0;
    g.detector = detector;
    return g;
}

/// A small cone-beam scan: 64 x 64 x 33 voxels of 0.5 mm, the 3D Shepp-Logan
/// phantom (radius 14.4 mm) seen whole (in the mid-plane) on the detector.
struct ConeScan {
    CircularConeGeometry circular;
    ConeGeometry geometry;
    VolumeGrid grid{64, 64, 33, 0.5, {}};
    ConePhantom phantom;
    ImageStack projections; ///< on circular's detector

    explicit ConeScan(double rangeRadians = 2 * kPi, int views = 180, std::vector<Ellipsoid> shapes = sheppLogan3D(),
                      int rows = 64)
        : ConeScan(narrowScan(rangeRadians, views, rows), std::move(shapes)) {}

    ConeScan(CircularConeGeometry scan, std::vector<Ellipsoid> shapes)
        : circular(std::move(scan)), geometry(ConeGeometry::circular(circular)) {
        phantom.shapes = std::move(shapes);
        phantom.radius = 0.9 * 32 * grid.voxelSize;
        phantom.attenuation = 0.02;
        projections = projectPhantomCone(phantom, circular, 2);
    }

    ImageStack reconstruct(const FdkOptions& options = {}) const {
        return reconstructFdk(geometry, resampleToFlatDetector(circular, projections.data), grid, options);
    }
};

const ConeScan& fullScan() {
    static const ConeScan scan;
    return scan;
}

/// Relative RMS error of slice k against the true phantom inside a disc of
/// 0.85 of the phantom radius (the field where FBP is meaningful).
double sliceError(const ImageStack& volume, const ImageStack& truth, int k) {
    const auto mask = discMask(volume.width, volume.height, 0.85 * 0.9 * volume.width / 2);
    return compareImages(volume.slice(k), truth.slice(k), mask).relativeError;
}

/// Mean of the volume over the mean of the truth inside the same disc.
double meanRatio(const ImageStack& volume, const ImageStack& truth, int k) {
    const auto mask = discMask(volume.width, volume.height, 0.85 * 0.9 * volume.width / 2);
    double a = 0.0, b = 0.0;
    for (std::size_t i = 0; i < mask.size(); ++i)
        if (mask[i]) a += volume.image(k)[i], b += truth.image(k)[i];
    return a / b;
}

using test::relativeDifference;

// ------------------------------------------------------------------ geometry

TEST(ConeGeometry, CircularMatricesFollowTheParallelBeamConventions) {
    CircularConeGeometry g;
    g.angles = {0.0, kPi / 2};
    g.sourceAxis = 100.0;
    g.sourceDetector = 400.0;
    g.columns = 101;
    g.rows = 51;
    g.pixelWidth = 0.5;
    g.offsetU = 2.0;
    const ConeGeometry cone = ConeGeometry::circular(g);
    // The isocentre lands on the central ray: detector centre + offset.
    auto project = [&](int view, double x, double y, double z) {
        const auto [uw, vw, w] = cone.views[view].apply(x, y, z);
        return std::array<double, 3>{uw / w, vw / w, w};
    };
    EXPECT_NEAR(project(0, 0, 0, 0)[0], 52.0, 1e-12);
    EXPECT_NEAR(project(0, 0, 0, 0)[1], 25.0, 1e-12);
    EXPECT_NEAR(project(0, 0, 0, 0)[2], 1.0, 1e-12); // w = 1 at the isocentre
    // At angle 0 the source is on +y: x maps to +u with magnification 4 at
    // the axis (400 / 100), in pixels of 0.5: 8 pixels per unit.
    EXPECT_NEAR(project(0, 1.0, 0, 0)[0] - 52.0, 8.0, 1e-12);
    EXPECT_NEAR(project(0, 0, 0, 1.0)[1] - 25.0, 8.0, 1e-12);
    // A point nearer the source is magnified more: depth 50 -> factor 8.
    EXPECT_NEAR(project(0, 1.0, 50.0, 0)[0] - 52.0, 16.0, 1e-12);
    EXPECT_NEAR(project(0, 0, 50.0, 0)[2], 0.5, 1e-12);
    // At 90 degrees (source on +x) the column axis points along -y.
    EXPECT_NEAR(project(1, 0, -1.0, 0)[0] - 52.0, 8.0, 1e-12);

    const ViewFrame f = describeView(cone.views[1], "view 1");
    EXPECT_NEAR(f.source[0], 100.0, 1e-9);
    EXPECT_NEAR(f.source[1], 0.0, 1e-9);
    EXPECT_NEAR(f.focalU, 800.0, 1e-9);
    EXPECT_NEAR(f.centreU, 52.0, 1e-9);
    EXPECT_NEAR(f.centreV, 25.0, 1e-9);
    EXPECT_NEAR(f.originDepth, 100.0, 1e-9);
}

TEST(ConeGeometry, DescribeViewUndoesAnyScaleAndSignOfTheMatrix) {
    CircularConeGeometry g;
    g.angles = {0.3};
    g.sourceAxis = 80.0;
    g.sourceDetector = 120.0;
    g.columns = 64;
    g.rows = 32;
    g.pixelWidth = 0.2;
    g.pixelHeight = 0.4;
    ProjectionMatrix p = ConeGeometry::circular(g).views[0];
    const ViewFrame a = describeView(p, "a");
    for (double& v : p.m) v *= -37.5;
    const ViewFrame b = describeView(p, "b");
    for (int i = 0; i < 12; ++i) EXPECT_NEAR(a.normalised.m[i], b.normalised.m[i], 1e-12);
    EXPECT_NEAR(b.focalU, 600.0, 1e-9);
    EXPECT_NEAR(b.focalV, 300.0, 1e-9);
    EXPECT_NEAR(b.source[0], 80.0 * std::sin(0.3), 1e-9);
    EXPECT_NEAR(b.source[1], 80.0 * std::cos(0.3), 1e-9);
}

TEST(ConeGeometry, BadGeometriesAreRefusedNamingTheField) {
    CircularConeGeometry g;
    g.angles = {0.0};
    g.sourceAxis = 100.0;
    g.sourceDetector = 50.0;
    g.columns = 10;
    g.pixelWidth = 1.0;
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { g.validate(); }), "sourceDetector is 50"));
    g.sourceDetector = 200.0;
    g.pixelWidth = std::nan("");
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { g.validate(); }), "pixelWidth"));
    ProjectionMatrix flat; // third row zero: not a perspective projection
    flat.m[0] = flat.m[5] = 1.0;
    flat.m[11] = 1.0;
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { describeView(flat, "view 7"); }),
                         "projection matrix of view 7 has a zero third row"));
    VolumeGrid grid{4, 4, 0, 1.0, {}};
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { grid.validate(); }), "4x4x0"));
}

TEST(ConeGeometry, CurvedDetectorsVirtualFlatDetectorSpansTheSameFan) {
    CircularConeGeometry g;
    g.angles = {0.0, 1.0};
    g.sourceAxis = 100.0;
    g.sourceDetector = 200.0;
    g.columns = 64;
    g.rows = 9;
    g.pixelWidth = 2.0; // 0.01 radians per column
    g.offsetU = 3.0;
    g.detector = DetectorShape::Curved;
    EXPECT_NEAR(g.columnAngle(31.5 + 3.0 + 1.0), 0.01, 1e-15);
    const CircularConeGeometry flat = virtualFlatDetector(g);
    EXPECT_EQ(flat.detector, DetectorShape::Flat);
    EXPECT_EQ(flat.columns, 64);
    EXPECT_EQ(flat.rows, 9);
    // The outer column edges on the rays of the curved ones.
    auto flatAngle = [&](double u) { return std::atan((u - 31.5 - flat.offsetU) * flat.pixelWidth / 200.0); };
    EXPECT_NEAR(flatAngle(-0.5), g.columnAngle(-0.5), 1e-12);
    EXPECT_NEAR(flatAngle(63.5), g.columnAngle(63.5), 1e-12);
    EXPECT_NEAR(g.columnAngle(63.5), 0.29, 1e-12);
    // The widest ray (0.35 radians) meets the cylinder cos(0.35) lower.
    EXPECT_NEAR(flat.rowPitch() * std::cos(0.35), 2.0, 1e-12);
    EXPECT_EQ(ConeGeometry::circular(g).views[1].m, ConeGeometry::circular(flat).views[1].m);
    EXPECT_EQ(virtualFlatDetector(flat).pixelWidth, flat.pixelWidth);

    g.pixelWidth = 200.0 * kPi / 64; // 180 degrees
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { virtualFlatDetector(g); }),
                         "expected within 90 of the central ray: pixelWidth or offsetU too large"));
}

TEST(ConeGeometry, MatrixFilesReadRowMajorAndRabbitCtOrder) {
    test::TempDir dir;
    {
        std::ofstream f(dir / "views.txt");
        f << "# two views\n1 2 3 4  5 6 7 8  9 10 11 12\n";
        f << "1,2,3,4,\n5,6,7,8,\n9,10,11,+12 # the second\n";
    }
    const auto rows = readProjectionMatrices(dir / "views.txt");
    ASSERT_EQ(rows.size(), 2u);
    for (int i = 0; i < 12; ++i) EXPECT_EQ(rows[1].m[i], i + 1.0);
    const auto rabbit = readProjectionMatrices(dir / "views.txt", MatrixOrder::RabbitCT);
    // RabbitCT: u w = A[0] x + A[3] y + A[6] z + A[9].
    EXPECT_EQ(rabbit[0].m[0], 1.0);
    EXPECT_EQ(rabbit[0].m[1], 4.0);
    EXPECT_EQ(rabbit[0].m[3], 10.0);
    EXPECT_EQ(rabbit[0].m[4], 2.0);
    EXPECT_EQ(rabbit[0].m[11], 12.0);

    {
        std::ofstream f(dir / "short.txt");
        f << "1 2 3 4 5 6 7 8 9 10 11\n";
    }
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { readProjectionMatrices(dir / "short.txt"); }),
                         "holds 11 numbers (expected 12 per projection matrix"));
    {
        std::ofstream f(dir / "word.txt");
        f << "1 2 3 4 5 6\n7 8 nine 10 11 12\n";
    }
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { readProjectionMatrices(dir / "word.txt"); }),
                         "word.txt:2: 'nine' is not a finite number"));
    EXPECT_TRUE(contains(messageOf<IoError>([&] { readProjectionMatrices(dir / "missing.txt"); }), "missing.txt"));
}

// ------------------------------------------------------------------ phantom

TEST(ConePhantom, CentralRayThroughABallIsItsDiameter) {
    ConePhantom ball;
    ball.shapes = {{1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0}};
    ball.radius = 10.0;
    ball.attenuation = 0.5;
    CircularConeGeometry g = test::circularCone(1, 5, 5, 1.0, 100.0, 200.0);
    g.angles = {0.7};
    const ImageStack p = projectPhantomCone(ball, ConeGeometry::circular(g));
    EXPECT_NEAR(p.data[2 * 5 + 2], 20.0 * 0.5, 1e-9);
    // One pixel off centre: the ray at distance 100 * 1 / sqrt(200^2 + 1)
    // from the centre passes a chord 2 sqrt(r^2 - d^2).
    const double d = 100.0 / std::sqrt(200.0 * 200.0 + 1.0);
    EXPECT_NEAR(p.data[2 * 5 + 3], 2.0 * std::sqrt(100.0 - d * d) * 0.5, 1e-6);
}

TEST(ConePhantom, CurvedDetectorRaysMeetTheCylinder) {
    ConePhantom ball;
    ball.shapes = {{1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0}};
    ball.radius = 50.0;
    ball.attenuation = 0.5;
    // 0.3 radians per column (a flat detector's column 1 is at 0.29)
    CircularConeGeometry g = test::circularCone(1, 5, 5, 60.0, 100.0, 200.0);
    g.angles = {0.7};
    g.pixelHeight = 40.0;
    g.detector = DetectorShape::Curved;
    const ImageStack p = projectPhantomCone(ball, g);
    // The pixel one up and one right of the centre is on the cylinder at
    // (200 sin 0.3, 200 cos 0.3, 40) from the source: its ray passes the
    // ball's centre at 100 sin(its angle to the central ray).
    const double along = 200.0 * std::cos(0.3) / std::hypot(200.0, 40.0);
    const double d = 100.0 * std::sqrt(1.0 - along * along);
    EXPECT_NEAR(p.data[3 * 5 + 3], 2.0 * std::sqrt(2500.0 - d * d) * 0.5, 1e-5); // float
    EXPECT_NEAR(p.data[2 * 5 + 2], 100.0 * 0.5, 1e-5);
    // Symmetric about the centre.
    EXPECT_FLOAT_EQ(p.data[1 * 5 + 1], p.data[3 * 5 + 3]);
}

// ------------------------------------------------------------------ FDK

TEST(Fdk, MidPlaneMatchesThePhantomAndConeArtefactsStayBounded) {
    const ConeScan& scan = fullScan();
    const ImageStack volume = scan.reconstruct({.backprojector = ConeBackprojector::Reference});
    const ImageStack truth = rasterizePhantomVolume(scan.phantom, scan.grid, 3);
    // At 64 pixels across, the blur of Shepp-Logan's sharp edges alone makes
    // 0.18 (a parallel-beam FBP of the same slice: 0.18, see the fan-beam
    // test); the level is right within 1 %.
    const double mid = sliceError(volume, truth, 16);
    const double off = std::max(sliceError(volume, truth, 2), sliceError(volume, truth, 30));
    std::cout << "MEASURED cone mid-plane relative error " << mid << ", at z = +-7 mm " << off
              << ", mid-plane mean ratio " << meanRatio(volume, truth, 16) << "\n";
    EXPECT_LT(mid, 0.19);
    EXPECT_NEAR(meanRatio(volume, truth, 16), 1.0, 0.01);
    // Off the mid-plane FDK is approximate (cone artefacts): worse, bounded.
    EXPECT_GT(off, mid);
    EXPECT_LT(off, 0.25);
    EXPECT_NEAR(meanRatio(volume, truth, 2), 1.0, 0.05);
}

TEST(Fdk, FastMatchesReferenceAndClippingChangesNothing) {
    const ConeScan& scan = fullScan();
    const FilteredProjections filtered = fdkFilter(scan.geometry, scan.projections.data);
    std::vector<float> reference(scan.grid.voxels()), fast(scan.grid.voxels()), unclipped(scan.grid.voxels());
    backprojectCone(filtered, scan.grid, 1.0, reference, {.backprojector = ConeBackprojector::Reference});
    backprojectCone(filtered, scan.grid, 1.0, fast, {.backprojector = ConeBackprojector::Fast});
    backprojectCone(filtered, scan.grid, 1.0, unclipped, {.backprojector = ConeBackprojector::Fast, .clip = false});
    const double diff = relativeDifference(fast, reference);
    std::cout << "MEASURED cone cpu vs cpu-reference relative difference " << diff << "\n";
    EXPECT_LT(diff, 1e-5);
    EXPECT_EQ(fast, unclipped);
}

TEST(Fdk, ClippingSkipsVoxelsOutsideTheConeAndGivesTheSameVolume) {
    // A detector too small for the volume: many lines miss it in part.
    ConeScan scan(2 * kPi, 60, sheppLogan3D(), 24);
    scan.grid = {48, 48, 41, 0.75, {3.0, -2.0, 1.0}};
    const FilteredProjections filtered = fdkFilter(scan.geometry, scan.projections.data);
    std::vector<float> clipped(scan.grid.voxels()), unclipped(scan.grid.voxels()), reference(scan.grid.voxels());
    backprojectCone(filtered, scan.grid, 1.0, clipped, {});
    backprojectCone(filtered, scan.grid, 1.0, unclipped, {.clip = false});
    backprojectCone(filtered, scan.grid, 1.0, reference, {.backprojector = ConeBackprojector::Reference});
    EXPECT_EQ(clipped, unclipped);
    EXPECT_LT(relativeDifference(clipped, reference), 1e-5);
    // The top slice is outside every view's cone: exactly zero.
    const std::size_t slice = static_cast<std::size_t>(48) * 48;
    for (std::size_t i = 0; i < slice; ++i) ASSERT_EQ(clipped[40 * slice + i], 0.0f);
}

TEST(Fdk, TiltedOrbitUsesTheGeneralLineKernelWithTheSameResult) {
    // The orbit tilted by 5 degrees about x: u and w now vary along z, so the
    // fast back-projector takes its per-line kernel (any matrices).
    ConeScan scan(2 * kPi, 60, sheppLogan3D(), 64);
    const double t = 5.0 * kPi / 180.0;
    for (ProjectionMatrix& p : scan.geometry.views) {
        ProjectionMatrix q = p;
        for (int r = 0; r < 3; ++r) {
            q.m[4 * r + 1] = p.m[4 * r + 1] * std::cos(t) + p.m[4 * r + 2] * std::sin(t);
            q.m[4 * r + 2] = -p.m[4 * r + 1] * std::sin(t) + p.m[4 * r + 2] * std::cos(t);
        }
        p = q;
    }
    ASSERT_NE(scan.geometry.views[0].m[2], 0.0);
    scan.projections = projectPhantomCone(scan.phantom, scan.geometry);
    const FilteredProjections filtered = fdkFilter(scan.geometry, scan.projections.data);
    std::vector<float> fast(scan.grid.voxels()), unclipped(scan.grid.voxels()), reference(scan.grid.voxels());
    backprojectCone(filtered, scan.grid, 1.0, fast, {});
    backprojectCone(filtered, scan.grid, 1.0, unclipped, {.clip = false});
    backprojectCone(filtered, scan.grid, 1.0, reference, {.backprojector = ConeBackprojector::Reference});
    EXPECT_EQ(fast, unclipped);
    EXPECT_LT(relativeDifference(fast, reference), 1e-5);
}

TEST(Fdk, ShortScanWithParkerWeightsMatchesTheFullScan) {
    // 180 degrees plus the fan angle plus a few steps.
    const ConeScan& full = fullScan();
    const double fan = 2.0 * std::atan(48.0 / 300.0);
    const ConeScan shortScan(kPi + fan + 6.0 * kPi / 180.0, 120);
    const ImageStack truth = rasterizePhantomVolume(full.phantom, full.grid, 3);
    const ImageStack volume = shortScan.reconstruct();
    const double shortError = sliceError(volume, truth, 16);
    const double fullError = sliceError(full.reconstruct(), truth, 16);
    std::cout << "MEASURED cone short-scan mid-plane relative error " << shortError << " (full scan " << fullError << ")\n";
    EXPECT_LT(shortError, 1.1 * fullError); // Parker with the wrong sense of gamma: 1.4x

    // Less than 180 degrees: refused.
    const ConeScan tooShort(kPi * 0.9, 90);
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { tooShort.reconstruct(); }),
                         "a short scan needs 180 degrees plus the fan angle"));
}

TEST(Fdk, FanBeamReconstructsThe2DPhantom) {
    ConeScan scan(2 * kPi, 180, sheppLogan2D(), 1);
    scan.grid = {64, 64, 1, 0.5, {}};
    ASSERT_EQ(scan.projections.height, 1);
    const ImageStack truth = rasterizePhantomVolume(scan.phantom, scan.grid, 3);
    const ImageStack reference = scan.reconstruct({.backprojector = ConeBackprojector::Reference});
    const ImageStack fast = scan.reconstruct();
    const double error = sliceError(reference, truth, 0);

    // The same phantom scanned with a parallel beam on a 64-bin detector.
    PhantomSpec spec;
    spec.shapes = sheppLogan2D();
    spec.bins = 64;
    Geometry parallel;
    parallel.angles = uniformAngles(180);
    parallel.bins = 64;
    parallel.axis = parallel.detectorCentre();
    auto plan = makeCpuReferenceBackend()->createPlan(ReconGeometry::fullSlice(parallel), {});
    plan->setSinograms(projectPhantom(spec, parallel.angles, 2).data, 1);
    Image slice(64, 64);
    plan->backproject(slice.data);
    const double parallelError = compareImages(slice, rasterizePhantom(spec, 0, 64, 64, 3),
                                               discMask(64, 64, 0.85 * 0.9 * 32)).relativeError;
    std::cout << "MEASURED fan-beam relative error " << error << " (parallel beam " << parallelError << ")\n";
    EXPECT_LT(error, 1.05 * parallelError);
    EXPECT_NEAR(meanRatio(reference, truth, 0), 1.0, 0.01);
    EXPECT_LT(relativeDifference(fast.data, reference.data), 1e-5);
}

TEST(Fdk, CurvedProjectionsResampledMatchTheVirtualFlatDetectorsProjections) {
    for (const int rows : {1, 64}) {
        CircularConeGeometry curved = wideScan(DetectorShape::Curved, rows);
        curved.angles = uniformAngles(8, 2 * kPi);
        curved.offsetU = 2.5; // off-centre, so the flat detector is not symmetric either
        const ConeScan scan(curved, rows == 1 ? sheppLogan2D() : sheppLogan3D());
        const ImageStack flat = projectPhantomCone(scan.phantom, scan.geometry, 2);
        const double resampled = relativeDifference(resampleToFlatDetector(curved, scan.projections.data), flat.data);
        const double unresampled = relativeDifference(scan.projections.data, flat.data);
        std::cout << "MEASURED " << rows << " row(s): curved projections resampled vs the flat detector's, relative "
                  << "difference " << resampled << " (not resampled " << unresampled << ")\n";
        // 0.041 (one row), 0.048: linear interpolation across the sharp
        // edges of the phantom's skull; not resampled: 0.21, 0.40.
        EXPECT_LT(resampled, 0.06);
        EXPECT_GT(unresampled, 4.0 * resampled);
    }
    const CircularConeGeometry curved = wideScan(DetectorShape::Curved, 4);
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { resampleToFlatDetector(curved, std::vector<float>(7)); }),
                         "(expected views x rows x columns = 180 x 4 x 96)"));
}

TEST(Fdk, FanBeamOnACurvedDetectorReconstructsThe2DPhantom) {
    ConeScan curved(wideScan(DetectorShape::Curved, 1), sheppLogan2D());
    ConeScan flat(wideScan(DetectorShape::Flat, 1), sheppLogan2D());
    const VolumeGrid grid{64, 64, 1, 0.5, {}};
    curved.grid = flat.grid = grid;
    const ImageStack truth = rasterizePhantomVolume(curved.phantom, grid, 3);
    const FdkOptions reference{.backprojector = ConeBackprojector::Reference};
    const ImageStack volume = curved.reconstruct(reference);
    const double error = sliceError(volume, truth, 0);
    const double flatError = sliceError(flat.reconstruct(reference), truth, 0);
    // The curved projections taken for a flat detector of their pitch.
    CircularConeGeometry misread = curved.circular;
    misread.detector = DetectorShape::Flat;
    const double misreadError =
        sliceError(reconstructFdk(ConeGeometry::circular(misread), curved.projections.data, grid, reference), truth, 0);
    std::cout << "MEASURED curved fan-beam relative error " << error << " (flat detector " << flatError
              << ", curved read as flat " << misreadError << "), mean ratio " << meanRatio(volume, truth, 0) << "\n";
    // 0.19 against the flat detector's 0.13: one more linear interpolation
    // of the skull's sharp edges, where the flat projections are exact. The
    // flat fan-beam test's bound, 1.05 x the parallel beam's error, is 0.19.
    EXPECT_LT(error, 1.5 * flatError);
    EXPECT_NEAR(meanRatio(volume, truth, 0), 1.0, 0.01);
    EXPECT_GT(misreadError, 2.0 * error); // 0.49
}

TEST(Fdk, ConeBeamOnACurvedDetectorMatchesThePhantomInTheMidPlane) {
    const ConeScan curved(wideScan(DetectorShape::Curved, 64), sheppLogan3D());
    const ImageStack truth = rasterizePhantomVolume(curved.phantom, curved.grid, 3);
    const ImageStack volume = curved.reconstruct();
    const double mid = sliceError(volume, truth, 16);
    const double flatMid = sliceError(ConeScan(wideScan(DetectorShape::Flat, 64), sheppLogan3D()).reconstruct(), truth, 16);
    std::cout << "MEASURED curved cone-beam mid-plane relative error " << mid << " (flat detector " << flatMid
              << "), mean ratio " << meanRatio(volume, truth, 16) << "\n";
    // As for the fan beam: 0.19 against 0.13, the cost of the resampling.
    EXPECT_LT(mid, 1.5 * flatMid);
    EXPECT_NEAR(meanRatio(volume, truth, 16), 1.0, 0.01);
}

TEST(Fdk, MatrixFileGeometryGivesTheCircularResult) {
    const ConeScan& scan = fullScan();
    test::TempDir dir;
    {
        std::ofstream f(dir / "views.txt");
        f << std::setprecision(17);
        for (const ProjectionMatrix& p : scan.geometry.views) {
            for (double v : p.m) f << v * 3.0 << ' '; // any scale
            f << '\n';
        }
    }
    ConeGeometry fromFile;
    fromFile.columns = scan.geometry.columns;
    fromFile.rows = scan.geometry.rows;
    fromFile.views = readProjectionMatrices(dir / "views.txt");
    const ImageStack a = scan.reconstruct();
    const ImageStack b = reconstructFdk(fromFile, scan.projections.data, scan.grid);
    EXPECT_LT(relativeDifference(b.data, a.data), 1e-6);
}

TEST(Fdk, BadInputIsRefusedNamingWhatWasExpected) {
    const ConeScan& scan = fullScan();
    std::vector<float> tooFew(scan.projections.data.begin(), scan.projections.data.end() - 1);
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { fdkFilter(scan.geometry, tooFew); }),
                         "(expected views x rows x columns = 180 x 64 x 96)"));
    ConeGeometry oneDirection = scan.geometry;
    for (auto& v : oneDirection.views) v = scan.geometry.views[0];
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { fdkFilter(oneDirection, scan.projections.data); }),
                         "FDK needs a circular orbit"));
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([] { parseConeBackprojector("gpu"); }),
                         "expected cpu, cpu-reference or cuda"));
}

} // namespace
} // namespace tomo
