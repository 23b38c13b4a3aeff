// Internal: buffers handed back once used, for later chunks of the batch
// conveyor to fill again: no allocation, page faults or zero-filling per
// chunk (a chunk of 2048^2 sinograms or slices is gigabytes). Thread-safe.
#pragma once

#include <cstddef>
#include <mutex>
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

} // namespace tomo::detail
