#include "io/file_prefetch.h"

#include <algorithm>

#include <fcntl.h>

namespace tomo::detail {

FilePrefetcher::~FilePrefetcher() {
    if (m_thread.joinable()) {
        m_thread.request_stop();
        m_thread.join();
    }
}

void FilePrefetcher::prefetch(const std::vector<Range>& ranges) {
    {
        std::lock_guard lock(m_mutex);
        for (Range r : ranges)
            while (r.bytes > 0) {
                // Onto the last hint while it ends where r starts and has room, else a new one.
                const bool joins = !m_pending.empty() && m_pending.back().bytes < kHintBytes &&
                                   m_pending.back().offset + m_pending.back().bytes == r.offset;
                if (!joins) m_pending.push_back({r.offset, 0});
                Range& last = m_pending.back();
                const std::uint64_t n = std::min(r.bytes, kHintBytes - last.bytes);
                last.bytes += n;
                r.offset += n;
                r.bytes -= n;
            }
        if (!m_thread.joinable()) m_thread = std::jthread([this](std::stop_token stop) { run(stop); });
    }
    m_changed.notify_one();
}

void FilePrefetcher::run(std::stop_token stop) {
    std::unique_lock lock(m_mutex);
    for (;;) {
        if (!m_changed.wait(lock, stop, [&] { return !m_pending.empty(); })) return;
        const Range range = m_pending.front();
        m_pending.pop_front();
        lock.unlock();
        // A failed hint only means the later read comes from the disk.
        (void)::posix_fadvise(m_fd, static_cast<off_t>(range.offset), static_cast<off_t>(range.bytes),
                              POSIX_FADV_WILLNEED);
        lock.lock();
    }
}

} // namespace tomo::detail
