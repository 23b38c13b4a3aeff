// Internal: buffers handed back once used, for later chunks of the batch
// conveyor to fill again: no allocation, page faults or zero-filling per
// chunk (a chunk of 2048^2 sinograms or slices is gigabytes). Thread-safe.
//   BufferPool<T>:   vectors (sinograms)
//   HostBufferPool:  HostBuffers from an allocator (the plan's page-locked
//                    memory for the raw rows and slices it transfers),
//                    optionally allocated ahead on a thread of its own
#pragma once

#include "tomo/host_buffer.h"

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

namespace tomo::detail {

template <class T>
class BufferPool {
public:
    /// A vector of `size` values: a free one when there is one (the smallest
    /// that holds `size`, else the largest), its contents whatever it held
    /// (callers overwrite them).
    std::vector<T> take(std::size_t size) {
        std::vector<T> out;
        {
            std::lock_guard lock(m_mutex);
            auto best = m_free.end();
            for (auto it = m_free.begin(); it != m_free.end(); ++it) {
                if (best == m_free.end()) best = it;
                else if (it->capacity() >= size) {
                    if (best->capacity() < size || it->capacity() < best->capacity()) best = it;
                } else if (best->capacity() < size && it->capacity() > best->capacity()) {
                    best = it;
                }
            }
            if (best != m_free.end()) {
                out = std::move(*best);
                m_free.erase(best);
            }
        }
        out.resize(size);
        return out;
    }

    void give(std::vector<T>&& v) {
        if (v.capacity() == 0) return;
        std::lock_guard lock(m_mutex);
        m_free.push_back(std::move(v));
        v = {};
    }

private:
    std::mutex m_mutex;
    std::vector<std::vector<T>> m_free;
};

class HostBufferPool {
public:
    using Allocate = std::function<HostBuffer(std::size_t bytes)>;

    explicit HostBufferPool(Allocate allocate = HostBuffer::plain) : m_allocate(std::move(allocate)) {}

    /// Buffers allocated from now on come from `allocate`; free ones are released.
    void allocateWith(Allocate allocate) {
        std::vector<HostBuffer> released;
        std::lock_guard lock(m_mutex);
        m_allocate = std::move(allocate);
        released.swap(m_free);
    }

    /// The smallest free buffer of at least `bytes`, else a new one (a free
    /// one too small is released first, so the pool does not grow). While
    /// buffers are being allocated ahead, waits for them instead.
    HostBuffer take(std::size_t bytes) {
        Allocate allocate;
        HostBuffer tooSmall;
        {
            std::unique_lock lock(m_mutex);
            auto smallestThatHolds = [&] {
                auto best = m_free.end();
                for (auto it = m_free.begin(); it != m_free.end(); ++it)
                    if (it->size() >= bytes && (best == m_free.end() || it->size() < best->size())) best = it;
                return best;
            };
            auto best = smallestThatHolds();
            for (; best == m_free.end() && m_expected > 0; best = smallestThatHolds()) m_added.wait(lock);
            if (best != m_free.end()) {
                HostBuffer out = std::move(*best);
                m_free.erase(best);
                return out;
            }
            if (!m_free.empty()) {
                tooSmall = std::move(m_free.back());
                m_free.pop_back();
            }
            allocate = m_allocate;
        }
        // Outside the lock: unlocking and page-locking gigabytes take a while.
        tooSmall = {};
        return allocate(bytes);
    }

    void give(HostBuffer&& buffer) {
        if (buffer.size() == 0) return;
        std::lock_guard lock(m_mutex);
        m_free.push_back(std::move(buffer));
    }

    /// Allocates `count` buffers of `bytes` on a thread of its own and keeps
    /// them free, one by one, for take(): page-locking takes a while, and
    /// the takers go on meanwhile. take() waits for them rather than
    /// allocating its own, so no buffer is made beyond those. A failed
    /// allocation ends the thread; take() then allocates, and throws, itself.
    /// Call it once; the pool's end stops it after the allocation under way.
    void allocateAhead(std::size_t bytes, int count) {
        if (count <= 0) return;
        Allocate allocate;
        {
            std::lock_guard lock(m_mutex);
            allocate = m_allocate;
            m_expected += count;
        }
        m_ahead = std::jthread([this, allocate, bytes, count](std::stop_token stop) {
            int left = count;
            try {
                for (; left > 0 && !stop.stop_requested(); --left) {
                    HostBuffer buffer = allocate(bytes);
                    std::lock_guard lock(m_mutex);
                    m_free.push_back(std::move(buffer));
                    --m_expected;
                    m_added.notify_all();
                }
            } catch (...) {
            }
            std::lock_guard lock(m_mutex);
            m_expected -= left;
            m_added.notify_all();
        });
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_added;
    Allocate m_allocate;
    std::vector<HostBuffer> m_free;
    int m_expected = 0; // buffers allocateAhead() has yet to add
    std::jthread m_ahead; // last: joined before the members it uses go
};

} // namespace tomo::detail
