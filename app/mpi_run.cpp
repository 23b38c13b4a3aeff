#include "mpi_run.h"

#include "cli_support.h"

#include "tomo/distributed.h"
#include "tomo/error.h"
#include "tomo/registry.h"
#include "tomo/shared_volume.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace tomo::cli {

std::unique_ptr<Cluster> joinForMpi(const std::string& program) {
    std::unique_ptr<Cluster> cluster = Cluster::join();
    if (!cluster->mpi())
        std::printf("%s: --mpi: no MPI launcher (mpirun, srun) started this process: running as one rank\n",
                    program.c_str());
    return cluster;
}

void takePart(Cluster& cluster) {
    while (takePartInCluster(cluster, [](double, std::string_view) { throwIfInterrupted(); })) {
    }
}

void checkResume(const ParallelCommandLine& c) {
    if (c.resume && !c.mpi)
        throw InvalidArgument("--resume continues the partial output of an --mpi run; add --mpi (with or without "
                              "a launcher)");
}

std::string devicesText(const RankReport& r) {
    const Backend* b =
        r.report.lanes.empty() ? nullptr : BackendRegistry::instance().find(r.report.lanes.front().strategy);
    return b && b->family() == "cuda" ? "GPU " + joinIndices(r.devices) : "CPU";
}

namespace {

void add(ClippedValues& sum, const ClippedValues& c) {
    sum.below += c.below;
    sum.above += c.above;
    sum.nan += c.nan;
}

} // namespace

VolumeReport reconstructWithRanks(Cluster& cluster, const ParallelCommandLine& c, DatasetReader& reader,
                                  const std::filesystem::path& input, const OpenOptions& open, const VolumeJob& job,
                                  const std::filesystem::path& output, const WriteOptions& write, ClippedValues& clipped,
                                  bool quiet, const std::string& program) {
    const auto created = std::chrono::steady_clock::now();
    const Region& region = job.geometry.region;
    SharedVolume shared = SharedVolume::create(output, region.width, region.height, job.rowCount, write, c.resume);
    const double createSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - created).count();
    if (!quiet) {
        if (shared.resumed())
            std::printf("%s: resuming %s: %d of %d slices were written before\n", program.c_str(),
                        shared.temporary().c_str(), shared.slicesWritten(), shared.slices());
        else if (c.resume)
            std::printf("%s: --resume: no partial output of %s to resume; starting it\n", program.c_str(),
                        output.c_str());
        std::printf("%s: %d rank%s on %s\n", program.c_str(), cluster.size(), cluster.size() > 1 ? "s" : "",
                    cluster.oneHost() ? "one host" : "several hosts");
    }
    DistributedOrder order;
    order.input = std::filesystem::absolute(input); // the other ranks may start elsewhere
    order.open = open;
    order.job = job;
    order.job.devices.clear();
    order.gpus = c.gpus;
    order.write = write;
    order.layout = shared.layout();

    DistributedReport distributed;
    {
        ProgressBar bar(shared.slices(), "rows", !quiet);
        try {
            distributed = reconstructOnCluster(cluster, reader, order, shared, [&](double fraction, std::string_view) {
                throwIfInterrupted();
                bar.update(static_cast<int>(std::lround(fraction * shared.slices())));
            });
        } catch (const Cancelled&) {
            bar.clear();
            if (shared.slicesWritten() > 0)
                std::fprintf(stderr, "%s: the %d of %d slices written are kept in %s: run again with --resume to finish\n",
                             program.c_str(), shared.slicesWritten(), shared.slices(), shared.temporary().c_str());
            throw;
        }
    }

    // One report for tomo-recon's summary: the busiest rank's busy times.
    clipped = {};
    for (const RankReport& r : distributed.ranks) {
        add(clipped, r.clipped);
        const VolumeReport& v = r.report;
        if (!quiet)
            std::printf("%s: rank %d on %s (%s, %d core%s): %d slices, total %s, busy read %s, preprocess %s, "
                        "reconstruct %s, write %s; bottleneck %s; chunk buffers peak %.0f MiB\n",
                        program.c_str(), r.rank, r.host.c_str(), devicesText(r).c_str(), r.cores,
                        r.cores == 1 ? "" : "s", v.slices,
                        formatSeconds(v.secondsTotal).c_str(), formatSeconds(v.secondsRead).c_str(),
                        formatSeconds(v.secondsPreprocess).c_str(), formatSeconds(v.secondsReconstruct).c_str(),
                        formatSeconds(v.secondsWrite).c_str(), v.bottleneck().c_str(),
                        static_cast<double>(v.peakBufferBytes) / (1 << 20));
    }
    VolumeReport report = combinedReport(distributed, job.geometry);
    report.secondsSetup += createSeconds;
    report.secondsTotal += createSeconds;
    return report;
}

} // namespace tomo::cli
