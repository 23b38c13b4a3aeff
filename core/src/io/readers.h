// Internal: the per-format dataset readers behind openDataset(), and the
// helpers they share (defined in dataset.cpp).
#pragma once

#include "tomo/dataset.h"

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tomo::detail {

/// Threads a reader spreads the files or chunks of one request over: at
/// least 8 (page-cache copies and NVMe queues gain from several reads at
/// once), else one per core (decompression).
int readerThreads();

/// Throws OutOfMemory naming `path` when `bytes` (what reading `what` whole
/// needs) exceed `budget`, or the machine's physical memory when `budget` is
/// 0: refused at once rather than after minutes of swapping.
void requireMemory(double bytes, const std::filesystem::path& path, const std::string& what, double budget = 0.0);

/// What the first bytes of a regular file say it is.
enum class FileKind {
    Hdf5,
    Tiff,
    MatlabHdf5, ///< MATLAB v7.3: a MATLAB text header in the user block of an HDF5 file
    MatlabOld,  ///< MATLAB v4/v5: MATLAB's own format
    Other,
};

/// Looks at the signature only (HDF5 at offset 0 or a user-block offset,
/// TIFF/BigTIFF magic, MATLAB header). Throws IoError naming the file if it
/// cannot be read.
FileKind sniffFile(const std::filesystem::path& path);

std::unique_ptr<DatasetReader> openRawDataset(const std::filesystem::path& path, const OpenOptions& options);

#if TOMO_WITH_HDF5
/// DXchange, NXtomo or SinogramHdf5, from the datasets the file holds.
/// Throws FormatError naming the file and the layouts looked for.
DatasetFormat detectHdf5Layout(const std::filesystem::path& path);
std::unique_ptr<DatasetReader> openDXchange(const std::filesystem::path& path, const OpenOptions& options);
std::unique_ptr<DatasetReader> openNXtomo(const std::filesystem::path& path, const OpenOptions& options);
/// A file still being written with SWMR (OpenOptions::growing): DXchange, or NXtomo when it has no /exchange/data.
std::unique_ptr<DatasetReader> openGrowingHdf5(const std::filesystem::path& path, const OpenOptions& options);
std::unique_ptr<DatasetReader> openSinogramHdf5(const std::filesystem::path& path, const OpenOptions& options);
/// MATLAB v7.3: the variable options.variable. Throws InvalidArgument when
/// no variable is named (the message lists the file's numeric variables).
std::unique_ptr<DatasetReader> openMatlab(const std::filesystem::path& path, const OpenOptions& options);
#endif

/// The TIFF files of a directory in name order: regular files that are
/// TIFFs by content, and every entry named *.tif / *.tiff, which must be
/// one: a damaged or non-regular projection file is an error, never a
/// silent gap in the series. Throws IoError naming the directory or the
/// entry (unreadable, a link loop, a FIFO...), FormatError naming a *.tif
/// entry that is not a TIFF.
std::vector<std::filesystem::path> tiffFilesIn(const std::filesystem::path& dir);

#if TOMO_WITH_TIFF
/// MultiPageTiff (several pages) or SinogramTiff (one page). Throws
/// FormatError naming the file when its list of pages cannot be read
/// (truncated or corrupt), so a damaged multi-page file is never taken for a
/// sinogram.
DatasetFormat detectTiffLayout(const std::filesystem::path& path);
std::unique_ptr<DatasetReader> openTiffDirectory(const std::filesystem::path& path, const OpenOptions& options);
std::unique_ptr<DatasetReader> openMultiPageTiff(const std::filesystem::path& path, const OpenOptions& options);
std::unique_ptr<DatasetReader> openSinogramTiff(const std::filesystem::path& path, const OpenOptions& options);
#endif

/// Angles as a file stores them, before units and checks are applied.
struct StoredAngles {
    std::vector<double> values;            ///< as stored (empty: the file has none)
    std::string source;                    ///< e.g. "/exchange/theta in FILE", for messages
    std::optional<AngleUnits> statedUnits; ///< Degrees or Radians when the file says
};

/// The angles (radians) of a dataset with info.projections projections:
/// options.anglesFile when given (the entries options.anglesLines selects,
/// or those findProjectionAngles finds when the file holds more angles than
/// projections; recorded in info.anglesFile / anglesLines), else `stored`
/// when not empty (in options.angleUnits, else the stated units, else
/// degrees), else uniform over options.angleRangeDegrees. Throws
/// FormatError naming the source when there are fewer than 2 projections, a
/// count differs from info.projections, an angle is not finite or absurdly
/// large, all angles are equal, or (units neither stated nor given) degrees
/// that span at most 2 pi; InvalidArgument for a range outside (0, 3600] and
/// for anglesLines without an angles file.
std::vector<double> resolveAngles(DatasetInfo& info, const StoredAngles& stored, const OpenOptions& options);

/// The numbers of a text file, one per line ('#' comments and blank lines
/// skipped), as written. Throws IoError / FormatError naming the file and
/// line; `what` names one value in messages ("angle", "axis offset").
std::vector<double> readNumbersFile(const std::filesystem::path& path, const std::string& what);

/// Readers call it last: applies options.logCorrected (InvalidArgument
/// naming the file when it has flats or darks) and adds to info.warnings
/// what the user must know about the values (raw counts without flats).
void finishInfo(DatasetInfo& info, const OpenOptions& options);

/// Throws InvalidArgument naming info.path when [firstRow, firstRow +
/// rowCount) is not inside the detector or `outSize` is not
/// rowCount * valuesPerRow.
void checkRowRequest(const DatasetInfo& info, int firstRow, int rowCount, std::size_t outSize,
                     std::size_t valuesPerRow);

/// checkRowRequest for readRawRows: `bytes` must be rowCount x projections x
/// columns samples of info.sampleType.
void checkRawRowRequest(const DatasetInfo& info, int firstRow, int rowCount, std::size_t bytes);

/// checkRawRowRequest for readRawRowsOfProjections: the projections must be
/// a non-empty range inside [0, projections) and `bytes` projectionCount x
/// rowCount x columns samples. Returns the bytes of one projection's rows.
std::size_t checkRawProjectionRequest(const DatasetInfo& info, int firstRow, int rowCount, int firstProjection,
                                      int projectionCount, std::size_t bytes);

/// Throws InvalidArgument naming info.path when `index` is not a projection
/// or `outSize` is not rows * columns.
void checkProjectionRequest(const DatasetInfo& info, int index, std::size_t outSize);

/// Reorders a block read as [image][row][column] into [row][image][column].
void imagesToSinograms(std::span<const float> images, int imageCount, int rows, int columns,
                       std::span<float> out);
/// Puts `rows` rows of image `index` ([row][column]) into sinogram order
/// [row][image][column] of `imageCount` images.
void imageToSinograms(std::span<const float> image, int index, int imageCount, int rows, int columns,
                      std::span<float> out);

/// Stored samples of `type` [image][row][column] (readRawRows' order, any
/// alignment) into float sinograms [row][image][column].
void storedImagesToSinograms(std::span<const std::byte> images, SampleType type, int imageCount, int rows,
                             int columns, std::span<float> out);

/// Averages `imageCount` images of `pixels` values ([image][pixel]) into out.
void meanOfImages(std::span<const float> images, int imageCount, std::span<float> out);

} // namespace tomo::detail
