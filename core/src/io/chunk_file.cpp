#include "io/chunk_file.h"

#include "tomo/error.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace tomo::detail {

ChunkFile::ChunkFile(const std::filesystem::path& path, std::uint64_t bytes, std::string what, Access access)
    : m_what(std::move(what)) {
    m_fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (m_fd < 0) fail("cannot open " + path.string() + " again");
    // The room is checked here and reserved range by range (reserve()):
    // tmpfs zero-fills what fallocate reserves, on the calling thread - 3.4 s
    // for 16 GiB on the H100 machine before any slice was computed; ranges
    // reserved by the writer's threads spread that over the run.
    struct stat status {};
    struct statvfs room {};
    const auto failRoom = [&](int error) {
        release(); // no destructor after a throw
        errno = error;
        fail("cannot make room for the volume (" + std::to_string(bytes) + " bytes)");
    };
    if (::fstat(m_fd, &status) != 0) failRoom(errno);
    const auto held = static_cast<std::uint64_t>(status.st_blocks) * 512;
    if (::fstatvfs(m_fd, &room) == 0 && bytes > held &&
        static_cast<std::uint64_t>(room.f_bavail) * room.f_frsize < bytes - held)
        failRoom(ENOSPC);
    if (static_cast<std::uint64_t>(status.st_size) < bytes && ::ftruncate(m_fd, static_cast<off_t>(bytes)) != 0)
        failRoom(errno);
    // The system call, not posix_fallocate: glibc emulates that one by
    // writing every block where the file system cannot reserve space
    // (minutes for a large volume on NFSv3). Such file systems get pwrite.
    if (::fallocate(m_fd, 0, 0, static_cast<off_t>(std::min<std::uint64_t>(bytes, 4096))) != 0) {
        if (errno == EOPNOTSUPP) return;
        failRoom(errno);
    }
    m_reserves = true;
    if (access == Access::Written) return;
    void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m_fd, 0);
    if (map == MAP_FAILED) return; // e.g. a FUSE file system without shared mappings: pwrite
    m_map = static_cast<std::byte*>(map);
    m_bytes = bytes;
}

void ChunkFile::reserve(std::uint64_t offset, std::uint64_t bytes) const {
    if (m_reserves && ::fallocate(m_fd, 0, static_cast<off_t>(offset), static_cast<off_t>(bytes)) != 0)
        fail("cannot make room for " + std::to_string(bytes) + " bytes at " + std::to_string(offset));
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
