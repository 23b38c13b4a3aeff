// Automatic rotation-axis (centre of rotation) finder.
#pragma once

#include "tomo/image.h"

#include <string>
#include <vector>

namespace tomo {

struct AxisEstimate {
    double axis = 0.0;       ///< detector column of the rotation axis
    /// 0..1: how clearly the best position stands out from the others
    /// (1 - best metric / median metric over the search); < 0.2 is doubtful.
    double confidence = 0.0;
    std::string method;
};

/// Finds the axis from one log-corrected sinogram (height = angles,
/// width = bins) and its angles (radians). Method: Vo et al., Opt. Express
/// 22 (2014) 19078, "Reliable method for calculating the center of rotation
/// in parallel-beam tomography": the 0-180 degree sinogram is joined with its
/// mirrored copy for each candidate centre and the candidate whose Fourier
/// metric (energy in the double-wedge region) is smallest wins; coarse search
/// at 1 px, then sub-pixel refinement by shifting. Views beyond 180 degrees
/// are ignored. Throws InvalidArgument if the angles do not cover ~180
/// degrees or the sinogram is too small.
AxisEstimate findRotationAxis(const Image& sinogram, const std::vector<double>& angles,
                              double searchRadius = -1.0 /* default: bins / 4 */);

} // namespace tomo
