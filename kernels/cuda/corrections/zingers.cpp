// DeviceZingers (device_corrections.h) and removeZingersOnGpu
// (tomo/cuda/corrections.h): removeZingers on the GPU.
#include "corrections/device_corrections.h"
#include "corrections/zinger_kernels.h"
#include "cuda_resources.h"
#include "tomo/cuda/corrections.h"
#include "tomo/error.h"

#include <algorithm>
#include <climits>
#include <string>

namespace tomo::cuda {

namespace {

// The CPU's checks and messages (removeZingers).
void checkWindow(int window) {
    if (window < 3 || window % 2 == 0)
        throw InvalidArgument("zinger removal: the window must be odd and >= 3, got " + std::to_string(window));
}

} // namespace

struct DeviceZingers::Impl {
    int device = 0;
    int height = 0, width = 0, maxCount = 0;
    std::size_t pixels = 0;
    DeviceBuffer<float> input;                 // the images as they were (medians read them)
    DeviceBuffer<double> partialSums;
    DeviceBuffer<float> floors;
    DeviceBuffer<unsigned long long> counts;
    DeviceBuffer<unsigned char> flags;         // where the zingers are, for the positions
    DeviceBuffer<int> indices;                 // one image's zinger indices
    DeviceBuffer<int> listed;
    DeviceBuffer<unsigned char> listScratch;
};

DeviceZingers::DeviceZingers(int device, int height, int width, int maxCount) : m_impl(std::make_unique<Impl>()) {
    if (height < 1 || width < 1 || maxCount < 1)
        throw InvalidArgument("GPU zinger removal: " + std::to_string(maxCount) + " images of " +
                              std::to_string(height) + " x " + std::to_string(width));
    Impl& m = *m_impl;
    m.pixels = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
    if (m.pixels > static_cast<std::size_t>(INT_MAX))
        throw InvalidArgument("GPU zinger removal: images of " + std::to_string(height) + " x " +
                              std::to_string(width) + " (expected fewer than 2^31 values)");
    DeviceScope scope(device);
    m.device = device;
    m.height = height;
    m.width = width;
    m.maxCount = maxCount;
    const std::size_t total = m.pixels * static_cast<std::size_t>(maxCount);
    m.input = DeviceBuffer<float>(device, total, "the zinger input copy");
    m.partialSums = DeviceBuffer<double>(
        device, static_cast<std::size_t>(zingerPartialSums(m.pixels)) * static_cast<std::size_t>(maxCount),
        "the zinger mean sums");
    m.floors = DeviceBuffer<float>(device, static_cast<std::size_t>(maxCount), "the zinger floors");
    m.counts = DeviceBuffer<unsigned long long>(device, static_cast<std::size_t>(maxCount), "the zinger counts");
    m.flags = DeviceBuffer<unsigned char>(device, total, "the zinger flags");
    m.indices = DeviceBuffer<int>(device, m.pixels, "the zinger positions");
    m.listed = DeviceBuffer<int>(device, 1, "the zinger position count");
    m.listScratch = DeviceBuffer<unsigned char>(device, std::max<std::size_t>(1, zingerListScratchBytes(m.pixels)),
                                                "the zinger position scratch");
}

DeviceZingers::~DeviceZingers() = default;

DeviceZingers::Found DeviceZingers::apply(float* d_images, int count, const ZingerOptions& options, ValueKind kind,
                                          StreamHandle stream, int listFirst, int listLast,
                                          std::size_t maxPositions) {
    Impl& m = *m_impl;
    if (count < 0 || count > m.maxCount)
        throw InvalidArgument("GPU zinger removal: " + std::to_string(count) + " images (expected at most " +
                              std::to_string(m.maxCount) + ")");
    checkWindow(options.window);
    Found found;
    found.counts.assign(static_cast<std::size_t>(count), 0);
    if (count == 0) return found;
    DeviceScope scope(m.device);
    const int listBegin = std::max(listFirst, 0), listEnd = std::min(listLast, count);
    const bool listing = maxPositions > 0 && listBegin < listEnd;
    const std::size_t total = m.pixels * static_cast<std::size_t>(count);
    TOMO_CUDA_CHECK(cudaMemcpyAsync(m.input.get(), d_images, total * sizeof(float), cudaMemcpyDeviceToDevice, stream));

    ZingerLaunch L;
    L.d_input = m.input.get();
    L.d_output = d_images;
    L.count = count;
    L.height = m.height;
    L.width = m.width;
    L.window = options.window;
    L.threshold = static_cast<float>(options.threshold);
    L.transmission = kind == ValueKind::Transmission;
    L.d_partialSums = m.partialSums.get();
    L.d_floors = m.floors.get();
    L.d_counts = m.counts.get();
    L.d_flags = listing ? m.flags.get() : nullptr;
    launchZingers(L, stream);

    std::vector<unsigned long long> counts(static_cast<std::size_t>(count));
    TOMO_CUDA_CHECK(cudaMemcpyAsync(counts.data(), m.counts.get(), counts.size() * sizeof(unsigned long long),
                                    cudaMemcpyDeviceToHost, stream));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::copy(counts.begin(), counts.end(), found.counts.begin());
    if (!listing) return found;

    // Positions in (image, y, x) order: the flags of each image compacted in
    // order, only where it has zingers and the list has room.
    std::vector<int> indices;
    for (int b = listBegin; b < listEnd && found.positions.size() < maxPositions; ++b) {
        if (counts[b] == 0) continue;
        const std::size_t take = std::min<std::size_t>(counts[b], maxPositions - found.positions.size());
        listZingerIndices(m.flags.get() + static_cast<std::size_t>(b) * m.pixels, m.pixels, m.indices.get(),
                          m.listed.get(), m.listScratch.get(), m.listScratch.size(), stream);
        indices.resize(take);
        TOMO_CUDA_CHECK(
            cudaMemcpyAsync(indices.data(), m.indices.get(), take * sizeof(int), cudaMemcpyDeviceToHost, stream));
        TOMO_CUDA_CHECK(cudaStreamSynchronize(stream));
        for (int index : indices) found.positions.push_back({b, index / m.width, index % m.width});
    }
    return found;
}

std::size_t removeZingersOnGpu(std::span<float> image, int height, int width, const ZingerOptions& options,
                               ValueKind kind, std::vector<PixelPosition>* positions, std::size_t maxPositions,
                               int device) {
    if (height < 1 || width < 1 || image.size() != static_cast<std::size_t>(height) * static_cast<std::size_t>(width))
        throw InvalidArgument("zinger removal: " + std::to_string(image.size()) + " values for " +
                              std::to_string(height) + " x " + std::to_string(width));
    checkWindow(options.window);
    DeviceScope scope(device);
    DeviceZingers zingers(device, height, width, 1);
    DeviceBuffer<float> d_image(device, image.size(), "the zinger image");
    Stream stream = Stream::create();
    TOMO_CUDA_CHECK(cudaMemcpyAsync(d_image.get(), image.data(), image.size_bytes(), cudaMemcpyHostToDevice,
                                    stream.get()));
    // The list appended to stops at maxPositions in all, as the CPU's does.
    const std::size_t room = positions && positions->size() < maxPositions ? maxPositions - positions->size() : 0;
    const DeviceZingers::Found found = zingers.apply(d_image.get(), 1, options, kind, stream.get(), 0, 1, room);
    TOMO_CUDA_CHECK(cudaMemcpyAsync(image.data(), d_image.get(), image.size_bytes(), cudaMemcpyDeviceToHost,
                                    stream.get()));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    if (positions) positions->insert(positions->end(), found.positions.begin(), found.positions.end());
    return found.counts[0];
}

} // namespace tomo::cuda
