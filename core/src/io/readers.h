// Internal: the per-format dataset readers behind openDataset(), and the
// helpers they share (defined in dataset.cpp).
#pragma once

#include "tomo/dataset.h"

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tomo::detail {

/// Bytes of one sample of type `t`.
std::size_t sampleBytes(SampleType t);

/// What the first bytes of a regular file say it is.
enum class FileKind { Hdf5, Tiff, Other };

/// Looks at the signature only (HDF5 at offset 0 or a user-block offset,
/// TIFF/BigTIFF magic). Throws IoError naming the file if it cannot be read.
FileKind sniffFile(const std::filesystem::path& path);

std::unique_ptr<DatasetReader> openRawDataset(const std::filesystem::path& path, const OpenOptions& options);

#if TOMO_WITH_HDF5
/// DXchange, NXtomo or SinogramHdf5, from the datasets the file holds.
/// Throws FormatError naming the file and the layouts looked for.
DatasetFormat detectHdf5Layout(const std::filesystem::path& path);
std::unique_ptr<DatasetReader> openDXchange(const std::filesystem::path& path, const OpenOptions& options);
std::unique_ptr<DatasetReader> openNXtomo(const std::filesystem::path& path, const OpenOptions& options);
std::unique_ptr<DatasetReader> openSinogramHdf5(const std::filesystem::path& path, const OpenOptions& options);
#endif

#if TOMO_WITH_TIFF
std::unique_ptr<DatasetReader> openTiffDirectory(const std::filesystem::path& path, const OpenOptions& options);
std::unique_ptr<DatasetReader> openMultiPageTiff(const std::filesystem::path& path, const OpenOptions& options);
#endif

/// The angles (radians) of a dataset with info.projections projections:
/// options.anglesFile when given (the entries options.anglesLines selects,
/// or those findProjectionAngles finds when the file holds more angles than
/// projections; recorded in info.anglesFile / anglesLines), else `stored`
/// (already in radians) when not empty, else uniform over
/// options.angleRangeDegrees. `storedSource` names where `stored` came from,
/// for the count-mismatch message. Throws FormatError when a count differs
/// from info.projections or an angle is not finite, InvalidArgument for
/// anglesLines without an angles file.
std::vector<double> resolveAngles(DatasetInfo& info, const std::vector<double>& stored,
                                  const std::string& storedSource, const OpenOptions& options);

/// Throws InvalidArgument naming info.path when [firstRow, firstRow +
/// rowCount) is not inside the detector or `outSize` is not
/// rowCount * valuesPerRow.
void checkRowRequest(const DatasetInfo& info, int firstRow, int rowCount, std::size_t outSize,
                     std::size_t valuesPerRow);

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

/// Averages `imageCount` images of `pixels` values ([image][pixel]) into out.
void meanOfImages(std::span<const float> images, int imageCount, std::span<float> out);

} // namespace tomo::detail
