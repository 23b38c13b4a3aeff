// The value range of an integer output (uint16, uint8), estimated before
// the run from a few rows reconstructed with the run's own options, so that
// a volume can be quantised as it is written:
//
//   estimateOutputRange(reader, job)
//     rows = spreadRows(job's rows, 5)
//     each row: reconstructVolume(reader, job for that row) into memory
//     robustRange(their values): low and high percentiles, widened by a margin
//
// Values of the volume outside the range are clipped by the writer and
// counted (VolumeWriter::clipped). Tests: tests/core/test_output_range.cpp.
#pragma once

#include "tomo/dataset.h"
#include "tomo/pipeline.h"
#include "tomo/preview.h"
#include "tomo/progress.h"

#include <cstddef>
#include <span>
#include <vector>

namespace tomo {

struct RangeEstimateOptions {
    int rows = 5;                  ///< rows reconstructed, spread over the job's rows
    /// Percentiles (in percent) of the sampled values taken as the range's
    /// core: a few hot pixels (metal, a ring's centre) must not stretch
    /// the range and take the levels from everything else.
    double lowPercentile = 0.01;
    double highPercentile = 99.99;
    /// Share of (high - low) added on each side: rows not sampled may reach
    /// a little further. 5% costs a tenth of the levels.
    double margin = 0.05;
};

struct RangeEstimate {
    float min = 0.0f;       ///< the range to store: [min, max]
    float max = 0.0f;
    float low = 0.0f;       ///< the percentiles it was widened from
    float high = 0.0f;
    std::vector<int> rows;  ///< rows reconstructed (empty for robustRange)
    std::size_t values = 0; ///< finite values seen
};

/// The range of `values` (NaN and inf ignored): [low - margin w, high +
/// margin w], w = high - low (or max(|high|, 1) when all values are equal).
/// Throws InvalidArgument for options outside rows >= 1,
/// 0 <= lowPercentile < highPercentile <= 100, margin >= 0; DataError when
/// no value is finite.
RangeEstimate robustRange(std::span<const float> values, const RangeEstimateOptions& options = {});

/// Reconstructs options.rows rows spread over the job's rows (each alone,
/// with the job's geometry, axis, options and corrections) and returns
/// robustRange of their values. `progress` goes from 0 to 1 over the rows
/// (a Cancelled thrown from it propagates). Throws as reconstructVolume and
/// robustRange do.
RangeEstimate estimateOutputRange(DatasetReader& reader, const VolumeJob& job,
                                  const RangeEstimateOptions& options = {}, const ProgressCallback& progress = {});

/// The same for slices first.row .. first.row + slices - 1 of a fan/cone-beam
/// volume (reconstructConeVolume with first's parameters, cone_volume.h).
RangeEstimate estimateConeOutputRange(DatasetReader& reader, const PreviewRequest& first, int slices,
                                      const RangeEstimateOptions& options = {}, const ProgressCallback& progress = {});

} // namespace tomo
