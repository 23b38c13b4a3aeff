// The cone-beam back-projector "cuda" (kernels/cuda/cone_backproject.cu)
// against cpu-reference on an analytic cone-beam phantom, with slabs and
// view batches; without a device, its error. Runs the device parts on a GPU
// machine; skips (visibly) elsewhere.
#include "cuda_test_util.h"
#include "test_support.h"

#include "tomo/fdk.h"
#include "tomo/phantom.h"
#include "tomo/preview.h"

#include <numbers>

namespace tomo::cudatest {
namespace {

/// A circular scan over 360 degrees, magnification 2 (source 150 mm from the axis).
ConeGeometry circularScan(int views, int columns, int rows, double pixelWidth) {
    CircularConeGeometry c;
    c.angles = uniformAngles(views, 2 * std::numbers::pi);
    c.sourceAxis = 150.0;
    c.sourceDetector = 300.0;
    c.columns = columns;
    c.rows = rows;
    c.pixelWidth = pixelWidth;
    return ConeGeometry::circular(c);
}

/// 180 views over 360 degrees of the 3D Shepp-Logan on a 96 x 64 detector,
/// a 64 x 64 x 33 volume (33: not a multiple of the 8 voxels a thread takes).
struct ConeProblem {
    ConeGeometry geometry;
    VolumeGrid grid{64, 64, 33, 0.5, {}};
    FilteredProjections filtered;

    ConeProblem() {
        geometry = circularScan(180, 96, 64, 1.0);
        ConePhantom phantom;
        phantom.radius = 0.9 * 32 * grid.voxelSize;
        phantom.attenuation = 0.02;
        filtered = fdkFilter(geometry, projectPhantomCone(phantom, geometry, 2).data);
    }
};

const ConeProblem& problem() {
    static const ConeProblem p;
    return p;
}

using test::relativeDifference;

std::vector<float> backproject(const FilteredProjections& f, const VolumeGrid& grid, ConeBackprojector b) {
    (void)BackendRegistry::instance(); // installs the GPU back-projector
    std::vector<float> volume(grid.voxels(), -12345.0f);
    backprojectCone(f, grid, 1.0, volume, {.backprojector = b});
    return volume;
}

TEST(CudaCone, MatchesCpuReference) {
    TOMO_REQUIRE_CUDA();
    const ConeProblem& p = problem();
    const auto reference = backproject(p.filtered, p.grid, ConeBackprojector::Reference);
    const auto gpu = backproject(p.filtered, p.grid, ConeBackprojector::Cuda);
    EXPECT_EQ(std::count(gpu.begin(), gpu.end(), -12345.0f), 0);
    const double diff = relativeDifference(gpu, reference);
    std::printf("MEASURED cone cuda vs cpu-reference relative difference %.3g\n", diff);
    // The texture unit's bilinear weights have 8 fractional bits (as the
    // parallel-beam texture kernels: <= 2e-3 there).
    EXPECT_LT(diff, 2e-3);
}

TEST(CudaCone, ViewBatchesAndAnOffsetGridGiveTheSameVolume) {
    TOMO_REQUIRE_CUDA();
    // 1500 views: two batches of the 1024 whose matrices fit constant memory,
    // the second added to the first; a grid off the isocentre.
    const ConeGeometry geometry = circularScan(1500, 48, 24, 2.0);
    ConePhantom phantom;
    phantom.radius = 14.0;
    phantom.attenuation = 0.02;
    const FilteredProjections f = fdkFilter(geometry, projectPhantomCone(phantom, geometry, 1).data);
    const VolumeGrid grid{40, 36, 17, 0.75, {1.5, -2.0, 1.0}};
    const auto reference = backproject(f, grid, ConeBackprojector::Reference);
    const auto gpu = backproject(f, grid, ConeBackprojector::Cuda);
    const double diff = relativeDifference(gpu, reference);
    std::printf("MEASURED cone cuda (2 view batches, offset grid) vs cpu-reference %.3g\n", diff);
    EXPECT_LT(diff, 2e-3);
}

TEST(CudaCone, LivePreviewOfAConeScanRunsOnTheGpu) {
    TOMO_REQUIRE_CUDA();
    // The workstation's path: a scan declaring a cone beam, "auto" and any
    // GPU strategy take the CUDA back-projector, cpu-reference the oracle.
    CircularConeGeometry c;
    c.angles = uniformAngles(240, 2 * std::numbers::pi);
    c.sourceAxis = 150.0;
    c.sourceDetector = 300.0;
    c.columns = 160;
    c.rows = 120;
    c.pixelWidth = 1.0;
    ConePhantom phantom;
    phantom.radius = 30.0;
    phantom.attenuation = 0.02;
    PreviewSession session(makeConePhantomDataset(phantom, c));
    PreviewRequest request;
    request.row = 70;
    request.axis = 80.25; // off the centre: the detector moves
    request.options.strategy = "cpu-reference";
    const PreviewResult reference = session.run(request);
    for (const char* strategy : {"auto", "tex-optimized", "alu"}) {
        request.options.strategy = strategy;
        CancelToken token; // cancellable: bands of slice rows
        const PreviewResult gpu = session.run(request, &token);
        EXPECT_TRUE(gpu.fdk);
        EXPECT_EQ(gpu.strategy, "cuda") << strategy;
        const double diff = relativeDifference(gpu.slice.data, reference.slice.data);
        std::printf("MEASURED cone preview (%s -> cuda) vs cpu-reference %.3g, %d band(s), %.3g ms\n", strategy, diff,
                    gpu.bands, 1e3 * gpu.secondsTotal);
        EXPECT_LT(diff, 2e-3) << strategy;
    }
}

// ------------------------------------------------- without a GPU as well

TEST(CudaCone, WithoutDeviceTheErrorSaysWhy) {
    const std::string why = backendNamed("tex-optimized").unavailableReason();
    if (why.empty()) GTEST_SKIP() << "a CUDA device is present (this test covers machines without one)";
    const ConeProblem& p = problem();
    try {
        (void)backproject(p.filtered, p.grid, ConeBackprojector::Cuda);
        ADD_FAILURE() << "the cuda back-projector ran without a device";
    } catch (const DeviceError& e) {
        EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
    }
}

} // namespace
} // namespace tomo::cudatest
