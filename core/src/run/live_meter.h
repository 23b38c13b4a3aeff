// Internal: the counters of a live source (tomo/live.h), frames and bytes
// per second over the last second. Not thread-safe: the source locks.
#pragma once

#include "tomo/live.h"

#include <chrono>
#include <deque>
#include <utility>

namespace tomo::detail {

class LiveMeter {
public:
    using Clock = std::chrono::steady_clock;

    void frame(std::size_t bytes) {
        const auto now = Clock::now();
        ++m_counters.frames;
        m_counters.bytes += static_cast<long long>(bytes);
        m_counters.lastFrame = now;
        m_recent.emplace_back(now, bytes);
        trim(now);
    }
    void rejected() { ++m_counters.rejected; }
    void scan() { ++m_counters.scans; }

    LiveCounters counters() {
        const auto now = Clock::now();
        trim(now);
        LiveCounters c = m_counters;
        double bytes = 0.0;
        for (const auto& [when, size] : m_recent) bytes += static_cast<double>(size);
        c.framesPerSecond = static_cast<double>(m_recent.size()) / kWindow.count();
        c.gigabytesPerSecond = bytes / kWindow.count() / 1e9;
        return c;
    }

private:
    static constexpr std::chrono::duration<double> kWindow{1.0};
    void trim(Clock::time_point now) {
        while (!m_recent.empty() && now - m_recent.front().first > kWindow) m_recent.pop_front();
    }
    LiveCounters m_counters;
    std::deque<std::pair<Clock::time_point, std::size_t>> m_recent;
};

} // namespace tomo::detail
