#include "cl_runtime.h"

#include "tomo/error.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <map>
#include <mutex>

namespace tomo::opencl {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string deviceType(cl_device_type type) {
    if (type & CL_DEVICE_TYPE_GPU) return "gpu";
    if (type & CL_DEVICE_TYPE_CPU) return "cpu";
    if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
    return "other";
}

/// LLVM, which PoCL loads when it starts, installs its crash handlers over
/// the program's own for SIGINT, SIGTERM, SIGXFSZ and more; before LLVM 22
/// also over signals the program ignores, so that a write beyond `ulimit -f`
/// killed tomo-recon instead of failing with EFBIG and a message. The
/// dispositions the program had are put back afterwards; LLVM does not
/// install its handlers again.
class KeepSignalDispositions {
public:
    KeepSignalDispositions() {
        for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], nullptr, &m_saved[i]);
    }
    ~KeepSignalDispositions() {
        for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &m_saved[i], nullptr);
    }
    KeepSignalDispositions(const KeepSignalDispositions&) = delete;
    KeepSignalDispositions& operator=(const KeepSignalDispositions&) = delete;

private:
    // LLVM's (lib/Support/Unix/Signals.inc): termination, crash, info and pipe signals.
    static constexpr std::array kSignals{SIGHUP,  SIGINT,  SIGTERM, SIGUSR2, SIGILL,  SIGTRAP, SIGABRT, SIGFPE,
                                         SIGBUS,  SIGSEGV, SIGQUIT, SIGSYS,  SIGXCPU, SIGXFSZ, SIGUSR1, SIGPIPE};
    std::array<struct sigaction, kSignals.size()> m_saved{};
};

struct Discovery {
    std::vector<DeviceEntry> entries;
    std::string reason;
};

const Discovery& discovery() {
    static const Discovery found = [] {
        const KeepSignalDispositions keep;
        Discovery d;
        std::vector<cl::Platform> platforms;
        try {
            cl::Platform::get(&platforms);
        } catch (const cl::Error& e) {
            // The ICD loader reports an empty /etc/OpenCL/vendors as CL_PLATFORM_NOT_FOUND_KHR.
            d.reason = "no OpenCL platform: " + std::string(e.what()) + " returned " + errorName(e.err()) +
                       " (install an OpenCL driver, e.g. pocl-opencl-icd for the CPU)";
            return d;
        }
        if (platforms.empty()) {
            d.reason = "no OpenCL platform (install an OpenCL driver, e.g. pocl-opencl-icd for the CPU)";
            return d;
        }
        for (const cl::Platform& platform : platforms) {
            std::vector<cl::Device> devices;
            try {
                platform.getDevices(CL_DEVICE_TYPE_ALL, &devices);
            } catch (const cl::Error&) {
                continue; // a platform without devices (CL_DEVICE_NOT_FOUND)
            }
            for (const cl::Device& device : devices) {
                DeviceEntry entry{platform, device, {}};
                OpenClDevice& info = entry.info;
                info.index = static_cast<int>(d.entries.size());
                info.platform = platform.getInfo<CL_PLATFORM_NAME>();
                info.name = device.getInfo<CL_DEVICE_NAME>();
                info.type = deviceType(device.getInfo<CL_DEVICE_TYPE>());
                info.version = device.getInfo<CL_DEVICE_VERSION>();
                info.driver = device.getInfo<CL_DRIVER_VERSION>();
                info.computeUnits = static_cast<int>(device.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>());
                info.memoryBytes = static_cast<std::size_t>(device.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>());
                info.images = device.getInfo<CL_DEVICE_IMAGE_SUPPORT>() == CL_TRUE;
                const std::string extensions = device.getInfo<CL_DEVICE_EXTENSIONS>();
                info.fp16 = extensions.find("cl_khr_fp16") != std::string::npos;
                info.fp64 = extensions.find("cl_khr_fp64") != std::string::npos;
                // Strings from drivers may end in NULs.
                for (std::string* s : {&info.platform, &info.name, &info.version, &info.driver})
                    s->erase(std::find(s->begin(), s->end(), '\0'), s->end());
                d.entries.push_back(std::move(entry));
            }
        }
        if (d.entries.empty())
            d.reason = "no OpenCL device: " + std::to_string(platforms.size()) + " platform(s) without devices";
        return d;
    }();
    return found;
}

std::string deviceList() {
    std::string text;
    for (const DeviceEntry& e : devices())
        text += (text.empty() ? "" : "; ") + std::to_string(e.info.index) + " = " + e.info.name + " (" +
                e.info.platform + ")";
    return text;
}

} // namespace

const std::vector<DeviceEntry>& devices() { return discovery().entries; }

const std::string& noDeviceReason() { return discovery().reason; }

int selectDevice(const std::string& spec) {
    if (!noDeviceReason().empty()) throw DeviceError(noDeviceReason());
    std::string choice = spec;
    std::string source = "OpenCL device";
    if (choice.empty()) {
        const char* env = std::getenv("TOMO_OPENCL_DEVICE");
        if (!env || !*env) {
            // A GPU before a CPU driver such as PoCL, whatever the ICD order.
            for (const DeviceEntry& e : devices())
                if (e.info.type == "gpu" || e.info.type == "accelerator") return e.info.index;
            return 0;
        }
        choice = env;
        source = "TOMO_OPENCL_DEVICE";
    }
    const int count = static_cast<int>(devices().size());
    if (std::all_of(choice.begin(), choice.end(), [](unsigned char c) { return std::isdigit(c); })) {
        const long index = choice.size() > 9 ? -1 : std::strtol(choice.c_str(), nullptr, 10);
        if (index < 0 || index >= count)
            throw InvalidArgument(source + " " + choice + " does not exist (devices: " + deviceList() + ")");
        return static_cast<int>(index);
    }
    const std::string wanted = lower(choice);
    for (const DeviceEntry& e : devices())
        if (lower(e.info.name).find(wanted) != std::string::npos ||
            lower(e.info.platform).find(wanted) != std::string::npos)
            return e.info.index;
    throw InvalidArgument(source + " '" + choice + "' names no device (devices: " + deviceList() + ")");
}

std::string deviceLabel(int index) {
    const DeviceEntry& e = devices().at(static_cast<std::size_t>(index));
    return "OpenCL device " + std::to_string(index) + " (" + e.info.name + ", " + e.info.platform + ")";
}

const cl::Context& contextFor(int index) {
    static std::mutex mutex;
    static std::map<int, cl::Context> contexts;
    std::lock_guard lock(mutex);
    auto it = contexts.find(index);
    if (it != contexts.end()) return it->second;
    try {
        return contexts.emplace(index, cl::Context(devices().at(static_cast<std::size_t>(index)).device)).first->second;
    } catch (const cl::Error& e) {
        rethrow(e, deviceLabel(index) + ": creating a context");
    }
}

std::string errorName(cl_int code) {
    switch (code) {
#define TOMO_CL_NAME(c) case c: return #c;
        TOMO_CL_NAME(CL_SUCCESS)
        TOMO_CL_NAME(CL_DEVICE_NOT_FOUND)
        TOMO_CL_NAME(CL_DEVICE_NOT_AVAILABLE)
        TOMO_CL_NAME(CL_COMPILER_NOT_AVAILABLE)
        TOMO_CL_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        TOMO_CL_NAME(CL_OUT_OF_RESOURCES)
        TOMO_CL_NAME(CL_OUT_OF_HOST_MEMORY)
        TOMO_CL_NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        TOMO_CL_NAME(CL_BUILD_PROGRAM_FAILURE)
        TOMO_CL_NAME(CL_INVALID_VALUE)
        TOMO_CL_NAME(CL_INVALID_DEVICE)
        TOMO_CL_NAME(CL_INVALID_BINARY)
        TOMO_CL_NAME(CL_INVALID_BUILD_OPTIONS)
        TOMO_CL_NAME(CL_INVALID_PROGRAM_EXECUTABLE)
        TOMO_CL_NAME(CL_INVALID_KERNEL_NAME)
        TOMO_CL_NAME(CL_INVALID_KERNEL_ARGS)
        TOMO_CL_NAME(CL_INVALID_ARG_VALUE)
        TOMO_CL_NAME(CL_INVALID_ARG_SIZE)
        TOMO_CL_NAME(CL_INVALID_WORK_GROUP_SIZE)
        TOMO_CL_NAME(CL_INVALID_WORK_DIMENSION)
        TOMO_CL_NAME(CL_INVALID_GLOBAL_WORK_SIZE)
        TOMO_CL_NAME(CL_INVALID_IMAGE_SIZE)
        TOMO_CL_NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        TOMO_CL_NAME(CL_INVALID_BUFFER_SIZE)
        TOMO_CL_NAME(CL_INVALID_MEM_OBJECT)
        TOMO_CL_NAME(CL_INVALID_COMMAND_QUEUE)
        TOMO_CL_NAME(CL_INVALID_CONTEXT)
        TOMO_CL_NAME(CL_INVALID_OPERATION)
        TOMO_CL_NAME(CL_PLATFORM_NOT_FOUND_KHR)
#undef TOMO_CL_NAME
    default: return "OpenCL error " + std::to_string(code);
    }
}

void rethrow(const cl::Error& error, const std::string& context) {
    const std::string text = context + ": " + error.what() + " failed with " + errorName(error.err());
    if (error.err() == CL_MEM_OBJECT_ALLOCATION_FAILURE || error.err() == CL_OUT_OF_HOST_MEMORY ||
        error.err() == CL_INVALID_BUFFER_SIZE)
        throw OutOfMemory(text);
    throw DeviceError(text);
}

} // namespace tomo::opencl
