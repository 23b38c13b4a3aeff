#include "tomo/iterative_plan.h"

#include "tomo/error.h"

#include <algorithm>
#include <chrono>
#include <string>

namespace tomo {

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

} // namespace

void checkIterativeOptions(const ReconOptions& options) {
    const IterativeOptions& it = options.iterative;
    it.validate();
    if (!it.isIterative()) return;
    const std::string who = "method " + std::string(methodName(it.method));
    if (options.interpolation != Interpolation::Linear)
        throw InvalidArgument(who + " projects with linear interpolation (Joseph's projector): interpolation " +
                              std::string(interpolationName(options.interpolation)) + " does not apply");
    if (options.precision != Precision::Float32)
        throw InvalidArgument(who + " keeps its data in float32: precision " +
                              std::string(precisionName(options.precision)) + " does not apply");
}

IterativePlan::IterativePlan(const ReconGeometry& geometry, const ReconOptions& options,
                             std::unique_ptr<ProjectorPair> pair)
    : ReconstructionPlan(geometry, options), m_pair(std::move(pair)) {
    checkIterativeOptions(m_options);
    if (!m_options.iterative.isIterative()) throw InvalidArgument("IterativePlan: method fbp is not iterative");
    if (!m_pair) throw InvalidArgument("IterativePlan: no projector pair");
    // Batches in whole groups of the pair's interleaved slices.
    m_options.slicesPerPass = std::min(m_pair->maxSlices(), m_pair->maxSlices() >= 4 ? 4 : 1);
}

IterativePlan::~IterativePlan() = default; // the vectors go before their pair (member order)

void IterativePlan::setSinograms(std::span<const float> sinograms, int count) {
    const auto start = Clock::now();
    requireSinograms(sinograms, count);
    m_times = StageTimes{};
    if (!m_data || m_data->count() != count) {
        m_data.reset();
        m_data = m_pair->vector(Space::Sinogram, count);
    }
    m_pair->upload(sinograms, *m_data);
    m_times.upload = secondsSince(start);
}

void IterativePlan::backproject(std::span<float> slices) {
    if (!m_data) throw InvalidArgument("backproject: no sinograms set (call setSinograms first)");
    const int count = m_data->count();
    requireSlices(slices, count);
    if (m_cancelled) throw Cancelled();
    const Region& region = m_geometry.region;
    const bool whole = region.x == 0 && region.y == 0 && region.width == m_geometry.sliceWidth &&
                       region.height == m_geometry.sliceHeight;

    auto t0 = Clock::now();
    std::unique_ptr<BatchVector> x = m_pair->vector(Space::Image, count);
    if (m_options.iterative.init == InitialImage::Fbp) m_pair->filteredBackprojection(*m_data, *x);
    m_times.filter = secondsSince(t0);

    t0 = Clock::now();
    if (!m_solver) {
        if (m_options.iterative.method == Method::Tv && m_lipschitz <= 0.0) m_lipschitz = estimateLipschitz(*m_pair);
        m_solver = makeSolver(*m_pair, m_options.iterative, m_lipschitz);
    }
    const IterativeSummary summary = m_solver->run(*m_data, *x, [this](const IterationState& state) {
        if (m_cancelled) throw Cancelled();
        return m_callback ? m_callback(state) : true;
    });
    {
        std::lock_guard lock(m_summaryMutex);
        m_summary = summary;
    }
    m_times.backproject = secondsSince(t0);
    m_times.compute = m_times.filter + m_times.backproject;

    t0 = Clock::now();
    if (whole) {
        m_pair->download(*x, slices);
    } else {
        const std::size_t pixels = static_cast<std::size_t>(m_geometry.sliceWidth) * m_geometry.sliceHeight;
        m_full.resize(pixels * count);
        m_pair->download(*x, m_full);
        for (int s = 0; s < count; ++s)
            for (int iy = 0; iy < region.height; ++iy) {
                const float* src = m_full.data() + s * pixels +
                                   static_cast<std::size_t>(region.y + iy) * m_geometry.sliceWidth + region.x;
                std::copy(src, src + region.width, slices.data() + (s * region.pixels() + iy * region.width));
            }
    }
    m_times.download = secondsSince(t0);
}

void IterativePlan::setAxis(double axis, std::span<const double> offsets) {
    validateAxis(axis, offsets, m_geometry.geometry.projections());
    m_pair->setAxis(axis, offsets);
    m_geometry.geometry.axis = axis;
    m_geometry.geometry.axisOffsets.assign(offsets.begin(), offsets.end());
    m_lipschitz = 0.0; // of the old geometry
    m_solver.reset();
}

void IterativePlan::setRegion(const Region& region) {
    ReconGeometry candidate = m_geometry;
    candidate.region = region;
    candidate.validate();
    m_geometry.region = region;
}

std::size_t IterativePlan::memoryBytes() const {
    return m_pair->memoryBytes() + m_full.capacity() * sizeof(float);
}

void IterativePlan::setIterationCallback(IterationCallback callback) { m_callback = std::move(callback); }

IterativeSummary IterativePlan::lastSummary() const {
    std::lock_guard lock(m_summaryMutex);
    return m_summary;
}

} // namespace tomo
