// FilePrefetcher: the ranges it is given reach the page cache without the
// caller waiting, and a hint that cannot be given is harmless.
#include "io/file_prefetch.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace tomo::detail {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

/// An open file's descriptor and a read-only mapping of it, to ask which pages are cached.
class CachedPages {
public:
    CachedPages(const std::filesystem::path& path, std::size_t bytes) : m_bytes(bytes) {
        m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_fd >= 0) m_map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, m_fd, 0);
    }
    ~CachedPages() {
        if (m_map != MAP_FAILED) ::munmap(m_map, m_bytes);
        if (m_fd >= 0) ::close(m_fd);
    }
    bool ok() const { return m_fd >= 0 && m_map != MAP_FAILED; }
    int fd() const { return m_fd; }
    /// Drops the file's pages from the cache (clean: it was written back).
    void evict() const {
        ::fdatasync(m_fd);
        ::posix_fadvise(m_fd, 0, 0, POSIX_FADV_DONTNEED);
    }
    /// Pages of [offset, offset + bytes) in the page cache.
    std::size_t cached(std::size_t offset, std::size_t bytes) const {
        const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        std::vector<unsigned char> resident((bytes + page - 1) / page);
        if (::mincore(static_cast<char*>(m_map) + offset, bytes, resident.data()) != 0) return 0;
        std::size_t n = 0;
        for (unsigned char r : resident) n += r & 1;
        return n;
    }
    static std::size_t pages(std::size_t bytes) {
        const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        return (bytes + page - 1) / page;
    }

private:
    int m_fd = -1;
    void* m_map = MAP_FAILED;
    std::size_t m_bytes;
};

TEST(FilePrefetcher, HintedRangesReachThePageCache) {
    test::TempDir dir;
    const std::filesystem::path path = dir / "data.bin";
    const std::size_t bytes = 8 * kMiB;
    {
        std::ofstream out(path, std::ios::binary);
        const std::vector<char> block(kMiB, 'x');
        for (std::size_t i = 0; i < bytes / kMiB; ++i) out.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
    CachedPages file(path, bytes);
    ASSERT_TRUE(file.ok());
    file.evict();
    if (file.cached(0, bytes) != 0)
        GTEST_SKIP() << "this file system keeps files in memory (tmpfs?): nothing to prefetch";

    // Ranges of several sizes, neighbours (merged into one hint) and one
    // larger than a hint (split).
    const std::vector<FilePrefetcher::Range> ranges{
        {0, 64 << 10}, {64 << 10, 64 << 10}, {3 * kMiB + 4096, 100000}, {5 * kMiB, 2 * kMiB}};
    FilePrefetcher prefetcher(file.fd());
    prefetcher.prefetch(ranges);
    // The hints go out from the prefetcher's thread and the reads land later: wait for them.
    const auto allCached = [&] {
        for (const auto& r : ranges)
            if (file.cached(r.offset / 4096 * 4096, r.bytes) < CachedPages::pages(r.bytes)) return false;
        return true;
    };
    for (int i = 0; i < 200 && !allCached(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (const auto& r : ranges)
        EXPECT_GE(file.cached(r.offset / 4096 * 4096, r.bytes), CachedPages::pages(r.bytes))
            << "range at " << r.offset << " of " << r.bytes << " bytes";
}

TEST(FilePrefetcher, HintsThatCannotBeGivenAreHarmless) {
    // A descriptor that is not open: every hint fails, the prefetcher goes
    // on, and stops (destroyed here) with hints still queued.
    FilePrefetcher prefetcher(-1);
    std::vector<FilePrefetcher::Range> ranges;
    for (std::uint64_t i = 0; i < 1000; ++i) ranges.push_back({i * 3 * kMiB, kMiB});
    prefetcher.prefetch(ranges);
    prefetcher.prefetch({{0, 0}});
    prefetcher.prefetch(ranges);
}

} // namespace
} // namespace tomo::detail
