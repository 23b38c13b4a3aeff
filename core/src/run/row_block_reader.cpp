#include "run/row_block_reader.h"

#include "tomo/error.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace tomo::preview {

RowBlockReader::RowBlockReader(std::shared_ptr<DatasetReader> inner) : ForwardingReader(std::move(inner)) {}

int RowBlockReader::blockRows(std::size_t rowBytes) const {
    return static_cast<int>(std::clamp<std::size_t>(kBlockBytes / std::max<std::size_t>(rowBytes, 1), 1, kBlockRows));
}

bool RowBlockReader::cacheable(int firstRow, int rowCount, std::size_t rowBytes) const {
    return firstRow >= 0 && rowCount >= 1 && firstRow + rowCount <= m_info.rows && rowCount < blockRows(rowBytes);
}

std::pair<int, int> RowBlockReader::blockAround(int firstRow, int rowCount, std::size_t rowBytes) const {
    const int rows = m_info.rows;
    const int count = std::min(rows, std::max(rowCount, blockRows(rowBytes)));
    // Centred on the request: stepping up or down stays inside.
    const int first = std::clamp(firstRow - (count - rowCount) / 2, 0, rows - count);
    return {first, count};
}

void RowBlockReader::readSinograms(int firstRow, int rowCount, std::span<float> out) {
    const std::size_t rowValues = static_cast<std::size_t>(m_info.projections) * m_info.columns;
    if (!cacheable(firstRow, rowCount, rowValues * sizeof(float)) || out.size() != rowValues * rowCount) {
        inner().readSinograms(firstRow, rowCount, out); // a large request, or a wrong one the reader names
        return;
    }
    if (!m_sinograms.holds(firstRow, rowCount)) {
        const auto [first, count] = blockAround(firstRow, rowCount, rowValues * sizeof(float));
        m_sinograms.bytes.clear();
        std::vector<std::byte> bytes(rowValues * count * sizeof(float));
        inner().readSinograms(first, count, std::span<float>(reinterpret_cast<float*>(bytes.data()), rowValues * count));
        ++m_innerReads;
        m_sinograms = {first, count, std::move(bytes)};
    }
    // Sinogram order: whole rows are contiguous.
    std::memcpy(out.data(), m_sinograms.bytes.data() + (firstRow - m_sinograms.first) * rowValues * sizeof(float),
                out.size_bytes());
}

void RowBlockReader::readRawRows(int firstRow, int rowCount, std::span<std::byte> out) {
    const std::size_t line = static_cast<std::size_t>(m_info.columns) * sampleBytes(m_info.sampleType);
    const std::size_t projections = static_cast<std::size_t>(m_info.projections);
    if (!cacheable(firstRow, rowCount, projections * line) || out.size() != projections * rowCount * line) {
        inner().readRawRows(firstRow, rowCount, out);
        return;
    }
    if (!m_raw.holds(firstRow, rowCount)) {
        const auto [first, count] = blockAround(firstRow, rowCount, projections * line);
        m_raw.bytes.clear();
        std::vector<std::byte> bytes(projections * count * line);
        inner().readRawRows(first, count, bytes);
        ++m_innerReads;
        m_raw = {first, count, std::move(bytes)};
    }
    // Projection order: each projection's rows are contiguous.
    const std::size_t offset = (firstRow - m_raw.first) * line, block = m_raw.count * line, part = rowCount * line;
    for (std::size_t a = 0; a < projections; ++a)
        std::memcpy(out.data() + a * part, m_raw.bytes.data() + a * block + offset, part);
}

} // namespace tomo::preview
