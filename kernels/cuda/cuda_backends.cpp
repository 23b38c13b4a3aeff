// The CUDA backends: registration, availability, option checks, devices,
// and the diagnostics (GPU filter, fetch rates).
#include "tomo/cuda/cuda_backends.h"
#include "tomo/cuda/diagnostics.h"

#include "corrections/chunk_corrector.h"
#include "cuda_resources.h"
#include "device_check.h"
#include "fetch_rate.h"
#include "flat_field_kernels.h"
#include "gpu_filter.h"
#include "gridrec_plan.h"
#include "projector_pair.h"
#include "tex_optimized.h"
#include "texture_plan.h"

#include "tomo/error.h"
#include "tomo/gridrec.h"
#include "tomo/preprocess.h"

#include <algorithm>
#include <string>
#include <vector>

#ifndef TOMO_CUDA_ARCHITECTURES
#define TOMO_CUDA_ARCHITECTURES "unknown"
#endif

namespace tomo::cuda {

namespace {

/// Why no CUDA strategy can run here (empty when one can); computed once,
/// with the kernels tried on the calling thread's GPU: a process of GPU 1
/// (an MPI rank, a lane's thread: Backend::useDevice) makes no context on
/// GPU 0 for it, and the GPU tried is one the process runs on.
const std::string& availability() {
    static const std::string reason = [] () -> std::string {
        int count = 0;
        const cudaError_t error = cudaGetDeviceCount(&count);
        if (error != cudaSuccess) {
            (void)cudaGetLastError();
            return std::string("no CUDA device: ") + cudaGetErrorString(error);
        }
        if (count == 0) return "no CUDA device: cudaGetDeviceCount found none";
        int device = 0;
        try {
            TOMO_CUDA_CHECK(cudaGetDevice(&device));
            const std::string probe = texOptimizedProbe();
            if (!probe.empty()) {
                cudaDeviceProp prop{};
                (void)cudaGetDeviceProperties(&prop, device);
                return deviceLabel(device) + ", compute capability " + std::to_string(prop.major) + "." +
                       std::to_string(prop.minor) + ", cannot run this build's kernels (built for CUDA architectures " +
                       TOMO_CUDA_ARCHITECTURES + "; rebuild with -DCMAKE_CUDA_ARCHITECTURES=" +
                       std::to_string(prop.major) + std::to_string(prop.minor) + "): " + probe;
            }
        } catch (const Error& e) {
            return "CUDA device " + std::to_string(device) + " is not usable: " + e.what();
        }
        return {};
    }();
    return reason;
}

class TextureBackend final : public Backend {
public:
    explicit TextureBackend(TextureKernel kernel) : m_kernel(kernel) {}

    std::string name() const override { return strategyName(m_kernel); }

    std::string description() const override {
        switch (m_kernel) {
        case TextureKernel::Standard:
            return "CUDA, texture unit, one thread per pixel, constants in constant memory: the paper's Algorithm 1 "
                   "(the baseline)";
        case TextureKernel::Optimized:
            return "CUDA, texture unit, Z-order 4x4 squares, 4 projections per block with shuffle reduction, "
                   "constants in shared memory (seed 004 Alg. 1)";
        case TextureKernel::Alu:
            return "CUDA, interpolation on the ALUs from bins cached in shared memory per tile (seed 000 §6), exact "
                   "float32 linear, double-position nearest";
        case TextureKernel::Hybrid:
            return "CUDA, per-SM mix of texture blocks and ALU blocks in one launch (seed 000 §7.1), share tunable";
        case TextureKernel::Oversample:
            return "CUDA, ALU tile caching 4 texture-filtered samples per bin, nearest of them (seed 000 §7.2): "
                   "approximate linear";
        }
        return {};
    }

    std::string family() const override { return "cuda"; }

    bool isExact() const override { return m_kernel != TextureKernel::Oversample; }

    double textureFetchesPerUpdate(const ReconOptions& options) const override {
        if (options.slicesPerPass <= 0) return 0.0;
        switch (m_kernel) {
        case TextureKernel::Standard:
        case TextureKernel::Optimized: return 1.0 / options.slicesPerPass;
        case TextureKernel::Hybrid: {
            const AluTuning t = parseAluTuning(m_kernel, options);
            return t.textureShare / 16.0 / options.slicesPerPass;
        }
        default: return 0.0;
        }
    }

    std::string unavailableReason() const override { return availability(); }
    void useDevice(int device) const override { cuda::useDevice(device); }

    void checkOptions(const ReconOptions& options) const override {
        requireGpuModes(name(), options);
        if (options.device < 0)
            throw InvalidArgument("strategy '" + name() + "': device is " + std::to_string(options.device) + " (expected >= 0)");
        if (m_kernel == TextureKernel::Oversample && options.interpolation != Interpolation::Linear)
            throw InvalidArgument("strategy 'oversample' approximates linear interpolation: use interpolation linear "
                                  "(for nearest, 'alu' is exact and as fast)");
        (void)parseAluTuning(m_kernel, options);
    }

    std::vector<std::string> tuningCandidates(const ReconOptions& options) const override {
        return aluTuningCandidates(m_kernel, options);
    }

    std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry,
                                                   const ReconOptions& options) const override {
        checkOptions(options);
        if (const std::string& why = availability(); !why.empty())
            throw DeviceError("strategy '" + name() + "' is not available: " + why);
        return std::make_unique<TexturePlan>(geometry, options, m_kernel);
    }

    std::unique_ptr<ChunkCorrector> createCorrector(PreprocessingStage& stage,
                                                    const ReconOptions& options) const override {
        return createChunkCorrector(stage, checkedDevice(options.device));
    }

    // Every CUDA strategy runs the iterative methods on the one CUDA pair
    // (projector_pair.h); the strategy's kernel is not used by them.
    std::unique_ptr<ProjectorPair> createProjector(const ReconGeometry& geometry,
                                                   const ReconOptions& options) const override {
        checkOptions(options);
        if (const std::string& why = availability(); !why.empty())
            throw DeviceError("strategy '" + name() + "' is not available: " + why);
        return makeCudaProjector(geometry, options);
    }
    bool hasProjector() const override { return true; }
    bool hasFourierProjector() const override { return true; }

private:
    TextureKernel m_kernel;
};

/// "gridrec": Fourier-domain gridding (tomo/gridrec.h, gridrec_plan.h).
class GridrecBackend final : public Backend {
public:
    std::string name() const override { return gridrec::kCudaName; }
    std::string description() const override {
        return "CUDA, Fourier-domain gridding (cuFFT): each filtered row's spectrum with linear interpolation's "
               "response, gathered onto an oversampled grid with a Kaiser-Bessel kernel, one 2D inverse FFT per two "
               "slices; approximate";
    }
    std::string family() const override { return "cuda"; }
    bool isExact() const override { return false; }
    bool computesWholeSlice() const override { return true; }
    std::vector<std::string> tuningCandidates(const ReconOptions&) const override { return gridrec::tuningCandidates(); }
    std::string unavailableReason() const override { return availability(); }
    void useDevice(int device) const override { cuda::useDevice(device); }
    void checkOptions(const ReconOptions& options) const override {
        (void)gridrec::checkOptions(name(), options);
        if (options.device < 0)
            throw InvalidArgument("strategy '" + name() + "': device is " + std::to_string(options.device) + " (expected >= 0)");
    }
    std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry,
                                                   const ReconOptions& options) const override {
        checkOptions(options);
        if (const std::string& why = availability(); !why.empty())
            throw DeviceError("strategy '" + name() + "' is not available: " + why);
        return makeGridrecPlan(geometry, options);
    }
    std::unique_ptr<ChunkCorrector> createCorrector(PreprocessingStage& stage,
                                                    const ReconOptions& options) const override {
        return createChunkCorrector(stage, checkedDevice(options.device));
    }
};

} // namespace

int checkedDevice(int device) {
    if (const std::string& why = availability(); !why.empty()) throw DeviceError(why);
    int count = 0;
    TOMO_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count)
        throw InvalidArgument("CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) +
                              " device(s))");
    return device;
}

void registerBackends(BackendRegistry& registry) {
    // The last is `auto`'s choice when it does not time (TOMO_AUTOTUNE=off).
    registry.add(std::make_unique<TextureBackend>(TextureKernel::Standard));
    registry.add(std::make_unique<TextureBackend>(TextureKernel::Oversample));
    registry.add(std::make_unique<GridrecBackend>());
    registry.add(std::make_unique<TextureBackend>(TextureKernel::Alu));
    registry.add(std::make_unique<TextureBackend>(TextureKernel::Hybrid));
    registry.add(std::make_unique<TextureBackend>(TextureKernel::Optimized));
}

std::vector<GpuDevice> listDevices() {
    std::vector<GpuDevice> devices;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return devices;
    }
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        GpuDevice d;
        d.index = i;
        d.name = prop.name;
        d.multiprocessors = prop.multiProcessorCount;
        d.memoryBytes = prop.totalGlobalMem;
        d.computeMajor = prop.major;
        d.computeMinor = prop.minor;
        devices.push_back(d);
    }
    return devices;
}

double measureTextureFetchRate(int device) {
    return measureTextureFetchRate(device, Precision::Float32, 1, Interpolation::Linear);
}

double measureTextureFetchRate(int device, Precision precision, int channels, Interpolation interpolation) {
    DeviceScope scope(checkedDevice(device));
    if (channels != 1 && channels != 2 && channels != 4)
        throw InvalidArgument("fetch rate: " + std::to_string(channels) + " channels (expected 1, 2 or 4)");
    return runFetchRateBenchmark(precision == Precision::Float16, channels, interpolation == Interpolation::Linear);
}

std::vector<float> filterRowsOnGpu(std::span<const float> rows, int rowCount, int bins, const FilterOptions& options,
                                   std::span<const double> weights, int device) {
    if (rowCount < 1 || bins < 1 || rows.size() != static_cast<std::size_t>(rowCount) * static_cast<std::size_t>(bins))
        throw InvalidArgument("filterRowsOnGpu: " + std::to_string(rows.size()) + " values for " +
                              std::to_string(rowCount) + " rows of " + std::to_string(bins) + " bins");
    DeviceScope scope(checkedDevice(device));
    // One "slice" whose projections are the rows: weight of row r = weights[r % size].
    std::vector<double> rowWeights(static_cast<std::size_t>(rowCount), 1.0);
    if (!weights.empty())
        for (int r = 0; r < rowCount; ++r) rowWeights[r] = weights[static_cast<std::size_t>(r) % weights.size()];
    Stream stream = Stream::create();
    GpuFilter filter(device, bins, rowCount, options, rowWeights, stream.get());
    DeviceBuffer<float> d_rows(device, rows.size(), "the rows to filter");
    DeviceBuffer<float> d_result(device, rows.size(), "the filtered rows");
    TOMO_CUDA_CHECK(cudaMemcpyAsync(d_rows.get(), rows.data(), rows.size() * sizeof(float), cudaMemcpyHostToDevice,
                                    stream.get()));
    filter.filter(d_rows.get(), rowCount, stream.get());
    PackLaunch pack;
    pack.d_fft = filter.d_spectrum();
    pack.layout = filter.layout(rowCount);
    pack.projections = rowCount;
    pack.channels = 1;
    pack.validSlices = 1;
    pack.d_weights = filter.d_weights();
    pack.d_out = d_result.get();
    pack.pitchBytes = static_cast<std::size_t>(bins) * sizeof(float);
    launchPack(pack, stream.get());
    std::vector<float> out(rows.size());
    TOMO_CUDA_CHECK(cudaMemcpyAsync(out.data(), d_result.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost,
                                    stream.get()));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    return out;
}

std::vector<float> flatFieldOnGpu(const RawRows& raw, const FlatFieldRows& field, PreprocessStats* stats, int device) {
    const std::size_t sample = sampleBytes(raw.type);
    const std::size_t pitch = static_cast<std::size_t>(raw.rowPitch > 0 ? raw.rowPitch : raw.rows);
    const std::size_t columns = static_cast<std::size_t>(std::max(raw.columns, 0));
    if (raw.rows < 1 || raw.projections < 1 || raw.columns < 1 || pitch < static_cast<std::size_t>(raw.rows) ||
        raw.values.size() < ((static_cast<std::size_t>(raw.projections) - 1) * pitch + raw.rows) * columns * sample ||
        field.rows != raw.rows || field.columns != raw.columns || field.dead.size() != field.dark.size())
        throw InvalidArgument("flatFieldOnGpu: " + std::to_string(raw.rows) + " rows x " +
                              std::to_string(raw.projections) + " projections x " + std::to_string(raw.columns) +
                              " columns do not match the " + std::to_string(raw.values.size()) + " bytes or the " +
                              std::to_string(field.rows) + "x" + std::to_string(field.columns) + " constants");
    DeviceScope scope(checkedDevice(device));
    const std::size_t width = static_cast<std::size_t>(raw.rows) * columns * sample;
    const std::size_t values = static_cast<std::size_t>(raw.rows) * raw.projections * columns;
    DeviceBuffer<unsigned char> d_raw(device, width * raw.projections, "the raw rows");
    DeviceBuffer<float> d_dark(device, field.dark.size(), "the flat-field constants");
    DeviceBuffer<float> d_scale(device, field.scale.size(), "the flat-field constants");
    DeviceBuffer<unsigned char> d_dead(device, field.dead.size(), "the flat-field constants");
    DeviceBuffer<float> d_out(device, values, "the corrected sinograms");
    DeviceBuffer<unsigned long long> d_stats(device, kCounterWords, "the preprocessing counters");
    Stream stream = Stream::create();
    TOMO_CUDA_CHECK(cudaMemcpy2DAsync(d_raw.get(), width, raw.values.data(), pitch * columns * sample, width,
                                      static_cast<std::size_t>(raw.projections), cudaMemcpyHostToDevice, stream.get()));
    TOMO_CUDA_CHECK(cudaMemcpyAsync(d_dark.get(), field.dark.data(), d_dark.bytes(), cudaMemcpyHostToDevice,
                                    stream.get()));
    TOMO_CUDA_CHECK(cudaMemcpyAsync(d_scale.get(), field.scale.data(), d_scale.bytes(), cudaMemcpyHostToDevice,
                                    stream.get()));
    TOMO_CUDA_CHECK(cudaMemcpyAsync(d_dead.get(), field.dead.data(), d_dead.bytes(), cudaMemcpyHostToDevice,
                                    stream.get()));
    resetFlatFieldCounters(d_stats.get(), stream.get());
    FlatFieldLaunch f;
    f.d_raw = d_raw.get();
    f.type = rawTypeOf(static_cast<int>(raw.type));
    f.projections = raw.projections;
    f.rows = raw.rows;
    f.columns = raw.columns;
    f.d_dark = d_dark.get();
    f.d_scale = d_scale.get();
    f.d_dead = d_dead.get();
    f.saturation = field.saturation;
    f.interpolate = field.interpolate;
    f.d_out = d_out.get();
    f.d_counters = d_stats.get();
    launchFlatField(f, stream.get());
    std::vector<float> out(values);
    std::vector<unsigned long long> counters(kCounterWords);
    TOMO_CUDA_CHECK(cudaMemcpyAsync(out.data(), d_out.get(), d_out.bytes(), cudaMemcpyDeviceToHost, stream.get()));
    TOMO_CUDA_CHECK(cudaMemcpyAsync(counters.data(), d_stats.get(), d_stats.bytes(), cudaMemcpyDeviceToHost,
                                    stream.get()));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    PreprocessStats found;
    readFlatFieldStats(counters.data(), raw.source, raw.firstRow, raw.projections, raw.columns, found);
    if (stats) *stats = std::move(found);
    return out;
}

void readFlatFieldStats(const unsigned long long* counters, const std::string& source, int firstRow, int projections,
                        int columns, PreprocessStats& stats) {
    const auto perRow = static_cast<unsigned long long>(projections) * static_cast<unsigned>(columns);
    const auto column = [&](unsigned long long key) { return static_cast<int>(key % static_cast<unsigned>(columns)); };
    const auto angle = [&](unsigned long long key) {
        return static_cast<int>(key / static_cast<unsigned>(columns) % static_cast<unsigned>(projections));
    };
    const auto row = [&](unsigned long long key) { return firstRow + static_cast<int>(key / perRow); };
    if (const unsigned long long key = counters[2]; key != ~0ull)
        throw DataError(source + ": value is NaN, inf or beyond float32's range at row " + std::to_string(row(key)) +
                        ", angle " + std::to_string(angle(key)) + ", column " + std::to_string(column(key)) +
                        "; expected finite values within float32's range");
    stats = {};
    stats.clamped = static_cast<std::size_t>(counters[0]);
    stats.badValueCount = static_cast<std::size_t>(counters[1]);
    std::vector<unsigned long long> keys(counters + kCounterSlots,
                                         counters + kCounterSlots + std::min<unsigned long long>(counters[3], kListedKeys));
    std::sort(keys.begin(), keys.end());
    for (unsigned long long key : keys) stats.badValues.push_back({row(key), angle(key), column(key)});
}

} // namespace tomo::cuda
