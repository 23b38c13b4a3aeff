// Launcher of "oversample" (oversample.cu): seed 000 §7.2. The texture unit
// samples every bin a tile needs at 4 offsets (0, 1/4, 1/2, 3/4) with linear
// filtering into shared memory; each pixel adds the sample nearest to it
// (alu_tile.cuh). An approximation of linear interpolation: positions are
// rounded to 1/4 bin (error between nearest's and linear's).
#pragma once

#include "kernel_launch.h"

namespace tomo::cuda {

/// Enqueues the back-projection of `launch` (linear texture) on `stream`.
void launchOversample(const BackprojectLaunch& launch, StreamHandle stream);

} // namespace tomo::cuda
