// A reconstruction by every rank of a Cluster into one SharedVolume (see
// cluster.h and shared_volume.h): rank 0 prepares the job and the output,
// reconstructOnCluster() hands both to the other ranks (takePartInCluster)
// and serves the slices; each rank reads its rows from the shared input,
// reconstructs them with its conveyor on its GPUs, and writes them into the
// output. The result equals one process's run: the same job (rank 0's
// options win: the others take its order, never their own options) and
// the same writer's encoding.
#pragma once

#include "tomo/cluster.h"
#include "tomo/dataset.h"
#include "tomo/gpu_list.h"
#include "tomo/pipeline.h"
#include "tomo/registry.h"
#include "tomo/shared_volume.h"

#include <filesystem>
#include <string>
#include <vector>

namespace tomo {

/// A rank's devices among the host's GPUs `present`: parseGpus(gpus)
/// (gpu_list.h) when given; otherwise, for a CUDA strategy or `auto` on a
/// host with GPUs, the GPU at the rank's local rank (modulo the GPUs there);
/// none (the job's own device) for the other strategies.
std::vector<int> rankDevices(const std::string& gpus, const std::string& strategy, int localRank,
                             const std::vector<GpuDevice>& present);
/// The same among this host's GPUs (gpuDevices()).
std::vector<int> rankDevices(const std::string& gpus, const std::string& strategy, int localRank);

/// What every rank needs, from rank 0.
struct DistributedOrder {
    std::filesystem::path input;
    OpenOptions open;
    VolumeJob job;       ///< devices and rows left out: each rank sets its own
    std::string gpus;    ///< rank 0's --gpus ("" = by local rank)
    WriteOptions write;  ///< the output's type and range, the writer threads
    std::string layout;  ///< SharedVolume::layout()
};

/// JSON of the order, and back (FormatError for a text that is not one).
std::string orderToJson(const DistributedOrder& order);
DistributedOrder orderFromJson(const std::string& text);

/// One rank's share of a distributed run.
struct RankReport {
    int rank = 0;
    std::string host;
    std::vector<int> devices; ///< its lanes' devices
    int cores = 0;            ///< the cores it ran on (coresOfThisProcess)
    VolumeReport report;      ///< its conveyor's (slices, busy times, lanes)
    ClippedValues clipped;    ///< what its writer clipped
};

struct DistributedReport {
    std::vector<RankReport> ranks; ///< in rank order
    int slicesBefore = 0;          ///< recorded by earlier runs (--resume)
    int slices = 0;                ///< of the whole volume
    double secondsTotal = 0.0;     ///< rank 0's wall time, the commit included
};

/// The run as one report: the slices of every rank, each stage's busy time
/// the busiest rank's (the ranks work side by side), the plan split of the
/// rank busiest reconstructing, rank 0's strategy, setup and warnings, the
/// wall time of the whole run; GU/s over the busiest reconstruct stage.
/// Lanes are left out (ranks[].report.lanes has them).
VolumeReport combinedReport(const DistributedReport& report, const ReconGeometry& geometry);

/// Rank 0: runs `order` on every rank of `cluster` into `output` (made by
/// SharedVolume::create for the order's volume; its missing slices only),
/// its own share read from `reader`; commits the output when every slice
/// is written. `progress` (rank 0's thread) sees the share of the volume
/// written by all ranks; a Cancelled thrown from it stops the dealing.
/// Throws the first failure of any rank, as that rank met it, prefixed
/// "rank R on HOST: " for the other ranks, with " (the N slices written are
/// kept in TEMP: run again with --resume)" appended when some are; nothing
/// is committed then.
DistributedReport reconstructOnCluster(Cluster& cluster, DatasetReader& reader, const DistributedOrder& order,
                                       SharedVolume& output, const ProgressCallback& progress = {});

/// Every other rank: waits for rank 0's order and does its share. Errors
/// go to rank 0, which reports them; returns when rank 0 says the run is
/// over: true, or false when rank 0 sent no order (it stopped before the
/// run, or has no more runs: a program running several calls
/// reconstructOnCluster once per run, then Cluster::start with nothing).
/// `progress` is called on this rank's thread (a Cancelled thrown from it
/// stops this rank's share).
bool takePartInCluster(Cluster& cluster, const ProgressCallback& progress = {});

} // namespace tomo
