// Flat/dark correction and -log of raw detector values as a reader stores
// them (DatasetReader::readRawRows: uint8/uint16/float32/float64 in
// projection order) into float sinograms [row][angle][column]: the first
// step of the batch conveyor's preprocessing, on the CPU here and on the GPU
// in the CUDA plans (the same arithmetic, see FlatFieldRows).
#pragma once

#include "tomo/dataset.h"
#include "tomo/preprocess.h"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace tomo {

class WorkerPool;

/// Transmission given to values that have none (raw <= dark, flat <= dark):
/// -ln(1e-5) = 11.5, just beyond what 16-bit counts can measure (1/65535),
/// so a clamped value is an outlier but a bounded one.
inline constexpr float kMinTransmission = 1e-5f;

/// Raw rows as readRawRows delivers them: value (angle a, row r, column c)
/// at (a * rowPitch + r) * columns + c, in `type`. A part of a larger block
/// (some of its rows) keeps the block's rowPitch.
struct RawRows {
    SampleType type = SampleType::UInt16;
    std::span<const std::byte> values; ///< from the first row's first value to the end of the block
    int projections = 0;
    int rows = 0;
    int columns = 0;
    int rowPitch = 0; ///< rows between two angles in `values`; 0 = rows
    /// For messages: where the values come from and the absolute number of
    /// the first row.
    std::string source;
    int firstRow = 0;
};

/// The per-pixel constants of the correction for a set of rows, [row][column]:
///   t = (raw - dark) * scale,  scale = 1 / (flat - dark), or 0 where
///   flat <= dark (no signal: every value there is clamped);
///   p = -log(t), and t <= 0 is clamped to kMinTransmission (counted).
/// Without flats scale = 1 (only -log); without darks dark = 0. Computed
/// once on the host, so the CPU and the GPU multiply the same floats.
struct FlatFieldRows {
    int rows = 0;
    int columns = 0;
    std::vector<float> dark;
    std::vector<float> scale;
};

/// From mean flat and dark fields [row][column] (either may be empty).
/// Throws DataError naming `source` and the pixel if a field holds NaN/inf,
/// InvalidArgument for wrong sizes.
FlatFieldRows makeFlatFieldRows(std::span<const float> flat, std::span<const float> dark, int rows, int columns,
                                const std::string& source, int firstRow);

/// Rows [first, first + count) of `raw`, with the same pitch; the field's
/// rows likewise (`field` rows must equal raw's).
RawRows rowsOf(const RawRows& raw, int first, int count);
FlatFieldRows rowsOf(const FlatFieldRows& field, int first, int count);

/// Corrects `raw` into `out` (rows x projections x columns floats, sinogram
/// order), spread over `pool`'s threads (nullptr: the calling thread). Never
/// produces NaN or inf. Throws DataError naming the file, row, angle and
/// column of the first NaN/inf of float input, InvalidArgument for sizes
/// that do not match.
PreprocessStats flatFieldRawRows(const RawRows& raw, const FlatFieldRows& field, std::span<float> out,
                                 WorkerPool* pool = nullptr);

} // namespace tomo
