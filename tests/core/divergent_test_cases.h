// The fan- and cone-beam geometries and grids of the divergent-beam pairs'
// tests, shared by the CPU (test_projector_fan.cpp) and the GPU
// (tests/cuda/test_cuda_divergent_projector.cpp).
#pragma once

#include "cone_test_scan.h"
#include "projector_test_helpers.h"

#include "tomo/cone_geometry.h"
#include "tomo/cone_scan.h"
#include "tomo/dataset.h"
#include "tomo/fdk.h"
#include "tomo/geometry.h"
#include "tomo/metrics.h"
#include "tomo/phantom.h"
#include "tomo/projector.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

namespace tomo::divergenttest {

/// A flat-detector fan: `views` over `range`, 80 columns of 1.2 at the
/// detector (0.8 at the axis: source-axis 200, source-detector 300), the
/// central ray `offset` columns off the detector centre.
inline ConeGeometry fan(int views, double range, double offset = 0.0) {
    CircularConeGeometry c;
    c.angles = uniformAngles(views, range);
    c.sourceAxis = 200.0;
    c.sourceDetector = 300.0;
    c.columns = 80;
    c.pixelWidth = 1.2;
    c.offsetU = offset;
    return ConeGeometry::circular(c);
}

inline VolumeGrid box(int nx, int ny, int nz, double voxel, std::array<double, 3> centre = {}) {
    VolumeGrid g;
    g.nx = nx;
    g.ny = ny;
    g.nz = nz;
    g.voxelSize = voxel;
    g.centre = centre;
    return g;
}

inline VolumeGrid slice(int nx, int ny, double voxel, double cx = 0.0, double cy = 0.0) {
    return box(nx, ny, 1, voxel, {cx, cy, 0.0});
}

/// A circular cone beam: `views` over 360 degrees, 48 x 40 pixels of 1.5 at
/// the detector (magnification 2: source-axis 150, source-detector 300),
/// the central ray `offsetU`, `offsetV` pixels off the detector centre.
inline ConeGeometry cone(int views, double offsetU = 0.0, double offsetV = 0.0) {
    CircularConeGeometry c = test::circularCone(views, 48, 40, 1.5, 150.0, 300.0);
    c.offsetU = offsetU;
    c.offsetV = offsetV;
    return ConeGeometry::circular(c);
}

/// The cone-beam tests' volume: a ball of radius 10 (attenuation 1) filling
/// most of 24 x 24 x 16 voxels of 1, seen from `views` views of cone();
/// the volume and its projections by the CPU pair.
struct Ball {
    ConeGeometry geometry;
    VolumeGrid grid;
    ImageStack truth;
    std::vector<float> data;
};

inline Ball ball(int views) {
    Ball b{cone(views), box(24, 24, 16, 1.0), {}, {}};
    ConePhantom phantom;
    phantom.radius = 10.0;
    phantom.attenuation = 1.0;
    b.truth = rasterizePhantomVolume(phantom, b.grid, 2);
    b.data = projtest::forwardOf(*makeConeProjector(b.geometry, b.grid, {}, 0), b.truth.data, 1);
    return b;
}

/// Pearson correlation of a and b over the pixels inside `mask`.
inline double correlation(std::span<const float> a, std::span<const float> b, std::span<const std::uint8_t> mask) {
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0, n = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!mask[i]) continue;
        sa += a[i], sb += b[i], saa += double(a[i]) * a[i], sbb += double(b[i]) * b[i], sab += double(a[i]) * b[i];
        n += 1;
    }
    return (sab - sa * sb / n) / std::sqrt((saa - sa * sa / n) * (sbb - sb * sb / n));
}

struct LimitedAngle {
    double fdkCorrelation = 0.0;
    double tvCorrelation = 0.0;
    std::vector<float> tv; ///< the TV image
};

/// The limited-angle comparison on HTC2022's phantom ta (`path`:
/// flat-detector fan beam, 721 views over 360 degrees): the full-angle FDK
/// is the reference; from the 181 views of the first 90 degrees, FDK (the
/// other views zero: what FDK can make of a limited angle) and TV (FISTA,
/// lambda 2, 100 iterations, non-negative) on the fan-beam pair of the CPU
/// (`gpu` unset) or of GPU *gpu; correlation with the reference inside the
/// disc, on a 256^2 grid of twice the axis pixel.
inline LimitedAngle htcLimitedAngle(const std::filesystem::path& path, std::optional<int> gpu) {
    OpenOptions open;
    open.allowDivergentBeam = true;
    const auto reader = openDataset(path, open);
    const ConeSetup setup = coneSetup(reader->info());
    const std::vector<float> projections = readConeProjections(*reader, setup);
    VolumeGrid grid = setup.grid;
    grid.nx = grid.ny = 256;
    grid.voxelSize *= 2.0;
    const int columns = setup.geometry.columns;
    const int subset = 181; // 0 to 90 degrees in steps of 0.5

    FdkOptions fdk;
    fdk.filter.window = FilterWindow::RamLak;
    const ImageStack reference = reconstructFdk(setup.geometry, projections, grid, fdk);
    std::vector<float> zeroFilled(projections.size(), 0.0f);
    std::copy(projections.begin(), projections.begin() + static_cast<std::ptrdiff_t>(subset) * columns,
              zeroFilled.begin());
    const ImageStack limitedFdk = reconstructFdk(setup.geometry, zeroFilled, grid, fdk);

    ConeGeometry limited = setup.geometry;
    limited.views.resize(subset);
    IterativeOptions tv = projtest::method(Method::Tv, 100);
    tv.tvWeight = 2.0; // of 0.5, 2 and 6 the best (correlation 0.744, 0.756, 0.732)
    tv.bounds.lower = 0.0;
    auto pair = makeFanProjector(limited, grid, tv, 0, gpu);
    projtest::Solved solved = projtest::solve(
        *pair, std::span<const float>(projections).first(static_cast<std::size_t>(subset) * columns), 1, tv);

    const std::vector<std::uint8_t> disc = discMask(grid.nx, grid.ny, 225.0 / 2.0);
    LimitedAngle out;
    out.fdkCorrelation = correlation(limitedFdk.data, reference.data, disc);
    out.tvCorrelation = correlation(solved.images, reference.data, disc);
    out.tv = std::move(solved.images);
    return out;
}

} // namespace tomo::divergenttest
