// tomo-recon's options for several GPUs (--gpus) and for MPI runs (--mpi,
// --resume): their parsing and checks, shared with tomo-bench.
#pragma once

#include "tomo/backend.h"
#include "tomo/geometry.h"
#include "tomo/pipeline.h"
#include "tomo/registry.h"

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

namespace tomo::cli {

struct ParallelCommandLine {
    std::string gpus;    ///< --gpus: "all" or "0,1,..."; empty = not given
    bool mpi = false;    ///< --mpi
    bool resume = false; ///< --resume
};

/// Adds --gpus, --mpi and --resume.
void addParallelOptions(CLI::App& app, ParallelCommandLine& c);

/// The GPUs of a run and the options each lane gets.
struct GpuChoice {
    std::vector<int> devices; ///< empty without --gpus (then options.device alone)
    /// `requested` resolved (BackendRegistry::resolveOptions) on the first
    /// device; when `auto` chooses differently on some device (GPUs of
    /// different models), "auto" stays so that each lane's plan resolves its
    /// own, and perDevice says what each chose ("hybrid, slices per pass 2
    /// on GPU 0; ..."); otherwise perDevice is empty.
    ReconOptions options;
    std::string perDevice;
};

/// --gpus (c.gpus: the option's, or a run config's) applied to `requested` for `geometry`. Throws InvalidArgument for
/// --gpus with --device or with a strategy that does not run on CUDA GPUs
/// (the CPU and OpenCL ones), as parseGpus, and as resolveOptions.
GpuChoice chooseGpus(const CLI::App& app, const ParallelCommandLine& c, const ReconOptions& requested,
                     const ReconGeometry& geometry);

/// "0,1,3".
std::string joinIndices(const std::vector<int>& indices);

/// With several lanes, one line of each lane's share: "device 0 (hybrid):
/// 1100 slices in 23 chunks, reconstruct busy 4.1 s at 3050 GU/s,
/// preprocess 0.12 s; device 1 ..."; empty for one lane.
std::string laneSummary(const VolumeReport& report);

} // namespace tomo::cli
