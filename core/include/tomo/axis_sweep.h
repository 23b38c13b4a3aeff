// Trial slices of one detector row over a range of rotation axes, to judge
// the axis by eye (`tomo-recon --center-sweep`, the workstation's gallery).
//
//   sweepAxis(sinogram, angles, job)
//     createPlan + setSinograms        once: the row is filtered once
//     for each axis: setAxis + backproject      -> slice i of the result
//
// Slice i is the same image a reconstruction of that row at axes[i] gives.
// Tests: tests/core/test_axis_sweep.cpp.
#pragma once

#include "tomo/backend.h"
#include "tomo/dataset.h"
#include "tomo/geometry.h"
#include "tomo/image.h"
#include "tomo/preview.h"
#include "tomo/progress.h"

#include <optional>
#include <string>
#include <vector>

namespace tomo {

struct AxisSweepJob {
    std::vector<double> axes;        ///< trial axes (detector columns), one slice each
    std::vector<double> axisOffsets; ///< per-projection corrections: empty, or one per projection
    std::optional<Region> region;    ///< part of the bins x bins slice grid; unset = all of it
    ReconOptions options;
};

struct AxisSweepResult {
    /// One region-sized slice per axis, in the order of `axes`
    /// (width = region width, height = region height, depth = axes).
    ImageStack slices;
    std::vector<double> axes;
    Region region;
    std::string strategy;            ///< the strategy that ran ("auto" resolved)
    double secondsFilter = 0.0;      ///< plan creation + setSinograms
    double secondsBackproject = 0.0; ///< all backproject() calls
};

/// Back-projects one log-corrected sinogram (height = angles, width = bins)
/// at every axis of the job. `progress` is called after each slice (a
/// Cancelled thrown from it propagates); `cancel` is checked between slices.
/// Throws InvalidArgument (no axes, a non-finite axis, offsets count,
/// region outside the grid, options the strategy rejects), as createPlan
/// does (DeviceError, OutOfMemory), Cancelled.
AxisSweepResult sweepAxis(const Image& sinogram, const std::vector<double>& angles, const AxisSweepJob& job,
                          const ProgressCallback& progress = {}, const CancelToken* cancel = nullptr);

/// Loads detector row `row` of the dataset (flat/dark + log) and sweeps it.
/// Throws InvalidArgument for a row outside the dataset, as loadSinograms
/// and the other sweepAxis do.
AxisSweepResult sweepAxis(DatasetReader& reader, int row, const AxisSweepJob& job,
                          const ProgressCallback& progress = {}, const CancelToken* cancel = nullptr);

/// from, from + step, ... up to `to` (included when within step / 1000 of a
/// step). Throws InvalidArgument naming `option` if a value is not finite,
/// step <= 0, to < from, or there would be more than maxCount values.
std::vector<double> axisRange(double from, double to, double step, int maxCount = 1000,
                              const std::string& option = "axis sweep");

} // namespace tomo
