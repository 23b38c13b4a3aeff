#include "gpu_filter.h"

#include <string>
#include <vector>

namespace tomo::cuda {

GpuFilter::GpuFilter(int device, int bins, int maxRows, const FilterOptions& options, std::span<const double> weights,
                     cudaStream_t stream)
    : m_bins(bins), m_padded(paddedLength(bins)), m_maxRows(maxRows), m_pairs((maxRows + 1) / 2),
      m_projections(static_cast<int>(weights.size())), m_edge(options.padding == Padding::Edge) {
    if (maxRows < 1) throw InvalidArgument("GPU filter: maxRows is " + std::to_string(maxRows) + " (expected >= 1)");
    if (weights.empty()) throw InvalidArgument("GPU filter: no angular weights");
    // The CPU's half spectrum, mirrored to the full length of a C2C transform.
    const std::vector<float> half = filterResponse(m_padded, options);
    std::vector<float> full(static_cast<std::size_t>(m_padded));
    for (int k = 0; k < m_padded; ++k) full[k] = half[static_cast<std::size_t>(k <= m_padded / 2 ? k : m_padded - k)];
    std::vector<float> w(weights.size());
    for (std::size_t i = 0; i < weights.size(); ++i) w[i] = static_cast<float>(weights[i]);

    m_response = DeviceBuffer<float>(device, full.size(), "the filter response");
    m_weights = DeviceBuffer<float>(device, w.size(), "the angular weights");
    m_spectrum = DeviceBuffer<float>(device, static_cast<std::size_t>(m_pairs) * m_padded * 2,
                                     "the FFT workspace (" + std::to_string(maxRows) + " rows of " +
                                         std::to_string(m_padded) + ")");
    // Not cudaMemcpy: from pageable memory it may return before its DMA on the
    // legacy stream lands, and filter() runs on non-blocking streams that do
    // not wait for the legacy stream.
    copyToDeviceNow(m_response.get(), full.data(), full.size() * sizeof(float), stream);
    copyToDeviceNow(m_weights.get(), w.data(), w.size() * sizeof(float), stream);
    m_plan = FftPlan(device, m_padded, m_pairs);
}

FilterLayout GpuFilter::layout(int rows) const {
    FilterLayout L;
    L.rows = rows;
    L.pairs = m_pairs;
    L.bins = m_bins;
    L.padded = m_padded;
    L.left = (m_padded - m_bins) / 2;
    return L;
}

void GpuFilter::filter(const float* d_rows, int rows, cudaStream_t stream) {
    if (rows < 0 || rows > m_maxRows)
        throw InvalidArgument("GPU filter: " + std::to_string(rows) + " rows (expected at most " +
                              std::to_string(m_maxRows) + ")");
    const FilterLayout L = layout(rows);
    auto* spectrum = reinterpret_cast<cufftComplex*>(m_spectrum.get());
    launchPadPairs(L, d_rows, m_edge, m_spectrum.get(), stream);
    TOMO_CUFFT_CHECK(cufftSetStream(m_plan.get(), stream));
    TOMO_CUFFT_CHECK(cufftExecC2C(m_plan.get(), spectrum, spectrum, CUFFT_FORWARD));
    launchApplyResponse(L, m_response.get(), m_spectrum.get(), stream);
    TOMO_CUFFT_CHECK(cufftExecC2C(m_plan.get(), spectrum, spectrum, CUFFT_INVERSE));
}

std::size_t GpuFilter::bytes() const {
    return m_response.bytes() + m_weights.bytes() + m_spectrum.bytes() + m_plan.workBytes();
}

} // namespace tomo::cuda
