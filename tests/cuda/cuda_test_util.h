// The CUDA test suites' helpers: the GPU suites' shared ones
// (support/gpu_test_util.h) and skipping without a device.
#pragma once

#include "gpu_test_util.h"

namespace tomo::cudatest {
using namespace gputest;
} // namespace tomo::cudatest

/// Skips the test, with the backend's reason, when no usable CUDA device exists.
#define TOMO_REQUIRE_CUDA()                                                                                  \
    do {                                                                                                     \
        const std::string tomo_why_ = ::tomo::gputest::backendNamed("tex-optimized").unavailableReason();   \
        if (!tomo_why_.empty()) GTEST_SKIP() << "CUDA tests need a GPU: " << tomo_why_;                     \
    } while (0)
