// An output volume written by several processes (the ranks of an MPI run)
// and, after a failure, finished by a later run (--resume):
//
//   rank 0:     SharedVolume::create(target, ...)   makes the hidden temporary
//               ".NAME.tomo-partial" beside the target (or, resuming, finds it
//               again) and its record ".NAME.tomo-partial.done" of the slices
//               written; layout() describes it for the other ranks
//   each rank:  SharedVolume::fromLayout(text).writer(...) writes any slices
//               into the temporary (its commit() only flushes)
//   rank 0:     record(span, rank) as the ranks report slices written;
//               commit() once every slice is recorded: renames the temporary
//               to the target and deletes the record
//
// Nothing is deleted on a failure or a cancel once a slice is recorded: the
// temporary and the record stay for --resume, which redoes only the slices
// not recorded (a new output without any is deleted with rank 0's object). Nothing
// partial is ever renamed to the target. Formats: an HDF5 file (each
// slice's chunk at the address rank 0 found: the ranks write their own
// chunks) and a TIFF folder (one file per slice). A multi-page TIFF is
// refused: one process appends its pages in order.
#pragma once

#include "tomo/volume_io.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace tomo {

class SharedVolume {
public:
    /// Rank 0: the output `target` of width x height x slices stored as
    /// `options` say (type, range, attributes). Without `resume`, a partial
    /// output of an earlier run there is an IoError (naming it and how many
    /// slices it holds: add --resume, or --overwrite to start again), unless
    /// options.overwrite (then it is replaced). With `resume`, one is
    /// continued when its record says it was made for the same volume and
    /// the same parameters (the attributes but the command line; otherwise
    /// InvalidArgument naming the first that differs); with none there, a
    /// new one is made (resumed() is false). Throws InvalidArgument for a
    /// multi-page TIFF target and as createVolumeWriter (target exists
    /// without overwrite, no room, bad range).
    static SharedVolume create(const std::filesystem::path& target, int width, int height, int slices,
                               const WriteOptions& options, bool resume);
    /// Another rank's view of rank 0's output (layout()); record() and
    /// commit() belong to rank 0. Throws FormatError for a text that is not
    /// a layout.
    static SharedVolume fromLayout(const std::string& layout);

    SharedVolume(SharedVolume&&) noexcept;
    SharedVolume& operator=(SharedVolume&&) noexcept;
    ~SharedVolume();

    /// Everything another rank needs to write into the output (JSON).
    std::string layout() const;
    const std::filesystem::path& target() const;
    const std::filesystem::path& temporary() const;
    /// The record of the slices written, beside the temporary.
    std::filesystem::path record() const;
    int slices() const;
    /// True when create() continued an earlier run's output.
    bool resumed() const;

    /// The slices not recorded as written yet, in order (as of create()
    /// and the record() calls since).
    std::vector<SliceSpan> missing() const;
    int slicesWritten() const;

    /// A writer of any of the volume's slices into the temporary, converting
    /// as `options` say (their type and range must be the output's; threads
    /// are this process's). `sameHost`: every rank runs on this host (the
    /// HDF5 file is then written through a shared mapping; across hosts
    /// with pwrite, and commit() syncs the bytes to the storage).
    std::unique_ptr<VolumeWriter> writer(const WriteOptions& options, bool sameHost) const;

    /// Rank 0: notes that `span` is written (by `rank`) in the record,
    /// durably (fdatasync). Throws IoError naming the record.
    void record(const SliceSpan& span, int rank);
    /// Rank 0: renames the temporary to the target and deletes the record.
    /// Throws IoError naming the first slice not recorded, or the rename's
    /// failure.
    void commit();

private:
    struct Impl;
    explicit SharedVolume(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace tomo
