// cuda::backprojectCone and cuda::reconstructFdk (tomo/cuda/cuda_backends.h):
// the views into a layered texture (uploaded filtered, or filtered here with
// cuFFT), the kernel of cone_backproject.cu over batches of views and slabs
// of z, pinned staging of large transfers, the stage times.
#include "tomo/cuda/cuda_backends.h"

#include "cone_backproject.h"
#include "cuda_resources.h"
#include "device_check.h"
#include "filter_kernels.h"
#include "gpu_filter.h"
#include "pinned_staging.h"

#include "tomo/error.h"

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tomo::cuda {

namespace {

/// Transfers of this many bytes or more go through pinned staging buffers
/// (pinned_staging.h). Smaller ones (a live slice's few detector rows) are
/// not worth pinning.
constexpr std::size_t kStagedBytes = std::size_t{256} << 20;

/// Constant memory holds one batch of matrices for the whole process.
std::mutex& constantMemory() {
    static std::mutex m;
    return m;
}

/// Events around each stage's work on one stream, summed into ConeStageTimes.
class StageMarks {
public:
    enum Stage { Upload, Backproject, Download, Filter };
    explicit StageMarks(bool on) : m_on(on) {}
    void begin(Stage s, cudaStream_t stream) { record(s, true, stream); }
    void end(Stage s, cudaStream_t stream) { record(s, false, stream); }
    void write(ConeStageTimes* times) const {
        if (!times) return;
        double seconds[4] = {};
        for (int s = 0; s < 4; ++s)
            for (const auto& [begin, end] : m_marks[s]) {
                float ms = 0.0f;
                TOMO_CUDA_CHECK(cudaEventElapsedTime(&ms, begin.get(), end.get()));
                seconds[s] += ms / 1e3;
            }
        *times = {seconds[Upload], seconds[Backproject], seconds[Download], seconds[Filter]};
    }

private:
    void record(Stage s, bool begin, cudaStream_t stream) {
        if (!m_on) return;
        if (begin) m_marks[s].emplace_back(Event::create(true), Event::create(true));
        TOMO_CUDA_CHECK(cudaEventRecord(begin ? m_marks[s].back().first.get() : m_marks[s].back().second.get(), stream));
    }
    bool m_on;
    std::vector<std::pair<Event, Event>> m_marks[4];
};

/// Views [first, first + count) into layers 0.. of `array` (and nothing
/// else): the caller's upload, or the GPU's FDK filtering.
using FillLayers = std::function<void(int first, int count, cudaArray_t array, cudaStream_t stream, PinnedStaging* staging,
                                      StageMarks& marks)>;

/// The layered-texture back-projection shared by backprojectCone and
/// reconstructFdk: batches of views (the constant memory's matrices), slabs
/// of z when the volume does not fit next to one batch, pinned staging of
/// large transfers. `fill` puts each batch's views into the array.
void backprojectLayers(int columns, int rows, std::span<const ProjectionMatrix> matrices, std::size_t inputBytes,
                       const VolumeGrid& grid, double scale, std::span<float> volume, int device,
                       ConeStageTimes* times, const FillLayers& fill) {
    const std::size_t image = static_cast<std::size_t>(columns) * static_cast<std::size_t>(rows);
    const int views = static_cast<int>(matrices.size());
    DeviceScope scope(device);
    cudaDeviceProp prop{};
    TOMO_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    if (columns > prop.maxTexture2DLayered[0] || rows > prop.maxTexture2DLayered[1])
        throw InvalidArgument("cone back-projection (cuda): a " + std::to_string(columns) + "x" +
                              std::to_string(rows) + " detector exceeds the layered texture limit of " +
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
    if (cudaMalloc3DArray(&raw, &format, cudaExtent{static_cast<std::size_t>(columns), static_cast<std::size_t>(rows), static_cast<std::size_t>(batch)}, cudaArrayLayered) != cudaSuccess) {
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

    // One stream: the stages do not overlap, so their events time them.
    StageMarks marks(times != nullptr);
    std::unique_ptr<PinnedStaging> staging;
    if (std::max(inputBytes, volume.size_bytes()) >= kStagedBytes)
        staging = std::make_unique<PinnedStaging>(std::max(image * sizeof(float), PinnedStaging::kDefaultBytes));
    std::vector<float> batchMatrices;
    auto upload = [&](int b) {
        const int first = b * batch, count = std::min(batch, views - first);
        fill(first, count, array.get(), stream.get(), staging.get(), marks);
        batchMatrices.assign(static_cast<std::size_t>(count) * 12, 0.0f);
        for (int p = 0; p < count; ++p)
            for (int e = 0; e < 12; ++e)
                batchMatrices[static_cast<std::size_t>(p) * 12 + e] = static_cast<float>(matrices[first + p].m[e]);
        TOMO_CUDA_CHECK(cudaStreamSynchronize(stream.get())); // the previous batch's kernels are done
        uploadConeMatrices(batchMatrices.data(), count, stream.get());
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
            marks.begin(StageMarks::Backproject, stream.get());
            launchConeBackproject(L, stream.get());
            marks.end(StageMarks::Backproject, stream.get());
        }
        marks.begin(StageMarks::Download, stream.get());
        float* target = volume.data() + sliceBytes / sizeof(float) * static_cast<std::size_t>(k0);
        const std::size_t bytes = sliceBytes * static_cast<std::size_t>(nz);
        if (!staging)
            TOMO_CUDA_CHECK(cudaMemcpyAsync(target, d_volume.get(), bytes, cudaMemcpyDeviceToHost, stream.get()));
        else
            staging->download(target, d_volume.get(), bytes, stream.get());
        marks.end(StageMarks::Download, stream.get());
        TOMO_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    }
    marks.write(times);
}

/// Views [first, first + count) of host memory into layers 0.. of `array`.
void copyLayers(const float* h_views, int columns, int rows, int count, int layer, cudaArray_t array,
                cudaMemcpyKind kind, cudaStream_t stream) {
    cudaMemcpy3DParms copy{};
    copy.srcPtr = cudaPitchedPtr{const_cast<float*>(h_views), static_cast<std::size_t>(columns) * sizeof(float),
                                 static_cast<std::size_t>(columns), static_cast<std::size_t>(rows)};
    copy.dstArray = array;
    copy.dstPos = cudaPos{0, 0, static_cast<std::size_t>(layer)};
    copy.extent = cudaExtent{static_cast<std::size_t>(columns), static_cast<std::size_t>(rows),
                             static_cast<std::size_t>(count)};
    copy.kind = kind;
    TOMO_CUDA_CHECK(cudaMemcpy3DAsync(&copy, stream));
}

} // namespace

void backprojectCone(const FilteredProjections& in, const VolumeGrid& grid, double scale, std::span<float> volume,
                     int device, ConeStageTimes* times) {
    const std::size_t image = static_cast<std::size_t>(in.columns) * static_cast<std::size_t>(in.rows);
    const int views = static_cast<int>(in.views.size());
    if (in.columns < 1 || in.rows < 1 || views < 1 || in.data.size() != image * in.views.size() ||
        volume.size() != grid.voxels())
        throw InvalidArgument("cone back-projection (cuda): sizes do not match (" + std::to_string(in.data.size()) +
                              " values for " + std::to_string(views) + " views, " + std::to_string(volume.size()) +
                              " voxels)");
    device = checkedDevice(device);
    std::lock_guard lock(constantMemory());
    backprojectLayers(in.columns, in.rows, in.views, in.data.size() * sizeof(float), grid, scale, volume, device, times,
                      [&](int first, int count, cudaArray_t array, cudaStream_t stream, PinnedStaging* staging,
                          StageMarks& marks) {
                          marks.begin(StageMarks::Upload, stream);
                          const float* source = in.data.data() + image * static_cast<std::size_t>(first);
                          if (!staging) {
                              copyLayers(source, in.columns, in.rows, count, 0, array, cudaMemcpyHostToDevice, stream);
                          } else {
                              // Threads fill one buffer while the other one's DMA runs.
                              staging->forEachPart(source, image * count * sizeof(float), image * sizeof(float),
                                                   stream, [&](const void* part, std::size_t offset, std::size_t bytes) {
                                                       copyLayers(static_cast<const float*>(part), in.columns, in.rows,
                                                                  static_cast<int>(bytes / (image * sizeof(float))),
                                                                  static_cast<int>(offset / (image * sizeof(float))),
                                                                  array, cudaMemcpyHostToDevice, stream);
                                                   });
                          }
                          marks.end(StageMarks::Upload, stream);
                      });
}

void reconstructFdk(const FdkWeights& w, std::span<const float> projections, const FilterOptions& filter,
                    const VolumeGrid& grid, double scale, std::span<float> volume, int device, ConeStageTimes* times) {
    const int views = static_cast<int>(w.normalised.size()), columns = w.columns, rows = w.rows;
    const std::size_t image = static_cast<std::size_t>(columns) * static_cast<std::size_t>(rows);
    if (columns < 1 || rows < 1 || views < 1 || projections.size() != image * views || volume.size() != grid.voxels() ||
        w.frames.size() != w.normalised.size() || w.rowWeights.size() != w.normalised.size())
        throw InvalidArgument("FDK (cuda): sizes do not match (" + std::to_string(projections.size()) + " values for " +
                              std::to_string(views) + " views, " + std::to_string(volume.size()) + " voxels)");
    device = checkedDevice(device);
    std::lock_guard lock(constantMemory());
    DeviceScope scope(device);

    // Chunks of whole views of about 128 MiB of padded rows: the FFT
    // workspace, the raw chunk and its filtered copy.
    const std::size_t padded = static_cast<std::size_t>(paddedLength(columns));
    const int chunkViews = static_cast<int>(std::clamp<std::size_t>((std::size_t{128} << 20) / (padded * rows * sizeof(float)), 1, views));
    const int chunkRows = chunkViews * rows;
    Stream setup = Stream::create();
    // Per detector row of every view: its view's weight after the filter.
    std::vector<double> rowWeights(static_cast<std::size_t>(views) * rows);
    for (int p = 0; p < views; ++p)
        std::fill_n(rowWeights.begin() + static_cast<std::ptrdiff_t>(p) * rows, rows, w.rowWeights[p]);
    GpuFilter ramp(device, columns, chunkRows, filter, rowWeights, setup.get());
    std::vector<float> frames;
    for (const auto& [centreU, centreV, focalU, focalV] : w.frames)
        frames.insert(frames.end(), {static_cast<float>(centreU), static_cast<float>(centreV),
                                     static_cast<float>(1.0 / focalU), static_cast<float>(1.0 / focalV)});
    DeviceBuffer<float> d_frames(device, frames.size(), "the FDK view frames");
    copyToDeviceNow(d_frames.get(), frames.data(), frames.size() * sizeof(float), setup.get());
    DeviceBuffer<float> d_columnWeights;
    if (!w.columnWeights.empty()) {
        d_columnWeights = DeviceBuffer<float>(device, w.columnWeights.size(), "the Parker weights");
        copyToDeviceNow(d_columnWeights.get(), w.columnWeights.data(), w.columnWeights.size() * sizeof(float), setup.get());
    }
    DeviceBuffer<float> d_raw(device, image * chunkViews, "the raw projections of one chunk");
    DeviceBuffer<float> d_filtered(device, image * chunkViews, "the filtered projections of one chunk");

    backprojectLayers(columns, rows, w.normalised, projections.size_bytes(), grid, scale, volume, device, times,
                      [&](int first, int count, cudaArray_t array, cudaStream_t stream, PinnedStaging* staging,
                          StageMarks& marks) {
                          for (int done = 0; done < count; done += chunkViews) {
                              const int n = std::min(chunkViews, count - done);
                              const int view = first + done;
                              const std::size_t bytes = image * n * sizeof(float);
                              const float* source = projections.data() + image * static_cast<std::size_t>(view);
                              marks.begin(StageMarks::Upload, stream);
                              if (!staging)
                                  TOMO_CUDA_CHECK(cudaMemcpyAsync(d_raw.get(), source, bytes, cudaMemcpyHostToDevice, stream));
                              else
                                  staging->forEachPart(source, bytes, sizeof(float), stream,
                                                       [&](const void* part, std::size_t offset, std::size_t partBytes) {
                                                           TOMO_CUDA_CHECK(cudaMemcpyAsync(
                                                               reinterpret_cast<char*>(d_raw.get()) + offset, part,
                                                               partBytes, cudaMemcpyHostToDevice, stream));
                                                       });
                              marks.end(StageMarks::Upload, stream);
                              marks.begin(StageMarks::Filter, stream);
                              ConeWeightLaunch weigh;
                              weigh.d_views = d_raw.get();
                              weigh.views = n;
                              weigh.rows = rows;
                              weigh.columns = columns;
                              weigh.d_frames = d_frames.get() + static_cast<std::size_t>(view) * 4;
                              weigh.d_columnWeights = d_columnWeights.get()
                                                          ? d_columnWeights.get() + static_cast<std::size_t>(view) * columns
                                                          : nullptr;
                              launchConeWeight(weigh, stream);
                              ramp.filter(d_raw.get(), n * rows, stream);
                              PackLaunch pack;
                              pack.d_fft = ramp.d_spectrum();
                              pack.layout = ramp.layout(n * rows);
                              pack.projections = n * rows;
                              pack.d_weights = ramp.d_weights() + static_cast<std::size_t>(view) * rows;
                              pack.d_out = d_filtered.get();
                              pack.pitchBytes = static_cast<std::size_t>(columns) * sizeof(float);
                              launchPack(pack, stream);
                              copyLayers(d_filtered.get(), columns, rows, n, done, array, cudaMemcpyDeviceToDevice,
                                         stream);
                              marks.end(StageMarks::Filter, stream);
                          }
                      });
}

} // namespace tomo::cuda
