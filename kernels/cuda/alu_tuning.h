// Kernel parameters of the ALU strategies (alu, hybrid, oversample), from
// ReconOptions::tuning: "shape=N" (an index in kAluShapes) and, for hybrid,
// "share=M" (texture blocks per 16 on each SM), comma-separated; what is left
// out takes the default of the mode (the H100 measurements in
// docs/cuda_notes.md). Host-only C++.
#pragma once

#include "kernel_launch.h"

#include "tomo/backend.h"

#include <string>
#include <vector>

namespace tomo::cuda {

enum class TextureKernel { Standard, Optimized, Alu, Hybrid, Oversample };

/// The registry name of a kernel ("tex-standard", "alu", ...).
std::string strategyName(TextureKernel kernel);

/// alu, hybrid and oversample: the tile of alu_tile.cuh.
inline bool isAluFamily(TextureKernel kernel) {
    return kernel == TextureKernel::Alu || kernel == TextureKernel::Hybrid || kernel == TextureKernel::Oversample;
}

struct AluTuning {
    int shape = 0;
    int textureShare = 0; ///< hybrid only
};

/// The parameters of options.tuning for this kernel and mode. Throws
/// InvalidArgument naming the key and the accepted values for an unknown
/// key, a value out of range, a shape whose cache does not fit the mode, or
/// any tuning for the texture strategies (which take none).
AluTuning parseAluTuning(TextureKernel kernel, const ReconOptions& options);

/// Canonical text of a tuning ("shape=3,share=6"; no share but for hybrid).
std::string aluTuningText(TextureKernel kernel, const AluTuning& tuning);

/// The tunings `auto` times for this kernel and mode (every shape that fits;
/// for hybrid also a few shares), the default first.
std::vector<std::string> aluTuningCandidates(TextureKernel kernel, const ReconOptions& options);

/// Shared memory one block of this kernel, shape and mode takes (bytes).
std::size_t aluSharedBytes(TextureKernel kernel, int shape, int channels, bool linear);

} // namespace tomo::cuda
