// Launchers of the zinger kernels (zinger_kernels.cu): the GPU side of
// tomo::removeZingers (tomo/corrections.h) over a batch of images, with the
// CPU's arithmetic (float products and differences rounded one by one, the
// mean |value| summed in double).
#pragma once

#include "kernel_launch.h"

#include <cstddef>

namespace tomo::cuda {

struct ZingerLaunch {
    const float* d_input = nullptr; ///< count images of height x width, as they were before the call
    float* d_output = nullptr;      ///< the same images (a copy of d_input): zingers replaced
    int count = 0;
    int height = 0;
    int width = 0;
    int window = 3;          ///< odd, >= 3
    float threshold = 0.3f;
    bool transmission = true; ///< zingers are bright (ValueKind::Transmission), else dark
    double* d_partialSums = nullptr; ///< zingerPartialSums(height * width) per image (scratch)
    float* d_floors = nullptr;       ///< count: each image's mean |value| (scratch)
    unsigned long long* d_counts = nullptr; ///< count: zingers per image; zeroed by the launcher
    unsigned char* d_flags = nullptr; ///< count x height x width: 1 at a zinger; nullptr = not written
};

/// Double partial sums one image's mean |value| takes.
int zingerPartialSums(std::size_t pixels);

void launchZingers(const ZingerLaunch& launch, StreamHandle stream);

/// Scratch bytes of listZingerIndices for images of `pixels` values.
std::size_t zingerListScratchBytes(std::size_t pixels);

/// d_indices = the pixel indices (y * width + x, ascending) of the non-zero
/// flags of one image; d_listed = how many. Asynchronous.
void listZingerIndices(const unsigned char* d_flags, std::size_t pixels, int* d_indices, int* d_listed,
                       void* d_scratch, std::size_t scratchBytes, StreamHandle stream);

} // namespace tomo::cuda
