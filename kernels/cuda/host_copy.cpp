#include "host_copy.h"

#include <algorithm>
#include <cstring>

namespace tomo::cuda {

namespace {
// Smaller parts are not worth waking a thread. 256 KiB: the 1 MiB bands of
// the live preview (texture_plan.h) are copied by 4 threads (~4x faster than
// one; the last band's copy is on the critical path).
constexpr std::size_t kMinPart = 256u << 10;
}

HostCopier::HostCopier(int threads) {
    for (int i = 1; i < std::max(1, threads); ++i) m_workers.emplace_back([this, i] { workerLoop(i); });
}

HostCopier::~HostCopier() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (auto& w : m_workers) w.join();
}

void HostCopier::copyPart(int index) {
    const std::size_t chunk = (m_bytes + m_parts - 1) / m_parts;
    const std::size_t begin = std::min(m_bytes, chunk * index);
    const std::size_t end = std::min(m_bytes, begin + chunk);
    if (end > begin) std::memcpy(m_dst + begin, m_src + begin, end - begin);
}

void HostCopier::copy(void* dst, const void* src, std::size_t bytes) {
    const int parts = static_cast<int>(std::min<std::size_t>(m_workers.size() + 1, std::max<std::size_t>(1, bytes / kMinPart)));
    if (parts <= 1) {
        std::memcpy(dst, src, bytes);
        return;
    }
    {
        std::lock_guard lock(m_mutex);
        m_dst = static_cast<char*>(dst);
        m_src = static_cast<const char*>(src);
        m_bytes = bytes;
        m_parts = parts;
        m_pending = parts - 1;
        ++m_job;
    }
    m_wake.notify_all();
    copyPart(0);
    std::unique_lock lock(m_mutex);
    m_done.wait(lock, [this] { return m_pending == 0; });
}

void HostCopier::workerLoop(int index) {
    std::uint64_t seen = 0;
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [&] { return m_stop || m_job != seen; });
        if (m_stop) return;
        seen = m_job;
        if (index >= m_parts) continue; // not needed for this copy
        lock.unlock();
        copyPart(index);
        lock.lock();
        if (--m_pending == 0) m_done.notify_one();
    }
}

} // namespace tomo::cuda
