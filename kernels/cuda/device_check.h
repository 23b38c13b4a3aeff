// The device check every CUDA entry point does first (cuda_backends.cpp).
#pragma once

namespace tomo::cuda {

/// `device` when a usable CUDA device of that index exists and runs this
/// build's kernels. Throws DeviceError with the reason when there is none,
/// InvalidArgument for an index that does not exist.
int checkedDevice(int device);

} // namespace tomo::cuda
