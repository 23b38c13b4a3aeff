// Reading tomography scans: DXchange and NXtomo HDF5, TIFF stacks, raw.
//
// Datasets are often larger than memory (2048^3 uint16 = 16 GB), so a reader
// never loads a whole file: it delivers ranges of detector rows, already in
// sinogram order ([row][angle][column]) and converted to float32.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tomo {

enum class SampleType { UInt8, UInt16, Float32, Float64 };

/// "uint8", "uint16", "float32", "float64".
const char* sampleTypeName(SampleType t);
/// Bytes of one sample of type `t`.
std::size_t sampleBytes(SampleType t);

enum class DatasetFormat {
    DXchange,      ///< HDF5 /exchange/data, data_white, data_dark, theta (degrees)
    NXtomo,        ///< HDF5 /entry/instrument/detector/data + image_key, /entry/sample/rotation_angle
    SinogramHdf5,  ///< HDF5 /sinogram (angles x bins, already log-corrected) + /angles_rad or /angles_deg
    TiffDirectory, ///< a directory of single-image TIFFs, one per projection (flat*/dark* files recognised)
    MultiPageTiff, ///< one TIFF file, one page per projection
    Raw,           ///< headerless binary with a layout given by the user
    SinogramTiff,  ///< one single-page TIFF holding one sinogram [angle][column] (raw values, no flats)
    Matlab,        ///< MATLAB v7.3 .mat (HDF5 inside): a named variable, 3D projections or a 2D sinogram
    Stream,        ///< frames received from a stream, held in memory (live.h); never a file
};

/// Human-readable name, e.g. "DXchange (HDF5)".
const char* formatName(DatasetFormat f);

/// Layout of a headerless raw file, which cannot be detected from content.
struct RawLayout {
    int projections = 0;
    int rows = 0;
    int columns = 0;
    SampleType type = SampleType::Float32;
    std::size_t headerBytes = 0;
    bool bigEndian = false;
};

/// Units of stored angles and of angle files.
enum class AngleUnits {
    /// What the source says (a units attribute, a dataset named *_rad or
    /// *_deg); degrees when it says nothing. Angles that read as degrees
    /// span less than 2*pi (6.28 degrees: numbers that look like radians)
    /// are refused as ambiguous.
    Auto,
    Degrees, ///< degrees, whatever the file says (no plausibility check)
    Radians, ///< radians, whatever the file says (no plausibility check)
};

/// "auto", "degrees", "radians".
const char* angleUnitsName(AngleUnits units);

/// Entries of a text file of numbers, counted without comments and blank
/// lines (0-based): `count` entries from `first`; count 0 = to the end.
struct LineRange {
    int first = 0;
    int count = 0;
    friend bool operator==(const LineRange&, const LineRange&) = default;
};

struct OpenOptions {
    /// Required for raw files; ignored otherwise.
    std::optional<RawLayout> raw;
    /// Text file of angles (degrees unless angleUnits says radians), one per
    /// line, overriding or supplying the angles (TIFF and raw data carry
    /// none). A TIFF folder's own angles.txt is used when none is given.
    std::optional<std::filesystem::path> anglesFile;
    /// The entries of the angles file that belong to the projections, when
    /// it also lists other frames (e.g. darks and flats). Unset: every entry,
    /// or, when the file holds more angles than there are projections, the
    /// run findProjectionAngles finds. Needs an angles file.
    std::optional<LineRange> anglesLines;
    /// Units of the file's stored angles and of anglesFile.
    AngleUnits angleUnits = AngleUnits::Auto;
    /// When the file carries no angles and no anglesFile is given: angles are
    /// spread uniformly over [0, angleRangeDegrees) (end point excluded).
    /// Must lie in (0, 3600].
    double angleRangeDegrees = 180.0;
    /// Open files that declare a fan or cone beam (a laboratory scanner:
    /// HDF5 attributes geometryType, distanceSourceOrigin, ...) and describe
    /// it in DatasetInfo::divergentBeam, for FDK (fdk.h, cone_scan.h).
    /// false: such files are refused (parallel-beam readers: FBP of
    /// divergent-beam data looks plausible but is wrong).
    bool allowDivergentBeam = false;
    /// MATLAB v7.3 files: "DATA" or "DATA,ANGLES", the variable holding the
    /// projections, size(DATA) = [angles, rows, columns] in MATLAB, or one
    /// sinogram, [angles, columns]; optionally the vector of angles (units
    /// as angleUnits). Required for .mat files, refused for others.
    std::string variable;
    /// The values of a TIFF, raw or MATLAB file are already line integrals
    /// (flat-field corrected and -log'ed): they are reconstructed as they
    /// are. Refused for files with flats (DXchange, NXtomo, TIFF folders
    /// with flat images).
    bool logCorrected = false;
    /// A DXchange or NXtomo file being written with HDF5 SWMR (live.h), opened
    /// with H5F_ACC_SWMR_READ; present: DXchange min(frames of data, angles of
    /// theta), empty flat/dark stacks left out; NXtomo min(frames of data,
    /// image_key, rotation_angle). Other layouts are refused.
    bool growing = false;
    /// With `growing`: at most this many projections (the first; NXtomo: the frames
    /// up to it), so a snapshot reads the same frames however the file grows; 0 = all.
    int growingProjections = 0;
};

/// A fan or cone beam a file declares; a value is 0 where the file does not
/// say it (a geometry file must then supply it, see cone_scan.h).
struct DivergentBeam {
    std::string declared;        ///< what says so, e.g. "geometryType = Cone (attribute of /)"
    double sourceAxis = 0.0;     ///< source to rotation axis
    double sourceDetector = 0.0; ///< source to detector
    double pixelSize = 0.0;      ///< detector pixel (as stored: after binning), at the detector
    std::string unit;            ///< of the three lengths, e.g. "mm" (empty: not stated)
};

/// What a reader knows about a dataset before reading any pixel data.
struct DatasetInfo {
    std::filesystem::path path;
    DatasetFormat format = DatasetFormat::Raw;
    int projections = 0;       ///< number of projection images (angles)
    int rows = 0;              ///< detector rows = slices that can be reconstructed
    int columns = 0;           ///< detector columns = bins
    SampleType sampleType = SampleType::Float32;
    int flats = 0;             ///< flat (white) images found
    int darks = 0;             ///< dark images found
    /// Where the flats were taken, one entry per group of consecutive flats
    /// in acquisition order, as a position on the projection index axis:
    /// -1 = before the first projection, p + 0.5 = between projections p and
    /// p + 1, `projections` = after the last. A single entry (-1) when the
    /// file does not tell the order; empty without flats. Flat-field
    /// correction interpolates between the groups by projection index.
    std::vector<double> flatPositions;
    std::vector<double> angles; ///< radians, one per projection
    /// The text file the angles came from (empty: the dataset's own, or uniform).
    std::filesystem::path anglesFile;
    /// The entries of anglesFile used (given, or found by findProjectionAngles);
    /// unset when all of them were.
    std::optional<LineRange> anglesLines;
    bool logCorrected = false; ///< values are already line integrals: no flat/dark, no log
    /// Set when the file declares a fan or cone beam (only opened with
    /// OpenOptions::allowDivergentBeam).
    std::optional<DivergentBeam> divergentBeam;
    /// What a front end should tell the user before using the data, one
    /// sentence each (e.g. raw counts without flat fields will be -log'ed
    /// as they are).
    std::vector<std::string> warnings;
};

class DatasetReader {
public:
    virtual ~DatasetReader() = default;

    const DatasetInfo& info() const { return m_info; }

    /// Raw projection values of detector rows [firstRow, firstRow + rowCount)
    /// as float32 in sinogram order: out[(r * projections + a) * columns + c].
    /// Throws InvalidArgument for a row range outside the data or a span of
    /// the wrong size, FormatError/IoError (naming the file) if reading fails.
    virtual void readSinograms(int firstRow, int rowCount, std::span<float> out) = 0;

    /// Mean flat (white) field of the same rows, out[r * columns + c].
    /// Returns false (leaving out untouched) when the dataset has no flats.
    virtual bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) = 0;

    /// Mean dark field, as readMeanFlat.
    virtual bool readMeanDark(int firstRow, int rowCount, std::span<float> out) = 0;

    /// Detector values of rows [firstRow, firstRow + rowCount) as stored
    /// (info().sampleType, no conversion), in projection order, the order of
    /// the files: value (angle a, row r, column c) at index
    /// (a * rowCount + r) * columns + c; `out` holds projections x rowCount x
    /// columns samples of sampleBytes(info().sampleType) bytes. The batch
    /// conveyor reads this way and converts, reorders and corrects on the
    /// CPU or the GPU. The default goes through readSinograms (exact for
    /// every type but float64, which it rounds to float). Throws as
    /// readSinograms.
    virtual void readRawRows(int firstRow, int rowCount, std::span<std::byte> out);

    /// readRawRows() of projections [firstProjection, firstProjection +
    /// projectionCount) only: `out` holds projectionCount x rowCount x
    /// columns samples, projection firstProjection first. A live session
    /// reads this way only the projections a growing scan gained since its
    /// last read (PreviewSession::grow). The default reads every projection
    /// and copies the range; the HDF5 stack readers read only those frames. Throws as readRawRows, and
    /// InvalidArgument for a projection range outside [0, projections).
    virtual void readRawRowsOfProjections(int firstRow, int rowCount, int firstProjection, int projectionCount,
                                          std::span<std::byte> out);

    /// A hint: rows [firstRow, firstRow + rowCount) will be read soon. A
    /// reader of files on a disk may ask the kernel to start reading them
    /// into the page cache, without waiting, so that the disk's queue stays
    /// full while the caller reads other rows (the batch conveyor hints the
    /// rows after the chunk it reads). Rows outside the data are ignored;
    /// never throws. The default does nothing.
    virtual void prefetchRows(int firstRow, int rowCount);

    /// Raw values of one whole projection (every row), out[r * columns + c].
    /// The file readers read only that image; the default goes through
    /// readSinograms a row at a time (every projection of each row: meant
    /// for data in memory and single-row files). Throws InvalidArgument for
    /// an index outside [0, projections) or a span of the wrong size, and as
    /// readSinograms for reading.
    virtual void readProjection(int index, std::span<float> out);

    /// Mean flat of one group (an index into info().flatPositions) for the
    /// same rows, out[r * columns + c]. The default serves a dataset with a
    /// single group through readMeanFlat. Throws InvalidArgument for a group
    /// that does not exist.
    virtual void readFlatGroup(int group, int firstRow, int rowCount, std::span<float> out);

protected:
    DatasetInfo m_info;
};

/// Detects the format from the file's content (HDF5 signature and layout,
/// TIFF magic and page count, directory of TIFFs, MATLAB header), not from
/// its name; raw only when options.raw is given. Throws IoError if the path
/// does not exist, cannot be read, or is not a regular file or a directory
/// (a FIFO or a device is refused before it is opened), FormatError naming
/// the file and what was expected when the content is not a dataset this
/// program reads.
DatasetFormat detectFormat(const std::filesystem::path& path, const OpenOptions& options = {});

/// Opens a dataset for reading; never modifies the file.
/// Throws as detectFormat, and FormatError for missing datasets, wrong
/// ranks/shapes/dtypes, sizes the file cannot hold (never written,
/// truncated), a gap or mixed sample types in a series of files, a missing
/// source of an HDF5 virtual dataset, a fan- or cone-beam geometry (unless
/// options.allowDivergentBeam), fewer
/// than 2 projections, or angles that are miscounted, not finite, all
/// equal, or ambiguous in units (see AngleUnits).
std::unique_ptr<DatasetReader> openDataset(const std::filesystem::path& path,
                                           const OpenOptions& options = {});

/// Seconds a file's metadata may take to read before the file counts as
/// damaged (libhdf5 1.10 loops for ever on some damaged files): the
/// environment variable TOMO_METADATA_TIMEOUT when it is a positive integer,
/// else 60 (slow file systems may need more). tomo-recon's probe and the
/// workstation's check of a file before opening it both use it.
int metadataTimeoutSeconds();

/// libhdf5 1.10 crashes, loops for ever or allocates without end on some
/// damaged files (its global and local heaps; tests/fuzz/upstream). This
/// opens `path` with `options` once in a child process (fork) and only
/// returns when that ended normally: a crash there, more than 1 GiB taken
/// (capped at 2 GiB), or no end within metadataTimeoutSeconds() throws
/// FormatError naming the file. Errors the child met are left for the real
/// open to report; a raw file or a folder returns at once; when no child can
/// be made it returns (unprotected). `cancelled` is polled while waiting:
/// true kills the child and throws Cancelled. Safe with other threads
/// running: no thread is inside HDF5 while the child is made (the readers'
/// lock), and the child only reads the file and ends.
void probeDatasetInChildProcess(const std::filesystem::path& path, const OpenOptions& options = {},
                                const std::function<bool()>& cancelled = {});

/// Reads angles from a text file (one per line, '#' comments, blank lines
/// ignored; degrees unless `units` is Radians) and returns them in radians;
/// `lines` selects some entries. Throws IoError (not a regular file, over
/// 64 MiB) / FormatError (not a finite number, beyond +-1e6 degrees, `lines`
/// reaching past the file's entries) naming the file and line.
std::vector<double> readAnglesFile(const std::filesystem::path& path, AngleUnits units = AngleUnits::Degrees,
                                   std::optional<LineRange> lines = {});

/// The usual frame layout of a scan whose angles file lists every frame:
/// dark and flat frames taken before and/or after the projections, at the
/// first and the last projection angle. Among `angles` (one per frame, more
/// than `projections`), returns the run of `projections` consecutive
/// entries such that every entry before it equals its first angle and every
/// entry after it equals its last (within a tenth of the median step between
/// entries: files round); nullopt when no run or more than one fits (the
/// layout is something else: give the entries explicitly).
std::optional<LineRange> findProjectionAngles(const std::vector<double>& angles, int projections);

/// Reads per-projection axis offsets (pixels, one per line). Throws as
/// readAnglesFile, InvalidArgument if the count differs from expectedCount
/// (when expectedCount >= 0) or an offset's magnitude exceeds maxMagnitude
/// (pass the detector width: a larger shift moves every ray off the
/// detector), naming the file and line.
std::vector<double> readAxisOffsetsFile(const std::filesystem::path& path, int expectedCount = -1,
                                        double maxMagnitude = std::numeric_limits<double>::infinity());

} // namespace tomo
