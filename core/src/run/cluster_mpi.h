// Internal: the MPI cluster (cluster_mpi.cpp, built with TOMO_WITH_MPI).
#pragma once

#include "tomo/cluster.h"

#include <memory>

namespace tomo::detail {

/// Joins the MPI job this process was launched in. Throws DeviceError when
/// the MPI library cannot give MPI_THREAD_SERIALIZED, InvalidArgument in a
/// build without MPI.
std::unique_ptr<Cluster> joinMpiCluster();

} // namespace tomo::detail
