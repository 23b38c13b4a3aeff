// The ramp filter on the GPU (cuFFT), the twin of tomo::SinogramFilter:
// same tomo::filterResponse, same padding and row placement, same angular
// weights. Two real rows share one complex-to-complex transform (seed 004
// §II): row 2j in the real parts, row 2j + 1 in the imaginary parts; the
// response is real and even, so the two never mix.
//
//   filter(d_rows, rows): pad -> forward FFT -> x response -> inverse FFT
//   (the result stays in the complex workspace; launchPack() turns it into
//   weighted texels, see filter_kernels.h)
#pragma once

#include "cuda_resources.h"
#include "filter_kernels.h"

#include "tomo/filter.h"

#include <span>

namespace tomo::cuda {

class GpuFilter {
public:
    /// For up to `maxRows` rows of `bins` values per call; `weights` has one
    /// angular weight per projection (rows are slice * projections + p).
    /// The response and weights are uploaded on `stream` and are on the
    /// device when the constructor returns. Throws OutOfMemory, DeviceError.
    GpuFilter(int device, int bins, int maxRows, const FilterOptions& options, std::span<const double> weights,
              cudaStream_t stream);

    /// Enqueues the filtering of `rows` (<= maxRows) rows at d_rows on `stream`.
    void filter(const float* d_rows, int rows, cudaStream_t stream);

    /// Layout of the workspace after filter(rows).
    FilterLayout layout(int rows) const;
    const float* d_spectrum() const { return m_spectrum.get(); }
    const float* d_weights() const { return m_weights.get(); }
    int projections() const { return m_projections; }
    int maxRows() const { return m_maxRows; }
    std::size_t bytes() const;

private:
    int m_bins = 0;
    int m_padded = 0;
    int m_maxRows = 0;
    int m_pairs = 0;
    int m_projections = 0;
    bool m_edge = true;
    DeviceBuffer<float> m_response; // full length, real and even
    DeviceBuffer<float> m_weights;  // per projection
    DeviceBuffer<float> m_spectrum; // pairs x padded complex, interleaved
    FftPlan m_plan;
};

} // namespace tomo::cuda
