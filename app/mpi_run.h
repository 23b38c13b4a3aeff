// tomo-recon --mpi: the ranks of an MPI job (or this process alone, without
// a launcher) reconstruct one volume together into one output
// (tomo/distributed.h): rank 0 runs tomo-recon's usual setup and then this;
// the other ranks only take part.
#pragma once

#include "parallel_options.h"

#include "tomo/cluster.h"
#include "tomo/dataset.h"
#include "tomo/distributed.h"
#include "tomo/pipeline.h"
#include "tomo/volume_io.h"

#include <filesystem>
#include <memory>
#include <string>

namespace tomo::cli {

/// Joins the MPI job for --mpi (Cluster::join); without an MPI launcher, a
/// cluster of this process alone, and a note saying so. Throws as
/// Cluster::join (a build without MPI: InvalidArgument naming TOMO_WITH_MPI).
std::unique_ptr<Cluster> joinForMpi(const std::string& program);

/// A rank other than 0: its share of rank 0's runs, until rank 0 says there
/// are no more (quiet: rank 0 reports).
void takePart(Cluster& cluster);

/// "GPU 0,1" for a rank whose lanes ran a CUDA strategy, else "CPU".
std::string devicesText(const RankReport& rank);

/// Throws InvalidArgument when --resume is given without --mpi.
void checkResume(const ParallelCommandLine& c);

/// Rank 0: `job` on every rank into `output` (HDF5 or a TIFF folder), made
/// or, with --resume, continued (SharedVolume); prints a line per rank
/// unless quiet. Returns the run's figures as one report (busy times the
/// busiest rank's; `clipped` summed over the ranks). `createSeconds`: the
/// output's creation. Throws as reconstructOnCluster.
VolumeReport reconstructWithRanks(Cluster& cluster, const ParallelCommandLine& c, DatasetReader& reader,
                                  const std::filesystem::path& input, const OpenOptions& open, const VolumeJob& job,
                                  const std::filesystem::path& output, const WriteOptions& write, ClippedValues& clipped,
                                  bool quiet, const std::string& program);

} // namespace tomo::cli
