// Flat/dark correction and the log transform: raw counts -> line integrals.
#pragma once

#include "tomo/dataset.h"
#include "tomo/image.h"

#include <cstddef>
#include <span>

namespace tomo {

struct PreprocessStats {
    /// Values where (raw - dark) / (flat - dark) was <= 0 (or flat <= dark):
    /// clamped to a small positive transmission so the log stays finite.
    std::size_t clamped = 0;
};

/// Reads rows [firstRow, firstRow + rowCount) from the reader and returns
/// log-corrected sinograms (flatFieldRawRows of readRawRows with the mean
/// flat and dark fields) (width = columns, height = projections,
/// depth = rowCount). Data already log-corrected are only checked for NaN/inf.
ImageStack loadSinograms(DatasetReader& reader, int firstRow, int rowCount,
                         PreprocessStats* stats = nullptr);

} // namespace tomo
