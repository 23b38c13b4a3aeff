// DevicePaganin and paganinOnGpu: PaganinFilter (core/src/corrections/paganin.cpp)
// on the GPU. The padding, frequencies and alpha are the CPU's own
// (PaganinFilter::transform); cuFFT's batched 2D R2C / C2R replaces FFTW.
#include "corrections/device_corrections.h"
#include "corrections/paganin_kernels.h"
#include "cuda_resources.h"

#include "tomo/cuda/corrections.h"
#include "tomo/error.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace tomo::cuda {

namespace {

/// Padded blocks and spectra of one batch at most (cuFFT's work area, one
/// for both plans, comes on top).
constexpr std::size_t kScratchBytes = std::size_t{512} << 20;
/// Beyond this many projections per transform the launches are amortised;
/// the cap keeps small blocks from reserving the whole scratch budget.
constexpr int kMaxBatch = 64;

/// A batch of 2D real transforms of rows x columns: slot b's block starts at
/// b * rows * columns floats, its half spectrum at b * rows * (columns / 2 + 1)
/// complex values. Planned without a work area: the forward and inverse
/// plans run one after the other on one stream, so they share one.
FftPlan plan2d(int device, long long rows, long long columns, int batch, cufftType type, const std::string& what) {
    const long long halfColumns = columns / 2 + 1;
    const bool forward = type == CUFFT_R2C;
    FftLayout l;
    l.rank = 2;
    l.n[0] = l.inembed[0] = l.onembed[0] = rows;
    l.n[1] = columns;
    l.inembed[1] = forward ? columns : halfColumns;
    l.onembed[1] = forward ? halfColumns : columns;
    l.idist = rows * l.inembed[1];
    l.odist = rows * l.onembed[1];
    l.type = type;
    l.batch = batch;
    return FftPlan(device, l, "the cuFFT plan of Paganin" + what);
}

} // namespace

// One set of scratch buffers: calls of apply() on different streams must not overlap.
struct DevicePaganin::Impl {
    int device = 0;
    PaganinShape shape;
    double alpha = 0.0;
    double norm = 0.0;
    int batch = 1;
    DeviceBuffer<double> ky2, kx2;
    DeviceBuffer<float> padded;          // batch x Ny x Nx
    DeviceBuffer<cufftComplex> spectrum; // batch x Ny x (Nx / 2 + 1)
    DeviceBuffer<char> work;             // shared by both plans
    FftPlan forward, inverse;
};

DevicePaganin::DevicePaganin(int device, int rows, int columns, const PaganinOptions& options) {
    // PaganinFilter's own transform (its checks and messages too).
    const PaganinTransform t = PaganinFilter::transform(rows, columns, options);
    auto impl = std::make_unique<Impl>();
    impl->device = device;
    PaganinShape& s = impl->shape;
    s.rows = t.rows;
    s.columns = t.columns;
    s.paddedRows = t.paddedRows;
    s.paddedColumns = t.paddedColumns;
    s.top = t.top;
    s.left = t.left;
    impl->alpha = t.alpha;
    impl->norm = 1.0 / (static_cast<double>(s.paddedRows) * s.paddedColumns);
    const std::vector<double>& ky2 = t.ky2;
    const std::vector<double>& kx2 = t.kx2;

    const std::size_t realPerSlot = static_cast<std::size_t>(s.paddedRows) * s.paddedColumns;
    const std::size_t complexPerSlot = static_cast<std::size_t>(s.paddedRows) * (s.paddedColumns / 2 + 1);
    const std::size_t bytesPerSlot = realPerSlot * sizeof(float) + complexPerSlot * sizeof(cufftComplex);
    impl->batch = static_cast<int>(std::clamp<std::size_t>(kScratchBytes / bytesPerSlot, 1, kMaxBatch));
    const std::string what = " (" + std::to_string(impl->batch) + " projections of " +
                             std::to_string(s.paddedRows) + " x " + std::to_string(s.paddedColumns) + ")";

    DeviceScope scope(device);
    impl->ky2 = DeviceBuffer<double>(device, ky2.size(), "the Paganin row frequencies");
    impl->kx2 = DeviceBuffer<double>(device, kx2.size(), "the Paganin column frequencies");
    impl->padded = DeviceBuffer<float>(device, realPerSlot * impl->batch, "the Paganin padded blocks" + what);
    impl->spectrum = DeviceBuffer<cufftComplex>(device, complexPerSlot * impl->batch, "the Paganin spectra" + what);
    impl->forward = plan2d(device, s.paddedRows, s.paddedColumns, impl->batch, CUFFT_R2C, what);
    impl->inverse = plan2d(device, s.paddedRows, s.paddedColumns, impl->batch, CUFFT_C2R, what);
    impl->work = DeviceBuffer<char>(device, std::max(impl->forward.workBytes(), impl->inverse.workBytes()),
                                    "the cuFFT work area of Paganin" + what);
    if (impl->work.size() > 0) {
        TOMO_CUFFT_CHECK(cufftSetWorkArea(impl->forward.get(), impl->work.get()));
        TOMO_CUFFT_CHECK(cufftSetWorkArea(impl->inverse.get(), impl->work.get()));
    }

    // Slots a last, partial batch leaves unused are transformed too: zeroed
    // here so that they never hold undefined values.
    const Stream stream = Stream::create();
    TOMO_CUDA_CHECK(cudaMemsetAsync(impl->padded.get(), 0, impl->padded.bytes(), stream.get()));
    copyToDeviceNow(impl->ky2.get(), ky2.data(), ky2.size() * sizeof(double), stream.get());
    copyToDeviceNow(impl->kx2.get(), kx2.data(), kx2.size() * sizeof(double), stream.get());
    m_impl = std::move(impl);
}

DevicePaganin::~DevicePaganin() = default;

void DevicePaganin::apply(float* d_chunk, int projections, int firstKept, int keptRows, StreamHandle stream) {
    Impl& im = *m_impl;
    const PaganinShape& s = im.shape;
    if (projections < 0 || firstKept < 0 || keptRows < 0 || firstKept > s.rows - keptRows)
        throw InvalidArgument("GPU Paganin: rows [" + std::to_string(firstKept) + ", " +
                              std::to_string(static_cast<long long>(firstKept) + keptRows) + ") kept of " +
                              std::to_string(projections) + " projections of " + std::to_string(s.rows) +
                              " rows; expected a range within the rows and projections >= 0");
    if (projections == 0 || keptRows == 0) return;
    if (!d_chunk) throw InvalidArgument("GPU Paganin: no chunk");

    DeviceScope scope(im.device);
    TOMO_CUFFT_CHECK(cufftSetStream(im.forward.get(), stream));
    TOMO_CUFFT_CHECK(cufftSetStream(im.inverse.get(), stream));
    for (int first = 0; first < projections; first += im.batch) {
        const int count = std::min(im.batch, projections - first);
        launchPaganinGather(s, d_chunk, projections, first, count, im.padded.get(), stream);
        TOMO_CUFFT_CHECK(cufftExecR2C(im.forward.get(), im.padded.get(), im.spectrum.get()));
        // Every slot, so that the unused ones of a partial batch stay
        // normalised (the unnormalised round trip would grow them each call).
        launchPaganinFilter(s, im.ky2.get(), im.kx2.get(), im.alpha, im.norm, im.batch,
                            reinterpret_cast<float*>(im.spectrum.get()), stream);
        TOMO_CUFFT_CHECK(cufftExecC2R(im.inverse.get(), im.spectrum.get(), im.padded.get()));
        launchPaganinScatter(s, im.padded.get(), count, firstKept, keptRows, d_chunk, projections, first, stream);
    }
}

void paganinOnGpu(std::span<float> block, int rows, int columns, const PaganinOptions& options, int device) {
    DevicePaganin filter(device, rows, columns, options);
    if (block.size() != static_cast<std::size_t>(rows) * columns)
        throw InvalidArgument("Paganin: " + std::to_string(block.size()) + " values for a block of " +
                              std::to_string(rows) + " x " + std::to_string(columns));
    DeviceScope scope(device);
    const Stream stream = Stream::create();
    // One projection: the chunk layout [row][projection][column] is the block's [row][column].
    DeviceBuffer<float> d_block(device, block.size(), "the Paganin block");
    TOMO_CUDA_CHECK(
        cudaMemcpyAsync(d_block.get(), block.data(), block.size_bytes(), cudaMemcpyHostToDevice, stream.get()));
    filter.apply(d_block.get(), 1, 0, rows, stream.get());
    TOMO_CUDA_CHECK(
        cudaMemcpyAsync(block.data(), d_block.get(), block.size_bytes(), cudaMemcpyDeviceToHost, stream.get()));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
}

} // namespace tomo::cuda
