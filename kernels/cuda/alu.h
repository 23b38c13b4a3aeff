// Launcher of "alu" (alu.cu): seed 000 §6, interpolation on the ALUs from
// bins cached in shared memory per tile (alu_tile.cuh), linear and nearest,
// 1/2/4 slices, float or float16 texels. Exact arithmetic: linear in float32
// from the texels (no 8-bit texture weights), nearest from double positions.
#pragma once

#include "kernel_launch.h"

#include <string>

namespace tomo::cuda {

/// Enqueues the back-projection of `launch` (shape launch.aluShape) on `stream`.
void launchAlu(const BackprojectLaunch& launch, StreamHandle stream);

/// Empty when the kernels can run on the current device, else why not.
std::string aluProbe();

} // namespace tomo::cuda
