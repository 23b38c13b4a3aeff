// Internal: buffers handed back once used, for later chunks of the batch
// conveyor to fill again: no allocation, page faults or zero-filling per
// chunk (a chunk of 2048^2 sinograms or slices is gigabytes). Thread-safe.
//   BufferPool<T>:   vectors (sinograms)
//   HostBufferPool:  HostBuffers from an allocator (the plan's page-locked
//                    memory for the raw rows and slices it transfers)
#pragma once

#include "tomo/host_buffer.h"

#include <cstddef>
#include <functional>
#include <mutex>
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
    /// one too small is released first, so the pool does not grow).
    HostBuffer take(std::size_t bytes) {
        Allocate allocate;
        HostBuffer tooSmall;
        {
            std::lock_guard lock(m_mutex);
            auto best = m_free.end();
            for (auto it = m_free.begin(); it != m_free.end(); ++it)
                if (it->size() >= bytes && (best == m_free.end() || it->size() < best->size())) best = it;
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

    /// Allocates a buffer of `bytes` ahead of need and keeps it free.
    void addNew(std::size_t bytes) {
        Allocate allocate;
        {
            std::lock_guard lock(m_mutex);
            allocate = m_allocate;
        }
        give(allocate(bytes));
    }

private:
    std::mutex m_mutex;
    Allocate m_allocate;
    std::vector<HostBuffer> m_free;
};

} // namespace tomo::detail
