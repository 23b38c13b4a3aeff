// The CUDA strategies of this build: "tex-standard", "tex-optimized", "alu",
// "hybrid", "oversample", "gridrec", and the cone-beam back-projector.
//
//   registerBackends()  adds them to a registry (also without a GPU: they then
//                       report why in unavailableReason()).
//   listDevices()       the CUDA GPUs this process can use.
//   measureTextureFetchRate()  the texture unit's ceiling (float32 bilinear).
//
// Plain C++: no CUDA type appears here, so core and the apps include it freely.
#pragma once

#include "tomo/fdk.h"
#include "tomo/projector.h"
#include "tomo/registry.h"

#include <memory>
#include <span>
#include <vector>

namespace tomo::cuda {

/// Adds the strategies, tex-optimized last (the registry's `auto` prefers the
/// last available exact backend when it does not time them).
/// Never throws for a missing GPU or driver.
void registerBackends(BackendRegistry& registry);

/// backprojectCone() of fdk.h on `device` (ConeBackprojector::Cuda): the views
/// as a layered texture (batches of the device's layer limit), matrices in
/// constant memory, 8 voxels per thread along z, slabs of z when the volume
/// does not fit. Throws InvalidArgument (sizes), DeviceError, OutOfMemory.
void backprojectCone(const FilteredProjections& projections, const VolumeGrid& grid, double scale,
                     std::span<float> volume, int device, ConeStageTimes* times = nullptr);

/// reconstructFdk() of fdk.h for "cuda" on `device`: the raw projections
/// uploaded once (pinned staging for large ones) in chunks of views, each
/// weighted, ramp-filtered (cuFFT, the parallel plans' GpuFilter) and copied
/// into the layered texture, then backprojectCone's kernel. Throws as
/// backprojectCone.
void reconstructFdk(const FdkWeights& weights, std::span<const float> projections, const FilterOptions& filter,
                    const VolumeGrid& grid, double scale, std::span<float> volume, int device,
                    ConeStageTimes* times = nullptr);

/// The divergent-beam projector pair of makeConeProjector / makeFanProjector
/// (projector.h) on `device`, for a geometry they checked: one volume per
/// vector (kernels/cuda/divergent_projector.h). Throws InvalidArgument
/// (device index), DeviceError, OutOfMemory.
std::unique_ptr<ProjectorPair> makeCudaConeProjector(const ConeGeometry& geometry, const VolumeGrid& grid,
                                                     const IterativeOptions& iterative, int device);

/// The CUDA devices present; empty (no throw) without a driver or a device.
std::vector<GpuDevice> listDevices();

/// float32 bilinear texture fetches per second that `device` sustains when the
/// lanes of a warp fetch neighbouring texels (about 0.2 s of micro-benchmark).
/// Throws InvalidArgument for a device index that does not exist, DeviceError
/// when there is no usable CUDA device.
double measureTextureFetchRate(int device);

} // namespace tomo::cuda
