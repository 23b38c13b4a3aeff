#include "run/growing_rows.h"

#include "io/readers.h"
#include "tomo/error.h"

#include <algorithm>
#include <utility>

namespace tomo::preview {

GrowingRowsReader::GrowingRowsReader(std::shared_ptr<DatasetReader> snapshot)
    : ForwardingReader(std::move(snapshot)) {}

void GrowingRowsReader::grow(std::shared_ptr<DatasetReader> snapshot) {
    setInner(std::move(snapshot));
    const std::vector<double>& angles = m_info.angles;
    if (angles.size() < m_keptAngles.size() || !std::equal(m_keptAngles.begin(), m_keptAngles.end(), angles.begin())) {
        m_kept.clear();
        m_keptAngles.clear();
        m_keptFirstRow = -1;
        m_keptProjections = 0;
    }
}

void GrowingRowsReader::readRawRows(int firstRow, int rowCount, std::span<std::byte> out) {
    detail::checkRawRowRequest(m_info, firstRow, rowCount, out.size());
    const int kept = firstRow == m_keptFirstRow && rowCount == m_keptRowCount ? m_keptProjections : 0;
    const std::size_t keptBytes = kept == 0 ? 0 : m_kept.size();
    if (kept == 0) {
        inner().readRawRows(firstRow, rowCount, out);
        m_projectionsRead += m_info.projections;
    } else {
        std::copy(m_kept.begin(), m_kept.end(), out.begin());
        if (const int added = m_info.projections - kept; added > 0) {
            inner().readRawRowsOfProjections(firstRow, rowCount, kept, added, out.subspan(keptBytes));
            m_projectionsRead += added;
        }
    }
    m_kept.assign(out.begin(), out.end());
    m_keptFirstRow = firstRow;
    m_keptRowCount = rowCount;
    m_keptProjections = m_info.projections;
    m_keptAngles = m_info.angles;
}

bool GrowingRowsReader::readMeanFlat(int firstRow, int rowCount, std::span<float> out) {
    return keptMean(m_flat, true, firstRow, rowCount, out);
}

bool GrowingRowsReader::readMeanDark(int firstRow, int rowCount, std::span<float> out) {
    return keptMean(m_dark, false, firstRow, rowCount, out);
}

bool GrowingRowsReader::keptMean(KeptMean& kept, bool flat, int firstRow, int rowCount, std::span<float> out) {
    const int frames = flat ? m_info.flats : m_info.darks;
    if (kept.frames == frames && kept.firstRow == firstRow && kept.rowCount == rowCount &&
        (!kept.present || kept.values.size() == out.size())) {
        if (kept.present) std::copy(kept.values.begin(), kept.values.end(), out.begin());
        return kept.present;
    }
    const bool present = flat ? inner().readMeanFlat(firstRow, rowCount, out) : inner().readMeanDark(firstRow, rowCount, out);
    ++m_meansRead;
    kept = KeptMean{firstRow, rowCount, frames, present, {}};
    if (present) kept.values.assign(out.begin(), out.end());
    return present;
}

} // namespace tomo::preview
