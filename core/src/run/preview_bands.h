// Back-projection of a live slice in bands of rows, so a slow cancellable run
// stops within about one band's time (PreviewSession, parallel and cone beam).
#pragma once

#include "tomo/geometry.h"
#include "tomo/preview.h"

#include <algorithm>
#include <chrono>

namespace tomo::preview {

/// Aim of one back-projection band when a run can be cancelled: what a newer
/// request waits at most (a reference pre-empted by a live slice). A GPU
/// band costs a launch, so its bands can be short; a CPU band keeps its
/// threads busy a while.
constexpr double kGpuBandSeconds = 0.005;
constexpr double kCpuBandSeconds = 0.025;

/// Back-projects `region` with backprojectBand(band, firstRowOfBand) and
/// returns the number of bands. One call when the run cannot be cancelled
/// or is estimated faster than `bandSeconds` at `speed` (updates per second,
/// each band's own speed is learnt into it); else bands of whole multiples of
/// `rowMultiple` rows with a cancellation check before each.
/// `rowUpdates` = updates per slice row (region width x projections).
template <class BackprojectBand>
int backprojectInBands(const Region& region, double rowUpdates, int rowMultiple, double bandSeconds, double& speed,
                       const CancelToken* cancel, BackprojectBand&& backprojectBand) {
    using Clock = std::chrono::steady_clock;
    if (!cancel || region.height <= rowMultiple || rowUpdates * region.height / speed <= bandSeconds) {
        backprojectBand(region, 0);
        return 1;
    }
    // Each band's height comes from the latest speed, learnt from every
    // band: a run that is always cancelled (a reference pre-empted by live
    // slices) still learns how fast it is.
    int bands = 0;
    for (int y = 0; y < region.height; ++bands) {
        cancel->throwIfCancelled();
        const int fit = static_cast<int>(bandSeconds * speed / rowUpdates) / rowMultiple * rowMultiple;
        const int rows = std::min(std::max(rowMultiple, fit), region.height - y);
        const auto start = Clock::now();
        backprojectBand(Region{region.x, region.y + y, region.width, rows}, y);
        if (const double seconds = std::chrono::duration<double>(Clock::now() - start).count(); seconds > 0.0)
            speed = rowUpdates * rows / seconds;
        y += rows;
    }
    return bands;
}

} // namespace tomo::preview
