#include "run/growing_rows.h"

#include "io/readers.h"
#include "tomo/error.h"

#include <algorithm>
#include <utility>

namespace tomo::preview {

GrowingRowsReader::GrowingRowsReader(std::shared_ptr<DatasetReader> snapshot) { grow(std::move(snapshot)); }

void GrowingRowsReader::grow(std::shared_ptr<DatasetReader> snapshot) {
    if (!snapshot) throw InvalidArgument("preview: no dataset");
    m_snapshot = std::move(snapshot);
    m_info = m_snapshot->info();
    if (m_info.projections < m_keptProjections) {
        m_kept.clear();
        m_keptFirstRow = -1;
        m_keptProjections = 0;
    }
}

void GrowingRowsReader::readSinograms(int firstRow, int rowCount, std::span<float> out) {
    m_snapshot->readSinograms(firstRow, rowCount, out);
}

void GrowingRowsReader::readRawRows(int firstRow, int rowCount, std::span<std::byte> out) {
    detail::checkRawRowRequest(m_info, firstRow, rowCount, out.size());
    const int kept = firstRow == m_keptFirstRow && rowCount == m_keptRowCount ? m_keptProjections : 0;
    const std::size_t keptBytes = kept == 0 ? 0 : m_kept.size();
    if (kept == 0) {
        m_snapshot->readRawRows(firstRow, rowCount, out);
        m_projectionsRead += m_info.projections;
    } else {
        std::copy(m_kept.begin(), m_kept.end(), out.begin());
        if (const int added = m_info.projections - kept; added > 0) {
            m_snapshot->readRawRowsOfProjections(firstRow, rowCount, kept, added, out.subspan(keptBytes));
            m_projectionsRead += added;
        }
    }
    m_kept.assign(out.begin(), out.end());
    m_keptFirstRow = firstRow;
    m_keptRowCount = rowCount;
    m_keptProjections = m_info.projections;
}

bool GrowingRowsReader::readMeanFlat(int firstRow, int rowCount, std::span<float> out) {
    return m_snapshot->readMeanFlat(firstRow, rowCount, out);
}

bool GrowingRowsReader::readMeanDark(int firstRow, int rowCount, std::span<float> out) {
    return m_snapshot->readMeanDark(firstRow, rowCount, out);
}

void GrowingRowsReader::readProjection(int index, std::span<float> out) { m_snapshot->readProjection(index, out); }

void GrowingRowsReader::readFlatGroup(int group, int firstRow, int rowCount, std::span<float> out) {
    m_snapshot->readFlatGroup(group, firstRow, rowCount, out);
}

} // namespace tomo::preview
