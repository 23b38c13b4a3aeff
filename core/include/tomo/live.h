// Live acquisition: a scan read while it is being taken. Frames come from a
// growing HDF5 file (SWMR) or a ZeroMQ stream; a LiveSource hands out what
// has arrived so far as an ordinary DatasetReader (snapshot()), so the
// preview session, the conveyor and the preprocessing stage read a live
// scan as they read a file: nothing of them is copied for live data.
//
//   detector / tomo-stream ──► growing DXchange file (SWMR) ──► followGrowingFile ─┐
//                         └──► ZeroMQ PUSH ──► openZmqStream (PULL, a thread) ─────┼─► snapshot() ─► PreviewSession
//                                                  └─► Record's queue ─► its thread  └─► tomo-recon --follow
//                                                       ─► GrowingScanWriter
//
// A frame's pixels (FramePixels) are shared, never copied, from the sender
// to the store, its snapshots and Record: a stream keeps the received
// ZeroMQ message as the frame. What is recorded is never dropped (the
// receiver waits for Record's queue); what is displayed skips to the newest
// snapshot (DisplaySkips counts what it skipped).
//
// When a scan is done: a growing file when its writer closed it (HDF5 clears
// the file's "open for writing" mark, so a plain read-only open succeeds); a
// stream when an "end" message of the scan arrives. A writer that stops
// without closing is reported after a timeout (DataError), never taken for
// a finished scan.
//
// Tests: tests/core/test_live.cpp (SWMR writer in a child process, ZeroMQ
// over inproc/ipc), tests/cli/test_cli_live.cpp (--follow, tomo-stream).
#pragma once

#include "tomo/dataset.h"

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tomo {

enum class FrameKind { Projection, Flat, Dark };

/// "projection", "flat", "dark".
const char* frameKindName(FrameKind kind);

/// A frame's samples, shared (never copied) between the sender or the
/// receiver, the frame store, its snapshots and Record: bytes kept alive by
/// whatever holds them (a vector, a received ZeroMQ message, a whole scan
/// read into memory). The bytes must not change while any FramePixels
/// refers to them.
class FramePixels {
public:
    FramePixels() = default;
    /// Takes the vector's bytes (moved, not copied); implicit, so that a
    /// sender writes `frame.values = std::move(bytes)`.
    FramePixels(std::vector<std::byte> bytes);
    /// `bytes`, kept alive by `owner`.
    FramePixels(std::shared_ptr<const void> owner, std::span<const std::byte> bytes)
        : m_owner(std::move(owner)), m_bytes(bytes) {}
    /// A copy of `bytes` (e.g. a message's payload that is not kept).
    static FramePixels copyOf(std::span<const std::byte> bytes);

    const std::byte* data() const { return m_bytes.data(); }
    std::size_t size() const { return m_bytes.size(); }
    bool empty() const { return m_bytes.empty(); }
    const std::byte* begin() const { return m_bytes.data(); }
    const std::byte* end() const { return m_bytes.data() + m_bytes.size(); }
    /// What keeps the bytes alive: a sender hands it on with them (no copy).
    const std::shared_ptr<const void>& owner() const { return m_owner; }
    /// The same bytes (wherever they are held).
    friend bool operator==(const FramePixels& a, const FramePixels& b);

private:
    std::shared_ptr<const void> m_owner;
    std::span<const std::byte> m_bytes;
};

/// One detector image as it arrives.
struct Frame {
    FrameKind kind = FrameKind::Projection;
    /// Position among the frames of its kind in the scan; projections are
    /// ordered by it (a stream may deliver them out of order).
    long long index = 0;
    double angleDegrees = 0.0; ///< rotation angle of a projection
    int rows = 0;
    int columns = 0;
    SampleType type = SampleType::UInt16;
    std::string scanId;
    FramePixels values; ///< rows x columns samples of `type`, little-endian
};

/// Where a sender puts frames.
class FrameSink {
public:
    virtual ~FrameSink() = default;
    virtual void send(const Frame& frame) = 0;
    /// The scan is done (a growing file: closed; a stream: the end message).
    virtual void finish(const std::string& scanId) = 0;
};

/// The frames of one scan held in memory as they arrive. Not thread-safe.
class FrameStore {
public:
    FrameStore();
    ~FrameStore();
    FrameStore(FrameStore&&) noexcept;
    FrameStore& operator=(FrameStore&&) noexcept;

    /// Adds a frame; one with another scan id than the store's first frame
    /// starts a new scan (the store is emptied first: returns true). Throws
    /// DataError (one line naming the frame) when its shape or sample type
    /// differs from the scan's first frame, its value count is wrong, or a
    /// projection index arrives twice; the store is then unchanged.
    bool add(Frame frame);
    /// Throws as add() would, adding nothing.
    void check(const Frame& frame) const;

    int projections() const;
    int flats() const;
    int darks() const;
    const std::string& scanId() const;

    /// The frames present as a dataset named `name` (for messages):
    /// projections sorted by index with their angles, the mean of the flats
    /// and of the darks. It shares the frames (no copy of pixel data) and
    /// stays valid and unchanged while the store goes on. Throws DataError
    /// with fewer than 2 projections.
    std::shared_ptr<DatasetReader> snapshot(const std::filesystem::path& name) const;

    /// Sends the scan's frames to `sink`: darks, flats, then projections by index.
    void replay(FrameSink& sink) const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// What a source has received, for the status line and benchmarks.
struct LiveCounters {
    long long frames = 0;   ///< frames accepted, every kind and scan
    long long bytes = 0;    ///< their pixel bytes
    long long rejected = 0; ///< messages refused (each logged) and skipped
    int scans = 0;          ///< scans begun (a new scan id)
    double framesPerSecond = 0.0;    ///< over the last second
    double gigabytesPerSecond = 0.0; ///< pixel bytes, over the last second
    /// Steady-clock time the last accepted frame arrived (epoch: none yet).
    std::chrono::steady_clock::time_point lastFrame{};
};

/// Where a live scan stands.
struct LiveState {
    std::string scanId;
    int projections = 0;
    int flats = 0;
    int darks = 0;
    /// The scan is done: the writer closed the file / its end message came.
    bool finished = false;
    /// Grows whenever what snapshot() returns changes (new frames, a new scan).
    long long version = 0;
    /// Grows with every new scan id (the view starts afresh).
    int scan = 0;
};

/// What a display of a live scan skipped. A display takes the newest
/// snapshot whenever it is ready for one (the workstation's Live mode,
/// tomo-bench --stream), so its latency stays bounded when reconstruction is
/// slower than the frames arrive: the projections that arrived since the
/// snapshot shown before, except the newest, get no update of their own
/// (they are in the slice all the same) and count as skipped.
class DisplaySkips {
public:
    /// A snapshot of `projections` projections of the scan numbered `scan`
    /// (LiveState::scan) is shown; the first of a scan starts afresh.
    /// Returns the projections it skipped.
    int shown(int scan, int projections);
    /// Skipped so far, every scan.
    long long skipped() const { return m_skipped; }
    /// Projections of the snapshot shown last.
    int projections() const { return m_shown; }

private:
    int m_scan = -1;
    int m_shown = 0;
    long long m_skipped = 0;
};

/// A scan that grows while it is read.
class LiveSource {
public:
    virtual ~LiveSource() = default;
    /// e.g. "growing file /data/scan.h5", "ZeroMQ PULL bound to tcp://127.0.0.1:5555".
    virtual std::string describe() const = 0;
    /// Returns as soon as the state's version differs from `seenVersion` or
    /// the scan is finished, else after `timeout`. Throws DataError when the
    /// source stalled (a growing file: no new frame for the stall timeout
    /// and never closed), IoError/FormatError when it cannot be read.
    virtual LiveState wait(long long seenVersion, std::chrono::milliseconds timeout) = 0;
    /// The frames present as a dataset (see FrameStore::snapshot); throws
    /// DataError with fewer than 2 projections.
    virtual std::shared_ptr<DatasetReader> snapshot() = 0;
    virtual LiveCounters counters() const = 0;
    /// Record: the frames of the current scan received so far, then every
    /// frame accepted from now on, go to `sink` (e.g. createGrowingScanWriter)
    /// in the order received, none lost. A stream writes them on a thread of
    /// its own: each frame is queued for the sink before it reaches the
    /// store, and when the queue holds StreamOptions::recordQueueBytes the
    /// receiver waits for the sink (and the sender for the receiver) rather
    /// than drop a frame. A new scan id, or record(nullptr), writes out what
    /// is queued and finishes the sink (so record(nullptr) may wait for it).
    /// A sink that fails stops the recording (logged). Throws
    /// InvalidArgument for a source that is itself a file.
    virtual void record(std::unique_ptr<FrameSink> sink) = 0;
};

struct GrowingFileOptions {
    /// How often the file's extent is looked at.
    std::chrono::milliseconds pollInterval{50};
    /// No new frame for this long and the file not closed: the writer is
    /// taken for dead (DataError). Also how long the file may take to appear.
    std::chrono::milliseconds stallTimeout{60000};
    OpenOptions open; ///< angle units etc.; `growing` is set by the source
};

/// Follows a DXchange file being written with HDF5 SWMR (single writer,
/// several readers: HDF5 >= 1.10, the writer's file in the latest format and
/// H5Fstart_swmr_write called, /exchange/theta appended after each
/// projection; flats in /exchange/data_white, darks in /exchange/data_dark,
/// both may stay empty until they appear). The projections present are
/// min(frames of /exchange/data, angles of /exchange/theta). Or an NXtomo
/// file written so (GrowingLayout::NXtomo: a frame counts once its
/// image_key and rotation_angle are appended). No thread:
/// wait() looks at the file. Never modifies it. Its snapshots open the file
/// for each read and close it after: an HDF5 handle kept open in this
/// process would make later opens share its stale view of the growing file.
std::unique_ptr<LiveSource> followGrowingFile(const std::filesystem::path& path, GrowingFileOptions options = {});

/// Whether the HDF5 file's writer has closed it (a plain read-only open
/// succeeds; a file still marked "open for writing" fails).
bool hdf5WriterClosed(const std::filesystem::path& path);

/// Limits a stream receiver checks before allocating for a message.
struct FrameLimits {
    int maxRows = 16384;
    int maxColumns = 16384;
    std::size_t maxHeaderBytes = 64 * 1024;
};

/// The stream's message, two parts (ZeroMQ multipart): a JSON header, then
/// the frame's raw samples (rows x columns, C order, little-endian):
///   {"kind": "projection" | "flat" | "dark" | "end", "index": 12,
///    "angle": 2.16 (degrees), "shape": [rows, columns], "dtype": "uint16",
///    "scan_id": "tooth-1",
///    "frame": 12, "image_attributes": {"scan_index": 2}}   (RECASTX's fields)
/// An "end" message (no second part needed) finishes its scan. A header
/// without "kind" is read as RECASTX's: image_attributes.scan_index 0 dark,
/// 1 flat, 2 projection, "frame" as the index, uint16; a missing angle is
/// (index mod projectionsPerScan) x angleRange / projectionsPerScan, and
/// without scan_id, frame / projectionsPerScan numbers the scan.
struct StreamDefaults {
    int projectionsPerScan = 0; ///< 0: messages must carry their angle
    double angleRangeDegrees = 180.0;
};

/// The header the senders write for a frame ("end" when `end`).
std::string frameHeader(const Frame& frame, bool end = false);

/// Parses one message; the frame's values are `payload` itself (shared, not
/// copied). Returns false for an end message (scanId set); throws DataError
/// (one line: what is wrong with the message) for bad JSON, a missing or
/// mistyped field, an unknown kind or dtype, a shape beyond the limits, or a
/// payload whose size is not rows x columns x sample size.
bool parseFrameMessage(std::span<const std::byte> header, FramePixels payload, const FrameLimits& limits,
                       const StreamDefaults& defaults, Frame& out);

/// Whether this build has ZeroMQ (TOMO_WITH_ZMQ).
bool zmqAvailable();

struct StreamOptions {
    /// ZeroMQ endpoint: "tcp://127.0.0.1:5555", "ipc:///tmp/tomo.sock", "inproc://name"
    /// (inproc: a sender in the same process; one ZeroMQ context per process).
    std::string endpoint;
    bool bind = true; ///< bind the socket (the sender connects); false: connect
    /// A SUB socket subscribed to every message instead of PULL: a
    /// publisher (PUB) may feed several receivers, but ZeroMQ drops the
    /// frames a receiver cannot take in time (its high-water mark) and those
    /// sent before it subscribed; PULL loses none (the sender waits).
    bool subscribe = false;
    /// A tcp endpoint on every interface ("*", "0.0.0.0") is refused unless set.
    bool allowAllInterfaces = false;
    FrameLimits limits;
    StreamDefaults defaults;
    /// Record's queue (frames received, not yet written; they share the
    /// store's memory): when it holds this many bytes, the receiver waits
    /// for the recording to catch up. At least one frame is always queued.
    std::size_t recordQueueBytes = std::size_t{1} << 30;
    /// Each refused message, one line (called on the receiving thread).
    std::function<void(const std::string&)> log;
};

/// The options of an endpoint as a user types it: "tcp://HOST:PORT",
/// "ipc://PATH", "inproc://NAME" = PULL, bound; "sub+tcp://HOST:PORT" (and
/// sub+ipc://, sub+inproc://) = SUB, connected to a publisher that binds.
/// The endpoint itself is checked by openZmqStream.
StreamOptions streamOptionsFor(const std::string& text);

/// A ZeroMQ PULL (or SUB) socket received on a thread of the source: every valid
/// frame goes into the scan's FrameStore (nothing is dropped: the store is
/// what Record writes); malformed messages are logged and skipped; a new
/// scan id empties the store. A frame's pixels are the received message
/// itself, never copied (from an inproc:// sender: the sender's own bytes). Throws InvalidArgument for a bad endpoint or
/// one on all interfaces not allowed, IoError when it cannot bind/connect,
/// and InvalidArgument in a build without ZeroMQ (naming TOMO_WITH_ZMQ).
std::unique_ptr<LiveSource> openZmqStream(StreamOptions options);

/// A PUSH socket that connects (or binds) to `endpoint` and sends frames as
/// parseFrameMessage reads them, without copying a frame's pixels (ZeroMQ
/// holds their owner until it has sent them). Blocks when the receiver does not keep up
/// (ZeroMQ's high-water mark), so no frame is lost. With `publish`, a PUB
/// socket instead (for SUB receivers): never blocks, drops what a slow or
/// absent subscriber cannot take. Throws as openZmqStream.
std::unique_ptr<FrameSink> createZmqSender(const std::string& endpoint, bool bind = false,
                                           bool allowAllInterfaces = false, bool publish = false);

/// The layout of a growing scan file.
enum class GrowingLayout {
    /// /exchange/data, data_white, data_dark in the frames' type, one frame
    /// per chunk, and /exchange/theta (degrees) appended after each projection.
    DXchange,
    /// NXtomo: every frame in /entry/instrument/detector/data, then its key
    /// in .../image_key (0 projection, 1 flat, 2 dark) and its angle in
    /// /entry/sample/rotation_angle (degrees; a flat's or dark's: the last
    /// projection's, 0 before any), appended after it.
    NXtomo,
};

/// A scan file written frame by frame for SWMR readers (what
/// followGrowingFile reads, and the workstation's Record), every frame
/// flushed as it is written. finish() closes the file. Throws IoError naming
/// the file (exists and !overwrite, cannot be made), InvalidArgument for a
/// frame of another shape or type than the first.
std::unique_ptr<FrameSink> createGrowingScanWriter(const std::filesystem::path& path, int rows, int columns,
                                                   SampleType type, bool overwrite,
                                                   GrowingLayout layout = GrowingLayout::DXchange);

struct PlayOptions {
    double framesPerSecond = 0.0; ///< 0: as fast as the sink takes them
    std::string scanId;           ///< empty: the file's name
    /// Stop after this many projections without finishing the scan (the file
    /// stays marked open, no end message): a writer that died, for tests.
    int stopAfter = -1;
    /// Called between frames; returning true stops (the scan not finished).
    std::function<bool()> cancelled;
};

/// Plays a recorded scan into `sink` as a detector would: one dark and one
/// flat frame (the dataset's mean dark and flat, in its sample type,
/// rounded for integers) when it has them, then every projection in order
/// with its angle, paced at framesPerSecond, then sink.finish(). Holds the
/// whole scan in memory (OutOfMemory when it cannot). Returns the frames sent.
long long playScan(DatasetReader& reader, FrameSink& sink, const PlayOptions& options = {});

} // namespace tomo
