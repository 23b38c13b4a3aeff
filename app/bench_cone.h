// tomo-bench --cone: FDK cone-beam back-projection speed (GUPS: voxels x
// views / s, as seeds 001/002 count) on a Shepp-Logan cone-beam scan held
// in memory.
#pragma once

#include <string>

namespace tomo::cli {

struct ConeBenchSettings {
    int size = 256;       ///< volume size^3 voxels
    int views = 496;      ///< over 360 degrees
    std::string strategies = "cpu"; ///< comma-separated: cpu, cpu-reference, cuda
    int repeat = 3;
    int warmup = 1;
    int threads = 0;
    std::string json;     ///< also write the results here
    int columns = 0, rows = 0; ///< detector; 0 = size + size / 4 by size
    int device = 0;       ///< GPU of "cuda"
};

/// Runs the benchmark, prints its table; returns the exit code.
int runConeBenchmark(const ConeBenchSettings& settings);

} // namespace tomo::cli
