// The CUDA "gridrec" against its CPU twin "cpu-gridrec" (the same method and
// tables; a gather on the GPU, a spread on the CPU: tests/core/test_gridrec.cpp
// checks both forms agree on every grid point) and against cpu-reference;
// batching, the streams' double buffers, page-locked callers, region, axis
// moves (with and without longer rows), the conveyor and the preview. Runs
// on a GPU machine; the registration and option tests run everywhere.
#include "cuda_test_util.h"

#include "tomo/dataset.h"
#include "tomo/gridrec.h"
#include "tomo/pipeline.h"
#include "tomo/preprocess.h"
#include "tomo/preview.h"

#include "test_support.h"

#include <cstring>
#include <numbers>

namespace tomo::cudatest {
namespace {

constexpr double kPi = std::numbers::pi;

/// CPU and GPU: float32 FFTs of other libraries (cuFFT, FFTW), float phase
/// factors (sincospif) against double recurrences, sums in another order;
/// the filters alone differ by up to ~5e-6 (the texture strategies'
/// nearest mode measures 7.7e-6 against cpu-reference, the filter's share
/// of it). The brief's bound.
constexpr double kTwinTolerance = 1e-5;

ReconOptions gridrecOptions(const std::string& strategy, const std::string& tuning = "") {
    ReconOptions o;
    o.strategy = strategy;
    o.tuning = tuning;
    o.threads = 2;
    return o;
}

/// Both twins on the dataset with `geometry`; compares them slice by slice.
Errors twins(const Dataset& d, const ReconGeometry& geometry, const std::string& tuning, const std::string& what) {
    const auto gpu = run(gridrec::kCudaName, d, geometry, gridrecOptions(gridrec::kCudaName, tuning));
    const auto cpu = run(gridrec::kCpuName, d, geometry, gridrecOptions(gridrec::kCpuName, tuning));
    const Errors e = compare(gpu, cpu, d.slices);
    report("gridrec vs cpu-gridrec " + what + (tuning.empty() ? "" : " " + tuning), e);
    EXPECT_TRUE(e.allWritten) << what;
    EXPECT_LE(e.relative, kTwinTolerance) << what << " " << tuning;
    return e;
}

std::vector<double> wobble(int n) {
    std::vector<double> offsets(static_cast<std::size_t>(n));
    for (int p = 0; p < n; ++p) offsets[p] = 0.25 * ((p * 7) % 9 - 4);
    return offsets;
}

// ------------------------------------------------- without a GPU as well

TEST(CudaGridrec, RegisteredAsApproximateEvenWithoutDevice) {
    const Backend& b = backendNamed(gridrec::kCudaName);
    EXPECT_EQ(b.family(), "cuda");
    EXPECT_FALSE(b.isExact());
    EXPECT_TRUE(b.computesWholeSlice());
    EXPECT_EQ(b.tuningCandidates({}), gridrec::tuningCandidates());
    if (const std::string why = b.unavailableReason(); !why.empty()) {
        EXPECT_EQ(0u, why.find("no CUDA device: ")) << why;
    }
}

TEST(CudaGridrec, RefusesWhatTheMethodCannotDoNamingIt) {
    const Backend& b = backendNamed(gridrec::kCudaName);
    ReconOptions o = gridrecOptions(gridrec::kCudaName, "kernel=99");
    try {
        b.checkOptions(o);
        ADD_FAILURE() << "kernel=99 accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("strategy 'gridrec': tuning kernel=99 (expected an integer 2 to 16)"),
                  std::string::npos)
            << e.what();
    }
    o.tuning.clear();
    o.interpolation = Interpolation::Nearest;
    EXPECT_THROW(b.checkOptions(o), InvalidArgument);
    o.interpolation = Interpolation::Linear;
    o.precision = Precision::Float16;
    EXPECT_THROW(b.checkOptions(o), InvalidArgument);
    o.precision = Precision::Float32;
    o.device = -1;
    EXPECT_THROW(b.checkOptions(o), InvalidArgument);
}

// ------------------------------------------------- on a GPU

TEST(CudaGridrec, EqualsTheCpuTwin) {
    TOMO_REQUIRE_CUDA();
    // 5 slices: two pairs and a lone slice (half its grid, a C2R transform).
    const Dataset d = phantomDataset(256, 360, 5);
    twins(d, d.geometry, "", "256^2 x 360, 5 slices");
    twins(d, d.geometry, "band=1", "256^2 x 360, 5 slices");
    twins(d, d.geometry, "band=2", "256^2 x 360, 5 slices");
    twins(d, d.geometry, "kernel=6,oversampling=1.5", "256^2 x 360, 5 slices");
    twins(d, d.geometry, "kernel=16,oversampling=3", "256^2 x 360, 5 slices");
    // Odd sizes: 101 bins, 97 views, a 120 x 90 grid, a region at an odd place.
    const Dataset odd = phantomDataset(101, 97, 3, 120, 90);
    ReconGeometry part = odd.geometry;
    part.region = {13, 41, 37, 29};
    twins(odd, odd.geometry, "", "odd sizes");
    twins(odd, part, "", "odd sizes, region");
    // The axis off centre, per-projection offsets, a full turn.
    ReconGeometry moved = d.geometry;
    moved.geometry.axis += 30.25;
    moved.geometry.axisOffsets = wobble(moved.geometry.projections());
    twins(d, moved, "", "axis +30.25, offsets");
    Dataset turn = phantomDataset(128, 240, 2);
    turn.geometry.geometry.angles = uniformAngles(240, 2 * kPi);
    turn.key += "/360";
    twins(turn, turn.geometry, "", "360 degrees");
}

TEST(CudaGridrec, ManyBatchesAndPageLockedCallersEqualTheCpuTwin) {
    TOMO_REQUIRE_CUDA();
    // 11 slices: more pairs than one batch (the streams' double buffers turn
    // over), the last pair a single.
    const Dataset d = phantomDataset(192, 200, 11);
    twins(d, d.geometry, "", "192^2 x 200, 11 slices");
    // The same into page-locked memory (downloads land there by DMA).
    const Backend& b = backendNamed(gridrec::kCudaName);
    auto plan = b.createPlan(d.geometry, gridrecOptions(gridrec::kCudaName));
    const std::size_t values = static_cast<std::size_t>(d.slices) * d.geometry.region.pixels();
    HostBuffer pinnedOut = plan->allocateHost(values * sizeof(float));
    HostBuffer pinnedIn = plan->allocateHost(d.sinograms.size() * sizeof(float));
    std::memcpy(pinnedIn.data(), d.sinograms.data(), d.sinograms.size() * sizeof(float));
    std::span<float> out = pinnedOut.as<float>(values);
    plan->reconstruct(pinnedIn.as<const float>(d.sinograms.size()), d.slices, out);
    const auto pageable = run(gridrec::kCudaName, d, d.geometry, gridrecOptions(gridrec::kCudaName));
    EXPECT_EQ(0, std::memcmp(out.data(), pageable.data(), values * sizeof(float)));
    const StageTimes t = plan->lastStageTimes();
    EXPECT_GT(t.upload, 0.0);
    EXPECT_GT(t.filter, 0.0);
    EXPECT_GT(t.backproject, 0.0);
    // reconstruct() grids each batch after its filter; setSinograms then
    // backproject filter every batch first: the same arithmetic, the same
    // values for the pairs. The lone last slice is gridded a second time
    // from the same rows, so by the tap matrix, whose heavy points (near
    // the origin) are summed in another order: float rounding.
    std::vector<float> separate(values, -12345.0f);
    plan->setSinograms(d.sinograms, d.slices);
    plan->backproject(separate);
    const std::size_t pairs = static_cast<std::size_t>(d.slices - 1) * d.geometry.region.pixels();
    EXPECT_EQ(0, std::memcmp(separate.data(), pageable.data(), pairs * sizeof(float)));
    const Errors lone = compare(std::span<const float>(separate).subspan(pairs),
                                std::span<const float>(pageable).subspan(pairs), 1);
    report("gridrec lone last slice, tap matrix vs search", lone);
    EXPECT_LE(lone.maxOfPeak, 1e-6);
}

TEST(CudaGridrec, CloseToTheReferenceOnThePhantom) {
    TOMO_REQUIRE_CUDA();
    // This phantom (rows near the centre of the 3D Shepp-Logan, filling
    // more of the grid than test_gridrec.cpp's) leaves more of linear
    // interpolation's images beyond the band: with the defaults (band 1.75)
    // measured 4.74e-3 (cpu-gridrec), within the 1e-2; band 1
    // 1.142e-2 on an H200 (cpu-gridrec 1.134e-2).
    const Dataset d = phantomDataset(256, 360, 2);
    const auto exact = reference(d, d.geometry, Interpolation::Linear);
    const Errors e = compare(run(gridrec::kCudaName, d, d.geometry, gridrecOptions(gridrec::kCudaName)), exact, d.slices);
    report("gridrec vs cpu-reference 256^2 x 360", e);
    EXPECT_LE(e.relative, 1e-2);
    EXPECT_GT(e.relative, 1e-4); // approximate: it is not the reference itself
    const Errors band1 =
        compare(run(gridrec::kCudaName, d, d.geometry, gridrecOptions(gridrec::kCudaName, "band=1")), exact, d.slices);
    report("gridrec band=1 vs cpu-reference 256^2 x 360", band1);
    EXPECT_LE(band1.relative, 1.25 * 1.142e-2);
    EXPECT_GT(band1.relative, e.relative);
}

TEST(CudaGridrec, RegionAndAxisMovesKeepTheSpectra) {
    TOMO_REQUIRE_CUDA();
    const Dataset d = phantomDataset(256, 360, 3);
    const Backend& gpu = backendNamed(gridrec::kCudaName);
    const Backend& cpu = backendNamed(gridrec::kCpuName);
    auto g = gpu.createPlan(d.geometry, gridrecOptions(gridrec::kCudaName));
    auto c = cpu.createPlan(d.geometry, gridrecOptions(gridrec::kCpuName));
    g->setSinograms(d.sinograms, d.slices);
    c->setSinograms(d.sinograms, d.slices);
    std::vector<float> whole(d.slices * d.geometry.region.pixels()), expected(whole.size());
    g->backproject(whole);
    // Another region of the kept grids: a crop, the same numbers.
    const Region roi{37, 53, 101, 77};
    g->setRegion(roi);
    std::vector<float> part(d.slices * roi.pixels());
    g->backproject(part);
    EXPECT_EQ(part, windowOf(whole, d, roi));
    g->setRegion(d.geometry.region);
    // Axis moves: small (kept rows), with offsets, far (longer rows, the
    // spectra rebuilt on the device); the CPU twin makes the same moves.
    for (double shift : {1.5, -3.25, 120.0}) {
        const double axis = d.geometry.geometry.axis + shift;
        const std::vector<double> offsets = shift < 0 ? wobble(d.geometry.geometry.projections()) : std::vector<double>{};
        g->setAxis(axis, offsets);
        c->setAxis(axis, offsets);
        g->backproject(whole);
        c->backproject(expected);
        const Errors e = compare(whole, expected, d.slices);
        report("gridrec vs cpu-gridrec after setAxis " + std::to_string(shift), e);
        EXPECT_LE(e.relative, kTwinTolerance) << "shift " << shift;
    }
}

TEST(CudaGridrec, LoneSliceTapMatrixEqualsTheSearch) {
    TOMO_REQUIRE_CUDA();
    const Dataset d = phantomDataset(256, 360, 1);
    auto g = backendNamed(gridrec::kCudaName).createPlan(d.geometry, gridrecOptions(gridrec::kCudaName));
    auto c = backendNamed(gridrec::kCpuName).createPlan(d.geometry, gridrecOptions(gridrec::kCpuName));
    g->setSinograms(d.sinograms, 1);
    c->setSinograms(d.sinograms, 1);
    std::vector<float> searched(d.geometry.region.pixels()), fromMatrix(searched.size()), expected(searched.size());
    // Moves the preview makes: near (the same rows), then far (longer rows:
    // the samples move, the matrix is made again).
    for (double shift : {0.0, 2.75, 120.0}) {
        const double axis = d.geometry.geometry.axis + shift;
        g->setAxis(axis, {});
        c->setAxis(axis, {});
        const std::size_t before = g->memoryBytes();
        g->backproject(searched);   // shift 0 and 120: the first lone slice of these rows, by the search
        g->backproject(fromMatrix); // from the second on, by the matrix
        if (shift != 2.75) {
            EXPECT_GT(g->memoryBytes(), before) << "no tap matrix made, shift " << shift;
        }
        c->backproject(expected);
        // The same sums in the same order (a heavy point's, summed by a
        // block, in another: float rounding).
        const Errors same = compare(fromMatrix, searched, 1);
        report("gridrec lone slice, tap matrix vs search, shift " + std::to_string(shift), same);
        EXPECT_LE(same.maxOfPeak, 1e-6) << "shift " << shift;
        const Errors e = compare(fromMatrix, expected, 1);
        report("gridrec lone slice (tap matrix) vs cpu-gridrec, shift " + std::to_string(shift), e);
        EXPECT_LE(e.relative, kTwinTolerance) << "shift " << shift;
    }
}

TEST(CudaGridrec, ConveyorEqualsOneShot) {
    TOMO_REQUIRE_CUDA();
    const Dataset d = phantomDataset(128, 120, 9);
    ImageStack stack(128, 120, d.slices);
    stack.data = d.sinograms;
    auto reader = makeMemoryDataset(std::move(stack), d.geometry.geometry.angles);
    VolumeJob job;
    job.geometry = d.geometry;
    job.options = gridrecOptions(gridrec::kCudaName);
    job.chunkRows = 4; // 4 + 4 + 1: pairs split otherwise than in one call
    MemoryWriter writer(static_cast<std::size_t>(d.slices) * d.geometry.region.pixels());
    const VolumeReport report = reconstructVolume(*reader, job, writer);
    EXPECT_EQ(report.strategy, gridrec::kCudaName);
    const Errors e = compare(writer.volume, run(gridrec::kCudaName, d, d.geometry, job.options), d.slices);
    cudatest::report("gridrec conveyor vs one shot", e);
    EXPECT_TRUE(e.allWritten);
    EXPECT_LE(e.relative, kTwinTolerance);
}

TEST(CudaGridrec, PreviewAxisChangeEqualsAFreshSession) {
    TOMO_REQUIRE_CUDA();
    const Dataset d = phantomDataset(256, 256, 2);
    ImageStack stack(256, 256, d.slices);
    stack.data = d.sinograms;
    std::shared_ptr<DatasetReader> reader = makeMemoryDataset(std::move(stack), d.geometry.geometry.angles);
    PreviewRequest request;
    request.options = gridrecOptions(gridrec::kCudaName);
    request.axis = 127.5;
    PreviewSession session(reader);
    const PreviewResult first = session.run(request);
    request.axis = 130.25;
    CancelToken token; // bands of rows: each a crop of the kept grid
    const PreviewResult moved = session.run(request, &token);
    EXPECT_FALSE(moved.filtered);
    EXPECT_EQ(moved.strategy, gridrec::kCudaName);
    PreviewSession fresh(reader);
    const PreviewResult expected = fresh.run(request);
    const Errors e = compare(moved.slice.data, expected.slice.data, 1);
    cudatest::report("gridrec preview axis change vs fresh session", e);
    // A fresh session picks its row length for its own axis and so samples
    // the spectra at other frequencies: the same image within the gridding
    // error, as cpu-gridrec's Gridrec.AxisMoveEqualsAFreshPlan (measured
    // 3.97e-4 on an H200).
    EXPECT_LE(e.relative, 1e-3);
    EXPECT_GT(compare(moved.slice.data, first.slice.data, 1).relative, 0.05);
    // The lone slice (half its grid gathered, a C2R transform) as the CPU
    // twin's session making the same moves computes it.
    PreviewSession cpu(reader);
    PreviewRequest cpuRequest = request;
    cpuRequest.options = gridrecOptions(gridrec::kCpuName);
    cpuRequest.axis = 127.5;
    const Errors firstTwins = compare(first.slice.data, cpu.run(cpuRequest).slice.data, 1);
    cpuRequest.axis = 130.25;
    const Errors movedTwins = compare(moved.slice.data, cpu.run(cpuRequest).slice.data, 1);
    cudatest::report("gridrec preview vs cpu-gridrec preview, first run", firstTwins);
    cudatest::report("gridrec preview vs cpu-gridrec preview, axis moved", movedTwins);
    EXPECT_LE(firstTwins.relative, kTwinTolerance);
    EXPECT_LE(movedTwins.relative, kTwinTolerance);
}

TEST(CudaGridrecRealData, ApsToothEqualsTheCpuTwin) {
    TOMO_REQUIRE_CUDA();
    const auto path = test::realData("aps_tooth/tooth.h5");
    TOMO_REQUIRE_FILE(path);
    auto reader = openDataset(path);
    Dataset d;
    d.slices = 2;
    d.sinograms = loadSinograms(*reader, 0, 2).data;
    Geometry g;
    g.angles = reader->info().angles;
    g.bins = reader->info().columns;
    g.axis = 296.0;
    d.geometry = ReconGeometry::fullSlice(g);
    d.key = "tooth";
    twins(d, d.geometry, "", "APS tooth");
}

} // namespace
} // namespace tomo::cudatest
