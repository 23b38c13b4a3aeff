// A first-in first-out queue of bounded capacity between two threads of the
// batch conveyor: push() waits while the queue is full (the producer runs at
// most `capacity` items ahead, which bounds memory), pop() waits while it is
// empty. close() wakes both sides for good: pushes are dropped and pop()
// returns nothing once the queue is drained (the end of the work, or an
// error or cancel elsewhere).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace tomo::detail {

template <class T>
class BoundedQueue {
public:
    explicit BoundedQueue(std::size_t capacity) : m_capacity(capacity < 1 ? 1 : capacity) {}

    /// Waits for room; returns false (dropping the item) when closed.
    bool push(T item) {
        std::unique_lock lock(m_mutex);
        m_notFull.wait(lock, [&] { return m_closed || m_items.size() < m_capacity; });
        if (m_closed) return false;
        m_items.push_back(std::move(item));
        m_notEmpty.notify_one();
        return true;
    }

    /// Waits for an item; nothing when the queue is closed and empty.
    std::optional<T> pop() {
        std::unique_lock lock(m_mutex);
        m_notEmpty.wait(lock, [&] { return m_closed || !m_items.empty(); });
        if (m_items.empty()) return std::nullopt;
        T item = std::move(m_items.front());
        m_items.pop_front();
        m_notFull.notify_one();
        return item;
    }

    void close() {
        {
            std::lock_guard lock(m_mutex);
            m_closed = true;
        }
        m_notFull.notify_all();
        m_notEmpty.notify_all();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_notFull, m_notEmpty;
    std::deque<T> m_items;
    std::size_t m_capacity;
    bool m_closed = false;
};

} // namespace tomo::detail
