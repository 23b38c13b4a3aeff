// Parallel host memcpy for staging data between the caller's (pageable)
// buffers and the plan's pinned double buffers: one thread copies ~10 GB/s,
// less than PCIe and the back-projection need when 4 slices run per pass.
// Copies are split into parts of at least 256 KiB, one per thread.
#pragma once

#include "tomo/worker_pool.h"

#include <cstddef>

namespace tomo::cuda {

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
