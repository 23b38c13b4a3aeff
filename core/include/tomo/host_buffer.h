// Host memory handed out by a plan for the buffers of later calls
// (ReconstructionPlan::allocateHost): page-locked for the CUDA plans, so
// their transfers reach it by DMA without a staging copy; plain otherwise.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <utility>

namespace tomo {

class HostBuffer {
public:
    using Release = void (*)(void*);

    HostBuffer() = default;
    /// Owns `data` (`bytes` bytes), which `release` frees.
    HostBuffer(void* data, std::size_t bytes, Release release) : m_data(data, release), m_bytes(bytes) {}
    /// A buffer moved from is empty (size() 0).
    HostBuffer(HostBuffer&& other) noexcept
        : m_data(std::move(other.m_data)), m_bytes(std::exchange(other.m_bytes, 0)) {}
    HostBuffer& operator=(HostBuffer&& other) noexcept {
        m_data = std::move(other.m_data);
        m_bytes = std::exchange(other.m_bytes, 0);
        return *this;
    }

    /// `bytes` of ordinary memory, not touched (no page is committed before
    /// it is written). Throws OutOfMemory.
    static HostBuffer plain(std::size_t bytes);

    std::byte* data() const { return static_cast<std::byte*>(m_data.get()); }
    std::size_t size() const { return m_bytes; }
    /// The first `count` values of type T (count * sizeof(T) <= size()).
    template <class T>
    std::span<T> as(std::size_t count) const {
        return {reinterpret_cast<T*>(m_data.get()), count};
    }

private:
    std::unique_ptr<void, Release> m_data{nullptr, nullptr};
    std::size_t m_bytes = 0;
};

} // namespace tomo
