// Internal: asks the kernel to read parts of a file into the page cache
// ahead of the reads that will want them (POSIX_FADV_WILLNEED). The kernel
// submits such reads and returns, but blocks while the disk's queue is full,
// so the requests go out from a thread of their own: the caller's reads and
// the ones hinted share the disk's queue, which then never drains between
// two of the caller's requests. On a file system without a page cache to
// fill (tmpfs) the hints cost a system call each and do nothing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace tomo::detail {

class FilePrefetcher {
public:
    static constexpr std::uint64_t kHintBytes = std::uint64_t{512} << 10;

    struct Range {
        std::uint64_t offset = 0;
        std::uint64_t bytes = 0;
    };

    /// Hints for `fd`, which must outlive the prefetcher.
    explicit FilePrefetcher(int fd) : m_fd(fd) {}
    /// Stops; hints not yet handed to the kernel are dropped.
    ~FilePrefetcher();
    FilePrefetcher(const FilePrefetcher&) = delete;
    FilePrefetcher& operator=(const FilePrefetcher&) = delete;

    /// Queues `ranges` after those queued before and returns at once; the
    /// thread starts on the first call. Neighbouring ranges go out as one
    /// hint of up to kHintBytes, larger ones as several: the kernel reads at
    /// most max(readahead window, largest request of the device) of a hint
    /// (512 KiB and more on common disks).
    void prefetch(const std::vector<Range>& ranges);

private:
    void run(std::stop_token stop);

    int m_fd;
    std::mutex m_mutex;
    std::condition_variable_any m_changed;
    std::deque<Range> m_pending;
    std::jthread m_thread;  ///< last: stopped and joined before the rest goes
};

} // namespace tomo::detail
