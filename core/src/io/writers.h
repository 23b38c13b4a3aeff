// Internal: what the volume writers (and the phantom scan writer) share, the
// per-format writer factories behind createVolumeWriter(), and readVolume()
// per format. StagedOutput, SliceTracker and ParallelEncoder are defined in
// volume_io.cpp.
#pragma once

#include "io/sample_encoding.h"
#include "tomo/image.h"
#include "tomo/volume_io.h"
#include "tomo/worker_pool.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tomo::detail {

/// An output written under a temporary name in the target's directory and
/// moved onto the target by commit(), so a reader never sees a partial file.
/// Destroyed without commit() (error, cancel), it deletes the temporary,
/// whether the writer made a file or a directory there - unless it is
/// Resumable: then the temporary has a fixed name, ".NAME.tomo-partial",
/// that a later run finds again (SharedVolume), and is kept.
class StagedOutput {
public:
    enum class Staging { Temporary, Resumable };

    /// Throws IoError naming the target if anything is there (a symbolic
    /// link to nothing included) and !overwrite, if it is a directory holding
    /// anything but slice_*.tif files (never deleted, even with overwrite),
    /// if its parent is not an existing directory, or if its name is longer
    /// than the file system takes. Creates nothing: the writer creates
    /// temporary(), whose name is shortened to fit when the target's is long.
    StagedOutput(std::filesystem::path target, bool overwrite, Staging staging = Staging::Temporary);
    ~StagedOutput();
    StagedOutput(const StagedOutput&) = delete;
    StagedOutput& operator=(const StagedOutput&) = delete;

    const std::filesystem::path& target() const { return m_target; }
    const std::filesystem::path& temporary() const { return m_temporary; }

    /// Moves the temporary onto the target, replacing an existing target
    /// only with overwrite. Throws IoError naming both.
    void commit();

private:
    std::filesystem::path m_target;
    std::filesystem::path m_temporary;
    bool m_overwrite = false;
    bool m_committed = false;
    bool m_keep = false; ///< Resumable: never deleted here
    int m_slot = -1; ///< where removeUncommittedOutputs() finds the temporary
};

/// What a volume takes on disk: `files` files of `bytesPerFile` each (a
/// TIFF folder: one per slice), samples and the format's own bytes
/// (headers, the parameters, chunk index, per-page descriptions). Outputs
/// are not compressed, so their size is known before anything is written.
struct VolumeFootprint {
    double files = 1.0;
    double bytesPerFile = 0.0;
};

/// Throws IoError naming the target when its file system has less room
/// than `footprint` (each file rounded up to the file system's blocks): a
/// full disk is found before hours of computing, not after.
void requireFreeSpace(const std::filesystem::path& target, const VolumeFootprint& footprint);

/// Checks writeSlices() arguments against the volume's size and remembers
/// which slices were written, so commit() refuses an incomplete volume.
class SliceTracker {
public:
    SliceTracker(std::filesystem::path target, int width, int height, int slices);

    int width() const { return m_width; }
    int height() const { return m_height; }
    int slices() const { return static_cast<int>(m_written.size()); }
    std::size_t sliceSize() const { return static_cast<std::size_t>(m_width) * static_cast<std::size_t>(m_height); }

    /// Throws InvalidArgument for slices outside the volume or a span that
    /// does not hold count * width * height values.
    void check(int first, int count, std::size_t values) const;
    void markWritten(int first, int count);
    /// Throws IoError naming the target and the first slice never written.
    void requireComplete() const;

private:
    std::filesystem::path m_target;
    int m_width = 0;
    int m_height = 0;
    std::vector<bool> m_written;
};

/// A writer's conversion of slices to its output type on its threads, with
/// the running count of what was clipped. One thread at a time may call in
/// (the writer's writeSlices).
class ParallelEncoder {
public:
    /// options.type must be resolved (createVolumeWriter does it). Throws
    /// InvalidArgument for a bad range; OutOfMemory when threads cannot start.
    explicit ParallelEncoder(const WriteOptions& options);

    const SampleEncoder& encoder() const { return m_encoder; }
    std::size_t sampleBytes() const { return m_encoder.sampleBytes(); }
    int threads() const { return m_pool.threads(); }

    /// Encodes `values` into `out` (values.size() * sampleBytes() bytes),
    /// in pieces spread over the threads.
    void encode(std::span<const float> values, std::byte* out);
    /// Runs task(index, thread) for every index in [0, count) on the
    /// threads; rethrows the first exception (no further index starts).
    void forEach(int count, const std::function<void(int index, int thread)>& task);
    /// Inside forEach: encodes `values` into the thread's own buffer (valid
    /// until the thread's next call).
    std::span<std::byte> encodeOnThread(int thread, std::span<const float> values);
    /// Inside forEach: encodes `values` into `out` (values.size() *
    /// sampleBytes() bytes), counted as the thread's.
    void encodeOnThread(int thread, std::span<const float> values, std::byte* out);
    /// How many slices of `sliceValues` values to encode into one buffer:
    /// at most 64 MiB of samples (at least one slice), so a writer's memory
    /// stays small beside the conveyor's chunks of hundreds of slices.
    int slicesPerBuffer(std::size_t sliceValues) const;

    ClippedValues clipped() const;

private:
    SampleEncoder m_encoder;
    WorkerPool m_pool;
    std::vector<ClippedValues> m_counts;           ///< per thread
    std::vector<std::vector<std::byte>> m_scratch; ///< per thread
};

/// The threads of WriteOptions::threads (0 = the hardware's, at most 16).
int writerThreads(const WriteOptions& options);

/// A writer of any slices of a volume whose file (or folder) another
/// process made (SharedVolume): no completeness check, nothing renamed;
/// commit() flushes (with `sync`, to the storage: other hosts read it).
#if TOMO_WITH_HDF5
/// Where the chunks of each slice of an HDF5 volume file are.
struct Hdf5Chunks {
    std::uint64_t fileBytes = 0;
    std::uint64_t bandRows = 0;      ///< rows per chunk (a slice over 4 GiB is split in bands)
    std::uint64_t bandsPerSlice = 1;
    std::vector<std::uint64_t> addresses; ///< [slice][band], file offsets
};
/// Creates `temporary`, an HDF5 file with /volume and every chunk allocated
/// (the attributes of `options` on it), for the target named `target`.
Hdf5Chunks createHdf5VolumeFile(const std::filesystem::path& temporary, const std::string& target, int width,
                                int height, int slices, const WriteOptions& options);
/// The chunks of a file createHdf5VolumeFile made; throws FormatError
/// naming `target` when it is not such a file of this shape and type.
Hdf5Chunks findHdf5VolumeChunks(const std::filesystem::path& temporary, const std::string& target, int width,
                                int height, int slices, OutputType type);
/// `sameHost`: every writer of the file runs on this host (it is mapped:
/// one page cache); otherwise ranges are written with pwrite, so that no
/// page another host writes is written back from here.
std::unique_ptr<VolumeWriter> openHdf5VolumePart(const std::filesystem::path& temporary, const std::string& target,
                                                 int width, int height, int slices, const Hdf5Chunks& chunks,
                                                 const WriteOptions& options, bool sameHost);
#endif
#if TOMO_WITH_TIFF
/// Slice files written into the existing folder `folder`.
std::unique_ptr<VolumeWriter> openTiffFolderPart(const std::filesystem::path& folder, const std::string& target,
                                                 int width, int height, int slices, const WriteOptions& options);
#endif

// The factories take options whose range createVolumeWriter has checked.
#if TOMO_WITH_HDF5
VolumeFootprint hdf5Footprint(int width, int height, int slices, const WriteOptions& options);
std::unique_ptr<VolumeWriter> createHdf5VolumeWriter(const std::filesystem::path& target, int width, int height,
                                                     int slices, const WriteOptions& options);
ImageStack readHdf5Volume(const std::filesystem::path& path, std::size_t maxBytes);
#endif

#if TOMO_WITH_TIFF
/// One file per slice (`folder`) or one multi-page file.
VolumeFootprint tiffFootprint(int width, int height, int slices, const WriteOptions& options, bool folder);
/// A directory of slice_00000.tif, ... (one image per slice).
std::unique_ptr<VolumeWriter> createTiffDirectoryWriter(const std::filesystem::path& target, int width, int height,
                                                        int slices, const WriteOptions& options);
/// One multi-page TIFF file, one page per slice.
std::unique_ptr<VolumeWriter> createMultiPageTiffWriter(const std::filesystem::path& target, int width, int height,
                                                        int slices, const WriteOptions& options);
/// A multi-page TIFF file or a directory of numbered TIFFs.
ImageStack readTiffVolume(const std::filesystem::path& path, std::size_t maxBytes);
#endif

} // namespace tomo::detail
