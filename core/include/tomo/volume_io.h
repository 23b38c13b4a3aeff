// Writing reconstructed volumes (HDF5, TIFF stack) and reading them back.
//
// Writers never leave a partial file where the user asked for one: they
// write to a temporary name next to the target and rename on commit();
// destroying an uncommitted writer (error, cancel) deletes the temporary.
#pragma once

#include "tomo/image.h"

#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>

namespace tomo {

enum class VolumeFormat {
    Hdf5,      ///< one file, dataset /volume float32 [slice][row][col], chunked
    TiffStack, ///< a directory of slice_00000.tif ... (one file per slice), or one multi-page .tif
};

struct WriteOptions {
    /// Replace an existing output; without it an existing target is an error.
    bool overwrite = false;
    /// TIFF only: 32 = float32, 16 = uint16, 8 = uint8 mapped from
    /// [rangeMin, rangeMax] (values outside are clipped).
    int tiffBits = 32;
    float rangeMin = 0.0f;
    float rangeMax = 1.0f;
    /// Stored as attributes (HDF5) / ImageDescription (TIFF): the parameters
    /// of the reconstruction, so a result says how it was made.
    std::map<std::string, std::string> attributes;
};

/// Picks the format from the target: ".h5"/".hdf5"/".hdf"/".nxs" -> Hdf5,
/// ".tif"/".tiff" or a directory path (ending in '/' or no extension) ->
/// TiffStack. Throws InvalidArgument for other extensions.
VolumeFormat volumeFormatFor(const std::filesystem::path& target);

class VolumeWriter {
public:
    virtual ~VolumeWriter() = default;
    /// Writes `count` slices starting at slice `first` (width * height each).
    /// Throws IoError naming the file.
    virtual void writeSlices(int first, int count, std::span<const float> data) = 0;
    /// Flushes and renames the temporary to the target. Throws IoError.
    virtual void commit() = 0;
};

/// Throws IoError if anything is at the target (a dangling symbolic link
/// included) and !options.overwrite, the directory cannot be written, or its
/// file system has not the room for the whole volume; InvalidArgument for
/// bad sizes or range.
std::unique_ptr<VolumeWriter> createVolumeWriter(const std::filesystem::path& target, int width,
                                                 int height, int slices, const WriteOptions& options);

/// For a signal handler that ends the process at once (a second Ctrl-C,
/// SIGTERM): deletes the hidden temporary of every writer of this process
/// that has not committed. Async-signal-safe; the process must not use
/// those writers afterwards.
void removeUncommittedOutputs() noexcept;

/// Reads a volume written by createVolumeWriter (or any HDF5 file with a 3D
/// or 2D float dataset "/volume", or a TIFF / directory of TIFFs).
/// Throws IoError (missing, not a regular file or directory) / FormatError
/// naming the file.
ImageStack readVolume(const std::filesystem::path& path);

} // namespace tomo
