// DeviceHalfAcquisition and stitchHalfAcquisitionOnGpu: stitchHalfAcquisition
// (core/src/corrections/half_acquisition.cpp) on the GPU. The layout's
// arrays and the view's weight per output column (the CPU's double
// arithmetic, on the host) are uploaded once; the kernel samples and blends.
#include "corrections/device_corrections.h"
#include "corrections/half_acquisition_kernels.h"
#include "cuda_resources.h"

#include "tomo/cuda/corrections.h"
#include "tomo/error.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace tomo::cuda {

namespace {

/// The last projection the layout reads (the CPU's `highest`).
int highestProjection(const HalfAcquisitionLayout& l) {
    int highest = 0;
    for (const auto* list : {&l.views, &l.partnerLower, &l.partnerUpper})
        for (int p : *list) highest = std::max(highest, p);
    return highest;
}

/// The view's weight of each output column, as stitchHalfAcquisition computes it.
std::vector<double> viewWeights(const HalfAcquisitionLayout& l) {
    const int n = l.inputColumns;
    const bool axisOnLeft = l.axis <= (n - 1) / 2.0;
    const double r = std::min(l.axis, n - 1 - l.axis);
    std::vector<double> weights(static_cast<std::size_t>(l.columns));
    for (int j = 0; j < l.columns; ++j) {
        const double s = j - l.outputAxis;
        const double towardView = axisOnLeft ? s : -s; // the view covers towardView >= -r
        weights[j] = r < 0.5 ? (towardView >= 0.0 ? 1.0 : 0.0) : std::clamp((towardView + r) / (2.0 * r), 0.0, 1.0);
    }
    return weights;
}

std::string sizeMismatch(std::size_t values, int columns) {
    return "half-acquisition stitching: the sinogram holds " + std::to_string(values) +
           " values, not the 360-degree scan of " + std::to_string(columns) + " columns it was planned for";
}

} // namespace

struct DeviceHalfAcquisition::Impl {
    int device = 0;
    StitchLaunch launch; // everything but the input, output and count
    DeviceBuffer<int> views, partnerLower, partnerUpper;
    DeviceBuffer<float> partnerWeight;
    DeviceBuffer<double> viewWeight;
};

DeviceHalfAcquisition::DeviceHalfAcquisition(int device, const HalfAcquisitionLayout& layout, int inputProjections) {
    const std::size_t views = layout.views.size();
    if (layout.inputColumns < 1 || layout.columns < 1)
        throw InvalidArgument("half-acquisition stitching: a layout of " + std::to_string(layout.inputColumns) +
                              " input and " + std::to_string(layout.columns) +
                              " output columns; expected at least 1 of each");
    if (layout.partnerLower.size() != views || layout.partnerUpper.size() != views ||
        layout.partnerWeight.size() != views)
        throw InvalidArgument("half-acquisition stitching: a layout of " + std::to_string(views) +
                              " views with partners for " + std::to_string(layout.partnerLower.size()) + ", " +
                              std::to_string(layout.partnerUpper.size()) + " and " +
                              std::to_string(layout.partnerWeight.size()));
    for (const auto* list : {&layout.views, &layout.partnerLower, &layout.partnerUpper})
        if (std::any_of(list->begin(), list->end(), [](int p) { return p < 0; }))
            throw InvalidArgument("half-acquisition stitching: the layout reads a negative projection index");
    if (inputProjections <= highestProjection(layout))
        throw InvalidArgument(sizeMismatch(static_cast<std::size_t>(std::max(inputProjections, 0)) *
                                               static_cast<std::size_t>(layout.inputColumns),
                                           layout.inputColumns));

    auto impl = std::make_unique<Impl>();
    impl->device = device;
    StitchLaunch& L = impl->launch;
    L.inputProjections = inputProjections;
    L.inputColumns = layout.inputColumns;
    L.axis = layout.axis;
    L.outputAxis = layout.outputAxis;
    L.views = static_cast<int>(views);
    L.columns = layout.columns;
    const std::vector<double> weights = viewWeights(layout);

    DeviceScope scope(device);
    impl->views = DeviceBuffer<int>(device, views, "the stitched views");
    impl->partnerLower = DeviceBuffer<int>(device, views, "the stitched views' partners");
    impl->partnerUpper = DeviceBuffer<int>(device, views, "the stitched views' partners");
    impl->partnerWeight = DeviceBuffer<float>(device, views, "the stitched views' partner weights");
    impl->viewWeight = DeviceBuffer<double>(device, weights.size(), "the stitching weights");
    const Stream stream = Stream::create();
    if (views > 0) {
        copyToDeviceNow(impl->views.get(), layout.views.data(), views * sizeof(int), stream.get());
        copyToDeviceNow(impl->partnerLower.get(), layout.partnerLower.data(), views * sizeof(int), stream.get());
        copyToDeviceNow(impl->partnerUpper.get(), layout.partnerUpper.data(), views * sizeof(int), stream.get());
        copyToDeviceNow(impl->partnerWeight.get(), layout.partnerWeight.data(), views * sizeof(float), stream.get());
    }
    copyToDeviceNow(impl->viewWeight.get(), weights.data(), weights.size() * sizeof(double), stream.get());
    L.d_views = impl->views.get();
    L.d_partnerLower = impl->partnerLower.get();
    L.d_partnerUpper = impl->partnerUpper.get();
    L.d_partnerWeight = impl->partnerWeight.get();
    L.d_viewWeight = impl->viewWeight.get();
    m_impl = std::move(impl);
}

DeviceHalfAcquisition::~DeviceHalfAcquisition() = default;

void DeviceHalfAcquisition::apply(const float* d_in, int count, float* d_out, StreamHandle stream) const {
    if (count < 0)
        throw InvalidArgument("half-acquisition stitching: " + std::to_string(count) + " sinograms");
    if (count == 0 || m_impl->launch.views == 0) return;
    if (!d_in || !d_out) throw InvalidArgument("half-acquisition stitching: no input or output sinograms");
    DeviceScope scope(m_impl->device);
    StitchLaunch launch = m_impl->launch;
    launch.d_in = d_in;
    launch.count = count;
    launch.d_out = d_out;
    launchStitch(launch, stream);
}

void stitchHalfAcquisitionOnGpu(std::span<const float> sinogram, const HalfAcquisitionLayout& layout,
                                std::span<float> out, int device) {
    // stitchHalfAcquisition's checks and messages (a layout without columns is refused before dividing by it).
    const int n = layout.inputColumns;
    const std::size_t views = layout.views.size();
    if (n < 1 || layout.columns < 1)
        throw InvalidArgument("half-acquisition stitching: a layout of " + std::to_string(n) + " input and " +
                              std::to_string(layout.columns) + " output columns; expected at least 1 of each");
    if (out.size() != views * layout.columns)
        throw InvalidArgument("half-acquisition stitching: output of " + std::to_string(out.size()) +
                              " values; expected " + std::to_string(views * layout.columns));
    if (sinogram.size() % n != 0 || sinogram.size() / n <= static_cast<std::size_t>(highestProjection(layout)))
        throw InvalidArgument(sizeMismatch(sinogram.size(), n));

    const int projections = static_cast<int>(sinogram.size() / n);
    const DeviceHalfAcquisition stitch(device, layout, projections);
    DeviceScope scope(device);
    const Stream stream = Stream::create();
    DeviceBuffer<float> d_in(device, sinogram.size(), "the 360-degree sinogram");
    DeviceBuffer<float> d_out(device, out.size(), "the stitched sinogram");
    TOMO_CUDA_CHECK(
        cudaMemcpyAsync(d_in.get(), sinogram.data(), sinogram.size_bytes(), cudaMemcpyHostToDevice, stream.get()));
    stitch.apply(d_in.get(), 1, d_out.get(), stream.get());
    if (!out.empty())
        TOMO_CUDA_CHECK(
            cudaMemcpyAsync(out.data(), d_out.get(), out.size_bytes(), cudaMemcpyDeviceToHost, stream.get()));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
}

} // namespace tomo::cuda
