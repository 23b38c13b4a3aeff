#include "program_cache.h"

#include "opencl_sources.h"

#include "tomo/error.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <random>

namespace tomo::opencl {

namespace fs = std::filesystem;

namespace {

std::uint64_t fnv1a(std::uint64_t hash, const std::string& text) {
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 0x100000001b3ull;
    }
    return hash ^ 0xff; // separates the fields
}

std::string buildLog(const cl::Program& program, const cl::Device& device) {
    try {
        std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device);
        log.erase(std::find(log.begin(), log.end(), '\0'), log.end());
        return log;
    } catch (const cl::Error&) {
        return "(no build log)";
    }
}

/// Builds from source; throws DeviceError with the log on failure.
cl::Program buildFromSource(int device, const std::string& text, const std::string& options) {
    const DeviceEntry& entry = devices().at(static_cast<std::size_t>(device));
    cl::Program program(contextFor(device), text);
    try {
        program.build(std::vector<cl::Device>{entry.device}, options.c_str());
    } catch (const cl::Error& e) {
        if (e.err() != CL_BUILD_PROGRAM_FAILURE) rethrow(e, deviceLabel(device) + ": building a program");
        throw DeviceError(deviceLabel(device) + ": the OpenCL program does not compile (options " + options +
                          "); build log:\n" + buildLog(program, entry.device));
    }
    return program;
}

/// The cached binary, built; an empty Program when it is missing or rejected.
cl::Program buildFromBinary(int device, const std::string& bytes, const std::string& options) {
    if (bytes.empty()) return {};
    const DeviceEntry& entry = devices().at(static_cast<std::size_t>(device));
    try {
        cl::Program::Binaries binaries{std::vector<unsigned char>(bytes.begin(), bytes.end())};
        std::vector<cl_int> status;
        cl::Program program(contextFor(device), std::vector<cl::Device>{entry.device}, binaries, &status);
        program.build(std::vector<cl::Device>{entry.device}, options.c_str());
        return program;
    } catch (const cl::Error&) {
        return {}; // stale or foreign binary: rebuild from source
    }
}

} // namespace

std::string cacheKey(int device, const std::vector<std::string>& fields) {
    const OpenClDevice& d = devices().at(static_cast<std::size_t>(device)).info;
    std::uint64_t key = 0xcbf29ce484222325ull;
    for (const std::string* field : {&d.platform, &d.name, &d.version, &d.driver}) key = fnv1a(key, *field);
    for (const std::string& field : fields) key = fnv1a(key, field);
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(key));
    return buf;
}

std::string readCacheFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeCacheFile(const fs::path& path, const char* data, std::size_t size) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    std::random_device random;
    const fs::path temp = path.string() + "." + std::to_string(::getpid()) + "." + std::to_string(random()) + ".tmp";
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (!out) return;
        out.write(data, static_cast<std::streamsize>(size));
        if (!out.good()) {
            out.close();
            fs::remove(temp, ec);
            return;
        }
    }
    fs::rename(temp, path, ec);
    if (ec) fs::remove(temp, ec);
}

fs::path programCacheDir() {
    if (const char* dir = std::getenv("TOMO_OPENCL_CACHE"); dir && *dir)
        return std::string(dir) == "off" ? fs::path() : fs::path(dir);
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return fs::path(xdg) / "tomo-workstation" / "opencl";
    if (const char* home = std::getenv("HOME"); home && *home)
        return fs::path(home) / ".cache" / "tomo-workstation" / "opencl";
    return {};
}

BuiltProgram buildCached(int device, const std::string& source, const std::string& defines) {
    const std::string text = std::string(sources::kCommonSource) + "\n" + source;
    const std::string options = "-cl-std=CL1.2 " + defines;
    const std::string key = cacheKey(device, {options, text});

    static std::mutex mutex;
    static std::map<std::pair<int, std::string>, cl::Program> built;
    std::lock_guard lock(mutex); // one build at a time: drivers differ in their thread safety here
    BuiltProgram result;
    if (auto it = built.find({device, key}); it != built.end()) {
        result.program = it->second;
        result.report.fromMemory = true;
        return result;
    }
    const fs::path dir = programCacheDir();
    if (!dir.empty()) result.report.cacheFile = dir / (key + ".bin");
    if (!dir.empty()) result.program = buildFromBinary(device, readCacheFile(result.report.cacheFile), options);
    result.report.fromCache = result.program() != nullptr;
    if (!result.report.fromCache) {
        result.program = buildFromSource(device, text, options);
        if (!dir.empty()) {
            try {
                const auto binaries = result.program.getInfo<CL_PROGRAM_BINARIES>();
                if (!binaries.empty() && !binaries.front().empty())
                    writeCacheFile(result.report.cacheFile, reinterpret_cast<const char*>(binaries.front().data()),
                                   binaries.front().size());
            } catch (const cl::Error&) {
                // a driver without binaries: no cache, only slower
            }
        }
    }
    built.emplace(std::make_pair(device, key), result.program);
    return result;
}

} // namespace tomo::opencl
