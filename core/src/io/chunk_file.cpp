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
    const auto failRoom = [&](int error) {
        release(); // no destructor after a throw
        errno = error;
        fail("cannot make room for the volume (" + std::to_string(bytes) + " bytes)");
    };
    struct stat status {};
    struct statvfs room {};
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
    if (access == Access::Written) return;
    void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m_fd, 0);
    if (map == MAP_FAILED) return; // e.g. a FUSE file system without shared mappings: pwrite
    m_map = static_cast<std::byte*>(map);
    m_bytes = bytes;
    // Mapped copies into space the file system has not reserved would die of
    // SIGBUS on a disk filled meanwhile: a thread reserves the volume ahead
    // of the writes (reserve() waits for it). Measured on the H100 machine,
    // 16 GiB into tmpfs: one fallocate here took 3.4 s before any slice was
    // computed; ranges fallocated by the writing threads contend for the
    // file's lock (write stage 7 s), populated by them for the page faults
    // (4.5 s); reserved ahead by this thread, 2.9 s within the run.
    m_reserver = std::thread([this] { reserveAhead(); });
}

void ChunkFile::reserveAhead() {
    constexpr std::uint64_t kStep = std::uint64_t{256} << 20;
    for (std::uint64_t offset = 0; offset < m_bytes;) {
        const std::uint64_t n = std::min(kStep, m_bytes - offset);
        const int error = ::fallocate(m_fd, 0, static_cast<off_t>(offset), static_cast<off_t>(n)) == 0 ? 0 : errno;
        std::lock_guard lock(m_mutex);
        if (error != 0) m_reserveError = error;
        else m_reserved = offset += n;
        m_progress.notify_all();
        if (error != 0 || m_stopReserving) return;
    }
}

void ChunkFile::reserve(std::uint64_t offset, std::uint64_t bytes) const {
    if (!m_map) return; // pwrite reports a full disk itself
    std::unique_lock lock(m_mutex);
    m_progress.wait(lock, [&] { return m_reserved >= offset + bytes || m_reserveError != 0 || m_stopReserving; });
    if (m_reserved >= offset + bytes) return;
    errno = m_reserveError != 0 ? m_reserveError : ECANCELED;
    fail("cannot make room for the volume (" + std::to_string(m_bytes) + " bytes)");
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
    if (m_reserver.joinable()) {
        {
            std::lock_guard lock(m_mutex);
            m_stopReserving = true;
        }
        m_progress.notify_all();
        m_reserver.join();
    }
    if (m_map) ::munmap(m_map, m_bytes);
    m_map = nullptr;
    const bool closed = m_fd < 0 || ::close(m_fd) == 0;
    m_fd = -1;
    return closed;
}

} // namespace tomo::detail
