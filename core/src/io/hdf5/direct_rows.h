// Internal: reading rows of an HDF5 dataset without the library. Detector
// files store frames [frame][row][column] uncompressed, contiguous or one
// frame per chunk; their rows are then plain bytes at known file offsets,
// which pread copies in parallel and without HDF5's lock (the library is
// neither thread-safe nor fast at strided selections).
#pragma once

#include "io/hdf5/h5_util.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <unordered_map>
#include <vector>

namespace tomo::h5 {

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
    std::uint64_t m_base = 0;      ///< file offset of HDF5 address 0 (the user block's size)
    std::size_t m_rowBytes = 0;
    hsize_t m_rows = 0;
    bool m_chunked = false;
    std::uint64_t m_address = 0;   ///< contiguous: the data's address
    hsize_t m_chunkFrames = 1, m_chunkRows = 1; ///< chunked: chunk shape (whole rows)
    std::unordered_map<std::uint64_t, std::uint64_t> m_chunkAddress; ///< chunk index -> address
};

} // namespace tomo::h5
