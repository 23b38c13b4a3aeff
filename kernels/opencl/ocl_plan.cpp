#include "ocl_plan.h"

#include "opencl_sources.h"
#include "program_cache.h"

#include "tomo/error.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tomo::opencl {

namespace {

constexpr int kMaxSlicesCap = 256;
constexpr double kStoreBudget = 0.5; // share of the device memory the kept sinograms may take
constexpr std::size_t kConstantBatchAlign = 256; // projections: sub-buffer origins stay aligned

std::string_view kernelSource(OclKernel k) {
    switch (k) {
    case OclKernel::TexStandard: return sources::kTexStandardSource;
    case OclKernel::TexOptimized: return sources::kTexOptimizedSource;
    case OclKernel::Alu: return sources::kAluSource;
    }
    return {};
}

const char* kernelName(OclKernel k) {
    switch (k) {
    case OclKernel::TexStandard: return "texStandard";
    case OclKernel::TexOptimized: return "texOptimized";
    case OclKernel::Alu: return "alu";
    }
    return "";
}

/// CL_R / CL_RG / CL_RGBA for 1 / 2 / 4 slices; two slices go in CL_RGBA
/// where the device has no CL_RG images of that type (PoCL), the kernels
/// read the first channels either way.
cl_channel_order channelOrder(const cl::Context& context, int channels, cl_channel_type type) {
    if (channels == 1) return CL_R;
    if (channels == 2) {
        std::vector<cl::ImageFormat> formats;
        context.getSupportedImageFormats(CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, &formats);
        for (const cl::ImageFormat& f : formats)
            if (f.image_channel_order == CL_RG && f.image_channel_data_type == type) return CL_RG;
    }
    return CL_RGBA;
}

std::size_t roundUp(std::size_t v, std::size_t m) { return (v + m - 1) / m * m; }

} // namespace

std::string strategyName(OclKernel k) {
    switch (k) {
    case OclKernel::TexStandard: return "ocl-tex-standard";
    case OclKernel::TexOptimized: return "ocl-tex-optimized";
    case OclKernel::Alu: return "ocl-alu";
    }
    return {};
}

std::string programDefines(int device, int channels, bool half) {
    const OpenClDevice& d = devices().at(static_cast<std::size_t>(device)).info;
    return "-DTOMO_CHANNELS=" + std::to_string(channels) + " -DTOMO_HALF=" + (half ? "1" : "0") +
           " -DTOMO_FP64=" + (d.fp64 ? "1" : "0");
}

OclPlan::OclPlan(const ReconGeometry& geometry, const ReconOptions& options, OclKernel kernel)
    : ReconstructionPlan(geometry, options), m_kernel(kernel), m_device(selectDevice(options.openclDevice)),
      m_channels(options.slicesPerPass), m_half(options.precision == Precision::Float16),
      m_linear(options.interpolation == Interpolation::Linear) {
    const DeviceEntry& entry = devices().at(static_cast<std::size_t>(m_device));
    m_fp64 = entry.info.fp64;
    const Geometry& g = m_geometry.geometry;
    const int projections = g.projections();
    const bool images = kernel != OclKernel::Alu;
    if (images) {
        const auto maxWidth = entry.device.getInfo<CL_DEVICE_IMAGE2D_MAX_WIDTH>();
        const auto maxHeight = entry.device.getInfo<CL_DEVICE_IMAGE2D_MAX_HEIGHT>();
        if (static_cast<std::size_t>(g.bins) > maxWidth || static_cast<std::size_t>(projections) > maxHeight)
            throw InvalidArgument(who() + ": " + std::to_string(g.bins) + " bins x " + std::to_string(projections) +
                                  " projections exceed the device's largest image (" + std::to_string(maxWidth) +
                                  " x " + std::to_string(maxHeight) + "); use ocl-alu");
    }
    if (entry.device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>() < 256)
        throw DeviceError(who() + " needs work-groups of 256 items; " + deviceLabel(m_device) + " allows " +
                          std::to_string(entry.device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>()));

    const std::string defines = programDefines(m_device, m_channels, m_half);
    const BuiltProgram filterProgram = buildCached(m_device, std::string(sources::kFilterSource), defines);
    const BuiltProgram kernelProgram = buildCached(m_device, std::string(kernelSource(kernel)), defines);
    const cl::Context& context = contextFor(m_device);
    try {
        m_queue = cl::CommandQueue(context, entry.device, CL_QUEUE_PROFILING_ENABLE);
        m_copyIn = cl::CommandQueue(context, entry.device, CL_QUEUE_PROFILING_ENABLE);
        m_copyOut = cl::CommandQueue(context, entry.device, CL_QUEUE_PROFILING_ENABLE);
        m_pack = cl::Kernel(filterProgram.program, images ? "packImage" : "packBuffer");
        if (m_half) m_maxAbs = cl::Kernel(filterProgram.program, "maxAbsWeighted");
        m_backproject = cl::Kernel(kernelProgram.program, kernelName(kernel));
        if (images)
            m_sampler =
                cl::Sampler(context, CL_FALSE, CL_ADDRESS_CLAMP, m_linear ? CL_FILTER_LINEAR : CL_FILTER_NEAREST);
        const std::size_t inputBytes = static_cast<std::size_t>(m_channels) * sliceValues() * sizeof(float);
        for (cl::Buffer& in : d_in) in = cl::Buffer(context, CL_MEM_READ_ONLY, inputBytes);
        d_geometry = cl::Buffer(context, CL_MEM_READ_ONLY, static_cast<std::size_t>(projections) * 4 * sizeof(float));
        d_exact = cl::Buffer(context, CL_MEM_READ_ONLY,
                             static_cast<std::size_t>(projections) * 4 * (m_fp64 ? sizeof(double) : sizeof(float)));
        if (m_half) d_maxBits = cl::Buffer(context, CL_MEM_READ_WRITE, sizeof(cl_uint));
        if (kernel == OclKernel::TexStandard) {
            const auto constantBytes = entry.device.getInfo<CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE>();
            m_constantProjections = std::max<std::size_t>(
                kConstantBatchAlign, constantBytes / (4 * sizeof(float)) / kConstantBatchAlign * kConstantBatchAlign);
            for (std::size_t first = 0; first < static_cast<std::size_t>(projections); first += m_constantProjections) {
                const std::size_t count = std::min(m_constantProjections, projections - first);
                cl_buffer_region region{first * 4 * sizeof(float), count * 4 * sizeof(float)};
                m_geometryBatches.push_back(
                    d_geometry.createSubBuffer(CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &region));
            }
        }
    } catch (const cl::Error& e) {
        rethrow(e, who() + " on " + deviceLabel(m_device));
    }
    m_filter = std::make_unique<OclFilter>(m_device, m_queue, filterProgram.program, g.bins, m_channels * projections,
                                           options.filter, viewWeights(g));
    uploadGeometry();
    ensureOutput(m_geometry.region.pixels());

    const double memory = static_cast<double>(entry.info.memoryBytes);
    const auto passes = static_cast<long long>(kStoreBudget * memory / static_cast<double>(passBytes()));
    m_maxSlices = static_cast<int>(std::min<long long>(passes * m_channels, kMaxSlicesCap / m_channels * m_channels));
    if (m_maxSlices < m_channels)
        throw OutOfMemory(who() + ": " + deviceLabel(m_device) + " has too little memory for one pass (" +
                          std::to_string(passBytes() >> 20) + " MiB)");
}

OclPlan::~OclPlan() {
    try {
        for (cl::CommandQueue* q : {&m_copyIn, &m_queue, &m_copyOut})
            if ((*q)()) q->finish();
    } catch (const cl::Error&) {
        // nothing to report from a destructor; the device releases what it holds
    }
}

std::string OclPlan::who() const { return "strategy '" + strategyName(m_kernel) + "'"; }

std::size_t OclPlan::sliceValues() const {
    const Geometry& g = m_geometry.geometry;
    return static_cast<std::size_t>(g.projections()) * static_cast<std::size_t>(g.bins);
}

std::size_t OclPlan::passBytes() const {
    return sliceValues() * static_cast<std::size_t>(m_channels) * (m_half ? 2 : 4);
}

void OclPlan::uploadGeometry() {
    const Geometry& g = m_geometry.geometry;
    const auto projections = static_cast<std::size_t>(g.projections());
    std::vector<float> table(projections * 4);
    std::vector<double> exact(projections * 4);
    for (std::size_t p = 0; p < projections; ++p) {
        const double c = std::cos(g.angles[p]), s = std::sin(g.angles[p]), axis = g.axisAt(static_cast<int>(p));
        // cos, sin, axis_p, min(0, cos, -sin, cos - sin): a tile's lowest corner (alu.cl)
        const double corner = std::min({0.0, c, -s, c - s});
        const double row[4] = {c, s, axis, corner};
        for (int i = 0; i < 4; ++i) {
            table[p * 4 + i] = static_cast<float>(row[i]);
            exact[p * 4 + i] = row[i];
        }
    }
    try {
        // Blocking: queued kernels (in order) read the old table first.
        m_queue.enqueueWriteBuffer(d_geometry, CL_TRUE, 0, table.size() * sizeof(float), table.data());
        if (m_fp64)
            m_queue.enqueueWriteBuffer(d_exact, CL_TRUE, 0, exact.size() * sizeof(double), exact.data());
        else
            m_queue.enqueueWriteBuffer(d_exact, CL_TRUE, 0, table.size() * sizeof(float), table.data());
    } catch (const cl::Error& e) {
        rethrow(e, who() + ": uploading the geometry");
    }
}

void OclPlan::ensureOutput(std::size_t pixels) {
    const std::size_t bytes = static_cast<std::size_t>(m_channels) * pixels * sizeof(float);
    if (d_out[0]() && d_out[0].getInfo<CL_MEM_SIZE>() >= bytes) return;
    try {
        for (cl::Buffer& out : d_out) out = cl::Buffer(contextFor(m_device), CL_MEM_WRITE_ONLY, bytes);
    } catch (const cl::Error& e) {
        rethrow(e, who() + ": the slice output buffer (" + std::to_string(bytes >> 20) + " MiB)");
    }
}

void OclPlan::ensurePasses(int passes) {
    const std::size_t have = m_kernel == OclKernel::Alu ? m_stores.size() : m_images.size();
    if (have >= static_cast<std::size_t>(passes)) return;
    const Geometry& g = m_geometry.geometry;
    const cl::Context& context = contextFor(m_device);
    try {
        const cl_channel_type type = m_half ? CL_HALF_FLOAT : CL_FLOAT;
        const cl::ImageFormat format(m_kernel == OclKernel::Alu ? CL_R : channelOrder(context, m_channels, type), type);
        for (std::size_t p = have; p < static_cast<std::size_t>(passes); ++p) {
            if (m_kernel == OclKernel::Alu)
                m_stores.emplace_back(context, CL_MEM_READ_WRITE, passBytes());
            else
                m_images.emplace_back(context, CL_MEM_READ_WRITE, format, static_cast<std::size_t>(g.bins),
                                      static_cast<std::size_t>(g.projections()));
        }
    } catch (const cl::Error& e) {
        rethrow(e, who() + ": the filtered sinograms (" + std::to_string(passes) + " pass(es) of " +
                       std::to_string(m_channels) + " slice(s))");
    }
    m_scales.resize(static_cast<std::size_t>(passes), 1.0f);
}

void OclPlan::track(Stage stage, const cl::Event& event) { m_events.emplace_back(stage, event); }

void OclPlan::launch(cl::Kernel& kernel, const cl::NDRange& global, const cl::NDRange& local, Stage stage) {
    cl::Event event;
    m_queue.enqueueNDRangeKernel(kernel, cl::NullRange, global, local, nullptr, &event);
    track(stage, event);
}

void OclPlan::filterPass(int pass, int slices, const cl::Buffer& input) {
    const Geometry& g = m_geometry.geometry;
    const int projections = g.projections();
    const int rows = slices * projections;
    m_filter->filter(input, rows);
    float scale = 1.0f;
    if (m_half) {
        const cl_uint zero = 0;
        m_queue.enqueueWriteBuffer(d_maxBits, CL_FALSE, 0, sizeof zero, &zero);
        m_maxAbs.setArg(0, m_filter->spectrum());
        m_maxAbs.setArg(1, m_filter->weights());
        m_maxAbs.setArg(2, g.bins);
        m_maxAbs.setArg(3, m_filter->padded());
        m_maxAbs.setArg(4, m_filter->left());
        m_maxAbs.setArg(5, projections);
        m_maxAbs.setArg(6, rows);
        m_maxAbs.setArg(7, d_maxBits);
        launch(m_maxAbs, cl::NDRange(roundUp(static_cast<std::size_t>(rows) * g.bins, 256)), cl::NDRange(256), kFilter);
        cl_uint bits = 0;
        m_queue.enqueueReadBuffer(d_maxBits, CL_TRUE, 0, sizeof bits, &bits);
        float peak = 0.0f;
        std::memcpy(&peak, &bits, sizeof peak);
        int exponent = 0;
        if (peak > 0.0f) (void)std::frexp(peak, &exponent); // peak = f * 2^exponent, f in [0.5, 1)
        const int e = peak > 0.0f ? std::clamp(14 - exponent, -120, 120) : 0;
        scale = std::ldexp(1.0f, e);
    }
    m_scales[static_cast<std::size_t>(pass)] = 1.0f / scale;
    m_pack.setArg(0, m_filter->spectrum());
    m_pack.setArg(1, m_filter->weights());
    m_pack.setArg(2, g.bins);
    m_pack.setArg(3, m_filter->padded());
    m_pack.setArg(4, m_filter->left());
    m_pack.setArg(5, projections);
    m_pack.setArg(6, slices);
    m_pack.setArg(7, scale);
    if (m_kernel == OclKernel::Alu) m_pack.setArg(8, m_stores[static_cast<std::size_t>(pass)]);
    else m_pack.setArg(8, m_images[static_cast<std::size_t>(pass)]);
    launch(m_pack, cl::NDRange(roundUp(static_cast<std::size_t>(g.bins), 64), static_cast<std::size_t>(projections)),
           cl::NDRange(64, 1), kFilter);
}

void OclPlan::setSinograms(std::span<const float> sinograms, int count) {
    requireSinograms(sinograms, count);
    m_count = 0;
    const int passes = (count + m_channels - 1) / m_channels;
    ensurePasses(passes);
    m_events.clear();
    try {
        for (int pass = 0; pass < passes; ++pass) {
            const int slices = std::min(m_channels, count - pass * m_channels);
            cl::Event uploaded;
            // In order: the previous pass's filter has read d_in before this write.
            const std::size_t values = static_cast<std::size_t>(slices) * sliceValues();
            m_queue.enqueueWriteBuffer(d_in[0], CL_FALSE, 0, values * sizeof(float),
                                       sinograms.data() + static_cast<std::size_t>(pass) * m_channels * sliceValues(),
                                       nullptr, &uploaded);
            track(kUpload, uploaded);
            filterPass(pass, slices, d_in[0]);
        }
        m_queue.finish();
    } catch (const cl::Error& e) {
        rethrow(e, who() + ": filtering on " + deviceLabel(m_device));
    }
    collectTimes();
    m_count = count;
}

void OclPlan::backprojectPass(int pass, int slices, const cl::Buffer& output) {
    const Region& r = m_geometry.region;
    const Geometry& g = m_geometry.geometry;
    const float centreX = static_cast<float>((m_geometry.sliceWidth - 1) / 2.0);
    const float centreY = static_cast<float>((m_geometry.sliceHeight - 1) / 2.0);
    const int pixels = static_cast<int>(r.pixels());
    const float scale = m_scales[static_cast<std::size_t>(pass)];
    cl::Kernel& k = m_backproject;
    const auto tiles = [&](int size, int tile) { return static_cast<std::size_t>((size + tile - 1) / tile); };
    const cl_uint common = m_kernel == OclKernel::TexStandard ? 8 : 6; // index of regionX
    const auto setCommon = [&]() {
        k.setArg(common + 0, r.x);
        k.setArg(common + 1, r.y);
        k.setArg(common + 2, r.width);
        k.setArg(common + 3, r.height);
        k.setArg(common + 4, centreX);
        k.setArg(common + 5, centreY);
        k.setArg(common + 6, output);
        k.setArg(common + 7, pixels);
        k.setArg(common + 8, slices);
        k.setArg(common + 9, scale);
    };
    switch (m_kernel) {
    case OclKernel::TexStandard:
        k.setArg(0, m_images[static_cast<std::size_t>(pass)]);
        k.setArg(1, m_sampler);
        k.setArg(3, d_exact);
        k.setArg(7, m_linear ? 0 : 1);
        setCommon();
        for (std::size_t b = 0; b < m_geometryBatches.size(); ++b) {
            const std::size_t first = b * m_constantProjections;
            k.setArg(2, m_geometryBatches[b]);
            k.setArg(4, static_cast<int>(first));
            k.setArg(5, static_cast<int>(std::min(m_constantProjections, g.angles.size() - first)));
            k.setArg(6, b > 0 ? 1 : 0);
            launch(k, cl::NDRange(tiles(r.width, 16) * 16, tiles(r.height, 16) * 16), cl::NDRange(16, 16),
                   kBackproject);
        }
        return;
    case OclKernel::TexOptimized:
        k.setArg(0, m_images[static_cast<std::size_t>(pass)]);
        k.setArg(1, m_sampler);
        k.setArg(2, d_geometry);
        k.setArg(3, d_exact);
        k.setArg(4, g.projections());
        k.setArg(5, m_linear ? 0 : 1);
        setCommon();
        launch(k, cl::NDRange(tiles(r.width, 16) * 256, tiles(r.height, 16)), cl::NDRange(256, 1), kBackproject);
        return;
    case OclKernel::Alu:
        k.setArg(0, m_stores[static_cast<std::size_t>(pass)]);
        k.setArg(1, g.bins);
        k.setArg(2, d_geometry);
        k.setArg(3, d_exact);
        k.setArg(4, g.projections());
        k.setArg(5, m_linear ? 1 : 0);
        setCommon();
        // Tiles on the grid's 32x32 lattice (alu.cl): those the region touches.
        launch(k, cl::NDRange(tiles(r.x % 32 + r.width, 32) * 256, tiles(r.y % 32 + r.height, 32)),
               cl::NDRange(256, 1), kBackproject);
        return;
    }
}

void OclPlan::backproject(std::span<float> slices) {
    if (m_count == 0) throw InvalidArgument("backproject: no sinograms set (call setSinograms first)");
    requireSlices(slices, m_count);
    const std::size_t pixels = m_geometry.region.pixels();
    m_events.clear();
    try {
        const int passes = (m_count + m_channels - 1) / m_channels;
        for (int pass = 0; pass < passes; ++pass) {
            const int valid = std::min(m_channels, m_count - pass * m_channels);
            backprojectPass(pass, valid, d_out[0]);
            // In order: the next pass's kernel writes d_out after this read.
            cl::Event downloaded;
            m_queue.enqueueReadBuffer(d_out[0], CL_FALSE, 0, static_cast<std::size_t>(valid) * pixels * sizeof(float),
                                      slices.data() + static_cast<std::size_t>(pass) * m_channels * pixels, nullptr,
                                      &downloaded);
            track(kDownload, downloaded);
        }
        m_queue.finish();
    } catch (const cl::Error& e) {
        rethrow(e, who() + ": back-projecting on " + deviceLabel(m_device));
    }
    collectTimes();
}

void OclPlan::reconstruct(std::span<const float> sinograms, int count, std::span<float> slices) {
    requireSinograms(sinograms, count);
    requireSlices(slices, count);
    m_count = 0;
    const int passes = (count + m_channels - 1) / m_channels;
    ensurePasses(passes);
    m_events.clear();
    const std::size_t pixels = m_geometry.region.pixels();
    try {
        std::vector<cl::Event> filtered(passes), downloaded(passes);
        for (int pass = 0; pass < passes; ++pass) {
            const int slot = pass % 2;
            const int valid = std::min(m_channels, count - pass * m_channels);
            const std::size_t first = static_cast<std::size_t>(pass) * m_channels;
            // copy-in: d_in[slot] was last read by the filter of pass - 2.
            std::vector<cl::Event> inputFree;
            if (pass >= 2) inputFree.push_back(filtered[pass - 2]);
            cl::Event uploaded;
            m_copyIn.enqueueWriteBuffer(d_in[slot], CL_FALSE, 0, valid * sliceValues() * sizeof(float),
                                        sinograms.data() + first * sliceValues(), &inputFree, &uploaded);
            m_copyIn.flush(); // submitted before other queues wait for it
            track(kUpload, uploaded);
            // compute: this pass's input is there, d_out[slot] was read (pass - 2).
            std::vector<cl::Event> ready{uploaded};
            if (pass >= 2) ready.push_back(downloaded[pass - 2]);
            m_queue.enqueueBarrierWithWaitList(&ready);
            filterPass(pass, valid, d_in[slot]);
            m_queue.enqueueMarkerWithWaitList(nullptr, &filtered[pass]);
            backprojectPass(pass, valid, d_out[slot]);
            std::vector<cl::Event> computed(1);
            m_queue.enqueueMarkerWithWaitList(nullptr, &computed[0]);
            m_queue.flush();
            // copy-out, straight into the caller's slices.
            m_copyOut.enqueueReadBuffer(d_out[slot], CL_FALSE, 0, valid * pixels * sizeof(float),
                                        slices.data() + first * pixels, &computed, &downloaded[pass]);
            m_copyOut.flush();
            track(kDownload, downloaded[pass]);
        }
        for (cl::CommandQueue* q : {&m_copyIn, &m_queue, &m_copyOut}) q->finish();
    } catch (const cl::Error& e) {
        rethrow(e, who() + ": reconstructing on " + deviceLabel(m_device));
    }
    collectTimes();
    m_count = count;
}

void OclPlan::collectTimes() {
    double seconds[4] = {};
    bool seen[4] = {};
    for (const auto& [stage, event] : m_events) {
        seen[stage] = true;
        try {
            const auto start = event.getProfilingInfo<CL_PROFILING_COMMAND_START>();
            const auto end = event.getProfilingInfo<CL_PROFILING_COMMAND_END>();
            seconds[stage] += static_cast<double>(end - start) * 1e-9;
        } catch (const cl::Error&) {
            // a driver without profiling for this command: the stage reads 0
        }
    }
    m_events.clear();
    double* times[4] = {&m_times.upload, &m_times.filter, &m_times.backproject, &m_times.download};
    for (int s = 0; s < 4; ++s)
        if (seen[s]) *times[s] = seconds[s];
}

void OclPlan::setAxis(double axis, std::span<const double> offsets) {
    validateAxis(axis, offsets, m_geometry.geometry.projections());
    m_geometry.geometry.axis = axis;
    m_geometry.geometry.axisOffsets.assign(offsets.begin(), offsets.end());
    uploadGeometry();
}

void OclPlan::setRegion(const Region& region) {
    ReconGeometry candidate = m_geometry;
    candidate.region = region;
    candidate.validate();
    ensureOutput(region.pixels());
    m_geometry.region = region;
}

std::size_t OclPlan::memoryBytes() const {
    std::size_t bytes = m_filter ? m_filter->bytes() : 0;
    for (const cl::Buffer* b : {&d_in[0], &d_in[1], &d_out[0], &d_out[1], &d_geometry, &d_exact})
        if ((*b)()) bytes += b->getInfo<CL_MEM_SIZE>();
    return bytes + passBytes() * std::max(m_images.size(), m_stores.size());
}

} // namespace tomo::opencl
