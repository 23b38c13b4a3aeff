// Large transfers between pageable host memory and the device through two
// pinned buffers: from pageable memory the driver copies at a few GB/s;
// through pinned buffers that threads fill while the other one's DMA runs,
// at PCIe speed. Used by the cone-beam plans (views, volumes) and the GPU
// corrector (a chunk's stored values and corrected sinograms).
#pragma once

#include "cuda_resources.h"
#include "host_copy.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <thread>

namespace tomo::cuda {

class PinnedStaging {
public:
    /// Each of the two buffers.
    static constexpr std::size_t kDefaultBytes = std::size_t{32} << 20;

    /// Two buffers of `bytes` each. Throws OutOfMemory.
    explicit PinnedStaging(std::size_t bytes = kDefaultBytes)
        : m_buffers{PinnedBuffer<unsigned char>(bytes, "the pinned staging buffers"),
                    PinnedBuffer<unsigned char>(bytes, "the pinned staging buffers")},
          m_done{Event::create(false), Event::create(false)},
          m_copier(static_cast<int>(std::clamp(std::thread::hardware_concurrency() / 2, 1u, 8u))) {}

    /// Host bytes at `source` to the device through the buffers, in parts of
    /// whole `unit`s: send(part in a pinned buffer, offset, bytes) enqueues
    /// each part's DMA on `stream`; threads fill one buffer while the
    /// other's DMA runs. Returns when the last part is enqueued.
    template <class Send>
    void forEachPart(const void* source, std::size_t bytes, std::size_t unit, cudaStream_t stream, Send&& send) {
        const std::size_t part = m_buffers[0].size() / unit * unit;
        for (std::size_t offset = 0, i = 0; offset < bytes; offset += part, ++i) {
            const std::size_t n = std::min(part, bytes - offset);
            TOMO_CUDA_CHECK(cudaEventSynchronize(m_done[i % 2].get())); // its last DMA has landed
            m_copier.copy(m_buffers[i % 2].get(), static_cast<const unsigned char*>(source) + offset, n);
            send(static_cast<const void*>(m_buffers[i % 2].get()), offset, n);
            TOMO_CUDA_CHECK(cudaEventRecord(m_done[i % 2].get(), stream));
        }
    }

    /// forEachPart into contiguous device memory.
    void upload(void* d_target, const void* source, std::size_t bytes, cudaStream_t stream) {
        forEachPart(source, bytes, 1, stream, [&](const void* part, std::size_t offset, std::size_t n) {
            TOMO_CUDA_CHECK(cudaMemcpyAsync(static_cast<unsigned char*>(d_target) + offset, part, n,
                                            cudaMemcpyHostToDevice, stream));
        });
    }

    /// `bytes` of device memory to the host through the buffers: the DMA of
    /// part i + 1 runs while threads copy part i out. Returns when all is there.
    void download(void* target, const void* d_source, std::size_t bytes, cudaStream_t stream) {
        const std::size_t part = m_buffers[0].size();
        const std::size_t parts = (bytes + part - 1) / part;
        auto partBytes = [&](std::size_t i) { return std::min(part, bytes - i * part); };
        for (std::size_t i = 0; i <= parts; ++i) {
            if (i < parts) {
                TOMO_CUDA_CHECK(cudaMemcpyAsync(m_buffers[i % 2].get(),
                                                static_cast<const unsigned char*>(d_source) + i * part, partBytes(i),
                                                cudaMemcpyDeviceToHost, stream));
                TOMO_CUDA_CHECK(cudaEventRecord(m_done[i % 2].get(), stream));
            }
            if (i > 0) {
                const std::size_t j = i - 1;
                TOMO_CUDA_CHECK(cudaEventSynchronize(m_done[j % 2].get()));
                m_copier.copy(static_cast<unsigned char*>(target) + j * part, m_buffers[j % 2].get(), partBytes(j));
            }
        }
    }

private:
    std::array<PinnedBuffer<unsigned char>, 2> m_buffers;
    std::array<Event, 2> m_done;
    HostCopier m_copier;
};

} // namespace tomo::cuda
