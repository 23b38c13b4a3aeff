#include "host_copy.h"

#include "cuda_resources.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tomo::cuda {

namespace {
// Smaller parts are not worth waking a thread. 256 KiB: the 1 MiB bands of
// the live preview (texture_plan.h) are copied by 4 threads (~4x faster than
// one; the last band's copy is on the critical path).
constexpr std::size_t kMinPart = 256u << 10;
}

HostBuffer allocatePageLockedHost(std::size_t bytes) {
    if (bytes == 0) return {};
    // Whole pages (no two buffers share one), touched by several threads,
    // then locked by cudaHostRegister. On the H100 machine: cudaHostAlloc
    // 2-3 GB/s, registering untouched pages 2.7 GB/s (the kernel faults them
    // in one by one), touched pages ~19 GB/s.
    constexpr std::size_t kPage = 4096, kPart = std::size_t{32} << 20;
    const std::size_t rounded = (bytes + kPage - 1) / kPage * kPage;
    void* ptr = std::aligned_alloc(kPage, rounded);
    if (!ptr) throw OutOfMemory("not enough host memory: asked " + std::to_string(bytes >> 20) + " MiB");
    try {
        const int parts = static_cast<int>((rounded + kPart - 1) / kPart);
        WorkerPool touch(std::clamp(parts, 1, 8));
        touch.parallelFor(parts, [&](int part, int) {
            const std::size_t begin = static_cast<std::size_t>(part) * kPart;
            std::memset(static_cast<char*>(ptr) + begin, 0, std::min(kPart, rounded - begin));
        });
    } catch (...) {
        std::free(ptr);
        throw;
    }
    if (cudaHostRegister(ptr, rounded, cudaHostRegisterPortable) != cudaSuccess) {
        (void)cudaGetLastError(); // copies through the staging buffers then
        return HostBuffer(ptr, bytes, [](void* p) { std::free(p); });
    }
    return HostBuffer(ptr, bytes, [](void* p) {
        (void)cudaHostUnregister(p);
        std::free(p);
    });
}

bool isPageLocked(const void* data, std::size_t bytes) {
    if (!data || bytes == 0) return false;
    for (const void* p : {data, static_cast<const void*>(static_cast<const char*>(data) + bytes - 1)}) {
        cudaPointerAttributes attributes{};
        if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
            (void)cudaGetLastError();
            return false;
        }
        if (attributes.type != cudaMemoryTypeHost) return false;
    }
    return true;
}

void HostCopier::copy(void* dst, const void* src, std::size_t bytes) {
    const std::size_t parts =
        std::min<std::size_t>(static_cast<std::size_t>(m_pool.threads()), std::max<std::size_t>(1, bytes / kMinPart));
    if (parts <= 1) {
        std::memcpy(dst, src, bytes);
        return;
    }
    const std::size_t chunk = (bytes + parts - 1) / parts;
    m_pool.parallelFor(static_cast<int>(parts), [&](int index, int) {
        const std::size_t begin = std::min(bytes, chunk * static_cast<std::size_t>(index));
        const std::size_t end = std::min(bytes, begin + chunk);
        if (end > begin)
            std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin, end - begin);
    });
}

void HostCopier::copyRows(void* dst, std::size_t dstPitch, const void* src, std::size_t srcPitch, std::size_t width,
                          std::size_t rows) {
    const std::size_t parts = std::min<std::size_t>(
        {static_cast<std::size_t>(m_pool.threads()), std::max<std::size_t>(1, width * rows / kMinPart), rows});
    const std::size_t chunk = (rows + std::max<std::size_t>(parts, 1) - 1) / std::max<std::size_t>(parts, 1);
    auto copyPart = [&](int index, int) {
        const std::size_t end = std::min(rows, chunk * static_cast<std::size_t>(index + 1));
        for (std::size_t r = chunk * static_cast<std::size_t>(index); r < end; ++r)
            std::memcpy(static_cast<char*>(dst) + r * dstPitch, static_cast<const char*>(src) + r * srcPitch, width);
    };
    if (parts <= 1) copyPart(0, 0);
    else m_pool.parallelFor(static_cast<int>(parts), copyPart);
}

} // namespace tomo::cuda
