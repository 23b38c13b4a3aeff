#include "recon/cpu_plan.h"

#include "tomo/error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>

namespace tomo::cpu {

// ------------------------------------------------------------------ options

int resolveThreads(int threads) {
    if (threads > 0) return threads;
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

void checkCpuOptions(std::string_view strategy, const ReconOptions& options, std::span<const int> slicesPerPass) {
    const std::string who = "strategy '" + std::string(strategy) + "'";
    if (options.precision != Precision::Float32)
        throw InvalidArgument(who + " does not support precision " + std::string(precisionName(options.precision)) +
                              " (supported: float32)");
    if (std::find(slicesPerPass.begin(), slicesPerPass.end(), options.slicesPerPass) == slicesPerPass.end()) {
        std::string list;
        for (int s : slicesPerPass) list += (list.empty() ? "" : ", ") + std::to_string(s);
        throw InvalidArgument(who + " does not support slicesPerPass " + std::to_string(options.slicesPerPass) +
                              " (supported: " + list + ")");
    }
    if (options.threads < 0)
        throw InvalidArgument(who + ": threads is " + std::to_string(options.threads) +
                              " (expected >= 0; 0 = all hardware threads)");
}

// ------------------------------------------------------------------ CpuPlan

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

CpuPlan::CpuPlan(const ReconGeometry& geometry, const ReconOptions& options, int copies)
    : ReconstructionPlan(geometry, options),
      m_weights(viewWeights(geometry.geometry)),
      m_pool(resolveThreads(options.threads)) {
    const std::size_t sliceBytes = static_cast<std::size_t>(geometry.geometry.projections()) *
                                   static_cast<std::size_t>(geometry.geometry.bins) * sizeof(float) *
                                   static_cast<std::size_t>(std::max(copies, 1));
    m_maxSlices = static_cast<int>(std::clamp<std::size_t>(kMemoryBudget / sliceBytes, 1, kMaxSlices));
    for (int t = 0; t < m_pool.threads(); ++t)
        m_filters.push_back(std::make_unique<SinogramFilter>(geometry.geometry.bins, options.filter));
}

void CpuPlan::setSinograms(std::span<const float> sinograms, int count) {
    const auto start = Clock::now();
    requireSinograms(sinograms, count);
    const int projections = m_geometry.geometry.projections();
    const int bins = m_geometry.geometry.bins;
    const std::size_t rowsPerSlice = static_cast<std::size_t>(projections);

    m_count = 0; // stays 0 (nothing set) if filtering throws
    m_filtered.assign(sinograms.begin(), sinograms.end());
    // Tasks of up to 64 rows of one slice, so the weights of a task are one
    // contiguous run of viewWeights().
    constexpr int kRowsPerTask = 64;
    const int tasksPerSlice = (projections + kRowsPerTask - 1) / kRowsPerTask;
    m_pool.parallelFor(count * tasksPerSlice, [&](int task, int thread) {
        const int slice = task / tasksPerSlice;
        const int first = (task % tasksPerSlice) * kRowsPerTask;
        const int rows = std::min(kRowsPerTask, projections - first);
        const std::size_t offset = (static_cast<std::size_t>(slice) * rowsPerSlice + first) * bins;
        m_filters[thread]->apply(std::span<float>(m_filtered).subspan(offset, static_cast<std::size_t>(rows) * bins),
                                 rows, std::span<const double>(m_weights).subspan(first, rows));
    });
    m_count = count;
    prepare();
    m_times = StageTimes{};
    m_times.filter = secondsSince(start);
}

void CpuPlan::backproject(std::span<float> slices) {
    if (m_count == 0) throw InvalidArgument("backproject: no sinograms set (call setSinograms first)");
    requireSlices(slices, m_count);
    const auto start = Clock::now();
    backprojectSlices(slices);
    m_times.backproject = secondsSince(start);
}

void CpuPlan::setAxis(double axis, std::span<const double> offsets) {
    validateAxis(axis, offsets, m_geometry.geometry.projections());
    m_geometry.geometry.axis = axis;
    m_geometry.geometry.axisOffsets.assign(offsets.begin(), offsets.end());
}

void CpuPlan::setRegion(const Region& region) {
    ReconGeometry candidate = m_geometry;
    candidate.region = region;
    candidate.validate();
    m_geometry.region = region;
}

std::size_t CpuPlan::memoryBytes() const {
    std::size_t bytes = m_filtered.capacity() * sizeof(float) + m_weights.capacity() * sizeof(double);
    for (const auto& f : m_filters) bytes += static_cast<std::size_t>(f->padded()) * 3 * sizeof(float);
    return bytes + extraBytes();
}

} // namespace tomo::cpu
