// Flat/dark correction and -log, in parallel over sinogram lines.
#include "tomo/preprocess.h"

#include "io/readers.h"
#include "tomo/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace tomo {

namespace {

/// Transmission given to values that have none (raw <= dark, flat <= dark,
/// dead pixels): -ln(1e-5) = 11.5, just beyond what 16-bit counts can
/// measure (1/65535), so a clamped value is an outlier but a bounded one.
constexpr double kMinTransmission = 1e-5;

/// Lines (one angle of one row) per worker below which threads do not pay.
constexpr std::size_t kLinesPerThread = 256;

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

std::string formatValue(float v) { return std::isnan(v) ? "NaN" : (v > 0 ? "+inf" : "-inf"); }

/// Throws DataError if a [row][column] reference image holds NaN/inf.
void checkReference(std::span<const float> image, int columns, const std::string& source, const char* what,
                    int rowOffset) {
    const auto bad = std::find_if(image.begin(), image.end(), [](float v) { return !std::isfinite(v); });
    if (bad == image.end()) return;
    const auto index = static_cast<std::size_t>(bad - image.begin());
    throw DataError(source + ": " + what + " is " + formatValue(*bad) + " at row " +
                    std::to_string(rowOffset + static_cast<long long>(index / columns)) + ", column " +
                    std::to_string(index % columns) + "; expected finite values");
}

/// Runs work(firstLine, lastLine) -> (clamped, first bad index or kNone)
/// over `lines` lines, split across threads; returns the total clamped
/// count and the smallest bad index.
template <typename Work>
std::pair<std::size_t, std::size_t> forLines(std::size_t lines, Work work) {
    const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t workers = std::clamp<std::size_t>(lines / kLinesPerThread, 1, hardware);
    std::vector<std::pair<std::size_t, std::size_t>> results(workers, {0, kNone});
    {
        std::vector<std::jthread> threads;
        for (std::size_t w = 1; w < workers; ++w)
            threads.emplace_back([&, w] { results[w] = work(lines * w / workers, lines * (w + 1) / workers); });
        results[0] = work(0, lines / workers);
    }
    std::pair<std::size_t, std::size_t> total{0, kNone};
    for (const auto& [clamped, bad] : results) {
        total.first += clamped;
        total.second = std::min(total.second, bad);
    }
    return total;
}

/// What the data are (file name) and the absolute number of the first row,
/// for error messages.
struct Context {
    std::string source;
    int rowOffset = 0;
};

[[noreturn]] void throwBadValue(const Context& context, std::span<const float> data, std::size_t index, int projections,
                                int columns) {
    const std::size_t line = index / static_cast<std::size_t>(columns);
    throw DataError(context.source + ": value is " + formatValue(data[index]) + " at row " +
                    std::to_string(context.rowOffset + static_cast<long long>(line / projections)) + ", angle " +
                    std::to_string(line % projections) + ", column " + std::to_string(index % columns) +
                    "; expected finite values");
}

PreprocessStats correctAndLog(std::span<float> sinograms, int rows, int projections, int columns,
                              std::span<const float> flat, std::span<const float> dark, const Context& context) {
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
    checkReference(flat, columns, context.source, "flat field", context.rowOffset);
    checkReference(dark, columns, context.source, "dark field", context.rowOffset);

    const auto [clamped, bad] = forLines(lines, [&](std::size_t first, std::size_t last) {
        std::size_t count = 0;
        for (std::size_t line = first; line < last; ++line) {
            const std::size_t row = line / static_cast<std::size_t>(projections);
            const float* f = flat.empty() ? nullptr : flat.data() + row * cols;
            const float* d = dark.empty() ? nullptr : dark.data() + row * cols;
            float* values = sinograms.data() + line * cols;
            for (std::size_t c = 0; c < cols; ++c) {
                if (!std::isfinite(values[c])) return std::pair{count, line * cols + c};
                // In double: no float overflow for any finite inputs, so
                // the log is always finite.
                const double darkValue = d ? d[c] : 0.0;
                const double numerator = values[c] - darkValue;
                const double denominator = f ? f[c] - darkValue : 1.0;
                double t = numerator / denominator;
                if (!(denominator > 0.0) || !(t > 0.0)) {
                    t = kMinTransmission;
                    ++count;
                }
                values[c] = static_cast<float>(-std::log(t));
            }
        }
        return std::pair{count, kNone};
    });
    if (bad != kNone) throwBadValue(context, sinograms, bad, projections, columns);
    return {clamped};
}

} // namespace

PreprocessStats normalizeAndLog(std::span<float> sinograms, int rows, int projections, int columns,
                                std::span<const float> flat, std::span<const float> dark) {
    return correctAndLog(sinograms, rows, projections, columns, flat, dark, {"sinograms", 0});
}

ImageStack loadSinograms(DatasetReader& reader, int firstRow, int rowCount, PreprocessStats* stats) {
    const DatasetInfo& info = reader.info();
    const std::size_t perRow = static_cast<std::size_t>(info.projections) * static_cast<std::size_t>(info.columns);
    // Checked before allocating, so a bad range cannot ask for a huge buffer.
    detail::checkRowRequest(info, firstRow, rowCount, static_cast<std::size_t>(std::max(rowCount, 0)) * perRow, perRow);
    ImageStack out(info.columns, info.projections, rowCount);
    reader.readSinograms(firstRow, rowCount, out.data);
    const Context context{info.path.string(), firstRow};

    PreprocessStats result;
    if (info.logCorrected) {
        const auto bad = forLines(static_cast<std::size_t>(rowCount) * static_cast<std::size_t>(info.projections),
                                  [&](std::size_t first, std::size_t last) {
                                      const auto begin = out.data.begin() + static_cast<std::ptrdiff_t>(first * info.columns);
                                      const auto end = out.data.begin() + static_cast<std::ptrdiff_t>(last * info.columns);
                                      const auto it = std::find_if(begin, end, [](float v) { return !std::isfinite(v); });
                                      return std::pair<std::size_t, std::size_t>{
                                          0, it == end ? kNone : static_cast<std::size_t>(it - out.data.begin())};
                                  }).second;
        if (bad != kNone) throwBadValue(context, out.data, bad, info.projections, info.columns);
    } else {
        const std::size_t referenceSize = static_cast<std::size_t>(rowCount) * static_cast<std::size_t>(info.columns);
        std::vector<float> flat(referenceSize);
        std::vector<float> dark(referenceSize);
        if (!reader.readMeanFlat(firstRow, rowCount, flat)) flat.clear();
        if (!reader.readMeanDark(firstRow, rowCount, dark)) dark.clear();
        result = correctAndLog(out.data, rowCount, info.projections, info.columns, flat, dark, context);
    }
    if (stats) *stats = result;
    return out;
}

} // namespace tomo
