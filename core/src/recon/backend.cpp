#include "tomo/backend.h"

#include "tomo/error.h"
#include "tomo/projector.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tomo {

std::string_view interpolationName(Interpolation i) {
    return i == Interpolation::Nearest ? "nearest" : "linear";
}

Interpolation parseInterpolation(std::string_view s) {
    if (s == "nearest") return Interpolation::Nearest;
    if (s == "linear") return Interpolation::Linear;
    throw InvalidArgument("interpolation '" + std::string(s) + "' is not known (expected nearest or linear)");
}

std::string_view precisionName(Precision p) {
    return p == Precision::Float16 ? "float16" : "float32";
}

Precision parsePrecision(std::string_view s) {
    if (s == "float32") return Precision::Float32;
    if (s == "float16") return Precision::Float16;
    throw InvalidArgument("precision '" + std::string(s) + "' is not known (expected float32 or float16)");
}

void requireGpuModes(const std::string& strategy, const ReconOptions& options) {
    const std::string who = "strategy '" + strategy + "'";
    if (options.slicesPerPass != 1 && options.slicesPerPass != 2 && options.slicesPerPass != 4)
        throw InvalidArgument(who + " does not support slicesPerPass " + std::to_string(options.slicesPerPass) +
                              " (supported: 1, 2, 4)");
    if (options.interpolation != Interpolation::Linear && options.interpolation != Interpolation::Nearest)
        throw InvalidArgument(who + " does not support this interpolation (supported: nearest, linear)");
    if (options.precision != Precision::Float32 && options.precision != Precision::Float16)
        throw InvalidArgument(who + " does not support this precision (supported: float32, float16)");
}

void ReconstructionPlan::requireSinograms(std::span<const float> sinograms, int count) const {
    if (count < 1 || count > maxSlices())
        throw InvalidArgument("setSinograms: count is " + std::to_string(count) + " (expected 1 to maxSlices() = " +
                              std::to_string(maxSlices()) + ")");
    const std::size_t expected = static_cast<std::size_t>(count) *
                                 static_cast<std::size_t>(m_geometry.geometry.projections()) *
                                 static_cast<std::size_t>(m_geometry.geometry.bins);
    if (sinograms.size() != expected)
        throw InvalidArgument("setSinograms: " + std::to_string(sinograms.size()) +
                              " values (expected count x projections x bins = " + std::to_string(expected) + ")");
}

void ReconstructionPlan::requireSlices(std::span<const float> slices, int count) const {
    const std::size_t expected = static_cast<std::size_t>(count) * m_geometry.region.pixels();
    if (slices.size() != expected)
        throw InvalidArgument("backproject: output has " + std::to_string(slices.size()) + " values (expected " +
                              std::to_string(count) + " slices x " + std::to_string(m_geometry.region.width) + "x" +
                              std::to_string(m_geometry.region.height) + " = " + std::to_string(expected) + ")");
}

PreprocessStats ReconstructionPlan::reconstructRaw(const RawRows& raw, const FlatFieldRows& field,
                                                   std::span<float> slices) {
    std::vector<float> sinograms(static_cast<std::size_t>(std::max(raw.rows, 0)) *
                                 static_cast<std::size_t>(std::max(raw.projections, 0)) *
                                 static_cast<std::size_t>(std::max(raw.columns, 0)));
    const PreprocessStats stats = flatFieldRawRows(raw, field, sinograms);
    reconstruct(sinograms, raw.rows, slices);
    return stats;
}

std::unique_ptr<ProjectorPair> Backend::createProjector(const ReconGeometry&, const ReconOptions&) const {
    return nullptr;
}

} // namespace tomo
