// Curved (cylindrical) detectors resampled onto a virtual flat one
// (cone_geometry.h). In a view's detector frame the flat pixel (t, h) at
// distance D from the source is the ray direction (t, D, h); it meets the
// cylinder of radius D about the source at the angle atan(t / D) and the
// height h D / sqrt(t^2 + D^2).
#include "tomo/cone_geometry.h"

#include "tomo/error.h"
#include "tomo/worker_pool.h"

#include "recon/cpu_plan.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tomo {

namespace {

/// Linear interpolation between samples `first` and `second` of `count`
/// (weight of the second); positions beyond the outer samples take theirs.
struct Linear {
    int first = 0;
    int second = 0;
    float weight = 0.0f;
};

Linear linearAt(double position, int count) {
    if (count == 1) return {};
    const double p = std::clamp(position, 0.0, count - 1.0);
    const int first = std::min(static_cast<int>(p), count - 2);
    return {first, first + 1, static_cast<float>(p - first)};
}

} // namespace

CircularConeGeometry virtualFlatDetector(const CircularConeGeometry& g) {
    g.validate();
    if (g.detector == DetectorShape::Flat) return g;
    const double D = g.sourceDetector;
    const double firstAngle = g.columnAngle(-0.5), lastAngle = g.columnAngle(g.columns - 0.5);
    const double first = D * std::tan(firstAngle), last = D * std::tan(lastAngle);
    CircularConeGeometry flat = g;
    flat.detector = DetectorShape::Flat;
    flat.pixelWidth = (last - first) / g.columns;
    // Flat column u sits at t = (u - (columns - 1) / 2 - offsetU) pixelWidth: edge -0.5 at `first`.
    flat.offsetU = -0.5 - (g.columns - 1) / 2.0 - first / flat.pixelWidth;
    // The widest ray meets the cylinder lowest: h cos(angle).
    flat.pixelHeight = g.rowPitch() / std::cos(std::max(-firstAngle, lastAngle));
    return flat;
}

std::vector<float> resampleToFlatDetector(const CircularConeGeometry& g, std::span<const float> projections) {
    const CircularConeGeometry flat = virtualFlatDetector(g);
    const int cols = g.columns, rows = g.rows, views = static_cast<int>(g.angles.size());
    const std::size_t image = static_cast<std::size_t>(cols) * rows;
    if (projections.size() != image * views)
        throw InvalidArgument("detector resampling: " + std::to_string(projections.size()) +
                              " projection values (expected views x rows x columns = " + std::to_string(views) + " x " +
                              std::to_string(rows) + " x " + std::to_string(cols) + ")");
    if (g.detector == DetectorShape::Flat) return {projections.begin(), projections.end()};

    // Per flat column: the curved columns around its ray, and how much lower
    // than on the flat detector the ray meets the cylinder.
    const double D = g.sourceDetector;
    std::vector<Linear> curvedColumn(cols);
    std::vector<double> heightScale(cols);
    for (int c = 0; c < cols; ++c) {
        const double t = (c - (cols - 1) / 2.0 - flat.offsetU) * flat.pixelWidth;
        const double angle = std::atan(t / D);
        curvedColumn[c] = linearAt(angle * D / g.pixelWidth + (cols - 1) / 2.0 + g.offsetU, cols);
        heightScale[c] = D / std::hypot(t, D);
    }
    // Both detectors put height 0 on row centreV; flat row r is
    // (r - centreV) flat.pixelHeight high.
    const double centreV = (rows - 1) / 2.0 + g.offsetV;
    const double pitchRatio = flat.rowPitch() / g.rowPitch();

    std::vector<float> out(projections.size());
    WorkerPool pool(cpu::resolveThreads(0));
    pool.parallelFor(views, [&](int p, int) {
        const float* in = projections.data() + image * p;
        float* img = out.data() + image * p;
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) {
                const Linear u = curvedColumn[c];
                const Linear v = linearAt(centreV + (r - centreV) * pitchRatio * heightScale[c], rows);
                const float* row0 = in + static_cast<std::size_t>(v.first) * cols;
                const float* row1 = in + static_cast<std::size_t>(v.second) * cols;
                const float a = row0[u.first] + u.weight * (row0[u.second] - row0[u.first]);
                const float b = row1[u.first] + u.weight * (row1[u.second] - row1[u.first]);
                img[static_cast<std::size_t>(r) * cols + c] = a + v.weight * (b - a);
            }
    });
    return out;
}

} // namespace tomo
