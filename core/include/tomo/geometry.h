// Parallel-beam geometry and the reconstruction grid.
//
// Conventions used everywhere (CPU, CUDA, OpenCL, phantom, tests):
//  * detector bin k (0-based) has its centre at detector coordinate s = k;
//  * slice pixel (ix, iy) has its centre at
//        x = ix - (width - 1) / 2,   y = iy - (height - 1) / 2
//    in detector-pixel units, relative to the rotation axis; iy is the row of
//    the slice image (top row first);
//  * the ray of projection p through (x, y) hits the detector at
//        s = x * cos(angle_p) - y * sin(angle_p) + axis + axisOffset_p
//    and the back-projection sums the (weighted, filtered) sinogram value
//    interpolated at s, the row being extended with zeros (bins -1 and
//    `bins` read as 0):
//      nearest: k = floor(s + 0.5); row[k] if 0 <= k <= bins - 1, else 0
//               (where s is exactly x.5, e.g. on the diagonal at 45 degrees
//               with the axis at x.5, rounding picks either bin);
//      linear:  k = floor(s), w = s - k; (1 - w) * row[k] + w * row[k + 1],
//               so a value fades to 0 between the outer bin centres (0,
//               bins - 1) and -1, bins: over the half bin beyond the
//               detector edges at -0.5 and bins - 0.5.
//    A texture fetch at s + 0.5 with border addressing gives the same.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tomo {

/// Parallel-beam acquisition geometry of one detector row.
struct Geometry {
    /// Projection angles in radians, one per projection, in acquisition order.
    std::vector<double> angles;
    /// Number of detector bins (columns).
    int bins = 0;
    /// Detector column the rotation axis projects onto (sub-pixel).
    double axis = 0.0;
    /// Optional per-projection correction added to `axis`: empty, or one
    /// value per angle (the seeds' c_a[p]).
    std::vector<double> axisOffsets;
    /// Optional weight of each projection in the back-projection sum: empty
    /// = angularWeights(angles), or one value per angle. The live preview
    /// back-projects the projections that arrived (or whose weight changed)
    /// with their weights in the whole scan so far, and adds the result to
    /// the slice it keeps (run/live_slices.h).
    std::vector<double> weights;

    int projections() const { return static_cast<int>(angles.size()); }
    /// axis + axisOffsets[p] (or axis when there are no offsets).
    double axisAt(int p) const {
        return axisOffsets.empty() ? axis : axis + axisOffsets[static_cast<std::size_t>(p)];
    }
    /// The detector centre, (bins - 1) / 2: the default axis.
    double detectorCentre() const { return (bins - 1) / 2.0; }

    /// Throws InvalidArgument naming the field if the geometry is unusable:
    /// no angles, bins < 1, non-finite values, offsets or weights count != angles.
    void validate() const;
};

/// A rotation axis that moves linearly with the detector row (an axis tilted
/// in the detector plane): axis(row) = axis + tilt * (row - referenceRow).
/// Each slice is reconstructed with the axis of its own row.
struct AxisLine {
    double axis = 0.0;         ///< detector column at referenceRow
    double tilt = 0.0;         ///< columns per row (0 = the same axis on every row)
    double referenceRow = 0.0;

    double at(double row) const { return axis + tilt * (row - referenceRow); }
    /// The tilt as an angle from the detector's vertical, in degrees
    /// (square pixels): atan(tilt).
    double tiltDegrees() const;

    /// The line through (row1, axis1) and (row2, axis2). Throws
    /// InvalidArgument if the rows are equal or a value is not finite.
    static AxisLine through(int row1, double axis1, int row2, double axis2);
    /// Throws InvalidArgument naming the field if a value is not finite.
    void validate() const;
};

/// Checks a new rotation axis and per-projection offsets (empty, or one per
/// projection) for ReconstructionPlan::setAxis. Throws InvalidArgument
/// naming the bad value.
void validateAxis(double axis, std::span<const double> offsets, int projections);

/// A rectangle of the full slice grid: pixel columns [x, x + width), rows
/// [y, y + height).
struct Region {
    int x = 0;
    int y = 0;
    int width = 0;
    int height = 0;

    std::size_t pixels() const { return static_cast<std::size_t>(width) * static_cast<std::size_t>(height); }
    bool operator==(const Region&) const = default;
};

/// Throws InvalidArgument, naming the region and the grid, if `region` is
/// empty or not inside a sliceWidth x sliceHeight grid (overflow-safe).
void validateRegion(const Region& region, int sliceWidth, int sliceHeight);

/// What a reconstruction produces: a full square or rectangular slice grid
/// and the part of it actually computed.
struct ReconGeometry {
    Geometry geometry;
    /// Full slice grid; pixel centres follow the conventions above.
    int sliceWidth = 0;
    int sliceHeight = 0;
    /// The rectangle to reconstruct (defaults to the whole grid).
    Region region;

    /// A grid of bins x bins pixels with the whole grid as region.
    static ReconGeometry fullSlice(Geometry g);

    /// Throws InvalidArgument if the grid is empty or the region is not inside it.
    void validate() const;
};

/// Weight of each view in the back-projection sum: its share of the angular
/// range. Angles are taken modulo pi (a parallel ray at a + pi is the same
/// line as at a), sorted on that circle, and each view gets half the gap to
/// each neighbour, so the weights add up to pi. This makes non-uniform steps,
/// 360-degree scans (each line measured twice) and a duplicated end view
/// (0 and 180 or 0 and 360 degrees: gap 0, the two share one weight) come out
/// right. A gap wider than 4 times the median (a limited-angle scan) is a
/// missing wedge: the views at its edges get the median half-gap on that side.
/// Throws InvalidArgument for fewer than 2 angles or non-finite angles.
std::vector<double> angularWeights(const std::vector<double>& angles);

/// The weights a plan applies to the geometry's projections: its own
/// `weights` when given, else angularWeights(angles).
std::vector<double> viewWeights(const Geometry& geometry);

} // namespace tomo
