#include "tomo/output_range.h"

#include "tomo/axis_finder.h"
#include "tomo/cone_volume.h"
#include "tomo/error.h"
#include "tomo/volume_io.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace tomo {

namespace {

/// Keeps the slices of a reconstruction in memory.
class CollectingWriter final : public VolumeWriter {
public:
    explicit CollectingWriter(std::vector<float>& values) : m_values(values) {}
    void writeSlices(int, int, std::span<const float> data) override {
        m_values.insert(m_values.end(), data.begin(), data.end());
    }
    void commit() override {}

private:
    std::vector<float>& m_values;
};

void checkOptions(const RangeEstimateOptions& options) {
    if (options.rows < 1 || !(options.lowPercentile >= 0.0 && options.lowPercentile < options.highPercentile &&
                              options.highPercentile <= 100.0) ||
        !(options.margin >= 0.0 && std::isfinite(options.margin)))
        throw InvalidArgument("range estimate: expected rows >= 1, 0 <= low percentile < high percentile <= 100 and "
                              "a finite margin >= 0");
}

} // namespace

RangeEstimate robustRange(std::span<const float> values, const RangeEstimateOptions& options) {
    checkOptions(options);
    std::vector<float> finite;
    finite.reserve(values.size());
    std::copy_if(values.begin(), values.end(), std::back_inserter(finite), [](float v) { return std::isfinite(v); });
    if (finite.empty())
        throw DataError("range estimate: none of the " + std::to_string(values.size()) +
                        " values sampled is finite; give the range yourself");
    const auto at = [&](double percent) {
        const double last = static_cast<double>(finite.size() - 1);
        const auto index = static_cast<std::size_t>(std::floor(percent / 100.0 * last));
        std::nth_element(finite.begin(), finite.begin() + static_cast<std::ptrdiff_t>(index), finite.end());
        return finite[index];
    };
    RangeEstimate e;
    e.values = finite.size();
    e.low = at(options.lowPercentile);
    e.high = at(options.highPercentile);
    const double width = e.high > e.low ? static_cast<double>(e.high) - e.low : std::max(std::abs(double(e.high)), 1.0);
    e.min = static_cast<float>(e.low - options.margin * width);
    e.max = static_cast<float>(e.high + options.margin * width);
    if (!(e.min < e.max)) e.max = std::nextafter(e.min, INFINITY); // a margin of 0 on equal values
    return e;
}

namespace {

/// robustRange of the rows `rows`, each reconstructed alone by
/// reconstructRow(row, writer, progress of that row).
RangeEstimate rangeOfRows(const std::vector<int>& rows, const RangeEstimateOptions& options,
                          const ProgressCallback& progress,
                          const std::function<void(int, VolumeWriter&, const ProgressCallback&)>& reconstructRow) {
    std::vector<float> values;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        CollectingWriter writer(values);
        reconstructRow(rows[i], writer, [&](double fraction, std::string_view stage) {
            if (progress) progress((static_cast<double>(i) + fraction) / static_cast<double>(rows.size()), stage);
        });
    }
    RangeEstimate e = robustRange(values, options);
    e.rows = rows;
    return e;
}

} // namespace

RangeEstimate estimateOutputRange(DatasetReader& reader, const VolumeJob& job, const RangeEstimateOptions& options,
                                  const ProgressCallback& progress) {
    checkOptions(options);
    const int rowCount = job.rowCount == 0 ? reader.info().rows - job.firstRow : job.rowCount;
    return rangeOfRows(spreadRows(job.firstRow, rowCount, options.rows), options, progress,
                       [&](int row, VolumeWriter& writer, const ProgressCallback& rowProgress) {
                           VolumeJob one = job;
                           one.firstRow = row;
                           one.rowCount = 1;
                           reconstructVolume(reader, one, writer, rowProgress);
                       });
}

RangeEstimate estimateConeOutputRange(DatasetReader& reader, const PreviewRequest& first, int slices,
                                      const RangeEstimateOptions& options, const ProgressCallback& progress) {
    checkOptions(options);
    return rangeOfRows(spreadRows(first.row, slices, options.rows), options, progress,
                       [&](int row, VolumeWriter& writer, const ProgressCallback& rowProgress) {
                           PreviewRequest one = first;
                           one.row = row;
                           reconstructConeVolume(reader, one, 1, writer, rowProgress);
                       });
}

} // namespace tomo
