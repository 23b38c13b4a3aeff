// The live preview of a growing scan (PreviewSession::grow): each update
// adds the new projections to the kept slice instead of reconstructing all
// of them, re-weighting those whose angular interval the new ones changed;
// after every update the slice equals a reconstruction of the frames
// present from scratch.
#include "tomo/error.h"
#include "tomo/live.h"
#include "tomo/phantom.h"
#include "tomo/preview.h"

#include "run/growing_rows.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

namespace tomo {
namespace {

constexpr int kBins = 64;
constexpr int kRows = 3; // row 1 (the request's) is the phantom's middle
constexpr std::uint16_t kFlat = 20000;
constexpr std::uint16_t kDark = 100;

std::vector<std::byte> bytesOf(const std::vector<std::uint16_t>& counts) {
    std::vector<std::byte> bytes(counts.size() * 2);
    std::memcpy(bytes.data(), counts.data(), bytes.size());
    return bytes;
}

Frame frameOf(FrameKind kind, long long index, double angleRadians, std::vector<std::uint16_t> counts) {
    Frame f;
    f.kind = kind;
    f.index = index;
    f.angleDegrees = angleRadians * 180.0 / std::numbers::pi;
    f.rows = kRows;
    f.columns = kBins;
    f.scanId = "live";
    f.values = bytesOf(counts);
    return f;
}

/// A flat, a dark and the phantom's projections at `angles` (radians) as
/// uint16 counts, in the order given.
std::vector<Frame> phantomFrames(const std::vector<double>& angles) {
    PhantomSpec spec;
    spec.bins = kBins;
    spec.rows = kRows;
    spec.attenuationScale = 2.0 / kBins;
    const ImageStack lines = projectPhantom(spec, angles); // [row][angle][bin]
    std::vector<Frame> frames;
    frames.push_back(frameOf(FrameKind::Flat, 0, 0.0, std::vector<std::uint16_t>(kRows * kBins, kFlat)));
    frames.push_back(frameOf(FrameKind::Dark, 0, 0.0, std::vector<std::uint16_t>(kRows * kBins, kDark)));
    for (std::size_t a = 0; a < angles.size(); ++a) {
        std::vector<std::uint16_t> counts(kRows * kBins);
        for (int r = 0; r < kRows; ++r)
            for (int c = 0; c < kBins; ++c) {
                const float p = lines.data[(static_cast<std::size_t>(r) * angles.size() + a) * kBins + c];
                counts[static_cast<std::size_t>(r) * kBins + c] =
                    static_cast<std::uint16_t>(kDark + (kFlat - kDark) * std::exp(-p) + 0.5);
            }
        frames.push_back(frameOf(FrameKind::Projection, static_cast<long long>(a), angles[a], std::move(counts)));
    }
    return frames;
}

PreviewRequest cpuRequest() {
    PreviewRequest request;
    request.row = 1;
    request.options.strategy = "cpu";
    return request;
}

/// max |a - b| / max |b|.
double maxRelativeError(const Image& a, const Image& b) {
    EXPECT_EQ(a.data.size(), b.data.size());
    double diff = 0.0, peak = 0.0;
    for (std::size_t i = 0; i < std::min(a.data.size(), b.data.size()); ++i) {
        diff = std::max(diff, std::abs(static_cast<double>(a.data[i]) - b.data[i]));
        peak = std::max(peak, std::abs(static_cast<double>(b.data[i])));
    }
    return diff / peak;
}

// Float sums in another order: the incremental slice differs from the whole
// reconstruction by at most 3.4e-7 of the slice's peak (measured over the
// updates of the two streams below); the bound asked of the feature, 1e-5,
// is 30 times that.
constexpr double kTolerance = 1e-5;

/// Streams `frames` into a store in batches of the sizes in `batches`
/// (cycled), growing one session; after each update compares its slice with
/// a fresh session on the same snapshot. Returns the projections the
/// updates back-projected in all.
long long streamAndCompare(const std::vector<Frame>& frames, const std::vector<int>& batches,
                           const PreviewRequest& request) {
    FrameStore store;
    std::unique_ptr<PreviewSession> live;
    std::size_t next = 0;
    long long added = 0;
    for (int update = 0; next < frames.size(); ++update) {
        const int batch = batches[static_cast<std::size_t>(update) % batches.size()];
        for (int i = 0; i < batch && next < frames.size(); ++i) store.add(frames[next++]);
        if (store.projections() < 2) continue;
        const auto snapshot = store.snapshot("live");
        if (live) live->grow(snapshot);
        else live = std::make_unique<PreviewSession>(snapshot);
        const PreviewResult got = live->run(request);
        PreviewSession whole(snapshot);
        const PreviewResult want = whole.run(request);
        EXPECT_EQ(got.projections, store.projections());
        EXPECT_LE(maxRelativeError(got.slice, want.slice), kTolerance)
            << "after update " << update << " (" << store.projections() << " projections, "
            << got.addedProjections << " back-projected)";
        added += got.addedProjections;
    }
    return added;
}

TEST(LivePreview, AddingTheNewProjectionsEqualsTheWholeReconstructionAfterEveryUpdate) {
    const int n = 180;
    const std::vector<Frame> frames = phantomFrames(uniformAngles(n));
    const long long added = streamAndCompare(frames, {5, 1, 3, 11, 2, 7}, cpuRequest());
    // Reconstructing every update from all its projections would back-project
    // about 33 x 90 on average; adding back-projects each projection about
    // once (plus the few whose weight changed, and the first updates, where
    // more than half change and the whole slice is made again).
    EXPECT_LT(added, 2 * n) << "the updates did not add to the kept slice";
}

TEST(LivePreview, UnevenCoverageReweightsTheNeighboursOfEachNewAngle) {
    // Golden-angle order: every new angle splits a gap, so the two
    // projections beside it get a new angular interval (their weight).
    const int n = 120;
    std::vector<double> angles(n);
    for (int i = 0; i < n; ++i) angles[i] = std::fmod(i * 0.6180339887498949, 1.0) * std::numbers::pi;
    const long long added = streamAndCompare(phantomFrames(angles), {4, 1, 6, 2}, cpuRequest());
    EXPECT_LT(added, 4 * n) << "the updates did not add to the kept slice";
}

TEST(LivePreview, ProjectionsArrivingOutOfOrderAreSortedIntoTheSlice) {
    // A stream's snapshot sorts projections by index: one that arrives late
    // lands between projections already shown (a network reordered them, or
    // a detector sends in bursts). Every update still equals a fresh
    // reconstruction of the snapshot.
    std::vector<Frame> frames = phantomFrames(uniformAngles(90)); // a flat, a dark, then by index
    for (std::size_t i = 2; i + 3 < frames.size(); i += 4) std::swap(frames[i + 1], frames[i + 3]);
    std::swap(frames[5], frames[40]);
    streamAndCompare(frames, {3, 1, 5, 2}, cpuRequest());
}

TEST(LivePreview, APartialScanEqualsTheReconstructionOfAFileHoldingJustThoseFrames) {
    // 0 to 97 degrees of a 180-degree scan, received in batches: the slice
    // shown equals the one of a DXchange file with only those frames
    // (recorded and opened as a finished file), weights included.
    test::TempDir dir;
    const std::vector<double> all = uniformAngles(180);
    std::vector<double> received(all.begin(), all.begin() + 98); // 0 .. 97 degrees
    const std::vector<Frame> frames = phantomFrames(received);
    FrameStore store;
    PreviewSession* live = nullptr;
    std::unique_ptr<PreviewSession> owner;
    for (std::size_t i = 0; i < frames.size(); ++i) {
        store.add(frames[i]);
        if (store.projections() < 2 || (i % 9 != 0 && i + 1 != frames.size())) continue;
        if (live) live->grow(store.snapshot("live"));
        else live = (owner = std::make_unique<PreviewSession>(store.snapshot("live"))).get();
        (void)live->run(cpuRequest());
    }
    const PreviewResult got = live->run(cpuRequest());
    EXPECT_LT(got.addedProjections, 98); // the last update added to the kept slice (here: nothing new)

    const auto file = dir / "partial.h5";
    {
        auto writer = createGrowingScanWriter(file, kRows, kBins, SampleType::UInt16, false);
        store.replay(*writer);
    }
    PreviewSession fromFile(openDataset(file));
    const PreviewResult want = fromFile.run(cpuRequest());
    ASSERT_EQ(want.projections, 98);
    EXPECT_LE(maxRelativeError(got.slice, want.slice), kTolerance);
}

TEST(GrowingRowsReader, ReadsOnlyTheProjectionsThatCameSinceItsLastRead) {
    const std::vector<Frame> frames = phantomFrames(uniformAngles(16)); // a flat, a dark, 16 projections
    FrameStore store;
    for (std::size_t i = 0; i < 2 + 10; ++i) store.add(frames[i]);
    const auto rowsOf = [](DatasetReader& reader, int first, int count) {
        std::vector<std::byte> out(static_cast<std::size_t>(reader.info().projections) * count * kBins * 2);
        reader.readRawRows(first, count, out);
        return out;
    };
    auto snapshot = store.snapshot("live");
    preview::GrowingRowsReader reader(snapshot);
    EXPECT_EQ(rowsOf(reader, 1, 1), rowsOf(*snapshot, 1, 1));
    EXPECT_EQ(reader.projectionsRead(), 10);
    for (std::size_t i = 12; i < 2 + 15; ++i) store.add(frames[i]);
    reader.grow(snapshot = store.snapshot("live"));
    EXPECT_EQ(rowsOf(reader, 1, 1), rowsOf(*snapshot, 1, 1));
    EXPECT_EQ(reader.projectionsRead(), 15) << "the 10 kept projections were read again";
    reader.grow(snapshot); // no new frames: nothing to read
    EXPECT_EQ(rowsOf(reader, 1, 1), rowsOf(*snapshot, 1, 1));
    EXPECT_EQ(reader.projectionsRead(), 15);
    // Other rows are read whole.
    EXPECT_EQ(rowsOf(reader, 0, 2), rowsOf(*snapshot, 0, 2));
    EXPECT_EQ(reader.projectionsRead(), 30);
    // A snapshot with fewer projections than kept: the rows are read anew.
    FrameStore other;
    for (std::size_t i = 0; i < 2 + 4; ++i) other.add(frames[i]);
    reader.grow(snapshot = other.snapshot("live"));
    EXPECT_EQ(rowsOf(reader, 0, 2), rowsOf(*snapshot, 0, 2));
    EXPECT_EQ(reader.projectionsRead(), 34);
    std::vector<std::byte> wrong(3);
    EXPECT_THROW(reader.readRawRows(0, 2, wrong), InvalidArgument);
    // A projection placed among those kept (a stream's late one, sorted in
    // by index): the rows are read whole.
    FrameStore late;
    for (const std::size_t i : {0, 1, 2, 4, 5}) late.add(frames[i]); // projections 0, 2, 3
    reader.grow(snapshot = late.snapshot("live"));
    EXPECT_EQ(rowsOf(reader, 0, 2), rowsOf(*snapshot, 0, 2));
    late.add(frames[3]); // projection 1
    reader.grow(snapshot = late.snapshot("live"));
    const long long before = reader.projectionsRead();
    EXPECT_EQ(rowsOf(reader, 0, 2), rowsOf(*snapshot, 0, 2));
    EXPECT_EQ(reader.projectionsRead() - before, 4);
}

TEST(GrowingRowsReader, KeepsTheMeanFlatAndDarkUntilAnotherArrives) {
    const std::vector<Frame> frames = phantomFrames(uniformAngles(8)); // a flat, a dark, 8 projections
    FrameStore store;
    for (const Frame& f : frames) store.add(f);
    const auto meanOf = [](DatasetReader& reader, bool flat, int first, int count) {
        std::vector<float> out(static_cast<std::size_t>(count) * kBins, -1.0f);
        EXPECT_TRUE(flat ? reader.readMeanFlat(first, count, out) : reader.readMeanDark(first, count, out));
        return out;
    };
    auto snapshot = store.snapshot("live");
    preview::GrowingRowsReader reader(snapshot);
    const std::vector<float> flat = meanOf(*snapshot, true, 0, 2);
    EXPECT_EQ(meanOf(reader, true, 0, 2), flat);
    EXPECT_EQ(meanOf(reader, false, 0, 2), meanOf(*snapshot, false, 0, 2));
    EXPECT_EQ(reader.meansRead(), 2);
    store.add(frameOf(FrameKind::Projection, 8, 1.0, std::vector<std::uint16_t>(kRows * kBins, 5000)));
    reader.grow(snapshot = store.snapshot("live")); // a projection more, the same flat and dark
    EXPECT_EQ(meanOf(reader, true, 0, 2), flat);
    EXPECT_EQ(meanOf(reader, false, 0, 2), meanOf(*snapshot, false, 0, 2));
    EXPECT_EQ(reader.meansRead(), 2) << "the flat and dark were read again";
    // Another flat: the mean is read anew (the dark stays kept); other rows are read.
    store.add(frameOf(FrameKind::Flat, 1, 0.0, std::vector<std::uint16_t>(kRows * kBins, kFlat + 2000)));
    reader.grow(snapshot = store.snapshot("live"));
    const std::vector<float> flats = meanOf(*snapshot, true, 0, 2);
    EXPECT_NE(flats, flat);
    EXPECT_EQ(meanOf(reader, true, 0, 2), flats);
    EXPECT_EQ(meanOf(reader, false, 0, 2), meanOf(*snapshot, false, 0, 2));
    EXPECT_EQ(reader.meansRead(), 3);
    EXPECT_EQ(meanOf(reader, true, 1, 2), meanOf(*snapshot, true, 1, 2));
    EXPECT_EQ(reader.meansRead(), 4);
}

TEST(LivePreview, MovingTheAxisOrANewFlatStartsTheSumAgain) {
    const std::vector<Frame> frames = phantomFrames(uniformAngles(60));
    FrameStore store;
    for (std::size_t i = 0; i < 32; ++i) store.add(frames[i]); // flat, dark, 30 projections
    PreviewSession live(store.snapshot("live"));
    PreviewRequest request = cpuRequest();
    EXPECT_EQ(live.run(request).addedProjections, 30);
    for (std::size_t i = 32; i < 36; ++i) store.add(frames[i]);
    live.grow(store.snapshot("live"));
    request.axis = (kBins - 1) / 2.0 + 0.75; // moved: every projection again
    PreviewResult moved = live.run(request);
    EXPECT_EQ(moved.addedProjections, 34);
    EXPECT_LE(maxRelativeError(moved.slice, PreviewSession(store.snapshot("live")).run(request).slice), kTolerance);

    for (std::size_t i = 36; i < 40; ++i) store.add(frames[i]);
    Frame brighter = frames[0];
    brighter.values = bytesOf(std::vector<std::uint16_t>(kRows * kBins, kFlat + 2000));
    store.add(brighter); // a second flat: the mean flat, so every corrected row, changes
    live.grow(store.snapshot("live"));
    const PreviewResult reflat = live.run(request);
    EXPECT_EQ(reflat.addedProjections, 38);
    EXPECT_LE(maxRelativeError(reflat.slice, PreviewSession(store.snapshot("live")).run(request).slice), kTolerance);

    EXPECT_THROW(live.grow(nullptr), InvalidArgument);
}

} // namespace
} // namespace tomo
