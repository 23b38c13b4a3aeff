#include "parallel_options.h"

#include "cli_support.h"

#include "tomo/gpu_list.h"
#include "tomo/error.h"

#include <algorithm>

namespace tomo::cli {

std::string joinIndices(const std::vector<int>& indices) {
    std::string text;
    for (int i : indices) text += (text.empty() ? "" : ",") + std::to_string(i);
    return text;
}

std::string laneSummary(const VolumeReport& report) {
    if (report.lanes.size() < 2) return {};
    std::string text;
    for (const LaneReport& l : report.lanes)
        text += (text.empty() ? "" : "; ") + std::string("device ") + std::to_string(l.device) + " (" + l.strategy +
                "): " + std::to_string(l.slices) + " slices in " + std::to_string(l.chunks) + " chunks, reconstruct busy " +
                formatSeconds(l.secondsReconstruct) + " at " + formatNumber(l.gups, 3) + " GU/s, preprocess " +
                formatSeconds(l.secondsPreprocess) + " on " + l.correctedOn;
    return text;
}

void addParallelOptions(CLI::App& app, ParallelCommandLine& c) {
    app.add_option("--gpus", c.gpus,
                   "Reconstruct on several GPUs at once (CUDA strategies): all, or a comma-separated list of GPU "
                   "indices (0,1,...). Each GPU takes chunks of rows as it has room (a faster one takes more) with "
                   "its own plan and corrections; the slices go into the one output. Default: --device alone "
                   "(with --mpi: each rank the GPU of its rank on the host)")
        ->type_name("all|N,N,...");
    app.add_flag("--mpi", c.mpi,
                 "Run as the ranks of an MPI job (mpirun -n N tomo-recon ... --mpi; srun): rank 0 hands out slabs of "
                 "rows by demand, every rank reconstructs its slabs on its host's GPUs (--gpus, per rank) and writes "
                 "them into the one output (HDF5 or a TIFF folder), which keeps the slices done for --resume until "
                 "it is complete. Rank 0's options are every rank's. Without a launcher: one rank");
    app.add_flag("--resume", c.resume,
                 "With --mpi: finish the partial output an earlier --mpi run left (.NAME.tomo-partial beside the "
                 "output and its record of the slices written), redoing only the slices missing; the same options "
                 "are required. Without one there, the run starts it");
}

namespace {

/// Throws InvalidArgument naming the strategy unless it runs on CUDA GPUs.
void requireCuda(const std::string& strategy) {
    const Backend* backend = BackendRegistry::instance().find(strategy);
    if (backend && backend->family() != "cuda")
        throw InvalidArgument("--gpus applies to the CUDA strategies; strategy '" + strategy + "' runs on " +
                              (backend->family() == "cpu" ? "the CPU threads (--threads)" : "--opencl-device"));
}

} // namespace

GpuChoice chooseGpus(const CLI::App& app, const ParallelCommandLine& c, const ReconOptions& requested,
                     const ReconGeometry& geometry) {
    const BackendRegistry& registry = BackendRegistry::instance();
    if (c.gpus.empty()) return {{}, registry.resolveOptions(requested, geometry), {}};
    if (app.count("--device")) throw InvalidArgument("--gpus and --device both choose GPUs; give one of them");
    if (requested.strategy != "auto") requireCuda(requested.strategy);
    GpuChoice choice;
    choice.devices = parseGpus(c.gpus, gpuDevices());
    std::vector<ReconOptions> resolved;
    for (int device : choice.devices) {
        ReconOptions o = requested;
        o.device = device;
        resolved.push_back(registry.resolveOptions(o, geometry));
    }
    requireCuda(resolved.front().strategy);
    choice.options = resolved.front();
    const auto differs = [&](const ReconOptions& o) {
        return o.strategy != choice.options.strategy || o.tuning != choice.options.tuning ||
               o.slicesPerPass != choice.options.slicesPerPass;
    };
    if (std::none_of(resolved.begin(), resolved.end(), differs)) return choice;
    for (const ReconOptions& o : resolved)
        choice.perDevice += (choice.perDevice.empty() ? "" : "; ") + o.strategy +
                            (o.tuning.empty() ? "" : " [" + o.tuning + "]") + ", slices per pass " +
                            std::to_string(o.slicesPerPass) + " on GPU " + std::to_string(o.device);
    choice.options = requested; // each lane's plan resolves "auto" on its own device
    choice.options.device = choice.devices.front();
    return choice;
}

} // namespace tomo::cli
