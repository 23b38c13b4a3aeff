// The divergent-beam projector pairs (makeFanProjector, makeConeProjector):
// the transpose, a disc's (a ball's) forward projection against its exact
// chords, the iterative methods on a cone-beam volume, bad input, and on the real
// HTC2022 fan-beam scan the limited-angle comparison: TV from 90
// degrees of views against FDK from the same views, each correlated with the
// full-angle FDK inside the disc.
#include "divergent_test_cases.h"
#include "projector_test_helpers.h"
#include "cone_test_scan.h"
#include "test_support.h"

#include "recon/divergent_ray.h"
#include "recon/divergent_setup.h"

#include "tomo/cone_scan.h"
#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/fdk.h"
#include "tomo/iterative.h"
#include "tomo/phantom.h"
#include "tomo/projector.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numbers>
#include <random>
#include <string>
#include <vector>

namespace tomo {
namespace {

using namespace projtest;
using namespace divergenttest;
constexpr double kPi = std::numbers::pi;

/// The message of the InvalidArgument f() throws, or "(accepted)".
template <class F>
std::string message(F&& f) {
    try {
        f();
    } catch (const InvalidArgument& e) {
        return std::string(e.what());
    }
    return std::string("(accepted)");
}

// <A x, y> = <x, A^T y> for random positive x, y: full and short scans, an
// off-centre detector, a non-square grid away from the axis, 1 and 3
// slices. Measured: up to 4.4e-15 relative (double); asserted 1e-12.
TEST(FanProjector, BackProjectionIsTheTranspose) {
    struct Case {
        const char* name;
        ConeGeometry geometry;
        VolumeGrid grid;
    };
    const std::vector<Case> cases = {{"full", fan(90, 2 * kPi), slice(64, 64, 0.8)},
                                     {"short, off-centre", fan(37, 0.6 * kPi, 3.3), slice(50, 70, 0.9, 4.0, -3.0)}};
    for (const Case& c : cases)
        for (int count : {1, 3}) {
            auto pair = makeFanProjector(c.geometry, c.grid, IterativeOptions{}, 0);
            ASSERT_TRUE(pair->isMatched());
            const std::size_t pixels = c.grid.voxels(), values = std::size_t(c.geometry.viewCount()) * 80;
            auto x = pair->vector(Space::Image, count), ax = pair->vector(Space::Sinogram, count);
            auto y = pair->vector(Space::Sinogram, count), aty = pair->vector(Space::Image, count);
            pair->upload(positiveValues(pixels * count, 5 + count), *x);
            pair->upload(positiveValues(values * count, 7 + count), *y);
            pair->forward(*x, *ax);
            pair->back(*y, *aty);
            const std::vector<double> left = pair->dot(*ax, *y), right = pair->dot(*x, *aty);
            for (int s = 0; s < count; ++s) {
                std::printf("MEASURED fan adjointness %s: %.3g\n", c.name, std::abs(left[s] / right[s] - 1.0));
                EXPECT_NEAR(left[s] / right[s], 1.0, 1e-12) << c.name << ", " << count << " slices, slice " << s;
            }
        }
}

// The CPU pair walks fan-beam rays with walkFan (no z): the samples of
// walk(), the GPU's, voxel for voxel and weight for weight, on every ray of
// a full scan of a grid off the axis and of a short scan off the centre.
TEST(FanProjector, FanWalkVisitsTheSamplesOfTheGeneralWalk) {
    struct Case {
        ConeGeometry geometry;
        VolumeGrid grid;
    };
    const std::vector<Case> cases = {{fan(90, 2 * kPi), slice(64, 64, 0.8)},
                                     {fan(37, 0.6 * kPi, 3.3), slice(50, 70, 0.9, 4.0, -3.0)}};
    std::size_t samples = 0;
    for (const Case& c : cases) {
        const divergent::Volume volume = divergentVolume(c.geometry, c.grid);
        ASSERT_TRUE(volume.fan);
        for (const divergent::View& view : divergentViews(c.geometry, c.grid))
            for (int u = 0; u < c.geometry.columns; ++u) {
                const divergent::Ray ray = divergent::trace(view, u, 0, volume);
                std::vector<std::pair<std::size_t, double>> general, fanOnly;
                divergent::walk(ray, volume, [&](std::size_t i, double w) { general.emplace_back(i, w); });
                divergent::walkFan(ray, volume, [&](std::size_t i, double w) { fanOnly.emplace_back(i, w); });
                ASSERT_EQ(fanOnly, general) << "column " << u;
                samples += general.size();
            }
    }
    EXPECT_GT(samples, 10000u);
}

// A uniform disc (mu = 1 per length unit, radius 20, off the axis), its
// pixels' covered fraction from 8 x 8 sub-samples: each ray's projection
// against the exact chord 2 sqrt(r^2 - distance^2). Measured relative RMSE
// 7.4e-3 over all rays (the pixels' edges); asserted 1.5e-2. A back-projector is no check of the chords, so this also pins the
// rays' geometry (source, fan angle, offset) to the matrices.
TEST(FanProjector, DiscProjectsToItsChords) {
    const ConeGeometry geometry = fan(60, 2 * kPi, 2.0);
    const VolumeGrid grid = slice(96, 96, 0.6);
    const double radius = 20.0, cx = 5.0, cy = -3.0;
    std::vector<float> image(grid.voxels());
    for (int j = 0; j < grid.ny; ++j)
        for (int i = 0; i < grid.nx; ++i) {
            int inside = 0;
            for (int a = 0; a < 8; ++a)
                for (int b = 0; b < 8; ++b)
                    inside += std::hypot(grid.x(i) + (a - 3.5) / 8 * grid.voxelSize - cx,
                                         grid.y(j) + (b - 3.5) / 8 * grid.voxelSize - cy) < radius;
            image[static_cast<std::size_t>(j) * grid.nx + i] = static_cast<float>(inside / 64.0 * grid.voxelSize);
        }
    auto pair = makeFanProjector(geometry, grid, IterativeOptions{}, 0);
    const std::vector<float> projected = forwardOf(*pair, image, 1);
    double err = 0.0, norm = 0.0;
    int crossing = 0;
    for (int p = 0; p < geometry.viewCount(); ++p) {
        const ViewFrame f = describeView(geometry.views[p], "view");
        for (int u = 0; u < geometry.columns; ++u) {
            const double t = (u - f.centreU) / f.focalU;
            double dx = f.normal[0] + t * f.axisU[0], dy = f.normal[1] + t * f.axisU[1];
            const double len = std::hypot(dx, dy);
            dx /= len, dy /= len;
            const double distance = std::abs((cx - f.source[0]) * dy - (cy - f.source[1]) * dx);
            const double chord = distance < radius ? 2.0 * std::sqrt(radius * radius - distance * distance) : 0.0;
            if (chord > 0.0) ++crossing;
            const double d = projected[static_cast<std::size_t>(p) * geometry.columns + u] - chord;
            err += d * d;
            norm += chord * chord;
        }
    }
    ASSERT_GT(crossing, 60 * 20); // the disc fills part of every view
    const double relative = std::sqrt(err / norm);
    std::cout << "MEASURED fan-beam disc: relative RMSE against the chords " << relative << "\n";
    EXPECT_LT(relative, 1.5e-2);
}

// The cone-beam pair's transpose: a centred box and one off the axis and
// off the mid-plane, an off-centre detector. Measured up to 6.9e-15; asserted
// 1e-12. A fan-beam detector (one row) gives the fan pair.
TEST(ConeProjector, BackProjectionIsTheTranspose) {
    struct Case {
        const char* name;
        ConeGeometry geometry;
        VolumeGrid grid;
    };
    const std::vector<Case> cases = {{"centred", cone(40), box(24, 24, 20, 1.0)},
                                     {"off the axis and the mid-plane", cone(33, 2.5, -3.0),
                                      box(20, 26, 14, 0.9, {2.0, -1.5, 3.0})}};
    for (const Case& c : cases) {
        auto pair = makeConeProjector(c.geometry, c.grid, IterativeOptions{}, 0);
        EXPECT_EQ(pair->name(), "cpu-reference cone-beam joseph, matched");
        const double gap = adjointnessGaps(*pair, 1, 5)[0];
        std::printf("MEASURED cone adjointness %s: %.3g\n", c.name, std::abs(gap));
        EXPECT_NEAR(gap, 0.0, 1e-12) << c.name;
    }
    EXPECT_EQ(makeConeProjector(fan(10, 2 * kPi), slice(16, 16, 1.0), {}, 0)->name(),
              "cpu-reference fan-beam joseph, matched");
}

// A uniform ball (radius 9, off the centre and the mid-plane), its voxels'
// covered fraction from 4^3 sub-samples: each ray's projection against the
// exact chord. Measured relative RMSE 3.17e-2 with voxels of 0.75 (12 across
// the radius) and 1.85e-2 with 0.375 (ratio 0.58: the voxels' edges and
// the bilinear interpolation's blur across the ray, both shrinking with
// the voxels); bounds 2x, the ratio below 0.65. A geometry error (a row or
// an offset misplaced) would not shrink. Pins the rays' geometry (the
// detector rows, offsets) to the matrices.
TEST(ConeProjector, BallProjectsToItsChords) {
    const ConeGeometry geometry = cone(36, 1.5, 2.0);
    const std::array<double, 3> centre = {1.5, -1.0, 2.0};
    const double radius = 9.0;
    double previous = 0.0;
    for (const VolumeGrid& grid : {box(32, 32, 32, 0.75), box(64, 64, 64, 0.375)}) {
        std::vector<float> volume(grid.voxels());
        for (int k = 0; k < grid.nz; ++k)
            for (int j = 0; j < grid.ny; ++j)
                for (int i = 0; i < grid.nx; ++i) {
                    int inside = 0;
                    for (int a = 0; a < 4; ++a)
                        for (int b = 0; b < 4; ++b)
                            for (int e = 0; e < 4; ++e) {
                                const double dx = grid.x(i) + (a - 1.5) / 4 * grid.voxelSize - centre[0];
                                const double dy = grid.y(j) + (b - 1.5) / 4 * grid.voxelSize - centre[1];
                                const double dz = grid.z(k) + (e - 1.5) / 4 * grid.voxelSize - centre[2];
                                inside += dx * dx + dy * dy + dz * dz < radius * radius;
                            }
                    volume[(static_cast<std::size_t>(k) * grid.ny + j) * grid.nx + i] =
                        static_cast<float>(inside / 64.0 * grid.voxelSize);
                }
        auto pair = makeConeProjector(geometry, grid, IterativeOptions{}, 0);
        const std::vector<float> projected = forwardOf(*pair, volume, 1);
        double err = 0.0, norm = 0.0;
        int crossing = 0;
        for (int p = 0; p < geometry.viewCount(); ++p) {
            const ViewFrame f = describeView(geometry.views[p], "view");
            for (int v = 0; v < geometry.rows; ++v)
                for (int u = 0; u < geometry.columns; ++u) {
                    const double tu = (u - f.centreU) / f.focalU, tv = (v - f.centreV) / f.focalV;
                    double d[3], dd = 0.0, along = 0.0, ww = 0.0;
                    for (int a = 0; a < 3; ++a) {
                        d[a] = f.normal[a] + tu * f.axisU[a] + tv * f.axisV[a];
                        dd += d[a] * d[a];
                    }
                    for (int a = 0; a < 3; ++a) {
                        const double w = centre[a] - f.source[a];
                        along += w * d[a] / std::sqrt(dd);
                        ww += w * w;
                    }
                    const double distance2 = ww - along * along;
                    const double chord = distance2 < radius * radius ? 2.0 * std::sqrt(radius * radius - distance2) : 0.0;
                    if (chord > 0.0) ++crossing;
                    const double e =
                        projected[(static_cast<std::size_t>(p) * geometry.rows + v) * geometry.columns + u] - chord;
                    err += e * e;
                    norm += chord * chord;
                }
        }
        ASSERT_GT(crossing, 36 * 200); // the ball's shadow in every view
        const double relative = std::sqrt(err / norm);
        std::cout << "MEASURED cone-beam ball, voxels of " << grid.voxelSize << ": relative RMSE against the chords "
                  << relative << "\n";
        EXPECT_LT(relative, grid.nx == 32 ? 6.4e-2 : 3.2e-2);
        if (previous > 0.0) {
            EXPECT_LT(relative / previous, 0.65);
        }
        previous = relative;
    }
}

// SIRT and CGLS on a cone-beam volume (consistent data from the pair): the
// residual falls at every iteration and the volume approaches the phantom.
// Measured: SIRT 1 -> 3.95e-2 (50 iterations), error vs phantom 0.596 (at 3)
// -> 0.245; CGLS 0.379 -> 7.5e-3 (20), 0.462 -> 0.066.
TEST(ConeProjector, IterativeMethodsConvergeOnAVolume) {
    const Ball b = ball(60);
    const ImageStack& truth = b.truth;
    const std::vector<float>& consistent = b.data;
    auto pair = makeConeProjector(b.geometry, b.grid, IterativeOptions{}, 0);
    for (const auto& [m, iterations] : {std::pair{Method::Sirt, 50}, std::pair{Method::Cgls, 20}}) {
        std::vector<double> errors;
        const Solved run = solve(*pair, consistent, 1, method(m, iterations), [&](const IterationState& s) {
            if (s.iteration == 3 || s.iteration == iterations) {
                std::vector<float> image(truth.data.size());
                s.image(image);
                errors.push_back(relativeError(image, truth.data));
            }
            return true;
        });
        for (std::size_t k = 1; k < run.residuals.size(); ++k)
            ASSERT_LE(run.residuals[k][0], run.residuals[k - 1][0]) << methodName(m) << " iteration " << k + 1;
        std::printf("MEASURED cone-beam %s: residual %.3g -> %.3g, error vs phantom %.3g -> %.3g\n",
                    std::string(methodName(m)).c_str(), run.residuals.front()[0], run.residuals.back()[0], errors[0],
                    errors[1]);
        EXPECT_LT(run.residuals.back()[0], 0.2 * run.residuals.front()[0]) << methodName(m);
        EXPECT_LT(errors[1], 0.8 * errors[0]) << methodName(m);
    }
}

// TV on a volume (3 axes: its planes are coupled too): a ball of 10 in 24
// x 24 x 16 voxels from 20 noisy views (Gaussian, 3 % of the largest
// projection). Measured error against the phantom: SIRT (40 iterations)
// 0.341, CGLS (10) 0.289, TV (lambda 0.2, 60 iterations) 0.158; of lambda
// 0.03, 0.1, 0.2, 0.3: 0.295, 0.187, 0.158, 0.173. Asserted: TV below 0.6x
// SIRT's and 0.7x CGLS's.
TEST(ConeProjector, TvOnAVolumeBeatsSirtOnNoisyFewViews) {
    const Ball b = ball(20);
    std::vector<float> data = b.data;
    const float peak = *std::max_element(data.begin(), data.end());
    std::mt19937 random(3);
    std::normal_distribution<float> noise(0.0f, 0.03f * peak);
    for (float& v : data) v += noise(random);
    const auto errorOf = [&](const IterativeOptions& o) {
        return relativeError(solve(*makeConeProjector(b.geometry, b.grid, o, 0), data, 1, o).images, b.truth.data);
    };
    IterativeOptions tv = method(Method::Tv, 60);
    tv.tvWeight = 0.2;
    const double sirt = errorOf(method(Method::Sirt, 40)), cgls = errorOf(method(Method::Cgls, 10));
    const double volumeTv = errorOf(tv);
    std::printf("MEASURED cone-beam, 20 noisy views: error vs phantom SIRT %.4f, CGLS %.4f, TV %.4f\n", sirt, cgls,
                volumeTv);
    EXPECT_LT(volumeTv, 0.6 * sirt);
    EXPECT_LT(volumeTv, 0.7 * cgls);
}

TEST(ConeProjector, BadInputIsRefused) {
    IterativeOptions unmatched;
    unmatched.matched = false;
    EXPECT_NE(message([&] { makeConeProjector(cone(10), box(16, 16, 8, 1.0), unmatched, 0); }).find("only the matched"),
              std::string::npos);
    // A detector as tall as it is far from the source: a cone over 45 degrees.
    const ConeGeometry steep = ConeGeometry::circular(test::circularCone(10, 48, 400, 1.5, 150.0, 300.0));
    EXPECT_NE(message([&] { makeConeProjector(steep, box(16, 16, 8, 1.0), {}, 0); }).find("a cone over 45 degrees"),
              std::string::npos);
}

TEST(FanProjector, BadInputIsRefused) {
    const VolumeGrid grid = slice(32, 32, 0.8);
    ConeGeometry twoRows = fan(10, 2 * kPi);
    twoRows.rows = 2;
    EXPECT_NE(message([&] { makeFanProjector(twoRows, grid, {}, 0); }).find("the detector has 2 rows (expected 1"),
              std::string::npos);
    VolumeGrid thick = grid;
    thick.nz = 2;
    EXPECT_NE(message([&] { makeFanProjector(fan(10, 2 * kPi), thick, {}, 0); }).find("the volume has 2 slices"),
              std::string::npos);
    IterativeOptions unmatched;
    unmatched.matched = false;
    EXPECT_NE(message([&] { makeFanProjector(fan(10, 2 * kPi), grid, unmatched, 0); }).find("only the matched"),
              std::string::npos);
    VolumeGrid above = grid;
    above.centre[2] = 5.0;
    EXPECT_NE(message([&] { makeFanProjector(fan(10, 2 * kPi), above, {}, 0); }).find("does not lie in the slice's plane"),
              std::string::npos);
    auto pair = makeFanProjector(fan(10, 2 * kPi), grid, {}, 0);
    EXPECT_NE(message([&] { pair->setAxis(1.0, {}); }).find("no rotation axis to move"), std::string::npos);
    // The FBP start is FDK, which refuses a scan short of 180 degrees + the fan.
    auto narrow = makeFanProjector(fan(20, 0.5 * kPi), grid, {}, 0);
    auto b = narrow->vector(Space::Sinogram, 1);
    auto x = narrow->vector(Space::Image, 1);
    EXPECT_NE(message([&] { narrow->filteredBackprojection(*b, *x); }).find("a short scan needs 180 degrees"),
              std::string::npos);
}

// HTC2022 phantom ta (divergent_test_cases.h's htcLimitedAngle): from the
// 181 views of the first 90 degrees, TV on the fan-beam pair against FDK
// of the same views, each correlated with the full-angle FDK inside the
// disc. Measured: FDK 0.686, TV 0.756; asserted: TV above FDK by at least
// half the measured gap (0.035).
TEST(FanProjectorRealData, LimitedAngleTvIsCloserToTheFullScanThanFdk) {
    const std::filesystem::path path = test::realData("helsinki_htc2022_fanbeam/htc2022_ta.h5");
    TOMO_REQUIRE_FILE(path);
    const LimitedAngle result = htcLimitedAngle(path, std::nullopt);
    std::cout << "MEASURED HTC2022 ta, 90 degrees of 360: correlation with the full-angle FDK inside the disc: FDK "
              << result.fdkCorrelation << ", TV " << result.tvCorrelation << "\n";
    EXPECT_GT(result.tvCorrelation, result.fdkCorrelation + 0.035);
}

} // namespace
} // namespace tomo
