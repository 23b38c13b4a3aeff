// PreviewSession: the live-preview cache (core/include/tomo/preview.h).
#include "tomo/preview.h"

#include "tomo/error.h"
#include "tomo/metrics.h"
#include "tomo/phantom.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace {

using namespace tomo;

constexpr int kBins = 96;
constexpr int kAngles = 90;
constexpr int kRows = 3;

std::shared_ptr<DatasetReader> phantomDataset(std::vector<double>* anglesOut = nullptr) {
    PhantomSpec spec;
    spec.bins = kBins;
    spec.rows = kRows;
    auto angles = uniformAngles(kAngles);
    if (anglesOut) *anglesOut = angles;
    return makeMemoryDataset(projectPhantom(spec, angles), angles, "phantom");
}

/// A reconstruction made from scratch with a new plan, as the oracle.
Image freshReconstruction(DatasetReader& reader, int row, double axis, const Region& region,
                          const ReconOptions& options) {
    Geometry g;
    g.angles = reader.info().angles;
    g.bins = reader.info().columns;
    g.axis = axis;
    ReconGeometry rg = ReconGeometry::fullSlice(g);
    rg.region = region;
    auto plan = createPlan(rg, options);
    std::vector<float> sino(static_cast<std::size_t>(kAngles) * kBins);
    reader.readSinograms(row, 1, sino);
    Image out(region.width, region.height);
    plan->reconstruct(sino, 1, out.data);
    return out;
}

ReconOptions cpuOptions() {
    ReconOptions o;
    o.strategy = "cpu";
    return o;
}

TEST(Preview, AxisChangeMatchesFreshReconstructionWithoutFiltering) {
    auto reader = phantomDataset();
    PreviewSession session(reader);
    PreviewRequest request;
    request.row = 1;
    request.options = cpuOptions();

    PreviewResult first = session.run(request);
    EXPECT_TRUE(first.filtered);
    EXPECT_EQ(session.filterRuns(), 1);
    EXPECT_EQ(first.axis, (kBins - 1) / 2.0);
    EXPECT_EQ(first.strategy, "cpu");

    request.axis = (kBins - 1) / 2.0 + 3.25;
    PreviewResult moved = session.run(request);
    EXPECT_FALSE(moved.filtered);
    EXPECT_EQ(session.filterRuns(), 1) << "an axis change must not filter again";
    EXPECT_EQ(session.loadRuns(), 1) << "an axis change must not read the row again";
    EXPECT_EQ(moved.secondsFilter, 0.0);

    Image oracle = freshReconstruction(*reader, 1, *request.axis, Region{0, 0, kBins, kBins}, cpuOptions());
    QualityMetrics m = compareImages(moved.slice, oracle);
    // Same kernel, same filtered data: only float summation order may differ.
    EXPECT_LT(m.maxAbsError, 1e-5) << "axis-moved preview differs from a fresh plan";

    // And the image really changed.
    EXPECT_GT(compareImages(first.slice, moved.slice).maxAbsError, 1e-3);
}

/// A dataset that counts the reads reaching it.
class CountingReader final : public DatasetReader {
public:
    explicit CountingReader(std::shared_ptr<DatasetReader> inner) : m_inner(std::move(inner)) { m_info = m_inner->info(); }
    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        ++reads;
        m_inner->readSinograms(firstRow, rowCount, out);
    }
    bool readMeanFlat(int, int, std::span<float>) override { return false; }
    bool readMeanDark(int, int, std::span<float>) override { return false; }
    int reads = 0;

private:
    std::shared_ptr<DatasetReader> m_inner;
};

TEST(Preview, NeighbouringRowsComeFromOneRead) {
    // 40 rows: a file read a row at a time costs a small read per
    // projection; the session reads a block around the row instead.
    PhantomSpec spec;
    spec.bins = 48;
    spec.rows = 40;
    const auto angles = uniformAngles(60);
    std::shared_ptr<DatasetReader> plain = makeMemoryDataset(projectPhantom(spec, angles), angles, "phantom");
    auto counting = std::make_shared<CountingReader>(plain);
    PreviewSession session(counting);
    PreviewSession oracle(plain);
    PreviewRequest request;
    request.options = cpuOptions();
    for (int row : {20, 21, 22, 19, 17}) {
        request.row = row;
        const PreviewResult r = session.run(request);
        EXPECT_EQ(r.slice.data, oracle.run(request).slice.data) << "row " << row;
    }
    EXPECT_EQ(counting->reads, 1) << "rows 17 to 22 lie in one block";
    EXPECT_EQ(session.loadRuns(), 5); // each row still corrected on its own
    for (int row : {39, 0}) { // blocks at the ends stay inside the data
        request.row = row;
        EXPECT_EQ(session.run(request).slice.data, oracle.run(request).slice.data) << "row " << row;
    }
    EXPECT_EQ(counting->reads, 3);
}

#if TOMO_WITH_HDF5
TEST(Preview, RowsOfAFileReadInBlocksAreTheRowsReadOneByOne) {
    // A DXchange file (uint16 counts, flats, darks): the raw rows go through
    // the block reader, each row corrected alone.
    test::TempDir dir;
    PhantomSpec spec;
    spec.bins = 40;
    spec.rows = 21;
    ScanSimulation sim;
    sim.poissonNoise = false;
    writePhantomDXchange(dir / "scan.h5", spec, uniformAngles(30), sim);
    PreviewSession session(openDataset(dir / "scan.h5"));
    const auto direct = openDataset(dir / "scan.h5");
    PreprocessingStage stage(*direct, {});
    for (int row : {10, 11, 7, 14, 0, 20}) {
        const ImageStack expected = stage.load(row, 1);
        EXPECT_EQ(session.sinogram(row).data, expected.data) << "row " << row;
    }
}
#endif

TEST(Preview, RegionIsACropOfTheFullSlice) {
    auto reader = phantomDataset();
    PreviewSession session(reader);
    PreviewRequest request;
    request.row = 1;
    request.options = cpuOptions();
    PreviewResult full = session.run(request);

    request.region = Region{10, 20, 40, 30};
    PreviewResult part = session.run(request);
    EXPECT_EQ(session.filterRuns(), 1) << "a region change must not filter again";
    ASSERT_EQ(part.slice.width, 40);
    ASSERT_EQ(part.slice.height, 30);
    double worst = 0.0;
    for (int y = 0; y < 30; ++y)
        for (int x = 0; x < 40; ++x)
            worst = std::max(worst, std::abs(double(part.slice.at(x, y)) - full.slice.at(x + 10, y + 20)));
    EXPECT_LT(worst, 1e-5);
}

TEST(Preview, RowAndOptionChangesFilterAgain) {
    auto reader = phantomDataset();
    PreviewSession session(reader);
    PreviewRequest request;
    request.options = cpuOptions();
    session.run(request);
    EXPECT_EQ(session.filterRuns(), 1);

    request.row = 2;
    EXPECT_TRUE(session.run(request).filtered);
    EXPECT_EQ(session.filterRuns(), 2);
    EXPECT_EQ(session.loadRuns(), 2);

    request.options.filter.window = FilterWindow::Hann;
    EXPECT_TRUE(session.run(request).filtered);
    EXPECT_EQ(session.filterRuns(), 3);
    EXPECT_EQ(session.loadRuns(), 2) << "a filter change reuses the loaded row";

    request.options.interpolation = Interpolation::Nearest;
    EXPECT_TRUE(session.run(request).filtered);
    EXPECT_EQ(session.filterRuns(), 4);

    // Unchanged request: nothing but the back-projection.
    EXPECT_FALSE(session.run(request).filtered);
    EXPECT_EQ(session.filterRuns(), 4);
}

TEST(Preview, MethodChangeMakesAnIterativeSliceEqualToAFreshPlan) {
    // The method is part of the plan: FBP, then SIRT on the same row, must
    // give SIRT's image (the plan of a fresh reconstruction), not FBP's again.
    auto reader = phantomDataset();
    PreviewSession session(reader);
    PreviewRequest request;
    request.row = 1;
    request.options = cpuOptions();
    const PreviewResult fbp = session.run(request);
    EXPECT_FALSE(fbp.iterative);

    request.options.iterative.method = Method::Sirt;
    request.options.iterative.iterations = 12;
    request.region = Region{8, 16, 48, 40};
    CancelToken token; // a cancellable run: no bands for an iterative method
    const PreviewResult sirt = session.run(request, &token);
    ASSERT_TRUE(sirt.iterative);
    EXPECT_EQ(sirt.iterative->iterations, 12);
    EXPECT_EQ(sirt.bands, 1);
    const Image oracle = freshReconstruction(*reader, 1, (kBins - 1) / 2.0, *request.region, request.options);
    EXPECT_LT(compareImages(sirt.slice, oracle).maxAbsError, 1e-6);
    // Not FBP's: measured 0.006 apart at most, with FBP's largest value 0.0103; a tenth of that is asked.
    const Image fbpRegion = freshReconstruction(*reader, 1, (kBins - 1) / 2.0, *request.region, cpuOptions());
    const float fbpMax = *std::max_element(fbp.slice.data.begin(), fbp.slice.data.end());
    EXPECT_GT(compareImages(sirt.slice, fbpRegion).maxAbsError, 0.1 * fbpMax);
}

TEST(Preview, IterationCallbackSeesEachIterationAndStopKeepsTheImage) {
    auto reader = phantomDataset();
    PreviewSession session(reader);
    PreviewRequest request;
    request.options = cpuOptions();
    request.options.iterative.method = Method::Cgls;
    request.options.iterative.iterations = 10;
    std::vector<int> seen;
    request.onIteration = [&](const IterationState& s) {
        seen.push_back(s.iteration);
        return s.iteration < 4; // stop after the 4th
    };
    CancelToken token;
    const PreviewResult stopped = session.run(request, &token);
    ASSERT_TRUE(stopped.iterative);
    EXPECT_TRUE(stopped.iterative->stoppedByCallback);
    EXPECT_EQ(stopped.iterative->iterations, 4);
    EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
    // The image after 4 iterations: a fresh plan run for 4 gives it.
    ReconOptions four = request.options;
    four.iterative.iterations = 4;
    const Image oracle = freshReconstruction(*reader, request.row, (kBins - 1) / 2.0, Region{0, 0, kBins, kBins}, four);
    EXPECT_LT(compareImages(stopped.slice, oracle).maxAbsError, 1e-6);

    // A token cancelled during the iterations stops the run with Cancelled.
    request.onIteration = [&](const IterationState& s) {
        if (s.iteration == 2) token.cancel();
        return true;
    };
    EXPECT_THROW(session.run(request, &token), Cancelled);
    CancelToken fresh;
    request.onIteration = {};
    EXPECT_EQ(session.run(request, &fresh).iterative->iterations, 10) << "the session stays usable";
}

TEST(Preview, AutoStrategyIsResolvedAndTimed) {
    PreviewSession session(phantomDataset());
    PreviewRequest request; // strategy "auto"
    PreviewResult r = session.run(request);
    EXPECT_NE(r.strategy, "auto");
    EXPECT_FALSE(r.strategy.empty());
    EXPECT_GT(r.secondsBackproject, 0.0);
    EXPECT_GT(r.gups, 0.0);
    EXPECT_GE(r.secondsTotal, r.secondsBackproject);
    EXPECT_EQ(r.gridSize, kBins);
    EXPECT_EQ(r.projections, kAngles);
}

TEST(Preview, CancelledRunThrowsAndSessionStaysUsable) {
    auto reader = phantomDataset();
    PreviewSession session(reader);
    PreviewRequest request;
    request.options = cpuOptions();
    CancelToken token;
    token.cancel();
    EXPECT_THROW(session.run(request, &token), Cancelled);

    CancelToken fresh;
    request.row = 1;
    PreviewResult r = session.run(request, &fresh);
    Image oracle = freshReconstruction(*reader, 1, (kBins - 1) / 2.0, Region{0, 0, kBins, kBins}, cpuOptions());
    EXPECT_LT(compareImages(r.slice, oracle).maxAbsError, 1e-5);
}

TEST(Preview, CancellableRunGivesTheSameImage) {
    // With a token a slow run is split into bands of rows; the image must not
    // change. The first run of a session estimates its time from a fixed
    // speed (2.5 GU/s for CPU strategies): 500 x 500 pixels x 512 projections
    // = 0.05 s, so it runs in bands whatever this machine's speed; the
    // region's height (500) is not a multiple of the band height (8 rows on a CPU).
    PhantomSpec spec;
    spec.bins = 512;
    auto angles = uniformAngles(512);
    std::shared_ptr<DatasetReader> reader = makeMemoryDataset(projectPhantom(spec, angles), angles);
    for (const char* strategy : {"cpu-reference", "cpu"}) {
        SCOPED_TRACE(strategy);
        PreviewSession session(reader);
        PreviewRequest request;
        request.options.strategy = strategy;
        request.region = Region{6, 6, 500, 500};
        CancelToken token;
        PreviewResult banded = session.run(request, &token);
        EXPECT_GT(banded.bands, 1) << "the first cancellable run must be split into bands";
        PreviewResult plain = session.run(request);
        EXPECT_EQ(plain.bands, 1);
        EXPECT_EQ(session.filterRuns(), 1);
        EXPECT_EQ(compareImages(banded.slice, plain.slice).maxAbsError, 0.0);
    }
}

TEST(Preview, BadRequestsThrowInvalidArgument) {
    PreviewSession session(phantomDataset());
    PreviewRequest request;
    request.options = cpuOptions();
    request.row = kRows;
    EXPECT_THROW(session.run(request), InvalidArgument);
    request.row = 0;
    request.axisOffsets = {1.0, 2.0};
    EXPECT_THROW(session.run(request), InvalidArgument);
    request.axisOffsets.clear();
    request.region = Region{90, 0, 10, 10};
    EXPECT_THROW(session.run(request), InvalidArgument);
    request.region.reset();
    request.options.strategy = "no-such-strategy";
    EXPECT_THROW(session.run(request), InvalidArgument);
    request.options = cpuOptions();
    EXPECT_NO_THROW(session.run(request));
}

TEST(Preview, PerProjectionOffsetsAreApplied) {
    auto reader = phantomDataset();
    PreviewSession session(reader);
    PreviewRequest request;
    request.row = 1; // the middle of the 3D phantom (rows 0 and 2 are near its ends)
    request.options = cpuOptions();
    PreviewResult base = session.run(request);
    // Offsets that are all equal to +2 are the same as moving the axis by 2.
    request.axisOffsets.assign(kAngles, 2.0);
    PreviewResult withOffsets = session.run(request);
    request.axisOffsets.clear();
    request.axis = (kBins - 1) / 2.0 + 2.0;
    PreviewResult moved = session.run(request);
    EXPECT_EQ(session.filterRuns(), 1);
    EXPECT_LT(compareImages(withOffsets.slice, moved.slice).maxAbsError, 1e-5);
    EXPECT_GT(compareImages(withOffsets.slice, base.slice).maxAbsError, 1e-3);
}

TEST(Preview, SinogramIsTheLogCorrectedRow) {
    std::vector<double> angles;
    auto reader = phantomDataset(&angles);
    PreviewSession session(reader);
    const Image& sino = session.sinogram(2);
    EXPECT_EQ(sino.width, kBins);
    EXPECT_EQ(sino.height, kAngles);
    std::vector<float> direct(static_cast<std::size_t>(kBins) * kAngles);
    reader->readSinograms(2, 1, direct);
    EXPECT_EQ(sino.data, direct);
    EXPECT_THROW(session.sinogram(-1), InvalidArgument);
}

TEST(MemoryDataset, ValidatesAndReads) {
    EXPECT_THROW(makeMemoryDataset(ImageStack(), {}), InvalidArgument);
    EXPECT_THROW(makeMemoryDataset(ImageStack(4, 3, 2), {0.0, 1.0}), InvalidArgument);
    auto reader = makeMemoryDataset(ImageStack(4, 3, 2, 1.5f), {0.0, 0.5, 1.0}, "mem");
    EXPECT_TRUE(reader->info().logCorrected);
    EXPECT_EQ(reader->info().rows, 2);
    EXPECT_EQ(reader->info().projections, 3);
    EXPECT_EQ(reader->info().columns, 4);
    std::vector<float> out(12);
    reader->readSinograms(1, 1, out);
    EXPECT_EQ(out[5], 1.5f);
    EXPECT_THROW(reader->readSinograms(1, 2, out), InvalidArgument);
    std::vector<float> flat(4);
    EXPECT_FALSE(reader->readMeanFlat(0, 1, flat));
}

} // namespace
