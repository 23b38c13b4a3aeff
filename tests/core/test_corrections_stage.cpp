// The corrections as options and as a stage: validation messages, the run
// config's "corrections" object, the stage's read/correct split, the preview
// (the corrected row kept while the axis moves) and the pipeline (the same
// slices as the preview).
#include "corrections_test_helpers.h"
#include "io_test_helpers.h"
#include "test_support.h"
#include "tomo/corrections.h"
#include "tomo/pipeline.h"
#include "tomo/preprocess.h"
#include "tomo/preview.h"
#include "tomo/run_config.h"

#include <gtest/gtest.h>

namespace tomo {
namespace {

using test::contains;
using test::CountsDataset;
using test::messageOf;

CorrectionOptions everyCorrection() {
    CorrectionOptions o;
    o.badPixels.saturation = 4000;
    o.flatField.backgroundFirst = 2;
    o.flatField.backgroundCount = 5;
    o.zingers.enabled = true;
    o.zingers.threshold = 0.25;
    o.zingers.window = 5;
    o.rings.method = RingMethod::Wavelet;
    o.rings.snr = 2.5;
    o.rings.sortingWindow = 11;
    o.rings.largeWindow = 31;
    o.rings.dropRatio = 0.2;
    o.rings.waveletLevel = 3;
    o.rings.waveletSigma = 1.5;
    o.paganin = {true, 250.0, 17.5, 0.12, 6.5e-7};
    o.halfAcquisition.enabled = true;
    o.halfAcquisition.axis = 20.25;
    o.halfAcquisition.window = 64;
    return o;
}

TEST(CorrectionOptions, DefaultsAreDeadPixelsOnlyAndValid) {
    const CorrectionOptions o;
    EXPECT_TRUE(o.badPixels.enabled);
    EXPECT_FALSE(o.zingers.enabled);
    EXPECT_EQ(o.rings.method, RingMethod::Off);
    EXPECT_FALSE(o.paganin.enabled);
    EXPECT_FALSE(o.halfAcquisition.enabled);
    EXPECT_NO_THROW(o.validate());
    EXPECT_EQ(o.summary(), "dead pixels");
    EXPECT_EQ(CorrectionOptions::none().summary(), "none");
    EXPECT_NO_THROW(everyCorrection().validate());
}

TEST(CorrectionOptions, BadValuesNameTheKeyAndTheOption) {
    auto messageFor = [](auto change) {
        CorrectionOptions o = everyCorrection();
        change(o);
        return messageOf<InvalidArgument>([&] { o.validate(); });
    };
    std::string m = messageFor([](CorrectionOptions& o) { o.zingers.window = 4; });
    EXPECT_TRUE(contains(m, "corrections.zingers.window"));
    EXPECT_TRUE(contains(m, "--zinger-window"));
    EXPECT_TRUE(contains(m, "odd"));
    m = messageFor([](CorrectionOptions& o) { o.zingers.threshold = -1; });
    EXPECT_TRUE(contains(m, "--zinger-threshold"));
    m = messageFor([](CorrectionOptions& o) {
        o.rings.method = RingMethod::All;
        o.rings.snr = 0.5;
    });
    EXPECT_TRUE(contains(m, "corrections.rings.snr"));
    m = messageFor([](CorrectionOptions& o) { o.rings.waveletLevel = 0; });
    EXPECT_TRUE(contains(m, "--wavelet-level"));
    m = messageFor([](CorrectionOptions& o) { o.paganin.pixelSizeM = 0; });
    EXPECT_TRUE(contains(m, "corrections.paganin.pixel_size_m"));
    m = messageFor([](CorrectionOptions& o) { o.halfAcquisition.window = 2; });
    EXPECT_TRUE(contains(m, "--overlap-window"));
    EXPECT_EQ(parseRingMethod("all"), RingMethod::All);
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([] { parseRingMethod("fast"); }), "sorting, large, dead, all"));
}

TEST(CorrectionOptions, RunConfigRoundTripAndErrors) {
    RunConfig c;
    c.corrections = everyCorrection();
    EXPECT_EQ(runConfigFromJson(toJson(c)).corrections, c.corrections);
    c.corrections.halfAcquisition.axis.reset(); // null = automatic
    EXPECT_EQ(runConfigFromJson(toJson(c)).corrections, c.corrections);
    EXPECT_EQ(runConfigFromJson("{}").corrections, CorrectionOptions{});
    // A partial object keeps the other defaults.
    const RunConfig partial = runConfigFromJson(R"({"corrections": {"rings": {"method": "all"}}})");
    CorrectionOptions expected;
    expected.rings.method = RingMethod::All;
    EXPECT_EQ(partial.corrections, expected);

    auto error = [](const std::string& json) { return messageOf<FormatError>([&] { runConfigFromJson(json); }); };
    std::string m = error(R"({"corrections": {"zinger": {}}})");
    EXPECT_TRUE(contains(m, "unknown key 'corrections.zinger'"));
    EXPECT_TRUE(contains(m, "zingers"));
    m = error(R"({"corrections": {"rings": {"methd": "all"}}})");
    EXPECT_TRUE(contains(m, "unknown key 'corrections.rings.methd'"));
    m = error(R"({"corrections": {"zingers": {"enabled": "yes"}}})");
    EXPECT_TRUE(contains(m, "corrections.zingers.enabled"));
    EXPECT_TRUE(contains(m, "true or false"));
    m = error(R"({"corrections": {"rings": {"method": "fast"}}})");
    EXPECT_TRUE(contains(m, "corrections.rings.method"));
    m = error(R"({"corrections": {"zingers": {"enabled": true, "window": 4}}})");
    EXPECT_TRUE(contains(m, "corrections.zingers.window"));
    m = error(R"({"corrections": {"flat_field": {"background_columns": [3]}}})");
    EXPECT_TRUE(contains(m, "corrections.flat_field.background_columns"));
    m = error(R"({"corrections": []})");
    EXPECT_TRUE(contains(m, "'corrections' must be an object"));
}

/// A small raw-counts dataset: a phantom of 64 columns, 5 rows, 90 angles,
/// with a dead pixel at row 2, column 30 and stripes.
std::shared_ptr<CountsDataset> smallCounts() {
    PhantomSpec spec;
    spec.bins = 64;
    spec.rows = 5;
    const auto angles = uniformAngles(90);
    ImageStack counts = test::countsOf(projectPhantom(spec, angles), 20000.0f, 100.0f);
    std::vector<float> flat(5 * 64, 20000.0f), dark(5 * 64, 100.0f);
    flat[2 * 64 + 30] = 50.0f;
    for (int r = 0; r < 5; ++r)
        for (int a = 0; a < 90; ++a) counts.data[(static_cast<std::size_t>(r) * 90 + a) * 64 + 12] *= 1.05f;
    auto d = std::make_shared<CountsDataset>(std::move(counts), angles);
    d->addFlatGroup(-1, flat);
    d->setDark(dark);
    return d;
}

TEST(PreprocessingStage, ReadThenCorrectIsLoadAndChunksAreChecked) {
    auto d = smallCounts();
    CorrectionOptions o;
    o.rings.method = RingMethod::All;
    PreprocessingStage stage(*d, o);
    EXPECT_EQ(stage.rowMargin(), 0);
    EXPECT_EQ(stage.outputColumns(), 64);
    EXPECT_EQ(stage.outputProjections(), 90);
    EXPECT_FALSE(stage.outputAxis());
    RawChunk raw = stage.read(1, 3);
    EXPECT_EQ(raw.values.size(), 90u * 3 * 64 * sizeof(float)); // stored values, projection order
    EXPECT_EQ(raw.flats.size(), 1u);
    PreprocessStats stats;
    const ImageStack split = stage.correct(std::move(raw), &stats);
    EXPECT_EQ(split.data, stage.load(1, 3).data);
    EXPECT_EQ(stats.deadPixels, (std::vector<PixelPosition>{{2, -1, 30}}));
    RawChunk wrong = stage.read(0, 2);
    wrong.margin = 1;
    EXPECT_THROW(stage.correct(std::move(wrong)), InvalidArgument);
    EXPECT_THROW(stage.read(4, 2), InvalidArgument);
}

TEST(PreprocessingStage, FlatFieldOnlyChunksGiveTheStageResultThroughFlatFieldRawRows) {
    // What a GPU plan is handed (the stored values and the flat-field
    // constants, dead pixels included) corrects to the stage's own result.
    auto d = smallCounts();
    d->counts().data[(static_cast<std::size_t>(1) * 90 + 7) * 64 + 40] = 90.0f; // below the dark: interpolated
    for (bool deadPixels : {true, false}) {
        CorrectionOptions o;
        o.badPixels.enabled = deadPixels;
        PreprocessingStage stage(*d, o);
        ASSERT_TRUE(stage.flatFieldOnly());
        PreprocessStats expectedStats;
        const ImageStack expected = stage.load(0, 5, &expectedStats);
        const RawChunk chunk = stage.read(0, 5);
        PreprocessStats stats;
        const FlatFieldRows field = stage.flatFieldRows(chunk, &stats);
        std::vector<float> got(expected.data.size());
        stats.merge(flatFieldRawRows(stage.rawRows(chunk), field, got));
        EXPECT_EQ(got, expected.data) << "dead-pixel correction " << deadPixels;
        EXPECT_EQ(stats.clamped, expectedStats.clamped);
        EXPECT_EQ(stats.deadPixelCount, expectedStats.deadPixelCount);
        EXPECT_EQ(stats.badValueCount, expectedStats.badValueCount);
    }
    CorrectionOptions rings;
    rings.rings.method = RingMethod::Sorting;
    EXPECT_FALSE(PreprocessingStage(*d, rings).flatFieldOnly());
}

TEST(PreprocessingStage, PreviewKeepsTheCorrectedRowWhileTheAxisMoves) {
    auto d = smallCounts();
    PreviewSession session(d);
    PreviewRequest request;
    request.row = 2;
    request.options.strategy = "cpu";
    request.corrections.rings.method = RingMethod::All;
    request.corrections.zingers.enabled = true;
    const PreviewResult first = session.run(request);
    EXPECT_EQ(session.loadRuns(), 1);
    EXPECT_EQ(first.corrections.deadPixels, (std::vector<PixelPosition>{{2, -1, 30}}));
    request.axis = 32.0;
    const PreviewResult moved = session.run(request);
    EXPECT_EQ(session.loadRuns(), 1) << "moving the axis must not correct the row again";
    EXPECT_FALSE(moved.filtered);
    EXPECT_EQ(moved.corrections.deadPixels, first.corrections.deadPixels);
    // Other corrections: the row is corrected again, and filtered again.
    request.corrections.rings.method = RingMethod::Off;
    const PreviewResult other = session.run(request);
    EXPECT_EQ(session.loadRuns(), 2);
    EXPECT_TRUE(other.filtered);
    EXPECT_NE(other.slice.data, moved.slice.data);
    // Bad corrections: InvalidArgument, and the session stays usable.
    request.corrections.flatField.backgroundCount = 100;
    EXPECT_THROW(session.run(request), InvalidArgument);
    request.corrections.flatField.backgroundCount = 0;
    EXPECT_NO_THROW(session.run(request));
}

TEST(PreprocessingStage, PipelineSlicesEqualThePreviewsWithTheSameCorrections) {
    auto d = smallCounts();
    CorrectionOptions o;
    o.rings.method = RingMethod::All;
    o.zingers.enabled = true;

    VolumeJob job;
    job.options.strategy = "cpu";
    job.corrections = o;
    job.geometry.geometry.axis = 31.5;
    job.chunkRows = 2;
    struct Writer : VolumeWriter {
        ImageStack volume{64, 64, 5};
        void writeSlices(int first, int count, std::span<const float> data) override {
            std::copy(data.begin(), data.end(), volume.data.begin() + static_cast<std::ptrdiff_t>(first) * 64 * 64);
            (void)count;
        }
        void commit() override {}
    } writer;
    const VolumeReport report = reconstructVolume(*d, job, writer);
    EXPECT_EQ(report.preprocess.deadPixels, (std::vector<PixelPosition>{{2, -1, 30}}));

    PreviewSession session(d);
    for (int row = 0; row < 5; ++row) {
        PreviewRequest request;
        request.row = row;
        request.axis = 31.5;
        request.options.strategy = "cpu";
        request.corrections = o;
        const PreviewResult r = session.run(request);
        const auto slice = writer.volume.image(row);
        for (std::size_t i = 0; i < r.slice.data.size(); ++i) ASSERT_NEAR(r.slice.data[i], slice[i], 1e-6f) << row;
    }
}

} // namespace
} // namespace tomo
