// The live preview's reader: a file read a row at a time costs one small
// read per projection (per chunk of a dataset chunked by projection), about
// as much as reading several neighbouring rows at once. This wrapper reads a
// block of rows around the one asked for and serves the next row steps
// (PgUp/PgDn, a slider) from it. Not thread-safe: one PreviewSession's.
#pragma once

#include "run/forwarding_reader.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace tomo::preview {

class RowBlockReader final : public ForwardingReader {
public:
    /// Blocks of up to kBlockRows rows and kBlockBytes bytes (at least one row).
    static constexpr int kBlockRows = 8;
    static constexpr std::size_t kBlockBytes = std::size_t{64} << 20;

    explicit RowBlockReader(std::shared_ptr<DatasetReader> inner);

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override;
    void readRawRows(int firstRow, int rowCount, std::span<std::byte> out) override;

    /// Reads of the wrapped reader so far (for tests).
    int innerReads() const { return m_innerReads; }

private:
    /// A block of rows as one of the two read calls returns it.
    struct Block {
        int first = 0;
        int count = 0;
        std::vector<std::byte> bytes;
        bool holds(int firstRow, int rowCount) const {
            return !bytes.empty() && firstRow >= first && firstRow + rowCount <= first + count;
        }
    };
    /// Rows of a block of rows of `rowBytes` each.
    int blockRows(std::size_t rowBytes) const;
    /// A request inside the data and smaller than a block: served from blocks.
    bool cacheable(int firstRow, int rowCount, std::size_t rowBytes) const;
    /// The rows [first, first + count) a block around [firstRow, firstRow + rowCount) covers.
    std::pair<int, int> blockAround(int firstRow, int rowCount, std::size_t rowBytes) const;

    Block m_sinograms; // float32 rows, sinogram order
    Block m_raw;       // stored samples, projection order
    int m_innerReads = 0;
};

} // namespace tomo::preview
