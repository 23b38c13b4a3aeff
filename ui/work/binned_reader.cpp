#include "work/binned_reader.h"

#include <algorithm>

namespace tomo::ui {

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

BinnedReader::BinnedReader(std::shared_ptr<tomo::DatasetReader> source, int b, int k, int r)
    : m_source(std::move(source)), m_b(b), m_k(k), m_r(r) {
    const tomo::DatasetInfo& in = m_source->info();
    m_info = in;
    m_info.columns = in.columns / b;
    m_info.rows = in.rows / r;
    m_info.projections = (in.projections + k - 1) / k;
    m_info.angles = runMeans(in.angles, k);
    // Flat groups between projections p and p + 1 fall between the runs holding them.
    for (double& at : m_info.flatPositions)
        if (at >= 0.0 && at < in.projections) at = std::clamp((at - (k - 1) / 2.0) / k, -1.0, m_info.projections - 0.5);
        else if (at >= in.projections) at = m_info.projections;
    m_info.sampleType = tomo::SampleType::Float32; // means of counts are not integers
}

void BinnedReader::readSinograms(int firstRow, int rowCount, std::span<float> out) {
    const int views = m_source->info().projections;
    const auto wide = static_cast<std::size_t>(m_source->info().columns), narrow = static_cast<std::size_t>(m_info.columns);
    m_buffer.resize(static_cast<std::size_t>(rowCount) * m_r * static_cast<std::size_t>(views) * wide);
    m_source->readSinograms(firstRow * m_r, rowCount * m_r, m_buffer);
    std::fill(out.begin(), out.end(), 0.0f);
    for (int r = 0; r < rowCount * m_r; ++r)
        for (int g = 0; g < m_info.projections; ++g) {
            const int first = g * m_k, count = std::min(m_k, views - first);
            float* line = &out[(static_cast<std::size_t>(r / m_r) * m_info.projections + g) * narrow];
            for (int a = first; a < first + count; ++a)
                binColumns(&m_buffer[(static_cast<std::size_t>(r) * views + a) * wide], line,
                           1.0f / static_cast<float>(count * m_r));
        }
}

bool BinnedReader::readMeanFlat(int firstRow, int rowCount, std::span<float> out) {
    return readImage(rowCount, out, [&](std::span<float> in) {
        return m_source->readMeanFlat(firstRow * m_r, rowCount * m_r, in);
    });
}

bool BinnedReader::readMeanDark(int firstRow, int rowCount, std::span<float> out) {
    return readImage(rowCount, out, [&](std::span<float> in) {
        return m_source->readMeanDark(firstRow * m_r, rowCount * m_r, in);
    });
}

void BinnedReader::readFlatGroup(int group, int firstRow, int rowCount, std::span<float> out) {
    readImage(rowCount, out, [&](std::span<float> in) {
        m_source->readFlatGroup(group, firstRow * m_r, rowCount * m_r, in);
        return true;
    });
}

void BinnedReader::binColumns(const float* line, float* out, float scale) const {
    const float norm = scale / static_cast<float>(m_b);
    for (int c = 0; c < m_info.columns; ++c) {
        float sum = 0.0f;
        for (int i = 0; i < m_b; ++i) sum += line[static_cast<std::size_t>(c) * m_b + i];
        out[c] += sum * norm;
    }
}

template <typename Read>
bool BinnedReader::readImage(int rowCount, std::span<float> out, Read&& read) {
    const auto wide = static_cast<std::size_t>(m_source->info().columns), narrow = static_cast<std::size_t>(m_info.columns);
    m_buffer.resize(static_cast<std::size_t>(rowCount) * m_r * wide);
    if (!read(std::span<float>(m_buffer))) return false;
    std::fill(out.begin(), out.end(), 0.0f);
    for (int r = 0; r < rowCount * m_r; ++r)
        binColumns(&m_buffer[r * wide], &out[static_cast<std::size_t>(r / m_r) * narrow], 1.0f / static_cast<float>(m_r));
    return true;
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
