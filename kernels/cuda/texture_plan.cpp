#include "texture_plan.h"

#include "alu.h"
#include "hybrid.h"
#include "oversample.h"
#include "tex_optimized.h"
#include "tex_standard.h"

#include "tomo/error.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>

namespace tomo::cuda {

namespace {

constexpr int kMaxSlicesCap = 256;
constexpr double kStoreBudget = 0.75;      // share of the free device memory the kept sinograms may take
constexpr std::size_t kRowAlignment = 512; // >= texturePitchAlignment and textureAlignment: every pass starts aligned

using Clock = std::chrono::steady_clock;

// Banded back-projection (texture_plan.h): bands are whole rows of the
// kernel's tiles (16 rows for the texture kernels, 32 or 64 for the ALU
// ones) of about kBandBytes of output per slice, at most kMaxBands, and at
// least kBandTilesPerSm tiles per SM (a band of 128 rows of 64x64 tiles
// would leave most SMs idle); regions under kMinBandedBytes per slice run as
// one launch (their download is short).
constexpr int kTextureTileRows = 16;
constexpr std::size_t kBandBytes = 1u << 20;
constexpr std::size_t kMinBandedBytes = 4u << 20;
constexpr int kMaxBands = 32;
constexpr int kBandTilesPerSm = 8;

int bandRowsFromEnvironment() {
    const char* value = std::getenv("TOMO_CUDA_BAND_ROWS");
    if (!value || !*value) return -1;
    char* end = nullptr;
    const long rows = std::strtol(value, &end, 10);
    if (*end != '\0' || rows < 0) return -1;
    return static_cast<int>(std::min<long>(rows, 1 << 20));
}

std::uint64_t nextGeometryVersion() {
    static std::atomic<std::uint64_t> counter{0};
    return ++counter;
}

SinogramLayout layoutFor(TextureKernel kernel) {
    // The ALU strategies read the packed texels as plain memory: pitched only.
    if (isAluFamily(kernel)) return SinogramLayout::Pitched;
    const char* value = std::getenv("TOMO_CUDA_SINOGRAM_LAYOUT");
    if (value && std::string(value) == "array") return SinogramLayout::Array;
    return SinogramLayout::Pitched;
}

} // namespace

Sampling samplingFor(const ReconOptions& options) {
    if (options.interpolation == Interpolation::Linear) return Sampling::Hardware;
    if (const char* value = std::getenv("TOMO_CUDA_NEAREST"); value && std::string(value) == "hardware")
        return Sampling::Hardware;
    return Sampling::SnapDouble;
}

namespace {

cudaChannelFormatDesc channelFormat(int channels, bool half) {
    const int bits = half ? 16 : 32;
    return cudaCreateChannelDesc(bits, channels >= 2 ? bits : 0, channels >= 4 ? bits : 0, channels >= 4 ? bits : 0,
                                 cudaChannelFormatKindFloat);
}

cudaTextureDesc textureDesc(bool linear) {
    cudaTextureDesc t{};
    t.addressMode[0] = cudaAddressModeBorder; // bins -1 and `bins` read as 0 (geometry.h)
    t.addressMode[1] = cudaAddressModeClamp;
    t.filterMode = linear ? cudaFilterModeLinear : cudaFilterModePoint;
    t.readMode = cudaReadModeElementType; // half texels are returned as float
    t.normalizedCoords = 0;
    return t;
}

int copyThreads() {
    const unsigned hw = std::thread::hardware_concurrency();
    return static_cast<int>(std::clamp(hw / 2, 1u, 8u));
}

} // namespace

TexturePlan::TexturePlan(const ReconGeometry& geometry, const ReconOptions& options, TextureKernel kernel)
    : ReconstructionPlan(geometry, options), m_kernel(kernel), m_layout(layoutFor(kernel)),
      m_tuning(parseAluTuning(kernel, options)),
      m_sampling(samplingFor(options)),
      m_device(options.device), m_channels(options.slicesPerPass), m_half(options.precision == Precision::Float16),
      m_linear(options.interpolation == Interpolation::Linear), m_copier(copyThreads()) {
    // tex-optimized filters four float32 slices as two float2 planes (see
    // tex_optimized.cu); point sampling of float4 runs at the float2 rate.
    m_planes = kernel == TextureKernel::Optimized && !m_half && m_channels == 4 && m_linear ? 2 : 1;
    const std::string who = "strategy '" + strategyName(kernel) + "'";
    int devices = 0;
    TOMO_CUDA_CHECK(cudaGetDeviceCount(&devices));
    if (m_device < 0 || m_device >= devices)
        throw InvalidArgument(who + ": device " + std::to_string(m_device) + " does not exist (" +
                              std::to_string(devices) + " CUDA device(s): 0 to " + std::to_string(devices - 1) + ")");
    DeviceScope scope(m_device);
    const std::string probe = kernel == TextureKernel::Standard    ? texStandardProbe()
                              : kernel == TextureKernel::Optimized ? texOptimizedProbe()
                                                                   : aluProbe();
    if (!probe.empty())
        throw DeviceError(deviceLabel(m_device) + " cannot run the " + strategyName(kernel) + " kernels: " + probe);

    const Geometry& g = m_geometry.geometry;
    const int projections = g.projections();
    cudaDeviceProp prop{};
    TOMO_CUDA_CHECK(cudaGetDeviceProperties(&prop, m_device));
    m_multiprocessors = prop.multiProcessorCount;
    const int maxHeight = m_layout == SinogramLayout::Array ? prop.maxTexture2D[1] : prop.maxTexture2DLinear[1];
    const int maxWidth = m_layout == SinogramLayout::Array ? prop.maxTexture2D[0] : prop.maxTexture2DLinear[0];
    if (projections > maxHeight)
        throw InvalidArgument(who + ": " + std::to_string(projections) + " projections exceed the texture height limit of " +
                              deviceLabel(m_device) + " (" + std::to_string(maxHeight) + ")");
    if (g.bins > maxWidth)
        throw InvalidArgument(who + ": " + std::to_string(g.bins) + " bins exceed the texture width limit of " +
                              deviceLabel(m_device) + " (" + std::to_string(maxWidth) + ")");
    const std::size_t rowBytes = static_cast<std::size_t>(g.bins) * texelBytes(m_channels / m_planes, m_half);
    m_pitch = (rowBytes + kRowAlignment - 1) / kRowAlignment * kRowAlignment;

    // Refuse early, with numbers, when one chunk cannot fit at all.
    const std::size_t chunkValues = static_cast<std::size_t>(m_channels) * sliceValues();
    const int padded = paddedLength(g.bins);
    const std::size_t fixedBytes = 2 * chunkValues * sizeof(float) +                          // d_in x 2
                                   2 * m_channels * regionPixels() * sizeof(float) +           // d_out x 2
                                   2 * static_cast<std::size_t>((m_channels * projections + 1) / 2) * padded *
                                       sizeof(float) * 2 +                                    // FFT data + work (estimate)
                                   static_cast<std::size_t>(projections) * m_pitch * m_planes; // one pass of texels
    {
        std::size_t freeBytes = 0, totalBytes = 0;
        TOMO_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
        if (fixedBytes > freeBytes) throwDeviceOutOfMemory(m_device, "one chunk of " + std::to_string(m_channels) +
                                                                          " slice(s) (" + who + ")", fixedBytes);
    }

    m_compute = Stream::create();
    // High priority: the filter's blocks take SMs as back-projection blocks
    // retire, so pass i+1 is ready before pass i ends and its time is its own.
    m_filterStream = Stream::create(true);
    m_copyIn = Stream::create();
    m_copyOut = Stream::create();
    m_compute2 = Stream::create();
    m_bandStart = Event::create(false);
    m_bandsDone = Event::create(false);
    m_bandRowsSetting = bandRowsFromEnvironment();
    d_geometry = DeviceBuffer<float>(m_device, static_cast<std::size_t>(projections) * kGeometryFloats,
                                     "the geometry constants");
    d_geometryDouble = DeviceBuffer<GeometryDouble>(m_device, static_cast<std::size_t>(projections),
                                                    "the geometry constants");
    if (isAluFamily(m_kernel))
        d_counters = DeviceBuffer<unsigned>(m_device, 2 * kAluCounters, "the tile counters");
    computeGeometry();
    uploadGeometry(true);
    m_filter = std::make_unique<GpuFilter>(m_device, g.bins, m_channels * projections, options.filter,
                                           angularWeights(g.angles), m_filterStream.get());
    for (Slot& s : m_slots) {
        s.d_in = DeviceBuffer<float>(m_device, chunkValues, "the sinogram input buffers");
        s.uploaded = Event::create(false);
        s.filtered = Event::create(false);
        s.computed = Event::create(false);
        s.downloaded = Event::create(false);
        for (Event& e : s.downloadedPiece) e = Event::create(false);
    }
    ensureOutput(regionPixels());
    if (m_layout == SinogramLayout::Array)
        d_store = DeviceBuffer<unsigned char>(m_device, passBytes(), "the texel staging buffer");

    // What the kept, packed sinograms may take: a share of what is free now.
    std::size_t freeBytes = 0, totalBytes = 0;
    TOMO_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    const std::size_t perPass = passBytes();
    const auto passes = static_cast<long long>(kStoreBudget * static_cast<double>(freeBytes) / static_cast<double>(perPass));
    m_maxSlices = static_cast<int>(std::min<long long>(passes * m_channels, kMaxSlicesCap / m_channels * m_channels));
    if (m_maxSlices < m_channels)
        throwDeviceOutOfMemory(m_device, "the filtered sinograms of one pass (" + who + ")", perPass);
}

TexturePlan::~TexturePlan() { drain(); }

void TexturePlan::drain() noexcept {
    for (const Stream* s : {&m_compute, &m_compute2, &m_filterStream, &m_copyIn, &m_copyOut})
        if (s->get()) (void)cudaStreamSynchronize(s->get());
}

std::size_t TexturePlan::sliceValues() const {
    return static_cast<std::size_t>(m_geometry.geometry.projections()) * static_cast<std::size_t>(m_geometry.geometry.bins);
}

std::size_t TexturePlan::passBytes() const {
    return static_cast<std::size_t>(m_geometry.geometry.projections()) * m_pitch * m_planes;
}

std::size_t TexturePlan::pieceBytes(std::size_t bytes) {
    constexpr std::size_t kMinPiece = 4u << 20;
    return std::max(kMinPiece, (bytes + kPieces - 1) / kPieces);
}

void TexturePlan::computeGeometry() {
    const Geometry& g = m_geometry.geometry;
    const int projections = g.projections();
    h_geometry.assign(static_cast<std::size_t>(projections) * kGeometryFloats, 0.0f);
    h_geometryDouble.assign(static_cast<std::size_t>(projections), GeometryDouble{});
    for (int p = 0; p < projections; ++p) {
        const double c = std::cos(g.angles[p]);
        const double s = std::sin(g.angles[p]);
        float* out = h_geometry.data() + static_cast<std::size_t>(p) * kGeometryFloats;
        out[0] = static_cast<float>(c);
        out[1] = static_cast<float>(s);
        out[3] = static_cast<float>(std::min({0.0, c, -s, c - s}));
        h_geometryDouble[static_cast<std::size_t>(p)] = GeometryDouble{c, s, 0.0, 0.0};
    }
    updateAxisConstants();
}

void TexturePlan::updateAxisConstants() {
    const Geometry& g = m_geometry.geometry;
    const int projections = g.projections();
    for (int p = 0; p < projections; ++p) {
        const double axis = g.axisAt(p);
        h_geometry[static_cast<std::size_t>(p) * kGeometryFloats + 2] = static_cast<float>(axis);
        h_geometryDouble[static_cast<std::size_t>(p)].axis = axis;
    }
    m_geometryVersion = nextGeometryVersion();
}

void TexturePlan::uploadGeometry(bool all) {
    // tex-optimized reads one table from device memory (float4 for hardware
    // sampling, double for SnapDouble); tex-standard's launcher copies the
    // host table into constant memory itself.
    // The ALU strategies read the doubles (their rows' h_m), hybrid also the floats.
    const bool optimized = m_kernel == TextureKernel::Optimized;
    const bool alu = isAluFamily(m_kernel);
    const bool floats = all || (optimized && m_sampling == Sampling::Hardware) || m_kernel == TextureKernel::Hybrid;
    const bool doubles = all || (optimized && m_sampling == Sampling::SnapDouble) || alu;
    DeviceScope scope(m_device);
    // Stream-ordered after the kernels already queued (they may still read the
    // old constants) and before the next ones; a pageable source is staged
    // before the call returns, so the host tables may change right after.
    if (floats)
        TOMO_CUDA_CHECK(cudaMemcpyAsync(d_geometry.get(), h_geometry.data(), h_geometry.size() * sizeof(float),
                                        cudaMemcpyHostToDevice, m_compute.get()));
    if (doubles)
        TOMO_CUDA_CHECK(cudaMemcpyAsync(d_geometryDouble.get(), h_geometryDouble.data(),
                                        h_geometryDouble.size() * sizeof(GeometryDouble), cudaMemcpyHostToDevice,
                                        m_compute.get()));
}

void TexturePlan::ensurePasses(int passes) {
    if (static_cast<int>(m_passes.size()) >= passes) return;
    const int projections = m_geometry.geometry.projections();
    const int bins = m_geometry.geometry.bins;
    const std::size_t planeBytes = static_cast<std::size_t>(projections) * m_pitch;
    const std::string what = "the filtered sinograms (" + std::to_string(passes) + " pass(es) of " +
                             std::to_string(m_channels) + " slice(s))";
    m_passes.clear();
    const cudaChannelFormatDesc format = channelFormat(m_channels / m_planes, m_half);
    const cudaTextureDesc texture = textureDesc(m_linear);
    if (m_layout == SinogramLayout::Pitched) {
        d_store.reset();
        d_store = DeviceBuffer<unsigned char>(m_device, passBytes() * passes, what);
    }
    m_passes.resize(static_cast<std::size_t>(passes));
    for (int p = 0; p < passes; ++p)
        for (int plane = 0; plane < m_planes; ++plane) {
            Pass& pass = m_passes[static_cast<std::size_t>(p)];
            cudaResourceDesc resource{};
            if (m_layout == SinogramLayout::Pitched) {
                resource.resType = cudaResourceTypePitch2D;
                resource.res.pitch2D.devPtr = d_store.get() + passBytes() * p + planeBytes * plane;
                resource.res.pitch2D.desc = format;
                resource.res.pitch2D.width = static_cast<std::size_t>(bins);
                resource.res.pitch2D.height = static_cast<std::size_t>(projections);
                resource.res.pitch2D.pitchInBytes = m_pitch;
            } else {
                pass.array[plane] = CudaArray(m_device, format, bins, projections, what);
                resource.resType = cudaResourceTypeArray;
                resource.res.array.array = pass.array[plane].get();
            }
            pass.texture[plane] = TextureObject(resource, texture);
        }
    if (m_half) {
        d_scales = DeviceBuffer<float>(m_device, 2 * static_cast<std::size_t>(passes), "the float16 scales");
        d_maxBits = DeviceBuffer<unsigned>(m_device, static_cast<std::size_t>(passes), "the float16 scales");
    }
}

void TexturePlan::ensureOutput(std::size_t pixels) {
    const std::size_t values = static_cast<std::size_t>(m_channels) * pixels;
    if (m_slots[0].d_out.size() >= values) return;
    for (Slot& s : m_slots) {
        s.d_out.reset();
        s.d_out = DeviceBuffer<float>(m_device, values, "the slice output buffers");
    }
}

// ----------------------------------------------------------------- stages

void TexturePlan::stageAndUpload(int chunk, const float* h_src, int slices) {
    Slot& s = m_slots[chunk % 2];
    const std::size_t bytes = static_cast<std::size_t>(slices) * sliceValues() * sizeof(float);
    TOMO_CUDA_CHECK(cudaEventSynchronize(s.uploaded.get()));                  // the pinned half is free again
    TOMO_CUDA_CHECK(cudaStreamWaitEvent(m_copyIn.get(), s.filtered.get(), 0)); // d_in no longer read
    const int span = m_spans.begin(StageSpans::kUpload, m_copyIn.get());
    // Piece by piece: the DMA of one piece overlaps the host copy of the next.
    const std::size_t piece = pieceBytes(bytes);
    auto* staging = reinterpret_cast<unsigned char*>(
        pinned(s.h_in, static_cast<std::size_t>(m_channels) * sliceValues(), "the sinogram input buffers"));
    auto* device = reinterpret_cast<unsigned char*>(s.d_in.get());
    const auto* source = reinterpret_cast<const unsigned char*>(h_src);
    for (std::size_t offset = 0; offset < bytes; offset += piece) {
        const std::size_t n = std::min(piece, bytes - offset);
        m_copier.copy(staging + offset, source + offset, n); // (inside the upload span)
        TOMO_CUDA_CHECK(cudaMemcpyAsync(device + offset, staging + offset, n, cudaMemcpyHostToDevice, m_copyIn.get()));
    }
    m_spans.end(span, m_copyIn.get());
    TOMO_CUDA_CHECK(cudaEventRecord(s.uploaded.get(), m_copyIn.get()));
}

void TexturePlan::stageAndUploadRaw(int chunk, const PassInput& input, int firstSlice, int slices) {
    Slot& s = m_slots[chunk % 2];
    TOMO_CUDA_CHECK(cudaEventSynchronize(s.uploaded.get()));                  // the pinned half is free again
    TOMO_CUDA_CHECK(cudaStreamWaitEvent(m_copyIn.get(), s.filtered.get(), 0)); // d_raw no longer read
    const int span = m_spans.begin(StageSpans::kUpload, m_copyIn.get());
    m_spans.addHost(StageSpans::kUpload, m_raw->upload(chunk % 2, *input.raw, *input.field, firstSlice, slices,
                                                       m_copier, m_copyIn.get()));
    m_spans.end(span, m_copyIn.get());
    TOMO_CUDA_CHECK(cudaEventRecord(s.uploaded.get(), m_copyIn.get()));
}

void TexturePlan::filterChunk(int chunk, int slices, int pass, const PassInput* rawInput, int firstSlice) {
    const RawRows* raw = rawInput ? rawInput->raw : nullptr;
    Slot& s = m_slots[chunk % 2];
    cudaStream_t stream = m_filterStream.get();
    const int projections = m_geometry.geometry.projections();
    TOMO_CUDA_CHECK(cudaStreamWaitEvent(stream, s.uploaded.get(), 0));
    const int span = m_spans.begin(StageSpans::kFilter, stream);
    if (raw) m_raw->correct(chunk % 2, *raw, *rawInput->field, firstSlice, slices, s.d_in.get(), stream);
    m_filter->filter(s.d_in.get(), slices * projections, stream);
    const FilterLayout layout = m_filter->layout(slices * projections);

    PackLaunch pack;
    pack.d_fft = m_filter->d_spectrum();
    pack.layout = layout;
    pack.projections = projections;
    pack.channels = m_channels / m_planes;
    pack.validSlices = slices;
    pack.half = m_half;
    pack.d_weights = m_filter->d_weights();
    pack.pitchBytes = m_pitch;
    if (m_half) {
        unsigned* maxBits = d_maxBits.get() + pass;
        float* scale = d_scales.get() + 2 * static_cast<std::size_t>(pass);
        TOMO_CUDA_CHECK(cudaMemsetAsync(maxBits, 0, sizeof(unsigned), stream));
        launchMaxAbsWeighted(layout, m_filter->d_spectrum(), m_filter->d_weights(), projections, maxBits, stream);
        launchHalfScale(maxBits, scale, stream);
        pack.d_scale = scale;
    }
    const std::size_t planeBytes = static_cast<std::size_t>(projections) * m_pitch;
    unsigned char* base = m_layout == SinogramLayout::Pitched ? d_store.get() + passBytes() * pass : d_store.get();
    for (int plane = 0; plane < m_planes; ++plane) {
        pack.firstSlice = plane * pack.channels;
        pack.d_out = base + planeBytes * plane;
        launchPack(pack, stream);
        if (m_layout == SinogramLayout::Array) {
            const std::size_t rowBytes =
                static_cast<std::size_t>(m_geometry.geometry.bins) * texelBytes(pack.channels, m_half);
            TOMO_CUDA_CHECK(cudaMemcpy2DToArrayAsync(m_passes[pass].array[plane].get(), 0, 0, pack.d_out, m_pitch,
                                                     rowBytes, projections, cudaMemcpyDeviceToDevice, stream));
        }
    }
    m_spans.end(span, stream);
    TOMO_CUDA_CHECK(cudaEventRecord(s.filtered.get(), stream));
}

BackprojectLaunch TexturePlan::launchFor(int chunk, int slices, int pass, int bandY, int bandHeight) const {
    const Slot& s = m_slots[chunk % 2];
    const Region& r = m_geometry.region;
    BackprojectLaunch L;
    L.texture = m_passes[pass].texture[0].get();
    L.texture2 = m_planes == 2 ? m_passes[pass].texture[1].get() : 0;
    L.planes = m_planes;
    L.channels = m_channels;
    L.d_geometry = d_geometry.get();
    L.h_geometry = h_geometry.data();
    L.d_geometryDouble = d_geometryDouble.get();
    L.h_geometryDouble = h_geometryDouble.data();
    L.sampling = m_sampling;
    L.geometryVersion = m_geometryVersion;
    L.projections = m_geometry.geometry.projections();
    L.regionX = r.x;
    L.regionY = r.y + bandY;
    L.regionWidth = r.width;
    L.regionHeight = bandHeight;
    L.centreX = static_cast<float>((m_geometry.sliceWidth - 1) / 2.0);
    L.centreY = static_cast<float>((m_geometry.sliceHeight - 1) / 2.0);
    L.d_slices = s.d_out.get() + static_cast<std::size_t>(bandY) * static_cast<std::size_t>(r.width);
    L.sliceStride = regionPixels();
    L.slices = slices;
    L.d_scale = m_half ? d_scales.get() + 2 * static_cast<std::size_t>(pass) : nullptr;
    if (m_layout == SinogramLayout::Pitched) L.d_sinogram = d_store.get() + passBytes() * static_cast<std::size_t>(pass);
    L.pitchBytes = m_pitch;
    L.bins = m_geometry.geometry.bins;
    L.half = m_half;
    L.linear = m_linear;
    L.aluShape = m_tuning.shape;
    L.textureShare = m_tuning.textureShare;
    return L;
}

void TexturePlan::launchKernel(BackprojectLaunch L, cudaStream_t stream) {
    // ALU strategies: each compute stream has its counters (bands on two streams run at once).
    if (d_counters.get()) L.d_counters = d_counters.get() + (stream == m_compute2.get() ? kAluCounters : 0);
    switch (m_kernel) {
    case TextureKernel::Standard: launchTexStandard(L, stream); break;
    case TextureKernel::Optimized: launchTexOptimized(L, stream); break;
    case TextureKernel::Alu: launchAlu(L, stream); break;
    case TextureKernel::Oversample: launchOversample(L, stream); break;
    case TextureKernel::Hybrid: launchHybrid(L, stream); break;
    }
}

void TexturePlan::backprojectPass(int chunk, int slices, int pass) {
    Slot& s = m_slots[chunk % 2];
    cudaStream_t stream = m_compute.get();
    TOMO_CUDA_CHECK(cudaStreamWaitEvent(stream, s.downloaded.get(), 0)); // d_out no longer read
    TOMO_CUDA_CHECK(cudaStreamWaitEvent(stream, s.filtered.get(), 0));   // this chunk's pass is packed
    const BackprojectLaunch L = launchFor(chunk, slices, pass, 0, m_geometry.region.height);
    const int span = m_spans.begin(StageSpans::kBackproject, stream);
    launchKernel(L, stream);
    m_spans.end(span, stream);
    TOMO_CUDA_CHECK(cudaEventRecord(s.computed.get(), stream));
}

void TexturePlan::download(int chunk, int slices, float* direct) {
    Slot& s = m_slots[chunk % 2];
    const std::size_t bytes = static_cast<std::size_t>(slices) * regionPixels() * sizeof(float);
    TOMO_CUDA_CHECK(cudaStreamWaitEvent(m_copyOut.get(), s.computed.get(), 0));
    const int span = m_spans.begin(StageSpans::kDownload, m_copyOut.get());
    if (direct) {
        TOMO_CUDA_CHECK(cudaMemcpyAsync(direct, s.d_out.get(), bytes, cudaMemcpyDeviceToHost, m_copyOut.get()));
        m_spans.end(span, m_copyOut.get());
        TOMO_CUDA_CHECK(cudaEventRecord(s.downloaded.get(), m_copyOut.get()));
        return;
    }
    const std::size_t piece = pieceBytes(bytes);
    auto* staging = reinterpret_cast<unsigned char*>(pinned(s.h_out, s.d_out.size(), "the slice output buffers"));
    int index = 0;
    for (std::size_t offset = 0; offset < bytes; offset += piece, ++index) {
        const std::size_t n = std::min(piece, bytes - offset);
        TOMO_CUDA_CHECK(cudaMemcpyAsync(staging + offset,
                                        reinterpret_cast<const unsigned char*>(s.d_out.get()) + offset, n,
                                        cudaMemcpyDeviceToHost, m_copyOut.get()));
        TOMO_CUDA_CHECK(cudaEventRecord(s.downloadedPiece[index].get(), m_copyOut.get()));
    }
    m_spans.end(span, m_copyOut.get());
    TOMO_CUDA_CHECK(cudaEventRecord(s.downloaded.get(), m_copyOut.get()));
}

void TexturePlan::finishDownload(int chunk, int slices, float* h_dst) {
    Slot& s = m_slots[chunk % 2];
    const std::size_t bytes = static_cast<std::size_t>(slices) * regionPixels() * sizeof(float);
    const std::size_t piece = pieceBytes(bytes);
    int index = 0;
    // Piece by piece: the host copy of one piece overlaps the DMA of the next.
    for (std::size_t offset = 0; offset < bytes; offset += piece, ++index) {
        const std::size_t n = std::min(piece, bytes - offset);
        TOMO_CUDA_CHECK(cudaEventSynchronize(s.downloadedPiece[index].get()));
        const auto start = Clock::now();
        m_copier.copy(reinterpret_cast<unsigned char*>(h_dst) + offset,
                      reinterpret_cast<const unsigned char*>(s.h_out.get()) + offset, n);
        m_spans.addHost(StageSpans::kDownload, std::chrono::duration<double>(Clock::now() - start).count());
    }
}

// ----------------------------------------------------------------- API

void TexturePlan::setSinograms(std::span<const float> sinograms, int count) {
    requireSinograms(sinograms, count);
    DeviceScope scope(m_device);
    const int passes = (count + m_channels - 1) / m_channels;
    m_count = 0; // nothing usable if this throws half way
    ensurePasses(passes);
    m_spans.reset();
    try {
        for (int g = 0; g < passes; ++g) {
            const int slices = std::min(m_channels, count - g * m_channels);
            stageAndUpload(g, sinograms.data() + static_cast<std::size_t>(g) * m_channels * sliceValues(), slices);
            filterChunk(g, slices, g);
        }
        TOMO_CUDA_CHECK(cudaStreamSynchronize(m_filterStream.get()));
        m_times = StageTimes{};
        m_spans.collect(m_times);
    } catch (...) {
        drain();
        throw;
    }
    m_count = count;
}

int TexturePlan::bandRows() const {
    const Region& r = m_geometry.region;
    if (m_count == 0 || m_count > m_channels || m_bandRowsSetting == 0) return 0; // one pass only
    // tex-standard over several constant batches re-uploads constant memory
    // (with a device synchronisation) per batch: per band too. One launch.
    const int batch =
        m_sampling == Sampling::SnapDouble ? kTexStandardMaxProjectionsDouble : kTexStandardMaxProjections;
    if (m_kernel == TextureKernel::Standard && m_geometry.geometry.projections() > batch) return 0;
    const int tile = isAluFamily(m_kernel) ? kAluShapes[m_tuning.shape].tile : kTextureTileRows;
    long long rows = m_bandRowsSetting;
    if (rows < 0) {
        const std::size_t rowBytes = static_cast<std::size_t>(r.width) * sizeof(float);
        if (rowBytes * static_cast<std::size_t>(r.height) < kMinBandedBytes) return 0;
        rows = static_cast<long long>((kBandBytes + rowBytes - 1) / rowBytes);
        rows = std::max<long long>(rows, (r.height + kMaxBands - 1) / kMaxBands);
        const long long across = (r.width + tile - 1) / tile + 1;
        rows = std::max<long long>(rows, (kBandTilesPerSm * static_cast<long long>(m_multiprocessors) + across - 1) /
                                             across * tile);
    }
    rows = std::max<long long>(1, (rows + tile - 1) / tile) * tile; // whole tiles: a band computes its tiles in full
    return rows < r.height ? static_cast<int>(rows) : 0;
}

void TexturePlan::backprojectBanded(std::span<float> out, int rowsPerBand) {
    Slot& s = m_slots[0];
    const Region& r = m_geometry.region;
    const int slices = m_count; // one pass (bandRows())
    const std::size_t pixels = regionPixels();
    float* staging = pinned(s.h_out, s.d_out.size(), "the slice output buffers");
    const int bands = (r.height + rowsPerBand - 1) / rowsPerBand;
    while (static_cast<int>(m_bandComputed.size()) < bands) {
        m_bandComputed.push_back(Event::create(false));
        m_bandDownloaded.push_back(Event::create(false));
    }
    cudaStream_t streams[2] = {m_compute.get(), m_compute2.get()};
    cudaStream_t copy = m_copyOut.get();
    m_spans.reset();
    try {
        // Stream 0 holds the geometry upload (setAxis); stream 1 starts after it.
        TOMO_CUDA_CHECK(cudaStreamWaitEvent(streams[0], s.downloaded.get(), 0)); // d_out no longer read
        TOMO_CUDA_CHECK(cudaStreamWaitEvent(streams[0], s.filtered.get(), 0));   // the pass is packed
        const int span = m_spans.begin(StageSpans::kBackproject, streams[0]);
        TOMO_CUDA_CHECK(cudaEventRecord(m_bandStart.get(), streams[0]));
        TOMO_CUDA_CHECK(cudaStreamWaitEvent(streams[1], m_bandStart.get(), 0));
        for (int i = 0; i < bands; ++i) {
            const int y = i * rowsPerBand;
            const int height = std::min(rowsPerBand, r.height - y);
            cudaStream_t stream = streams[i % 2];
            launchKernel(launchFor(0, slices, 0, y, height), stream);
            TOMO_CUDA_CHECK(cudaEventRecord(m_bandComputed[i].get(), stream));

            // The band of every slice: [slice][rows of the band] in d_out and h_out.
            TOMO_CUDA_CHECK(cudaStreamWaitEvent(copy, m_bandComputed[i].get(), 0));
            const int downloadSpan = m_spans.begin(StageSpans::kDownload, copy);
            const std::size_t offset = static_cast<std::size_t>(y) * r.width;
            const std::size_t bytes = static_cast<std::size_t>(height) * r.width * sizeof(float);
            TOMO_CUDA_CHECK(cudaMemcpy2DAsync(staging + offset, pixels * sizeof(float), s.d_out.get() + offset,
                                              pixels * sizeof(float), bytes, static_cast<std::size_t>(slices),
                                              cudaMemcpyDeviceToHost, copy));
            m_spans.end(downloadSpan, copy);
            TOMO_CUDA_CHECK(cudaEventRecord(m_bandDownloaded[i].get(), copy));
        }
        if (bands > 1) {
            TOMO_CUDA_CHECK(cudaEventRecord(m_bandsDone.get(), streams[1]));
            TOMO_CUDA_CHECK(cudaStreamWaitEvent(streams[0], m_bandsDone.get(), 0));
        }
        m_spans.end(span, streams[0]); // backproject = first band start to last band end
        TOMO_CUDA_CHECK(cudaEventRecord(s.computed.get(), streams[0]));
        TOMO_CUDA_CHECK(cudaEventRecord(s.downloaded.get(), copy));

        // Band by band: the host copy of band i overlaps the kernels of later bands.
        for (int i = 0; i < bands; ++i) {
            const int y = i * rowsPerBand;
            const int height = std::min(rowsPerBand, r.height - y);
            const std::size_t offset = static_cast<std::size_t>(y) * r.width;
            const std::size_t bytes = static_cast<std::size_t>(height) * r.width * sizeof(float);
            TOMO_CUDA_CHECK(cudaEventSynchronize(m_bandDownloaded[i].get()));
            const auto start = Clock::now();
            for (int c = 0; c < slices; ++c)
                m_copier.copy(out.data() + c * pixels + offset, staging + c * pixels + offset, bytes);
            m_spans.addHost(StageSpans::kDownload, std::chrono::duration<double>(Clock::now() - start).count());
        }
        m_spans.collect(m_times);
    } catch (...) {
        drain();
        throw;
    }
}

void TexturePlan::backproject(std::span<float> slices) {
    if (m_count == 0) throw InvalidArgument("backproject: no sinograms set (call setSinograms first)");
    requireSlices(slices, m_count);
    DeviceScope scope(m_device);
    if (const int rows = bandRows(); rows > 0) {
        backprojectBanded(slices, rows);
        return;
    }
    runPasses(m_count, nullptr, slices);
}

void TexturePlan::reconstruct(std::span<const float> sinograms, int count, std::span<float> slices) {
    requireSinograms(sinograms, count);
    requireSlices(slices, count);
    DeviceScope scope(m_device);
    m_count = 0;
    ensurePasses((count + m_channels - 1) / m_channels);
    const PassInput input{sinograms.data()};
    runPasses(count, &input, slices);
    m_count = count;
}

PreprocessStats TexturePlan::reconstructRaw(const RawRows& raw, const FlatFieldRows& field, std::span<float> slices) {
    const Geometry& g = m_geometry.geometry;
    const int count = raw.rows;
    requireRawRows(raw, field, g.projections(), g.bins, m_maxSlices);
    requireSlices(slices, count);
    DeviceScope scope(m_device);
    m_count = 0;
    ensurePasses((count + m_channels - 1) / m_channels);
    if (!m_raw) m_raw.emplace(m_device, g.projections(), g.bins, m_channels);
    m_raw->start(raw, m_filterStream.get());
    const PassInput input{nullptr, &raw, &field};
    runPasses(count, &input, slices);
    const PreprocessStats stats = m_raw->finish(raw, m_filterStream.get());
    m_count = count;
    return stats;
}

void TexturePlan::runPasses(int count, const PassInput* input, std::span<float> slices) {
    const int passes = (count + m_channels - 1) / m_channels;
    const std::size_t pixels = regionPixels();
    auto slicesOf = [&](int g) { return std::min(m_channels, count - g * m_channels); };
    auto passOutput = [&](int g) { return slices.data() + static_cast<std::size_t>(g) * m_channels * pixels; };
    // Page-locked slices: every download lands there by DMA, and this thread
    // goes on staging the next passes instead of copying the last ones out.
    const bool direct = isPageLocked(slices.data(), static_cast<std::size_t>(count) * pixels * sizeof(float));
    m_spans.reset();
    try {
        for (int g = 0; g < passes; ++g) {
            if (input && input->raw) {
                stageAndUploadRaw(g, *input, g * m_channels, slicesOf(g));
                filterChunk(g, slicesOf(g), g, input, g * m_channels);
            } else if (input) {
                stageAndUpload(g, input->sinograms + static_cast<std::size_t>(g) * m_channels * sliceValues(),
                               slicesOf(g));
                filterChunk(g, slicesOf(g), g);
            }
            backprojectPass(g, slicesOf(g), g);
            download(g, slicesOf(g), direct ? passOutput(g) : nullptr);
            if (g > 0 && !direct) finishDownload(g - 1, slicesOf(g - 1), passOutput(g - 1));
        }
        if (direct) TOMO_CUDA_CHECK(cudaStreamSynchronize(m_copyOut.get()));
        else finishDownload(passes - 1, slicesOf(passes - 1), passOutput(passes - 1));
        m_spans.collect(m_times); // replaces the stages this call ran; setSinograms' upload/filter stay otherwise
    } catch (...) {
        drain();
        throw;
    }
}

void TexturePlan::setAxis(double axis, std::span<const double> offsets) {
    validateAxis(axis, offsets, m_geometry.geometry.projections());
    m_geometry.geometry.axis = axis;
    m_geometry.geometry.axisOffsets.assign(offsets.begin(), offsets.end());
    updateAxisConstants();
    uploadGeometry(false);
}

void TexturePlan::setRegion(const Region& region) {
    ReconGeometry candidate = m_geometry;
    candidate.region = region;
    candidate.validate();
    DeviceScope scope(m_device);
    ensureOutput(region.pixels());
    m_geometry.region = region;
}

std::size_t TexturePlan::memoryBytes() const {
    std::size_t bytes = d_geometry.bytes() + d_geometryDouble.bytes() + (m_filter ? m_filter->bytes() : 0) + d_store.bytes() + d_scales.bytes() +
                        d_maxBits.bytes();
    for (const Slot& s : m_slots) bytes += s.d_in.bytes() + s.d_out.bytes();
    if (m_raw) bytes += m_raw->deviceBytes();
    for (const Pass& p : m_passes) bytes += p.array[0].bytes() + p.array[1].bytes();
    return bytes;
}

} // namespace tomo::cuda
