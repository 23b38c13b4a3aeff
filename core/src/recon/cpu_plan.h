// What the CPU strategies share: option checks, and a plan
// base that validates, filters and keeps the sinograms, so a strategy only
// writes its back-projection loop.
//
//   CpuPlan::setSinograms: copy -> SinogramFilter (ramp x window, one per
//                          thread) -> row p times viewWeights()[p] -> prepare()
//   CpuPlan::backproject:  checks -> backprojectSlices() (the strategy's loop:
//                          a plain sum over projections, positions per geometry.h)
#pragma once

#include "tomo/backend.h"
#include "tomo/error.h"
#include "tomo/projector.h"
#include "tomo/worker_pool.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tomo::cpu {

/// options.threads resolved: 0 -> all hardware threads.
int resolveThreads(int threads);

/// Checks what every CPU strategy requires (float32 storage, threads >= 0,
/// slicesPerPass one of `slicesPerPass`); throws InvalidArgument naming the
/// option, the strategy and the supported values.
void checkCpuOptions(std::string_view strategy, const ReconOptions& options, std::span<const int> slicesPerPass);

class CpuPlan : public ReconstructionPlan {
public:
    void setSinograms(std::span<const float> sinograms, int count) final;
    void backproject(std::span<float> slices) final;
    void setAxis(double axis, std::span<const double> offsets) final;
    void setRegion(const Region& region) final;
    int maxSlices() const final { return m_maxSlices; }
    std::size_t memoryBytes() const final;
    StageTimes lastStageTimes() const final { return m_times; }

protected:
    /// Validates the geometry; creates the pool and one filter per thread.
    /// `copies`: sinogram-sized float buffers the strategy keeps per slice
    /// (the filtered stack included), for maxSlices()'s memory bound.
    CpuPlan(const ReconGeometry& geometry, const ReconOptions& options, int copies);

    /// Called after the sinograms were filtered (e.g. to change their layout).
    virtual void prepare() {}
    /// Back-projects the filtered sinograms into `slices` ([slice][row][column]
    /// of the region; sliceCount() * region.pixels() values, sizes checked).
    virtual void backprojectSlices(std::span<float> slices) = 0;
    /// Bytes held by the strategy beyond the filtered stack.
    virtual std::size_t extraBytes() const { return 0; }

    /// Filtered, weighted sinograms [slice][angle][bin].
    const std::vector<float>& filtered() const { return m_filtered; }
    int sliceCount() const { return m_count; }
    WorkerPool& pool() { return m_pool; }

private:
    /// At most this many slices per call, and at most this much memory.
    static constexpr int kMaxSlices = 64;
    static constexpr std::size_t kMemoryBudget = std::size_t{1} << 30;

    int m_maxSlices = 1;
    std::vector<double> m_weights;
    WorkerPool m_pool;
    std::vector<std::unique_ptr<SinogramFilter>> m_filters; // one per pool thread
    std::vector<float> m_filtered;
    int m_count = 0;
    StageTimes m_times;
};

/// The Backend of a CPU strategy: only its name, description, supported
/// slices per pass and plan type (a CpuPlan) differ between strategies.
/// Makes the strategy's projector pair for the iterative methods
/// (makeReferenceProjector, makeCpuProjector of projector.h), and when it
/// has one the Fourier pair (makeFourierCpuProjector).
using ProjectorFactory = std::unique_ptr<ProjectorPair> (*)(const ReconGeometry&, const FilterOptions&,
                                                             const IterativeOptions&, int threads);

template <class Plan>
class CpuBackend final : public Backend {
public:
    CpuBackend(std::string name, std::string description, std::span<const int> slicesPerPass,
               ProjectorFactory projector, ProjectorFactory fourierProjector = nullptr)
        : m_name(std::move(name)), m_description(std::move(description)),
          m_slicesPerPass(slicesPerPass.begin(), slicesPerPass.end()), m_projector(projector),
          m_fourierProjector(fourierProjector) {}

    std::string name() const override { return m_name; }
    std::string description() const override { return m_description; }
    std::string family() const override { return "cpu"; }
    std::string unavailableReason() const override { return {}; }
    void checkOptions(const ReconOptions& options) const override {
        checkCpuOptions(m_name, options, m_slicesPerPass);
    }
    std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry,
                                                   const ReconOptions& options) const override {
        checkOptions(options);
        return std::make_unique<Plan>(geometry, options);
    }
    std::unique_ptr<ProjectorPair> createProjector(const ReconGeometry& geometry,
                                                   const ReconOptions& options) const override {
        checkOptions(options);
        if (options.iterative.projector == ProjectorKind::Fourier) {
            if (!m_fourierProjector)
                throw InvalidArgument("strategy '" + m_name + "' has Joseph's projector pair only; the fourier "
                                      "projector runs on 'cpu' and the CUDA strategies");
            return m_fourierProjector(geometry, options.filter, options.iterative, options.threads);
        }
        return m_projector(geometry, options.filter, options.iterative, options.threads);
    }
    bool hasProjector() const override { return true; }
    bool hasFourierProjector() const override { return m_fourierProjector != nullptr; }

private:
    std::string m_name;
    std::string m_description;
    std::vector<int> m_slicesPerPass;
    ProjectorFactory m_projector;
    ProjectorFactory m_fourierProjector;
};

} // namespace tomo::cpu
