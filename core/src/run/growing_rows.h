// The reader of a live preview session (PreviewSession::grow): a growing
// scan's earlier frames never change, so the stored rows read from one
// snapshot are kept, and the next snapshot's read asks the source only for
// the projections that came since (from a growing file each projection is
// a chunk read: 1500 of them cost ~60 ms for one row at 2048^2, the few new
// ones well under one). For snapshots that only append (a growing file; a
// stream's sorts late projections in among the others). Not thread-safe:
// one PreviewSession's.
#pragma once

#include "run/forwarding_reader.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace tomo::preview {

class GrowingRowsReader final : public ForwardingReader {
public:
    explicit GrowingRowsReader(std::shared_ptr<DatasetReader> snapshot);

    /// The scan grew: `snapshot` holds the frames of the last one and more,
    /// in the same order (a growing file). A snapshot whose projections do
    /// not begin with the angles of those kept (fewer of them, or one
    /// placed among them) drops the kept rows.
    void grow(std::shared_ptr<DatasetReader> snapshot);

    /// The kept projections of the same rows, and the new ones from the snapshot.
    void readRawRows(int firstRow, int rowCount, std::span<std::byte> out) override;
    /// The mean kept while the scan has the same number of flats (darks):
    /// its frames are the same (each read of a growing file opens it).
    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override;
    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override;

    /// Projections read from the snapshots so far, for tests.
    long long projectionsRead() const { return m_projectionsRead; }
    /// Means of flats or darks read from the snapshots so far, for tests.
    int meansRead() const { return m_meansRead; }

private:
    /// A mean of flats or darks as read, and what of.
    struct KeptMean {
        int firstRow = -1, rowCount = 0, frames = -1;
        bool present = false;
        std::vector<float> values;
    };
    bool keptMean(KeptMean& kept, bool flat, int firstRow, int rowCount, std::span<float> out);

    KeptMean m_flat, m_dark;
    int m_meansRead = 0;
    // The rows of the last readRawRows, projection order, m_keptProjections of them.
    int m_keptFirstRow = -1, m_keptRowCount = 0, m_keptProjections = 0;
    std::vector<double> m_keptAngles; // of the kept projections
    std::vector<std::byte> m_kept;
    long long m_projectionsRead = 0;
};

} // namespace tomo::preview
