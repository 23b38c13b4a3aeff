#include "host_copy.h"

#include "cuda_resources.h"

#include <algorithm>
#include <cstring>

namespace tomo::cuda {

namespace {
// Smaller parts are not worth waking a thread. 256 KiB: the 1 MiB bands of
// the live preview (texture_plan.h) are copied by 4 threads (~4x faster than
// one; the last band's copy is on the critical path).
constexpr std::size_t kMinPart = 256u << 10;
}

HostBuffer allocatePageLockedHost(int device, std::size_t bytes) {
    DeviceScope scope(device);
    if (void* ptr = detail::tryAllocatePinned(bytes)) return HostBuffer(ptr, bytes, detail::freePinned);
    return HostBuffer::plain(bytes); // copies through the staging buffers then
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

int deviceHolding(const void* data, std::size_t bytes) {
    if (!data || bytes == 0) return -1;
    int device = -1;
    for (const void* p : {data, static_cast<const void*>(static_cast<const char*>(data) + bytes - 1)}) {
        cudaPointerAttributes attributes{};
        if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
            (void)cudaGetLastError();
            return -1;
        }
        if (attributes.type != cudaMemoryTypeDevice || (device >= 0 && attributes.device != device)) return -1;
        device = attributes.device;
    }
    return device;
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
