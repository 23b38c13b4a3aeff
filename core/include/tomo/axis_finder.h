// Automatic rotation-axis (centre of rotation) finder: on one sinogram, and
// on several rows of a dataset with a constant or a tilted (linear) result.
//
//   findRotationAxis(sinogram)     one row: axis + confidence (why it is low)
//   findAxisOnRows(reader, rows)   each row, then their consensus: a constant
//                                  axis (weighted median) or an AxisLine fit
//
// Tests: tests/core/test_axis_finder.cpp (phantoms with a known axis, dead
// pixels, ambiguous and out-of-range cases, the real scans).
#pragma once

#include "tomo/dataset.h"
#include "tomo/geometry.h"
#include "tomo/image.h"
#include "tomo/progress.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tomo {

/// Confidence below this is doubtful (shown in red, printed with a warning);
/// from kAxisReliable up the axis is usually within half a pixel.
inline constexpr double kAxisDoubtful = 0.2;
inline constexpr double kAxisReliable = 0.5;

struct AxisEstimate {
    double axis = 0.0; ///< detector column of the rotation axis
    /// 0..1: the smaller of the uniqueness mapped from [0.4, 0.9] to [0, 1]
    /// and the reproducibility (below); 0 when the best position lies at the
    /// edge of the search range. < kAxisDoubtful is doubtful.
    double confidence = 0.0;
    /// 0..1: how much deeper the chosen minimum of the metric is than any
    /// other minimum, relative to the median metric (1 = no competitor).
    double uniqueness = 0.0;
    /// RMS of the pixels between the axes found on two halves of the views
    /// (even / odd views, and alternate pairs of neighbours: halves with
    /// independent noise): about twice the uncertainty of `axis`.
    /// Reproducibility = exp(-(splitDistance / 1 px)^2).
    double splitDistance = 0.0;
    /// Pixels of the sinogram replaced as gross outliers (dead or saturated
    /// pixels, zingers) before the search.
    std::size_t outliers = 0;
    /// Empty when confidence >= kAxisReliable; else why it is lower, e.g.
    /// "halves of the views give axes 2.30 px apart".
    std::string doubt;
    std::string method;
};

/// Finds the axis from one log-corrected sinogram (height = angles,
/// width = bins) and its angles (radians). Method: Vo et al., Opt. Express
/// 22 (2014) 19078, "Reliable method for calculating the center of rotation
/// in parallel-beam tomography": the 0-180 degree sinogram is joined with its
/// mirrored copy for each candidate centre and the candidate whose Fourier
/// metric (energy in the double-wedge region) is smallest wins; coarse search
/// at 1 px, then sub-pixel refinement by shifting. Gross outliers are replaced
/// by their row median first. Views beyond 180 degrees are ignored.
/// `searchRadius`: pixels either side of the detector centre (< 0: bins / 4).
/// Throws InvalidArgument if the angles do not cover ~180 degrees or the
/// sinogram is too small, DataError for NaN/inf values.
AxisEstimate findRotationAxis(const Image& sinogram, const std::vector<double>& angles,
                              double searchRadius = -1.0);

/// Whether `angles` (radians) cover a half turn: from the first view to
/// the last one's next step (the median step) at least 180 degrees less half
/// a step, with 16 views or more (what findRotationAxis needs, and more
/// than its 95 %): a live scan starts its axis search once they do.
bool coversHalfTurn(const std::vector<double>& angles);

/// The axis of each searched row and their consensus.
struct AxisSearch {
    struct Row {
        int row = 0;
        AxisEstimate estimate;
        bool used = false; ///< counted in the consensus (confidence >= kAxisDoubtful, not an outlier)
    };
    std::vector<Row> rows;
    /// The consensus: tilt 0 (a constant axis, the weighted median of the
    /// used rows) unless fitTilt was asked for (then the weighted
    /// least-squares line through the used rows).
    AxisLine line;
    /// RMS distance (px) of the used rows from `line`.
    double residual = 0.0;
    /// Median confidence of the used rows x exp(-(residual / 1 px)^2); with
    /// no usable row, the best row's (doubtful) confidence.
    double confidence = 0.0;
    int usedRows() const;
};

/// Rows spread evenly over [first, first + count): at most `maxRows`, at
/// the centres of equal parts (one row: the middle one).
std::vector<int> spreadRows(int first, int count, int maxRows = 5);

/// Finds the axis on each of `rows` of the dataset (log-corrected with
/// loadSinograms) and combines them; a line needs two used rows at
/// different positions, else the result stays constant. `progress` is
/// called after each row (a Cancelled thrown from it propagates).
/// Throws InvalidArgument for no rows or a row outside the dataset, and as
/// loadSinograms and findRotationAxis do.
AxisSearch findAxisOnRows(DatasetReader& reader, const std::vector<int>& rows, bool fitTilt = false,
                          double searchRadius = -1.0, const ProgressCallback& progress = {});

} // namespace tomo
