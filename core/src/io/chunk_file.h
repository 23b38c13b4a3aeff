// Internal: an output file whose byte ranges (a volume's chunks) are filled
// by many threads at once. write() calls on one file are serialised by the
// kernel (about 2.5 GB/s into tmpfs on a 16-core machine, whatever the
// threads); copies into a shared mapping are not (4–6 GB/s there).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace tomo::detail {

class ChunkFile {
public:
    enum class Access {
        Automatic, ///< mapped where the file system reserves space, else written
        Written,   ///< pwrite only
    };

    /// Opens the existing file `path` for writing and reserves its first
    /// `bytes` (growing it to them), so that a full disk fails here and
    /// never as a SIGBUS in a mapped copy; where the file system cannot
    /// reserve space (or map the file), ranges are written with pwrite.
    /// Throws IoError starting with `what` (the output's name) and saying why.
    ChunkFile(const std::filesystem::path& path, std::uint64_t bytes, std::string what,
              Access access = Access::Automatic);
    ~ChunkFile();
    ChunkFile(const ChunkFile&) = delete;
    ChunkFile& operator=(const ChunkFile&) = delete;

    /// Where bytes at `offset` go in place (mapped), or nullptr: write() them.
    std::byte* at(std::uint64_t offset) const { return m_map ? m_map + offset : nullptr; }
    /// pwrite of all of `bytes` at `offset`; thread-safe.
    void write(std::span<const std::byte> bytes, std::uint64_t offset) const;
    /// Unmaps and closes; throws IoError when the close reports an error.
    void close();

private:
    [[noreturn]] void fail(const std::string& what) const;
    bool release();

    std::string m_what;
    int m_fd = -1;
    std::byte* m_map = nullptr;
    std::uint64_t m_bytes = 0;
};

} // namespace tomo::detail
