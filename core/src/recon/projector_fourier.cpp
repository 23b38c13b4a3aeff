// The CPU Fourier projector pair (projector.h, ProjectorKind::Fourier):
// gridrec's back-projection of unfiltered rows and its adjoint, two slices
// at a time as the real and imaginary parts, on the pair's threads with
// gridrec's CPU steps (gridrec_cpu.h). Vectors are plain (one lane): the
// steps read and write whole slices.
#include "recon/gridrec_cpu.h"
#include "recon/projector_host.h"

#include "tomo/error.h"

#include <algorithm>
#include <complex>
#include <memory>
#include <string>
#include <vector>

namespace tomo {

namespace {

using Complex = std::complex<float>;

class FourierPair final : public cpu::HostPair<float> {
public:
    FourierPair(const ReconGeometry& geometry, const FilterOptions& filter, const IterativeOptions& options,
                int threads)
        : HostPair(geometry, filter, options, threads) {
        if (!options.matched)
            throw InvalidArgument("the fourier projector pair is matched by construction; an unmatched pair is "
                                  "joseph only");
        geometryChanged();
    }

    std::string name() const override { return "cpu fourier, matched"; }
    std::size_t memoryBytes() const override {
        const gridrec::Setup& s = *m_setup;
        return HostPair::memoryBytes() + (static_cast<std::size_t>(s.projections) * spectrumStride() +
                                          static_cast<std::size_t>(s.gridSize) * gridStride()) * sizeof(Complex) +
               s.samplesBytes();
    }

private:
    int lanes(int) const override { return 1; }
    double minWeightSum() const override { return kFourierMinWeightSum; }

    std::size_t spectrumStride() const { return (static_cast<std::size_t>(m_setup->rowLength) + 7) / 8 * 8; }
    std::size_t gridStride() const { return static_cast<std::size_t>(m_setup->gridSize) + 2 * gridrec::kGridPad; }

    /// Tables for the axis; buffers and FFT plans when the row length grows.
    void geometryChanged() override {
        const int needed = m_setup ? m_setup->rowLengthNeeded(m_geometry.geometry) : 0;
        if (!m_setup || needed > m_setup->rowLength) {
            m_setup = std::make_unique<gridrec::Setup>(m_geometry, gridrec::Parameters{}, needed);
            allocate();
        }
        m_shifts = m_setup->phaseShifts(m_geometry.geometry);
    }

    void allocate() {
        const gridrec::Setup& s = *m_setup;
        m_spectra = fftw::allocate<Complex>(static_cast<std::size_t>(s.projections) * spectrumStride());
        m_samples = fftw::allocate<Complex>(static_cast<std::size_t>(s.projections) * s.sampleStride());
        m_grid = fftw::allocate<Complex>(static_cast<std::size_t>(s.gridSize) * gridStride());
        m_toGrid = gridrec::planGrid(s.gridSize, m_grid.get(), gridStride(), FFTW_BACKWARD);
        m_fromGrid = gridrec::planGrid(s.gridSize, m_grid.get(), gridStride(), FFTW_FORWARD);
        fftw::Plan forward, backward;
        {
            std::lock_guard lock(fftw::plannerMutex());
            auto* row = reinterpret_cast<fftwf_complex*>(m_spectra.get());
            forward.reset(fftwf_plan_dft_1d(s.rowLength, row, row, FFTW_FORWARD, FFTW_ESTIMATE));
            backward.reset(fftwf_plan_dft_1d(s.rowLength, row, row, FFTW_BACKWARD, FFTW_ESTIMATE));
        }
        if (!forward || !backward)
            throw Error("cpu fourier projector: FFTW could not plan a transform of length " + std::to_string(s.rowLength));
        // (the old plans go here, outside the lock their deleter takes)
        m_rowForward = std::move(forward);
        m_rowBackward = std::move(backward);
    }

    /// y = A x, slice pair by slice pair.
    void project(const Vector& x, Vector& y) override {
        const gridrec::Setup& s = *m_setup;
        const std::size_t stride = spectrumStride();
        for (int a = 0; a < x.count(); a += 2) {
            const bool pair = a + 1 < x.count();
            gridrec::placeSlices(s, x.group(a), pair ? x.group(a + 1) : nullptr, m_grid.get(), gridStride(), pool());
            gridrec::transformGrid(s, m_grid.get(), gridStride(), m_fromGrid, pool());
            gridrec::interpolateSamples(s, m_grid.get(), gridStride(), m_samples.get(), pool());
            gridrec::foldSamples(s, m_samples.get(), m_shifts, m_spectra.get(), stride, pool());
            float* first = y.group(a);
            float* second = pair ? y.group(a + 1) : nullptr;
            pool().parallelFor(s.projections, [&](int p, int) {
                Complex* row = m_spectra.get() + static_cast<std::size_t>(p) * stride;
                fftwf_execute_dft(m_rowBackward.get(), reinterpret_cast<fftwf_complex*>(row),
                                  reinterpret_cast<fftwf_complex*>(row));
                const std::size_t at = static_cast<std::size_t>(p) * s.bins;
                for (int n = 0; n < s.bins; ++n) {
                    first[at + n] = row[n].real();
                    if (second) second[at + n] = row[n].imag();
                }
            });
        }
    }

    /// x = B y (the Fourier pair has one back-projector: `interpolate` is
    /// what it approximates anyway).
    void backProject(const Vector& y, Vector& x, bool) override {
        const gridrec::Setup& s = *m_setup;
        const std::size_t stride = spectrumStride();
        for (int a = 0; a < y.count(); a += 2) {
            const bool pair = a + 1 < y.count();
            const float* first = y.group(a);
            const float* second = pair ? y.group(a + 1) : nullptr;
            pool().parallelFor(s.projections, [&](int p, int) {
                Complex* row = m_spectra.get() + static_cast<std::size_t>(p) * stride;
                const std::size_t at = static_cast<std::size_t>(p) * s.bins;
                for (int n = 0; n < s.bins; ++n) row[n] = Complex(first[at + n], second ? second[at + n] : 0.0f);
                std::fill(row + s.bins, row + s.rowLength, Complex{});
                fftwf_execute_dft(m_rowForward.get(), reinterpret_cast<fftwf_complex*>(row),
                                  reinterpret_cast<fftwf_complex*>(row));
            });
            gridrec::phaseSamples(s, m_spectra.get(), stride, m_shifts, m_samples.get(), pool());
            gridrec::spread(s, m_samples.get(), m_grid.get(), gridStride(), pool());
            gridrec::transformGrid(s, m_grid.get(), gridStride(), m_toGrid, pool());
            gridrec::cropSlices(s, m_grid.get(), gridStride(), x.group(a), pair ? x.group(a + 1) : nullptr, pool());
        }
    }

    std::unique_ptr<gridrec::Setup> m_setup;
    std::vector<double> m_shifts;
    fftw::Buffer<Complex> m_spectra; ///< one pair's rows, [view][spectrumStride()]
    fftw::Buffer<Complex> m_samples; ///< one pair's phased samples, canonical rows
    fftw::Buffer<Complex> m_grid;    ///< G rows of gridStride(), data from kGridPad
    fftw::Plan m_rowForward, m_rowBackward;
    gridrec::GridPlans m_toGrid, m_fromGrid;
};

} // namespace

std::unique_ptr<ProjectorPair> makeFourierCpuProjector(const ReconGeometry& geometry, const FilterOptions& filter,
                                                       const IterativeOptions& options, int threads) {
    return std::make_unique<FourierPair>(geometry, filter, options, threads);
}

} // namespace tomo
