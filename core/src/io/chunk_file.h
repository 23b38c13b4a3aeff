// Internal: an output file whose byte ranges (a volume's chunks) are filled
// by many threads at once. write() calls on one file are serialised by the
// kernel (about 2.5 GB/s into tmpfs on a 16-core machine, whatever the
// threads); copies into a shared mapping are not (4–6 GB/s there).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <span>
#include <string>
#include <thread>

namespace tomo::detail {

class ChunkFile {
public:
    enum class Access {
        Automatic, ///< mapped where the file system reserves space, else written
        Written,   ///< pwrite only
    };

    /// Opens the existing file `path` for writing, grows it to `bytes` and
    /// checks that the file system has room for them, so that a disk too
    /// small fails here; a mapped file is then reserved by a thread ahead of
    /// the writes (reserve()). Where the file system cannot reserve space
    /// (or map the file), ranges are written with pwrite. Throws IoError
    /// starting with `what` (the output's name) and saying why.
    ChunkFile(const std::filesystem::path& path, std::uint64_t bytes, std::string what,
              Access access = Access::Automatic);
    ~ChunkFile();
    ChunkFile(const ChunkFile&) = delete;
    ChunkFile& operator=(const ChunkFile&) = delete;

    /// Returns once [offset, offset + bytes) is reserved (a thread reserves
    /// the mapped volume ahead of the writes), so that a disk filled
    /// meanwhile fails here and never as a SIGBUS in a mapped copy.
    /// Thread-safe. Throws IoError.
    void reserve(std::uint64_t offset, std::uint64_t bytes) const;
    /// Where bytes at `offset` go in place (mapped), or nullptr: write() them.
    std::byte* at(std::uint64_t offset) const { return m_map ? m_map + offset : nullptr; }
    /// pwrite of all of `bytes` at `offset`; thread-safe.
    void write(std::span<const std::byte> bytes, std::uint64_t offset) const;
    /// Unmaps and closes; throws IoError when the close reports an error.
    void close();

private:
    [[noreturn]] void fail(const std::string& what) const;
    void reserveAhead(); // the reserving thread
    bool release();

    std::string m_what;
    int m_fd = -1;
    std::byte* m_map = nullptr;
    std::uint64_t m_bytes = 0;
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_progress;
    std::uint64_t m_reserved = 0; ///< bytes from 0 reserved so far
    int m_reserveError = 0;       ///< errno of the reservation that failed
    bool m_stopReserving = false;
    std::thread m_reserver;
};

} // namespace tomo::detail
