// The preprocessing stage: raw detector values -> corrected line integrals,
// one object for a dataset and its CorrectionOptions, used by the live
// preview (PreviewSession, one row, cached) and the batch pipeline
// (reconstructVolume, chunks of rows).
//
//   PreprocessingStage(reader, options)   validates the options against the
//                                         dataset, finds a 360° axis if asked
//     read(firstRow, rowCount) -> RawChunk      I/O only: the rows, rowMargin()
//                                               rows above and below (detector
//                                               edge rows repeated), flats, dark
//     correct(chunk) -> ImageStack              compute only: the chain of
//                                               corrections.h, in its order
//     load(firstRow, rowCount)                  correct(read(...))
//   output geometry: outputColumns(), outputAngles(), outputAxis() (360°
//   stitching doubles the width and halves the projections)
//
// read() and correct() are separate so a conveyor can read the next chunk
// while this one is corrected (or uploaded to a GPU and corrected there).
//
// correct() in detail (float32 values throughout; the order of corrections.h):
//  1. NaN/inf in data, flats or dark: DataError. With zinger removal, the
//     zingers of each flat and dark row (removeZingers on the row as a 1-row
//     image, Transmission).
//  2. Per line (row, projection) of every block row, margin rows included:
//     transmissionLine with the projection's flat blend (flatBlend); with
//     dead-pixel correction the line's bad values are interpolated
//     (interpolateMasked) or, when all are bad, set to 1e-5; without, bad
//     values are set to 1e-5 (p = 11.5); both counted as clamped.
//     Log-corrected input skips this step.
//  3. Per block row, with zinger removal: removeZingers on its sinogram (Transmission, or
//     LineIntegral for log-corrected input).
//  4. Per line: divided by the mean of the background columns (line
//     integrals: that mean subtracted), when set.
//  5. Per block row: removeStripes on its sinogram.
//  6. Per projection: PaganinFilter over all block rows; the output rows kept.
//  7. p = -log(T) of the output rows, T <= 0 set to 1e-5 first (counted).
//     Without steps 3-6 the log is taken at the end of step 2, same values.
//  8. Per output row: stitchHalfAcquisition.
// Tests: tests/core/test_preprocess.cpp, tests/core/test_corrections*.cpp.
#pragma once

#include "tomo/corrections.h"
#include "tomo/dataset.h"
#include "tomo/image.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tomo {

/// What the corrections found and did (over the rows loaded). Position lists
/// keep the first kListLimit entries in row, projection, column order; the
/// counts are complete.
struct PreprocessStats {
    static constexpr std::size_t kListLimit = 1000;

    /// Values where (raw - dark) / (flat - dark) was <= 0 (or flat <= dark)
    /// that could not be interpolated (dead-pixel correction off, or every
    /// value of the line bad): clamped to a transmission of 1e-5 (p = 11.5)
    /// so the log stays finite.
    std::size_t clamped = 0;
    /// Detector pixels without a usable flat (flat <= dark in a flat group,
    /// or flat >= saturation), interpolated along the row in every projection.
    std::size_t deadPixelCount = 0;
    std::vector<PixelPosition> deadPixels; ///< projection = -1
    /// Single values with a transmission <= 0 or a saturated raw value
    /// (dead pixels excluded), interpolated along the row.
    std::size_t badValueCount = 0;
    std::vector<PixelPosition> badValues;
    /// Zingers replaced in the projections.
    std::size_t zingerCount = 0;
    std::vector<PixelPosition> zingers;
    /// Zingers replaced in the flats and darks (per flat group and row).
    std::size_t flatZingerCount = 0;

    /// Adds another chunk's figures (lists stay capped).
    void merge(const PreprocessStats& other);
};

/// In place: p = -log((raw - dark) / (flat - dark)) for `rows` sinograms
/// [row][angle][column]; flat and dark are [row][column] (empty dark = 0,
/// empty flat = no normalisation, only -log). Never produces NaN or inf.
/// Throws DataError if the input holds NaN or inf (naming row, angle, column).
PreprocessStats normalizeAndLog(std::span<float> sinograms, int rows, int projections, int columns,
                                std::span<const float> flat, std::span<const float> dark);

/// The raw input of one chunk, as read: everything correct() needs.
struct RawChunk {
    int firstRow = 0; ///< first row of the output
    int rowCount = 0; ///< rows of the output
    int margin = 0;   ///< rows before and after them in `data`, flats and dark
    /// [row][projection][column], rowCount + 2 margin rows: rows firstRow -
    /// margin ... firstRow + rowCount + margin - 1, the detector's first and
    /// last row repeated beyond the detector.
    ImageStack data;
    /// Mean flat of each group ([row][column], same rows); empty without flats.
    std::vector<std::vector<float>> flats;
    /// Mean dark ([row][column]); empty without darks.
    std::vector<float> dark;
};

class PreprocessingStage {
public:
    /// Validates `options` (CorrectionOptions::validate) and against the
    /// dataset (column ranges, Paganin needs intensities, 360° needs a 360°
    /// scan); with half acquisition on and no axis, finds it on the middle
    /// detector row. The reader must outlive the stage; the stage reads from
    /// it only in its constructor, read() and load(). Throws InvalidArgument
    /// naming the option; reading errors as the reader throws them.
    PreprocessingStage(DatasetReader& reader, CorrectionOptions options);
    ~PreprocessingStage();
    PreprocessingStage(const PreprocessingStage&) = delete;
    PreprocessingStage& operator=(const PreprocessingStage&) = delete;

    const DatasetInfo& info() const;
    /// The options with what was found filled in (the 360° axis).
    const CorrectionOptions& options() const;

    /// Rows read above and below a chunk (Paganin's margin; 0 without).
    int rowMargin() const;
    /// Width, projections and angles of the corrected sinograms: the
    /// dataset's, or the stitched ones with half acquisition.
    int outputColumns() const;
    int outputProjections() const;
    const std::vector<double>& outputAngles() const;
    /// The axis of the stitched sinograms (their centre) with half
    /// acquisition; unset otherwise.
    std::optional<double> outputAxis() const;

    /// The 360° axis search's result, when the stage searched (half
    /// acquisition on without an axis); options() holds the axis too.
    const std::optional<HalfAcquisitionAxis>& foundHalfAcquisitionAxis() const;

    /// Things the user should know about the data (e.g. raw counts without
    /// flats), found when the stage was made or on the first load().
    std::vector<std::string> warnings() const;

    /// Reads rows [firstRow, firstRow + rowCount) with the margin.
    /// Throws InvalidArgument for rows outside the dataset, and as the reader.
    RawChunk read(int firstRow, int rowCount);

    /// The corrected sinograms of the chunk's output rows (width =
    /// outputColumns(), height = outputProjections(), depth = rowCount);
    /// `stats` receives what the corrections found in the output rows.
    /// Consumes the chunk's buffers.
    /// Throws DataError for NaN/inf input (naming the file, row, projection
    /// and column), InvalidArgument for a chunk of another shape.
    ImageStack correct(RawChunk chunk, PreprocessStats* stats = nullptr);

    /// correct(read(firstRow, rowCount), stats).
    ImageStack load(int firstRow, int rowCount, PreprocessStats* stats = nullptr);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// Flat/dark + log only (CorrectionOptions::none()), for callers that want
/// the data as measured: PreprocessingStage(reader, none).load(...).
/// Data already log-corrected are only checked for NaN/inf.
ImageStack loadSinograms(DatasetReader& reader, int firstRow, int rowCount, PreprocessStats* stats = nullptr);

} // namespace tomo
