// Reading rows as log-corrected sinograms: flat/dark + -log of the raw
// values (tomo/flat_field.h), or a NaN/inf check of data already corrected.
#include "tomo/preprocess.h"

#include "io/readers.h"
#include "tomo/error.h"
#include "tomo/flat_field.h"
#include "tomo/worker_pool.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace tomo {

namespace {

/// Lines (one angle of one row) per worker below which threads do not pay.
constexpr std::size_t kLinesPerThread = 256;
/// Raw bytes from which the flat-field correction is spread over threads.
constexpr std::size_t kThreadedBytes = std::size_t{1} << 20;

int hardwareThreads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

std::string formatValue(float v) { return std::isnan(v) ? "NaN" : (v > 0 ? "+inf" : "-inf"); }

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

} // namespace

ImageStack loadSinograms(DatasetReader& reader, int firstRow, int rowCount, PreprocessStats* stats) {
    const DatasetInfo& info = reader.info();
    const std::size_t perRow = static_cast<std::size_t>(info.projections) * static_cast<std::size_t>(info.columns);
    // Checked before allocating, so a bad range cannot ask for a huge buffer.
    detail::checkRowRequest(info, firstRow, rowCount, static_cast<std::size_t>(std::max(rowCount, 0)) * perRow, perRow);
    ImageStack out(info.columns, info.projections, rowCount);
    const Context context{info.path.string(), firstRow};

    PreprocessStats result;
    if (info.logCorrected) {
        reader.readSinograms(firstRow, rowCount, out.data);
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
        // The conveyor's flat/dark + log (tomo/flat_field.h), so a row
        // previewed and the same row reconstructed in batch are equal.
        std::vector<std::byte> raw(perRow * static_cast<std::size_t>(rowCount) * sampleBytes(info.sampleType));
        reader.readRawRows(firstRow, rowCount, raw);
        const std::size_t fieldSize = static_cast<std::size_t>(rowCount) * static_cast<std::size_t>(info.columns);
        std::vector<float> flat(fieldSize);
        std::vector<float> dark(fieldSize);
        if (!reader.readMeanFlat(firstRow, rowCount, flat)) flat.clear();
        if (!reader.readMeanDark(firstRow, rowCount, dark)) dark.clear();
        const FlatFieldRows field = makeFlatFieldRows(flat, dark, rowCount, info.columns, context.source, firstRow);
        const RawRows rows{info.sampleType, raw, info.projections, rowCount, info.columns, 0, context.source, firstRow};
        std::unique_ptr<WorkerPool> pool;
        if (raw.size() >= kThreadedBytes) pool = std::make_unique<WorkerPool>(hardwareThreads());
        result = flatFieldRawRows(rows, field, out.data, pool.get());
    }
    if (stats) *stats = result;
    return out;
}

} // namespace tomo
