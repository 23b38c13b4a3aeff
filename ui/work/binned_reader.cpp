#include "work/binned_reader.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <utility>

namespace tomo::ui {

namespace {

/// Means of each run of `k` consecutive values (the last run may be shorter).
std::vector<double> runMeans(const std::vector<double>& values, int k) {
    std::vector<double> out;
    for (std::size_t first = 0; first < values.size(); first += static_cast<std::size_t>(k)) {
        const std::size_t last = std::min(values.size(), first + static_cast<std::size_t>(k));
        double sum = 0.0;
        for (std::size_t i = first; i < last; ++i) sum += values[i];
        out.push_back(sum / static_cast<double>(last - first));
    }
    return out;
}

class BinnedReader final : public tomo::DatasetReader {
public:
    BinnedReader(std::shared_ptr<tomo::DatasetReader> source, int b, int k) : m_source(std::move(source)), m_b(b), m_k(k) {
        const tomo::DatasetInfo& in = m_source->info();
        m_info = in;
        m_info.columns = in.columns / b;
        m_info.projections = (in.projections + k - 1) / k;
        m_info.angles = runMeans(in.angles, k);
        // Flat groups between projections p and p + 1 fall between the runs holding them.
        for (double& at : m_info.flatPositions)
            if (at >= 0.0 && at < in.projections) at = std::clamp((at - (k - 1) / 2.0) / k, -1.0, m_info.projections - 0.5);
            else if (at >= in.projections) at = m_info.projections;
        m_info.sampleType = tomo::SampleType::Float32; // means of counts are not integers
    }
    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        const int views = m_source->info().projections;
        const auto wide = static_cast<std::size_t>(m_source->info().columns), narrow = static_cast<std::size_t>(m_info.columns);
        m_buffer.resize(static_cast<std::size_t>(rowCount) * static_cast<std::size_t>(views) * wide);
        m_source->readSinograms(firstRow, rowCount, m_buffer);
        std::fill(out.begin(), out.end(), 0.0f);
        for (int r = 0; r < rowCount; ++r)
            for (int g = 0; g < m_info.projections; ++g) {
                const int first = g * m_k, count = std::min(m_k, views - first);
                float* line = &out[(static_cast<std::size_t>(r) * m_info.projections + g) * narrow];
                for (int a = first; a < first + count; ++a)
                    binColumns(&m_buffer[(static_cast<std::size_t>(r) * views + a) * wide], line,
                               1.0f / static_cast<float>(count));
            }
    }
    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        return readImage(rowCount, out, [&](std::span<float> in) { return m_source->readMeanFlat(firstRow, rowCount, in); });
    }
    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        return readImage(rowCount, out, [&](std::span<float> in) { return m_source->readMeanDark(firstRow, rowCount, in); });
    }
    void readFlatGroup(int group, int firstRow, int rowCount, std::span<float> out) override {
        readImage(rowCount, out, [&](std::span<float> in) {
            m_source->readFlatGroup(group, firstRow, rowCount, in);
            return true;
        });
    }

private:
    /// Adds the means of `line`'s runs of b columns, times `scale`, to `out`.
    void binColumns(const float* line, float* out, float scale) const {
        const float norm = scale / static_cast<float>(m_b);
        for (int c = 0; c < m_info.columns; ++c) {
            float sum = 0.0f;
            for (int i = 0; i < m_b; ++i) sum += line[static_cast<std::size_t>(c) * m_b + i];
            out[c] += sum * norm;
        }
    }
    template <typename Read>
    bool readImage(int rowCount, std::span<float> out, Read&& read) {
        const auto wide = static_cast<std::size_t>(m_source->info().columns), narrow = static_cast<std::size_t>(m_info.columns);
        m_buffer.resize(static_cast<std::size_t>(rowCount) * wide);
        if (!read(std::span<float>(m_buffer))) return false;
        std::fill(out.begin(), out.end(), 0.0f);
        for (int r = 0; r < rowCount; ++r) binColumns(&m_buffer[r * wide], &out[r * narrow], 1.0f);
        return true;
    }

    std::shared_ptr<tomo::DatasetReader> m_source;
    int m_b, m_k;
    std::vector<float> m_buffer;
};

} // namespace

int projectionRun(const std::vector<double>& angles, int width) {
    if (angles.size() < 2) return 1;
    const double step = angles[1] - angles[0];
    for (std::size_t i = 1; i < angles.size(); ++i)
        if (!((angles[i] - angles[i - 1]) * step > 0.0)) return 1;
    const double span = std::abs(angles.back() - angles.front()) * static_cast<double>(angles.size()) /
                        static_cast<double>(angles.size() - 1);
    const double needed = span / 2.0 * width; // (span / pi) * (pi / 2) * width
    return std::max(1, static_cast<int>(std::floor(static_cast<double>(angles.size()) / (0.9 * needed))));
}

std::shared_ptr<tomo::DatasetReader> binnedDataset(std::shared_ptr<tomo::DatasetReader> source, int b, int k) {
    return std::make_shared<BinnedReader>(std::move(source), b, k);
}

SliceParams binnedParams(SliceParams p, int b, int k) {
    const double scale = 1.0 / b, shift = (b - 1) / 2.0;
    p.axis = (p.axis - shift) * scale;
    p.axisTilt *= scale;
    p.axisOffsets = runMeans(p.axisOffsets, k);
    for (double& o : p.axisOffsets) o *= scale;
    if (p.region)
        p.region = tomo::Region{p.region->x / b, p.region->y / b, std::max(1, p.region->width / b),
                                std::max(1, p.region->height / b)};
    if (p.corrections.flatField.backgroundCount > 0) {
        p.corrections.flatField.backgroundFirst /= b;
        p.corrections.flatField.backgroundCount = std::max(1, p.corrections.flatField.backgroundCount / b);
    }
    return p;
}

} // namespace tomo::ui
