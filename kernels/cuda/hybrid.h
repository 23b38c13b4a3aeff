// Launcher of "hybrid" (hybrid.cu): seed 000 §7.1 / seed 004 §III-E. One
// launch whose blocks each take a ticket from a per-SM counter and run either
// the texture path or the ALU path over the same tile (alu_tile.cuh), so the
// texture unit and the ALUs / shared memory of every SM work at once.
// launch.textureShare of every 16 blocks on an SM take the texture path:
// 0 = all ALU, 16 = all texture.
#pragma once

#include "kernel_launch.h"

namespace tomo::cuda {

/// Zeroes launch.d_counters and enqueues the back-projection on `stream`.
void launchHybrid(const BackprojectLaunch& launch, StreamHandle stream);

} // namespace tomo::cuda
