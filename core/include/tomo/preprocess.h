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
// read() and correct() are separate so a conveyor reads the next chunk while this one is corrected. Threads: read(),
// prefetch() one at a time (the reader); the rest from several at once (lanes; correct()'s loops take turns).
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
//  5. Per block row: removeStripes on its sinogram (the wavelet method on the
//     logs of transmissions, exp taken back); on the output rows the damage
//     guard (ringChangeSums / ringChange) of before and after.
//  6. Per projection: PaganinFilter over all block rows; the output rows kept.
//  7. p = -log(T) of the output rows, T <= 0 set to 1e-5 first (counted as
//     clampedByCorrections: only Paganin's filter can make them).
//     Without steps 3-6 the log is taken at the end of step 2, same values.
//  8. Per output row: stitchHalfAcquisition.
// Tests: tests/core/test_preprocess.cpp, tests/core/test_corrections*.cpp.
#pragma once

#include "tomo/corrections.h"
#include "tomo/dataset.h"
#include "tomo/host_buffer.h"
#include "tomo/image.h"

#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tomo {

/// What the corrections found and did (over the rows loaded). Position lists
/// keep the first kListLimit entries in row, projection, column order (the
/// GPU flat-field, when it finds more in one call: kListLimit of them, in
/// that order); the counts are complete.
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
    /// Values that a correction between the flat field and the log
    /// (Paganin's filter) left without a positive transmission, clamped to
    /// kMinTransmission before the log: the correction's doing, not the data's.
    std::size_t clampedByCorrections = 0;

    /// What ring removal changed beyond its stripes (ringChange in
    /// corrections.h): the worst of the rows loaded. Empty (rows 0) when no
    /// ring removal ran.
    struct RingDamage {
        /// Above either the removal is reported as damaging. Chosen between
        /// the figures of algotom's own functions on the real scans (README
        /// "Corrections"): they flag the APS tooth with dead, large and all
        /// (non-stripe 0.08-0.11 or mean 0.4-0.6 %) and Diamond I13 row 70
        /// with sorting (0.16, -2.7 %), not the dendrites with sorting
        /// (0.013, -0.01 %) nor the wavelet method (<= 0.04, <= 0.02 %).
        static constexpr double kNonStripeLimit = 0.05;
        static constexpr double kMeanChangeLimit = 0.0025;

        int rows = 0;            ///< sinograms measured
        double nonStripe = 0.0;  ///< the largest share over the rows
        int nonStripeRow = -1;   ///< its detector row
        double meanChange = 0.0; ///< the relative change of largest magnitude (signed)
        int meanChangeRow = -1;  ///< its detector row

        /// Adds one row's figures (the first row keeps a tie).
        void add(const RingChange& change, int row);
        void merge(const RingDamage& other);
        bool exceeded() const {
            return nonStripe > kNonStripeLimit || std::abs(meanChange) > kMeanChangeLimit;
        }
        /// "16.0 % of the object's angular signal changed (row 70), its
        /// integral by -2.70 % (row 70)"; empty when rows is 0.
        std::string summary() const;
    };
    RingDamage rings;

    /// Values without a usable transmission, clamped or interpolated
    /// (clamped + badValueCount): what VolumeJob::maxClampedFraction limits.
    std::size_t unusable() const { return clamped + badValueCount; }

    /// Adds another chunk's figures (lists stay capped).
    void merge(const PreprocessStats& other);
};

// ---------------------------------------------------------- flat field
// Flat/dark correction and -log of raw detector values as a reader stores
// them (DatasetReader::readRawRows: uint8/uint16/float32/float64 in
// projection order) into float sinograms [row][angle][column]: the stage's
// plain case, on the CPU here and on the GPU in the CUDA plans (the same
// arithmetic, see FlatFieldRows).

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
///
/// With `interpolate` (the stage's dead-pixel correction), bad values -
/// t <= 0, raw >= saturation (when > 0) or a dead pixel - are interpolated
/// along the line from their good neighbours (interpolateMasked) instead.
struct FlatFieldRows {
    int rows = 0;
    int columns = 0;
    std::vector<float> dark;
    std::vector<float> scale;
    std::vector<std::uint8_t> dead; ///< 1 = no usable flat (every value bad)
    float saturation = 0.0f;
    bool interpolate = false;
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
/// order), spread over `pool`'s threads (nullptr: the calling thread); the
/// returned stats count the clamped and the interpolated values. Never
/// produces NaN or inf. Throws DataError naming the file, row, angle and
/// column of the first NaN/inf of float input, InvalidArgument for sizes
/// that do not match.
PreprocessStats flatFieldRawRows(const RawRows& raw, const FlatFieldRows& field, std::span<float> out,
                                 WorkerPool* pool = nullptr);

// ---------------------------------------------------------- the stage

/// The raw input of one chunk, as read: everything correct() needs. The
/// block's rows are rows firstRow - margin ... firstRow + rowCount + margin
/// - 1, the detector's first and last row repeated beyond the detector.
struct RawChunk {
    int firstRow = 0; ///< first row of the output
    int rowCount = 0; ///< rows of the output
    int margin = 0;   ///< rows before and after them in the block, flats and dark
    /// Intensities as stored (DatasetReader::readRawRows, no conversion), in
    /// projection order: [projection][block row][column] of `type`.
    SampleType type = SampleType::Float32;
    std::span<std::byte> values;
    HostBuffer memory; ///< holds `values` (PreprocessingStage::allocateRawWith)
    /// Log-corrected data only (no `values`): [block row][projection][column].
    ImageStack data;
    /// Mean flat of each group ([row][column], same rows); empty without flats.
    std::vector<std::vector<float>> flats;
    /// Mean dark ([row][column]); empty without darks.
    std::vector<float> dark;
};

/// The host-side part of PreprocessingStage::correct() for one chunk of
/// intensities (stage.prepare()): its flats and dark checked and cleared of
/// zingers, and the per-pixel constants of the flat-field step
/// ([block row][column] each). A device that runs the rest of the chain
/// (ChunkCorrector) multiplies the same floats as the CPU.
struct ChunkConstants {
    int blockRows = 0;
    int columns = 0;
    std::vector<float> dark;               ///< zeros without darks
    std::vector<std::vector<float>> flats; ///< mean flat of each group; empty without flats
    /// flatScales of each group (one scale of 1 everywhere without flats).
    std::vector<std::vector<float>> scales;
    /// Per projection, with several flat groups: the groups its flat is
    /// blended from (scales[lower] alone where lower == upper); else empty.
    /// The stage's own table (valid while the stage lives).
    std::span<const FlatBlend> blends;
    std::vector<std::uint8_t> dead; ///< 1 = dead pixel (interpolated in every projection)
    float saturation = 0.0f;        ///< 0 = none
    bool interpolate = false;       ///< dead-pixel correction on
    /// The log is taken in the flat-field pass (no correction comes between).
    bool logInFlatField = false;
};

class ChunkCorrector;

class PreprocessingStage {
public:
    /// Validates `options` (CorrectionOptions::validate) and against the
    /// dataset (column ranges, Paganin needs intensities, 360° needs a 360°
    /// scan); without flats, looks for open-beam columns
    /// (FlatFieldOptions::findBackground); with half acquisition on and no
    /// axis, finds it on the middle detector row. The reader must outlive the stage; the stage reads from
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
    /// The open-beam columns the stage looked for (FlatFieldOptions::
    /// findBackground, on rows spreadRows(0, rows, 3)), when it looked;
    /// options() holds the columns when some were found.
    const std::optional<BackgroundColumns>& foundBackgroundColumns() const;

    /// Things the user should know about the data (e.g. raw counts without
    /// flats), found when the stage was made or on the first load().
    std::vector<std::string> warnings() const;

    /// True when the chain is the flat/dark step (with the dead-pixel
    /// interpolation when on, at most one flat group) and the log alone, on
    /// intensities: a GPU plan may then correct the chunk's stored values
    /// itself (flatFieldRows, rawRows, ReconstructionPlan::reconstructRaw),
    /// equal to correct() within the two logs' rounding.
    bool flatFieldOnly() const;
    /// For flatFieldOnly() chunks: the flat-field constants of the chunk's
    /// rows (dead pixels counted and listed in `stats`), and its stored
    /// values as RawRows. Throws DataError for NaN/inf flats or darks.
    FlatFieldRows flatFieldRows(const RawChunk& chunk, PreprocessStats* stats = nullptr) const;
    RawRows rawRows(const RawChunk& chunk) const;

    /// Reads rows [firstRow, firstRow + rowCount) with the margin.
    /// Throws InvalidArgument for rows outside the dataset, and as the reader.
    RawChunk read(int firstRow, int rowCount);
    /// Tells the reader that read(firstRow, rowCount) comes soon
    /// (DatasetReader::prefetchRows, margin included); returns at once.
    void prefetch(int firstRow, int rowCount);

    /// The corrected sinograms of the chunk's output rows (width =
    /// outputColumns(), height = outputProjections(), depth = rowCount);
    /// `stats` receives what the corrections found in the output rows.
    /// Consumes the chunk's buffers.
    /// Throws DataError for NaN/inf input (naming the file, row, projection
    /// and column), InvalidArgument for a chunk of another shape.
    ImageStack correct(RawChunk chunk, PreprocessStats* stats = nullptr);

    /// The host-side part of correct() (steps 1-2's constants) for a chunk
    /// of intensities: checks the flats and darks for NaN/inf, removes their
    /// zingers (flatZingerCount in `stats`), warns about raw counts, finds
    /// the dead pixels (counted and listed in `stats`). Log-corrected
    /// chunks: only checked for NaN/inf (returns blockRows and columns).
    /// Throws as correct().
    ChunkConstants prepare(RawChunk& chunk, PreprocessStats& stats);
    /// The stitching plan with half acquisition on (outputColumns() etc.).
    const std::optional<HalfAcquisitionLayout>& halfAcquisition() const;
    /// Absolute detector row of block row `blockRow` of a chunk whose first
    /// output row is `firstRow` (margin rows clamped to the detector).
    int detectorRow(int firstRow, int blockRow) const;

    /// Hands the buffers of a chunk or of corrected sinograms that are done
    /// with back to the stage, which reuses them for later reads and
    /// corrections (a batch conveyor's chunks are gigabytes: no allocation,
    /// page faults or zero-filling per chunk). Thread-safe.
    void recycle(RawChunk&& chunk);
    void recycle(ImageStack&& sinograms);
    /// Stored values read from now on go to memory from `allocate` (the
    /// batch conveyor passes ReconstructionPlan::allocateHost when the plan
    /// corrects raw rows itself: a CUDA plan then uploads them by DMA).
    void allocateRawWith(std::function<HostBuffer(std::size_t bytes)> allocate);
    /// Allocates `count` buffers for the stored values of chunks of up to
    /// `chunkRows` rows (margins included) on a thread of its own, for
    /// read() to use and reuse: chunks of different sizes share them, and
    /// read() waits for them rather than allocating its own. Call it once,
    /// after allocateRawWith(). Nothing to do for log-corrected data.
    void allocateRawAhead(int chunkRows, int count);
    /// A buffer of `values` floats for corrected sinograms, recycled ones
    /// first (contents undefined): what a ChunkCorrector fills, so that the
    /// buffers the conveyor hands back are reused. Thread-safe.
    std::vector<float> sinogramBuffer(std::size_t values);

    /// correct(read(firstRow, rowCount), stats).
    ImageStack load(int firstRow, int rowCount, PreprocessStats* stats = nullptr);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// PreprocessingStage::correct() run elsewhere - on a GPU (made by
/// Backend::createCorrector for one stage): the same chain on the same
/// constants (stage.prepare()), the same results within 1e-5 relative and
/// the same statistics. Used by one thread at a time.
class ChunkCorrector {
public:
    virtual ~ChunkCorrector() = default;
    /// As PreprocessingStage::correct().
    virtual ImageStack correct(RawChunk chunk, PreprocessStats* stats = nullptr) = 0;
    /// Where it runs, for reports: "CUDA device 0 (NVIDIA H100 80GB HBM3)".
    virtual std::string where() const = 0;
    /// Busy seconds of each step over every correct() so far, in the order
    /// they run ("prepare" on the host, "upload", "flat field", ...; steps
    /// that did not run are left out).
    virtual std::vector<std::pair<std::string, double>> stepSeconds() const = 0;
};

/// Flat/dark + log only (CorrectionOptions::none()), for callers that want
/// the data as measured: PreprocessingStage(reader, none).load(...).
/// Data already log-corrected are only checked for NaN/inf.
ImageStack loadSinograms(DatasetReader& reader, int firstRow, int rowCount, PreprocessStats* stats = nullptr);

} // namespace tomo
