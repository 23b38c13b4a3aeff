// The ReconstructionPlan of the texture strategies (tex-standard,
// tex-optimized): cuFFT filtering, packing into 1/2/4-slice float or half
// texels, the strategy's kernel, and a streamed pipeline over chunks of one
// pass (slicesPerPass slices) each (seed 004 Fig. 4, right):
//
//   host:     caller -> pinned in[i%2]                      pinned out[i%2] -> caller
//   copy-in:         (pieces) H2D -> d_in[i%2]
//   filter:                      FFT filter + pack -> texture(pass i)
//   compute:                                  kernel(pass i) -> d_out[i%2]
//   copy-out:                                               (pieces) D2H -> pinned out[i%2]
//
// Events order the four streams; the two halves of each double buffer let
// chunk i+1 travel and filter while chunk i back-projects. Host staging
// copies run in pieces so the first upload and the last download overlap
// their own DMA. Caller buffers from allocateHost() (page-locked) need no
// staging: raw rows go up in one strided DMA, slices come down into them,
// and the host thread only enqueues (the batch conveyor's buffers). The filtered, packed sinograms of
// every pass stay on the device (maxSlices() bounds them), so setAxis() and
// setRegion() re-run only the kernel (the live preview).
//
// Device memory (takesDeviceMemory): sinograms already on the plan's GPU
// skip the upload (the filter reads them where they lie) and slices for
// device memory come down by a device-to-device copy of d_out (no banding),
// so nothing passes through the host.
//
// Live preview (backproject() of a single pass over a large region): the
// region is split into bands of rows; band i+1's kernel runs while band i
// travels into the pinned output buffer and is copied to the caller, so only
// the last band's download and host copy follow the kernel (seed 000 Fig. 4:
// "copy-out overlaps compute", applied inside one slice). Bands alternate
// between two compute streams so the next band's blocks fill the SMs while
// the previous band's last blocks drain. Every pixel is computed by the same
// arithmetic as in one launch (a band is a region, ROI = window of the full
// slice), so the image is bit-identical. Environment TOMO_CUDA_BAND_ROWS=N
// forces bands of N rows (rounded up to whole tiles), 0 turns banding off (tests,
// measurements).
//
// setAxis() rewrites only the axis column of the cached per-projection
// constants and uploads the one table the kernel reads (32 KiB of float4 for
// 2048 projections; none for tex-standard, whose launcher fills constant
// memory), stream-ordered before the next kernel.
//
// Stage times (lastStageTimes) are busy times summed over chunks, from GPU
// events on each stage's stream: upload = host staging + H2D (the span waits
// for the host pieces), filter = FFT filter + pack (it shares the SMs with
// the back-projection when they overlap), backproject = the kernels alone,
// download = D2H + the host copies out. With overlap they add up to more
// than the wall time.
#pragma once

#include "alu_tuning.h"
#include "cuda_resources.h"
#include "flat_field_kernels.h"
#include "gpu_filter.h"
#include "host_copy.h"
#include "kernel_launch.h"
#include "raw_rows_upload.h"
#include "stage_spans.h"

#include "tomo/backend.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace tomo::cuda {

/// Layout of the packed sinograms the texture unit reads: pitched linear
/// memory (the default) or a CUDA array per pass (block-linear; one extra
/// device copy after packing). Environment TOMO_CUDA_SINOGRAM_LAYOUT=array
/// selects the latter (for benchmarks).
enum class SinogramLayout { Pitched, Array };

/// Sampling of the options: linear -> Hardware (the texture unit filters);
/// nearest -> SnapDouble (matches a double-precision reference). Environment
/// TOMO_CUDA_NEAREST=hardware|double overrides nearest (for measurements).
Sampling samplingFor(const ReconOptions& options);

class TexturePlan final : public ReconstructionPlan {
public:
    /// Throws InvalidArgument (geometry, options, device index), DeviceError,
    /// OutOfMemory (naming what was asked and what is free).
    TexturePlan(const ReconGeometry& geometry, const ReconOptions& options, TextureKernel kernel);
    ~TexturePlan() override;

    void setSinograms(std::span<const float> sinograms, int count) override;
    void backproject(std::span<float> slices) override;
    /// The whole pipeline at once: uploads of chunk i+1 and downloads of
    /// chunk i-1 overlap the back-projection of chunk i.
    void reconstruct(std::span<const float> sinograms, int count, std::span<float> slices) override;
    /// Raw rows as stored are uploaded (half the bytes of float for uint16)
    /// and corrected on the device (flat_field_kernels.h) before the filter;
    /// the rest is reconstruct().
    bool takesDeviceMemory() const override { return true; }
    bool correctsRawRows() const override { return true; }
    PreprocessStats reconstructRaw(const RawRows& raw, const FlatFieldRows& field, std::span<float> slices) override;
    /// Page-locked: raw rows read from it go up in one strided DMA, slices
    /// come down into it by DMA, without the staging copies.
    HostBuffer allocateHost(std::size_t bytes) const override { return allocatePageLockedHost(m_device, bytes); }
    void setAxis(double axis, std::span<const double> offsets) override;
    void setRegion(const Region& region) override;
    int maxSlices() const override { return m_maxSlices; }
    std::size_t memoryBytes() const override;
    StageTimes lastStageTimes() const override { return m_times; }

    SinogramLayout layout() const { return m_layout; }
    Sampling sampling() const { return m_sampling; }
    /// Rows per band of the banded back-projection for the current region
    /// and kept sinograms; 0 = one launch (see the header comment).
    int bandRows() const;

private:
    static constexpr int kPieces = 8; // host staging pieces per chunk (at least 4 MiB each)
    struct Slot {
        PinnedBuffer<float> h_in;
        DeviceBuffer<float> d_in;
        DeviceBuffer<float> d_out;
        PinnedBuffer<float> h_out;
        Event uploaded, filtered, computed, downloaded;
        Event downloadedPiece[kPieces];
    };
    struct Pass {
        CudaArray array[2]; // SinogramLayout::Array only
        TextureObject texture[2];
    };
    /// What runPasses uploads: float sinograms (host or, onDevice, device
    /// memory), or raw rows with their flat-field constants (then corrected
    /// on the device).
    struct PassInput {
        const float* sinograms = nullptr;
        const RawRows* raw = nullptr;
        const FlatFieldRows* field = nullptr;
        bool onDevice = false;
    };
    std::size_t sliceValues() const;   // projections x bins
    std::size_t passBytes() const;     // texels of one pass, all planes
    static std::size_t pieceBytes(std::size_t bytes);
    std::size_t regionPixels() const { return m_geometry.region.pixels(); }
    void computeGeometry();           // all constants from the geometry (trigonometry once)
    void updateAxisConstants();       // the axis column only
    void uploadGeometry(bool all);    // the table(s) the kernel reads (all: both), stream-ordered on m_compute
    BackprojectLaunch launchFor(int chunk, int slices, int pass, int bandY, int bandHeight) const;
    /// The strategy's kernel for L on `stream` (m_compute or m_compute2).
    void launchKernel(BackprojectLaunch L, cudaStream_t stream);
    void backprojectBanded(std::span<float> slices, int rowsPerBand);
    /// The pass loop of backproject() and reconstruct(): per pass of up to
    /// m_channels slices, upload + filter (when `sinograms` is given), then
    /// back-project and download; pass g-1's host copy overlaps pass g.
    void runPasses(int count, const PassInput* input, std::span<float> slices);
    void ensurePasses(int passes);
    void ensureOutput(std::size_t pixels);
    /// `buffer`, grown to `values` first: the staging buffers are
    /// page-locked on first use (the batch conveyor's page-locked rows and
    /// slices never need them; the slice staging, made with the plan, took
    /// the conveyor's setup from 0.02 s to 0.11-0.15 s on the H100 machine,
    /// 2048 projections x 2048^2 x 4).
    template <class T>
    static T* pinned(PinnedBuffer<T>& buffer, std::size_t values, const char* what) {
        if (buffer.size() < values) {
            buffer.reset(); // the old one freed before the new one is locked
            buffer = PinnedBuffer<T>(values, what);
        }
        return buffer.get();
    }

    /// True for device memory of m_device, false for host memory; throws
    /// InvalidArgument for another GPU's.
    bool onPlanDevice(const void* data, std::size_t bytes, const char* what) const;
    /// The upload (host input) and filter of pass `pass` (= chunk) of `input`.
    void uploadAndFilter(int pass, const PassInput& input, int slices);
    void stageAndUpload(int chunk, const float* h_src, int slices);
    void stageAndUploadRaw(int chunk, const PassInput& input, int firstSlice, int slices);
    /// Filters the slot's d_in, or the device sinograms of `input` from
    /// firstSlice; raw input: corrects the slot's raw rows into d_in first.
    void filterChunk(int chunk, int slices, int pass, const PassInput& input, int firstSlice);
    void backprojectPass(int chunk, int slices, int pass);
    /// D2H of the chunk's slices: into the pinned h_out (finishDownload()
    /// copies them out), or straight to `direct` when that is page-locked
    /// host memory or device memory.
    void download(int chunk, int slices, float* direct);
    void finishDownload(int chunk, int slices, float* h_dst);
    void drain() noexcept;

    TextureKernel m_kernel;
    SinogramLayout m_layout = SinogramLayout::Pitched;
    AluTuning m_tuning;              // alu, hybrid, oversample
    DeviceBuffer<unsigned> d_counters; // ALU strategies: kAluCounters per compute stream
    Sampling m_sampling = Sampling::Hardware;
    int m_device = 0;
    int m_multiprocessors = 1;
    int m_channels = 1;
    int m_planes = 1; // textures per pass: 2 = four float32 slices as two float2 planes
    bool m_half = false;
    bool m_linear = true;
    int m_maxSlices = 0;
    int m_count = 0;
    std::size_t m_pitch = 0; // bytes per texture row (of one plane)

    Stream m_compute, m_filterStream, m_copyIn, m_copyOut;
    Stream m_compute2;               // the odd bands of a banded back-projection
    int m_bandRowsSetting = -1;      // TOMO_CUDA_BAND_ROWS: -1 = automatic, 0 = off, N = rows
    Event m_bandStart;               // m_compute2 waits for it (geometry uploaded, d_out free)
    Event m_bandsDone;               // the last band of m_compute2, for m_compute's span
    std::vector<Event> m_bandComputed, m_bandDownloaded;
    std::vector<float> h_geometry;
    DeviceBuffer<float> d_geometry;
    std::vector<GeometryDouble> h_geometryDouble;
    DeviceBuffer<GeometryDouble> d_geometryDouble;
    std::uint64_t m_geometryVersion = 0;
    std::unique_ptr<GpuFilter> m_filter;
    Slot m_slots[2];
    DeviceBuffer<unsigned char> d_store; // passes x projections x pitch (Pitched), one pass (Array)
    std::vector<Pass> m_passes;
    DeviceBuffer<float> d_scales;        // float16: {scale, 1/scale} per pass
    DeviceBuffer<unsigned> d_maxBits;    // float16: max |value| per pass
    std::optional<RawRowsUpload> m_raw;  // raw passes (slot = chunk % 2), made by the first reconstructRaw()
    HostCopier m_copier;

    StageSpans m_spans;
    StageTimes m_times;
};

} // namespace tomo::cuda
