// Host memory and transfers: page-locked buffers for callers (their data
// then travel by DMA, no copy), and a parallel host memcpy for staging data
// between the caller's pageable buffers and the plan's pinned double
// buffers: one thread copies ~10 GB/s, less than PCIe and the
// back-projection need when 4 slices run per pass. Copies are split into
// parts of at least 256 KiB, one per thread.
#pragma once

#include "tomo/host_buffer.h"
#include "tomo/worker_pool.h"

#include <cstddef>

namespace tomo::cuda {

/// `bytes` of page-locked host memory (registered with every device), or
/// plain memory where the system refuses to lock that much (transfers then
/// go through the plans' staging buffers), registered with the context of
/// `device`, the plan's (on a thread without one, the default GPU 0 would
/// get a context for it). Throws OutOfMemory.
HostBuffer allocatePageLockedHost(int device, std::size_t bytes);

/// True when [data, data + bytes) is host memory the driver has page-locked
/// (allocatePageLockedHost, cudaHostRegister): copies may use it directly.
bool isPageLocked(const void* data, std::size_t bytes);

/// The CUDA device whose memory holds [data, data + bytes) (cudaMalloc'd),
/// or -1 for host memory of any kind (pageable, page-locked, managed).
int deviceHolding(const void* data, std::size_t bytes);

class HostCopier {
public:
    /// `threads` >= 1 in all (the caller takes part).
    explicit HostCopier(int threads) : m_pool(threads) {}

    /// memcpy(dst, src, bytes) spread over the threads; returns when done.
    void copy(void* dst, const void* src, std::size_t bytes);

    /// `rows` rows of `width` bytes from src (rows srcPitch bytes apart) to
    /// dst (dstPitch apart), spread over the threads; returns when done.
    void copyRows(void* dst, std::size_t dstPitch, const void* src, std::size_t srcPitch, std::size_t width,
                  std::size_t rows);

private:
    WorkerPool m_pool;
};

} // namespace tomo::cuda
