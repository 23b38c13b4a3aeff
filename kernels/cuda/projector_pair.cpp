#include "projector_pair.h"

#include "tomo/cuda/cuda_backends.h"

#include "cuda_resources.h"
#include "device_check.h"
#include "divergent_projector.h"
#include "filter_kernels.h"
#include "fourier_projector.h"
#include "gpu_filter.h"
#include "projector_kernels.h"
#include "recon/divergent_setup.h"
#include "recon/joseph.h"

#include "tomo/error.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace tomo::cuda {

namespace {

/// Share of the free device memory the batch's vectors may take; the rest
/// is for the pool's leftovers, cuFFT and the other plans of the process.
constexpr double kMemoryShare = 0.8;
constexpr int kMaxLanes = 4;

std::string mib(std::size_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

/// The operator a pair routes its projections through (none: Joseph's
/// parallel-beam pair, the pair's own kernels), made once the pair's stream
/// exists; what it needs is known before, for the memory plan.
struct OperatorSpec {
    std::function<std::unique_ptr<GroupOperator>(cudaStream_t)> make;
    std::size_t bytes = 0;  ///< device bytes it will hold
    int maxLanes = kMaxLanes;
    int residualBlocks = 0; ///< its partial sums per lane and group
    bool ownsFbp = false;   ///< it has its own FBP start (no FFT workspace for the pair's)
    int tvPlanes = 1;       ///< a volume's planes (ProjectorPair::tvPlanes)
    std::string problem;    ///< what a slice is, for messages ("a 64x64x32 volume from 90 views of 48x40"); empty: a slice
};

class CudaPair final : public ProjectorPair {
public:
    CudaPair(const ReconGeometry& geometry, const ReconOptions& options, OperatorSpec spec);
    ~CudaPair() override;

    std::string name() const override {
        return "cuda " + (m_operator ? m_operator->kind() : std::string("joseph")) + ", " +
               (m_matched ? "matched" : "unmatched") + " (" + deviceLabel(m_device) + ")";
    }
    int maxSlices() const override { return m_maxSlices; }
    std::size_t memoryBytes() const override;

    std::unique_ptr<BatchVector> vector(Space space, int count) override;
    void upload(std::span<const float> values, BatchVector& v) override;
    void download(const BatchVector& v, std::span<float> values) override;
    void forward(const BatchVector& x, BatchVector& y) override;
    void back(const BatchVector& y, BatchVector& x) override;
    std::vector<double> gradientStep(const BatchVector& b, std::span<const double> steps, bool weighted,
                                     const Bounds& bounds, BatchVector& x) override;
    void filteredBackprojection(const BatchVector& b, BatchVector& x) override;
    void axpby(std::span<const double> a, const BatchVector& x, std::span<const double> b, BatchVector& y) override;
    std::vector<double> dot(const BatchVector& x, const BatchVector& y) override;
    void clamp(BatchVector& x, const Bounds& bounds) override;
    void tvPrimal(const BatchVector& z, const BatchVector& p, double mu, const Bounds& bounds, BatchVector& x) override;
    void tvDual(const BatchVector& x, double step, double momentum, BatchVector& p, BatchVector& r) override;
    void setAxis(double axis, std::span<const double> offsets) override;

    /// A freed vector's memory, kept for the next vector of its size.
    void recycle(DeviceBuffer<float> buffer) noexcept;

private:
    class Vector;
    static const Vector& as(const BatchVector& v);
    static Vector& as(BatchVector& v);

    JosephGeometry josephGeometry() const;
    /// Elements of a vector that cross the scratch group at once.
    std::size_t pieceOf(const Vector& v) const;
    void uploadConstants();
    DeviceBuffer<float> take(std::size_t floats);
    /// Projects one group (transposing it first when there are column projections).
    void forwardGroup(const Vector& x, int g, float* d_out, const float* d_data, const float* d_rowWeights,
                      double* d_partial);
    /// The per-slice sums of the partials of `blocks` blocks per group, downloaded.
    std::vector<double> sums(int blocks, int lanes, int groups, int count);
    void ensureWeights();
    /// gradientStep through the operator, group by group as the Joseph one.
    std::vector<double> operatorStep(const Vector& b, std::span<const double> steps, bool weighted,
                                    const Bounds& bounds, Vector& x);
    SliceScalars scalars(std::span<const double> values) const;
    TvShape tvShape() const;
    cudaStream_t stream() const { return m_stream.get(); }

    int m_device = 0;
    int m_maxSlices = 1;
    int m_maxLanes = kMaxLanes; // of a group (the operator's)
    bool m_operatorFbp = false; // the operator makes the FBP start (OperatorSpec::ownsFbp)
    bool m_anyColumns = false; // some projection walks columns: the forward projection needs the transposed image
    Stream m_stream;
    std::vector<joseph::Projection> h_projections;
    DeviceBuffer<joseph::Projection> d_projections;
    // One group of 4 lanes, image or sinogram: the transposed image of a
    // forward projection, or the plain slices of an upload, a download, the
    // FBP start and SIRT's weights (never two of these at once).
    DeviceBuffer<float> d_scratch;
    DeviceBuffer<float> d_groupSinogram; // one group: b - A x of a gradient step, or the FBP start's filtered rows
    DeviceBuffer<double> d_partials;
    DeviceBuffer<double> d_sums;
    PinnedBuffer<double> h_sums;
    DeviceBuffer<float> d_rowWeights, d_columnWeights; // SIRT's, of one slice (empty until needed)
    std::unique_ptr<GpuFilter> m_gpuFilter;             // the FBP start's, made on first use
    std::unique_ptr<GroupOperator> m_operator;          // the Fourier or divergent-beam pair: forward, back, SIRT's halves
    std::vector<DeviceBuffer<float>> m_pool;
    std::size_t m_liveBytes = 0;
};

class CudaPair::Vector final : public BatchVector {
public:
    Vector(CudaPair& pair, Space space, int count, std::size_t elements, DeviceBuffer<float> memory)
        : BatchVector(space, count), lanes(joseph::lanesFor(count)), groups((count + lanes - 1) / lanes),
          elements(elements), buffer(std::move(memory)), m_pair(pair) {}
    ~Vector() override { m_pair.recycle(std::move(buffer)); }

    float* group(int g) const { return buffer.get() + static_cast<std::size_t>(g) * elements * lanes; }
    std::size_t floats() const { return buffer.size(); }
    /// Real slices of group g.
    int valid(int g) const { return std::min(lanes, count() - g * lanes); }

    const int lanes;
    const int groups;
    const std::size_t elements;
    DeviceBuffer<float> buffer;

private:
    CudaPair& m_pair;
};

CudaPair::CudaPair(const ReconGeometry& geometry, const ReconOptions& options, OperatorSpec spec)
    : ProjectorPair(geometry, options.filter, options.iterative.matched, spec.tvPlanes),
      m_device(checkedDevice(options.device)), m_maxLanes(spec.maxLanes), m_operatorFbp(spec.ownsFbp) {
    DeviceScope scope(m_device);
    m_stream = Stream::create();
    const std::size_t pixels = sliceValues(Space::Image), values = sliceValues(Space::Sinogram);
    const int P = m_geometry.geometry.projections();
    uploadConstants();

    // The vectors of one slice, and what a batch needs whatever its size.
    const Method method = options.iterative.isIterative() ? options.iterative.method : Method::Sirt;
    const Workspace w = workspaceOf(method, tvAxes());
    const std::size_t perSlice = (w.images * pixels + w.sinograms * values) * sizeof(float);
    const JosephGeometry jg = josephGeometry();
    const std::size_t maxGroups = kMaxIterativeSlices / kMaxLanes;
    const std::size_t partials =
        maxGroups * kMaxLanes *
        static_cast<std::size_t>(std::max({forwardBlocks(jg), dotBlocks(std::max(pixels, values)), spec.residualBlocks}));
    std::size_t fixed = m_maxLanes * (std::max(pixels, values) + values) * sizeof(float) + // scratch, group sinogram
                        (pixels + values) * sizeof(float) + partials * sizeof(double);      // weights, partial sums
    if (options.iterative.init == InitialImage::Fbp && !spec.ownsFbp) // the FFT workspace of 4 slices' rows (and cuFFT's)
        fixed += static_cast<std::size_t>(kMaxLanes) * P * paddedLength(m_geometry.geometry.bins) * 2 * sizeof(float);
    fixed += spec.bytes; // the operator's (Fourier: grids, spectra, samples of one group, cuFFT's work)
    std::size_t freeBytes = 0, totalBytes = 0;
    TOMO_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    const double usable = kMemoryShare * static_cast<double>(freeBytes) - static_cast<double>(fixed);
    const std::string problem =
        !spec.problem.empty() ? spec.problem
                              : "one " + std::to_string(m_geometry.sliceWidth) + "x" +
                                    std::to_string(m_geometry.sliceHeight) + " slice from " + std::to_string(P) +
                                    " projections of " + std::to_string(m_geometry.geometry.bins) + " bins";
    const std::string what = "method " + std::string(methodName(method)) + " of " + problem + " (" + mib(perSlice) +
                             " per slice + " + mib(fixed) + " per batch)";
    if (usable < static_cast<double>(perSlice)) throwDeviceOutOfMemory(m_device, what, perSlice + fixed);
    const auto fit = static_cast<long long>(usable / static_cast<double>(perSlice));
    m_maxSlices = static_cast<int>(std::min<long long>(fit, kMaxIterativeSlices));
    if (m_maxSlices >= kMaxLanes) m_maxSlices = m_maxSlices / kMaxLanes * kMaxLanes;
    if (m_maxLanes == 1) m_maxSlices = 1; // one slice per vector (lanesFor(count > 1) > 1)

    if (spec.make) m_operator = spec.make(stream());
    d_scratch = DeviceBuffer<float>(m_device, m_maxLanes * std::max(pixels, values), "the scratch group");
    d_groupSinogram = DeviceBuffer<float>(m_device, m_maxLanes * values, "the residual group");
    d_partials = DeviceBuffer<double>(m_device, partials, "the partial sums");
    d_sums = DeviceBuffer<double>(m_device, kMaxIterativeSlices, "the per-slice sums");
    h_sums = PinnedBuffer<double>(kMaxIterativeSlices, "the per-slice sums");
}

CudaPair::~CudaPair() {
    if (m_stream.get()) (void)cudaStreamSynchronize(m_stream.get());
}

const CudaPair::Vector& CudaPair::as(const BatchVector& v) {
    const auto* c = dynamic_cast<const Vector*>(&v);
    if (!c) throw InvalidArgument("projector: a vector of another projector pair");
    return *c;
}

CudaPair::Vector& CudaPair::as(BatchVector& v) {
    auto* c = dynamic_cast<Vector*>(&v);
    if (!c) throw InvalidArgument("projector: a vector of another projector pair");
    return *c;
}

std::size_t CudaPair::memoryBytes() const {
    std::size_t bytes = m_liveBytes;
    for (const auto& b : m_pool) bytes += b.bytes();
    for (std::size_t b : {d_scratch.bytes(), d_groupSinogram.bytes(), d_rowWeights.bytes(), d_columnWeights.bytes(),
                          d_projections.bytes(), d_partials.bytes(), d_sums.bytes()})
        bytes += b;
    return bytes + (m_gpuFilter ? m_gpuFilter->bytes() : 0) + (m_operator ? m_operator->bytes() : 0);
}

JosephGeometry CudaPair::josephGeometry() const {
    JosephGeometry g;
    g.d_projections = d_projections.get();
    g.projections = m_geometry.geometry.projections();
    g.bins = m_geometry.geometry.bins;
    g.width = m_geometry.sliceWidth;
    g.height = m_geometry.sliceHeight;
    return g;
}

void CudaPair::uploadConstants() {
    const Geometry& g = m_geometry.geometry;
    h_projections.clear();
    for (int p = 0; p < g.projections(); ++p)
        h_projections.push_back(joseph::projection(g.angles[p], g.axisAt(p), m_geometry.sliceWidth, m_geometry.sliceHeight));
    m_anyColumns = std::any_of(h_projections.begin(), h_projections.end(),
                               [](const joseph::Projection& q) { return q.rows == 0.0f; });
    if (!d_projections.get())
        d_projections = DeviceBuffer<joseph::Projection>(m_device, h_projections.size(), "the projection constants");
    copyToDeviceNow(d_projections.get(), h_projections.data(), h_projections.size() * sizeof(joseph::Projection),
                    stream());
}

DeviceBuffer<float> CudaPair::take(std::size_t floats) {
    for (auto it = m_pool.begin(); it != m_pool.end(); ++it)
        if (it->size() == floats) {
            DeviceBuffer<float> b = std::move(*it);
            m_pool.erase(it);
            m_liveBytes += b.bytes();
            return b;
        }
    DeviceBuffer<float> b;
    try {
        b = DeviceBuffer<float>(m_device, floats, "a vector of the iterative method");
    } catch (const OutOfMemory&) {
        m_pool.clear(); // vectors of other sizes, kept for nothing
        b = DeviceBuffer<float>(m_device, floats, "a vector of the iterative method");
    }
    m_liveBytes += b.bytes();
    return b;
}

void CudaPair::recycle(DeviceBuffer<float> buffer) noexcept {
    m_liveBytes -= buffer.bytes();
    try {
        m_pool.push_back(std::move(buffer));
    } catch (...) {
        // The buffer is freed here instead.
    }
}

std::unique_ptr<BatchVector> CudaPair::vector(Space space, int count) {
    requireCount(count);
    DeviceScope scope(m_device);
    const int lanes = joseph::lanesFor(count), groups = (count + lanes - 1) / lanes;
    const std::size_t elements = sliceValues(space);
    DeviceBuffer<float> memory = take(static_cast<std::size_t>(groups) * lanes * elements);
    TOMO_CUDA_CHECK(cudaMemsetAsync(memory.get(), 0, memory.bytes(), stream()));
    return std::make_unique<Vector>(*this, space, count, elements, std::move(memory));
}

std::size_t CudaPair::pieceOf(const Vector& v) const {
    return v.space() == Space::TvDual ? sliceValues(Space::Image) : v.elements; // a dual's components one by one
}

void CudaPair::upload(std::span<const float> values, BatchVector& bv) {
    Vector& v = as(bv);
    requireHostValues(values, v, "projector upload");
    DeviceScope scope(m_device);
    const std::size_t piece = pieceOf(v);
    for (int g = 0; g < v.groups; ++g)
        for (std::size_t offset = 0; offset < v.elements; offset += piece) {
            for (int j = 0; j < v.valid(g); ++j)
                TOMO_CUDA_CHECK(cudaMemcpyAsync(d_scratch.get() + j * piece,
                                                values.data() + (static_cast<std::size_t>(g) * v.lanes + j) * v.elements +
                                                    offset,
                                                piece * sizeof(float), cudaMemcpyHostToDevice, stream()));
            launchInterleave(d_scratch.get(), v.group(g) + offset * v.lanes, piece, v.lanes, v.valid(g), stream());
        }
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream())); // the host values may go now
}

void CudaPair::download(const BatchVector& bv, std::span<float> values) {
    const Vector& v = as(bv);
    requireHostValues(values, v, "projector download");
    DeviceScope scope(m_device);
    const std::size_t piece = pieceOf(v);
    for (int g = 0; g < v.groups; ++g)
        for (std::size_t offset = 0; offset < v.elements; offset += piece) {
            launchDeinterleave(v.group(g) + offset * v.lanes, d_scratch.get(), piece, v.lanes, v.valid(g), stream());
            for (int j = 0; j < v.valid(g); ++j)
                TOMO_CUDA_CHECK(cudaMemcpyAsync(values.data() + (static_cast<std::size_t>(g) * v.lanes + j) * v.elements +
                                                    offset,
                                                d_scratch.get() + j * piece, piece * sizeof(float),
                                                cudaMemcpyDeviceToHost, stream()));
        }
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

void CudaPair::forwardGroup(const Vector& x, int g, float* d_out, const float* d_data, const float* d_rowWeights,
                            double* d_partial) {
    if (m_anyColumns)
        launchTranspose(x.group(g), d_scratch.get(), m_geometry.sliceWidth, m_geometry.sliceHeight, x.lanes, stream());
    ForwardLaunch L;
    L.geometry = josephGeometry();
    L.lanes = x.lanes;
    L.d_image = x.group(g);
    L.d_transposed = d_scratch.get();
    L.d_out = d_out;
    L.d_data = d_data;
    L.d_rowWeights = d_rowWeights;
    L.d_partial = d_partial;
    launchForward(L, stream());
}

void CudaPair::forward(const BatchVector& bx, BatchVector& by) {
    requireSpace(bx, Space::Image, "forward projection: input");
    requireSpace(by, Space::Sinogram, "forward projection: output");
    requireSameCount(bx, by, "forward projection");
    const Vector& x = as(bx);
    Vector& y = as(by);
    DeviceScope scope(m_device);
    for (int g = 0; g < x.groups; ++g) {
        if (m_operator) m_operator->forwardGroup(x.group(g), x.lanes, x.valid(g), y.group(g));
        else forwardGroup(x, g, y.group(g), nullptr, nullptr, nullptr);
    }
}

void CudaPair::back(const BatchVector& by, BatchVector& bx) {
    requireSpace(by, Space::Sinogram, "back projection: input");
    requireSpace(bx, Space::Image, "back projection: output");
    requireSameCount(bx, by, "back projection");
    const Vector& y = as(by);
    Vector& x = as(bx);
    DeviceScope scope(m_device);
    if (m_operator) {
        for (int g = 0; g < x.groups; ++g) m_operator->backGroup(y.group(g), x.lanes, x.valid(g), x.group(g));
        return;
    }
    BackLaunch L;
    L.geometry = josephGeometry();
    L.lanes = x.lanes;
    L.groups = x.groups;
    L.d_sinograms = y.buffer.get();
    L.d_image = x.buffer.get();
    L.interpolate = !m_matched;
    launchBack(L, stream());
}

std::vector<double> CudaPair::sums(int blocks, int lanes, int groups, int count) {
    launchSumPartials(d_partials.get(), blocks, lanes, groups, d_sums.get(), stream());
    TOMO_CUDA_CHECK(cudaMemcpyAsync(h_sums.get(), d_sums.get(), static_cast<std::size_t>(groups) * lanes * sizeof(double),
                                    cudaMemcpyDeviceToHost, stream()));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream()));
    return std::vector<double>(h_sums.get(), h_sums.get() + count);
}

void CudaPair::ensureWeights() {
    if (d_rowWeights.get()) return;
    const std::size_t pixels = sliceValues(Space::Image), values = sliceValues(Space::Sinogram);
    DeviceBuffer<float> rows(m_device, values, "SIRT's row weights");
    DeviceBuffer<float> columns(m_device, pixels, "SIRT's column weights");
    if (m_operator) {
        // Row sums A 1 (the image of ones in `columns` meanwhile), column sums B 1.
        launchFill(columns.get(), pixels, 1.0f, stream());
        m_operator->forwardGroup(columns.get(), 1, 1, rows.get());
        launchInvertSums(rows.get(), values, m_operator->minWeightSum(), stream());
        launchFill(d_scratch.get(), values, 1.0f, stream());
        m_operator->backGroup(d_scratch.get(), 1, 1, columns.get());
        launchInvertSums(columns.get(), pixels, m_operator->minWeightSum(), stream());
        d_rowWeights = std::move(rows);
        d_columnWeights = std::move(columns);
        return;
    }
    const JosephGeometry jg = josephGeometry();
    // Row sums: A of an image of ones (held in `columns` meanwhile).
    launchFill(columns.get(), pixels, 1.0f, stream());
    if (m_anyColumns)
        launchTranspose(columns.get(), d_scratch.get(), m_geometry.sliceWidth, m_geometry.sliceHeight, 1, stream());
    ForwardLaunch f;
    f.geometry = jg;
    f.lanes = 1;
    f.d_image = columns.get();
    f.d_transposed = d_scratch.get();
    f.d_out = rows.get();
    launchForward(f, stream());
    launchInvertSums(rows.get(), values, static_cast<float>(kMinWeightSum), stream());
    // Column sums: B of a sinogram of ones (held in the staging buffer).
    launchFill(d_scratch.get(), values, 1.0f, stream());
    BackLaunch b;
    b.geometry = jg;
    b.lanes = 1;
    b.groups = 1;
    b.d_sinograms = d_scratch.get();
    b.d_image = columns.get();
    b.interpolate = !m_matched;
    launchBack(b, stream());
    launchInvertSums(columns.get(), pixels, static_cast<float>(kMinWeightSum), stream());
    d_rowWeights = std::move(rows);
    d_columnWeights = std::move(columns);
}

SliceScalars CudaPair::scalars(std::span<const double> values) const {
    // Slice s sits at group s / lanes, lane s % lanes: index s (count <= kMaxIterativeSlices).
    SliceScalars out{};
    for (std::size_t s = 0; s < values.size(); ++s) out.v[s] = static_cast<float>(values[s]);
    return out;
}

std::vector<double> CudaPair::gradientStep(const BatchVector& bb, std::span<const double> steps, bool weighted,
                                           const Bounds& bounds, BatchVector& bx) {
    requireSpace(bb, Space::Sinogram, "gradient step: data");
    requireSpace(bx, Space::Image, "gradient step: image");
    requireSameCount(bx, bb, "gradient step");
    requirePerSlice(steps, bx, "gradient step: steps");
    const Vector& b = as(bb);
    Vector& x = as(bx);
    DeviceScope scope(m_device);
    if (weighted) ensureWeights();
    if (m_operator) return operatorStep(b, steps, weighted, bounds, x);
    const int blocks = forwardBlocks(josephGeometry());
    BackLaunch back;
    back.geometry = josephGeometry();
    back.lanes = x.lanes;
    back.groups = 1;
    back.d_sinograms = d_groupSinogram.get();
    back.interpolate = !m_matched;
    back.step = true;
    back.d_columnWeights = weighted ? d_columnWeights.get() : nullptr;
    back.lower = static_cast<float>(bounds.lower);
    back.upper = static_cast<float>(bounds.upper);
    // Group by group, so b - A x is held for 4 slices only: r = W (b - A x)
    // with the squares' partial sums, then x = clamp(x + step V B r).
    for (int g = 0; g < x.groups; ++g) {
        forwardGroup(x, g, d_groupSinogram.get(), b.group(g), weighted ? d_rowWeights.get() : nullptr,
                     d_partials.get() + static_cast<std::size_t>(g) * blocks * x.lanes);
        back.d_image = x.group(g);
        back.steps = scalars(steps.subspan(static_cast<std::size_t>(g) * x.lanes, x.valid(g)));
        launchBack(back, stream());
    }
    return sums(blocks, x.lanes, x.groups, x.count());
}

std::vector<double> CudaPair::operatorStep(const Vector& b, std::span<const double> steps, bool weighted,
                                          const Bounds& bounds, Vector& x) {
    const int blocks = m_operator->residualBlocks();
    for (int g = 0; g < x.groups; ++g) {
        m_operator->residualGroup(x.group(g), b.group(g), weighted ? d_rowWeights.get() : nullptr, x.lanes, x.valid(g),
                                 d_groupSinogram.get(), d_partials.get() + static_cast<std::size_t>(g) * blocks * x.lanes);
        m_operator->stepGroup(d_groupSinogram.get(), x.lanes, x.valid(g),
                             scalars(steps.subspan(static_cast<std::size_t>(g) * x.lanes, x.valid(g))),
                             weighted ? d_columnWeights.get() : nullptr, static_cast<float>(bounds.lower),
                             static_cast<float>(bounds.upper), x.group(g));
    }
    return sums(blocks, x.lanes, x.groups, x.count());
}

void CudaPair::filteredBackprojection(const BatchVector& bb, BatchVector& bx) {
    requireSpace(bb, Space::Sinogram, "FBP: data");
    requireSpace(bx, Space::Image, "FBP: image");
    requireSameCount(bb, bx, "FBP");
    const Vector& b = as(bb);
    Vector& x = as(bx);
    DeviceScope scope(m_device);
    if (m_operatorFbp) {
        for (int group = 0; group < b.groups; ++group)
            m_operator->filteredBackprojection(b.group(group), b.lanes, b.valid(group), x.group(group));
        return;
    }
    const Geometry& g = m_geometry.geometry;
    const int P = g.projections();
    if (!m_gpuFilter) {
        m_gpuFilter = std::make_unique<GpuFilter>(m_device, g.bins, kMaxLanes * P, m_filter, angularWeights(g.angles),
                                                  stream());
    }
    BackLaunch back;
    back.geometry = josephGeometry();
    back.lanes = x.lanes;
    back.groups = 1;
    back.d_sinograms = d_groupSinogram.get();
    back.interpolate = true;
    // Group by group: plain rows -> the FBP plans' filter and weights, packed
    // into the group's lanes -> back-projected with linear interpolation.
    for (int group = 0; group < b.groups; ++group) {
        const int valid = b.valid(group);
        launchDeinterleave(b.group(group), d_scratch.get(), b.elements, b.lanes, valid, stream());
        m_gpuFilter->filter(d_scratch.get(), valid * P, stream());
        PackLaunch pack;
        pack.d_fft = m_gpuFilter->d_spectrum();
        pack.layout = m_gpuFilter->layout(valid * P);
        pack.projections = P;
        pack.channels = b.lanes;
        pack.firstSlice = 0;
        pack.validSlices = valid;
        pack.d_weights = m_gpuFilter->d_weights();
        pack.d_out = d_groupSinogram.get();
        pack.pitchBytes = static_cast<std::size_t>(g.bins) * b.lanes * sizeof(float);
        launchPack(pack, stream());
        back.d_image = x.group(group);
        launchBack(back, stream());
    }
}

void CudaPair::axpby(std::span<const double> a, const BatchVector& bx, std::span<const double> b, BatchVector& by) {
    if (bx.space() != by.space()) requireSpace(bx, by.space(), "axpby");
    requireSameCount(bx, by, "axpby");
    requirePerSlice(a, by, "axpby: a");
    requirePerSlice(b, by, "axpby: b");
    const Vector& x = as(bx);
    Vector& y = as(by);
    DeviceScope scope(m_device);
    launchAxpby(scalars(a), x.buffer.get(), scalars(b), y.buffer.get(), y.elements, y.lanes, y.groups,
                stream());
}

std::vector<double> CudaPair::dot(const BatchVector& bx, const BatchVector& by) {
    if (bx.space() != by.space()) requireSpace(bx, by.space(), "dot");
    requireSameCount(bx, by, "dot");
    const Vector& x = as(bx);
    const Vector& y = as(by);
    DeviceScope scope(m_device);
    launchDotPartials(x.buffer.get(), y.buffer.get(), x.elements, x.lanes, x.groups, d_partials.get(), stream());
    return sums(dotBlocks(x.elements), x.lanes, x.groups, x.count());
}

void CudaPair::clamp(BatchVector& bx, const Bounds& bounds) {
    Vector& x = as(bx);
    DeviceScope scope(m_device);
    launchClamp(x.buffer.get(), x.floats(), static_cast<float>(bounds.lower), static_cast<float>(bounds.upper), stream());
}

TvShape CudaPair::tvShape() const {
    TvShape shape;
    shape.width = m_geometry.sliceWidth;
    shape.planes = tvPlanes();
    shape.planeRows = m_geometry.sliceHeight / shape.planes;
    return shape;
}

void CudaPair::tvPrimal(const BatchVector& z, const BatchVector& p, double mu, const Bounds& bounds, BatchVector& x) {
    requireTvVectors({&x, &z}, {&p}, "TV primal step");
    Vector& out = as(x);
    DeviceScope scope(m_device);
    launchTvPrimal(as(z).buffer.get(), as(p).buffer.get(), static_cast<float>(mu), static_cast<float>(bounds.lower),
                   static_cast<float>(bounds.upper), out.buffer.get(), tvShape(), out.lanes, out.groups, stream());
}

void CudaPair::tvDual(const BatchVector& x, double step, double momentum, BatchVector& p, BatchVector& r) {
    requireTvVectors({&x}, {&p, &r}, "TV dual step");
    const Vector& img = as(x);
    DeviceScope scope(m_device);
    launchTvDual(img.buffer.get(), static_cast<float>(step), static_cast<float>(momentum), as(p).buffer.get(),
                 as(r).buffer.get(), tvShape(), img.lanes, img.groups, stream());
}

void CudaPair::setAxis(double axis, std::span<const double> offsets) {
    validateAxis(axis, offsets, m_geometry.geometry.projections());
    DeviceScope scope(m_device);
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream())); // kernels in flight read the old constants
    Geometry moved = m_geometry.geometry;
    moved.axis = axis;
    moved.axisOffsets.assign(offsets.begin(), offsets.end());
    if (m_operator) m_operator->setAxis(moved); // first: it throws for an axis too far off (or none to move)
    m_geometry.geometry = std::move(moved);
    uploadConstants();
    d_rowWeights.reset();
    d_columnWeights.reset();
}

} // namespace

std::unique_ptr<ProjectorPair> makeCudaProjector(const ReconGeometry& geometry, const ReconOptions& options) {
    OperatorSpec spec;
    if (options.iterative.projector == ProjectorKind::Fourier) {
        if (!options.iterative.matched)
            throw InvalidArgument(
                "the fourier projector pair is matched by construction; an unmatched pair is joseph only");
        spec.bytes = FourierOperator::bytesFor(geometry);
        spec.make = [device = options.device, geometry](cudaStream_t stream) {
            return std::make_unique<FourierOperator>(device, geometry, stream);
        };
    }
    return std::make_unique<CudaPair>(geometry, options, std::move(spec));
}

std::unique_ptr<ProjectorPair> makeCudaConeProjector(const ConeGeometry& geometry, const VolumeGrid& grid,
                                                     const IterativeOptions& iterative, int device) {
    ReconOptions options;
    options.iterative = iterative;
    options.device = device;
    OperatorSpec spec;
    spec.bytes = DivergentOperator::bytesFor(geometry, grid);
    spec.maxLanes = 1;
    spec.residualBlocks = divergentForwardBlocks();
    spec.ownsFbp = true;
    spec.tvPlanes = grid.nz;
    spec.problem = "a " + std::to_string(grid.nx) + "x" + std::to_string(grid.ny) + "x" + std::to_string(grid.nz) +
                   " volume from " + std::to_string(geometry.viewCount()) + " views of " +
                   std::to_string(geometry.columns) + "x" + std::to_string(geometry.rows);
    spec.make = [device, geometry, grid](cudaStream_t stream) {
        return std::make_unique<DivergentOperator>(device, geometry, grid, stream);
    };
    return std::make_unique<CudaPair>(divergentSliceGeometry(geometry, grid), options, std::move(spec));
}

} // namespace tomo::cuda
