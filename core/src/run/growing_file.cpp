// Following a DXchange file written with HDF5 SWMR (tomo/live.h): wait()
// re-opens it for SWMR reading when the poll interval has passed, and the
// reader it made is the snapshot.
#include "run/live_meter.h"
#include "tomo/error.h"
#include "tomo/live.h"

#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>

namespace tomo {

namespace {

using Clock = std::chrono::steady_clock;

/// Held from opening a growing file to closing it again, in every thread:
/// an open while another thread holds the file open would share that
/// handle's stale view (the preview, a job and Live mode's coarse volume
/// read the same snapshot at once). HDF5 runs one call at a time anyway.
std::mutex& openFileMutex() {
    static std::mutex mutex;
    return mutex;
}

/// The first `projections` projections of a growing file, read through a
/// reader opened for each call and closed after it: an HDF5 handle kept
/// open in this process would make later opens share its stale view of the
/// file being written (reads then fail), so no snapshot keeps one.
class GrowingSnapshot final : public DatasetReader {
public:
    GrowingSnapshot(std::filesystem::path path, OpenOptions open, const DatasetInfo& info)
        : m_path(std::move(path)), m_open(std::move(open)) {
        m_info = info;
        m_open.growing = true;
        m_open.growingProjections = info.projections;
    }
    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        withFile([&](DatasetReader& r) { r.readSinograms(firstRow, rowCount, out); });
    }
    void readRawRows(int firstRow, int rowCount, std::span<std::byte> out) override {
        withFile([&](DatasetReader& r) { r.readRawRows(firstRow, rowCount, out); });
    }
    void readRawRowsOfProjections(int firstRow, int rowCount, int firstProjection, int projectionCount,
                                  std::span<std::byte> out) override {
        withFile([&](DatasetReader& r) {
            r.readRawRowsOfProjections(firstRow, rowCount, firstProjection, projectionCount, out);
        });
    }
    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        return withFile([&](DatasetReader& r) { return r.readMeanFlat(firstRow, rowCount, out); });
    }
    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        return withFile([&](DatasetReader& r) { return r.readMeanDark(firstRow, rowCount, out); });
    }
    void readProjection(int index, std::span<float> out) override {
        withFile([&](DatasetReader& r) { r.readProjection(index, out); });
    }
    void readFlatGroup(int group, int firstRow, int rowCount, std::span<float> out) override {
        withFile([&](DatasetReader& r) { r.readFlatGroup(group, firstRow, rowCount, out); });
    }

private:
    /// `read` on the file opened for it, closed before the lock is let go.
    template <typename Read>
    std::invoke_result_t<Read, DatasetReader&> withFile(Read&& read) const {
        const std::lock_guard lock(openFileMutex());
        return read(*open());
    }
    std::unique_ptr<DatasetReader> open() const {
        auto reader = openDataset(m_path, m_open);
        const DatasetInfo& now = reader->info();
        if (now.projections != m_info.projections || now.flats != m_info.flats || now.darks != m_info.darks)
            throw DataError(m_path.string() + ": the file no longer holds the frames of this snapshot (" +
                            std::to_string(m_info.projections) + " projections, " + std::to_string(m_info.flats) +
                            " flats, " + std::to_string(m_info.darks) + " darks): was it rewritten?");
        return reader;
    }
    std::filesystem::path m_path;
    OpenOptions m_open;
};

class GrowingFileSource final : public LiveSource {
public:
    GrowingFileSource(std::filesystem::path path, GrowingFileOptions options)
        : m_path(std::move(path)), m_options(std::move(options)), m_lastGrowth(Clock::now()) {
        m_options.open.growing = true;
        m_state.scanId = m_path.filename().string();
    }

    std::string describe() const override { return "growing file " + m_path.string(); }

    LiveState wait(long long seenVersion, std::chrono::milliseconds timeout) override {
        const auto deadline = Clock::now() + timeout;
        const std::lock_guard lock(m_mutex);
        for (;;) {
            look();
            if (m_state.version != seenVersion || m_state.finished) return m_state;
            const auto now = Clock::now();
            if (now - m_lastGrowth > m_options.stallTimeout) throw stalled();
            if (now >= deadline) return m_state;
            std::this_thread::sleep_for(std::min<Clock::duration>(m_options.pollInterval, deadline - now));
        }
    }

    std::shared_ptr<DatasetReader> snapshot() override {
        const std::lock_guard lock(m_mutex);
        if (!m_info)
            throw DataError(m_path.string() + ": " + std::to_string(m_state.projections) +
                            " projection(s) written so far; at least 2 are needed");
        if (m_plain) return m_plain;
        return std::make_shared<GrowingSnapshot>(m_path, m_options.open, *m_info);
    }

    LiveCounters counters() const override {
        const std::lock_guard lock(m_mutex);
        return m_meter.counters();
    }

    void record(std::unique_ptr<FrameSink>) override {
        throw InvalidArgument(m_path.string() + " is already a file: it is its own recording");
    }

private:
    /// Looks at the file once: whether its writer closed it, and what it holds.
    void look() {
        if (m_state.finished) return;
        std::error_code ec;
        if (std::filesystem::file_size(m_path, ec) < 64 || ec) {
            m_lastError = "it does not exist yet";
            return;
        }
        const std::lock_guard fileLock(openFileMutex()); // no snapshot's read has it open meanwhile
        // Closed first, then read: a file seen closed is read whole.
        const bool closed = hdf5WriterClosed(m_path);
        std::unique_ptr<DatasetReader> reader; // closed again before returning: no handle stays open
        try {
            reader = openDataset(m_path, m_options.open);
        } catch (const Error& e) {
            // A writer between creating the file and its first frames, or a
            // file that is not a growing DXchange scan: reported if it stays so.
            m_lastError = e.what();
            if (!closed) return;
            // A finished file not written for SWMR readers: read the ordinary way.
            OpenOptions plain = m_options.open;
            plain.growing = false;
            m_plain = openDataset(m_path, plain);
            m_info = m_plain->info();
            m_state.projections = m_info->projections;
            m_state.flats = m_info->flats;
            m_state.darks = m_info->darks;
            ++m_state.version;
            m_state.finished = true;
            return;
        }
        const DatasetInfo& info = reader->info();
        if (info.projections != m_state.projections || info.flats != m_state.flats || info.darks != m_state.darks) {
            const int added = info.projections + info.flats + info.darks - m_state.projections - m_state.flats -
                              m_state.darks;
            const std::size_t frameBytes = static_cast<std::size_t>(info.rows) *
                                           static_cast<std::size_t>(info.columns) * sampleBytes(info.sampleType);
            for (int i = 0; i < added; ++i) m_meter.frame(frameBytes);
            if (m_state.version == 0) m_meter.scan();
            m_state.projections = info.projections;
            m_state.flats = info.flats;
            m_state.darks = info.darks;
            ++m_state.version;
            m_lastGrowth = Clock::now();
        }
        m_info = info;
        m_state.finished = closed;
    }

    DataError stalled() const {
        const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(m_options.stallTimeout).count();
        if (m_state.version == 0)
            return DataError(m_path.string() + ": no scan to follow after " + std::to_string(seconds) + " s (" +
                             m_lastError + ")");
        return DataError(m_path.string() + ": no new frame for " + std::to_string(seconds) +
                         " s and the writer has not closed the file (it stopped or died); the scan is incomplete (" +
                         std::to_string(m_state.projections) + " projections, " + std::to_string(m_state.flats) +
                         " flats, " + std::to_string(m_state.darks) + " darks)");
    }

    std::filesystem::path m_path;
    GrowingFileOptions m_options;
    mutable std::mutex m_mutex;
    LiveState m_state;
    std::optional<DatasetInfo> m_info;         ///< of the last look that could read the file
    std::shared_ptr<DatasetReader> m_plain;    ///< a finished file not written for SWMR, read the ordinary way
    Clock::time_point m_lastGrowth;
    std::string m_lastError = "nothing read yet";
    mutable detail::LiveMeter m_meter;
};

} // namespace

std::unique_ptr<LiveSource> followGrowingFile(const std::filesystem::path& path, GrowingFileOptions options) {
#if TOMO_WITH_HDF5
    return std::make_unique<GrowingFileSource>(path, std::move(options));
#else
    (void)options;
    throw InvalidArgument(path.string() + ": following a growing HDF5 file needs HDF5, and this build has none");
#endif
}

#if !TOMO_WITH_HDF5
bool hdf5WriterClosed(const std::filesystem::path& path) {
    throw InvalidArgument(path.string() + ": this build has no HDF5");
}
std::unique_ptr<FrameSink> createGrowingScanWriter(const std::filesystem::path& path, int, int, SampleType, bool,
                                                   GrowingLayout) {
    throw InvalidArgument(path.string() + ": writing a growing HDF5 file needs HDF5, and this build has none");
}
#endif

} // namespace tomo
