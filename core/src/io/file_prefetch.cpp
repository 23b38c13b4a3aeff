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
        for (Range r : ranges) {
            while (r.bytes > 0) {
                Range* last = m_pending.empty() ? nullptr : &m_pending.back();
                if (last && last->offset + last->bytes == r.offset && last->bytes < kHintBytes) {
                    const std::uint64_t n = std::min(r.bytes, kHintBytes - last->bytes);
                    last->bytes += n;
                    r.offset += n;
                    r.bytes -= n;
                } else {
                    const std::uint64_t n = std::min(r.bytes, kHintBytes);
                    m_pending.push_back({r.offset, n});
                    r.offset += n;
                    r.bytes -= n;
                }
            }
        }
        if (!m_thread.joinable()) m_thread = std::jthread([this](std::stop_token stop) { run(stop); });
    }
    m_changed.notify_all();
}

void FilePrefetcher::waitUntilHinted() {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return m_pending.empty() && !m_hinting; });
}

void FilePrefetcher::run(std::stop_token stop) {
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_hinting = false;
        m_changed.notify_all();
        if (!m_changed.wait(lock, stop, [&] { return !m_pending.empty(); })) return;
        const Range range = m_pending.front();
        m_pending.pop_front();
        m_hinting = true;
        lock.unlock();
        // A failed hint only means the later read comes from the disk.
        (void)::posix_fadvise(m_fd, static_cast<off_t>(range.offset), static_cast<off_t>(range.bytes),
                              POSIX_FADV_WILLNEED);
        lock.lock();
    }
}

} // namespace tomo::detail
