// Bytes in use now and at the peak, counted from several threads: the
// conveyor's chunk buffers, a projector pair's vectors.
#pragma once

#include <atomic>
#include <cstddef>

namespace tomo {

class PeakMeter {
public:
    void add(std::size_t bytes) {
        const std::size_t now = m_now.fetch_add(bytes) + bytes;
        std::size_t peak = m_peak.load();
        while (now > peak && !m_peak.compare_exchange_weak(peak, now)) {}
    }
    void remove(std::size_t bytes) { m_now.fetch_sub(bytes); }
    std::size_t peak() const { return m_peak.load(); }

private:
    std::atomic<std::size_t> m_now{0}, m_peak{0};
};

} // namespace tomo
