// Live acquisition (tomo/live.h): a growing SWMR file followed while another
// process writes it, the frame store and its snapshots, the stream message,
// and ZeroMQ over inproc:// and ipc://.
//
// The SWMR writer runs in a child process, not a thread: HDF5 keeps one
// file object per process, so a reader thread beside the writer would read
// the writer's memory, never the file as SWMR readers see it.
#include "tomo/error.h"
#include "tomo/live.h"
#include "tomo/phantom.h"
#include "tomo/preview.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <numbers>
#include <thread>

#include <csignal>
#include <cstdlib>

#include <sys/wait.h>
#include <unistd.h>

#if TOMO_WITH_ZMQ
#include <zmq.hpp>
#endif

namespace tomo {
namespace {

using namespace std::chrono_literals;

/// A scan of the phantom with flats and darks, 48 projections of 4 x 48.
std::filesystem::path writeSource(const test::TempDir& dir) {
    const auto path = dir / "source.h5";
    PhantomSpec spec;
    spec.bins = 48;
    spec.rows = 4;
    writePhantomDXchange(path, spec, uniformAngles(48), ScanSimulation{});
    return path;
}

/// The slice of `row` of a dataset, as the live preview makes it.
Image previewSlice(std::shared_ptr<DatasetReader> reader, int row) {
    PreviewSession session(std::move(reader));
    PreviewRequest request;
    request.row = row;
    request.options.strategy = "cpu";
    return session.run(request).slice;
}

/// A sink that passes frames on and, after `pauseAfter` projections, waits
/// for a byte on `resume` (the parent's go-ahead).
class PausingSink final : public FrameSink {
public:
    PausingSink(FrameSink& sink, int pauseAfter, int resume) : m_sink(sink), m_pauseAfter(pauseAfter), m_resume(resume) {}
    void send(const Frame& frame) override {
        m_sink.send(frame);
        if (frame.kind == FrameKind::Projection && ++m_projections == m_pauseAfter) {
            char go = 0;
            if (::read(m_resume, &go, 1) != 1) ::_exit(3);
        }
    }
    void finish(const std::string& id) override { m_sink.finish(id); }

private:
    FrameSink& m_sink;
    int m_pauseAfter, m_resume;
    int m_projections = 0;
};

/// A writer process: plays `source` into the growing file `target`, pausing
/// after `pauseAfter` projections until the parent writes to the pipe; with
/// `dieAfter` >= 0 it ends after that many projections without closing.
struct WriterProcess {
    pid_t pid = -1;
    int go = -1; ///< the parent's end of the pipe

    WriterProcess(const std::filesystem::path& source, const std::filesystem::path& target, int pauseAfter,
                  int dieAfter = -1, double rate = 0.0, GrowingLayout layout = GrowingLayout::DXchange) {
        int fds[2];
        if (::pipe(fds) != 0) throw std::runtime_error("pipe");
        pid = ::fork();
        if (pid == 0) {
            ::close(fds[1]);
            try {
                auto reader = openDataset(source);
                auto file = createGrowingScanWriter(target, reader->info().rows, reader->info().columns,
                                                    reader->info().sampleType, false, layout);
                PausingSink sink(*file, pauseAfter, fds[0]);
                PlayOptions play;
                play.stopAfter = dieAfter;
                play.framesPerSecond = rate;
                playScan(*reader, sink, play);
                if (dieAfter >= 0) ::_exit(0); // dies: the file is never closed
            } catch (...) {
                ::_exit(2);
            }
            ::_exit(0);
        }
        ::close(fds[0]);
        go = fds[1];
    }
    void resume() const { EXPECT_EQ(::write(go, "g", 1), 1); }
    int join() {
        ::close(go);
        int status = 0;
        ::waitpid(pid, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
};

/// Waits until the source holds `projections` projections (or finished).
LiveState waitFor(LiveSource& source, int projections) {
    LiveState state;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (state.projections < projections && !state.finished && std::chrono::steady_clock::now() < deadline)
        state = source.wait(state.version, 200ms);
    return state;
}

/// A growing file of `layout` followed: mid-scan snapshots hold exactly the
/// frames present, and the slice after the last frame equals the finished
/// file's.
void followToTheEnd(GrowingLayout layout) {
    test::TempDir dir;
    const auto source = writeSource(dir);
    const auto live = dir / "live.h5";
    constexpr int kPause = 20;
    WriterProcess writer(source, live, kPause, -1, 0.0, layout);

    GrowingFileOptions options;
    options.stallTimeout = 30s;
    auto follow = followGrowingFile(live, options);
    LiveState state = waitFor(*follow, kPause);
    ASSERT_EQ(state.projections, kPause);
    EXPECT_FALSE(state.finished);
    EXPECT_EQ(state.flats, 1);
    EXPECT_EQ(state.darks, 1);

    // Mid-scan: exactly the first 20 projections and their angles.
    const auto full = openDataset(source);
    auto mid = follow->snapshot();
    ASSERT_EQ(mid->info().projections, kPause);
    const auto& info = full->info();
    const std::size_t frame = static_cast<std::size_t>(info.rows) * info.columns;
    std::vector<float> expected(frame * info.projections), got(frame * kPause);
    full->readSinograms(0, info.rows, expected);
    mid->readSinograms(0, info.rows, got);
    for (int r = 0; r < info.rows; ++r)
        for (int a = 0; a < kPause; ++a)
            for (int c = 0; c < info.columns; ++c)
                ASSERT_EQ(got[(static_cast<std::size_t>(r) * kPause + a) * info.columns + c],
                          expected[(static_cast<std::size_t>(r) * info.projections + a) * info.columns + c]);
    for (int a = 0; a < kPause; ++a) EXPECT_NEAR(mid->info().angles[a], info.angles[a], 1e-12);
    const Image midSlice = previewSlice(mid, 2);
    EXPECT_EQ(midSlice.width, info.columns);
    mid.reset();

    writer.resume();
    state = waitFor(*follow, info.projections);
    while (!state.finished) state = follow->wait(state.version, 200ms);
    EXPECT_EQ(state.projections, info.projections);
    EXPECT_EQ(writer.join(), 0);
    EXPECT_EQ(follow->counters().frames, info.projections + 2);

    // After the last frame: the live slice equals the finished file's, bit for bit.
    const Image liveSlice = previewSlice(follow->snapshot(), 2);
    follow.reset(); // no SWMR handle left: the file opens the ordinary way
    const Image fileSlice = previewSlice(openDataset(live), 2);
    ASSERT_EQ(liveSlice.data.size(), fileSlice.data.size());
    EXPECT_EQ(0, std::memcmp(liveSlice.data.data(), fileSlice.data.data(), liveSlice.data.size() * sizeof(float)));
    // And the mid-scan slice (20 of 48 angles) is not it.
    EXPECT_NE(0, std::memcmp(midSlice.data.data(), fileSlice.data.data(), midSlice.data.size() * sizeof(float)));
    EXPECT_EQ(openDataset(live)->info().format,
              layout == GrowingLayout::NXtomo ? DatasetFormat::NXtomo : DatasetFormat::DXchange);
}

TEST(GrowingFile, SnapshotsHoldTheFramesPresentAndTheLastEqualsTheFinishedFile) {
    followToTheEnd(GrowingLayout::DXchange);
}

TEST(GrowingFile, AGrowingNXtomoFileIsFollowedAsADXchangeOne) { followToTheEnd(GrowingLayout::NXtomo); }

TEST(GrowingFile, ALiveSessionOnTheToothFollowsItToTheFinishedFilesSlice) {
    // The APS tooth (181 views, real counts, a flat and a dark) written frame
    // by frame: a session grown with each snapshot (it keeps the rows read
    // and reads only the new frames, then adds their projections to its
    // slice) ends on the finished file's slice. Float sums in another order:
    // the bound is 1e-5 of the slice's peak.
    const auto tooth = test::realData("aps_tooth/tooth.h5");
    TOMO_REQUIRE_FILE(tooth);
    test::TempDir dir;
    const auto live = dir / "live.h5";
    constexpr int kPause = 60;
    WriterProcess writer(tooth, live, kPause, -1, /*rate=*/150.0); // the rest in ~0.8 s
    auto follow = followGrowingFile(live);
    PreviewRequest request;
    request.row = 1;
    request.axis = 295.88; // the tooth's axis (found by the axis finder)
    request.options.strategy = "cpu";
    LiveState state = waitFor(*follow, kPause);
    ASSERT_EQ(state.projections, kPause);
    PreviewSession session(follow->snapshot());
    session.grow(follow->snapshot()); // a live session from here on
    (void)session.run(request);
    writer.resume();
    int updates = 0, added = 0;
    for (state = follow->wait(state.version, 200ms); !state.finished || updates == 0;
         state = follow->wait(state.version, 200ms)) {
        session.grow(follow->snapshot());
        const PreviewResult r = session.run(request);
        ++updates;
        added += r.addedProjections;
        if (state.finished) break;
    }
    EXPECT_EQ(writer.join(), 0);
    session.grow(follow->snapshot());
    const PreviewResult last = session.run(request);
    ASSERT_EQ(last.projections, 181);
    follow.reset();
    PreviewSession whole(openDataset(live));
    const PreviewResult want = whole.run(request);
    ASSERT_EQ(last.slice.data.size(), want.slice.data.size());
    double diff = 0.0, peak = 0.0;
    for (std::size_t i = 0; i < want.slice.data.size(); ++i) {
        diff = std::max(diff, std::abs(static_cast<double>(last.slice.data[i]) - want.slice.data[i]));
        peak = std::max(peak, std::abs(static_cast<double>(want.slice.data[i])));
    }
    std::printf("MEASURED live tooth: %d updates, %d projections added, max difference %.3g of the peak\n", updates,
                added + last.addedProjections, diff / peak);
    EXPECT_LE(diff, 1e-5 * peak);
    EXPECT_GE(updates, 3);
    EXPECT_LT(added + last.addedProjections, 2 * 181) << "the updates did not add to the kept slice";
}

TEST(GrowingFile, SnapshotsTakenWhileTheWriterAppendsHoldExactlyTheFirstFrames) {
    test::TempDir dir;
    const auto source = writeSource(dir);
    const auto live = dir / "live.h5";
    WriterProcess writer(source, live, /*pauseAfter=*/-1, /*dieAfter=*/-1, /*rate=*/300.0);
    const auto full = openDataset(source);
    const auto& info = full->info();
    std::vector<float> expected(static_cast<std::size_t>(info.rows) * info.projections * info.columns);
    full->readSinograms(0, info.rows, expected);

    auto follow = followGrowingFile(live);
    LiveState state;
    int snapshots = 0;
    while (!state.finished) {
        state = follow->wait(state.version, 10s);
        if (state.projections < 2) continue;
        const auto snap = follow->snapshot();
        const int n = snap->info().projections;
        ASSERT_GE(n, 2);
        ASSERT_LE(n, info.projections);
        std::vector<float> got(static_cast<std::size_t>(info.rows) * n * info.columns);
        snap->readSinograms(0, info.rows, got);
        for (int r = 0; r < info.rows; ++r)
            ASSERT_EQ(0, std::memcmp(got.data() + static_cast<std::size_t>(r) * n * info.columns,
                                     expected.data() + static_cast<std::size_t>(r) * info.projections * info.columns,
                                     static_cast<std::size_t>(n) * info.columns * sizeof(float)))
                << "row " << r << " of a snapshot of " << n << " projections";
        ++snapshots;
    }
    EXPECT_EQ(writer.join(), 0);
    EXPECT_EQ(state.projections, info.projections);
    EXPECT_GE(snapshots, 3); // 48 frames at 300/s over 0.16 s, polled every 50 ms
}

TEST(GrowingFile, AWriterThatDiesIsReportedAfterTheTimeout) {
    test::TempDir dir;
    const auto source = writeSource(dir);
    const auto live = dir / "dead.h5";
    WriterProcess writer(source, live, /*pauseAfter=*/-1, /*dieAfter=*/5);
    EXPECT_EQ(writer.join(), 0);
    EXPECT_FALSE(hdf5WriterClosed(live));

    GrowingFileOptions options;
    options.stallTimeout = 500ms;
    auto follow = followGrowingFile(live, options);
    try {
        LiveState state;
        for (int i = 0; i < 100 && !state.finished; ++i) state = follow->wait(state.version, 100ms);
        FAIL() << "a dead writer's file was taken as finished";
    } catch (const DataError& e) {
        EXPECT_NE(std::string(e.what()).find("has not closed the file"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("5 projections"), std::string::npos) << e.what();
    }
}

TEST(GrowingFile, AFileThatNeverAppearsIsReported) {
    test::TempDir dir;
    GrowingFileOptions options;
    options.stallTimeout = 300ms;
    auto follow = followGrowingFile(dir / "never.h5", options);
    EXPECT_THROW(
        {
            LiveState state;
            for (int i = 0; i < 50; ++i) state = follow->wait(state.version, 100ms);
        },
        DataError);
}

TEST(GrowingFile, TheWriterStoresEveryFrameExactly) {
    // Frames of 3 MiB, each sample different, in both layouts, copied into
    // their chunks by 4 threads (where the file system maps shared pages)
    // and through H5Dwrite: read back as stored, every value.
    const int rows = 1024, columns = 1536, projections = 5;
    const std::size_t values = static_cast<std::size_t>(rows) * columns;
    auto frame = [&](FrameKind kind, long long index, std::uint16_t seed) {
        Frame f;
        f.kind = kind;
        f.index = index;
        f.angleDegrees = 36.0 * static_cast<double>(index);
        f.rows = rows;
        f.columns = columns;
        std::vector<std::uint16_t> v(values);
        for (std::size_t i = 0; i < values; ++i) v[i] = static_cast<std::uint16_t>(seed * 7919u + i * 31u);
        std::vector<std::byte> bytes(values * 2);
        std::memcpy(bytes.data(), v.data(), bytes.size());
        f.values = std::move(bytes);
        return f;
    };
    for (const char* copyThreads : {"4", "0"})
    for (const GrowingLayout layout : {GrowingLayout::DXchange, GrowingLayout::NXtomo}) {
        SCOPED_TRACE(std::string("TOMO_RECORD_COPY_THREADS=") + copyThreads);
        const test::ScopedEnv threads("TOMO_RECORD_COPY_THREADS", copyThreads);
        test::TempDir dir;
        const auto path = dir / (layout == GrowingLayout::DXchange ? "dx.h5" : "nx.nxs");
        auto writer = createGrowingScanWriter(path, rows, columns, SampleType::UInt16, false, layout);
        writer->send(frame(FrameKind::Dark, 0, 1));
        writer->send(frame(FrameKind::Flat, 0, 2));
        std::vector<Frame> sent;
        for (int p = 0; p < projections; ++p) {
            sent.push_back(frame(FrameKind::Projection, p, static_cast<std::uint16_t>(10 + p)));
            writer->send(sent.back());
        }
        writer->finish("");
        const auto reader = openDataset(path);
        ASSERT_EQ(reader->info().projections, projections);
        std::vector<std::byte> stored(values * projections * 2);
        reader->readRawRows(0, rows, stored);
        for (int p = 0; p < projections; ++p)
            EXPECT_EQ(0, std::memcmp(stored.data() + values * 2 * p, sent[static_cast<std::size_t>(p)].values.data(),
                                     values * 2))
                << "projection " << p << " of " << path;
        std::vector<float> flat(values), dark(values);
        ASSERT_TRUE(reader->readMeanFlat(0, rows, flat));
        ASSERT_TRUE(reader->readMeanDark(0, rows, dark));
        const Frame f = frame(FrameKind::Flat, 0, 2), d = frame(FrameKind::Dark, 0, 1);
        for (std::size_t i = 0; i < values; i += 997) {
            std::uint16_t fv = 0, dv = 0;
            std::memcpy(&fv, f.values.data() + 2 * i, 2);
            std::memcpy(&dv, d.values.data() + 2 * i, 2);
            ASSERT_EQ(flat[i], fv) << i;
            ASSERT_EQ(dark[i], dv) << i;
        }
    }
}

TEST(GrowingFile, TheWriterRefusesAnotherShapeAndAnExistingFile) {
    test::TempDir dir;
    auto writer = createGrowingScanWriter(dir / "a.h5", 2, 3, SampleType::UInt16, false);
    Frame f;
    f.rows = 2;
    f.columns = 4;
    f.values = std::vector<std::byte>(16);
    EXPECT_THROW(writer->send(f), InvalidArgument);
    writer->finish("");
    EXPECT_TRUE(hdf5WriterClosed(dir / "a.h5"));
    EXPECT_THROW(createGrowingScanWriter(dir / "a.h5", 2, 3, SampleType::UInt16, false), IoError);
}

Frame makeFrame(FrameKind kind, long long index, double angle, std::uint16_t value, const std::string& scan = "s1") {
    Frame f;
    f.kind = kind;
    f.index = index;
    f.angleDegrees = angle;
    f.rows = 2;
    f.columns = 3;
    f.scanId = scan;
    std::vector<std::uint16_t> v(6);
    for (int i = 0; i < 6; ++i) v[i] = static_cast<std::uint16_t>(value + i);
    std::vector<std::byte> bytes(12);
    std::memcpy(bytes.data(), v.data(), 12);
    f.values = std::move(bytes);
    return f;
}

TEST(FrameStore, SnapshotsSortProjectionsByIndexAndStayFrozen) {
    FrameStore store;
    EXPECT_FALSE(store.add(makeFrame(FrameKind::Dark, 0, 0, 10)));
    EXPECT_FALSE(store.add(makeFrame(FrameKind::Flat, 0, 0, 1000)));
    EXPECT_FALSE(store.add(makeFrame(FrameKind::Projection, 1, 90.0, 500)));
    EXPECT_THROW(store.snapshot("s"), DataError); // one projection
    EXPECT_FALSE(store.add(makeFrame(FrameKind::Projection, 0, 0.0, 300)));
    const auto snap = store.snapshot("s");
    store.add(makeFrame(FrameKind::Projection, 2, 45.0, 700));
    ASSERT_EQ(snap->info().projections, 2); // frozen
    EXPECT_EQ(snap->info().angles, (std::vector<double>{0.0, 90.0 * (std::numbers::pi / 180.0)}));
    std::vector<float> sino(2 * 2 * 3);
    snap->readSinograms(0, 2, sino);
    // [row][angle][column]: index 0 (300...) first, then index 1 (500...).
    EXPECT_EQ(sino, (std::vector<float>{300, 301, 302, 500, 501, 502, 303, 304, 305, 503, 504, 505}));
    std::vector<float> flat(3);
    ASSERT_TRUE(snap->readMeanFlat(1, 1, flat));
    EXPECT_EQ(flat, (std::vector<float>{1003, 1004, 1005}));
}

TEST(FrameStore, RefusesMismatchesAndResetsOnANewScan) {
    FrameStore store;
    store.add(makeFrame(FrameKind::Projection, 0, 0.0, 1));
    Frame wide = makeFrame(FrameKind::Projection, 1, 1.0, 1);
    wide.columns = 2; // 12 bytes are 2 x 3, not 2 x 2
    EXPECT_THROW(store.add(wide), DataError);
    EXPECT_THROW(store.add(makeFrame(FrameKind::Projection, 0, 5.0, 1)), DataError); // twice
    EXPECT_EQ(store.projections(), 1);
    EXPECT_TRUE(store.add(makeFrame(FrameKind::Projection, 0, 0.0, 1, "s2")));
    EXPECT_EQ(store.scanId(), "s2");
    EXPECT_EQ(store.projections(), 1);
}

std::span<const std::byte> bytesOf(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

TEST(FrameMessage, RoundTripsAndRefusesMalformedMessages) {
    const Frame f = makeFrame(FrameKind::Projection, 7, 12.5, 40);
    Frame got;
    ASSERT_TRUE(parseFrameMessage(bytesOf(frameHeader(f)), f.values, {}, {}, got));
    EXPECT_EQ(got.values.data(), f.values.data()); // the payload itself, not a copy
    EXPECT_EQ(got.kind, FrameKind::Projection);
    EXPECT_EQ(got.index, 7);
    EXPECT_EQ(got.angleDegrees, 12.5);
    EXPECT_EQ(got.scanId, "s1");
    EXPECT_EQ(got.values, f.values);

    const auto refused = [&](const std::string& header, std::span<const std::byte> payload, const std::string& why) {
        try {
            Frame out;
            parseFrameMessage(bytesOf(header), FramePixels::copyOf(payload), {}, {}, out);
            ADD_FAILURE() << "accepted: " << header;
        } catch (const DataError& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    };
    refused("{\"kind\": \"projection\", ", f.values, "not JSON");
    refused(frameHeader(f), std::span(f.values).first(11), "11 bytes of data");
    std::string header = frameHeader(f);
    header.replace(header.find("uint16"), 6, "int128");
    refused(header, f.values, "\"dtype\" is 'int128'");
    refused("{\"kind\":\"grey\",\"index\":0,\"shape\":[2,3],\"angle\":0}", f.values, "\"kind\"");
    refused("{\"kind\":\"projection\",\"index\":0,\"shape\":[2,3]}", f.values, "no \"angle\"");
    refused("{\"kind\":\"projection\",\"index\":0,\"angle\":0,\"shape\":[2,99999]}", f.values, "shape[1]");

    Frame end;
    EXPECT_FALSE(parseFrameMessage(bytesOf(frameHeader(f, true)), {}, {}, {}, end));
    EXPECT_EQ(end.scanId, "s1");
}

TEST(FrameMessage, ReadsRecastxHeaders) {
    // RECASTX: frame numbers run on across scans, no angle, uint16 implied.
    const Frame f = makeFrame(FrameKind::Projection, 0, 0, 1);
    const std::string header = R"({"frame": 103, "image_attributes": {"scan_index": 2}, "shape": [2, 3]})";
    Frame got;
    StreamDefaults defaults;
    defaults.projectionsPerScan = 100;
    ASSERT_TRUE(parseFrameMessage(bytesOf(header), f.values, {}, defaults, got));
    EXPECT_EQ(got.kind, FrameKind::Projection);
    EXPECT_EQ(got.index, 3);
    EXPECT_DOUBLE_EQ(got.angleDegrees, 3 * 1.8);
    EXPECT_EQ(got.scanId, "scan 1");
    const std::string dark = R"({"frame": 0, "image_attributes": {"scan_index": 0}, "shape": [2, 3]})";
    ASSERT_TRUE(parseFrameMessage(bytesOf(dark), f.values, {}, defaults, got));
    EXPECT_EQ(got.kind, FrameKind::Dark);
}

#if TOMO_WITH_ZMQ

/// Plays the phantom scan into a sender to `endpoint` and checks that the
/// stream's snapshot holds every projection in order, as the file does.
void streamWholeScan(const std::string& endpoint) {
    test::TempDir dir;
    const auto path = writeSource(dir);
    StreamOptions options;
    options.endpoint = endpoint;
    auto stream = openZmqStream(options);
    const auto file = openDataset(path);
    long long sent = 0;
    std::thread sender([&] {
        auto sink = createZmqSender(endpoint);
        sent = playScan(*openDataset(path), *sink);
    });
    LiveState state;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (!state.finished && std::chrono::steady_clock::now() < deadline) state = stream->wait(state.version, 200ms);
    sender.join();
    ASSERT_TRUE(state.finished);
    const DatasetInfo& info = file->info();
    EXPECT_EQ(state.projections, info.projections);
    EXPECT_EQ(state.flats, 1);
    EXPECT_EQ(state.darks, 1);
    EXPECT_EQ(stream->counters().frames, sent);
    EXPECT_EQ(stream->counters().rejected, 0);
    const auto snap = stream->snapshot();
    const std::size_t bytes = static_cast<std::size_t>(info.projections) * info.rows * info.columns * 2;
    std::vector<std::byte> a(bytes), b(bytes);
    file->readRawRows(0, info.rows, a);
    snap->readRawRows(0, info.rows, b);
    EXPECT_EQ(a, b);
    ASSERT_EQ(snap->info().angles.size(), info.angles.size());
    for (std::size_t i = 0; i < info.angles.size(); ++i) EXPECT_NEAR(snap->info().angles[i], info.angles[i], 1e-12);
}

TEST(ZmqStream, InprocDeliversEveryFrameInOrder) { streamWholeScan("inproc://tomo-test-whole-scan"); }

TEST(ZmqStream, IpcDeliversEveryFrameInOrder) {
    test::TempDir dir;
    streamWholeScan("ipc://" + (dir / "stream.sock").string());
}

TEST(ZmqStream, ASubscriberReceivesAPublishedScan) {
    test::TempDir dir;
    const auto path = writeSource(dir);
    const std::string endpoint = "ipc://" + (dir / "pub.sock").string();
    auto publisher = createZmqSender(endpoint, /*bind=*/true, false, /*publish=*/true);
    const StreamOptions options = streamOptionsFor("sub+" + endpoint);
    EXPECT_TRUE(options.subscribe);
    EXPECT_FALSE(options.bind);
    EXPECT_EQ(options.endpoint, endpoint);
    auto stream = openZmqStream(options);
    EXPECT_EQ(stream->describe(), "ZeroMQ SUB connected to " + endpoint);

    // A publisher drops what it sends before the subscription arrives
    // (ZeroMQ's "slow joiner"): probe frames of another scan until one is in.
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (stream->counters().frames == 0 && std::chrono::steady_clock::now() < deadline) {
        publisher->send(makeFrame(FrameKind::Dark, 0, 0.0, 1, "probe"));
        std::this_thread::sleep_for(20ms);
    }
    ASSERT_GT(stream->counters().frames, 0);
    const auto file = openDataset(path);
    PlayOptions play;
    play.scanId = "published";
    const long long sent = playScan(*file, *publisher, play);
    LiveState state;
    while (!state.finished && std::chrono::steady_clock::now() < deadline) state = stream->wait(state.version, 200ms);
    ASSERT_TRUE(state.finished);
    EXPECT_EQ(state.scanId, "published");
    EXPECT_EQ(state.projections, file->info().projections);
    EXPECT_EQ(sent, file->info().projections + 2);
    const DatasetInfo& info = file->info();
    const std::size_t bytes = static_cast<std::size_t>(info.projections) * info.rows * info.columns * 2;
    std::vector<std::byte> a(bytes), b(bytes);
    file->readRawRows(0, info.rows, a);
    stream->snapshot()->readRawRows(0, info.rows, b);
    EXPECT_EQ(a, b);

    const StreamOptions pull = streamOptionsFor("tcp://127.0.0.1:5555");
    EXPECT_FALSE(pull.subscribe);
    EXPECT_TRUE(pull.bind);
}

TEST(ZmqStream, MalformedMessagesAreLoggedAndSkippedAndANewScanResets) {
    test::TempDir dir;
    const std::string endpoint = "ipc://" + (dir / "malformed.sock").string();
    std::mutex logMutex;
    std::vector<std::string> log;
    StreamOptions options;
    options.endpoint = endpoint;
    options.log = [&](const std::string& line) {
        const std::lock_guard lock(logMutex);
        log.push_back(line);
    };
    auto stream = openZmqStream(options);

    // A sender of raw parts, as a faulty detector would send them.
    zmq::context_t context;
    zmq::socket_t push(context, zmq::socket_type::push);
    push.connect(endpoint);
    const auto sendParts = [&](const std::string& header, std::span<const std::byte> payload) {
        push.send(zmq::buffer(header), zmq::send_flags::sndmore);
        push.send(zmq::buffer(payload.data(), payload.size()), zmq::send_flags::none);
    };
    const Frame first = makeFrame(FrameKind::Projection, 0, 0.0, 1);
    sendParts(frameHeader(first), first.values);
    sendParts("{\"kind\": \"projection\", \"index\": 1,", first.values);       // bad JSON
    const Frame second = makeFrame(FrameKind::Projection, 1, 1.0, 1);
    sendParts(frameHeader(second), std::span(second.values).first(11));         // wrong size
    std::string header = frameHeader(second);
    header.replace(header.find("uint16"), 6, "int128");
    sendParts(header, second.values);                                            // unknown dtype
    sendParts(frameHeader(second), second.values);

    LiveState state;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (state.projections < 2 && std::chrono::steady_clock::now() < deadline)
        state = stream->wait(state.version, 100ms);
    EXPECT_EQ(state.projections, 2);
    EXPECT_EQ(stream->counters().frames, 2);
    EXPECT_EQ(stream->counters().rejected, 3);
    {
        const std::lock_guard lock(logMutex);
        ASSERT_EQ(log.size(), 3u);
        EXPECT_NE(log[0].find("not JSON"), std::string::npos) << log[0];
        EXPECT_NE(log[1].find("11 bytes of data"), std::string::npos) << log[1];
        EXPECT_NE(log[2].find("int128"), std::string::npos) << log[2];
    }
    // The sender restarts with a new scan id: the view starts afresh.
    const int scan = state.scan;
    const Frame next = makeFrame(FrameKind::Projection, 0, 0.0, 9, "s2");
    sendParts(frameHeader(next), next.values);
    while (state.scanId != "s2" && std::chrono::steady_clock::now() < deadline)
        state = stream->wait(state.version, 100ms);
    EXPECT_EQ(state.scanId, "s2");
    EXPECT_EQ(state.scan, scan + 1);
    EXPECT_EQ(state.projections, 1);
    EXPECT_EQ(stream->counters().scans, 2);
}

TEST(ZmqStream, RecordWritesTheFramesBeforeAndAfterItStartedAndNoneOfAnotherScan) {
    test::TempDir dir;
    const std::string endpoint = "inproc://tomo-test-record";
    StreamOptions options;
    options.endpoint = endpoint;
    auto stream = openZmqStream(options);
    auto sink = createZmqSender(endpoint);
    const auto waitProjections = [&](int n) {
        LiveState state;
        const auto deadline = std::chrono::steady_clock::now() + 30s;
        while (state.projections < n && std::chrono::steady_clock::now() < deadline)
            state = stream->wait(state.version, 100ms);
        return state.projections;
    };
    sink->send(makeFrame(FrameKind::Dark, 0, 0.0, 10));
    sink->send(makeFrame(FrameKind::Flat, 0, 0.0, 1000));
    for (int p = 0; p < 3; ++p) sink->send(makeFrame(FrameKind::Projection, p, 10.0 * p, static_cast<std::uint16_t>(100 + p)));
    ASSERT_EQ(waitProjections(3), 3);
    const auto recording = dir / "record.h5";
    stream->record(createGrowingScanWriter(recording, 2, 3, SampleType::UInt16, false));
    for (int p = 3; p < 6; ++p) sink->send(makeFrame(FrameKind::Projection, p, 10.0 * p, static_cast<std::uint16_t>(100 + p)));
    ASSERT_EQ(waitProjections(6), 6);
    sink->send(makeFrame(FrameKind::Projection, 0, 0.0, 7, "next scan")); // finishes the recording
    LiveState state;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (state.scanId != "next scan" && std::chrono::steady_clock::now() < deadline)
        state = stream->wait(state.version, 100ms);
    ASSERT_TRUE(hdf5WriterClosed(recording));
    const auto recorded = openDataset(recording);
    ASSERT_EQ(recorded->info().projections, 6);
    EXPECT_EQ(recorded->info().flats, 1);
    EXPECT_EQ(recorded->info().darks, 1);
    std::vector<float> sino(2 * 6 * 3);
    recorded->readSinograms(0, 2, sino);
    for (int p = 0; p < 6; ++p) {
        EXPECT_EQ(sino[static_cast<std::size_t>(p) * 3], 100.0f + p) << p; // row 0, column 0 of projection p
        EXPECT_NEAR(recorded->info().angles[p], 10.0 * p * (std::numbers::pi / 180.0), 1e-12);
    }
}

/// A stream received on `endpoint` (inproc://) with `options`, and a sender to it.
struct InprocStream {
    std::unique_ptr<LiveSource> stream;
    std::unique_ptr<FrameSink> sender;
    explicit InprocStream(const std::string& endpoint, StreamOptions options = {}) {
        options.endpoint = endpoint;
        stream = openZmqStream(options);
        sender = createZmqSender(endpoint);
    }
};

/// What Record's sink in the tests saw: each frame's index and first
/// sample in the order written. It lets the first frame through only when
/// open() is called (a disk that stalls), or after 5 s.
class GatedRecording {
public:
    void write(const Frame& frame) {
        std::unique_lock lock(m_mutex);
        m_writing = true;
        m_changed.notify_all();
        m_changed.wait_for(lock, 5s, [&] { return m_open; });
        m_open = true; // once open, every frame passes
        std::uint16_t first = 0;
        std::memcpy(&first, frame.values.data(), sizeof first);
        m_written.emplace_back(frame.index, first);
    }
    void finish(const std::string& scanId) {
        const std::lock_guard lock(m_mutex);
        m_finished.push_back(scanId);
    }
    /// Waits until the first frame is being written.
    void waitWriting() {
        std::unique_lock lock(m_mutex);
        m_changed.wait_for(lock, 30s, [&] { return m_writing; });
    }
    void open() {
        const std::lock_guard lock(m_mutex);
        m_open = true;
        m_changed.notify_all();
    }
    std::vector<std::pair<long long, std::uint16_t>> written() const {
        const std::lock_guard lock(m_mutex);
        return m_written;
    }
    std::vector<std::string> finished() const {
        const std::lock_guard lock(m_mutex);
        return m_finished;
    }

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    bool m_writing = false, m_open = false;
    std::vector<std::pair<long long, std::uint16_t>> m_written;
    std::vector<std::string> m_finished;
};

/// The sink (owned by the source) of a recording the test keeps.
struct GatedSink final : FrameSink {
    std::shared_ptr<GatedRecording> recording;
    explicit GatedSink(std::shared_ptr<GatedRecording> r) : recording(std::move(r)) {}
    void send(const Frame& frame) override { recording->write(frame); }
    void finish(const std::string& scanId) override { recording->finish(scanId); }
};

TEST(ZmqStream, RecordBehindASlowSinkHoldsTheReceiverBackAndWritesEveryFrameInOrder) {
    StreamOptions options;
    options.recordQueueBytes = 24; // two 2 x 3 uint16 frames
    auto [stream, sender] = InprocStream("inproc://tomo-test-record-slow", options);
    const auto sink = std::make_shared<GatedRecording>();
    stream->record(std::make_unique<GatedSink>(sink));
    constexpr int kFrames = 40;
    for (int p = 0; p < kFrames; ++p)
        sender->send(makeFrame(FrameKind::Projection, p, 4.5 * p, static_cast<std::uint16_t>(1000 + p)));
    sender->finish("s1");

    // The sink stalls on frame 0, frame 1 waits in the queue (full at 24
    // bytes): the receiver waits with frame 2, not yet stored, dropping
    // nothing. Meanwhile the display still reads the store (no lock held).
    sink->waitWriting();
    const LiveState two = waitFor(*stream, 2);
    EXPECT_EQ(two.projections, 2);
    const LiveState held = stream->wait(two.version, 300ms); // had the receiver gone on, more would be here
    EXPECT_EQ(held.projections, 2);
    EXPECT_FALSE(held.finished);
    EXPECT_EQ(stream->snapshot()->info().projections, 2);

    sink->open();
    LiveState state = waitFor(*stream, kFrames);
    while (!state.finished) state = stream->wait(state.version, 200ms);
    EXPECT_EQ(state.projections, kFrames);
    stream->record(nullptr); // writes out the queue, then finishes the sink
    const auto written = sink->written();
    ASSERT_EQ(written.size(), static_cast<std::size_t>(kFrames));
    for (int p = 0; p < kFrames; ++p) {
        EXPECT_EQ(written[static_cast<std::size_t>(p)].first, p);
        EXPECT_EQ(written[static_cast<std::size_t>(p)].second, 1000 + p);
    }
    EXPECT_EQ(sink->finished(), std::vector<std::string>{"s1"});
}

TEST(ZmqStream, InprocFramesAreTheSendersBytesNotCopies) {
    auto [stream, sender] = InprocStream("inproc://tomo-test-zero-copy");
    const Frame frame = makeFrame(FrameKind::Projection, 0, 0.0, 5);
    EXPECT_EQ(frame.values.owner().use_count(), 1);
    sender->send(frame);
    sender->send(makeFrame(FrameKind::Projection, 1, 90.0, 6));
    ASSERT_EQ(waitFor(*stream, 2).projections, 2);
    // The receiver's store holds the sender's bytes themselves.
    EXPECT_EQ(frame.values.owner().use_count(), 2);
    std::vector<std::byte> rows(2 * 12);
    stream->snapshot()->readRawRows(0, 2, rows);
    EXPECT_TRUE(std::equal(frame.values.begin(), frame.values.end(), rows.begin()));
    stream.reset(); // the store is gone: only the sender holds them
    EXPECT_EQ(frame.values.owner().use_count(), 1);
}

TEST(ZmqStream, TheDisplaySkipsToTheNewestSnapshotAndCountsTheFramesItSkipped) {
    auto [stream, sender] = InprocStream("inproc://tomo-test-display-skips");
    DisplaySkips skips;
    // The display is busy while 10 projections arrive, then takes the newest snapshot: 9 had no update of their own.
    for (int p = 0; p < 10; ++p) sender->send(makeFrame(FrameKind::Projection, p, 18.0 * p, 1));
    LiveState state = waitFor(*stream, 10);
    auto snapshot = stream->snapshot();
    EXPECT_EQ(snapshot->info().projections, 10);
    EXPECT_EQ(skips.shown(state.scan, snapshot->info().projections), 9);
    // One more arrives: shown, nothing skipped; then 5 while it draws: 4 skipped.
    sender->send(makeFrame(FrameKind::Projection, 10, 180.0, 1));
    state = waitFor(*stream, 11);
    EXPECT_EQ(skips.shown(state.scan, stream->snapshot()->info().projections), 0);
    for (int p = 11; p < 16; ++p) sender->send(makeFrame(FrameKind::Projection, p, 18.0 * p, 1));
    state = waitFor(*stream, 16);
    EXPECT_EQ(skips.shown(state.scan, stream->snapshot()->info().projections), 4);
    EXPECT_EQ(skips.skipped(), 13);
    EXPECT_EQ(skips.projections(), 16);
    // A new scan starts afresh: its first snapshot of 3 skipped 2.
    for (int p = 0; p < 3; ++p) sender->send(makeFrame(FrameKind::Projection, p, 60.0 * p, 1, "s2"));
    while (state.scanId != "s2" || state.projections < 3) state = stream->wait(state.version, 200ms);
    EXPECT_EQ(skips.shown(state.scan, stream->snapshot()->info().projections), 2);
    EXPECT_EQ(skips.skipped(), 15);
}

TEST(ZmqStream, AForkedChildThatExitsAfterAStreamWasUsedEnds) {
    // The process-wide context lives on after the stream; a child (tomo-recon's
    // metadata probe, the tests' writers) that calls exit() runs the static
    // destructors: it must not wait for ZeroMQ threads it does not have.
    {
        StreamOptions options;
        options.endpoint = "inproc://tomo-test-fork";
        auto stream = openZmqStream(options);
        auto sink = createZmqSender(options.endpoint);
        sink->send(makeFrame(FrameKind::Projection, 0, 0.0, 1));
        LiveState state;
        for (int i = 0; i < 100 && state.projections < 1; ++i) state = stream->wait(state.version, 100ms);
        ASSERT_EQ(state.projections, 1);
    }
    const pid_t pid = ::fork();
    if (pid == 0) std::exit(0);
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 100 && done == 0; ++i) {
        done = ::waitpid(pid, &status, WNOHANG);
        if (done == 0) std::this_thread::sleep_for(50ms);
    }
    if (done == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
    }
    EXPECT_NE(done, 0) << "the child hung in exit()";
}

TEST(ZmqStream, RefusesEveryInterfaceUnlessAllowed) {
    StreamOptions options;
    options.endpoint = "tcp://*:0";
    EXPECT_THROW(openZmqStream(options), InvalidArgument);
    options.endpoint = "udp://127.0.0.1:1";
    EXPECT_THROW(openZmqStream(options), InvalidArgument);
}

#else

TEST(ZmqStream, ABuildWithoutZeroMqSaysSo) {
    StreamOptions options;
    options.endpoint = "inproc://x";
    EXPECT_FALSE(zmqAvailable());
    EXPECT_THROW(openZmqStream(options), InvalidArgument);
}

#endif

} // namespace
} // namespace tomo
