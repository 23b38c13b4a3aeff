// A fan- or cone-beam scan reconstructed whole, the volume at once: FDK
// (fdk.h), or an iterative method (options.iterative) on the divergent-beam
// projector pair (projector.h). tomo-recon and the Python module share it:
//
//   DivergentReconstruction run(info, setup, grid, options); // checks first
//   run.method(), run.runsOn()                               // what will run
//   ImageStack volume = run.reconstruct(reader, onIteration);
//   run.report()                                             // times, iterations
#pragma once

#include "tomo/backend.h"
#include "tomo/cone_scan.h"
#include "tomo/dataset.h"
#include "tomo/fdk.h"
#include "tomo/image.h"
#include "tomo/iterative.h"
#include "tomo/projector.h"

#include <memory>
#include <optional>
#include <string>

namespace tomo {

/// What a reconstruction took.
struct DivergentReport {
    double secondsRead = 0.0;        ///< the projections read and corrected
    double secondsFilter = 0.0;      ///< FDK: weighting and ramp filter
    /// FDK: the back-projection (with a GPU's transfers); an iterative
    /// method: its start and its iterations.
    double secondsReconstruct = 0.0;
    ScanCoverage coverage;           ///< FDK: how the views cover the circle
    std::optional<IterativeSummary> iterative;
};

class DivergentReconstruction {
public:
    /// Where options say (FDK: coneBackprojectorFor(options.strategy); an
    /// iterative method: the CPU pair for "cpu"/"cpu-reference", the GPU's
    /// for "cuda", and for "auto" the GPU's where there is one). Throws
    /// InvalidArgument (setup.checkGrid; an iterative method on another
    /// strategy, or of more than one slice from fan-beam data), OutOfMemory
    /// (more than this machine's memory, naming info.path and the grid), and
    /// as makeConeProjector.
    DivergentReconstruction(const DatasetInfo& info, ConeSetup setup, const VolumeGrid& grid,
                            const ReconOptions& options);
    ~DivergentReconstruction();

    bool iterative() const { return m_pair != nullptr; }
    /// "FDK", or the iterative method's name.
    std::string method() const;
    /// FDK: its back-projector ("cpu", "fast", "cuda"); an iterative method:
    /// its projector pair's name.
    std::string runsOn() const;
    const ConeSetup& setup() const { return m_setup; }
    const VolumeGrid& grid() const { return m_grid; }
    const ReconOptions& options() const { return m_options; }
    const FdkOptions& fdk() const { return m_fdk; }

    /// Reads every projection of `reader` (the dataset of the constructor)
    /// and reconstructs the grid: [z][y][x]. onIteration as
    /// IterativeSolver::run (ignored by FDK). Throws as readConeProjections,
    /// reconstructFdk and the solver; Cancelled from onIteration.
    ImageStack reconstruct(DatasetReader& reader, const IterationCallback& onIteration = {});

    /// The last reconstruct()'s figures.
    const DivergentReport& report() const { return m_report; }

private:
    ConeSetup m_setup;
    VolumeGrid m_grid;
    ReconOptions m_options;
    FdkOptions m_fdk;
    std::unique_ptr<ProjectorPair> m_pair; ///< an iterative method's
    DivergentReport m_report;
};

} // namespace tomo
