#include "tomo/backend.h"

#include "tomo/error.h"

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

PreprocessStats ReconstructionPlan::reconstructRaw(const RawRows& raw, const FlatFieldRows& field,
                                                   std::span<float> slices) {
    std::vector<float> sinograms(static_cast<std::size_t>(std::max(raw.rows, 0)) *
                                 static_cast<std::size_t>(std::max(raw.projections, 0)) *
                                 static_cast<std::size_t>(std::max(raw.columns, 0)));
    const PreprocessStats stats = flatFieldRawRows(raw, field, sinograms);
    reconstruct(sinograms, raw.rows, slices);
    return stats;
}

} // namespace tomo
