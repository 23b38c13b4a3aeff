// Shared by the OpenCL suites: skipping without a platform, the test cache.
#pragma once

#include "gpu_test_util.h" // phantom datasets, cpu-reference results, error figures

#include "tomo/opencl/opencl_backends.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace tomo::ocltest {

using gputest::compare;
using gputest::Dataset;
using gputest::Errors;
using gputest::optionsFor;
using gputest::phantomDataset;
using gputest::reference;
using gputest::report;

/// The test binaries' programs are cached in the build tree, not the user's
/// cache (unless TOMO_OPENCL_CACHE is set already).
inline const bool kCacheInBuildTree = [] { return ::setenv("TOMO_OPENCL_CACHE", TOMO_OPENCL_TEST_CACHE, 0) == 0; }();

/// Skips the test, with the reason, when no OpenCL device exists.
#define TOMO_REQUIRE_OPENCL()                                                                  \
    do {                                                                                       \
        const std::string tomo_why_ = ::tomo::opencl::status();                               \
        if (!tomo_why_.empty()) GTEST_SKIP() << "OpenCL tests need a device: " << tomo_why_;  \
    } while (0)

/// The OpenCL device the tests run on (TOMO_OPENCL_DEVICE chooses, else the
/// first GPU or accelerator, else device 0).
inline OpenClDevice testDevice() {
    const auto devices = opencl::listDevices();
    ReconOptions o;
    const char* env = std::getenv("TOMO_OPENCL_DEVICE");
    const std::string choice = env ? env : "";
    for (const OpenClDevice& d : devices)
        if (std::to_string(d.index) == choice || (!choice.empty() && d.name.find(choice) != std::string::npos))
            return d;
    for (const OpenClDevice& d : devices)
        if (choice.empty() && (d.type == "gpu" || d.type == "accelerator")) return d;
    return devices.front();
}

} // namespace tomo::ocltest
