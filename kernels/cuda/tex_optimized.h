// Launcher of "tex-optimized" (tex_optimized.cu): seed 004 Algorithm 1 /
// seed 000 §5.5-5.7 tuned for the H100. Blocks of 256 threads own a 16x16
// tile; 16 threads cover a 4x4 square along a Z-order curve (neighbouring
// lanes fetch neighbouring texels), 4 squares side by side, and 4 groups of
// 64 threads take every 4th projection (4 projections in parallel), each
// thread summing 4 pixels 4 rows apart. Partial sums are reduced through
// shared memory and a 4-lane shuffle and staged in shared memory for
// coalesced writes. The per-projection float4 constants are staged in shared
// memory in chunks of 256 projections: __constant__ memory serialises when
// the warps of one SM sit at different projections (on the H100 ~80% of the
// stalls of the constant-memory version were constant-cache misses).
#pragma once

#include "kernel_launch.h"

#include <string>

namespace tomo::cuda {

/// Enqueues the back-projection of `launch` on `stream` (device = current).
void launchTexOptimized(const BackprojectLaunch& launch, StreamHandle stream);

/// Empty when the kernels can run on the current device, else why not.
std::string texOptimizedProbe();

} // namespace tomo::cuda
