#include "io/chunk_file.h"

#include "tomo/error.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <linux/magic.h>
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
    m_steps.assign(static_cast<std::size_t>((bytes + kStep - 1) / kStep), Step::Free);
    m_ahead = access == Access::Automatic;
    // Mapped copies into space the file system has not reserved would die of
    // SIGBUS on a disk filled meanwhile, and each first touch of a page is a
    // fault: threads reserve the volume ahead of the writes (reserve() waits
    // for them), each step allocated (fallocate) and then populated
    // (MADV_POPULATE_WRITE, which reports a full disk as an error). Measured
    // on a 16-core machine, 16 threads copying into the mapping: 4 GiB into
    // ext4's page cache 1.8 s on their own faults, 0.5 s with four
    // populating threads ahead; 32 GiB into tmpfs, where fallocate allocates
    // the pages under the file's lock, 7.7 s behind one fallocating thread,
    // 6.1 s behind four populating ones. So tmpfs is populated only.
    m_populate = ::madvise(m_map, std::min<std::uint64_t>(bytes, 4096), MADV_POPULATE_WRITE) == 0;
    struct statfs system {};
    m_allocate = !m_populate || ::fstatfs(m_fd, &system) != 0 || system.f_type != TMPFS_MAGIC;
    for (int i = 0; i < (m_populate ? kReservers : 1); ++i) m_reservers.emplace_back([this] { reserveAhead(); });
}

int ChunkFile::reserveStep(std::uint64_t offset, std::uint64_t bytes) const {
    const auto at = static_cast<off_t>(offset), n = static_cast<off_t>(bytes);
    if (m_allocate && ::fallocate(m_fd, 0, at, n) != 0) return errno;
    // EFAULT: a copy would have died of SIGBUS (a full disk, or its quota).
    if (m_populate && ::madvise(m_map + offset, bytes, MADV_POPULATE_WRITE) != 0) return errno == EFAULT ? ENOSPC : errno;
    return 0;
}

void ChunkFile::reserveAhead() {
    const auto steps = static_cast<std::uint64_t>(m_steps.size());
    for (;;) {
        std::uint64_t step = 0;
        {
            std::unique_lock lock(m_mutex);
            // The steps asked for first; then, reserving ahead, the next free
            // one, but not further than kLead past the writes: a volume larger
            // than the page cache would otherwise have its pages populated,
            // written back as zeros and evicted before their slices come.
            const auto nextAhead = [&] {
                while (m_next < steps && m_steps[static_cast<std::size_t>(m_next)] != Step::Free) ++m_next;
                return m_ahead && m_next < steps && m_next * kStep < m_wanted + kLead;
            };
            m_progress.wait(lock, [&] {
                return m_stopReserving || m_reserveError != 0 || !m_queue.empty() || nextAhead() ||
                       (m_ahead && m_next >= steps);
            });
            if (m_stopReserving || m_reserveError != 0) return;
            if (!m_queue.empty()) {
                step = m_queue.front();
                m_queue.pop_front();
            } else if (nextAhead()) {
                step = m_next++;
            } else {
                return; // reserving ahead, and every step is taken
            }
            m_steps[static_cast<std::size_t>(step)] = Step::Taken;
        }
        const std::uint64_t offset = step * kStep;
        const int error = reserveStep(offset, std::min(kStep, m_bytes - offset));
        std::lock_guard lock(m_mutex);
        if (error != 0) m_reserveError = error;
        else m_steps[static_cast<std::size_t>(step)] = Step::Done;
        m_progress.notify_all();
    }
}

void ChunkFile::queueSteps(std::uint64_t offset, std::uint64_t bytes) const {
    if (bytes == 0) return;
    for (std::uint64_t s = offset / kStep; s <= (offset + bytes - 1) / kStep; ++s) {
        Step& step = m_steps[static_cast<std::size_t>(s)];
        if (step != Step::Free) continue;
        step = Step::Queued;
        m_queue.push_back(s);
    }
    m_progress.notify_all();
}

void ChunkFile::expect(std::uint64_t offset, std::uint64_t bytes) const {
    if (!m_map) return;
    std::lock_guard lock(m_mutex);
    queueSteps(offset, bytes);
}

void ChunkFile::reserve(std::uint64_t offset, std::uint64_t bytes) const {
    if (!m_map || bytes == 0) return; // pwrite reports a full disk itself
    std::unique_lock lock(m_mutex);
    m_wanted = std::max(m_wanted, offset + bytes); // where the writes are: reserving ahead follows them
    queueSteps(offset, bytes);
    const std::uint64_t first = offset / kStep, last = (offset + bytes - 1) / kStep;
    const auto reserved = [&] {
        for (std::uint64_t s = first; s <= last; ++s)
            if (m_steps[static_cast<std::size_t>(s)] != Step::Done) return false;
        return true;
    };
    m_progress.wait(lock, [&] { return reserved() || m_reserveError != 0 || m_stopReserving; });
    if (reserved()) return;
    errno = m_reserveError != 0 ? m_reserveError : ECANCELED;
    fail("cannot make room for the volume (" + std::to_string(m_bytes) + " bytes)");
}

ChunkFile::~ChunkFile() { release(); }

void ChunkFile::unmapWritten(std::uint64_t offset, std::uint64_t bytes) const {
    if (!m_map) return;
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t first = (offset + page - 1) / page * page, end = (offset + bytes) / page * page;
    // Advice only: a mapping left in place is dropped at close().
    if (end > first) ::madvise(m_map + first, end - first, MADV_DONTNEED);
}

void ChunkFile::write(std::span<const std::byte> bytes, std::uint64_t offset) const {
    for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::pwrite(m_fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
        if (n > 0) done += static_cast<std::size_t>(n);
        else if (n < 0 && errno == EINTR) continue;
        else fail("writing failed");
    }
}

void ChunkFile::sync() {
    if (m_map && ::msync(m_map, m_bytes, MS_SYNC) != 0) fail("writing to the storage failed");
    if (::fdatasync(m_fd) != 0) fail("writing to the storage failed");
}

void ChunkFile::close() {
    if (!release()) fail("closing failed");
}

void ChunkFile::fail(const std::string& what) const {
    throw IoError(m_what + ": " + what + ": " + std::strerror(errno));
}

bool ChunkFile::release() {
    {
        std::lock_guard lock(m_mutex);
        m_stopReserving = true;
    }
    m_progress.notify_all();
    for (std::thread& t : m_reservers) t.join();
    m_reservers.clear();
    if (m_map) ::munmap(m_map, m_bytes);
    m_map = nullptr;
    const bool closed = m_fd < 0 || ::close(m_fd) == 0;
    m_fd = -1;
    return closed;
}

} // namespace tomo::detail
