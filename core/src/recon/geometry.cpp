#include "tomo/geometry.h"

#include "tomo/error.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <string>

namespace tomo {

void Geometry::validate() const {
    if (angles.empty()) throw InvalidArgument("geometry: angles is empty (expected one angle per projection)");
    if (bins < 1) throw InvalidArgument("geometry: bins is " + std::to_string(bins) + " (expected >= 1)");
    for (std::size_t i = 0; i < angles.size(); ++i)
        if (!std::isfinite(angles[i]))
            throw InvalidArgument("geometry: angles[" + std::to_string(i) + "] is not finite");
    if (!std::isfinite(axis)) throw InvalidArgument("geometry: axis is not finite");
    if (!axisOffsets.empty() && axisOffsets.size() != angles.size())
        throw InvalidArgument("geometry: axisOffsets has " + std::to_string(axisOffsets.size()) +
                              " values (expected 0 or one per angle: " + std::to_string(angles.size()) + ")");
    for (std::size_t i = 0; i < axisOffsets.size(); ++i)
        if (!std::isfinite(axisOffsets[i]))
            throw InvalidArgument("geometry: axisOffsets[" + std::to_string(i) + "] is not finite");
    if (!weights.empty() && weights.size() != angles.size())
        throw InvalidArgument("geometry: weights has " + std::to_string(weights.size()) +
                              " values (expected 0 or one per angle: " + std::to_string(angles.size()) + ")");
    for (std::size_t i = 0; i < weights.size(); ++i)
        if (!std::isfinite(weights[i]))
            throw InvalidArgument("geometry: weights[" + std::to_string(i) + "] is not finite");
}

ReconGeometry ReconGeometry::fullSlice(Geometry g) {
    ReconGeometry r;
    r.sliceWidth = g.bins;
    r.sliceHeight = g.bins;
    r.region = Region{0, 0, g.bins, g.bins};
    r.geometry = std::move(g);
    return r;
}

void validateAxis(double axis, std::span<const double> offsets, int projections) {
    if (!std::isfinite(axis)) throw InvalidArgument("setAxis: axis is not finite");
    if (!offsets.empty() && offsets.size() != static_cast<std::size_t>(projections))
        throw InvalidArgument("setAxis: " + std::to_string(offsets.size()) +
                              " offsets (expected 0 or one per projection: " + std::to_string(projections) + ")");
    for (std::size_t i = 0; i < offsets.size(); ++i)
        if (!std::isfinite(offsets[i]))
            throw InvalidArgument("setAxis: offsets[" + std::to_string(i) + "] is not finite");
}

double AxisLine::tiltDegrees() const {
    return std::atan(tilt) * 180.0 / std::numbers::pi;
}

AxisLine AxisLine::through(int row1, double axis1, int row2, double axis2) {
    if (!std::isfinite(axis1) || !std::isfinite(axis2)) throw InvalidArgument("axis line: an axis value is not finite");
    if (row1 == row2)
        throw InvalidArgument("axis line: both points are on row " + std::to_string(row1) +
                              " (expected two different rows)");
    return AxisLine{axis1, (axis2 - axis1) / (row2 - row1), static_cast<double>(row1)};
}

void AxisLine::validate() const {
    if (!std::isfinite(axis)) throw InvalidArgument("axis line: axis is not finite");
    if (!std::isfinite(tilt)) throw InvalidArgument("axis line: tilt is not finite");
    if (!std::isfinite(referenceRow)) throw InvalidArgument("axis line: referenceRow is not finite");
}

void ReconGeometry::validate() const {
    geometry.validate();
    if (sliceWidth < 1 || sliceHeight < 1)
        throw InvalidArgument("reconstruction grid is " + std::to_string(sliceWidth) + "x" +
                              std::to_string(sliceHeight) + " (expected sliceWidth and sliceHeight >= 1)");
    validateRegion(region, sliceWidth, sliceHeight);
}

void validateRegion(const Region& r, int sliceWidth, int sliceHeight) {
    if (r.width < 1 || r.height < 1 || r.x < 0 || r.y < 0 || r.x > sliceWidth - r.width ||
        r.y > sliceHeight - r.height)
        throw InvalidArgument("region " + std::to_string(r.width) + "x" + std::to_string(r.height) + " at (" +
                              std::to_string(r.x) + ", " + std::to_string(r.y) +
                              ") is empty or not inside the " + std::to_string(sliceWidth) + "x" +
                              std::to_string(sliceHeight) + " slice grid");
}

std::vector<double> angularWeights(const std::vector<double>& angles) {
    const std::size_t n = angles.size();
    if (n < 2) throw InvalidArgument("angular weights: " + std::to_string(n) + " angle(s) given (expected >= 2)");
    constexpr double pi = std::numbers::pi;

    // Each view's line direction on the circle [0, pi).
    std::vector<double> pos(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(angles[i]))
            throw InvalidArgument("angular weights: angles[" + std::to_string(i) + "] is not finite");
        double r = std::fmod(angles[i], pi);
        if (r < 0) r += pi;
        pos[i] = r >= pi ? 0.0 : r; // fmod of a tiny negative can round up to pi
    }
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return pos[a] < pos[b]; });

    // gap[k]: from sorted view k to sorted view k + 1 (the last wraps round).
    std::vector<double> gap(n);
    for (std::size_t k = 0; k + 1 < n; ++k) gap[k] = pos[order[k + 1]] - pos[order[k]];
    gap[n - 1] = pos[order[0]] + pi - pos[order[n - 1]];

    // The typical step, ignoring (near-)duplicates such as the two halves of a
    // 360-degree scan, which would otherwise drag the median to zero.
    const double duplicateGap = 1e-3 * pi / static_cast<double>(n);
    std::vector<double> steps;
    for (double g : gap)
        if (g > duplicateGap) steps.push_back(g);
    double median = pi / static_cast<double>(n);
    if (!steps.empty()) {
        std::sort(steps.begin(), steps.end());
        const std::size_t m = steps.size();
        median = m % 2 ? steps[m / 2] : 0.5 * (steps[m / 2 - 1] + steps[m / 2]);
    }
    // A gap much wider than the step is a missing wedge, not a measured range.
    for (double& g : gap)
        if (g > 4.0 * median) g = median;

    std::vector<double> weights(n);
    for (std::size_t k = 0; k < n; ++k) {
        const double before = gap[(k + n - 1) % n];
        weights[order[k]] = 0.5 * (before + gap[k]);
    }
    return weights;
}

std::vector<double> viewWeights(const Geometry& geometry) {
    return geometry.weights.empty() ? angularWeights(geometry.angles) : geometry.weights;
}

} // namespace tomo
