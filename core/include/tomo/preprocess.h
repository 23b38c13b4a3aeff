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

/// In place: p = -log((raw - dark) / (flat - dark)) for `rows` sinograms
/// [row][angle][column]; flat and dark are [row][column] (empty dark = 0,
/// empty flat = no normalisation, only -log). Never produces NaN or inf.
/// Throws DataError if the input holds NaN or inf (naming row, angle, column).
PreprocessStats normalizeAndLog(std::span<float> sinograms, int rows, int projections, int columns,
                                std::span<const float> flat, std::span<const float> dark);

/// Reads rows [firstRow, firstRow + rowCount) from the reader and returns
/// log-corrected sinograms (width = columns, height = projections,
/// depth = rowCount). Data already log-corrected are only checked for NaN/inf.
ImageStack loadSinograms(DatasetReader& reader, int firstRow, int rowCount,
                         PreprocessStats* stats = nullptr);

} // namespace tomo
