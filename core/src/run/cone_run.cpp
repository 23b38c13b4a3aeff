#include "tomo/cone_run.h"

#include "tomo/error.h"
#include "tomo/registry.h"
#include "tomo/worker_pool.h"

#include <chrono>
#include <sstream>
#include <utility>

namespace tomo {

namespace {

using Clock = std::chrono::steady_clock;

double secondsBetween(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

std::string gib(double bytes) {
    std::ostringstream s;
    s.precision(3);
    s << bytes / (1024.0 * 1024.0 * 1024.0);
    return s.str();
}

std::string voxels(const VolumeGrid& g) {
    return std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz) + " voxels";
}

} // namespace

DivergentReconstruction::DivergentReconstruction(const DatasetInfo& info, ConeSetup setup, const VolumeGrid& grid,
                                                 const ReconOptions& options)
    : m_setup(std::move(setup)), m_grid(grid), m_options(options) {
    m_setup.checkGrid(m_grid);
    const bool iterative = options.iterative.isIterative();
    const std::string method(methodName(options.iterative.method));
    if (iterative && options.strategy != "auto" && options.strategy != "cpu" && options.strategy != "cpu-reference" &&
        options.strategy != "cuda")
        throw InvalidArgument(method + " on fan- or cone-beam data runs on the divergent-beam projector pair of the "
                              "CPU (strategy cpu or cpu-reference) or the GPU (cuda; auto: the GPU when there is "
                              "one), not on '" + options.strategy + "'");
    if (iterative && m_setup.geometry.rows == 1 && m_grid.nz != 1)
        throw InvalidArgument(method + ": fan-beam data (one detector row) make one slice; the volume has " +
                              std::to_string(m_grid.nz) + " slices (volume NX,NY,1)");
    m_fdk.backprojector = coneBackprojectorFor(options.strategy); // iterative: where the pair runs
    m_fdk.filter = options.filter;
    m_fdk.threads = options.threads;
    m_fdk.device = options.device;

    // FDK holds the volume and about four copies of the projections at once
    // (as read, in view order, filtered, padded for the back-projector).
    const double projectionBytes = 4.0 * info.projections * static_cast<double>(info.rows) * info.columns;
    const double needed = 4.0 * static_cast<double>(m_grid.voxels()) + 4.0 * projectionBytes;
    const auto memory = static_cast<double>(physicalMemoryBytes());
    if (memory > 0 && needed > memory)
        throw OutOfMemory("FDK of " + info.path.string() + " into " + voxels(m_grid) + " needs " + gib(needed) +
                          " GiB (the volume and four copies of the projections) but this machine has " + gib(memory) +
                          " GiB");
    if (!iterative) return;
    const bool onGpu = m_fdk.backprojector == ConeBackprojector::Cuda;
    if (!onGpu) {
        // The pair's vectors in double (the method's, and the pair's scratch:
        // projector_host.h), besides the projections as read.
        const Workspace w = workspaceOf(options.iterative.method, m_grid.nz > 1 ? 3 : 2);
        const double pairBytes = 8.0 * ((w.images + 2) * static_cast<double>(m_grid.voxels()) +
                                        (w.sinograms + 1) * projectionBytes / 4.0) +
                                 projectionBytes;
        if (memory > 0 && pairBytes > memory)
            throw OutOfMemory(method + " of " + info.path.string() + " into " + voxels(m_grid) + " needs " +
                              gib(pairBytes) + " GiB but this machine has " + gib(memory) + " GiB");
    }
    m_pair = makeConeProjector(m_setup.geometry, m_grid, options.iterative, options.threads,
                               onGpu ? std::optional<int>(options.device) : std::nullopt);
}

DivergentReconstruction::~DivergentReconstruction() = default;

std::string DivergentReconstruction::method() const {
    return m_pair ? std::string(methodName(m_options.iterative.method)) : "FDK";
}

std::string DivergentReconstruction::runsOn() const {
    return m_pair ? m_pair->name() : std::string(coneBackprojectorName(m_fdk.backprojector));
}

ImageStack DivergentReconstruction::reconstruct(DatasetReader& reader, const IterationCallback& onIteration) {
    m_report = DivergentReport{};
    const auto t0 = Clock::now();
    const std::vector<float> projections = readConeProjections(reader, m_setup);
    const auto t1 = Clock::now();
    m_report.secondsRead = secondsBetween(t0, t1);
    if (!m_pair) {
        ConeStageTimes stages;
        FdkOptions fdk = m_fdk;
        fdk.times = &stages;
        ImageStack volume = reconstructFdk(m_setup.geometry, projections, m_grid, fdk); // "cuda": all on the GPU
        m_report.secondsFilter = stages.filter;
        m_report.secondsReconstruct = secondsBetween(t1, Clock::now()) - stages.filter;
        m_report.coverage = fdkWeights(m_setup.geometry).coverage;
        return volume;
    }
    ImageStack volume(m_grid.nx, m_grid.ny, m_grid.nz);
    m_report.iterative = solveOnce(*m_pair, m_options.iterative, projections, volume.data, onIteration);
    m_report.secondsReconstruct = secondsBetween(t1, Clock::now());
    return volume;
}

} // namespace tomo
