// Raw rows (tomo::RawRows) and their flat-field constants on their way to
// the device, a block of rows at a time, for the plans that correct raw rows
// there (correctsRawRows: the texture plans, gridrec). Per slot (two: one
// block travels while the previous one is corrected) one device buffer
//
//   [values: angles x rows x columns samples][dark][scale][dead]
//
// (the constants [row][column], float, float, byte), the layout the
// flat-field kernel (flat_field_kernels.h) reads. The rows of every angle go
// up in one strided DMA when the caller's block is page-locked (the batch
// conveyor's); otherwise host threads gather them into a pinned staging
// buffer first (made on first use: page-locking it cost the first pass
// 0.1 s). The kernel's counters (clamped, interpolated, the first NaN/inf)
// add up over the blocks of one call and are read back at its end.
#pragma once

#include "cuda_resources.h"
#include "flat_field_kernels.h"
#include "host_copy.h"

#include "tomo/preprocess.h"

#include <cstddef>

namespace tomo::cuda {

/// The checks of reconstructRaw: 1 to maxRows rows of projections x columns
/// in enough bytes, constants of the same rows. Throws InvalidArgument.
void requireRawRows(const RawRows& raw, const FlatFieldRows& field, int projections, int columns, int maxRows);

class RawRowsUpload {
public:
    static constexpr int kSlots = 2;

    /// Blocks of up to `blockRows` rows of `projections` x `columns`; no
    /// memory until start().
    RawRowsUpload(int device, int projections, int columns, int blockRows);

    /// Before the blocks of one call: the buffers for raw's sample size
    /// (grown once, then kept), the counters reset on `stream` (the stream
    /// of the correct() calls). Throws OutOfMemory.
    void start(const RawRows& raw, cudaStream_t stream);
    /// Rows [first, first + rows) of `raw` and `field` into `slot`: the host
    /// part on this thread (with `copier`), the DMA enqueued on `stream`.
    /// The caller makes sure the slot's last DMA has landed and its last
    /// block is no longer read. Returns the host seconds spent.
    double upload(int slot, const RawRows& raw, const FlatFieldRows& field, int first, int rows, HostCopier& copier,
                  cudaStream_t stream);
    /// The flat-field kernel of `slot`'s block (uploaded by `upload` with the
    /// same arguments) into d_out, rows x projections x columns floats.
    void correct(int slot, const RawRows& raw, const FlatFieldRows& field, int first, int rows, float* d_out,
                 cudaStream_t stream) const;
    /// After the last correct(), on its stream: the counters read back (the
    /// stream is synchronised) as statistics. Throws DataError naming the
    /// row, angle and column of a NaN/inf raw value.
    PreprocessStats finish(const RawRows& raw, cudaStream_t stream);

    std::size_t deviceBytes() const;

private:
    /// Byte offsets in a slot's buffer for `rows` rows of `sample`-byte values.
    struct Layout {
        std::size_t dark = 0, scale = 0, dead = 0, total = 0;
    };
    Layout layout(int rows, std::size_t sample) const;

    struct Slot {
        PinnedBuffer<unsigned char> h_rows;  ///< staging of pageable rows
        PinnedBuffer<unsigned char> h_field; ///< [dark][scale][dead]
        DeviceBuffer<unsigned char> d_raw;
    };

    int m_device = 0;
    int m_projections = 0;
    int m_columns = 0;
    int m_blockRows = 0;
    std::size_t m_sample = 0; ///< sample bytes the buffers are sized for
    Slot m_slots[kSlots];
    DeviceBuffer<unsigned long long> d_counters; ///< kCounterWords
    PinnedBuffer<unsigned long long> h_counters;
};

} // namespace tomo::cuda
