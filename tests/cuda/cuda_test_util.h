// The CUDA test suites' helpers: the GPU suites' shared ones
// (support/gpu_test_util.h) and skipping without a device.
#pragma once

#include "gpu_test_util.h"

#include "tomo/volume_io.h"

#include <algorithm>
#include <span>
#include <vector>

namespace tomo::cudatest {
using namespace gputest;

/// A volume written into memory, every value first set to -12345 (a
/// poison that Errors::allWritten finds).
class MemoryWriter final : public VolumeWriter {
public:
    explicit MemoryWriter(std::size_t values) : volume(values, -12345.0f) {}
    void writeSlices(int first, int count, std::span<const float> data) override {
        std::copy(data.begin(), data.end(), volume.begin() + static_cast<std::ptrdiff_t>(first * data.size() / count));
    }
    void commit() override {}
    std::vector<float> volume;
};
} // namespace tomo::cudatest

/// Skips the test, with the backend's reason, when no usable CUDA device exists.
#define TOMO_REQUIRE_CUDA()                                                                                  \
    do {                                                                                                     \
        const std::string tomo_why_ = ::tomo::gputest::backendNamed("tex-optimized").unavailableReason();   \
        if (!tomo_why_.empty()) GTEST_SKIP() << "CUDA tests need a GPU: " << tomo_why_;                     \
    } while (0)
