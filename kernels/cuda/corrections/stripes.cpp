// DeviceStripes (device_corrections.h) and removeStripesOnGpu
// (tomo/cuda/corrections.h): removeStripes on the GPU. Sorting, medians and
// sums run on the device; the large and dead methods' detection
// (tomo::detectStripes over one value per column) runs on the host with
// core's own function, so the marked columns are the CPU's.
#include "corrections/device_corrections.h"
#include "corrections/stripe_kernels.h"
#include "cuda_resources.h"
#include "tomo/cuda/corrections.h"
#include "tomo/error.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tomo::cuda {

namespace {

// The grids' limits: rank tiles of 32 along gridDim.y.
constexpr int kMaxProjections = 65535 * 32;

// A marked column marks its two neighbours too (stripes.cpp's dilate).
std::vector<std::uint8_t> dilate(const std::vector<std::uint8_t>& mask) {
    std::vector<std::uint8_t> out(mask.size(), 0);
    for (std::size_t i = 0; i < mask.size(); ++i)
        out[i] = mask[i] || (i > 0 && mask[i - 1]) || (i + 1 < mask.size() && mask[i + 1]);
    return out;
}

const char* methodLabel(RingMethod method) {
    switch (method) {
    case RingMethod::Sorting: return "sorting stripe removal";
    case RingMethod::Large: return "large stripe removal";
    case RingMethod::Wavelet: return "wavelet stripe removal";
    default: return "dead stripe removal"; // dead, and the first step of all
    }
}

} // namespace

struct DeviceStripes::Impl {
    int device = 0;
    int projections = 0, columns = 0, maxCount = 0;
    RingOptions options;
    // Column segments: keys and projection indices before and after the sort.
    // The unsorted keys' memory holds the smoothed values once sorted.
    DeviceBuffer<std::uint32_t> keys, sortedKeys;
    DeviceBuffer<int> index, sortedIndex;
    DeviceBuffer<unsigned char> sortScratch;
    // One value per column: ratios (large) or diffs (dead), their median, flags.
    DeviceBuffer<float> columnValues, background;
    DeviceBuffer<std::uint32_t> columnKeys;
    DeviceBuffer<std::uint8_t> take;
    DeviceBuffer<ColumnNeighbours> neighbours;
    std::vector<float> hostValues, hostBackground;
    std::vector<std::uint8_t> hostTake;
    std::vector<ColumnNeighbours> hostNeighbours;
    std::unique_ptr<DeviceWaveletStripes> wavelet;

    SinogramBatch batch(int count) const { return {count, projections, columns}; }
    float* smoothed() const { return reinterpret_cast<float*>(keys.get()); }

    void sortAndSmooth(float* d, int count, int window, StreamHandle stream);
    void sorting(float* d, int count, StreamHandle stream);
    void large(float* d, int count, StreamHandle stream);
    void dead(float* d, int count, StreamHandle stream);
};

DeviceStripes::DeviceStripes(int device, int projections, int columns, const RingOptions& options, int maxCount)
    : m_impl(std::make_unique<Impl>()) {
    CorrectionOptions check;
    check.rings = options;
    check.validate();
    if (projections < 1 || columns < 1 || maxCount < 1 || projections > kMaxProjections)
        throw InvalidArgument("GPU stripe removal: " + std::to_string(maxCount) + " sinograms of " +
                              std::to_string(projections) + " projections x " + std::to_string(columns) +
                              " columns (expected at least one of 1 x 1, at most " +
                              std::to_string(kMaxProjections) + " projections)");
    DeviceScope scope(device);
    Impl& m = *m_impl;
    m.device = device;
    m.projections = projections;
    m.columns = columns;
    m.maxCount = maxCount;
    m.options = options;
    if (options.method == RingMethod::Off) return;
    if (options.method == RingMethod::Wavelet) {
        m.wavelet = std::make_unique<DeviceWaveletStripes>(device, projections, columns, options.waveletLevel,
                                                           options.waveletSigma);
        return;
    }
    const std::size_t values = m.batch(maxCount).values();
    const std::size_t perColumn = static_cast<std::size_t>(maxCount) * columns;
    if (options.method != RingMethod::Dead) {
        m.keys = DeviceBuffer<std::uint32_t>(device, values, "the stripe sort keys");
        m.sortedKeys = DeviceBuffer<std::uint32_t>(device, values, "the sorted stripe keys");
        m.index = DeviceBuffer<int>(device, values, "the stripe sort indices");
        m.sortedIndex = DeviceBuffer<int>(device, values, "the sorted stripe indices");
        const std::size_t scratch = std::max<std::size_t>(1, columnSortScratchBytes(m.batch(maxCount)));
        m.sortScratch = DeviceBuffer<unsigned char>(device, scratch, "the stripe sort scratch");
        m.take = DeviceBuffer<std::uint8_t>(device, perColumn, "the stripe columns");
    }
    if (options.method == RingMethod::Dead || options.method == RingMethod::All) {
        m.columnKeys = DeviceBuffer<std::uint32_t>(device, perColumn, "the dead stripe keys");
        m.background = DeviceBuffer<float>(device, perColumn, "the dead stripe background");
        m.neighbours = DeviceBuffer<ColumnNeighbours>(device, perColumn, "the dead stripe neighbours");
    }
    m.columnValues = DeviceBuffer<float>(device, perColumn, "the stripe column values");
}

DeviceStripes::~DeviceStripes() = default;

void DeviceStripes::Impl::sortAndSmooth(float* d, int count, int window, StreamHandle stream) {
    const SinogramBatch b = batch(count);
    launchColumnSortKeys(d, b, keys.get(), index.get(), stream);
    // The scratch was sized for maxCount; a smaller batch has never needed more,
    // but the sort decides.
    const std::size_t scratch = columnSortScratchBytes(b);
    if (scratch > sortScratch.size())
        sortScratch = DeviceBuffer<unsigned char>(device, scratch, "the stripe sort scratch");
    sortColumns(keys.get(), sortedKeys.get(), index.get(), sortedIndex.get(), b, sortScratch.get(),
                sortScratch.size(), stream);
    launchMedianAcrossColumns(sortedKeys.get(), b, window, smoothed(), stream);
}

void DeviceStripes::Impl::sorting(float* d, int count, StreamHandle stream) {
    sortAndSmooth(d, count, options.sortingWindow, stream);
    launchSortBack(smoothed(), sortedIndex.get(), nullptr, d, batch(count), stream);
}

void DeviceStripes::Impl::large(float* d, int count, StreamHandle stream) {
    const int P = projections, N = columns;
    sortAndSmooth(d, count, options.largeWindow, stream);
    const int drop = static_cast<int>(0.5 * std::clamp(options.dropRatio, 0.0, 0.8) * P);
    launchLargeStripeRatios(sortedKeys.get(), smoothed(), batch(count), drop, columnValues.get(), stream);
    const std::size_t perColumn = static_cast<std::size_t>(count) * N;
    hostValues.resize(perColumn);
    TOMO_CUDA_CHECK(cudaMemcpyAsync(hostValues.data(), columnValues.get(), perColumn * sizeof(float),
                                    cudaMemcpyDeviceToHost, stream));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream));
    hostTake.assign(perColumn, 0);
    bool anyMarked = false;
    for (int b = 0; b < count; ++b) {
        const std::span<const float> ratio(hostValues.data() + static_cast<std::size_t>(b) * N, N);
        const std::vector<std::uint8_t> mask = dilate(detectStripes(ratio, options.snr));
        std::copy(mask.begin(), mask.end(), hostTake.begin() + static_cast<std::ptrdiff_t>(b) * N);
        anyMarked = anyMarked || std::find(mask.begin(), mask.end(), 1) != mask.end();
    }
    launchDivideColumns(d, columnValues.get(), batch(count), stream);
    if (!anyMarked) return;
    TOMO_CUDA_CHECK(cudaMemcpyAsync(take.get(), hostTake.data(), perColumn, cudaMemcpyHostToDevice, stream));
    launchSortBack(smoothed(), sortedIndex.get(), take.get(), d, batch(count), stream);
}

void DeviceStripes::Impl::dead(float* d, int count, StreamHandle stream) {
    const int N = columns;
    launchDeadStripeDiffs(d, batch(count), columnValues.get(), columnKeys.get(), stream);
    // The background: the median across columns of one "rank" per column.
    launchMedianAcrossColumns(columnKeys.get(), {count, 1, N}, options.largeWindow, background.get(), stream);
    const std::size_t perColumn = static_cast<std::size_t>(count) * N;
    hostValues.resize(perColumn);
    hostBackground.resize(perColumn);
    TOMO_CUDA_CHECK(cudaMemcpyAsync(hostValues.data(), columnValues.get(), perColumn * sizeof(float),
                                    cudaMemcpyDeviceToHost, stream));
    TOMO_CUDA_CHECK(cudaMemcpyAsync(hostBackground.data(), background.get(), perColumn * sizeof(float),
                                    cudaMemcpyDeviceToHost, stream));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream));
    hostNeighbours.assign(perColumn, {kColumnKept, kColumnKept});
    bool anyMarked = false;
    std::vector<float> ratio(static_cast<std::size_t>(N));
    for (int b = 0; b < count; ++b) {
        // removeDeadStripes' arithmetic from the diffs on.
        const float* diff = hostValues.data() + static_cast<std::size_t>(b) * N;
        const float* background = hostBackground.data() + static_cast<std::size_t>(b) * N;
        double mean = 0.0;
        for (int c = 0; c < N; ++c) mean += std::abs(background[c]);
        mean /= N;
        for (int c = 0; c < N; ++c) {
            const double level = background[c] != 0.0f ? background[c] : mean;
            ratio[c] = level != 0.0 ? static_cast<float>(diff[c] / level) : 1.0f;
        }
        std::vector<std::uint8_t> mask = dilate(detectStripes(ratio, options.snr));
        for (int c = 0; c < std::min(2, N); ++c) mask[c] = mask[N - 1 - c] = 0;
        const auto marked = std::count(mask.begin(), mask.end(), std::uint8_t{1});
        if (marked == 0 || marked >= N / 3) continue;
        anyMarked = true;
        // interpolateMasked's neighbours: the nearest unmarked columns.
        ColumnNeighbours* table = hostNeighbours.data() + static_cast<std::size_t>(b) * N;
        int left = -1;
        for (int c = 0; c < N; ++c) {
            if (!mask[c]) {
                left = c;
                continue;
            }
            table[c].left = left;
        }
        int right = N;
        for (int c = N - 1; c >= 0; --c) {
            if (!mask[c])
                right = c;
            else
                table[c].right = right;
        }
    }
    if (!anyMarked) return;
    TOMO_CUDA_CHECK(cudaMemcpyAsync(neighbours.get(), hostNeighbours.data(), perColumn * sizeof(ColumnNeighbours),
                                    cudaMemcpyHostToDevice, stream));
    launchInterpolateColumns(d, neighbours.get(), batch(count), stream);
}

void DeviceStripes::apply(float* d_sinograms, int count, StreamHandle stream) {
    Impl& m = *m_impl;
    if (count < 0 || count > m.maxCount)
        throw InvalidArgument("GPU stripe removal: " + std::to_string(count) + " sinograms (expected at most " +
                              std::to_string(m.maxCount) + ")");
    if (count == 0) return;
    DeviceScope scope(m.device);
    switch (m.options.method) {
    case RingMethod::Off:
        return;
    case RingMethod::Sorting:
        m.sorting(d_sinograms, count, stream);
        return;
    case RingMethod::Large:
        m.large(d_sinograms, count, stream);
        return;
    case RingMethod::Dead:
        m.dead(d_sinograms, count, stream);
        return;
    case RingMethod::All:
        m.dead(d_sinograms, count, stream);
        m.large(d_sinograms, count, stream);
        m.sorting(d_sinograms, count, stream);
        return;
    case RingMethod::Wavelet:
        for (int b = 0; b < count; ++b)
            m.wavelet->apply(d_sinograms + static_cast<std::size_t>(b) * m.projections * m.columns, stream);
        return;
    }
}

void removeStripesOnGpu(std::span<float> sinogram, int projections, int columns, const RingOptions& options,
                        int device) {
    if (options.method == RingMethod::Off) return;
    if (projections < 1 || columns < 1 ||
        sinogram.size() != static_cast<std::size_t>(projections) * static_cast<std::size_t>(columns))
        throw InvalidArgument(std::string(methodLabel(options.method)) + ": " + std::to_string(sinogram.size()) +
                              " values for " + std::to_string(projections) + " projections x " +
                              std::to_string(columns) + " columns");
    DeviceScope scope(device);
    DeviceStripes stripes(device, projections, columns, options, 1);
    DeviceBuffer<float> d_sinogram(device, sinogram.size(), "the stripe sinogram");
    Stream stream = Stream::create();
    TOMO_CUDA_CHECK(cudaMemcpyAsync(d_sinogram.get(), sinogram.data(), sinogram.size_bytes(), cudaMemcpyHostToDevice,
                                    stream.get()));
    stripes.apply(d_sinogram.get(), 1, stream.get());
    TOMO_CUDA_CHECK(cudaMemcpyAsync(sinogram.data(), d_sinogram.get(), sinogram.size_bytes(), cudaMemcpyDeviceToHost,
                                    stream.get()));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
}

} // namespace tomo::cuda
