// Writing reconstructed volumes (HDF5, TIFF stack) and reading them back.
//
// Writers never leave a partial file where the user asked for one: they
// write to a temporary name next to the target and rename on commit();
// destroying an uncommitted writer (error, cancel) deletes the temporary.
#pragma once

#include "tomo/image.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>

namespace tomo {

enum class VolumeFormat {
    Hdf5,      ///< one file, dataset /volume [slice][row][col], one slice per chunk
    TiffStack, ///< a directory of slice_00000.tif ... (one file per slice), or one multi-page .tif
};

/// How the values are stored (both formats take every type).
enum class OutputType {
    Float32, ///< the values as computed
    Float16, ///< IEEE half: 11 significant bits (relative error <= 2^-11 from 6.1e-5 up), |values| up to 65504
    UInt16,  ///< value = stored x slope + offset over a range (see Quantization)
    UInt8,   ///< the same with 256 levels
};

/// "float32", "float16", "uint16", "uint8".
const char* outputTypeName(OutputType type);
/// The type of that name; throws InvalidArgument naming `what` (an option
/// or field) and the names expected.
OutputType parseOutputType(const std::string& name, const std::string& what);
/// Bytes of one stored value.
std::size_t outputTypeBytes(OutputType type);
/// Whether the type stores integers over a range (uint16, uint8).
bool isQuantized(OutputType type);

/// How a quantised output's integers map back to values:
/// value = stored x slope + offset, the CF conventions' scale_factor and
/// add_offset (float32 like the values, so readers unpack to float32).
struct Quantization {
    float slope = 1.0f;
    float offset = 0.0f;
};

/// [rangeMin, rangeMax] over 0..65535 (uint16) or 0..255 (uint8): offset
/// rangeMin, slope (rangeMax - rangeMin) / levels; for float types slope 1,
/// offset 0. Throws InvalidArgument for a quantised type unless both bounds
/// are finite, min < max, and the slope is a normal float.
Quantization quantizationFor(OutputType type, float rangeMin, float rangeMax);

/// Values a writer could not store as they are, over all its writeSlices.
struct ClippedValues {
    std::uint64_t below = 0; ///< uint: below the range, stored as 0; float16: below -65504, stored as -65504
    std::uint64_t above = 0; ///< uint: above the range, stored as the largest integer; float16: above 65504
    std::uint64_t nan = 0;   ///< uint only: NaN, stored as 0 (float types keep NaN)
    std::uint64_t total() const { return below + above + nan; }
};

struct WriteOptions {
    /// Replace an existing output; without it an existing target is an error.
    bool overwrite = false;
    OutputType type = OutputType::Float32;
    /// uint16/uint8: the values stored as 0 and as the largest integer;
    /// values outside are clipped, and counted when more than half a step
    /// (slope / 2) outside (see quantizationFor, VolumeWriter::clipped).
    float rangeMin = 0.0f;
    float rangeMax = 1.0f;
    /// Threads that convert values and (TIFF folders) write slice files
    /// in parallel; 0 = the hardware's threads, at most 16.
    int threads = 0;
    /// Stored as attributes (HDF5) / in the ImageDescription JSON (TIFF):
    /// the parameters of the reconstruction, so a result says how it was
    /// made. The writer adds output_type and, for integers, scale_factor and
    /// add_offset.
    std::map<std::string, std::string> attributes;
};

/// Slices [first, first + count) of a volume.
struct SliceSpan {
    int first = 0;
    int count = 0;
    bool operator==(const SliceSpan&) const = default;
};

/// Picks the format from the target: ".h5"/".hdf5"/".hdf"/".nxs" -> Hdf5,
/// ".tif"/".tiff" or a directory path (ending in '/' or no extension) ->
/// TiffStack. Throws InvalidArgument for other extensions.
VolumeFormat volumeFormatFor(const std::filesystem::path& target);

class VolumeWriter {
public:
    virtual ~VolumeWriter() = default;
    /// Writes `count` slices starting at slice `first` (width * height each),
    /// converted to the output type on the writer's threads (TIFF folders:
    /// one file per slice, several at once), in any order of `first` (see
    /// holdsEarlySlices). Not to be called from two threads at once. Throws IoError naming the file (the first failure
    /// when several threads fail, e.g. on a full disk).
    virtual void writeSlices(int first, int count, std::span<const float> data) = 0;
    /// Flushes and renames the temporary to the target. Throws IoError.
    virtual void commit() = 0;
    /// What the conversion to the output type clipped so far (nothing for
    /// writers that store floats as they are). Call it between writeSlices
    /// calls (e.g. after commit), not during one.
    virtual ClippedValues clipped() const { return {}; }
    /// True when slices that come before their turn are held in memory until
    /// the slices before them are written (a multi-page TIFF appends its
    /// pages in order); false when any order costs nothing (HDF5 writes each
    /// slice's chunk in place, a TIFF folder one file per slice).
    virtual bool holdsEarlySlices() const { return false; }
    /// A hint: slices [first, first + count) will come (their rows are being
    /// read and reconstructed), so the writer may prepare their place
    /// meanwhile (an MPI rank's writer of a shared HDF5 file reserves their
    /// chunks, as the writer of a whole file reserves ahead). Thread-safe,
    /// also during writeSlices; slices outside the volume are passed over.
    virtual void expect(int /*first*/, int /*count*/) {}
};

/// Throws IoError if anything is at the target (a dangling symbolic link
/// included) and !options.overwrite, the directory cannot be written, or its
/// file system has not the room for the whole volume; InvalidArgument for
/// bad sizes or a bad range of a quantised type.
std::unique_ptr<VolumeWriter> createVolumeWriter(const std::filesystem::path& target, int width,
                                                 int height, int slices, const WriteOptions& options);

/// For a signal handler that ends the process at once (a second Ctrl-C,
/// SIGTERM): deletes the hidden temporary of every writer of this process
/// that has not committed. Async-signal-safe; the process must not use
/// those writers afterwards.
void removeUncommittedOutputs() noexcept;

/// A hidden temporary of `target` that an earlier run left behind.
struct StaleTemporary {
    std::filesystem::path path;
    long process = 0; ///< the id of the process that wrote it
};
/// Deletes what runs that never finished (killed with SIGKILL, a crash of
/// the machine) left beside `target`: its hidden temporaries
/// ".NAME.tmp-HOST-PID-N" (and ".NAME.tmp-HOST-PID-N.old") written on this
/// machine (HOST) by a process PID that no longer runs. A temporary of a
/// process still running (a concurrent run writing the same target), or of
/// another machine sharing the file system, is left alone. Returns what was
/// deleted; throws IoError naming a temporary that cannot be deleted.
std::vector<StaleTemporary> removeStaleTemporaries(const std::filesystem::path& target);

/// Reads a volume written by createVolumeWriter (or any HDF5 file with a 3D
/// or 2D dataset "/volume" of uint8, uint16, float16, float32 or float64,
/// or a TIFF / directory of TIFFs), as the values: float16 widened,
/// integers times scale_factor plus add_offset when the file has them (HDF5
/// attributes; the TIFF ImageDescription JSON, or the range_min/range_max
/// lines of earlier versions).
/// The values take 4 bytes each; more than `maxBytes` (0: the machine's
/// physical memory) is refused with OutOfMemory before anything is read: a
/// small compressed file may declare gigabytes.
/// Throws IoError (missing, not a regular file or directory) / FormatError
/// naming the file.
ImageStack readVolume(const std::filesystem::path& path, std::size_t maxBytes = 0);

} // namespace tomo
