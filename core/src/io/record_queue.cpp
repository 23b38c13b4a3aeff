#include "io/record_queue.h"

#include <exception>

namespace tomo::detail {

RecordQueue::RecordQueue(std::unique_ptr<FrameSink> sink, std::size_t capacityBytes, Log log)
    : m_sink(std::move(sink)), m_capacity(capacityBytes), m_log(std::move(log)), m_thread([this] { write(); }) {}

RecordQueue::~RecordQueue() { finish(); }

void RecordQueue::backlog(const FrameStore& store) {
    struct Backlog final : FrameSink {
        RecordQueue& queue;
        explicit Backlog(RecordQueue& q) : queue(q) {}
        void send(const Frame& frame) override { queue.enqueue(frame, /*waitForRoom=*/false); }
        void finish(const std::string&) override {}
    } backlog(*this);
    store.replay(backlog);
}

void RecordQueue::push(const Frame& frame) { enqueue(frame, /*waitForRoom=*/true); }

void RecordQueue::enqueue(const Frame& frame, bool waitForRoom) {
    std::unique_lock lock(m_mutex);
    if (waitForRoom)
        m_changed.wait(lock, [&] { return m_failed || m_bytes == 0 || m_bytes + frame.values.size() <= m_capacity; });
    if (m_failed || m_closing) return;
    if (m_scanId.empty()) m_scanId = frame.scanId;
    m_frames.push_back(frame); // the pixels are shared, not copied
    m_bytes += frame.values.size();
    m_changed.notify_all();
}

void RecordQueue::write() {
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_changed.wait(lock, [&] { return !m_frames.empty() || m_closing; });
        if (m_frames.empty()) return; // closing, all written
        const Frame& frame = m_frames.front();
        lock.unlock();
        std::string failure;
        try {
            m_sink->send(frame); // the front stays queued (and counted) while it is written
        } catch (const std::exception& e) {
            failure = e.what();
        }
        lock.lock();
        m_bytes -= m_frames.front().values.size();
        m_frames.pop_front();
        if (!failure.empty()) {
            m_failed = true;
            m_frames.clear();
            m_bytes = 0;
        }
        m_changed.notify_all();
        if (!failure.empty()) {
            lock.unlock();
            log("recording stopped: " + failure);
            lock.lock();
        }
    }
}

void RecordQueue::finish() {
    {
        const std::lock_guard lock(m_mutex);
        if (m_finished) return;
        m_finished = true;
        m_closing = true;
    }
    m_changed.notify_all();
    m_thread.join();
    try {
        if (!m_failed) m_sink->finish(m_scanId);
    } catch (const std::exception& e) {
        log(std::string("recording could not be finished: ") + e.what());
    }
    m_sink.reset(); // a failed sink closes what it can
}

void RecordQueue::log(const std::string& line) const {
    if (m_log) m_log(line);
}

} // namespace tomo::detail
