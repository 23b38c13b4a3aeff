#include "tomo/axis_sweep.h"

#include "tomo/error.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"

#include <chrono>
#include <cmath>
#include <span>
#include <sstream>

namespace tomo {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string number(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

} // namespace

AxisSweepResult sweepAxis(const Image& sinogram, const std::vector<double>& angles, const AxisSweepJob& job,
                          const ProgressCallback& progress, const CancelToken* cancel) {
    if (job.axes.empty()) throw InvalidArgument("axis sweep: no axes given (expected at least one)");
    for (std::size_t i = 0; i < job.axes.size(); ++i)
        if (!std::isfinite(job.axes[i]))
            throw InvalidArgument("axis sweep: axes[" + std::to_string(i) + "] is not finite");
    if (angles.size() != static_cast<std::size_t>(sinogram.height))
        throw InvalidArgument("axis sweep: " + std::to_string(angles.size()) + " angles for a sinogram of " +
                              std::to_string(sinogram.height) + " views");

    const auto tFilter = Clock::now();
    Geometry g;
    g.angles = angles;
    g.bins = sinogram.width;
    g.axis = job.axes.front();
    g.axisOffsets = job.axisOffsets;
    ReconGeometry geometry = ReconGeometry::fullSlice(std::move(g));
    if (job.region) geometry.region = *job.region;
    std::unique_ptr<ReconstructionPlan> plan = createPlan(geometry, job.options);
    plan->setSinograms(std::span<const float>(sinogram.data), 1);

    AxisSweepResult result;
    result.region = geometry.region;
    result.axes = job.axes;
    result.strategy = plan->options().strategy;
    result.secondsFilter = secondsSince(tFilter);
    result.slices = ImageStack(result.region.width, result.region.height, static_cast<int>(job.axes.size()));
    for (std::size_t i = 0; i < job.axes.size(); ++i) {
        if (cancel) cancel->throwIfCancelled();
        const auto t0 = Clock::now();
        plan->setAxis(job.axes[i], job.axisOffsets);
        plan->backproject(result.slices.image(static_cast<int>(i)));
        result.secondsBackproject += secondsSince(t0);
        if (progress) progress(static_cast<double>(i + 1) / job.axes.size(), "axis sweep");
    }
    return result;
}

AxisSweepResult sweepAxis(DatasetReader& reader, int row, const AxisSweepJob& job, const ProgressCallback& progress,
                          const CancelToken* cancel) {
    const DatasetInfo& info = reader.info();
    if (row < 0 || row >= info.rows)
        throw InvalidArgument("axis sweep: row " + std::to_string(row) + " is outside '" + info.path.string() +
                              "' (rows 0.." + std::to_string(info.rows - 1) + ")");
    return sweepAxis(loadSinograms(reader, row, 1).slice(0), info.angles, job, progress, cancel);
}

std::vector<double> axisRange(double from, double to, double step, int maxCount, const std::string& option) {
    const std::string text = option + " " + number(from) + ":" + number(to) + ":" + number(step);
    if (!std::isfinite(from) || !std::isfinite(to) || !std::isfinite(step))
        throw InvalidArgument(text + ": the values must be finite numbers");
    if (!(step > 0.0)) throw InvalidArgument(text + ": the step must be > 0");
    if (to < from) throw InvalidArgument(text + ": the end must not be below the start");
    const double steps = std::floor((to - from) / step + 1e-3);
    if (steps + 1 > maxCount)
        throw InvalidArgument(text + ": " + number(steps + 1) + " values (at most " + std::to_string(maxCount) +
                              "); use a larger step or a smaller range");
    std::vector<double> values;
    for (int i = 0; i <= static_cast<int>(steps); ++i) values.push_back(from + i * step);
    return values;
}

} // namespace tomo
