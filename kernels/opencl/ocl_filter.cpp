#include "ocl_filter.h"

#include "program_cache.h"

#include "tomo/error.h"

#include <vkFFT.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tomo::opencl {

namespace fs = std::filesystem;

namespace {

/// VkFFT's generated binaries per (device, length, batch): in memory for this
/// process and in the program cache folder across processes.
std::string vkfftCacheName(int device, int padded, int pairs) {
    return "vkfft-" + cacheKey(device, {std::to_string(VkFFTGetVersion()), std::to_string(padded),
                                        std::to_string(pairs)}) + ".bin";
}

std::mutex g_vkfftMutex;
std::map<std::string, std::string> g_vkfftBinaries;

} // namespace

struct OclFilter::Fft {
    VkFFTApplication app{};
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_mem buffer = nullptr;
    std::uint64_t bufferSize = 0;
    bool initialised = false;

    ~Fft() {
        if (initialised) deleteVkFFT(&app);
    }
};

OclFilter::OclFilter(int device, const cl::CommandQueue& queue, const cl::Program& program, int bins, int maxRows,
                     const FilterOptions& options, std::span<const double> weights)
    : m_bins(bins), m_padded(paddedLength(bins)), m_maxRows(maxRows), m_pairs((maxRows + 1) / 2),
      m_edge(options.padding == Padding::Edge), m_queue(queue) {
    if (maxRows < 1) throw InvalidArgument("OpenCL filter: maxRows is " + std::to_string(maxRows) + " (expected >= 1)");
    if (weights.empty()) throw InvalidArgument("OpenCL filter: no angular weights");
    // The CPU's half spectrum, mirrored to the full length of a C2C transform.
    const std::vector<float> half = filterResponse(m_padded, options);
    std::vector<float> full(static_cast<std::size_t>(m_padded));
    for (int k = 0; k < m_padded; ++k) full[k] = half[static_cast<std::size_t>(k <= m_padded / 2 ? k : m_padded - k)];
    std::vector<float> w(weights.size());
    for (std::size_t i = 0; i < weights.size(); ++i) w[i] = static_cast<float>(weights[i]);
    const cl::Context& context = contextFor(device);
    try {
        m_response =
            cl::Buffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, full.size() * sizeof(float), full.data());
        m_weights = cl::Buffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, w.size() * sizeof(float), w.data());
        m_spectrum = cl::Buffer(context, CL_MEM_READ_WRITE,
                                static_cast<std::size_t>(m_pairs) * m_padded * 2 * sizeof(float));
        m_pad = cl::Kernel(program, "padPairs");
        m_apply = cl::Kernel(program, "applyResponse");
    } catch (const cl::Error& e) {
        rethrow(e, deviceLabel(device) + ": the filter buffers (" + std::to_string(maxRows) + " rows of " +
                       std::to_string(m_padded) + ")");
    }

    m_fft = std::make_unique<Fft>();
    Fft& f = *m_fft;
    f.device = devices().at(static_cast<std::size_t>(device)).device();
    f.context = context();
    f.buffer = m_spectrum();
    f.bufferSize = static_cast<std::uint64_t>(m_pairs) * m_padded * 2 * sizeof(float);
    VkFFTConfiguration config{};
    config.FFTdim = 1;
    config.size[0] = static_cast<std::uint64_t>(m_padded);
    config.numberBatches = static_cast<std::uint64_t>(m_pairs);
    config.device = &f.device;
    config.context = &f.context;
    config.buffer = &f.buffer;
    config.bufferSize = &f.bufferSize;
    config.normalize = 0; // filterResponse includes the 1 / padded

    const std::string name = vkfftCacheName(device, m_padded, m_pairs);
    const fs::path dir = programCacheDir();
    std::lock_guard lock(g_vkfftMutex);
    std::string saved;
    if (auto it = g_vkfftBinaries.find(name); it != g_vkfftBinaries.end()) saved = it->second;
    else if (!dir.empty()) saved = readCacheFile(dir / name);
    VkFFTResult result = VKFFT_ERROR_FAILED_TO_INITIALIZE;
    if (!saved.empty()) {
        config.loadApplicationFromString = 1;
        config.loadApplicationString = saved.data();
        result = initializeVkFFT(&f.app, config);
        if (result != VKFFT_SUCCESS) deleteVkFFT(&f.app), f.app = {};
    }
    if (result != VKFFT_SUCCESS) { // no binary, or one VkFFT rejects
        config.loadApplicationFromString = 0;
        config.loadApplicationString = nullptr;
        config.saveApplicationToString = 1;
        result = initializeVkFFT(&f.app, config);
        if (result != VKFFT_SUCCESS) {
            deleteVkFFT(&f.app);
            throw DeviceError(deviceLabel(device) + ": VkFFT cannot make a transform of " + std::to_string(m_padded) +
                              " x " + std::to_string(m_pairs) + " (VkFFT error " + std::to_string(result) + ")");
        }
        const std::string binaries(static_cast<const char*>(f.app.saveApplicationString), f.app.applicationStringSize);
        g_vkfftBinaries[name] = binaries;
        if (!dir.empty()) writeCacheFile(dir / name, binaries.data(), binaries.size());
    } else {
        g_vkfftBinaries[name] = saved;
    }
    f.initialised = true;
}

OclFilter::~OclFilter() = default;

void OclFilter::filter(const cl::Buffer& rows, int rowCount) {
    if (rowCount < 0 || rowCount > m_maxRows)
        throw InvalidArgument("OpenCL filter: " + std::to_string(rowCount) + " rows (expected at most " +
                              std::to_string(m_maxRows) + ")");
    const std::size_t total = static_cast<std::size_t>(m_pairs) * m_padded;
    const std::size_t global = (total + 255) / 256 * 256;
    m_pad.setArg(0, rows);
    m_pad.setArg(1, rowCount);
    m_pad.setArg(2, m_bins);
    m_pad.setArg(3, m_padded);
    m_pad.setArg(4, left());
    m_pad.setArg(5, m_edge ? 1 : 0);
    m_pad.setArg(6, m_pairs);
    m_pad.setArg(7, m_spectrum);
    m_queue.enqueueNDRangeKernel(m_pad, cl::NullRange, cl::NDRange(global), cl::NDRange(256));
    cl_command_queue queue = m_queue();
    cl_mem buffer = m_spectrum();
    VkFFTLaunchParams launch{};
    launch.commandQueue = &queue;
    launch.buffer = &buffer;
    if (const VkFFTResult r = VkFFTAppend(&m_fft->app, -1, &launch); r != VKFFT_SUCCESS)
        throw DeviceError("OpenCL filter: the forward VkFFT transform failed (VkFFT error " + std::to_string(r) + ")");
    m_apply.setArg(0, m_spectrum);
    m_apply.setArg(1, m_response);
    m_apply.setArg(2, m_padded);
    m_apply.setArg(3, m_pairs);
    m_queue.enqueueNDRangeKernel(m_apply, cl::NullRange, cl::NDRange(global), cl::NDRange(256));
    if (const VkFFTResult r = VkFFTAppend(&m_fft->app, 1, &launch); r != VKFFT_SUCCESS)
        throw DeviceError("OpenCL filter: the inverse VkFFT transform failed (VkFFT error " + std::to_string(r) + ")");
}

std::size_t OclFilter::bytes() const {
    return m_response.getInfo<CL_MEM_SIZE>() + m_weights.getInfo<CL_MEM_SIZE>() + m_spectrum.getInfo<CL_MEM_SIZE>();
}

} // namespace tomo::opencl
