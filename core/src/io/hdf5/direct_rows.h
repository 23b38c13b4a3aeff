// Internal: reading rows of an HDF5 dataset without the library. Detector
// files store frames [frame][row][column], contiguous or one frame per
// chunk, uncompressed or deflated. Uncompressed rows are plain bytes at
// known file offsets, which pread copies in parallel and without HDF5's
// lock (the library is neither thread-safe nor fast at strided
// selections); deflated chunks are read the same way and inflated with
// zlib on several threads (HDF5 would inflate them one at a time under its
// lock).
#pragma once

#include "io/hdf5/h5_util.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace tomo {
class WorkerPool;
}

namespace tomo::h5 {

/// pread of exactly `bytes` at `offset` of `fd`. Throws IoError starting
/// with `what` (the file) and saying why when the system refuses or the
/// file ends first.
void readAt(int fd, void* destination, std::size_t bytes, std::uint64_t offset, const std::string& what);

class DirectRows {
public:
    /// Where the bytes of some rows of one frame lie in the file.
    struct Piece {
        std::uint64_t offset = 0;
        std::size_t bytes = 0;
    };

    /// Nothing when the rows are not plain bytes in the file: filters
    /// (compression), a byte order or type other than this machine's for
    /// the pixel type, chunks that split a row, external or virtual storage.
    static std::optional<DirectRows> of(hid_t file, const Array& array);

    /// The pieces of rows [firstRow, firstRow + count) of `frame`, in row
    /// order, appended to `out` (one per chunk they cross). False when a
    /// chunk has no storage yet (HDF5 would return fill values); calls HDF5:
    /// hold the library lock.
    bool pieces(hsize_t frame, hsize_t firstRow, hsize_t count, std::vector<Piece>& out);

private:
    DirectRows() = default;

    hid_t m_dataset = -1;
    std::uint64_t m_base = 0;      ///< what makes a chunk address a file offset (chunkAddressBase)
    std::size_t m_rowBytes = 0;
    hsize_t m_rows = 0;
    bool m_chunked = false;
    std::uint64_t m_address = 0;   ///< contiguous: the data's file offset
    hsize_t m_chunkFrames = 1, m_chunkRows = 1; ///< chunked: chunk shape (whole rows)
    std::unordered_map<std::uint64_t, std::uint64_t> m_chunkAddress; ///< chunk index -> address
};

/// Rows of frames compressed with deflate alone (H5Pset_deflate: what
/// detector writers and h5py's compression="gzip" produce), chunked
/// [1][chunk rows][columns]. Each chunk keeps its zlib stream where the last
/// read stopped, so a frame read band after band (the conveyor's order) is
/// inflated once in all, and a band inflates no further than its last row.
/// zlib verifies a chunk's checksum when its last row is read (the last
/// band of a pass); rows read before then are delivered unverified, where
/// HDF5 would have inflated and checked the whole chunk first.
/// The streams kept are bounded (kMaxKeptStreams, about 40 KiB each); a
/// dataset of more chunks inflates each read from the chunk's start.
class DeflatedRows {
public:
    /// Nothing unless the dataset is 3D, chunked as above, and its only
    /// filter is deflate, on samples stored in this machine's byte order.
    static std::optional<DeflatedRows> of(hid_t file, const Array& array);
    DeflatedRows(DeflatedRows&&) noexcept;
    DeflatedRows& operator=(DeflatedRows&&) noexcept;
    ~DeflatedRows();

    /// Finds the chunks that hold rows [firstRow, firstRow + count) of
    /// `frames`. False when one has no storage yet (HDF5 would return fill
    /// values); calls HDF5: hold the library lock.
    bool locate(std::span<const hsize_t> frames, hsize_t firstRow, hsize_t count);

    /// Those rows of each of `frames` (located first), frame after frame,
    /// [row][column] of stored samples, into `out`: chunks read from `fd`
    /// (the dataset's file) and inflated on `pool`'s threads; no HDF5 call.
    /// Throws FormatError naming the dataset, the frame and the chunk's file
    /// offset when a chunk does not inflate to its rows (corrupt), IoError
    /// when reading fails.
    void read(int fd, std::span<const hsize_t> frames, hsize_t firstRow, hsize_t count, std::span<std::byte> out,
              WorkerPool& pool);

    /// Chunks beyond which streams are no longer kept between reads.
    static constexpr std::size_t kMaxKeptStreams = 4096;

private:
    struct Stream;
    struct Chunk {
        std::uint64_t address = 0; ///< file offset of its bytes
        std::uint64_t size = 0;    ///< stored (compressed) bytes
        bool located = false;
        bool stored = false;       ///< deflate was skipped for it (optional filter): plain bytes
        std::unique_ptr<Stream> stream;
    };
    DeflatedRows() = default;
    /// Rows [first, end) of `chunk` (counted inside it) into `out`;
    /// `toTheEnd`: they are its last rows, and the rest of its stream is
    /// checked.
    void inflateRows(int fd, Chunk& chunk, hsize_t frame, hsize_t first, hsize_t end, bool toTheEnd, std::byte* out,
                     std::vector<std::byte>& input, std::vector<std::byte>& scratch);

    hid_t m_dataset = -1;
    std::string m_where;           ///< "/exchange/data in FILE"
    std::uint64_t m_base = 0;      ///< what makes a chunk address a file offset (chunkAddressBase)
    std::size_t m_rowBytes = 0;
    hsize_t m_rows = 0, m_chunkRows = 1, m_chunksPerFrame = 1;
    bool m_keepStreams = true;
    std::unordered_map<std::uint64_t, Chunk> m_chunks; ///< frame * m_chunksPerFrame + chunk of the frame
};

} // namespace tomo::h5
