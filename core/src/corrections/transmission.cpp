// Flat/dark correction: the line kernel, flat groups blended by projection
// index, and normalizeAndLog (flat/dark + clamping + -log).
#include "corrections/transmission.h"

#include "corrections/correction_util.h"
#include "tomo/corrections.h"
#include "tomo/error.h"
#include "tomo/preprocess.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace tomo {

namespace detail {

long long transmissionLine(const FlatFieldLine& line, float* out, std::uint8_t* bad) {
    long long badCount = 0;
    const double saturation = line.saturation > 0.0 ? line.saturation : std::numeric_limits<double>::infinity();
    for (int c = 0; c < line.columns; ++c) {
        const float raw = line.raw[c];
        if (!std::isfinite(raw)) return -1 - c;
        const double dark = line.dark ? line.dark[c] : 0.0;
        double flat = 1.0;
        if (line.flatLower) {
            flat = line.flatLower[c];
            if (line.flatUpper) flat = (1.0 - line.weight) * flat + line.weight * line.flatUpper[c];
            flat -= dark;
        }
        const double t = (raw - dark) / flat;
        const bool isBad = !(flat > 0.0) || !(t > 0.0) || raw >= saturation || (line.dead && line.dead[c]);
        // Kept within float's normal range, so -log stays finite for any finite input.
        out[c] = static_cast<float>(
            std::clamp(t, double{std::numeric_limits<float>::min()}, double{std::numeric_limits<float>::max()}));
        bad[c] = isBad ? 1 : 0;
        badCount += isBad;
    }
    return badCount;
}

namespace {
std::string nonFiniteName(float v) {
    return std::isnan(v) ? "NaN" : (v > 0 ? "+inf" : "-inf");
}
} // namespace

void throwNonFiniteValue(const std::string& source, float value, long long row, std::size_t angle, std::size_t column) {
    throw DataError(source + ": value is " + nonFiniteName(value) + " at row " + std::to_string(row) + ", angle " +
                    std::to_string(angle) + ", column " + std::to_string(column) + "; expected finite values");
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

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
/// Lines (one angle of one row) per worker below which threads do not pay.
constexpr std::size_t kLinesPerThread = 256;

} // namespace

PreprocessStats normalizeAndLog(std::span<float> sinograms, int rows, int projections, int columns,
                                std::span<const float> flat, std::span<const float> dark) {
    if (rows < 0 || projections < 0 || columns < 0)
        throw InvalidArgument("normalizeAndLog: rows, projections and columns must be >= 0");
    const std::size_t cols = static_cast<std::size_t>(columns);
    const std::size_t lines = static_cast<std::size_t>(rows) * static_cast<std::size_t>(projections);
    const std::size_t referenceSize = static_cast<std::size_t>(rows) * cols;
    if (sinograms.size() != lines * cols)
        throw InvalidArgument("normalizeAndLog: sinograms hold " + std::to_string(sinograms.size()) +
                              " values; expected rows x projections x columns = " + std::to_string(lines * cols));
    if (!flat.empty() && flat.size() != referenceSize)
        throw InvalidArgument("normalizeAndLog: flat holds " + std::to_string(flat.size()) +
                              " values; expected rows x columns = " + std::to_string(referenceSize) + " or none");
    if (!dark.empty() && dark.size() != referenceSize)
        throw InvalidArgument("normalizeAndLog: dark holds " + std::to_string(dark.size()) +
                              " values; expected rows x columns = " + std::to_string(referenceSize) + " or none");
    detail::checkReference(flat, columns, "sinograms", "flat field", 0, rows);
    detail::checkReference(dark, columns, "sinograms", "dark field", 0, rows);

    const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t workers = std::clamp<std::size_t>(lines / kLinesPerThread, 1, hardware);
    std::vector<std::size_t> clamped(workers, 0), firstBad(workers, kNone);
    auto work = [&](std::size_t w) {
        std::vector<std::uint8_t> bad(cols);
        for (std::size_t line = lines * w / workers; line < lines * (w + 1) / workers; ++line) {
            const std::size_t row = line / static_cast<std::size_t>(projections);
            float* values = sinograms.data() + line * cols;
            detail::FlatFieldLine in;
            in.raw = values;
            in.flatLower = flat.empty() ? nullptr : flat.data() + row * cols;
            in.dark = dark.empty() ? nullptr : dark.data() + row * cols;
            in.columns = columns;
            const long long n = detail::transmissionLine(in, values, bad.data());
            if (n < 0) {
                firstBad[w] = line * cols + static_cast<std::size_t>(-1 - n);
                return;
            }
            for (std::size_t c = 0; c < cols; ++c) {
                if (bad[c]) {
                    values[c] = static_cast<float>(detail::kMinTransmission);
                    ++clamped[w];
                }
                values[c] = -std::log(values[c]);
            }
        }
    };
    {
        std::vector<std::jthread> threads;
        for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(work, w);
        work(0);
    }
    const std::size_t bad = *std::min_element(firstBad.begin(), firstBad.end());
    if (bad != kNone) {
        const std::size_t line = bad / cols;
        detail::throwNonFiniteValue("sinograms", sinograms[bad], static_cast<long long>(line / projections),
                                    line % projections, bad % cols);
    }
    PreprocessStats stats;
    for (std::size_t c : clamped) stats.clamped += c;
    return stats;
}

} // namespace tomo
