// The ramp filter on an OpenCL device with VkFFT's OpenCL backend, the twin
// of tomo::SinogramFilter and the CUDA GpuFilter: same tomo::filterResponse,
// padding and row placement, same angular weights. Two real rows share one
// complex transform (row 2j real, row 2j + 1 imaginary; the response is real
// and even, so the two never mix), a batch of maxRows / 2 transforms per call.
//
//   filter(rows, count): pad -> forward FFT -> x response -> inverse FFT, in
//   the spectrum buffer; the plan's pack kernel then weights and stores it
//   (filter.cl).
//
// VkFFT generates and compiles its kernels when a plan is made; their
// binaries are kept in the program cache folder like ours (program_cache.h).
#pragma once

#include "cl_runtime.h"

#include "tomo/filter.h"

#include <memory>
#include <span>

namespace tomo::opencl {

class OclFilter {
public:
    /// `program` is the plan's filter.cl program. Throws InvalidArgument,
    /// DeviceError (VkFFT's error code named), OutOfMemory.
    OclFilter(int device, const cl::CommandQueue& queue, const cl::Program& program, int bins, int maxRows,
              const FilterOptions& options, std::span<const double> weights);
    ~OclFilter();
    OclFilter(const OclFilter&) = delete;
    OclFilter& operator=(const OclFilter&) = delete;

    /// Enqueues the filtering of `rowCount` (<= maxRows) rows of `rows`.
    void filter(const cl::Buffer& rows, int rowCount);

    const cl::Buffer& spectrum() const { return m_spectrum; }
    const cl::Buffer& weights() const { return m_weights; }
    int bins() const { return m_bins; }
    int padded() const { return m_padded; }
    int left() const { return (m_padded - m_bins) / 2; }
    std::size_t bytes() const;

private:
    struct Fft;
    int m_bins = 0;
    int m_padded = 0;
    int m_maxRows = 0;
    int m_pairs = 0;
    bool m_edge = true;
    cl::CommandQueue m_queue;
    cl::Buffer m_response; // full length, real and even
    cl::Buffer m_weights;  // per projection
    cl::Buffer m_spectrum; // pairs x padded complex, interleaved
    cl::Kernel m_pad, m_apply;
    std::unique_ptr<Fft> m_fft;
};

} // namespace tomo::opencl
