// The OpenCL backends: registration, availability, option checks, devices,
// and the diagnostics (filterRows, buildProgram).
#include "tomo/opencl/opencl_backends.h"

#include "ocl_filter.h"
#include "ocl_plan.h"
#include "opencl_sources.h"
#include "program_cache.h"

#include "tomo/error.h"

namespace tomo::opencl {

namespace {

class OclBackend final : public Backend {
public:
    explicit OclBackend(OclKernel kernel) : m_kernel(kernel) {}

    std::string name() const override { return strategyName(m_kernel); }

    std::string description() const override {
        switch (m_kernel) {
        case OclKernel::TexStandard:
            return "OpenCL, image2d_t sampler, one work-item per pixel, constants in __constant memory: "
                   "tex-standard's twin (seed 000 Alg. 1)";
        case OclKernel::TexOptimized:
            return "OpenCL, image2d_t sampler, Z-order 4x4 squares, 4 projection phases, constants in local memory: "
                   "tex-optimized's twin (seed 004 Alg. 1)";
        case OclKernel::Alu:
            return "OpenCL, interpolation on the ALUs from bins cached in local memory per 32x32 tile "
                   "(seed 000 §6, the AMD / Intel CPU variant)";
        }
        return {};
    }

    std::string family() const override { return "opencl"; }

    double textureFetchesPerUpdate(const ReconOptions& options) const override {
        if (m_kernel == OclKernel::Alu || options.slicesPerPass <= 0) return 0.0;
        return 1.0 / options.slicesPerPass;
    }

    std::string unavailableReason() const override {
        if (const std::string& why = noDeviceReason(); !why.empty()) return why;
        if (m_kernel != OclKernel::Alu) {
            for (const DeviceEntry& e : devices())
                if (e.info.images) return {};
            return "no OpenCL device with image support (" + name() + " samples image2d_t; use ocl-alu)";
        }
        return {};
    }

    void checkOptions(const ReconOptions& options) const override {
        requireGpuModes(name(), options);
        const std::string who = "strategy '" + name() + "'";
        if (!noDeviceReason().empty()) return; // unavailableReason() says why; nothing device-specific to check
        const int device = selectDevice(options.openclDevice);
        const OpenClDevice& d = devices()[static_cast<std::size_t>(device)].info;
        if (options.precision == Precision::Float16 && !d.fp16)
            throw InvalidArgument(who + ": precision float16 needs the cl_khr_fp16 extension, which " +
                                  deviceLabel(device) + " does not have (use precision float32)");
        if (m_kernel != OclKernel::Alu && !d.images)
            throw InvalidArgument(who + " samples images, which " + deviceLabel(device) +
                                  " does not support (use ocl-alu)");
    }

    std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry,
                                                   const ReconOptions& options) const override {
        if (const std::string why = unavailableReason(); !why.empty())
            throw DeviceError("strategy '" + name() + "' is not available: " + why);
        checkOptions(options);
        return std::make_unique<OclPlan>(geometry, options, m_kernel);
    }

private:
    OclKernel m_kernel;
};

} // namespace

void registerBackends(BackendRegistry& registry) {
    registry.add(std::make_unique<OclBackend>(OclKernel::TexStandard));
    registry.add(std::make_unique<OclBackend>(OclKernel::TexOptimized));
    registry.add(std::make_unique<OclBackend>(OclKernel::Alu));
}

std::vector<OpenClDevice> listDevices() {
    std::vector<OpenClDevice> out;
    for (const DeviceEntry& e : devices()) out.push_back(e.info);
    return out;
}

std::string status() { return noDeviceReason(); }

bool autoConsiders(const std::string& device) {
    if (!noDeviceReason().empty()) return false;
    const char* env = std::getenv("TOMO_OPENCL_DEVICE");
    if (!device.empty() || (env && *env)) return true;
    return devices()[static_cast<std::size_t>(selectDevice({}))].info.type != "cpu";
}

std::vector<float> filterRows(std::span<const float> rows, int rowCount, int bins, const FilterOptions& options,
                              std::span<const double> weights, const std::string& deviceChoice) {
    if (rowCount < 1 || bins < 1 || rows.size() != static_cast<std::size_t>(rowCount) * static_cast<std::size_t>(bins))
        throw InvalidArgument("OpenCL filterRows: " + std::to_string(rows.size()) + " values for " +
                              std::to_string(rowCount) + " rows of " + std::to_string(bins) + " bins");
    const int device = selectDevice(deviceChoice);
    // One "slice" whose projections are the rows: weight of row r = weights[r % size].
    std::vector<double> rowWeights(static_cast<std::size_t>(rowCount), 1.0);
    if (!weights.empty())
        for (int r = 0; r < rowCount; ++r) rowWeights[r] = weights[static_cast<std::size_t>(r) % weights.size()];
    const BuiltProgram program =
        buildCached(device, std::string(sources::kFilterSource), programDefines(device, 1, false));
    std::vector<float> out(rows.size());
    try {
        const cl::Context& context = contextFor(device);
        cl::CommandQueue queue(context, devices()[static_cast<std::size_t>(device)].device);
        OclFilter filter(device, queue, program.program, bins, rowCount, options, rowWeights);
        cl::Buffer input(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, rows.size() * sizeof(float),
                         const_cast<float*>(rows.data()));
        cl::Buffer result(context, CL_MEM_WRITE_ONLY, rows.size() * sizeof(float));
        filter.filter(input, rowCount);
        cl::Kernel pack(program.program, "packBuffer");
        const int args[] = {bins, filter.padded(), filter.left(), rowCount, 1};
        pack.setArg(0, filter.spectrum());
        pack.setArg(1, filter.weights());
        for (int i = 0; i < 5; ++i) pack.setArg(static_cast<cl_uint>(2 + i), args[i]);
        pack.setArg(7, 1.0f);
        pack.setArg(8, result);
        queue.enqueueNDRangeKernel(pack, cl::NullRange,
                                   cl::NDRange(static_cast<std::size_t>(bins), static_cast<std::size_t>(rowCount)));
        queue.enqueueReadBuffer(result, CL_TRUE, 0, out.size() * sizeof(float), out.data());
    } catch (const cl::Error& e) {
        rethrow(e, "OpenCL filterRows on " + deviceLabel(device));
    }
    return out;
}

BuildReport buildProgram(const std::string& source, const std::string& defines, const std::string& device) {
    return buildCached(selectDevice(device), source, defines).report;
}

} // namespace tomo::opencl
