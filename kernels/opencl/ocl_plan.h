// The ReconstructionPlan of the OpenCL strategies: upload, VkFFT filter
// (ocl_filter.h), weighting and packing of each pass (slicesPerPass slices
// per texel) into what the strategy's kernel reads, the kernel, download.
//
//   ocl-tex-standard   image2d_t per pass, tex_standard.cl
//   ocl-tex-optimized  image2d_t per pass, tex_optimized.cl
//   ocl-alu            buffer per pass [projection][bin], alu.cl
//
// reconstruct() streams the passes through three in-order queues, the shape
// of the CUDA plans' pipeline (seed 004 Fig. 4, right):
//
//   copy-in:   write pass i -> d_in[i%2]          (waits: pass i-2 filtered)
//   compute:   filter + pack + kernel -> d_out[i%2] (waits: upload i, download i-2)
//   copy-out:  read d_out[i%2] -> caller           (waits: kernel i)
//
// so pass i+1 travels while pass i computes, on devices that overlap them.
// Writes read the caller's memory and reads land in the caller's output
// directly (no staging copy: OpenCL drivers pin or map them as they can);
// the call returns after the queues finish. setSinograms() and backproject()
// enqueue on the compute queue alone and wait once. Memory is bounded: two
// passes of input and output, plus the kept packed sinograms of maxSlices()
// slices (setAxis / setRegion re-run only the kernel).
//
// float16 storage (cl_khr_fp16 devices): each pass is scaled by a power of
// two that puts its largest weighted value near 2^14 (no float16
// subnormals), packed as half (CL_HALF_FLOAT images, vstore_half buffers),
// and the kernel multiplies the sums back.
#pragma once

#include "cl_runtime.h"
#include "ocl_filter.h"

#include "tomo/backend.h"

#include <memory>
#include <vector>

namespace tomo::opencl {

enum class OclKernel { TexStandard, TexOptimized, Alu };

std::string strategyName(OclKernel kernel);

/// The "-D..." build options of a plan's programs on `device`.
std::string programDefines(int device, int channels, bool half);

class OclPlan final : public ReconstructionPlan {
public:
    /// Throws InvalidArgument (geometry, options, device choice), DeviceError
    /// (build log included when a kernel does not compile), OutOfMemory.
    OclPlan(const ReconGeometry& geometry, const ReconOptions& options, OclKernel kernel);
    ~OclPlan() override;

    void setSinograms(std::span<const float> sinograms, int count) override;
    void backproject(std::span<float> slices) override;
    void reconstruct(std::span<const float> sinograms, int count, std::span<float> slices) override;
    void setAxis(double axis, std::span<const double> offsets) override;
    void setRegion(const Region& region) override;
    int maxSlices() const override { return m_maxSlices; }
    std::size_t memoryBytes() const override;
    StageTimes lastStageTimes() const override { return m_times; }

private:
    enum Stage { kUpload, kFilter, kBackproject, kDownload };
    std::size_t sliceValues() const;
    std::size_t passBytes() const;
    void uploadGeometry();
    void ensureOutput(std::size_t pixels);
    void ensurePasses(int passes);
    /// Enqueues on the compute queue: filter `input` and pack it as pass `pass`.
    void filterPass(int pass, int slices, const cl::Buffer& input);
    /// Enqueues on the compute queue: the kernel over pass `pass` into `output`.
    void backprojectPass(int pass, int slices, const cl::Buffer& output);
    void launch(cl::Kernel& kernel, const cl::NDRange& global, const cl::NDRange& local, Stage stage);
    void track(Stage stage, const cl::Event& event);
    /// Sums the tracked events per stage into the stages that had any.
    void collectTimes();
    std::string who() const;

    OclKernel m_kernel;
    int m_device = 0;
    int m_channels = 1;
    bool m_half = false;
    bool m_linear = true;
    bool m_fp64 = false;
    int m_maxSlices = 0;
    int m_count = 0;
    std::size_t m_constantProjections = 0; // tex-standard: projections per __constant batch

    cl::CommandQueue m_queue;           // compute (and everything outside reconstruct())
    cl::CommandQueue m_copyIn, m_copyOut; // reconstruct()'s transfers
    cl::Kernel m_pack, m_maxAbs, m_backproject;
    std::unique_ptr<OclFilter> m_filter;
    cl::Sampler m_sampler;
    cl::Buffer d_in[2], d_out[2]; // double buffers of reconstruct(); [0] elsewhere
    cl::Buffer d_geometry, d_exact, d_maxBits;
    std::vector<cl::Buffer> m_geometryBatches; // tex-standard: sub-buffers of d_geometry
    std::vector<cl::Image2D> m_images;         // tex strategies: one per pass
    std::vector<cl::Buffer> m_stores;          // ocl-alu: one per pass
    std::vector<float> m_scales;               // per pass: 1 / float16 scale (1 for float32)
    std::vector<std::pair<Stage, cl::Event>> m_events;
    StageTimes m_times;
};

} // namespace tomo::opencl
