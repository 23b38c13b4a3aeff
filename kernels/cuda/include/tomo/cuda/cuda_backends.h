// The CUDA strategies of this build: "tex-standard" and "tex-optimized".
//
//   registerBackends()  adds both to a registry (also without a GPU: they then
//                       report why in unavailableReason()).
//   listDevices()       the CUDA GPUs this process can use.
//   measureTextureFetchRate()  the texture unit's ceiling (float32 bilinear).
//
// Plain C++: no CUDA type appears here, so core and the apps include it freely.
#pragma once

#include "tomo/registry.h"

#include <vector>

namespace tomo::cuda {

/// Adds "tex-standard" then "tex-optimized" (the registry's `auto` prefers the
/// last available exact backend, so tex-optimized wins when a GPU is present).
/// Never throws for a missing GPU or driver.
void registerBackends(BackendRegistry& registry);

/// The CUDA devices present; empty (no throw) without a driver or a device.
std::vector<GpuDevice> listDevices();

/// float32 bilinear texture fetches per second that `device` sustains when the
/// lanes of a warp fetch neighbouring texels (about 0.2 s of micro-benchmark).
/// Throws InvalidArgument for a device index that does not exist, DeviceError
/// when there is no usable CUDA device.
double measureTextureFetchRate(int device);

} // namespace tomo::cuda
