// Programs built once per device and process, their binaries kept on disk
// across processes (PoCL and most drivers compile for seconds):
//
//   key   = FNV-1a 64 of platform, device, driver version, build options and
//           the source text: a new driver or a changed kernel misses
//   file  = programCacheDir() / "<key>.bin" (the device's binary as
//           clGetProgramInfo(CL_PROGRAM_BINARIES) returns it)
//   write = "<key>.bin.<pid>.<random>.tmp" then rename(): concurrent
//           processes never read a partial file, the last rename wins
//
// A binary the driver rejects (CL_INVALID_BINARY, a build failure) is
// rebuilt from source and rewritten. A source that does not compile throws
// DeviceError with the full build log.
#pragma once

#include "cl_runtime.h"

#include "tomo/opencl/opencl_backends.h"

#include <string>
#include <vector>

namespace tomo::opencl {

struct BuiltProgram {
    cl::Program program;
    BuildReport report;
};

/// Hex FNV-1a 64 of the device's platform, name, version and driver and of
/// `fields`: the names of the cache files (a new driver misses).
std::string cacheKey(int device, const std::vector<std::string>& fields);

/// The bytes of `path` (empty when it cannot be read).
std::string readCacheFile(const std::filesystem::path& path);

/// Writes a cache file under a temporary name, then renames it; a cache that
/// cannot be written only makes the next run slower (no error).
void writeCacheFile(const std::filesystem::path& path, const char* data, std::size_t size);

/// `source` is appended to the common prelude (cl/common.cl); `defines` are
/// build options. Thread-safe.
BuiltProgram buildCached(int device, const std::string& source, const std::string& defines);

} // namespace tomo::opencl
