#include "follow.h"

#include "cli_support.h"
#include "tomo/live.h"

#include <cstdio>

namespace tomo {

using namespace cli;

void followUntilClosed(const std::filesystem::path& path, double stallSeconds, bool quiet) {
    GrowingFileOptions options;
    options.stallTimeout = std::chrono::milliseconds(static_cast<long long>(stallSeconds * 1000.0));
    // The source (and its SWMR handle) is gone before the run opens the file the ordinary way.
    const auto source = followGrowingFile(path, options);
    long long seen = -1;
    for (;;) {
        throwIfInterrupted();
        const LiveState state = source->wait(seen, std::chrono::milliseconds(500));
        if (state.version != seen && !quiet && state.version > 0) {
            const LiveCounters counters = source->counters();
            std::printf("follow: %d projections, %d flats, %d darks (%s frames/s)\n", state.projections, state.flats,
                        state.darks, formatNumber(counters.framesPerSecond, 3).c_str());
            std::fflush(stdout);
        }
        seen = state.version;
        if (state.finished) break;
    }
    if (!quiet) std::printf("follow: the writer closed %s; reconstructing\n", path.c_str());
}

} // namespace tomo
