// The ReconstructionPlan of the iterative methods: what the registry's
// createPlan() returns when options.iterative.method is not fbp, so the
// conveyor streams chunks, the preview and tomo-bench run them as FBP.
//
//   setSinograms(): upload the data to the pair (no filtering)
//   backproject():  the start (zeros, or the FBP of the data on the pair)
//                   -> the solver's iterations on the whole slice grid ->
//                   download, the region cut out (iterating on a region
//                   alone would lose the data of what lies outside it)
//   setAxis():      moves the pair's axis, keeps the data
//   setRegion():    only the cut-out changes
//
// The plan owns its pair, the data and the images of the last batch.
#pragma once

#include "tomo/backend.h"
#include "tomo/iterative.h"
#include "tomo/projector.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace tomo {

/// Throws InvalidArgument naming the option when `options` ask an
/// iterative method for something it cannot do: interpolation nearest or
/// float16 storage (the pair is Joseph's, linear, float32), or
/// options.iterative's own checks (IterativeOptions::validate).
void checkIterativeOptions(const ReconOptions& options);

class IterativePlan final : public ReconstructionPlan {
public:
    /// Throws InvalidArgument (options, geometry), and as the pair.
    IterativePlan(const ReconGeometry& geometry, const ReconOptions& options, std::unique_ptr<ProjectorPair> pair);
    ~IterativePlan() override;

    /// Keeps the (log-corrected, unfiltered) sinograms on the pair.
    void setSinograms(std::span<const float> sinograms, int count) override;
    /// Runs the method; throws Cancelled after cancel().
    void backproject(std::span<float> slices) override;
    void setAxis(double axis, std::span<const double> offsets) override;
    void setRegion(const Region& region) override;
    int maxSlices() const override { return m_pair->maxSlices(); }
    std::size_t memoryBytes() const override;
    /// upload, filter (the FBP start), backproject (the iterations), download.
    StageTimes lastStageTimes() const override { return m_times; }
    void cancel() override { m_cancelled = true; }

    /// Called after every iteration of backproject() (on its thread), e.g.
    /// to show the slice and the residual; returning false stops the
    /// iterations and keeps the images so far.
    void setIterationCallback(IterationCallback callback);
    /// How the last backproject() ended.
    IterativeSummary lastSummary() const;
    ProjectorPair& projector() { return *m_pair; }

private:
    std::unique_ptr<ProjectorPair> m_pair;
    std::unique_ptr<IterativeSolver> m_solver;
    std::unique_ptr<BatchVector> m_data;
    double m_lipschitz = 0.0; // TV: ||A||^2 of the geometry, 0 = not yet estimated
    std::vector<float> m_full; // the whole grid of each slice, when the region is less
    IterationCallback m_callback;
    mutable std::mutex m_summaryMutex;
    IterativeSummary m_summary;
    std::atomic<bool> m_cancelled{false};
    StageTimes m_times;
};

} // namespace tomo
