// Flat groups blended by projection index, and the messages about non-finite
// input of the stage's flat/dark step.
#include "corrections/transmission.h"

#include "corrections/correction_util.h"
#include "tomo/corrections.h"
#include "tomo/error.h"
#include "tomo/preprocess.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace tomo {

namespace detail {

namespace {
std::string nonFiniteName(double v) {
    return std::isnan(v) ? "NaN" : (v > 0 ? "+inf" : "-inf");
}
} // namespace

void throwNonFiniteValue(const std::string& source, double value, long long row, std::size_t angle,
                         std::size_t column) {
    const std::string where =
        " at row " + std::to_string(row) + ", angle " + std::to_string(angle) + ", column " + std::to_string(column);
    if (std::isfinite(value)) { // float64 beyond float32's range
        char number[32];
        std::snprintf(number, sizeof number, "%.3g", value);
        throw DataError(source + ": value is " + number + where +
                        "; expected values within float32's range (|v| <= 3.4e+38)");
    }
    throw DataError(source + ": value is " + nonFiniteName(value) + where + "; expected finite values");
}

void checkReference(std::span<const float> image, int columns, const std::string& source, const char* what,
                    int firstRow, int rows) {
    const auto bad = std::find_if(image.begin(), image.end(), [](float v) { return !std::isfinite(v); });
    if (bad == image.end()) return;
    const auto index = static_cast<std::size_t>(bad - image.begin());
    const int row = std::clamp(firstRow + static_cast<int>(index / columns), 0, rows - 1);
    throw DataError(source + ": " + what + " is " + nonFiniteName(*bad) + " at row " + std::to_string(row) +
                    ", column " + std::to_string(index % columns) + "; expected finite values");
}

} // namespace detail

FlatBlend flatBlend(std::span<const double> positions, int projection) {
    if (positions.empty()) throw InvalidArgument("flat blend: no flat groups");
    if (!std::is_sorted(positions.begin(), positions.end()))
        throw InvalidArgument("flat blend: the flat groups' positions must not decrease");
    const int last = static_cast<int>(positions.size()) - 1;
    const auto above = std::upper_bound(positions.begin(), positions.end(), static_cast<double>(projection));
    if (above == positions.begin()) return {0, 0, 0.0};
    if (above == positions.end()) return {last, last, 0.0};
    const int upper = static_cast<int>(above - positions.begin());
    const int lower = upper - 1;
    const double weight = (projection - positions[lower]) / (positions[upper] - positions[lower]);
    return {lower, upper, weight};
}

} // namespace tomo
