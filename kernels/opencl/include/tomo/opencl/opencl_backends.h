// The OpenCL strategies of this build: "ocl-tex-standard", "ocl-tex-optimized"
// and "ocl-alu", on any OpenCL 1.2 device of any platform (AMD, Intel, NVIDIA
// GPUs; PoCL on the CPU), through the ICD loader.
//
//   registerBackends()  adds the three to a registry (also without a platform:
//                       they then report why in unavailableReason()).
//   listDevices()       every device of every platform (tomo::openclDevices()).
//   status()            empty, or why no device can be used.
//
// Plain C++: no OpenCL type appears here, so core and the apps include it freely.
#pragma once

#include "tomo/filter.h"
#include "tomo/registry.h"

#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace tomo::opencl {

/// Adds the OpenCL strategies. Never throws for a missing platform or driver.
void registerBackends(BackendRegistry& registry);

/// The OpenCL devices present; empty (no throw) without a platform.
std::vector<OpenClDevice> listDevices();

/// Empty when a device exists, else why not.
std::string status();

/// Whether strategy "auto" weighs the OpenCL strategies for this device
/// choice (as ReconOptions::openclDevice): when it names a device, or when
/// the default device is a GPU or accelerator. Not for a CPU driver left to
/// the default (PoCL on the same cores as the native strategies, which are
/// faster there and need no kernel compilation).
bool autoConsiders(const std::string& device);

/// Filters `rowCount` rows of `bins` values on an OpenCL device exactly as
/// the plans do (VkFFT, padding, response, row r times weights[r % size]),
/// the twin of tomo::SinogramFilter::apply, for tests and diagnostics.
/// `device` as ReconOptions::openclDevice. Throws InvalidArgument, DeviceError.
std::vector<float> filterRows(std::span<const float> rows, int rowCount, int bins, const FilterOptions& options,
                              std::span<const double> weights, const std::string& device = {});

/// The folder of cached program binaries: $TOMO_OPENCL_CACHE if set ("off"
/// = no cache: empty path), else $XDG_CACHE_HOME/tomo-workstation/opencl,
/// else $HOME/.cache/tomo-workstation/opencl (empty when neither is set).
std::filesystem::path programCacheDir();

/// What building one program did (for tests and `--list-devices` style diagnostics).
struct BuildReport {
    bool fromMemory = false; ///< already built in this process
    bool fromCache = false;  ///< loaded from a cached binary
    std::filesystem::path cacheFile; ///< the binary's file (empty without a cache)
};

/// Builds `source` (after the common prelude) for `device` with `defines`
/// ("-D..." options), through the cache. Throws DeviceError whose message
/// holds the build log when the source does not compile.
BuildReport buildProgram(const std::string& source, const std::string& defines, const std::string& device = {});

} // namespace tomo::opencl
