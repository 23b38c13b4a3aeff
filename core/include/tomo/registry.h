// All back-projection strategies of this build, by name.
#pragma once

#include "tomo/backend.h"
#include "tomo/fdk.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tomo {

class BackendRegistry {
public:
    /// The registry with every backend compiled into this build (CPU always;
    /// CUDA and OpenCL when built with them).
    static BackendRegistry& instance();

    void add(std::unique_ptr<Backend> backend);

    /// All backends, available or not, in a stable order (CPU first).
    std::vector<const Backend*> backends() const;

    /// The backend of that name, or nullptr.
    const Backend* find(std::string_view name) const;

    /// The backend to use for `options.strategy`: a named one (throws
    /// InvalidArgument listing the names if unknown, DeviceError with the
    /// reason if unavailable) or, for "auto", the fastest available exact
    /// strategy for these options (timed once per device and shape, see
    /// autotune.h; with options.allowApproximate, approximate ones within
    /// the tuner's error bound compete too).
    const Backend& resolve(const ReconOptions& options, const ReconGeometry& geometry) const;

    /// `options` with "auto" resolved: the strategy and, for strategies with
    /// kernel parameters, the tuning the autotuner picked (a named strategy
    /// is checked and returned as given). Throws as resolve().
    ReconOptions resolveOptions(const ReconOptions& options, const ReconGeometry& geometry) const;

    /// Backend::useDevice(device) on the calling thread for the backends
    /// `strategy` may run on: the named one, or for "auto" every one.
    void useDevice(const std::string& strategy, int device) const;

    /// The strategies "auto" chooses among for these options (available,
    /// exact unless options.allowApproximate, accepting them), the preferred
    /// one last.
    std::vector<const Backend*> autoCandidates(const ReconOptions& options) const;

private:
    std::vector<std::unique_ptr<Backend>> m_backends;
};

/// A GPU this build can use.
struct GpuDevice {
    int index = 0;
    std::string name;
    int multiprocessors = 0;
    std::size_t memoryBytes = 0;
    int computeMajor = 0;
    int computeMinor = 0;
};

/// GPUs usable by this build (empty without CUDA or without a device).
std::vector<GpuDevice> gpuDevices();

/// An OpenCL device this build can use (any platform: GPU or CPU).
struct OpenClDevice {
    int index = 0;          ///< ReconOptions::openclDevice takes it (or part of a name)
    std::string platform;   ///< e.g. "Portable Computing Language", "NVIDIA CUDA"
    std::string name;
    std::string type;       ///< "gpu", "cpu", "accelerator", "other"
    std::string version;    ///< CL_DEVICE_VERSION
    std::string driver;     ///< CL_DRIVER_VERSION
    int computeUnits = 0;
    std::size_t memoryBytes = 0;
    bool images = false;    ///< image support (the tex strategies need it)
    bool fp16 = false;      ///< cl_khr_fp16 (float16 storage)
    bool fp64 = false;      ///< cl_khr_fp64 (exact nearest positions)
};

/// OpenCL devices of every platform (empty without OpenCL support in this
/// build or without a platform; openclStatus() says why).
std::vector<OpenClDevice> openclDevices();

/// Empty when openclDevices() has a device; otherwise why not ("built
/// without OpenCL", "no OpenCL platform: ...").
std::string openclStatus();

/// For listings (tomo-recon --list-strategies, tomo-bench --list): one line
/// per OpenCL device ("OpenCL 0: <name> (<platform>), cpu, 2 units, 15.5 GiB,
/// images, fp64"), or one line saying why there is none.
std::vector<std::string> openclDeviceLines();

/// Texture fetches per second the GPU sustains (float32 bilinear fetches,
/// micro-benchmark, about 0.2 s); the ceiling tomo-bench compares texture
/// kernels with. Throws DeviceError when there is no such GPU.
double measureTextureFetchRate(int device);

/// The fan/cone-beam (FDK) back-projector for a strategy name: "auto" (the
/// GPU's when this build has CUDA and a usable device, else "cpu"), "cpu",
/// "cpu-reference", "cuda". With `anyBackend`, for front ends that list the
/// parallel-beam strategies (the workstation), every other registered
/// strategy maps to its family's: CPU ones to "cpu", GPU ones to "cuda".
/// Throws InvalidArgument listing the names.
ConeBackprojector coneBackprojectorFor(std::string_view strategy, bool anyBackend = false);

/// Shortcut: resolve the strategy and create its plan.
std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry, const ReconOptions& options);

} // namespace tomo
