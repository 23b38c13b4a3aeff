// Internal: an output file whose byte ranges (a volume's chunks) are filled
// by many threads at once. write() calls on one file are serialised by the
// kernel (about 2.5 GB/s into tmpfs on a 16-core machine, whatever the
// threads); copies into a shared mapping are not (4–6 GB/s there).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace tomo::detail {

class ChunkFile {
public:
    enum class Access {
        /// Mapped where the file system reserves space, else written; the
        /// file is reserved in order ahead of the writes (this process
        /// writes all of it).
        Automatic,
        /// As Automatic, but only the ranges this process writes are
        /// reserved: other processes (the ranks of an MPI run) write and
        /// reserve the rest, and every one reserving the whole file would
        /// multiply the work (and hold the others' pages mapped).
        Part,
        Written, ///< pwrite only
    };

    /// Opens the existing file `path` for writing, grows it to `bytes` and
    /// checks that the file system has room for them, so that a disk too
    /// small fails here; a mapped file is then reserved by threads ahead of
    /// the writes (reserve()). Where the file system cannot reserve space
    /// (or map the file), ranges are written with pwrite. Throws IoError
    /// starting with `what` (the output's name) and saying why.
    ChunkFile(const std::filesystem::path& path, std::uint64_t bytes, std::string what,
              Access access = Access::Automatic);
    ~ChunkFile();
    ChunkFile(const ChunkFile&) = delete;
    ChunkFile& operator=(const ChunkFile&) = delete;

    /// Asks the reserving threads for [offset, offset + bytes) without
    /// waiting (the ranges of the writes to come, in the order they come).
    /// Thread-safe.
    void expect(std::uint64_t offset, std::uint64_t bytes) const;
    /// Returns once [offset, offset + bytes) is reserved (threads reserve
    /// the mapped volume ahead of the writes), so that a disk filled
    /// meanwhile fails here and never as a SIGBUS in a mapped copy.
    /// Thread-safe. Throws IoError.
    void reserve(std::uint64_t offset, std::uint64_t bytes) const;
    /// Where bytes at `offset` go in place (mapped), or nullptr: write() them.
    std::byte* at(std::uint64_t offset) const { return m_map ? m_map + offset : nullptr; }
    /// Drops the mapping of the whole pages of [offset, offset + bytes), once
    /// written (their bytes stay in the file): unmapping the whole volume at
    /// close() would otherwise take seconds (16 GiB in tmpfs: 1.2 s) after
    /// the last slice, where each writing thread now does its share as it
    /// goes. Thread-safe; nothing for a written file.
    void unmapWritten(std::uint64_t offset, std::uint64_t bytes) const;
    /// pwrite of all of `bytes` at `offset`; thread-safe.
    void write(std::span<const std::byte> bytes, std::uint64_t offset) const;
    /// Writes the file's bytes to the storage (fdatasync), for readers on
    /// other hosts; throws IoError.
    void sync();
    /// Unmaps and closes; throws IoError when the close reports an error.
    void close();

private:
    static constexpr std::uint64_t kStep = std::uint64_t{64} << 20; ///< reserved at once
    static constexpr std::uint64_t kLead = std::uint64_t{1} << 30;  ///< reserved ahead of the writes
    static constexpr int kReservers = 4;

    /// What the reserving threads have done with a step of kStep bytes.
    enum class Step : std::uint8_t { Free, Queued, Taken, Done };

    [[noreturn]] void fail(const std::string& what) const;
    void reserveAhead(); // a reserving thread
    int reserveStep(std::uint64_t offset, std::uint64_t bytes) const; ///< 0 or errno
    /// Queues the free steps of [offset, offset + bytes); under m_mutex.
    void queueSteps(std::uint64_t offset, std::uint64_t bytes) const;
    bool release();

    std::string m_what;
    int m_fd = -1;
    std::byte* m_map = nullptr;
    std::uint64_t m_bytes = 0;
    bool m_allocate = true;  ///< fallocate each step
    bool m_populate = false; ///< and populate it (MADV_POPULATE_WRITE)
    bool m_ahead = true;     ///< reserve in order ahead of the writes (Automatic)
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_progress;
    mutable std::vector<Step> m_steps;
    mutable std::deque<std::uint64_t> m_queue; ///< steps asked for, first first
    std::uint64_t m_next = 0;           ///< the next step to reserve ahead
    mutable std::uint64_t m_wanted = 0; ///< end of the furthest range reserve() asked for
    int m_reserveError = 0;             ///< errno of the reservation that failed
    bool m_stopReserving = false;
    std::vector<std::thread> m_reservers;
};

} // namespace tomo::detail
