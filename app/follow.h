// tomo-recon --follow: waits for a growing HDF5 file's writer to close it,
// printing what has arrived, so the run then reads the finished file
// (tomo/live.h). The reconstruction itself is the ordinary one: the same
// output as a run started after the scan.
#pragma once

#include <filesystem>

namespace tomo {

/// Follows `path` until its writer closes it. Throws DataError naming the
/// file when no frame arrives for `stallSeconds` and it is never closed,
/// Cancelled on Ctrl-C (interrupted()).
void followUntilClosed(const std::filesystem::path& path, double stallSeconds, bool quiet);

} // namespace tomo
