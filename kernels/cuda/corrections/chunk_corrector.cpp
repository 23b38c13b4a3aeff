// CudaChunkCorrector: PreprocessingStage::correct() on the GPU. The host
// part (flats, darks, dead pixels: stage.prepare()) stays on the CPU, so
// both sides multiply the same constants; every step after it runs on the
// chunk's values in device memory, in the order of tomo/preprocess.h.
#include "chunk_corrector.h"

#include "corrections/device_corrections.h"
#include "corrections/stage_kernels.h"
#include "cuda_resources.h"
#include "flat_field_kernels.h"
#include "pinned_staging.h"

#include "tomo/error.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace tomo::cuda {

namespace {

constexpr std::size_t kLogClamped = kCounterWords; // the counter after the flat-field kernel's
static_assert(kGuardColumns == kRingGuardColumns && kGuardNoiseShift == kRingNoiseShift &&
                  kGuardNoiseBins == kRingNoiseBins,
              "the ring guard's kernels and tomo/corrections.h define it alike");
/// Transfers this large go through pinned staging (a row of a live preview does not).
constexpr std::size_t kStagedBytes = std::size_t{16} << 20;

/// The steps of correct(), timed with events on the stream (prepare: on the host).
enum Step { kPrepare, kUpload, kFlatField, kZingers, kBackground, kRings, kPaganin, kLog, kStitch, kDownload, kSteps };
constexpr const char* kStepNames[kSteps] = {"prepare", "upload", "flat field", "zingers", "background",
                                            "rings", "Paganin", "log", "stitch", "download"};

class CudaChunkCorrector final : public ChunkCorrector {
public:
    CudaChunkCorrector(PreprocessingStage& stage, int device) : m_stage(stage), m_device(device) {
        DeviceScope scope(m_device);
        m_stream = Stream::create();
        m_counters = DeviceBuffer<unsigned long long>(m_device, kCounterWords + 1, "the preprocessing counters");
        m_hostCounters = PinnedBuffer<unsigned long long>(kCounterWords + 1, "the preprocessing counters");
        for (int i = 0; i < kSteps; ++i) {
            m_stepStart[i] = Event::create(true);
            m_stepEnd[i] = Event::create(true);
        }
    }

    std::string where() const override { return deviceLabel(m_device); }

    std::vector<std::pair<std::string, double>> stepSeconds() const override {
        std::vector<std::pair<std::string, double>> steps;
        for (int i = 0; i < kSteps; ++i)
            if (m_ran[i]) steps.emplace_back(kStepNames[i], m_seconds[i]);
        return steps;
    }

    ImageStack correct(RawChunk chunk, PreprocessStats* stats) override;

private:
    /// Buffers and device corrections for chunks of `blockRows` rows (made
    /// again only when the shape changes: the last chunk of a run).
    void ensureShape(int blockRows);
    /// Copies `values` to `buffer` (grown when too small) on the stream.
    template <class T>
    T* upload(DeviceBuffer<T>& buffer, const T* values, std::size_t count, const char* what);
    /// Host <-> device copies, through pinned staging when large.
    void copyIn(void* d_target, const void* source, std::size_t bytes);
    void copyOut(void* target, const void* d_source, std::size_t bytes);
    PinnedStaging& staging() {
        if (!m_staging) m_staging = std::make_unique<PinnedStaging>();
        return *m_staging;
    }
    /// The flat-field kernel: the chunk's stored values -> transmissions (or
    /// line integrals) in m_chunk.
    void flatField(const RawChunk& chunk, const ChunkConstants& k);
    /// Stripe removal on every block row of m_chunk (the wavelet method on
    /// the logs of transmissions), and the damage guard's sums of the output
    /// rows, downloaded with the counters.
    void removeStripes(int blockRows, int rows, int margin, ValueKind kind, cudaStream_t stream);
    [[noreturn]] void throwNonFinite(const RawChunk& chunk, unsigned long long key) const;
    /// Brackets a device step with its events (collected after the chunk's last wait).
    void begin(Step step) {
        TOMO_CUDA_CHECK(cudaEventRecord(m_stepStart[step].get(), m_stream.get()));
        m_recorded[step] = true;
    }
    void end(Step step) { TOMO_CUDA_CHECK(cudaEventRecord(m_stepEnd[step].get(), m_stream.get())); }
    void collectSteps() {
        for (int i = 0; i < kSteps; ++i) {
            if (!m_recorded[i]) continue;
            float ms = 0.0f;
            TOMO_CUDA_CHECK(cudaEventElapsedTime(&ms, m_stepStart[i].get(), m_stepEnd[i].get()));
            m_seconds[i] += ms * 1e-3;
            m_ran[i] = true;
            m_recorded[i] = false;
        }
    }

    PreprocessingStage& m_stage;
    int m_device;
    Stream m_stream;
    int m_blockRows = 0;
    DeviceBuffer<unsigned char> m_raw;
    DeviceBuffer<float> m_chunk, m_stitched;
    DeviceBuffer<float> m_dark, m_scales, m_flats;
    DeviceBuffer<unsigned char> m_dead;
    DeviceBuffer<int> m_blendGroups;
    DeviceBuffer<float> m_blendWeights;
    DeviceBuffer<unsigned long long> m_counters; // the flat-field kernel's, then the log's clamped count
    // The ring damage guard: the output rows before the removal, its sums.
    DeviceBuffer<float> m_ringBefore;
    DeviceBuffer<double> m_ringColumns;
    DeviceBuffer<unsigned> m_ringSteps;
    std::vector<double> m_hostRingColumns;
    std::vector<unsigned> m_hostRingSteps;
    PinnedBuffer<unsigned long long> m_hostCounters;
    std::unique_ptr<DeviceZingers> m_zingers;
    std::unique_ptr<DeviceStripes> m_stripes;
    std::unique_ptr<DevicePaganin> m_paganin;
    std::unique_ptr<DeviceHalfAcquisition> m_halfAcquisition;
    std::unique_ptr<PinnedStaging> m_staging;
    Event m_stepStart[kSteps], m_stepEnd[kSteps];
    bool m_recorded[kSteps] = {};
    bool m_ran[kSteps] = {};
    double m_seconds[kSteps] = {};
};

void CudaChunkCorrector::ensureShape(int blockRows) {
    if (blockRows == m_blockRows) return;
    const DatasetInfo& i = m_stage.info();
    const CorrectionOptions& o = m_stage.options();
    const int P = i.projections, N = i.columns;
    m_zingers.reset();
    m_stripes.reset();
    m_paganin.reset();
    m_chunk.reset();
    m_chunk = DeviceBuffer<float>(m_device, static_cast<std::size_t>(blockRows) * P * N, "the chunk being corrected");
    if (o.zingers.enabled) m_zingers = std::make_unique<DeviceZingers>(m_device, P, N, blockRows);
    if (o.rings.method != RingMethod::Off)
        m_stripes = std::make_unique<DeviceStripes>(m_device, P, N, o.rings, blockRows);
    if (o.paganin.enabled) m_paganin = std::make_unique<DevicePaganin>(m_device, blockRows, N, o.paganin);
    if (const auto& layout = m_stage.halfAcquisition(); layout && !m_halfAcquisition)
        m_halfAcquisition = std::make_unique<DeviceHalfAcquisition>(m_device, *layout, P);
    m_blockRows = blockRows;
}

template <class T>
T* CudaChunkCorrector::upload(DeviceBuffer<T>& buffer, const T* values, std::size_t count, const char* what) {
    if (buffer.size() < count) {
        buffer.reset();
        buffer = DeviceBuffer<T>(m_device, count, what);
    }
    copyIn(buffer.get(), values, count * sizeof(T));
    return buffer.get();
}

void CudaChunkCorrector::copyIn(void* d_target, const void* source, std::size_t bytes) {
    if (bytes >= kStagedBytes)
        staging().upload(d_target, source, bytes, m_stream.get());
    else
        TOMO_CUDA_CHECK(cudaMemcpyAsync(d_target, source, bytes, cudaMemcpyHostToDevice, m_stream.get()));
}

void CudaChunkCorrector::copyOut(void* target, const void* d_source, std::size_t bytes) {
    if (bytes >= kStagedBytes)
        staging().download(target, d_source, bytes, m_stream.get());
    else
        TOMO_CUDA_CHECK(cudaMemcpyAsync(target, d_source, bytes, cudaMemcpyDeviceToHost, m_stream.get()));
}

void CudaChunkCorrector::flatField(const RawChunk& chunk, const ChunkConstants& k) {
    const DatasetInfo& i = m_stage.info();
    const std::size_t pixels = static_cast<std::size_t>(k.blockRows) * k.columns;
    // Each flat group's values at its place in one device buffer (the host
    // vectors live in `k` until correct() has waited for the stream).
    auto uploadGroups = [&](DeviceBuffer<float>& buffer, const std::vector<std::vector<float>>& groups,
                            const char* what) {
        if (buffer.size() < groups.size() * pixels) {
            buffer.reset();
            buffer = DeviceBuffer<float>(m_device, groups.size() * pixels, what);
        }
        for (std::size_t g = 0; g < groups.size(); ++g)
            copyIn(buffer.get() + g * pixels, groups[g].data(), pixels * sizeof(float));
        return buffer.get();
    };
    FlatFieldLaunch f;
    begin(kUpload);
    f.d_raw = upload(m_raw, reinterpret_cast<const unsigned char*>(chunk.values.data()), chunk.values.size(),
                     "the chunk's stored values");
    f.type = rawTypeOf(static_cast<int>(chunk.type));
    f.projections = i.projections;
    f.rows = k.blockRows;
    f.columns = k.columns;
    f.d_dark = upload(m_dark, k.dark.data(), pixels, "the flat-field constants");
    f.d_scale = uploadGroups(m_scales, k.scales, "the flat-field constants");
    f.d_dead = upload(m_dead, k.dead.data(), pixels, "the flat-field constants");
    if (!k.blends.empty()) {
        if (!m_blendGroups.get()) { // the same for every chunk
            std::vector<int> groups;
            std::vector<float> weights;
            for (const FlatBlend& b : k.blends) {
                groups.push_back(b.lower);
                groups.push_back(b.upper);
                weights.push_back(static_cast<float>(b.weight));
            }
            upload(m_blendGroups, groups.data(), groups.size(), "the flat blends");
            upload(m_blendWeights, weights.data(), weights.size(), "the flat blends");
            TOMO_CUDA_CHECK(cudaStreamSynchronize(m_stream.get())); // the host vectors go now
        }
        f.d_flats = uploadGroups(m_flats, k.flats, "the flat fields");
        f.d_blendGroups = m_blendGroups.get();
        f.d_blendWeights = m_blendWeights.get();
    }
    end(kUpload);
    f.saturation = k.saturation;
    f.interpolate = k.interpolate;
    f.takeLog = k.logInFlatField;
    f.d_out = m_chunk.get();
    f.d_counters = m_counters.get();
    f.countedFirst = chunk.margin;
    f.countedEnd = chunk.margin + chunk.rowCount;
    begin(kFlatField);
    launchFlatField(f, m_stream.get());
    end(kFlatField);
}

void CudaChunkCorrector::removeStripes(int blockRows, int rows, int margin, ValueKind kind, cudaStream_t stream) {
    const DatasetInfo& i = m_stage.info();
    const int P = i.projections, N = i.columns;
    const std::size_t sinogramSize = static_cast<std::size_t>(P) * N;
    const std::size_t outputValues = static_cast<std::size_t>(rows) * sinogramSize;
    float* const block = m_chunk.get();
    float* const output = block + static_cast<std::size_t>(margin) * sinogramSize;
    if (m_ringBefore.size() < outputValues) {
        m_ringBefore.reset();
        m_ringBefore = DeviceBuffer<float>(m_device, outputValues, "the rows before ring removal");
    }
    TOMO_CUDA_CHECK(cudaMemcpyAsync(m_ringBefore.get(), output, outputValues * sizeof(float),
                                    cudaMemcpyDeviceToDevice, stream));
    const bool onLogs = m_stage.options().rings.method == RingMethod::Wavelet && kind == ValueKind::Transmission;
    const std::size_t blockValues = static_cast<std::size_t>(blockRows) * sinogramSize;
    if (onLogs) launchLog(block, blockValues, stream);
    m_stripes->apply(block, blockRows, stream);
    if (onLogs) launchExp(block, blockValues, stream);

    const std::size_t columnValues = static_cast<std::size_t>(rows) * N * 4;
    const std::size_t stepValues = static_cast<std::size_t>(rows) * 2 * kRingNoiseBins;
    if (m_ringColumns.size() < columnValues) {
        m_ringColumns.reset();
        m_ringColumns = DeviceBuffer<double>(m_device, columnValues, "the ring guard's sums");
    }
    if (m_ringSteps.size() < stepValues) {
        m_ringSteps.reset();
        m_ringSteps = DeviceBuffer<unsigned>(m_device, stepValues, "the ring guard's histograms");
    }
    launchRingChange(m_ringBefore.get(), output, rows, P, N, ringGuardAngles(P), kind == ValueKind::Transmission,
                     m_ringColumns.get(), m_ringSteps.get(), stream);
    m_hostRingColumns.resize(columnValues);
    m_hostRingSteps.resize(stepValues);
    TOMO_CUDA_CHECK(cudaMemcpyAsync(m_hostRingColumns.data(), m_ringColumns.get(), columnValues * sizeof(double),
                                    cudaMemcpyDeviceToHost, stream));
    TOMO_CUDA_CHECK(cudaMemcpyAsync(m_hostRingSteps.data(), m_ringSteps.get(), stepValues * sizeof(unsigned),
                                    cudaMemcpyDeviceToHost, stream));
}

void CudaChunkCorrector::throwNonFinite(const RawChunk& chunk, unsigned long long key) const {
    const DatasetInfo& i = m_stage.info();
    const auto columns = static_cast<unsigned long long>(i.columns);
    const auto perRow = static_cast<unsigned long long>(i.projections) * columns;
    throw DataError(i.path.string() + ": value is NaN, inf or beyond float32's range at row " +
                    std::to_string(m_stage.detectorRow(chunk.firstRow, static_cast<int>(key / perRow))) +
                    ", angle " + std::to_string(key / columns % static_cast<unsigned long long>(i.projections)) +
                    ", column " + std::to_string(key % columns) + "; expected finite values within float32's range");
}

ImageStack CudaChunkCorrector::correct(RawChunk chunk, PreprocessStats* stats) {
    PreprocessStats found;
    const auto prepareStart = std::chrono::steady_clock::now();
    const ChunkConstants k = m_stage.prepare(chunk, found);
    m_seconds[kPrepare] += std::chrono::duration<double>(std::chrono::steady_clock::now() - prepareStart).count();
    m_ran[kPrepare] = true;
    const DatasetInfo& i = m_stage.info();
    const CorrectionOptions& o = m_stage.options();
    const int P = i.projections, N = i.columns, rows = chunk.rowCount, margin = chunk.margin;
    const std::size_t sinogramSize = static_cast<std::size_t>(P) * N;
    DeviceScope scope(m_device);
    cudaStream_t stream = m_stream.get();
    ensureShape(k.blockRows);
    resetFlatFieldCounters(m_counters.get(), stream);
    TOMO_CUDA_CHECK(cudaMemsetAsync(m_counters.get() + kLogClamped, 0, sizeof(unsigned long long), stream));
    if (i.logCorrected) {
        begin(kUpload);
        copyIn(m_chunk.get(), chunk.data.data.data(), chunk.data.data.size() * sizeof(float));
        end(kUpload);
    } else
        flatField(chunk, k);
    const ValueKind kind = i.logCorrected ? ValueKind::LineIntegral : ValueKind::Transmission;

    if (m_zingers) {
        begin(kZingers);
        const DeviceZingers::Found z =
            m_zingers->apply(m_chunk.get(), k.blockRows, o.zingers, kind, stream, margin, margin + rows,
                             PreprocessStats::kListLimit);
        end(kZingers);
        for (int r = margin; r < margin + rows; ++r) found.zingerCount += z.counts[static_cast<std::size_t>(r)];
        for (PixelPosition p : z.positions) {
            p.row = m_stage.detectorRow(chunk.firstRow, p.row);
            found.zingers.push_back(p);
        }
    }
    if (o.flatField.backgroundCount > 0) {
        begin(kBackground);
        launchBackgroundNormalisation(m_chunk.get(), static_cast<long long>(k.blockRows) * P, N,
                                      o.flatField.backgroundFirst, o.flatField.backgroundCount,
                                      kind == ValueKind::LineIntegral, stream);
        end(kBackground);
    }
    if (m_stripes) {
        begin(kRings);
        removeStripes(k.blockRows, rows, margin, kind, stream);
        end(kRings);
    }
    if (m_paganin) {
        begin(kPaganin);
        m_paganin->apply(m_chunk.get(), P, margin, rows, stream);
        end(kPaganin);
    }

    float* output = m_chunk.get() + static_cast<std::size_t>(margin) * sinogramSize;
    if (!i.logCorrected && !k.logInFlatField) {
        begin(kLog);
        launchMinusLog(output, static_cast<std::size_t>(rows) * sinogramSize, m_counters.get() + kLogClamped, stream);
        end(kLog);
    }
    int outColumns = N, outProjections = P;
    if (m_halfAcquisition) {
        const HalfAcquisitionLayout& layout = *m_stage.halfAcquisition();
        outColumns = layout.columns;
        outProjections = static_cast<int>(layout.views.size());
        const std::size_t values = static_cast<std::size_t>(rows) * outColumns * outProjections;
        if (m_stitched.size() < values) {
            m_stitched.reset();
            m_stitched = DeviceBuffer<float>(m_device, values, "the stitched sinograms");
        }
        begin(kStitch);
        m_halfAcquisition->apply(output, rows, m_stitched.get(), stream);
        end(kStitch);
        output = m_stitched.get();
    }
    begin(kDownload);
    ImageStack out;
    out.width = outColumns;
    out.height = outProjections;
    out.depth = rows;
    out.data = m_stage.sinogramBuffer(static_cast<std::size_t>(rows) * outColumns * outProjections);
    copyOut(out.data.data(), output, out.data.size() * sizeof(float));
    end(kDownload);
    TOMO_CUDA_CHECK(cudaMemcpyAsync(m_hostCounters.get(), m_counters.get(), m_counters.bytes(), cudaMemcpyDeviceToHost,
                                    stream));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream));
    collectSteps();
    const unsigned long long* counters = m_hostCounters.get();
    if (!i.logCorrected) {
        if (counters[2] != ~0ull) throwNonFinite(chunk, counters[2]);
        PreprocessStats flat;
        // Keys count block rows from 0: their rows start at the chunk's first block row.
        readFlatFieldStats(counters, i.path.string(), chunk.firstRow - margin, P, N, flat);
        found.clamped += flat.clamped;
        found.badValueCount += flat.badValueCount;
        found.badValues = std::move(flat.badValues);
    }
    found.clampedByCorrections += static_cast<std::size_t>(counters[kLogClamped]);
    if (m_stripes)
        for (int r = 0; r < rows; ++r) { // the guard's sums, summed over the columns in order as the CPU does
            RingChangeSums sums;
            sums.projections = P;
            sums.columns = N;
            for (int c = 0; c < N; ++c) {
                const double* column = m_hostRingColumns.data() + (static_cast<std::size_t>(r) * N + c) * 4;
                sums.changeSum += column[0];
                sums.lineIntegralSum += column[1];
                sums.signalEnergy += column[2];
                sums.nonStripeEnergy += column[3];
            }
            const auto steps = m_hostRingSteps.begin() + static_cast<std::ptrdiff_t>(r) * 2 * kRingNoiseBins;
            sums.signalSteps.assign(steps, steps + kRingNoiseBins);
            sums.changeSteps.assign(steps + kRingNoiseBins, steps + 2 * kRingNoiseBins);
            found.rings.add(ringChange(sums), m_stage.detectorRow(chunk.firstRow, margin + r));
        }
    m_stage.recycle(std::move(chunk));
    if (stats) *stats = std::move(found);
    return out;
}

} // namespace

std::unique_ptr<ChunkCorrector> createChunkCorrector(PreprocessingStage& stage, int device) {
    return std::make_unique<CudaChunkCorrector>(stage, device);
}

} // namespace tomo::cuda
