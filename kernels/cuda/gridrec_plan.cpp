#include "gridrec_plan.h"

#include "cuda_resources.h"
#include "gpu_filter.h"
#include "gridrec_kernels.h"
#include "gridrec_tables.h"
#include "host_copy.h"
#include "raw_rows_upload.h"
#include "stage_spans.h"

#include "tomo/error.h"
#include "tomo/gridrec.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tomo::cuda {

namespace {

constexpr int kMaxSlicesCap = 256;
constexpr double kStoreBudget = 0.75; // share of the free device memory the kept spectra may take
constexpr double kMatrixBudget = 0.25; // share of the free device memory a lone slice's tap matrix may take
// The heavy points the tap count may list: 298 at 2048^2 from 2048 views,
// growing with the square of the views (this many at ~30 000); more, and
// no matrix (the search stays).
constexpr long long kMaxHeavyPoints = 1 << 16;

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A lone slice's grid: Hermitian, its columns 0..G/2 -> the real grid in
/// place (rows of 2 (G/2 + 1) floats).
FftLayout halfGridLayout(int size) {
    FftLayout l = gridrecGridLayout(size);
    l.type = CUFFT_C2R;
    l.inembed[1] = size / 2 + 1;
    l.onembed[1] = 2 * (size / 2 + 1);
    l.idist = static_cast<long long>(size) * (size / 2 + 1);
    l.odist = 2 * l.idist;
    return l;
}

class GridrecPlan final : public ReconstructionPlan {
public:
    GridrecPlan(const ReconGeometry& geometry, const ReconOptions& options);
    ~GridrecPlan() override { drain(); }

    void setSinograms(std::span<const float> sinograms, int count) override;
    /// Batch by batch: batch i + 1's upload overlaps batch i's gridding.
    void reconstruct(std::span<const float> sinograms, int count, std::span<float> slices) override;
    /// Raw rows as stored go up (half the bytes of float for uint16) and are
    /// corrected on the device (raw_rows_upload.h) before the filter; the
    /// rest is reconstruct().
    bool correctsRawRows() const override { return true; }
    PreprocessStats reconstructRaw(const RawRows& raw, const FlatFieldRows& field, std::span<float> slices) override;
    void backproject(std::span<float> slices) override;
    void setAxis(double axis, std::span<const double> offsets) override;
    void setRegion(const Region& region) override;
    int maxSlices() const override { return m_maxSlices; }
    std::size_t memoryBytes() const override;
    StageTimes lastStageTimes() const override { return m_times; }
    HostBuffer allocateHost(std::size_t bytes) const override { return allocatePageLockedHost(m_device, bytes); }

private:
    /// A download through h_out, and an upload through h_in, go in pieces
    /// (of at least 4 MiB), as the texture plans' do: the host copy of one
    /// piece overlaps the DMA of the next (the live preview's lone slice:
    /// 16 MiB at 2048^2).
    static constexpr int kPieces = 4;
    static std::size_t pieceBytes(std::size_t bytes) {
        return std::max(std::size_t{4} << 20, (bytes + kPieces - 1) / kPieces);
    }
    struct Slot {
        DeviceBuffer<float> d_in;  ///< a batch of sinograms
        PinnedBuffer<float> h_in;  ///< staging, made on first use (page-locked callers need none)
        DeviceBuffer<float> d_out; ///< a batch of region slices
        PinnedBuffer<float> h_out;
        Event uploaded, filtered, computed, downloaded;
        Event downloadedPiece[kPieces]; ///< of a download through h_out
    };

    int batchSlices() const { return 2 * m_batchPairs; }
    std::size_t sinogramValues() const {
        return static_cast<std::size_t>(m_setup->projections) * static_cast<std::size_t>(m_setup->bins);
    }
    std::size_t pairSpectrumFloats() const { return m_setup->spectrumBytes() / sizeof(float); }
    std::size_t pairSamplesFloats() const { return m_setup->samplesBytes() / sizeof(float); }
    std::size_t pairGridFloats() const { return m_setup->gridBytes() / sizeof(float); }

    /// d_samples for m_batchPairs pairs of m_setup's rows.
    void allocateSamples();
    /// Row plan of the current length; it and the grid plan share one cuFFT
    /// work area (they run one after another on m_compute).
    void makeFftPlans();
    void ensureOutput(std::size_t pixels);
    /// Longer rows (`grown`, for an axis that needs them): the kept spectra rebuilt.
    void growRows(std::unique_ptr<gridrec::Setup> grown);

    /// What a batch uploads: float sinograms, or raw rows with their
    /// flat-field constants (corrected into d_in by filterBatch).
    struct BatchInput {
        const float* sinograms = nullptr;
        const RawRows* raw = nullptr;
        const FlatFieldRows* field = nullptr;
    };
    /// Upload + filter of every batch of `count` slices into the kept
    /// spectra and, unless `slices` is empty, gridding, crop and download of
    /// each batch after its filter (reconstruct: the next batch's upload
    /// overlaps this one's gridding); the flat field's statistics of raw input.
    PreprocessStats runBatches(int count, const BatchInput& input, std::span<float> slices);
    void uploadBatch(int batch, int slices, const BatchInput& input);
    void filterBatch(int batch, int slices, const BatchInput& input);
    /// Phase, gather and inverse FFT of the pairs of `slices` slices from
    /// `firstPair` into d_grid (a lone last slice: half its grid, C2R).
    void gridPairs(int firstPair, int slices);
    /// The gather of a lone slice whose grid is `gather`: by the tap matrix,
    /// built at the second lone slice of the same rows where it fits (the
    /// live preview grids one slice again at every axis change; a batch's
    /// odd last slice is gridded once and keeps the search).
    void gatherLoneSlice(const GatherLaunch& gather);
    /// Counts, offsets and fills the tap matrix; false (and none kept) when
    /// it would take more than kMatrixBudget of the free device memory.
    bool buildTapMatrix(const GatherLaunch& gather);
    void cropBatch(int batch, int slices);
    /// (Gridding when `grid`,) crop and download of a batch into `output`:
    /// by DMA when `direct`, else through h_out (finishDownload copies out).
    void outputBatch(int batch, int slices, bool grid, float* output, bool direct);
    void download(int batch, int slices, float* direct);
    void finishDownload(int batch, int slices, float* h_dst);
    void drain() noexcept;

    gridrec::Parameters m_parameters;
    std::unique_ptr<gridrec::Setup> m_setup;
    int m_device = 0;
    int m_batchPairs = 1;
    int m_maxSlices = 0;
    int m_count = 0;
    bool m_gridValid = false; ///< d_grid holds every pair for the current slices and axis
    Region m_lastRegion;      ///< of the last backproject()

    Stream m_compute, m_copyIn, m_copyOut;
    GridrecTables m_tables;
    DeviceBuffer<float> d_spectra; ///< [pair][projection][L] complex of every kept slice
    DeviceBuffer<float> d_samples; ///< [pair of the batch][canonical row][sampleStride] complex
    DeviceBuffer<float> d_grid;    ///< [pair of the batch][G][G] complex
    DeviceBuffer<unsigned char> d_work;
    /// The lone slice's tap matrix (gridrec_kernels.h, TapMatrix), for the
    /// current rows; m_loneGrids counts the lone slices gridded with them.
    struct LoneMatrix {
        DeviceBuffer<int> order;
        DeviceBuffer<long long> offsets;
        DeviceBuffer<int> index;
        DeviceBuffer<float> weight;
        int heavyCount = 0;
        DeviceBuffer<int> heavyPoints;
        DeviceBuffer<long long> heavyOffsets;
        DeviceBuffer<int> heavyIndex;
        DeviceBuffer<float> heavyWeight;

        TapMatrix taps() const { return {order.get(), offsets.get(), index.get(), weight.get()}; }
        HeavyTaps heavy() const {
            return {heavyCount, heavyPoints.get(), heavyOffsets.get(), heavyIndex.get(), heavyWeight.get()};
        }
        std::size_t bytes() const {
            return order.bytes() + offsets.bytes() + index.bytes() + weight.bytes() + heavyPoints.bytes() +
                   heavyOffsets.bytes() + heavyIndex.bytes() + heavyWeight.bytes();
        }
    };
    std::optional<LoneMatrix> m_lone;
    int m_loneGrids = 0;
    bool m_matrixRefused = false; ///< too large for these rows: the search stays
    FftPlan m_rowPlan, m_gridPlan, m_halfGridPlan;
    std::unique_ptr<GpuFilter> m_filter;
    Slot m_slots[2];
    std::optional<RawRowsUpload> m_raw; ///< raw batches (slot = batch % 2), made by the first reconstructRaw()
    HostCopier m_copier;

    StageSpans m_spans;
    StageTimes m_times;
};

GridrecPlan::GridrecPlan(const ReconGeometry& geometry, const ReconOptions& options)
    : ReconstructionPlan(geometry, options), m_parameters(gridrec::checkOptions(gridrec::kCudaName, options)),
      m_device(options.device),
      m_copier(static_cast<int>(std::clamp(std::thread::hardware_concurrency() / 2, 1u, 8u))) {
    const std::string who = std::string("strategy '") + gridrec::kCudaName + "'";
    int devices = 0;
    TOMO_CUDA_CHECK(cudaGetDeviceCount(&devices));
    if (m_device < 0 || m_device >= devices)
        throw InvalidArgument(who + ": device " + std::to_string(m_device) + " does not exist (" +
                              std::to_string(devices) + " CUDA device(s))");
    DeviceScope scope(m_device);
    m_setup = std::make_unique<gridrec::Setup>(m_geometry, m_parameters);
    const gridrec::Setup& s = *m_setup;

    // Pairs per batch: what fits in a quarter of the free memory, at most kGridrecBatchPairs.
    std::size_t freeBytes = 0, totalBytes = 0;
    TOMO_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    const std::size_t padded = static_cast<std::size_t>(paddedLength(s.bins));
    const std::size_t perPair = s.samplesBytes() + s.gridBytes() +           // samples, grid
                                2 * 2 * sinogramValues() * sizeof(float) +   // d_in x 2
                                2 * 2 * m_geometry.region.pixels() * sizeof(float) + // d_out x 2
                                static_cast<std::size_t>(s.projections) * padded * 8; // filter workspace
    const std::size_t fixed = s.gridBytes() + s.spectrumBytes();            // cuFFT work (estimate), one pair's spectra
    if (perPair + fixed > freeBytes) throwDeviceOutOfMemory(m_device, "one pair of slices (" + who + ")", perPair + fixed);
    m_batchPairs = static_cast<int>(std::clamp<std::size_t>(freeBytes / 4 / perPair, 1, kGridrecBatchPairs));

    m_compute = Stream::create();
    m_copyIn = Stream::create();
    m_copyOut = Stream::create();
    cudaStream_t stream = m_compute.get();
    m_tables = GridrecTables(m_device, s, "gridrec", stream);
    allocateSamples();
    m_tables.uploadShifts(s, m_geometry.geometry, stream);
    m_gridPlan = FftPlan(m_device, gridrecGridLayout(s.gridSize), "the gridrec grid transform (" + std::to_string(s.gridSize) + "^2)");
    m_halfGridPlan = FftPlan(m_device, halfGridLayout(s.gridSize),
                             "the gridrec grid transform of a lone slice (" + std::to_string(s.gridSize) + "^2)");
    makeFftPlans();
    d_grid = DeviceBuffer<float>(m_device, m_batchPairs * pairGridFloats(), "the gridrec grids");

    m_filter = std::make_unique<GpuFilter>(m_device, s.bins, batchSlices() * s.projections, options.filter,
                                           viewWeights(m_geometry.geometry), stream);
    for (Slot& slot : m_slots) {
        slot.d_in = DeviceBuffer<float>(m_device, batchSlices() * sinogramValues(), "the sinogram input buffers");
        slot.uploaded = Event::create(false);
        slot.filtered = Event::create(false);
        slot.computed = Event::create(false);
        slot.downloaded = Event::create(false);
        for (Event& e : slot.downloadedPiece) e = Event::create(false);
    }
    ensureOutput(m_geometry.region.pixels());

    // What the kept spectra may take: a share of what is free now.
    TOMO_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    const double perSlice = 0.5 * static_cast<double>(s.spectrumBytes());
    m_maxSlices = static_cast<int>(std::min<double>(kStoreBudget * static_cast<double>(freeBytes) / perSlice, kMaxSlicesCap));
    if (m_maxSlices < 1) throwDeviceOutOfMemory(m_device, "the spectra of one slice (" + who + ")", s.spectrumBytes());
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void GridrecPlan::drain() noexcept {
    for (const Stream* s : {&m_compute, &m_copyIn, &m_copyOut})
        if (s->get()) (void)cudaStreamSynchronize(s->get());
}

void GridrecPlan::allocateSamples() {
    d_samples = DeviceBuffer<float>(); // the old size is freed first
    d_samples = DeviceBuffer<float>(m_device, m_batchPairs * pairSamplesFloats(), "the gridrec samples");
}

void GridrecPlan::makeFftPlans() {
    const gridrec::Setup& s = *m_setup;
    m_rowPlan = FftPlan(m_device, gridrecRowsLayout(s.rowLength, s.projections),
                        "the gridrec row transforms (" + std::to_string(s.projections) + " rows of " +
                            std::to_string(s.rowLength) + ")");
    const std::size_t work = std::max({m_rowPlan.workBytes(), m_gridPlan.workBytes(), m_halfGridPlan.workBytes()});
    if (d_work.size() < work) {
        d_work = DeviceBuffer<unsigned char>();
        d_work = DeviceBuffer<unsigned char>(m_device, work, "the cuFFT work area");
    }
    for (const FftPlan* plan : {&m_rowPlan, &m_gridPlan, &m_halfGridPlan}) {
        TOMO_CUFFT_CHECK(cufftSetWorkArea(plan->get(), d_work.get()));
        TOMO_CUFFT_CHECK(cufftSetStream(plan->get(), m_compute.get()));
    }
}

void GridrecPlan::ensureOutput(std::size_t pixels) {
    const std::size_t values = static_cast<std::size_t>(batchSlices()) * pixels;
    if (m_slots[0].d_out.size() >= values) return;
    drain(); // the old buffers may still be read by a download
    for (Slot& slot : m_slots) {
        slot.d_out = DeviceBuffer<float>();
        slot.d_out = DeviceBuffer<float>(m_device, values, "the slice output buffers");
        slot.h_out.reset();
    }
}

void GridrecPlan::growRows(std::unique_ptr<gridrec::Setup> grown) {
    const int from = m_setup->rowLength;
    const int to = grown->rowLength;
    const int pairs = (m_count + 1) / 2;
    cudaStream_t stream = m_compute.get();
    if (pairs > 0) {
        // Back to the rows (the inverse of the kept FFT), then longer rows.
        for (int q = 0; q < pairs; ++q) {
            auto* rows = reinterpret_cast<cufftComplex*>(d_spectra.get() + q * pairSpectrumFloats());
            TOMO_CUFFT_CHECK(cufftExecC2C(m_rowPlan.get(), rows, rows, CUFFT_INVERSE));
        }
        DeviceBuffer<float> longer(m_device, pairs * (grown->spectrumBytes() / sizeof(float)), "the kept spectra");
        launchExtendRows(d_spectra.get(), from, longer.get(), to, m_setup->bins, pairs * m_setup->projections, stream);
        TOMO_CUDA_CHECK(cudaStreamSynchronize(stream)); // the old spectra are freed next
        d_spectra = std::move(longer);
    }
    m_setup = std::move(grown);
    // The samples moved (k -> k G / L'): a new matrix if the preview goes on.
    m_lone.reset();
    m_loneGrids = 0;
    m_matrixRefused = false;
    m_tables.uploadRowTables(*m_setup, stream);
    allocateSamples();
    makeFftPlans();
    for (int q = 0; q < pairs; ++q) {
        auto* rows = reinterpret_cast<cufftComplex*>(d_spectra.get() + q * pairSpectrumFloats());
        TOMO_CUFFT_CHECK(cufftExecC2C(m_rowPlan.get(), rows, rows, CUFFT_FORWARD));
    }
}

// ----------------------------------------------------------------- stages

void GridrecPlan::uploadBatch(int batch, int slices, const BatchInput& input) {
    Slot& slot = m_slots[batch % 2];
    const int first = batch * batchSlices();
    TOMO_CUDA_CHECK(cudaEventSynchronize(slot.uploaded.get()));                     // the staging half is free again
    TOMO_CUDA_CHECK(cudaStreamWaitEvent(m_copyIn.get(), slot.filtered.get(), 0)); // d_in no longer read
    const int span = m_spans.begin(StageSpans::kUpload, m_copyIn.get());
    if (input.raw) {
        m_spans.addHost(StageSpans::kUpload,
                        m_raw->upload(batch % 2, *input.raw, *input.field, first, slices, m_copier, m_copyIn.get()));
    } else {
        const float* h_src = input.sinograms + static_cast<std::size_t>(first) * sinogramValues();
        const std::size_t bytes = static_cast<std::size_t>(slices) * sinogramValues() * sizeof(float);
        if (isPageLocked(h_src, bytes)) {
            TOMO_CUDA_CHECK(cudaMemcpyAsync(slot.d_in.get(), h_src, bytes, cudaMemcpyHostToDevice, m_copyIn.get()));
        } else {
            if (slot.h_in.size() < static_cast<std::size_t>(batchSlices()) * sinogramValues()) {
                slot.h_in.reset();
                slot.h_in = PinnedBuffer<float>(static_cast<std::size_t>(batchSlices()) * sinogramValues(),
                                                "the sinogram input buffers");
            }
            // Piece by piece: the DMA of one piece overlaps the host copy of
            // the next (and the whole batch the previous batch's filtering).
            auto* staging = reinterpret_cast<unsigned char*>(slot.h_in.get());
            auto* device = reinterpret_cast<unsigned char*>(slot.d_in.get());
            const auto* source = reinterpret_cast<const unsigned char*>(h_src);
            const std::size_t piece = pieceBytes(bytes);
            for (std::size_t offset = 0; offset < bytes; offset += piece) {
                const std::size_t n = std::min(piece, bytes - offset);
                const auto start = Clock::now();
                m_copier.copy(staging + offset, source + offset, n);
                m_spans.addHost(StageSpans::kUpload, secondsSince(start));
                TOMO_CUDA_CHECK(
                    cudaMemcpyAsync(device + offset, staging + offset, n, cudaMemcpyHostToDevice, m_copyIn.get()));
            }
        }
    }
    m_spans.end(span, m_copyIn.get());
    TOMO_CUDA_CHECK(cudaEventRecord(slot.uploaded.get(), m_copyIn.get()));
}

void GridrecPlan::filterBatch(int batch, int slices, const BatchInput& input) {
    Slot& slot = m_slots[batch % 2];
    const gridrec::Setup& s = *m_setup;
    cudaStream_t stream = m_compute.get();
    TOMO_CUDA_CHECK(cudaStreamWaitEvent(stream, slot.uploaded.get(), 0));
    const int span = m_spans.begin(StageSpans::kFilter, stream);
    if (input.raw)
        m_raw->correct(batch % 2, *input.raw, *input.field, batch * batchSlices(), slices, slot.d_in.get(), stream);
    m_filter->filter(slot.d_in.get(), slices * s.projections, stream);
    const int firstPair = batch * m_batchPairs;
    PackRowsLaunch pack;
    pack.d_fft = m_filter->d_spectrum();
    pack.layout = m_filter->layout(slices * s.projections);
    pack.d_weights = m_filter->d_weights();
    pack.projections = s.projections;
    pack.slices = slices;
    pack.rowLength = s.rowLength;
    pack.d_rows = d_spectra.get() + firstPair * pairSpectrumFloats();
    launchPackRows(pack, stream);
    for (int q = 0; q < (slices + 1) / 2; ++q) {
        auto* rows = reinterpret_cast<cufftComplex*>(pack.d_rows + q * pairSpectrumFloats());
        TOMO_CUFFT_CHECK(cufftExecC2C(m_rowPlan.get(), rows, rows, CUFFT_FORWARD));
    }
    m_spans.end(span, stream);
    TOMO_CUDA_CHECK(cudaEventRecord(slot.filtered.get(), stream));
}

void GridrecPlan::gridPairs(int firstPair, int slices) {
    const gridrec::Setup& s = *m_setup;
    const int pairs = (slices + 1) / 2;
    const int full = slices / 2; // pairs of two slices; a lone one after them
    cudaStream_t stream = m_compute.get();
    launchPhase(m_tables.phase(s, d_spectra.get() + firstPair * pairSpectrumFloats(), pairs, d_samples.get()), stream);
    GatherLaunch gather = m_tables.gather(s, d_samples.get(), pairSamplesFloats(), full, d_grid.get());
    if (full > 0) launchGather(gather, stream);
    if (full < pairs) { // the lone slice: half the points, half the transform
        gather.view.samples += full * pairSamplesFloats();
        gather.d_grid += full * pairGridFloats();
        m_tables.useHalfGrid(s, gather);
        gatherLoneSlice(gather);
    }
    for (int q = 0; q < pairs; ++q) {
        auto* grid = reinterpret_cast<cufftComplex*>(d_grid.get() + q * pairGridFloats());
        if (q < full) TOMO_CUFFT_CHECK(cufftExecC2C(m_gridPlan.get(), grid, grid, CUFFT_INVERSE));
        else TOMO_CUFFT_CHECK(cufftExecC2R(m_halfGridPlan.get(), grid, reinterpret_cast<cufftReal*>(grid)));
    }
}

void GridrecPlan::gatherLoneSlice(const GatherLaunch& gather) {
    const bool reused = ++m_loneGrids >= 2;
    if (!m_lone && reused && !m_matrixRefused) m_matrixRefused = !buildTapMatrix(gather);
    if (!m_lone) {
        launchGather(gather, m_compute.get());
        return;
    }
    launchMatrixGather(gather, m_lone->taps(), m_lone->heavy(), m_compute.get());
}

bool GridrecPlan::buildTapMatrix(const GatherLaunch& gather) {
    cudaStream_t stream = m_compute.get();
    const long long gridPoints = lonePoints(gather);
    if (gridPoints >= (1LL << 31)) return false; // a point index is an int
    const auto groups = static_cast<std::size_t>(tapGroups(gather));
    LoneMatrix lone;
    lone.order = DeviceBuffer<int>(m_device, groups * kTapGroup, "the lone slice's tap order");
    lone.offsets = DeviceBuffer<long long>(m_device, groups + 1, "the lone slice's tap offsets");
    long long rows = 0;
    std::vector<int> heavyPoints, heavyTaps;
    {
        DeviceBuffer<long long> widths(m_device, groups + 1, "the lone slice's tap counts");
        const std::size_t workBytes = countTapsWorkBytes(gather);
        DeviceBuffer<unsigned char> work(m_device, workBytes, "the lone slice's tap count scan");
        HeavyList list;
        list.capacity = static_cast<int>(std::min<long long>(gridPoints, kMaxHeavyPoints));
        const auto capacity = static_cast<std::size_t>(list.capacity);
        DeviceBuffer<int> listPoints(m_device, capacity, "the lone slice's heavy points");
        DeviceBuffer<int> listTaps(m_device, capacity, "the lone slice's heavy points");
        DeviceBuffer<int> listCount(m_device, 1, "the lone slice's heavy points");
        list.d_points = listPoints.get();
        list.d_taps = listTaps.get();
        list.d_count = listCount.get();
        launchCountTaps(gather, lone.order.get(), widths.get(), lone.offsets.get(), work.get(), workBytes, list,
                        stream);
        int heavy = 0;
        TOMO_CUDA_CHECK(
            cudaMemcpyAsync(&rows, lone.offsets.get() + groups, sizeof rows, cudaMemcpyDeviceToHost, stream));
        TOMO_CUDA_CHECK(cudaMemcpyAsync(&heavy, list.d_count, sizeof heavy, cudaMemcpyDeviceToHost, stream));
        TOMO_CUDA_CHECK(cudaStreamSynchronize(stream)); // the counts; widths and work are freed next
        if (heavy > list.capacity) return false;
        heavyPoints.resize(static_cast<std::size_t>(heavy));
        heavyTaps.resize(heavyPoints.size());
        TOMO_CUDA_CHECK(cudaMemcpyAsync(heavyPoints.data(), list.d_points, heavyPoints.size() * sizeof(int),
                                        cudaMemcpyDeviceToHost, stream));
        TOMO_CUDA_CHECK(cudaMemcpyAsync(heavyTaps.data(), list.d_taps, heavyTaps.size() * sizeof(int),
                                        cudaMemcpyDeviceToHost, stream));
        TOMO_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    // The heavy points, the most taps first (they run first), each's run of
    // taps after the previous one's.
    std::vector<int> byTaps(heavyPoints.size());
    std::iota(byTaps.begin(), byTaps.end(), 0);
    std::sort(byTaps.begin(), byTaps.end(), [&](int a, int b) {
        return heavyTaps[a] != heavyTaps[b] ? heavyTaps[a] > heavyTaps[b] : heavyPoints[a] < heavyPoints[b];
    });
    std::vector<int> points(byTaps.size());
    std::vector<long long> offsets(byTaps.size() + 1, 0);
    for (std::size_t h = 0; h < byTaps.size(); ++h) {
        points[h] = heavyPoints[byTaps[h]];
        offsets[h + 1] = offsets[h] + heavyTaps[byTaps[h]];
    }
    const long long slots = rows * kTapGroup;
    std::size_t freeBytes = 0, totalBytes = 0;
    TOMO_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    const std::size_t bytes = static_cast<std::size_t>(slots + offsets.back()) * (sizeof(int) + sizeof(float));
    if (static_cast<double>(bytes) > kMatrixBudget * static_cast<double>(freeBytes)) return false;
    lone.index = DeviceBuffer<int>(m_device, static_cast<std::size_t>(slots), "the lone slice's tap matrix");
    lone.weight = DeviceBuffer<float>(m_device, static_cast<std::size_t>(slots), "the lone slice's tap matrix");
    lone.heavyCount = static_cast<int>(points.size());
    if (!points.empty()) {
        const auto heavyTapCount = static_cast<std::size_t>(offsets.back());
        lone.heavyPoints = DeviceBuffer<int>(m_device, points.size(), "the lone slice's heavy points");
        lone.heavyOffsets = DeviceBuffer<long long>(m_device, offsets.size(), "the lone slice's heavy points");
        lone.heavyIndex = DeviceBuffer<int>(m_device, heavyTapCount, "the lone slice's heavy points' taps");
        lone.heavyWeight = DeviceBuffer<float>(m_device, heavyTapCount, "the lone slice's heavy points' taps");
        TOMO_CUDA_CHECK(cudaMemcpyAsync(lone.heavyPoints.get(), points.data(), points.size() * sizeof(int),
                                        cudaMemcpyHostToDevice, stream));
        TOMO_CUDA_CHECK(cudaMemcpyAsync(lone.heavyOffsets.get(), offsets.data(), offsets.size() * sizeof(long long),
                                        cudaMemcpyHostToDevice, stream));
    }
    launchFillTaps(gather, lone.taps(), lone.index.get(), lone.weight.get(), stream);
    launchFillHeavyTaps(gather, lone.heavy(), lone.heavyIndex.get(), lone.heavyWeight.get(), stream);
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream)); // `points` and `offsets` are freed on return
    m_lone = std::move(lone);
    return true;
}

void GridrecPlan::cropBatch(int batch, int slices) {
    const gridrec::Setup& s = *m_setup;
    const Region& r = m_geometry.region;
    CropLaunch crop = m_tables.crop(s, d_grid.get(), slices, m_slots[batch % 2].d_out.get());
    crop.regionX = r.x;
    crop.regionY = r.y;
    crop.regionWidth = r.width;
    crop.regionHeight = r.height;
    launchCrop(crop, m_compute.get());
}

void GridrecPlan::outputBatch(int batch, int slices, bool grid, float* output, bool direct) {
    Slot& slot = m_slots[batch % 2];
    cudaStream_t stream = m_compute.get();
    TOMO_CUDA_CHECK(cudaStreamWaitEvent(stream, slot.downloaded.get(), 0)); // d_out no longer read
    const int span = m_spans.begin(StageSpans::kBackproject, stream);
    if (grid) gridPairs(batch * m_batchPairs, slices);
    cropBatch(batch, slices);
    m_spans.end(span, stream);
    TOMO_CUDA_CHECK(cudaEventRecord(slot.computed.get(), stream));
    download(batch, slices, direct ? output : nullptr);
}

void GridrecPlan::download(int batch, int slices, float* direct) {
    Slot& slot = m_slots[batch % 2];
    const std::size_t bytes = static_cast<std::size_t>(slices) * m_geometry.region.pixels() * sizeof(float);
    TOMO_CUDA_CHECK(cudaStreamWaitEvent(m_copyOut.get(), slot.computed.get(), 0));
    const int span = m_spans.begin(StageSpans::kDownload, m_copyOut.get());
    if (direct) {
        TOMO_CUDA_CHECK(cudaMemcpyAsync(direct, slot.d_out.get(), bytes, cudaMemcpyDeviceToHost, m_copyOut.get()));
    } else {
        if (slot.h_out.size() < slot.d_out.size()) {
            slot.h_out.reset();
            slot.h_out = PinnedBuffer<float>(slot.d_out.size(), "the slice output buffers");
        }
        auto* staging = reinterpret_cast<unsigned char*>(slot.h_out.get());
        const auto* source = reinterpret_cast<const unsigned char*>(slot.d_out.get());
        const std::size_t piece = pieceBytes(bytes);
        for (std::size_t offset = 0, i = 0; offset < bytes; offset += piece, ++i) {
            TOMO_CUDA_CHECK(cudaMemcpyAsync(staging + offset, source + offset, std::min(piece, bytes - offset),
                                            cudaMemcpyDeviceToHost, m_copyOut.get()));
            TOMO_CUDA_CHECK(cudaEventRecord(slot.downloadedPiece[i].get(), m_copyOut.get()));
        }
    }
    m_spans.end(span, m_copyOut.get());
    TOMO_CUDA_CHECK(cudaEventRecord(slot.downloaded.get(), m_copyOut.get()));
}

void GridrecPlan::finishDownload(int batch, int slices, float* h_dst) {
    Slot& slot = m_slots[batch % 2];
    const std::size_t bytes = static_cast<std::size_t>(slices) * m_geometry.region.pixels() * sizeof(float);
    const std::size_t piece = pieceBytes(bytes);
    for (std::size_t offset = 0, i = 0; offset < bytes; offset += piece, ++i) {
        TOMO_CUDA_CHECK(cudaEventSynchronize(slot.downloadedPiece[i].get()));
        const auto start = Clock::now();
        m_copier.copy(reinterpret_cast<unsigned char*>(h_dst) + offset,
                      reinterpret_cast<const unsigned char*>(slot.h_out.get()) + offset, std::min(piece, bytes - offset));
        m_spans.addHost(StageSpans::kDownload, secondsSince(start));
    }
}

// ----------------------------------------------------------------- API

void GridrecPlan::setSinograms(std::span<const float> sinograms, int count) {
    requireSinograms(sinograms, count);
    DeviceScope scope(m_device);
    BatchInput input;
    input.sinograms = sinograms.data();
    runBatches(count, input, {});
}

void GridrecPlan::reconstruct(std::span<const float> sinograms, int count, std::span<float> slices) {
    requireSinograms(sinograms, count);
    requireSlices(slices, count);
    DeviceScope scope(m_device);
    BatchInput input;
    input.sinograms = sinograms.data();
    runBatches(count, input, slices);
}

PreprocessStats GridrecPlan::reconstructRaw(const RawRows& raw, const FlatFieldRows& field, std::span<float> slices) {
    requireRawRows(raw, field, m_setup->projections, m_setup->bins, m_maxSlices);
    requireSlices(slices, raw.rows);
    DeviceScope scope(m_device);
    if (!m_raw) m_raw.emplace(m_device, m_setup->projections, m_setup->bins, batchSlices());
    BatchInput input;
    input.raw = &raw;
    input.field = &field;
    return runBatches(raw.rows, input, slices);
}

PreprocessStats GridrecPlan::runBatches(int count, const BatchInput& input, std::span<float> slices) {
    m_count = 0;
    m_gridValid = false;
    const int batches = (count + batchSlices() - 1) / batchSlices();
    const std::size_t floats = static_cast<std::size_t>(batches) * m_batchPairs *
                               pairSpectrumFloats(); // whole batches: the last one's pack writes its pairs only
    if (d_spectra.size() < floats) {
        d_spectra = DeviceBuffer<float>();
        d_spectra = DeviceBuffer<float>(m_device, floats, "the kept spectra (" + std::to_string(count) + " slices)");
    }
    const std::size_t pixels = m_geometry.region.pixels();
    const bool output = !slices.empty();
    const bool direct = output && isPageLocked(slices.data(), slices.size() * sizeof(float));
    auto slicesOf = [&](int b) { return std::min(batchSlices(), count - b * batchSlices()); };
    auto outputOf = [&](int b) { return slices.data() + static_cast<std::size_t>(b) * batchSlices() * pixels; };
    m_spans.reset();
    m_times = StageTimes{};
    PreprocessStats stats;
    try {
        if (input.raw) m_raw->start(*input.raw, m_compute.get());
        for (int b = 0; b < batches; ++b) {
            uploadBatch(b, slicesOf(b), input);
            filterBatch(b, slicesOf(b), input);
            if (!output) continue;
            outputBatch(b, slicesOf(b), true, outputOf(b), direct);
            if (b > 0 && !direct) finishDownload(b - 1, slicesOf(b - 1), outputOf(b - 1));
        }
        if (input.raw) stats = m_raw->finish(*input.raw, m_compute.get()); // the counters of every batch
        if (output && direct) TOMO_CUDA_CHECK(cudaStreamSynchronize(m_copyOut.get()));
        else if (output) finishDownload(batches - 1, slicesOf(batches - 1), outputOf(batches - 1));
        TOMO_CUDA_CHECK(cudaStreamSynchronize(m_compute.get()));
        m_spans.collect(m_times);
    } catch (...) {
        drain();
        throw;
    }
    m_count = count;
    if (output) {
        m_gridValid = batches == 1;
        m_lastRegion = m_geometry.region;
    }
    return stats;
}

void GridrecPlan::backproject(std::span<float> slices) {
    if (m_count == 0) throw InvalidArgument("backproject: no sinograms set (call setSinograms first)");
    requireSlices(slices, m_count);
    DeviceScope scope(m_device);
    const std::size_t pixels = m_geometry.region.pixels();
    const int batches = (m_count + batchSlices() - 1) / batchSlices();
    const bool direct = isPageLocked(slices.data(), slices.size() * sizeof(float));
    const bool grid = !m_gridValid || m_lastRegion == m_geometry.region; // else the grids are there: crop only
    auto slicesOf = [&](int b) { return std::min(batchSlices(), m_count - b * batchSlices()); };
    auto output = [&](int b) { return slices.data() + static_cast<std::size_t>(b) * batchSlices() * pixels; };
    m_spans.reset();
    try {
        for (int b = 0; b < batches; ++b) {
            outputBatch(b, slicesOf(b), grid, output(b), direct);
            if (b > 0 && !direct) finishDownload(b - 1, slicesOf(b - 1), output(b - 1));
        }
        if (direct) TOMO_CUDA_CHECK(cudaStreamSynchronize(m_copyOut.get()));
        else finishDownload(batches - 1, slicesOf(batches - 1), output(batches - 1));
        m_spans.collect(m_times);
    } catch (...) {
        drain();
        m_gridValid = false;
        throw;
    }
    m_gridValid = batches == 1;
    m_lastRegion = m_geometry.region;
}

void GridrecPlan::setAxis(double axis, std::span<const double> offsets) {
    validateAxis(axis, offsets, m_geometry.geometry.projections());
    Geometry moved = m_geometry.geometry;
    moved.axis = axis;
    moved.axisOffsets.assign(offsets.begin(), offsets.end());
    DeviceScope scope(m_device);
    std::unique_ptr<gridrec::Setup> grown;
    if (const int needed = m_setup->rowLengthNeeded(moved); needed > m_setup->rowLength) {
        ReconGeometry candidate = m_geometry;
        candidate.geometry = moved;
        grown = std::make_unique<gridrec::Setup>(candidate, m_parameters, needed); // throws for an axis far off
    }
    m_geometry.geometry = std::move(moved);
    m_gridValid = false;
    if (grown) growRows(std::move(grown));
    m_tables.uploadShifts(*m_setup, m_geometry.geometry, m_compute.get());
}

void GridrecPlan::setRegion(const Region& region) {
    ReconGeometry candidate = m_geometry;
    candidate.region = region;
    candidate.validate();
    DeviceScope scope(m_device);
    ensureOutput(region.pixels());
    m_geometry.region = region;
}

std::size_t GridrecPlan::memoryBytes() const {
    std::size_t bytes = m_tables.bytes() + d_spectra.bytes() + d_samples.bytes() + d_grid.bytes() + d_work.bytes() +
                        (m_lone ? m_lone->bytes() : 0) +
                        (m_filter ? m_filter->bytes() : 0);
    for (const Slot& s : m_slots) bytes += s.d_in.bytes() + s.d_out.bytes();
    if (m_raw) bytes += m_raw->deviceBytes();
    return bytes;
}

} // namespace

std::unique_ptr<ReconstructionPlan> makeGridrecPlan(const ReconGeometry& geometry, const ReconOptions& options) {
    return std::make_unique<GridrecPlan>(geometry, options);
}

} // namespace tomo::cuda
