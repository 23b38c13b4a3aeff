// cuda::backprojectCone (tomo/cuda/cuda_backends.h): the views into a layered
// texture, the kernel of cone_backproject.cu over batches of views and slabs
// of z, the stage times.
#include "tomo/cuda/cuda_backends.h"

#include "cone_backproject.h"
#include "cuda_resources.h"
#include "device_check.h"

#include "tomo/error.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tomo::cuda {

void backprojectCone(const FilteredProjections& in, const VolumeGrid& grid, double scale, std::span<float> volume,
                     int device, ConeStageTimes* times) {
    const std::size_t image = static_cast<std::size_t>(in.columns) * static_cast<std::size_t>(in.rows);
    const int views = static_cast<int>(in.views.size());
    if (in.columns < 1 || in.rows < 1 || views < 1 || in.data.size() != image * in.views.size() ||
        volume.size() != grid.voxels())
        throw InvalidArgument("cone back-projection (cuda): sizes do not match (" + std::to_string(in.data.size()) +
                              " values for " + std::to_string(views) + " views, " + std::to_string(volume.size()) +
                              " voxels)");
    DeviceScope scope(checkedDevice(device));
    // Constant memory holds one batch of matrices for the whole device.
    static std::mutex constantMemory;
    std::lock_guard lock(constantMemory);
    cudaDeviceProp prop{};
    TOMO_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    if (in.columns > prop.maxTexture2DLayered[0] || in.rows > prop.maxTexture2DLayered[1])
        throw InvalidArgument("cone back-projection (cuda): a " + std::to_string(in.columns) + "x" +
                              std::to_string(in.rows) + " detector exceeds the layered texture limit of " +
                              deviceLabel(device) + " (" + std::to_string(prop.maxTexture2DLayered[0]) + "x" +
                              std::to_string(prop.maxTexture2DLayered[1]) + ")");
    const int batch = std::min({views, kConeMaxViews, prop.maxTexture2DLayered[2]});
    const int batches = (views + batch - 1) / batch;

    // Slabs of z whose voxels fit in half of what is free next to one batch of views.
    const std::size_t batchBytes = image * static_cast<std::size_t>(batch) * sizeof(float);
    const std::size_t sliceBytes = static_cast<std::size_t>(grid.nx) * grid.ny * sizeof(float);
    std::size_t freeBytes = 0, totalBytes = 0;
    TOMO_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    if (freeBytes < batchBytes + 8 * sliceBytes)
        throwDeviceOutOfMemory(device, "the cone-beam views of one batch and 8 volume slices", batchBytes + 8 * sliceBytes);
    const int slab = static_cast<int>(std::min<std::size_t>(grid.nz, (freeBytes - batchBytes) / 2 / sliceBytes));

    Stream stream = Stream::create();
    DeviceBuffer<float> d_volume(device, sliceBytes / sizeof(float) * static_cast<std::size_t>(slab), "the volume slab");
    cudaArray_t raw = nullptr;
    const cudaChannelFormatDesc format = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    if (cudaMalloc3DArray(&raw, &format, cudaExtent{static_cast<std::size_t>(in.columns), static_cast<std::size_t>(in.rows), static_cast<std::size_t>(batch)}, cudaArrayLayered) != cudaSuccess) {
        (void)cudaGetLastError();
        throwDeviceOutOfMemory(device, "the cone-beam views (a layered texture)", batchBytes);
    }
    const std::unique_ptr<cudaArray, void (*)(cudaArray_t)> array(raw, [](cudaArray_t a) { (void)cudaFreeArray(a); });
    cudaResourceDesc resource{};
    resource.resType = cudaResourceTypeArray;
    resource.res.array.array = array.get();
    cudaTextureDesc texture{};
    texture.addressMode[0] = texture.addressMode[1] = cudaAddressModeBorder; // 0 outside the detector
    texture.filterMode = cudaFilterModeLinear;
    texture.readMode = cudaReadModeElementType;
    const TextureObject views3d(resource, texture);

    // Stage times from events around each stage (one stream: they do not overlap).
    std::vector<std::pair<Event, Event>> marks[3];
    auto mark = [&](int stage, bool begin) {
        if (!times) return;
        if (begin) marks[stage].emplace_back(Event::create(true), Event::create(true));
        TOMO_CUDA_CHECK(cudaEventRecord(begin ? marks[stage].back().first.get() : marks[stage].back().second.get(),
                                        stream.get()));
    };
    std::vector<float> matrices;
    auto upload = [&](int b) {
        mark(0, true);
        const int first = b * batch, count = std::min(batch, views - first);
        cudaMemcpy3DParms copy{};
        copy.srcPtr = cudaPitchedPtr{const_cast<float*>(in.data.data() + image * static_cast<std::size_t>(first)),
                                     static_cast<std::size_t>(in.columns) * sizeof(float),
                                     static_cast<std::size_t>(in.columns), static_cast<std::size_t>(in.rows)};
        copy.dstArray = array.get();
        copy.extent = cudaExtent{static_cast<std::size_t>(in.columns), static_cast<std::size_t>(in.rows),
                                 static_cast<std::size_t>(count)};
        copy.kind = cudaMemcpyHostToDevice;
        TOMO_CUDA_CHECK(cudaMemcpy3DAsync(&copy, stream.get()));
        matrices.assign(static_cast<std::size_t>(count) * 12, 0.0f);
        for (int p = 0; p < count; ++p)
            for (int e = 0; e < 12; ++e)
                matrices[static_cast<std::size_t>(p) * 12 + e] = static_cast<float>(in.views[first + p].m[e]);
        TOMO_CUDA_CHECK(cudaStreamSynchronize(stream.get())); // the previous batch's kernels are done
        uploadConeMatrices(matrices.data(), count, stream.get());
        mark(0, false);
    };
    // Slabs outer, batches inner: with one batch (up to 1024 views) the views
    // travel once; only a slabbed volume of more views uploads them per slab.
    int uploaded = -1;
    for (int k0 = 0; k0 < grid.nz; k0 += slab) {
        const int nz = std::min(slab, grid.nz - k0);
        for (int b = 0; b < batches; ++b) {
            if (uploaded != b) {
                upload(b);
                uploaded = b;
            }
            ConeLaunch L;
            L.texture = views3d.get();
            L.views = std::min(batch, views - b * batch);
            L.nx = grid.nx;
            L.ny = grid.ny;
            L.nz = nz;
            L.x0 = static_cast<float>(grid.x(0));
            L.y0 = static_cast<float>(grid.y(0));
            L.z0 = static_cast<float>(grid.z(k0));
            L.voxelSize = static_cast<float>(grid.voxelSize);
            L.scale = static_cast<float>(scale);
            L.accumulate = b > 0;
            L.d_volume = d_volume.get();
            mark(1, true);
            launchConeBackproject(L, stream.get());
            mark(1, false);
        }
        mark(2, true);
        TOMO_CUDA_CHECK(cudaMemcpyAsync(volume.data() + sliceBytes / sizeof(float) * static_cast<std::size_t>(k0),
                                        d_volume.get(), sliceBytes * static_cast<std::size_t>(nz),
                                        cudaMemcpyDeviceToHost, stream.get()));
        mark(2, false);
        TOMO_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    }
    if (times) {
        double seconds[3] = {};
        for (int stage = 0; stage < 3; ++stage)
            for (const auto& [begin, end] : marks[stage]) {
                float ms = 0.0f;
                TOMO_CUDA_CHECK(cudaEventElapsedTime(&ms, begin.get(), end.get()));
                seconds[stage] += ms / 1e3;
            }
        *times = {seconds[0], seconds[1], seconds[2]};
    }
}

} // namespace tomo::cuda
