#include "recon/projector_host.h"

#include "recon/cpu_plan.h"
#include "tomo/error.h"
#include "tomo/filter.h"

#include <algorithm>
#include <cmath>

namespace tomo::cpu {

namespace {

/// At most this many slices per vector, and this much memory for a batch's
/// vectors (as the CPU FBP plans).
constexpr int kMaxSlices = 64;
constexpr std::size_t kMemoryBudget = std::size_t{1} << 30;
/// Elements per task of the element-wise loops.
constexpr std::size_t kBlock = std::size_t{1} << 16;

} // namespace

template <class Real>
HostPair<Real>::HostPair(const ReconGeometry& geometry, const FilterOptions& filter, const IterativeOptions& options,
                         int threads, int tvPlanes)
    : ProjectorPair(geometry, filter, options.matched, tvPlanes), m_pool(resolveThreads(threads)) {
    const Workspace w = workspaceOf(options.method == Method::Fbp ? Method::Sirt : options.method, tvAxes());
    // + 2: the scratch vectors of backStep / filteredBackprojection and the transposed image.
    const std::size_t perSlice =
        (static_cast<std::size_t>(w.images + 2) * sliceValues(Space::Image) +
         static_cast<std::size_t>(w.sinograms + 1) * sliceValues(Space::Sinogram)) * sizeof(Real);
    m_maxSlices = static_cast<int>(std::clamp<std::size_t>(kMemoryBudget / std::max<std::size_t>(perSlice, 1), 1, kMaxSlices));
}

template <class Real>
std::size_t HostPair<Real>::memoryBytes() const {
    // The work vectors come and go with each run: their peak, as the
    // conveyor sizes its batches by it.
    return m_meter->peak() + (m_rowWeights.capacity() + m_columnWeights.capacity()) * sizeof(Real);
}

template <class Real>
const HostVector<Real>& HostPair<Real>::as(const BatchVector& v) {
    const auto* h = dynamic_cast<const Vector*>(&v);
    if (!h) throw InvalidArgument("projector: a vector of another projector pair");
    return *h;
}

template <class Real>
HostVector<Real>& HostPair<Real>::as(BatchVector& v) {
    auto* h = dynamic_cast<Vector*>(&v);
    if (!h) throw InvalidArgument("projector: a vector of another projector pair");
    return *h;
}

template <class Real>
void HostPair<Real>::parallelRange(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
    const auto tasks = static_cast<int>((n + kBlock - 1) / kBlock);
    m_pool.parallelFor(tasks, [&](int task, int) {
        const std::size_t first = static_cast<std::size_t>(task) * kBlock;
        body(first, std::min(n, first + kBlock));
    });
}

template <class Real>
std::unique_ptr<BatchVector> HostPair<Real>::vector(Space space, int count) {
    requireCount(count);
    try {
        return std::make_unique<Vector>(space, count, lanes(count), sliceValues(space), m_meter);
    } catch (const std::bad_alloc&) {
        throw OutOfMemory("not enough host memory for a projector vector of " + std::to_string(count) + " slices (" +
                          std::to_string(sliceValues(space) * count * sizeof(Real) >> 20) + " MiB)");
    }
}

template <class Real>
std::unique_ptr<HostVector<Real>> HostPair<Real>::scratch(const Vector& like) {
    return std::make_unique<Vector>(like.space(), like.count(), like.lanes, like.elements, m_meter);
}

template <class Real>
std::vector<Real> HostPair<Real>::perLane(std::span<const double> values, const Vector& v) {
    std::vector<Real> out(static_cast<std::size_t>(v.groups) * v.lanes, Real(0));
    for (std::size_t s = 0; s < values.size(); ++s) out[s] = static_cast<Real>(values[s]);
    return out;
}

template <class Real>
void HostPair<Real>::upload(std::span<const float> values, BatchVector& bv) {
    Vector& v = as(bv);
    requireHostValues(values, v, "projector upload");
    m_pool.parallelFor(v.count(), [&](int s, int) {
        Real* dst = v.group(s / v.lanes) + s % v.lanes;
        const float* src = values.data() + static_cast<std::size_t>(s) * v.elements;
        for (std::size_t e = 0; e < v.elements; ++e) dst[e * v.lanes] = static_cast<Real>(src[e]);
    });
}

template <class Real>
void HostPair<Real>::download(const BatchVector& bv, std::span<float> values) {
    const Vector& v = as(bv);
    requireHostValues(values, v, "projector download");
    m_pool.parallelFor(v.count(), [&](int s, int) {
        const Real* src = v.group(s / v.lanes) + s % v.lanes;
        float* dst = values.data() + static_cast<std::size_t>(s) * v.elements;
        for (std::size_t e = 0; e < v.elements; ++e) dst[e] = static_cast<float>(src[e * v.lanes]);
    });
}

template <class Real>
void HostPair<Real>::forward(const BatchVector& x, BatchVector& y) {
    requireSpace(x, Space::Image, "forward projection: input");
    requireSpace(y, Space::Sinogram, "forward projection: output");
    requireSameCount(x, y, "forward projection");
    Vector& out = as(y);
    std::fill(out.data.begin(), out.data.end(), Real(0));
    project(as(x), out);
}

template <class Real>
void HostPair<Real>::back(const BatchVector& y, BatchVector& x) {
    requireSpace(y, Space::Sinogram, "back projection: input");
    requireSpace(x, Space::Image, "back projection: output");
    requireSameCount(x, y, "back projection");
    Vector& out = as(x);
    std::fill(out.data.begin(), out.data.end(), Real(0));
    backProject(as(y), out, !m_matched);
}

template <class Real>
void HostPair<Real>::ensureWeights() {
    if (!m_rowWeights.empty()) return;
    Vector ones(Space::Image, 1, lanes(1), sliceValues(Space::Image));
    Vector sums(Space::Sinogram, 1, lanes(1), sliceValues(Space::Sinogram));
    std::fill(ones.data.begin(), ones.data.end(), Real(1));
    project(ones, sums);
    const double least = minWeightSum();
    auto invert = [least](const std::vector<Real>& sum) {
        std::vector<Real> w(sum.size());
        for (std::size_t i = 0; i < sum.size(); ++i) w[i] = sum[i] > least ? Real(1) / sum[i] : Real(0);
        return w;
    };
    std::vector<Real> rows = invert(sums.data);
    std::fill(sums.data.begin(), sums.data.end(), Real(1));
    std::fill(ones.data.begin(), ones.data.end(), Real(0));
    backProject(sums, ones, !m_matched);
    m_columnWeights = invert(ones.data);
    m_rowWeights = std::move(rows);
}

template <class Real>
std::vector<double> HostPair<Real>::gradientStep(const BatchVector& b, std::span<const double> steps, bool weighted,
                                                 const Bounds& bounds, BatchVector& x) {
    requireSpace(b, Space::Sinogram, "gradient step: data");
    requireSpace(x, Space::Image, "gradient step: image");
    requireSameCount(x, b, "gradient step");
    requirePerSlice(steps, x, "gradient step: steps");
    if (weighted) ensureWeights();
    const Vector& data = as(b);
    Vector& img = as(x);
    // r = W (b - A x), with each slice's ||b - A x||^2 by blocks (a fixed order).
    const std::unique_ptr<Vector> r = scratch(data);
    project(img, *r);
    const int S = r->lanes;
    const std::size_t rowGroup = r->elements * S, n = r->data.size();
    const auto tasks = static_cast<int>((n + kBlock - 1) / kBlock);
    std::vector<double> partial(static_cast<std::size_t>(tasks) * S * r->groups, 0.0);
    m_pool.parallelFor(tasks, [&](int task, int) {
        const std::size_t first = static_cast<std::size_t>(task) * kBlock, last = std::min(n, first + kBlock);
        double* sums = partial.data() + static_cast<std::size_t>(task) * r->groups * S;
        for (std::size_t i = first; i < last; ++i) {
            const Real d = data.data[i] - r->data[i];
            sums[(i / rowGroup) * S + i % S] += double(d) * double(d);
            r->data[i] = weighted ? d * m_rowWeights[(i % rowGroup) / S] : d;
        }
    });
    std::vector<double> norms(static_cast<std::size_t>(r->count()), 0.0);
    for (int task = 0; task < tasks; ++task)
        for (int s = 0; s < r->count(); ++s) norms[s] += partial[static_cast<std::size_t>(task) * r->groups * S + s];
    // x = clamp(x + step V B r).
    const std::unique_ptr<Vector> update = scratch(img);
    backProject(*r, *update, !m_matched);
    const std::vector<Real> step = perLane(steps, img);
    const std::size_t imageGroup = img.elements * S;
    const Real lo = static_cast<Real>(bounds.lower), hi = static_cast<Real>(bounds.upper);
    parallelRange(img.data.size(), [&](std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) {
            const Real w = weighted ? m_columnWeights[(i % imageGroup) / S] : Real(1);
            const Real v = img.data[i] + step[(i / imageGroup) * S + i % S] * w * update->data[i];
            img.data[i] = std::min(std::max(v, lo), hi);
        }
    });
    return norms;
}

template <class Real>
void HostPair<Real>::filteredBackprojection(const BatchVector& b, BatchVector& x) {
    requireSpace(b, Space::Sinogram, "FBP: data");
    requireSpace(x, Space::Image, "FBP: image");
    requireSameCount(b, x, "FBP");
    const Vector& data = as(b);
    const std::unique_ptr<Vector> filtered = scratch(data);
    const Geometry& g = m_geometry.geometry;
    const std::vector<double> weights = angularWeights(g.angles);
    const int projections = g.projections(), bins = g.bins, S = data.lanes;
    std::vector<std::unique_ptr<SinogramFilter>> filters(m_pool.threads());
    std::vector<std::vector<float>> rows(m_pool.threads());
    m_pool.parallelFor(data.count(), [&](int s, int thread) {
        if (!filters[thread]) filters[thread] = std::make_unique<SinogramFilter>(bins, m_filter);
        std::vector<float>& sino = rows[thread];
        sino.resize(static_cast<std::size_t>(projections) * bins);
        const Real* src = data.group(s / S) + s % S;
        for (std::size_t e = 0; e < sino.size(); ++e) sino[e] = static_cast<float>(src[e * S]);
        filters[thread]->apply(sino, projections, weights);
        Real* dst = filtered->group(s / S) + s % S;
        for (std::size_t e = 0; e < sino.size(); ++e) dst[e * S] = static_cast<Real>(sino[e]);
    });
    Vector& out = as(x);
    std::fill(out.data.begin(), out.data.end(), Real(0));
    backProject(*filtered, out, true);
}

template <class Real>
void HostPair<Real>::axpby(std::span<const double> a, const BatchVector& x, std::span<const double> b,
                           BatchVector& y) {
    if (x.space() != y.space()) requireSpace(x, y.space(), "axpby");
    requireSameCount(x, y, "axpby");
    requirePerSlice(a, y, "axpby: a");
    requirePerSlice(b, y, "axpby: b");
    const Vector& in = as(x);
    Vector& out = as(y);
    const std::vector<Real> la = perLane(a, out), lb = perLane(b, out);
    const int S = out.lanes;
    const std::size_t perGroup = out.elements * S;
    parallelRange(out.data.size(), [&](std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) {
            const std::size_t l = (i / perGroup) * S + i % S;
            out.data[i] = lb[l] == Real(0) ? la[l] * in.data[i] : la[l] * in.data[i] + lb[l] * out.data[i];
        }
    });
}

template <class Real>
std::vector<double> HostPair<Real>::dot(const BatchVector& x, const BatchVector& y) {
    if (x.space() != y.space()) requireSpace(x, y.space(), "dot");
    requireSameCount(x, y, "dot");
    const Vector& a = as(x);
    const Vector& b = as(y);
    const int S = a.lanes;
    const std::size_t perGroup = a.elements * S, n = a.data.size();
    const auto tasks = static_cast<int>((n + kBlock - 1) / kBlock);
    std::vector<double> partial(static_cast<std::size_t>(tasks) * a.groups * S, 0.0);
    m_pool.parallelFor(tasks, [&](int task, int) {
        const std::size_t first = static_cast<std::size_t>(task) * kBlock, last = std::min(n, first + kBlock);
        double* sums = partial.data() + static_cast<std::size_t>(task) * a.groups * S;
        for (std::size_t i = first; i < last; ++i)
            sums[(i / perGroup) * S + i % S] += double(a.data[i]) * double(b.data[i]);
    });
    std::vector<double> out(static_cast<std::size_t>(a.count()), 0.0);
    for (int task = 0; task < tasks; ++task)
        for (int s = 0; s < a.count(); ++s) out[s] += partial[static_cast<std::size_t>(task) * a.groups * S + s];
    return out;
}

template <class Real>
void HostPair<Real>::clamp(BatchVector& x, const Bounds& bounds) {
    Vector& v = as(x);
    const Real lo = static_cast<Real>(bounds.lower), hi = static_cast<Real>(bounds.upper);
    parallelRange(v.data.size(), [&](std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) v.data[i] = std::min(std::max(v.data[i], lo), hi);
    });
}

template <class Real>
void HostPair<Real>::tvPrimal(const BatchVector& z, const BatchVector& p, double mu, const Bounds& bounds,
                              BatchVector& x) {
    requireTvVectors({&x, &z}, {&p}, "TV primal step");
    const Vector &in = as(z), &pv = as(p);
    Vector& out = as(x);
    const int W = m_geometry.sliceWidth, H = m_geometry.sliceHeight, S = out.lanes, axes = tvAxes();
    const int planeRows = H / tvPlanes();
    const std::size_t pixels = static_cast<std::size_t>(W) * H, rowStep = static_cast<std::size_t>(W) * S;
    const Real m = static_cast<Real>(mu), lo = static_cast<Real>(bounds.lower), hi = static_cast<Real>(bounds.upper);
    m_pool.parallelFor(out.groups * H, [&](int task, int) {
        const int g = task / H, iy = task % H;
        const std::size_t row = (static_cast<std::size_t>(g) * H + iy) * W * S;
        // Component c of the group's dual at comp[c][e]: e = the pixel's index within the group's image.
        const Real* dual = pv.group(g);
        const Real* comp[3] = {dual, dual + pixels * S, dual + 2 * pixels * S};
        for (int ix = 0; ix < W; ++ix)
            for (int j = 0; j < S; ++j) {
                const std::size_t i = row + static_cast<std::size_t>(ix) * S + j;
                const std::size_t e = i - static_cast<std::size_t>(g) * pixels * S;
                Real div = comp[0][e] + comp[1][e];
                if (iy % planeRows > 0) div -= comp[0][e - rowStep];
                if (ix > 0) div -= comp[1][e - S];
                if (axes == 3) {
                    div += comp[2][e];
                    if (iy >= planeRows) div -= comp[2][e - planeRows * rowStep];
                }
                out.data[i] = std::min(std::max(in.data[i] - m * div, lo), hi);
            }
    });
}

template <class Real>
void HostPair<Real>::tvDual(const BatchVector& x, double step, double momentum, BatchVector& p, BatchVector& r) {
    requireTvVectors({&x}, {&p, &r}, "TV dual step");
    const Vector& img = as(x);
    Vector &pv = as(p), &rv = as(r);
    const int W = m_geometry.sliceWidth, H = m_geometry.sliceHeight, S = img.lanes, axes = tvAxes();
    const int planeRows = H / tvPlanes();
    const std::size_t pixels = static_cast<std::size_t>(W) * H, rowStep = static_cast<std::size_t>(W) * S;
    const Real t = static_cast<Real>(step), m = static_cast<Real>(momentum);
    m_pool.parallelFor(img.groups * H, [&](int task, int) {
        const int g = task / H, iy = task % H;
        const std::size_t row = (static_cast<std::size_t>(g) * H + iy) * W * S;
        const std::size_t dualGroup = static_cast<std::size_t>(g) * axes * pixels * S; // pv.group(g)
        for (int ix = 0; ix < W; ++ix)
            for (int j = 0; j < S; ++j) {
                const std::size_t i = row + static_cast<std::size_t>(ix) * S + j;
                const std::size_t e = i - static_cast<std::size_t>(g) * pixels * S; // within the group
                Real grad[3] = {iy % planeRows + 1 < planeRows ? img.data[i] - img.data[i + rowStep] : Real(0),
                                ix + 1 < W ? img.data[i] - img.data[i + S] : Real(0),
                                iy + planeRows < H ? img.data[i] - img.data[i + planeRows * rowStep] : Real(0)};
                Real a[3], norm2 = 0;
                for (int c = 0; c < axes; ++c) {
                    a[c] = rv.data[dualGroup + c * pixels * S + e] + t * grad[c];
                    norm2 += a[c] * a[c];
                }
                const Real norm = std::max(Real(1), std::sqrt(norm2));
                for (int c = 0; c < axes; ++c) {
                    const std::size_t k = dualGroup + c * pixels * S + e;
                    const Real next = a[c] / norm;
                    rv.data[k] = next + m * (next - pv.data[k]);
                    pv.data[k] = next;
                }
            }
    });
}

template <class Real>
void HostPair<Real>::setAxis(double axis, std::span<const double> offsets) {
    validateAxis(axis, offsets, m_geometry.geometry.projections());
    m_geometry.geometry.axis = axis;
    m_geometry.geometry.axisOffsets.assign(offsets.begin(), offsets.end());
    m_rowWeights.clear();
    m_columnWeights.clear();
    geometryChanged();
}

template class HostPair<float>;
template class HostPair<double>;

} // namespace tomo::cpu
