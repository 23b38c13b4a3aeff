// The GPUs a run uses: tomo-recon's and tomo-bench's --gpus.
#pragma once

#include "tomo/registry.h"

#include <string>
#include <vector>

namespace tomo {

/// The GPUs of `--gpus TEXT` among `present`: "all" = every one, else a
/// comma-separated list of indices, in the order given. Throws
/// InvalidArgument naming `option` for an empty list, a word that is not an
/// index, or one listed twice, and DeviceError for an index this machine
/// does not have (or "all" on a machine without GPUs), saying which it has.
std::vector<int> parseGpus(const std::string& text, const std::vector<GpuDevice>& present,
                           const std::string& option = "--gpus");

} // namespace tomo
