#include "io/chunk_file.h"

#include "tomo/error.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace tomo::detail {

ChunkFile::ChunkFile(const std::filesystem::path& path, std::uint64_t bytes, std::string what, Access access)
    : m_what(std::move(what)) {
    m_fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (m_fd < 0) fail("cannot open " + path.string() + " again");
    // The system call, not posix_fallocate: glibc emulates that one by
    // writing every block where the file system cannot reserve space
    // (minutes for a large volume on NFSv3).
    if (::fallocate(m_fd, 0, 0, static_cast<off_t>(bytes)) != 0) {
        if (errno == EOPNOTSUPP) return; // pwrite reports a full disk itself
        const int error = errno;
        release(); // no destructor after a throw
        errno = error;
        fail("cannot make room for the volume (" + std::to_string(bytes) + " bytes)");
    }
    if (access == Access::Written) return;
    void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m_fd, 0);
    if (map == MAP_FAILED) return; // e.g. a FUSE file system without shared mappings: pwrite
    m_map = static_cast<std::byte*>(map);
    m_bytes = bytes;
}

ChunkFile::~ChunkFile() { release(); }

void ChunkFile::write(std::span<const std::byte> bytes, std::uint64_t offset) const {
    for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::pwrite(m_fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
        if (n > 0) done += static_cast<std::size_t>(n);
        else if (n < 0 && errno == EINTR) continue;
        else fail("writing failed");
    }
}

void ChunkFile::close() {
    if (!release()) fail("closing failed");
}

void ChunkFile::fail(const std::string& what) const {
    throw IoError(m_what + ": " + what + ": " + std::strerror(errno));
}

bool ChunkFile::release() {
    if (m_map) ::munmap(m_map, m_bytes);
    m_map = nullptr;
    const bool closed = m_fd < 0 || ::close(m_fd) == 0;
    m_fd = -1;
    return closed;
}

} // namespace tomo::detail
