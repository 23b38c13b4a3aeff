#include "bench_stream.h"

#include "bench_pipeline.h"
#include "cli_support.h"
#include "tomo/error.h"
#include "tomo/live.h"
#include "tomo/phantom.h"
#include "tomo/preview.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <filesystem>
#include <thread>
#include <sys/wait.h>
#include <unistd.h>

namespace tomo::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double medianOf(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

/// A handful of distinct uint16 frames (the phantom's middle-row projection
/// at a few angles, the same on every detector row), cycled through by the
/// sender: generating a fresh 2048^2 frame would take the sender longer
/// than sending it.
class FrameSource {
public:
    FrameSource(int rows, int columns) : m_rows(rows), m_columns(columns) {
        PhantomSpec spec;
        spec.bins = columns;
        spec.rows = 1;
        spec.attenuationScale = 2.0 / columns;
        const ImageStack lines = projectPhantom(spec, uniformAngles(kDistinct));
        const std::size_t image = static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns);
        for (int k = 0; k < kDistinct; ++k) {
            std::vector<std::uint16_t> row(static_cast<std::size_t>(columns));
            for (int c = 0; c < columns; ++c)
                row[static_cast<std::size_t>(c)] = static_cast<std::uint16_t>(
                    100.0f + 20000.0f * std::exp(-lines.data[static_cast<std::size_t>(k) * columns + c]) + 0.5f);
            auto& frame = m_frames.emplace_back(image * 2);
            for (int r = 0; r < rows; ++r)
                std::memcpy(frame.data() + static_cast<std::size_t>(r) * columns * 2, row.data(), row.size() * 2);
        }
    }
    Frame frame(FrameKind kind, int index, int projections, const std::string& scan) const {
        Frame f;
        f.kind = kind;
        f.index = index;
        f.angleDegrees = 180.0 * index / projections;
        f.rows = m_rows;
        f.columns = m_columns;
        f.scanId = scan;
        // A frame of its own (a copy), as a detector's: frames sharing their bytes would cost the receiver nothing.
        if (kind == FrameKind::Projection) {
            f.values = m_frames[static_cast<std::size_t>(index % kDistinct)];
        } else {
            std::vector<std::byte> bytes(m_frames.front().size());
            const std::uint16_t v = kind == FrameKind::Flat ? 20100 : 100;
            for (std::size_t i = 0; i < bytes.size(); i += 2) std::memcpy(bytes.data() + i, &v, 2);
            f.values = std::move(bytes);
        }
        return f;
    }
    std::size_t frameBytes() const { return m_frames.front().size(); }

private:
    static constexpr int kDistinct = 16;
    int m_rows, m_columns;
    std::vector<std::vector<std::byte>> m_frames;
};

/// Sends a dark, a flat and `projections` projections at `rate` (0: as fast
/// as the sink takes them), then finishes the scan. The projections are
/// made before the clock starts.
class Sender {
public:
    virtual ~Sender() = default;
    /// Waits until the frames are made, lets the sender go and returns when
    /// it did: the clock starts there.
    virtual Clock::time_point start() = 0;
    virtual bool done() const = 0;
    /// Waits for the end; throws what the sender met.
    virtual void join() = 0;
    virtual Clock::time_point lastSent() const = 0;
    virtual double seconds() const = 0;
};

/// All frames of a scan, made before the clock starts.
std::vector<Frame> scanFrames(const FrameSource& frames, int projections, const std::string& scan) {
    std::vector<Frame> all;
    all.push_back(frames.frame(FrameKind::Dark, 0, projections, scan));
    all.push_back(frames.frame(FrameKind::Flat, 0, projections, scan));
    for (int p = 0; p < projections; ++p) all.push_back(frames.frame(FrameKind::Projection, p, projections, scan));
    return all;
}

/// Sends `all` into `sink` at `rate`; returns the time of the last frame.
Clock::time_point sendAll(std::vector<Frame>& all, FrameSink& sink, double rate) {
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (rate > 0.0)
            std::this_thread::sleep_until(
                t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i / rate)));
        sink.send(all[i]);
        all[i].values = {};
    }
    return Clock::now();
}

/// The sender on a thread of this process (ZeroMQ).
class ThreadSender final : public Sender {
public:
    ThreadSender(const FrameSource& frames, FrameSink& sink, int projections, double rate, std::string scan)
        : m_thread([&frames, &sink, projections, rate, scan, this] {
              try {
                  std::vector<Frame> all = scanFrames(frames, projections, scan);
                  m_ready = true;
                  while (!m_go) std::this_thread::sleep_for(1ms);
                  const auto t0 = Clock::now();
                  m_lastSent = sendAll(all, sink, rate);
                  m_seconds = std::chrono::duration<double>(m_lastSent - t0).count();
                  sink.finish(scan);
              } catch (const std::exception& e) {
                  m_error = e.what();
              }
              m_done = true;
          }) {}
    ~ThreadSender() override {
        if (m_thread.joinable()) m_thread.join();
    }
    Clock::time_point start() override {
        while (!m_ready && !m_done) std::this_thread::sleep_for(1ms);
        const auto t0 = Clock::now();
        m_go = true;
        return t0;
    }
    bool done() const override { return m_done; }
    void join() override {
        if (m_thread.joinable()) m_thread.join();
        if (!m_error.empty()) throw IoError("tomo-bench --stream: the sender failed: " + m_error);
    }
    Clock::time_point lastSent() const override { return m_lastSent; }
    double seconds() const override { return m_seconds; }

private:
    std::atomic<bool> m_ready{false}, m_go{false}, m_done{false};
    Clock::time_point m_lastSent;
    double m_seconds = 0.0;
    std::string m_error;
    std::thread m_thread;
};

/// The writer of a growing file in a child process: HDF5 keeps one file
/// object per process, so a reader beside the writer would not read the
/// file as SWMR readers do. The steady clock is the machine's monotonic
/// clock, the same in both processes.
class ProcessSender final : public Sender {
public:
    ProcessSender(const FrameSource& frames, const fs::path& file, int rows, int columns, int projections, double rate,
                  const std::string& scan) {
        int toChild[2], toParent[2];
        if (::pipe(toChild) != 0 || ::pipe(toParent) != 0) throw IoError("tomo-bench --stream: pipe() failed");
        std::fflush(stdout);
        m_pid = ::fork();
        if (m_pid < 0) throw IoError("tomo-bench --stream: fork() failed");
        if (m_pid == 0) {
            std::int64_t result[2] = {0, -1}; // last frame (ns of the steady clock), seconds x 1e9 (-1: failed)
            try {
                std::vector<Frame> all = scanFrames(frames, projections, scan);
                auto sink = createGrowingScanWriter(file, rows, columns, SampleType::UInt16, /*overwrite=*/true);
                char go = 0;
                if (::write(toParent[1], "r", 1) != 1 || ::read(toChild[0], &go, 1) != 1) ::_exit(1);
                const auto t0 = Clock::now();
                const auto last = sendAll(all, *sink, rate);
                sink->finish(scan);
                result[0] = std::chrono::duration_cast<std::chrono::nanoseconds>(last.time_since_epoch()).count();
                result[1] = std::chrono::duration_cast<std::chrono::nanoseconds>(last - t0).count();
            } catch (...) {
            }
            const bool written = ::write(toParent[1], result, sizeof result) == static_cast<ssize_t>(sizeof result);
            ::_exit(written && result[1] >= 0 ? 0 : 1);
        }
        ::close(toChild[0]);
        ::close(toParent[1]);
        m_go = toChild[1];
        m_results = toParent[0];
        char ready = 0;
        if (::read(m_results, &ready, 1) != 1) throw IoError("tomo-bench --stream: the writer process failed");
    }
    ~ProcessSender() override {
        if (m_pid > 0) {
            ::close(m_go);
            ::waitpid(m_pid, nullptr, 0);
        }
        ::close(m_results);
    }
    Clock::time_point start() override {
        const auto t0 = Clock::now(); // the child made its frames before it said it was ready
        if (::write(m_go, "g", 1) != 1) throw IoError("tomo-bench --stream: the writer process is gone");
        return t0;
    }
    bool done() const override { return m_pid <= 0 || ::waitpid(m_pid, nullptr, WNOHANG) != 0; }
    void join() override {
        std::int64_t result[2] = {0, -1};
        const bool read = ::read(m_results, result, sizeof result) == static_cast<ssize_t>(sizeof result);
        ::waitpid(m_pid, nullptr, 0);
        m_pid = -1;
        if (!read || result[1] < 0) throw IoError("tomo-bench --stream: the writer process failed");
        m_lastSent = Clock::time_point(std::chrono::nanoseconds(result[0]));
        m_seconds = static_cast<double>(result[1]) / 1e9;
    }
    Clock::time_point lastSent() const override { return m_lastSent; }
    double seconds() const override { return m_seconds; }

private:
    pid_t m_pid = -1;
    int m_go = -1, m_results = -1;
    Clock::time_point m_lastSent;
    double m_seconds = 0.0;
};

struct Transport {
    std::unique_ptr<LiveSource> receiver;
    std::unique_ptr<FrameSink> sink; ///< ZeroMQ: the sender's socket
    std::unique_ptr<Sender> sender;
};

Transport connect(const StreamBenchSettings& s, const FrameSource& frames, const fs::path& dir,
                  const std::string& phase, int rows, double rate) {
    Transport t;
    const std::string scan = "bench-" + phase;
    if (s.via == "file") {
        const fs::path file = dir / ("stream-" + phase + ".h5");
        t.sender = std::make_unique<ProcessSender>(frames, file, rows, s.size, s.projections, rate, scan);
        GrowingFileOptions options;
        options.pollInterval = 2ms;
        options.stallTimeout = 60s;
        t.receiver = followGrowingFile(file, options);
        return t;
    }
    StreamOptions options;
    options.endpoint = s.via == "ipc" ? "ipc://" + (dir / ("stream-" + phase + ".sock")).string()
                                      : "inproc://tomo-bench-" + phase;
    options.log = [](const std::string& line) { std::printf("receiver: %s\n", line.c_str()); };
    t.receiver = openZmqStream(options);
    t.sink = createZmqSender(options.endpoint);
    t.sender = std::make_unique<ThreadSender>(frames, *t.sink, s.projections, rate, scan);
    return t;
}

LiveState waitFinished(LiveSource& source, const Sender& sender) {
    LiveState state;
    auto lastChange = Clock::now();
    while (!state.finished) {
        throwIfInterrupted();
        const long long seen = state.version;
        state = source.wait(seen, 200ms);
        if (state.version != seen) lastChange = Clock::now();
        if (sender.done() && Clock::now() - lastChange > 30s)
            throw DataError("tomo-bench --stream: the receiver stopped receiving before the scan's end");
    }
    return state;
}

} // namespace

int runStreamBenchmark(const StreamBenchSettings& s) {
    if (s.via != "inproc" && s.via != "ipc" && s.via != "file")
        throw InvalidArgument("--stream-via " + s.via + ": expected inproc, ipc or file");
    if (s.via != "file" && !zmqAvailable())
        throw InvalidArgument("--stream-via " + s.via + ": this build has no ZeroMQ (use --stream-via file)");
    if (s.record && s.via == "file")
        throw InvalidArgument("--record: with --stream-via file the stream is already a file");
    const int rows = s.rows > 0 ? s.rows : s.size;
    const fs::path dir = s.dir.empty() ? fs::temp_directory_path() / ("tomo-bench-stream-" + std::to_string(::getpid()))
                                       : fs::path(s.dir);
    fs::create_directories(dir);
    struct Cleanup {
        fs::path dir;
        bool own;
        ~Cleanup() {
            std::error_code ec;
            if (own) fs::remove_all(dir, ec);
        }
    } cleanup{dir, s.dir.empty()};

    const FrameSource frames(rows, s.size);
    const double frameGB = static_cast<double>(frames.frameBytes()) / 1e9;
    const long long total = s.projections + 2;
    std::printf("tomo-bench --stream: %d x %d uint16 frames (%.1f MB), %d projections + a flat and a dark per scan, "
                "via %s\n",
                rows, s.size, frameGB * 1e3, s.projections, s.via.c_str());
    std::fflush(stdout);

    // ---- ingest: as fast as the receiver takes the frames, no display.
    json ingest;
    {
        Transport t = connect(s, frames, dir, "ingest", rows, 0.0);
        const fs::path recording = dir / "recording.h5";
        if (s.record) t.receiver->record(createGrowingScanWriter(recording, rows, s.size, SampleType::UInt16, true));
        Sender& sender = *t.sender;
        const auto t0 = sender.start();
        const LiveState state = waitFinished(*t.receiver, sender);
        // With Record, the clock stops once the recording is written out and
        // closed: its queue may still hold up to a GiB of frames received.
        if (s.record) t.receiver->record(nullptr);
        const double seconds = since(t0);
        sender.join();
        const LiveCounters c = t.receiver->counters();
        const long long recorded = s.record ? openDataset(recording)->info().projections : -1;
        const double gbps = static_cast<double>(c.bytes) / 1e9 / seconds;
        std::printf("\ningest   %lld of %lld frames in %.3f s: %.2f GB/s, %.0f frames/s, %lld lost%s\n", c.frames, total,
                    seconds, gbps, static_cast<double>(c.frames) / seconds, total - c.frames,
                    s.record ? (", " + std::to_string(recorded) + " of " + std::to_string(s.projections) +
                                " projections in the recording")
                                   .c_str()
                             : "");
        ingest = {{"frames_sent", total},
                  {"frames_received", c.frames},
                  {"frames_lost", total - c.frames},
                  {"projections_received", state.projections},
                  {"seconds", seconds},
                  {"gigabytes_per_second", gbps},
                  {"frames_per_second", static_cast<double>(c.frames) / seconds},
                  {"rejected", c.rejected},
                  {"record", s.record}};
        if (s.record) ingest["projections_recorded"] = recorded;
    }

    // ---- live: at --rate, three slices from the newest snapshot, again and again.
    json live;
    {
        Transport t = connect(s, frames, dir, "live", rows, s.rate);
        Sender& sender = *t.sender;
        PreviewRequest request;
        request.options.strategy = s.strategy;
        request.options.threads = s.threads;
        request.options.device = s.device;
        const int views[3] = {rows / 4, rows / 2, (3 * rows) / 4};
        // One session per view, grown with each snapshot: it adds the new
        // projections to the slice it keeps (PreviewSession::grow).
        std::vector<std::unique_ptr<PreviewSession>> sessions;
        long long backprojected = 0;
        std::vector<double> updateSeconds;
        DisplaySkips skips;
        int updates = 0;
        std::string strategy;
        Clock::time_point arrivedAll{}, shownAll{};
        // Where the last update's time went: the snapshot, then per slice
        // reading + corrections, plan + filter, back-projection, the rest.
        double lastSnapshot = 0.0;
        std::vector<PreviewResult> lastResults;
        const auto t0 = sender.start();
        LiveState state;
        for (;;) {
            throwIfInterrupted();
            const long long seen = state.version;
            state = t.receiver->wait(seen, 1s);
            if (state.version == seen && sender.done() && since(sender.lastSent()) > 30.0)
                throw DataError("tomo-bench --stream: the live scan stopped before its last frame");
            if (state.version == seen || state.projections < 2) continue;
            const auto u0 = Clock::now();
            if (state.projections == s.projections && arrivedAll == Clock::time_point{}) arrivedAll = u0;
            const auto snapshot = t.receiver->snapshot();
            lastSnapshot = since(u0);
            const int n = snapshot->info().projections;
            lastResults.clear();
            for (std::size_t v = 0; v < std::size(views); ++v) {
                if (sessions.size() <= v) sessions.push_back(std::make_unique<PreviewSession>(snapshot));
                else sessions[v]->grow(snapshot);
                request.row = views[v];
                PreviewResult r = sessions[v]->run(request);
                strategy = r.strategy;
                backprojected += r.addedProjections;
                r.slice = Image(); // only its figures are kept
                lastResults.push_back(std::move(r));
            }
            updateSeconds.push_back(since(u0));
            skips.shown(state.scan, n);
            ++updates;
            if (n == s.projections) {
                shownAll = Clock::now();
                break;
            }
        }
        const double seconds = since(t0);
        sender.join();
        const double latency = std::chrono::duration<double>(shownAll - sender.lastSent()).count();
        const double arrival = std::chrono::duration<double>(arrivedAll - sender.lastSent()).count();
        const LiveCounters c = t.receiver->counters();
        std::printf("live     %s: %lld frames in %.2f s (%.0f frames/s sent), %d display updates (%.1f/s, %.1f ms "
                    "median for 3 slices), %lld frames skipped by the display, %lld lost; %.1f projections "
                    "back-projected per slice and update (new ones and re-weighted neighbours)\n",
                    strategy.c_str(), c.frames, sender.seconds(), static_cast<double>(total) / sender.seconds(), updates,
                    updates / seconds, medianOf(updateSeconds) * 1e3, skips.skipped(), total - c.frames,
                    updates ? static_cast<double>(backprojected) / (3.0 * updates) : 0.0);
        std::printf("latency  last frame sent -> three %d^2 slices of the whole scan: %.1f ms (of which %.1f ms until "
                    "the display loop saw the frame)\n",
                    s.size, latency * 1e3, arrival * 1e3);
        json lastUpdate = json::array();
        std::printf("last update: snapshot %.1f ms", lastSnapshot * 1e3);
        for (std::size_t v = 0; v < lastResults.size(); ++v) {
            const PreviewResult& r = lastResults[v];
            const double rest = r.secondsTotal - r.secondsLoad - r.secondsFilter - r.secondsBackproject;
            std::printf("; row %d: %.1f ms (load %.1f, plan + filter %.1f, back-projection %.1f of %d projections, "
                        "rest %.1f)",
                        views[v], r.secondsTotal * 1e3, r.secondsLoad * 1e3, r.secondsFilter * 1e3,
                        r.secondsBackproject * 1e3, r.addedProjections, rest * 1e3);
            lastUpdate.push_back({{"row", views[v]},
                                  {"ms_total", r.secondsTotal * 1e3},
                                  {"ms_load", r.secondsLoad * 1e3},
                                  {"ms_plan_and_filter", r.secondsFilter * 1e3},
                                  {"ms_backprojection", r.secondsBackproject * 1e3},
                                  {"projections_added", r.addedProjections}});
        }
        std::printf("\n");
        live = {{"last_update_ms_snapshot", lastSnapshot * 1e3},
                {"last_update_slices", lastUpdate},{"strategy", strategy},
                {"rate_requested", s.rate},
                {"frames_per_second_sent", static_cast<double>(total) / sender.seconds()},
                {"frames_received", c.frames},
                {"frames_lost", total - c.frames},
                {"display_updates", updates},
                {"display_updates_per_second", updates / seconds},
                {"median_ms_update_three_slices", medianOf(updateSeconds) * 1e3},
                {"frames_skipped_by_display", skips.skipped()},
                {"projections_backprojected_per_slice_update",
                 updates ? static_cast<double>(backprojected) / (3.0 * updates) : 0.0},
                {"latency_ms_last_frame_to_three_slices", latency * 1e3},
                {"latency_ms_last_frame_seen_by_display", arrival * 1e3}};
    }
    std::printf("(ingest: sender and receiver in this process, frames made before the clock starts; a lost frame is "
                "a bug. live: each display update takes the newest snapshot and updates rows %d, %d and %d, each "
                "with a preview session that adds the new projections to the slice it keeps)\n",
                rows / 4, rows / 2, (3 * rows) / 4);
    if (!s.json.empty()) {
        writeJson(s.json, {{"program", "tomo-bench --stream"},
                           {"mode", "stream"},
                           {"problem", {{"rows", rows}, {"columns", s.size}, {"projections", s.projections},
                                        {"via", s.via}}},
                           {"ingest", ingest},
                           {"live", live}});
        std::printf("wrote %s\n", s.json.c_str());
    }
    return kExitOk;
}

} // namespace tomo::cli
