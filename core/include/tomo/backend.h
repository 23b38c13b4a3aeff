// The one interface every back-projection strategy implements.
//
//   Backend (one per strategy, from the BackendRegistry)
//     └─ createPlan(geometry, options) -> ReconstructionPlan
//          setSinograms():  ramp filter x window, angular weights (kept, on
//                           the host or the device)
//          backproject():   the strategy's kernel -> slices
//          setAxis()/setRegion(): change geometry, keep the filtered data
//                           (the live preview re-runs only backproject())
//     └─ createProjector(geometry, options) -> ProjectorPair (projector.h):
//          forward and back projection for the iterative methods; the
//          registry's createPlan() wraps it in an IterativePlan
//          (iterative_plan.h) when options.iterative.method is not fbp
//
// A plan owns everything it needs (FFT plans, buffers, constants, device
// memory), created once in createPlan; the calls only compute.
#pragma once

#include "tomo/filter.h"
#include "tomo/preprocess.h"
#include "tomo/geometry.h"
#include "tomo/host_buffer.h"
#include "tomo/iterative.h"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tomo {

enum class Interpolation { Nearest, Linear };
/// Storage of the filtered sinogram; arithmetic stays float32.
enum class Precision { Float32, Float16 };

std::string_view interpolationName(Interpolation i); ///< "nearest", "linear"
Interpolation parseInterpolation(std::string_view s); ///< throws InvalidArgument
std::string_view precisionName(Precision p);          ///< "float32", "float16"
Precision parsePrecision(std::string_view s);         ///< throws InvalidArgument

struct ReconOptions {
    /// Registry name of the strategy, or "auto" (the fastest available).
    std::string strategy = "auto";
    Interpolation interpolation = Interpolation::Linear;
    Precision precision = Precision::Float32;
    /// Slices back-projected together in one pass (1, 2 or 4; 0 = chosen with the strategy by "auto", resolveOptions).
    int slicesPerPass = 1;
    FilterOptions filter;
    /// Device index for GPU backends (ignored by CPU backends).
    int device = 0;
    /// Device of the OpenCL backends: its index in openclDevices() or part
    /// of its device or platform name; empty = $TOMO_OPENCL_DEVICE, else 0.
    std::string openclDevice;
    /// Worker threads for CPU backends; 0 = all hardware threads.
    int threads = 0;
    /// Kernel parameters of strategies that have them (alu, hybrid,
    /// oversample: "shape=N", hybrid also "share=M"; gridrec: "kernel=W",
    /// "oversampling=S"; comma-separated); empty = the strategy's defaults,
    /// or, with strategy "auto", what the tuner picks.
    std::string tuning;
    /// With strategy "auto": the approximate strategies (Backend::isExact()
    /// false) compete too, if their result on the timed problem stays within
    /// the autotuner's error bound (autotune.h). Without it auto stays exact.
    bool allowApproximate = false;

    /// The method: FBP (the strategy's kernel), or an iterative one on the
    /// strategy family's projector pair (iterative.h).
    IterativeOptions iterative;
};

/// Wall time of the stages of the last setSinograms + backproject, in
/// seconds (0 where a stage does not exist, e.g. transfers on the CPU).
struct StageTimes {
    double upload = 0.0;
    double filter = 0.0;
    double backproject = 0.0;
    double download = 0.0;
    /// Wall time in which filtering or back-projection ran (their union:
    /// on a GPU they overlap); 0 where the plan does not measure it.
    double compute = 0.0;
};

class ReconstructionPlan {
public:
    virtual ~ReconstructionPlan() = default;

    const ReconGeometry& geometry() const { return m_geometry; }
    const ReconOptions& options() const { return m_options; }

    /// Filters `count` log-corrected sinograms ([slice][angle][bin], count *
    /// projections * bins values) and keeps them for backproject().
    /// Throws InvalidArgument if the span size does not match, or count is
    /// < 1 or > maxSlices().
    virtual void setSinograms(std::span<const float> sinograms, int count) = 0;

    /// Back-projects the kept sinograms into `slices` ([slice][row][column]
    /// of the region: count * region.pixels() values).
    /// Throws InvalidArgument if no sinograms were set or the size is wrong.
    virtual void backproject(std::span<float> slices) = 0;

    /// Moves the rotation axis (and the per-projection offsets: empty, or one
    /// per angle) without filtering again. Throws InvalidArgument.
    virtual void setAxis(double axis, std::span<const double> offsets) = 0;

    /// Changes the computed region of the slice grid. Throws InvalidArgument
    /// if it is not inside the grid.
    virtual void setRegion(const Region& region) = 0;

    /// Most slices one setSinograms call may take.
    virtual int maxSlices() const = 0;

    /// Bytes of memory the plan holds (device memory for GPU backends).
    virtual std::size_t memoryBytes() const = 0;

    /// Stage timings of the last calls (for tomo-bench and the status bar).
    virtual StageTimes lastStageTimes() const { return {}; }

    /// setSinograms then backproject. Plans may override it to overlap the
    /// transfers of one chunk with the computation of another (the CUDA
    /// plans do); the result and the kept state are the same.
    virtual void reconstruct(std::span<const float> sinograms, int count, std::span<float> slices) {
        setSinograms(sinograms, count);
        backproject(slices);
    }

    /// True when the spans of setSinograms(), backproject() and reconstruct()
    /// may also be device memory of options().device (the CUDA texture
    /// plans; they tell it from host memory per call, as they tell
    /// page-locked memory): sinograms are then filtered where they lie and
    /// slices written there, without host copies. The caller's work on that
    /// memory must be finished before the call (synchronise its stream); the
    /// call returns when the slices are written, as with host memory.
    /// Device memory of another GPU is InvalidArgument. False: host memory
    /// only (the default).
    virtual bool takesDeviceMemory() const { return false; }

    /// True when reconstructRaw() corrects raw rows on the device (the CUDA
    /// plans): the batch conveyor then hands them the stored values and
    /// skips its CPU preprocessing.
    virtual bool correctsRawRows() const { return false; }

    /// flatFieldRawRows() of `raw` (`field` holds the constants of its rows)
    /// into sinograms, then reconstruct() of raw.rows slices. The default
    /// corrects on the CPU. Throws as both.
    virtual PreprocessStats reconstructRaw(const RawRows& raw, const FlatFieldRows& field, std::span<float> slices);

    /// `bytes` of host memory for the inputs and slices of later calls: the
    /// CUDA plans page-lock it, so their uploads read it and their downloads
    /// land in it by DMA, without their staging copies; plain memory by
    /// default. It may outlive the plan. Throws OutOfMemory.
    virtual HostBuffer allocateHost(std::size_t bytes) const { return HostBuffer::plain(bytes); }

    /// Asks a call running on another thread, and every later one, to stop
    /// early by throwing Cancelled (the iterative plans check between
    /// iterations; the others finish their call). Thread-safe.
    virtual void cancel() {}

protected:
    /// Throws InvalidArgument unless 1 <= count <= maxSlices() and
    /// `sinograms` holds count x projections x bins values (setSinograms).
    void requireSinograms(std::span<const float> sinograms, int count) const;
    /// Throws InvalidArgument unless `slices` holds count x region pixels
    /// values (backproject).
    void requireSlices(std::span<const float> slices, int count) const;

    ReconstructionPlan(ReconGeometry geometry, ReconOptions options)
        : m_geometry(std::move(geometry)), m_options(std::move(options)) {
        m_geometry.validate(); // every plan starts from a usable geometry
    }

    ReconGeometry m_geometry;
    ReconOptions m_options;
};

/// Throws InvalidArgument naming `strategy` unless `options` ask for what
/// the GPU strategies (CUDA and OpenCL) run: 1, 2 or 4 slices per pass,
/// nearest or linear interpolation, float32 or float16 storage.
void requireGpuModes(const std::string& strategy, const ReconOptions& options);

class Backend {
public:
    virtual ~Backend() = default;

    /// Registry name of the strategy, e.g. "cpu-reference", "tex-optimized".
    virtual std::string name() const = 0;
    /// One line for --help and tooltips.
    virtual std::string description() const = 0;
    /// "cpu", "cuda" or "opencl".
    virtual std::string family() const = 0;
    /// True when the result is exact up to float rounding for every option
    /// it accepts (false for approximate strategies such as oversample).
    virtual bool isExact() const { return true; }
    /// True when backproject() computes the whole slice grid whatever the
    /// region (the Fourier strategies): its time does not shrink with the
    /// region, and a call for another region of the same slices and axis
    /// (setRegion only) costs a crop.
    virtual bool computesWholeSlice() const { return false; }

    /// Texture fetches the kernel issues per voxel update with these options
    /// (e.g. 1 / slicesPerPass for one packed fetch per pixel, projection and
    /// pass; 0 for kernels that do not sample textures). tomo-bench divides
    /// the resulting fetch rate by measureTextureFetchRate() to show how
    /// close a texture kernel runs to the texture unit's ceiling.
    virtual double textureFetchesPerUpdate(const ReconOptions& options) const {
        (void)options;
        return 0.0;
    }

    /// The kernel parameter sets `auto` times for these options (their
    /// ReconOptions::tuning texts), the default first; {""} for strategies
    /// without parameters.
    virtual std::vector<std::string> tuningCandidates(const ReconOptions& options) const {
        (void)options;
        return {""};
    }

    /// Empty when the strategy can run here; otherwise the reason it cannot
    /// ("no CUDA device found", "built without CUDA").
    virtual std::string unavailableReason() const = 0;

    /// Throws InvalidArgument naming the option and the supported values if
    /// this strategy cannot run with these options.
    virtual void checkOptions(const ReconOptions& options) const = 0;

    /// Makes `device` the calling thread's device for this backend's calls
    /// that follow (CUDA: cudaSetDevice). A thread that works for one GPU
    /// calls it first: a new thread starts on GPU 0, and a call there would
    /// make that GPU a context and share it (a process of GPU 1 seen on GPU
    /// 0 too). Nothing for the backends without devices (the default), nor
    /// for a device that does not exist (creating the plan says so).
    virtual void useDevice(int device) const { (void)device; }

    /// A corrector that runs `stage`'s corrections on this strategy's device
    /// (options.device), or nullptr where the stage corrects on the CPU (the
    /// CPU strategies; the default). Throws DeviceError, OutOfMemory.
    virtual std::unique_ptr<ChunkCorrector> createCorrector(PreprocessingStage& stage,
                                                            const ReconOptions& options) const {
        (void)stage;
        (void)options;
        return nullptr;
    }

    /// The forward/back projector pair of this strategy's family for the
    /// iterative methods (projector.h), or nullptr where it has none (the
    /// default). Throws as createPlan.
    virtual std::unique_ptr<ProjectorPair> createProjector(const ReconGeometry& geometry,
                                                           const ReconOptions& options) const;
    /// Whether createProjector() makes a pair (when the strategy is available).
    virtual bool hasProjector() const { return false; }
    /// Whether it makes the Fourier pair too (ProjectorKind::Fourier).
    virtual bool hasFourierProjector() const { return false; }

    /// Creates a plan for this geometry and these options. Throws
    /// InvalidArgument (unsupported options, invalid geometry), DeviceError,
    /// OutOfMemory.
    virtual std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry,
                                                           const ReconOptions& options) const = 0;
};

} // namespace tomo
