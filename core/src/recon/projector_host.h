// What the two CPU projector pairs share: vectors in host memory (Real =
// double for cpu-reference, float for cpu), the vector arithmetic, SIRT's
// weights, the TV steps and the FBP start, on the pair's worker threads. A
// pair adds only its projections (project, backProject) and how many slices
// it interleaves (lanes).
//
// Layout of a vector of `count` slices: groups of S lanes (S = lanes(count)),
// [group][element][lane]: element = row * width + column (image),
// angle * bins + bin (sinogram) or component * pixels + pixel (TV dual); the
// lanes past the last slice hold zeros.
#pragma once

#include "peak_meter.h"
#include "tomo/projector.h"
#include "tomo/worker_pool.h"

#include <atomic>
#include <memory>
#include <span>
#include <vector>

namespace tomo::cpu {

template <class Real>
class HostVector final : public BatchVector {
public:
    HostVector(Space space, int count, int lanes, std::size_t elements, std::shared_ptr<PeakMeter> meter = {})
        : BatchVector(space, count), lanes(lanes), groups((count + lanes - 1) / lanes), elements(elements),
          data(static_cast<std::size_t>(groups) * elements * lanes, Real(0)), m_meter(std::move(meter)) {
        if (m_meter) m_meter->add(data.size() * sizeof(Real));
    }
    ~HostVector() override {
        if (m_meter) m_meter->remove(data.size() * sizeof(Real));
    }

    const int lanes;
    const int groups;
    const std::size_t elements; ///< per slice
    std::vector<Real> data;

    Real* group(int g) { return data.data() + static_cast<std::size_t>(g) * elements * lanes; }
    const Real* group(int g) const { return data.data() + static_cast<std::size_t>(g) * elements * lanes; }

private:
    std::shared_ptr<PeakMeter> m_meter;
};

template <class Real>
class HostPair : public ProjectorPair {
public:
    using Vector = HostVector<Real>;

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
    void tvPrimal(const BatchVector& z, const BatchVector& p, double mu, const Bounds& bounds,
                  BatchVector& x) override;
    void tvDual(const BatchVector& x, double step, double momentum, BatchVector& p, BatchVector& r) override;
    void setAxis(double axis, std::span<const double> offsets) override;

protected:
    /// Sizes batches so that `workspace` vectors of a slice stay within the
    /// CPU plans' 1 GiB budget (at most 64 slices). `tvPlanes` as ProjectorPair's.
    HostPair(const ReconGeometry& geometry, const FilterOptions& filter, const IterativeOptions& options, int threads,
             int tvPlanes = 1);

    /// y = A x (y is zero on entry).
    virtual void project(const Vector& x, Vector& y) = 0;
    /// x = B y, or with `interpolate` the FBP's linear interpolation (x is
    /// zero on entry).
    virtual void backProject(const Vector& y, Vector& x, bool interpolate) = 0;
    /// Slices interleaved per group for a vector of `count` slices.
    virtual int lanes(int count) const = 0;
    /// Called when the axis moved (cached per-projection constants).
    virtual void geometryChanged() {}
    /// Ray and pixel sums below this get SIRT weight 0.
    virtual double minWeightSum() const { return kMinWeightSum; }

    static const Vector& as(const BatchVector& v);
    static Vector& as(BatchVector& v);
    WorkerPool& pool() { return m_pool; }
    /// Runs body(first, last) over [0, n) in blocks spread over the threads.
    void parallelRange(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body);

private:
    /// SIRT's weights (one slice, lane-free): 1 / (A 1) per ray and
    /// 1 / (B 1) per pixel, 0 where the sum is below kMinWeightSum.
    void ensureWeights();
    /// A vector like `like` (same space, count and layout), zero.
    std::unique_ptr<Vector> scratch(const Vector& like);
    /// Each slice's scalar, indexed by group and lane.
    static std::vector<Real> perLane(std::span<const double> values, const Vector& v);

    int m_maxSlices = 1;
    WorkerPool m_pool;
    std::shared_ptr<PeakMeter> m_meter = std::make_shared<PeakMeter>();
    std::vector<Real> m_rowWeights, m_columnWeights;
};

} // namespace tomo::cpu
