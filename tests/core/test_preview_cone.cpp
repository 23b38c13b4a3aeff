// PreviewSession on fan/cone-beam datasets (core/src/run/cone_preview.h):
// each slice is the slice of a whole-volume FDK, made from only the
// detector rows it needs; a fan beam's iterative slice is the divergent
// pair's run on the whole slice.
#include "cone_test_scan.h"
#include "tomo/cone_scan.h"
#include "tomo/axis_finder.h"
#include "tomo/cone_volume.h"
#include "tomo/output_range.h"
#include "tomo/error.h"
#include "tomo/fdk.h"
#include "tomo/iterative.h"
#include "tomo/phantom.h"
#include "tomo/preview.h"
#include "tomo/projector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <string>

namespace {

using namespace tomo;

constexpr int kColumns = 48;
constexpr int kRows = 40;
constexpr int kViews = 60;

/// A circular cone-beam scan of the 3D Shepp-Logan phantom held in memory,
/// declared as a file would (magnification 1.5, the phantom within the
/// detector's field). The distances grow with the detector, so the fan and
/// the volume keep their shape: the source stays outside the volume.
CircularConeGeometry scanGeometry(int rows = kRows, int columns = kColumns, int views = kViews) {
    const double scale = static_cast<double>(columns) / kColumns;
    return test::circularCone(views, columns, rows, 1.0, 60.0 * scale, 90.0 * scale);
}

std::shared_ptr<DatasetReader> coneScan(int rows = kRows, int columns = kColumns, int views = kViews) {
    ConePhantom phantom;
    phantom.radius = 0.25 * columns;
    return makeConePhantomDataset(phantom, scanGeometry(rows, columns, views));
}

/// The whole volume, FDK in one go (the preview's oracle).
ImageStack wholeVolume(DatasetReader& reader, double offsetU = 0.0) {
    CircularConeGeometry c = scanGeometry(reader.info().rows, reader.info().columns, reader.info().projections);
    c.offsetU = offsetU;
    const ConeSetup setup = coneSetup(reader.info());
    return reconstructFdk(ConeGeometry::circular(c), readConeProjections(reader, setup), setup.grid);
}

double maxDifference(std::span<const float> a, std::span<const float> b, double* scale = nullptr) {
    double diff = 0.0, peak = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
        peak = std::max(peak, std::abs(static_cast<double>(b[i])));
    }
    if (scale) *scale = peak;
    return diff;
}

PreviewRequest cpuRequest(int slice) {
    PreviewRequest request;
    request.row = slice;
    request.options.strategy = "cpu";
    return request;
}

TEST(ConePreview, EverySliceIsTheSliceOfTheWholeVolume) {
    auto reader = coneScan();
    const ImageStack volume = wholeVolume(*reader);
    PreviewSession session(reader);
    ASSERT_TRUE(session.defaultAxis());
    EXPECT_NEAR(*session.defaultAxis(), (kColumns - 1) / 2.0, 1e-9);
    double volumePeak = 0.0;
    for (float v : volume.data) volumePeak = std::max(volumePeak, std::abs(static_cast<double>(v)));
    for (int slice : {kRows / 2, 12, 30, 0, kRows - 1}) {
        const PreviewResult r = session.run(cpuRequest(slice));
        EXPECT_TRUE(r.divergent);
        EXPECT_EQ(r.strategy, "cpu");
        EXPECT_EQ(r.gridSize, kColumns);
        ASSERT_EQ(r.slice.width, kColumns);
        ASSERT_EQ(r.slice.height, kColumns);
        EXPECT_LE(maxDifference(r.slice.data, volume.image(slice)), 1e-5 * volumePeak) << "slice " << slice;
    }
}

TEST(ConePreview, OnlyTheRowsASliceNeedsAreReadAndFiltered) {
    auto reader = coneScan(400); // a tall detector: slices see a few rows each
    PreviewSession session(reader);
    session.run(cpuRequest(200));
    EXPECT_EQ(session.loadRuns(), 1);
    EXPECT_EQ(session.filterRuns(), 1);
    session.run(cpuRequest(201)); // within the rows read with a margin: filtered, not read again
    EXPECT_EQ(session.loadRuns(), 1);
    EXPECT_EQ(session.filterRuns(), 2);
    PreviewRequest region = cpuRequest(201);
    region.region = Region{4, 10, 20, 12}; // fewer rows needed: refiltered from the rows in memory
    const PreviewResult cropped = session.run(region);
    EXPECT_EQ(session.loadRuns(), 1);
    const PreviewResult full = session.run(cpuRequest(201));
    for (int y = 0; y < 12; ++y)
        for (int x = 0; x < 20; ++x)
            EXPECT_NEAR(cropped.slice.at(x, y), full.slice.at(x + 4, y + 10), 1e-5) << x << "," << y;
    session.run(cpuRequest(20)); // far away: read again
    EXPECT_EQ(session.loadRuns(), 2);
}

TEST(ConePreview, MovingTheAxisShiftsTheDetector) {
    auto reader = coneScan();
    const ImageStack shifted = wholeVolume(*reader, 1.5);
    PreviewSession session(reader);
    PreviewRequest request = cpuRequest(kRows / 2 + 5);
    request.axis = (kColumns - 1) / 2.0 + 1.5;
    const PreviewResult r = session.run(request);
    EXPECT_EQ(r.axis, *request.axis);
    double peak = 0.0;
    const double diff = maxDifference(r.slice.data, shifted.image(kRows / 2 + 5), &peak);
    EXPECT_GT(peak, 0.1);
    EXPECT_LE(diff, 1e-5 * peak);

    // Per-view offsets add to the axis: all of them +1.5 is the same detector.
    request.axis = (kColumns - 1) / 2.0;
    request.axisOffsets.assign(kViews, 1.5);
    const PreviewResult same = session.run(request);
    EXPECT_LE(maxDifference(same.slice.data, r.slice.data), 1e-6 * peak);
}

TEST(ConePreview, AnAxisStepFiltersNoMoreThanOnce) {
    // The old path filtered the band again at every axis: each step is compared with a
    // fresh session at that axis, which filters there (and with the whole volume's FDK).
    auto reader = coneScan();
    const int slice = kRows / 2 + 5;
    const double centre = (kColumns - 1) / 2.0;
    PreviewSession session(reader);
    PreviewRequest request = cpuRequest(slice);
    request.axis = centre;
    EXPECT_TRUE(session.run(request).filtered);
    EXPECT_EQ(session.filterRuns(), 1);
    // Within reach (0.02 x the focal length of 90 pixels = 1.8 columns): the first step filters
    // at the two ends of the reach, the others none.
    double worst = 0.0;
    const double steps[] = {0.25, 0.5, 1.5, -1.0, -1.75, 0.0, 1.0};
    for (std::size_t i = 0; i < std::size(steps); ++i) {
        request.axis = centre + steps[i];
        const PreviewResult stepped = session.run(request);
        EXPECT_EQ(stepped.filtered, i == 0) << steps[i];
        EXPECT_EQ(session.filterRuns(), 3) << steps[i];
        PreviewSession fresh(reader);
        const PreviewResult refiltered = fresh.run(request);
        double peak = 0.0;
        const double diff = maxDifference(stepped.slice.data, refiltered.slice.data, &peak);
        worst = std::max(worst, diff / peak);
        if (steps[i] == 0.0) {
            EXPECT_EQ(stepped.slice.data, refiltered.slice.data); // the band filtered there
        }
        double volumePeak = 0.0;
        const double volumeDiff =
            maxDifference(stepped.slice.data, wholeVolume(*reader, steps[i]).image(slice), &volumePeak);
        EXPECT_LE(volumeDiff, 1e-5 * volumePeak) << steps[i];
    }
    // Measured 3.0e-7 to 7.0e-7 of the peak: the filter's float rounding (filterings at shifts
    // 1e-6 columns apart differ as much); the interpolation's own bound is 1.1e-6. Bound ~3x.
    EXPECT_LE(worst, 2e-6);
    // Per-view offsets within reach: interpolated view by view, still no filtering.
    request.axis = centre;
    request.axisOffsets.assign(kViews, 0.0);
    for (int p = 0; p < kViews; ++p) request.axisOffsets[p] = 1.5 * std::sin(p * 0.3);
    const PreviewResult offsets = session.run(request);
    EXPECT_EQ(session.filterRuns(), 3);
    PreviewSession fresh(reader);
    double peak = 0.0;
    const double offsetsDiff = maxDifference(offsets.slice.data, fresh.run(request).slice.data, &peak);
    EXPECT_LE(offsetsDiff, 2e-6 * peak); // measured 6.4e-7
    // Beyond reach: filtered there again, the same image as a fresh session's.
    request.axisOffsets.clear();
    request.axis = centre + 4.0;
    const PreviewResult far = session.run(request);
    EXPECT_TRUE(far.filtered);
    EXPECT_EQ(session.filterRuns(), 4);
    EXPECT_EQ(far.slice.data, PreviewSession(reader).run(request).slice.data);
}

TEST(ConePreview, FanBeamHasOneSliceAndBadRequestsNameTheProblem) {
    auto reader = coneScan(1);
    PreviewSession session(reader);
    const PreviewResult r = session.run(cpuRequest(0));
    double peak = 0.0;
    const double diff = maxDifference(r.slice.data, wholeVolume(*reader).image(0), &peak);
    EXPECT_GT(peak, 0.1);
    EXPECT_LE(diff, 1e-5 * peak);

    auto message = [&](const PreviewRequest& request) {
        try {
            session.run(request);
        } catch (const InvalidArgument& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message(cpuRequest(1)).find("slice 1 is outside the volume (0..0)"), std::string::npos);
    PreviewRequest stitched = cpuRequest(0);
    stitched.corrections.halfAcquisition.enabled = true;
    EXPECT_NE(message(stitched).find("does not apply to fan/cone-beam data"), std::string::npos);
    PreviewRequest strategy = cpuRequest(0);
    strategy.options.strategy = "no-such";
    EXPECT_NE(message(strategy).find("has no fan/cone-beam back-projector"), std::string::npos);
}

/// `options` run on the whole fan-beam slice with the divergent pair made
/// directly (the iterative preview's oracle), the detector moved by `offsetU`.
std::vector<float> wholeIterative(DatasetReader& reader, const IterativeOptions& options, double offsetU) {
    CircularConeGeometry c = scanGeometry(1, reader.info().columns, reader.info().projections);
    c.offsetU = offsetU;
    const ConeSetup setup = coneSetup(reader.info());
    const auto pair = makeConeProjector(ConeGeometry::circular(c), setup.grid, options, 0);
    auto b = pair->vector(Space::Sinogram, 1);
    auto x = pair->vector(Space::Image, 1);
    pair->upload(readConeProjections(reader, setup), *b);
    (void)makeSolver(*pair, options)->run(*b, *x);
    std::vector<float> out(setup.grid.voxels());
    pair->download(*x, out);
    return out;
}

TEST(ConePreview, FanBeamIterativeSliceIsThePairsRunOnTheWholeSlice) {
    constexpr int kFanColumns = 64, kFanViews = 90;
    auto reader = coneScan(1, kFanColumns, kFanViews);
    PreviewSession session(reader);
    PreviewRequest request = cpuRequest(0);
    request.options.iterative.method = Method::Sirt;
    request.options.iterative.iterations = 12;
    request.axis = (kFanColumns - 1) / 2.0 + 1.5; // the detector moves
    request.region = Region{6, 9, 40, 30};         // cut out of the whole slice
    int calls = 0;
    request.onIteration = [&](const IterationState& state) {
        ++calls;
        EXPECT_EQ(state.iterations, 12);
        EXPECT_EQ(state.residuals.size(), 1u);
        return true;
    };
    const PreviewResult r = session.run(request);
    EXPECT_EQ(calls, 12);
    ASSERT_TRUE(r.iterative.has_value());
    EXPECT_EQ(r.iterative->iterations, 12);
    EXPECT_TRUE(r.divergent);
    EXPECT_NE(r.strategy.find("fan"), std::string::npos) << r.strategy; // the pair's name
    ASSERT_EQ(r.slice.width, 40);
    ASSERT_EQ(r.slice.height, 30);

    const std::vector<float> whole = wholeIterative(*reader, request.options.iterative, 1.5);
    std::vector<float> cut;
    for (int y = 9; y < 39; ++y)
        cut.insert(cut.end(), whole.begin() + y * kFanColumns + 6, whole.begin() + y * kFanColumns + 46);
    double peak = 0.0;
    const double diff = maxDifference(r.slice.data, cut, &peak);
    EXPECT_GT(peak, 0.1);
    EXPECT_LE(diff, 1e-5 * peak);
    // Not the FDK slice of the same request (SIRT of 12 iterations is smoother).
    PreviewRequest fdk = request;
    fdk.options.iterative = {};
    fdk.onIteration = {};
    EXPECT_GT(maxDifference(session.run(fdk).slice.data, r.slice.data), 1e-2 * peak);

    // Stopping keeps the image so far; cancelling abandons the run.
    request.onIteration = [](const IterationState& state) { return state.iteration < 3; };
    const PreviewResult stopped = session.run(request);
    EXPECT_EQ(stopped.iterative->iterations, 3);
    EXPECT_TRUE(stopped.iterative->stoppedByCallback);
    CancelToken token;
    request.onIteration = [&](const IterationState& state) {
        if (state.iteration == 2) token.cancel();
        return true;
    };
    EXPECT_THROW(session.run(request, &token), Cancelled);
}

TEST(ConePreview, TheFanBeamPairIsTheOneTheSliceRanOn) {
    // What the reprojection view projects with: CGLS's last residual is
    // that of its final image, so projecting the slice gives it again.
    auto reader = coneScan(1, 64, 90);
    PreviewSession session(reader);
    PreviewRequest request = cpuRequest(0);
    request.options.iterative.method = Method::Cgls;
    request.options.iterative.iterations = 5;
    request.axis = 31.5 + 0.75;
    const PreviewResult r = session.run(request);
    const Reprojection check = reproject(*session.fanBeamPair(request), r.slice.data, session.sinogram(0).data);
    const double residual = r.iterative->residuals.front();
    EXPECT_GT(residual, 0.0);
    EXPECT_NEAR(check.relativeNorm, residual, 1e-4 * residual);
    // At another axis the pair no longer explains the slice as well.
    PreviewRequest moved = request;
    moved.axis = 31.5 - 2.0;
    EXPECT_GT(reproject(*session.fanBeamPair(moved), r.slice.data, session.sinogram(0).data).relativeNorm,
              1.5 * residual);

    PreviewSession cone(coneScan());
    EXPECT_THROW(cone.fanBeamPair(cpuRequest(3)), InvalidArgument);
    PreviewSession parallel(makeMemoryDataset(ImageStack(32, 16, 2), uniformAngles(16)));
    EXPECT_THROW(parallel.fanBeamPair(cpuRequest(0)), InvalidArgument);
}

TEST(ConePreview, IterativeSlicesOfAConeBeamOrTheFourierPairAreRefusedWithTheReason) {
    auto message = [](PreviewSession& session, const PreviewRequest& request) {
        try {
            session.run(request);
        } catch (const InvalidArgument& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    PreviewSession cone(coneScan());
    PreviewRequest request = cpuRequest(kRows / 2);
    request.options.iterative.method = Method::Cgls;
    EXPECT_NE(message(cone, request).find("cgls in the live view: fan-beam scans only"), std::string::npos)
        << message(cone, request);
    PreviewSession fan(coneScan(1));
    request.row = 0;
    request.options.iterative.projector = ProjectorKind::Fourier;
    EXPECT_NE(message(fan, request).find("Fourier projector pair is made for parallel-beam scans"), std::string::npos)
        << message(fan, request);
}

TEST(ConePreview, CancellableRunGivesTheSameImageAsOneCall) {
    // A fan beam of 256 columns and 360 views: cpu-reference takes well over
    // the 25 ms a band aims at.
    auto reader = coneScan(1, 256, 360);
    PreviewSession session(reader);
    PreviewRequest request = cpuRequest(0);
    request.options.strategy = "cpu-reference";
    const PreviewResult whole = session.run(request);
    CancelToken token;
    const PreviewResult banded = session.run(request, &token);
    EXPECT_GT(banded.bands, 1);
    EXPECT_EQ(banded.strategy, "cpu-reference");
    EXPECT_EQ(banded.slice.data, whole.slice.data);
    token.cancel();
    EXPECT_THROW(session.run(request, &token), Cancelled);
}

/// Keeps what is written, and whether it was committed.
class CapturingWriter final : public VolumeWriter {
public:
    CapturingWriter(int width, int height, int slices) : volume(width, height, slices) {}
    void writeSlices(int first, int count, std::span<const float> data) override {
        ASSERT_EQ(data.size(), volume.imageSize() * count);
        std::copy(data.begin(), data.end(), volume.image(first).begin());
        written += count;
    }
    void commit() override { committed = true; }
    ImageStack volume;
    int written = 0;
    bool committed = false;
};

TEST(ConeVolume, PartOfTheVolumeIsThePartOfTheWholeVolume) {
    auto reader = coneScan();
    const ImageStack volume = wholeVolume(*reader);
    double peak = 0.0;
    for (float v : volume.data) peak = std::max(peak, std::abs(static_cast<double>(v)));
    PreviewRequest first = cpuRequest(12);
    first.region = Region{5, 7, 30, 24};
    CapturingWriter writer(30, 24, 9);
    std::vector<double> fractions;
    const VolumeReport report = reconstructConeVolume(*reader, first, 9, writer,
                                                      [&](double f, std::string_view) { fractions.push_back(f); });
    EXPECT_TRUE(writer.committed);
    EXPECT_EQ(writer.written, 9);
    EXPECT_EQ(report.slices, 9);
    EXPECT_EQ(report.strategy, "cpu");
    EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
    ASSERT_FALSE(fractions.empty());
    EXPECT_EQ(fractions.back(), 1.0);
    double diff = 0.0;
    for (int k = 0; k < 9; ++k)
        for (int y = 0; y < 24; ++y)
            for (int x = 0; x < 30; ++x)
                diff = std::max(diff, std::abs(static_cast<double>(writer.volume.image(k)[y * 30 + x]) -
                                               volume.image(12 + k)[(y + 7) * kColumns + x + 5]));
    EXPECT_LE(diff, 1e-5 * peak);

    // Cancelled from the progress callback: nothing committed.
    CapturingWriter cancelled(30, 24, 9);
    EXPECT_THROW(reconstructConeVolume(*reader, first, 9, cancelled,
                                       [](double f, std::string_view) {
                                           if (f > 0.3) throw Cancelled();
                                       }),
                 Cancelled);
    EXPECT_FALSE(cancelled.committed);
    PreviewRequest outside = cpuRequest(kRows - 2);
    CapturingWriter small(kColumns, kColumns, 4);
    try {
        reconstructConeVolume(*reader, outside, 4, small);
        ADD_FAILURE() << "slices beyond the volume were accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("slice 41 is outside the volume (0..39)"), std::string::npos) << e.what();
    }
}

TEST(ConeVolume, AnIterativeMethodExportsTheFanBeamsLiveSliceAndIsRefusedOnACone) {
    auto reader = coneScan(1, 64, 90);
    PreviewRequest request = cpuRequest(0);
    request.options.iterative.method = Method::Cgls;
    request.options.iterative.iterations = 6;
    request.region = Region{4, 8, 50, 40};
    const PreviewResult live = PreviewSession(reader).run(request);
    CapturingWriter writer(50, 40, 1);
    std::vector<double> fractions;
    const VolumeReport report =
        reconstructConeVolume(*reader, request, 1, writer, [&](double f, std::string_view) { fractions.push_back(f); });
    EXPECT_TRUE(writer.committed);
    EXPECT_EQ(writer.written, 1);
    EXPECT_EQ(report.strategy, live.strategy);
    double peak = 0.0;
    EXPECT_LE(maxDifference(writer.volume.data, live.slice.data, &peak), 1e-6 * peak);
    EXPECT_GT(peak, 0.1);
    EXPECT_GE(fractions.size(), 8u); // one per iteration, and the writing
    EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
    CapturingWriter two(50, 40, 2);
    EXPECT_THROW(reconstructConeVolume(*reader, request, 2, two), InvalidArgument);
    EXPECT_FALSE(two.committed);

    PreviewRequest cone = cpuRequest(3);
    cone.options.iterative.method = Method::Sirt;
    CapturingWriter coneWriter(kColumns, kColumns, 2);
    try {
        reconstructConeVolume(*coneScan(), cone, 2, coneWriter);
        ADD_FAILURE() << "an iterative cone-beam export was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("fan-beam scans only"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(coneWriter.committed);
}

TEST(ConeVolume, RangeEstimateSamplesSlicesSpreadOverTheVolume) {
    auto reader = coneScan();
    const ImageStack volume = wholeVolume(*reader);
    const RangeEstimate e = estimateConeOutputRange(*reader, cpuRequest(0), kRows);
    EXPECT_EQ(e.rows, spreadRows(0, kRows, 5)); // as the parallel-beam estimate spreads its rows
    EXPECT_EQ(e.values, 5u * kColumns * kColumns);
    float low = INFINITY, high = -INFINITY;
    for (int row : e.rows)
        for (float v : volume.image(row)) low = std::min(low, v), high = std::max(high, v);
    // The percentiles lie within the sampled slices' values; the range widens them.
    EXPECT_GE(e.low, low - 1e-5f);
    EXPECT_LE(e.high, high + 1e-5f);
    EXPECT_LT(e.min, e.low);
    EXPECT_GT(e.max, e.high);
}

} // namespace
