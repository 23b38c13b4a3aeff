// Launcher of "tex-standard" (tex_standard.cu): seed 000 Algorithm 1 as
// published. One thread per pixel in 16x16 blocks, each looping over all
// projections; sine, cosine and axis of every projection read from
// __constant__ memory; the texture unit interpolates (linear or nearest, as
// the texture object says). The baseline every speed-up is measured against.
//
// Constant memory is one per device and process, so the launcher owns it:
// when the constants of another plan (or another version of this plan's) are
// loaded, it waits for the device to finish, then uploads. More than
// kTexStandardMaxProjections projections are processed in several launches
// that accumulate.
#pragma once

#include "kernel_launch.h"

#include <string>

namespace tomo::cuda {

inline constexpr int kTexStandardMaxProjections = 4096;       // 64 KiB of float4
inline constexpr int kTexStandardMaxProjectionsDouble = 2048; // 64 KiB of GeometryDouble (SnapDouble)

/// Enqueues the back-projection of `launch` on `stream` (device = current).
void launchTexStandard(const BackprojectLaunch& launch, StreamHandle stream);

/// Empty when the kernels can run on the current device, else why not.
std::string texStandardProbe();

} // namespace tomo::cuda
