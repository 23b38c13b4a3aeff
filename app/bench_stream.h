// tomo-bench --stream: live acquisition measured in one process, sender on
// a thread, receiver as the workstation's Live mode runs it (tomo/live.h):
//   ingest   frames sent as fast as the receiver takes them, no display
//            (with --record: every frame also written to a DXchange file);
//            GB/s and frames/s received, frames lost (must be 0);
//   live     frames sent at --rate while three preview sessions update
//            their rows from the newest snapshot (each adds the new
//            projections to the slice it keeps), again and again: display updates
//            per second, frames the display skipped, and the latency from
//            the last frame sent to the three finished slices.
#pragma once

#include <string>

namespace tomo::cli {

struct StreamBenchSettings {
    int size = 512;          ///< detector columns = slice width
    int rows = 0;            ///< detector rows (0 = size)
    int projections = 512;   ///< frames per scan, over 180 degrees
    std::string via = "inproc"; ///< inproc, ipc (ZeroMQ) or file (growing SWMR file)
    double rate = 0.0;       ///< live phase frames/s (0 = as fast as possible)
    std::string strategy = "auto";
    int threads = 0;
    int device = 0;
    bool record = false;     ///< ingest: also record every frame to a DXchange file
    std::string dir;         ///< for ipc sockets, the growing file and the recording (default: temp)
    std::string json;
};

/// Runs both phases, prints the table; returns the exit code.
int runStreamBenchmark(const StreamBenchSettings& settings);

} // namespace tomo::cli
