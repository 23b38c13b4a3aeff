// The cone-beam back-projector "cuda" (kernels/cuda/cone_backproject.cu)
// against cpu-reference on an analytic cone-beam phantom, with slabs and
// view batches; without a device, its error. Runs the device parts on a GPU
// machine; skips (visibly) elsewhere.
#include "cone_test_scan.h"
#include "cuda_test_util.h"
#include "test_support.h"

#include "tomo/fdk.h"
#include "tomo/phantom.h"
#include "tomo/preview.h"

#include <cmath>
#include <numbers>

namespace tomo::cudatest {
namespace {

/// A circular scan over 360 degrees, magnification 2 (source 150 mm from the axis).
ConeGeometry circularScan(int views, int columns, int rows, double pixelWidth) {
    return ConeGeometry::circular(test::circularCone(views, columns, rows, pixelWidth, 150.0, 300.0));
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

/// Smooth made-up filtered views of `geometry` (the transfer paths do not
/// care what the values mean), with its matrices normalised as fdkFilter's.
FilteredProjections smoothViews(const ConeGeometry& geometry) {
    FilteredProjections f;
    f.columns = geometry.columns;
    f.rows = geometry.rows;
    for (const ProjectionMatrix& p : geometry.views) f.views.push_back(describeView(p, "view").normalised);
    f.data.resize(static_cast<std::size_t>(f.columns) * f.rows * f.views.size());
    for (std::size_t i = 0; i < f.data.size(); ++i) {
        const std::size_t c = i % f.columns, r = i / f.columns % f.rows, v = i / f.columns / f.rows;
        f.data[i] = static_cast<float>(std::sin(0.05 * c + 0.1 * v) * std::cos(0.07 * r));
    }
    return f;
}

TEST(CudaCone, LargeTransfersThroughPinnedStagingGiveTheSameVolume) {
    TOMO_REQUIRE_CUDA();
    // 341 MB of views (uploaded through the staging buffers) into a small
    // volume, then 40 small views into a 272 MB volume (downloaded through them).
    const struct {
        int views, columns, rows;
        VolumeGrid grid;
    } cases[] = {{260, 640, 512, {32, 32, 32, 4.0, {}}}, {40, 64, 64, {512, 512, 260, 0.1, {}}}};
    for (const auto& c : cases) {
        const FilteredProjections f = smoothViews(circularScan(c.views, c.columns, c.rows, 1.0));
        const auto cpu = backproject(f, c.grid, ConeBackprojector::Fast);
        const auto gpu = backproject(f, c.grid, ConeBackprojector::Cuda);
        EXPECT_EQ(std::count(gpu.begin(), gpu.end(), -12345.0f), 0);
        const double diff = relativeDifference(gpu, cpu);
        std::printf("MEASURED cone cuda, %d views of %dx%d -> %dx%dx%d, vs cpu %.3g\n", c.views, c.columns, c.rows,
                    c.grid.nx, c.grid.ny, c.grid.nz, diff);
        EXPECT_LT(diff, 2e-3);
    }
}

TEST(CudaCone, WholeFdkOnTheGpuMatchesTheCpu) {
    TOMO_REQUIRE_CUDA();
    // Weights, cuFFT ramp filter and back-projection on the device against
    // the CPU's fdkFilter + cpu: a full turn, a short scan (Parker weights),
    // and 262 MB of projections (pinned staging, several filter chunks).
    ConePhantom phantom;
    phantom.radius = 14.0;
    phantom.attenuation = 0.02;
    struct Case {
        const char* name;
        ConeGeometry geometry;
        VolumeGrid grid;
    };
    const Case cases[] = {
        {"full turn", problem().geometry, problem().grid},
        {"short scan", ConeGeometry::circular(test::circularCone(150, 96, 64, 1.0, 150.0, 300.0, 1.45 * std::numbers::pi)),
         {64, 64, 33, 0.5, {}}},
        {"262 MB of views", circularScan(200, 640, 512, 0.25), {48, 48, 40, 0.5, {}}}};
    for (const Case& c : cases) {
        const ImageStack projections = projectPhantomCone(phantom, c.geometry);
        FdkOptions cpu;
        cpu.backprojector = ConeBackprojector::Fast;
        FdkOptions gpu;
        gpu.backprojector = ConeBackprojector::Cuda;
        ConeStageTimes times;
        gpu.times = &times;
        const ImageStack expected = reconstructFdk(c.geometry, projections.data, c.grid, cpu);
        const ImageStack got = reconstructFdk(c.geometry, projections.data, c.grid, gpu);
        const double diff = relativeDifference(got.data, expected.data);
        std::printf("MEASURED cone FDK on the GPU (%s) vs the CPU's %.3g; upload %.3g ms, filter %.3g ms, bp %.3g ms\n",
                    c.name, diff, times.upload * 1e3, times.filter * 1e3, times.backproject * 1e3);
        EXPECT_LT(diff, 2e-3) << c.name;
        EXPECT_GT(times.filter, 0.0) << c.name;
    }
}

/// A dataset declaring a circular scan (magnification 2, 1 mm pixels) of
/// the 3D Shepp-Logan of `radius` mm: what the workstation opens.
std::shared_ptr<DatasetReader> circularPhantomScan(int views, int columns, int rows, double radius) {
    ConePhantom phantom;
    phantom.radius = radius;
    phantom.attenuation = 0.02;
    return makeConePhantomDataset(phantom, test::circularCone(views, columns, rows, 1.0, 150.0, 300.0));
}

TEST(CudaCone, LivePreviewOfAConeScanRunsOnTheGpu) {
    TOMO_REQUIRE_CUDA();
    // The workstation's path: a scan declaring a cone beam, "auto" and any
    // GPU strategy take the CUDA back-projector, cpu-reference the oracle.
    PreviewSession session(circularPhantomScan(240, 160, 120, 30.0));
    PreviewRequest request;
    request.row = 70;
    request.axis = 80.25; // off the centre: the detector moves
    request.options.strategy = "cpu-reference";
    const PreviewResult reference = session.run(request);
    for (const char* strategy : {"auto", "tex-optimized", "alu"}) {
        request.options.strategy = strategy;
        CancelToken token; // cancellable: bands of slice rows
        const PreviewResult gpu = session.run(request, &token);
        EXPECT_TRUE(gpu.divergent);
        EXPECT_EQ(gpu.strategy, "cuda") << strategy;
        const double diff = relativeDifference(gpu.slice.data, reference.slice.data);
        std::printf("MEASURED cone preview (%s -> cuda) vs cpu-reference %.3g, %d band(s), %.3g ms\n", strategy, diff,
                    gpu.bands, 1e3 * gpu.secondsTotal);
        EXPECT_LT(diff, 2e-3) << strategy;
    }
    // Back to the CPU with nothing else changed: it filters what the GPU skipped.
    request.options.strategy = "cpu-reference";
    EXPECT_EQ(session.run(request).slice.data, reference.slice.data);
}

TEST(CudaCone, LiveIterativeSliceOfAFanScanRunsOnTheGpuPair) {
    TOMO_REQUIRE_CUDA();
    // The workstation's iterative slice of a fan-beam scan: "auto" and any
    // GPU strategy take the GPU's divergent pair, cpu-reference the CPU's.
    PreviewSession session(circularPhantomScan(180, 128, 1, 25.0));
    PreviewRequest request;
    request.axis = 64.25; // off the centre: the detector moves
    request.region = Region{10, 20, 100, 80};
    request.options.strategy = "cpu-reference";
    request.options.iterative.method = Method::Sirt;
    request.options.iterative.iterations = 20;
    const PreviewResult cpu = session.run(request);
    for (const char* strategy : {"auto", "alu"}) {
        request.options.strategy = strategy;
        CancelToken token;
        const PreviewResult gpu = session.run(request, &token);
        EXPECT_TRUE(gpu.divergent);
        ASSERT_TRUE(gpu.iterative.has_value());
        EXPECT_EQ(gpu.iterative->iterations, 20);
        EXPECT_NE(gpu.strategy, cpu.strategy); // the GPU pair's name
        const double diff = relativeDifference(gpu.slice.data, cpu.slice.data);
        std::printf("MEASURED fan-beam SIRT live slice (%s -> %s) vs the CPU pair's %.3g, %.3g ms\n", strategy,
                    gpu.strategy.c_str(), diff, 1e3 * gpu.secondsTotal);
        EXPECT_LT(diff, 1e-3) << strategy;
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
