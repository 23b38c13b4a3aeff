// Launchers of the stripe-removal kernels (stripe_kernels.cu): the device
// steps of tomo's sorting, large and dead stripe methods (stripes.cpp in
// core) over a batch of `count` sinograms of projections x columns, one
// after another. Sorted data are column-major: segment s = b * columns + c
// holds column c of sinogram b, its projections in rank order.
#pragma once

#include "kernel_launch.h"

#include <cstddef>
#include <cstdint>

namespace tomo::cuda {

struct SinogramBatch {
    int count = 0;
    int projections = 0;
    int columns = 0;
    std::size_t values() const {
        return static_cast<std::size_t>(count) * static_cast<std::size_t>(projections) *
               static_cast<std::size_t>(columns);
    }
};

/// keys[s][a] = a key of value a of column s that orders as the value (the
/// CPU's sortKey without the index), index[s][a] = a.
void launchColumnSortKeys(const float* d_sinograms, SinogramBatch batch, std::uint32_t* d_keys, int* d_index,
                          StreamHandle stream);

/// Scratch bytes of sortColumns for a batch.
std::size_t columnSortScratchBytes(SinogramBatch batch);

/// Stable sort of every column segment by key (ties keep projection order).
void sortColumns(const std::uint32_t* d_keysIn, std::uint32_t* d_keysOut, const int* d_indexIn, int* d_indexOut,
                 SinogramBatch batch, void* d_scratch, std::size_t scratchBytes, StreamHandle stream);

/// smoothed[s][r] = median of the sorted values of rank r over columns
/// c - w/2 ... c + w/2 of the same sinogram, reflected (the CPU's
/// slidingMedianReflect), window odd.
void launchMedianAcrossColumns(const std::uint32_t* d_sortedKeys, SinogramBatch batch, int window, float* d_smoothed,
                               StreamHandle stream);

/// ratio[b * columns + c] = sum of sorted / sum of smoothed over ranks
/// [drop, projections - drop) (double sums; 1 where the latter is 0).
void launchLargeStripeRatios(const std::uint32_t* d_sortedKeys, const float* d_smoothed, SinogramBatch batch,
                             int drop, float* d_ratios, StreamHandle stream);

/// Every value divided by its column's ratio.
void launchDivideColumns(float* d_sinograms, const float* d_ratios, SinogramBatch batch, StreamHandle stream);

/// For the segments with take[s] != 0 (all for nullptr): each smoothed value
/// written back to the projection its rank came from.
void launchSortBack(const float* d_smoothed, const int* d_sortedIndex, const std::uint8_t* d_take,
                    float* d_sinograms, SinogramBatch batch, StreamHandle stream);

/// diff[b * columns + c] = sum over a of |value - mean of a-5 ... a+4|
/// (reflected), in double, in the CPU's order; diffKeys = their sort keys
/// (for launchMedianAcrossColumns with one projection).
void launchDeadStripeDiffs(const float* d_sinograms, SinogramBatch batch, float* d_diffs, std::uint32_t* d_diffKeys,
                           StreamHandle stream);

/// Where a column is replaced by interpolation: its nearest unmarked columns
/// (left -1 = none, right = columns = none); left = kColumnKept leaves it.
struct ColumnNeighbours {
    int left;
    int right;
};
inline constexpr int kColumnKept = -2;

/// interpolateMasked's arithmetic on every row, per the table of
/// neighbours (batch.count x columns entries).
void launchInterpolateColumns(float* d_sinograms, const ColumnNeighbours* d_neighbours, SinogramBatch batch,
                              StreamHandle stream);

} // namespace tomo::cuda
