// Factories of the CPU strategies (the registry adds them).
#pragma once

#include "tomo/backend.h"

#include <memory>

namespace tomo {

/// "cpu-reference": plain loops, double accumulation, the exact answer every
/// other strategy is compared against. float32 storage, 1 slice per pass.
std::unique_ptr<Backend> makeCpuReferenceBackend();

/// "cpu": threads + SIMD, cache blocking, several slices per pass
/// (seed 000 §6.10, seeds 001/002).
std::unique_ptr<Backend> makeCpuBackend();

/// "cpu-gridrec": Fourier-domain gridding on the CPU (approximate; the twin
/// of the CUDA "gridrec", see tomo/gridrec.h).
std::unique_ptr<Backend> makeGridrecCpuBackend();

} // namespace tomo
