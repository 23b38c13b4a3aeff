// Coarser samples of a dataset, for the views that show a whole volume at
// their own resolution instead of the detector's: the 3D view's sub-volume
// (Controller::reconstructSubVolume) and Live mode's coarse volume
// (work/live_volume.h). The data are binned before the corrections, which
// then run on the binned counts and flats as on a smaller detector.
#pragma once

#include "work/recon_types.h"

#include "tomo/dataset.h"

#include <memory>
#include <span>
#include <vector>

namespace tomo::ui {

/// Means of each run of `k` consecutive values (the last run may be shorter).
std::vector<double> runMeans(const std::vector<double>& values, int k);

/// A dataset seen through coarser samples: detector pixels `b` columns
/// wide and `r` rows tall (the mean of each b x r block; the last columns
/// and rows that make no full run are left out) and projections the mean of
/// each run of `k` consecutive ones (at their mean angle; the last run may be
/// shorter). Reads the source only when it is read (no copy is kept).
class BinnedReader final : public tomo::DatasetReader {
public:
    BinnedReader(std::shared_ptr<tomo::DatasetReader> source, int b, int k, int r = 1);

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override;
    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override;
    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override;
    void readFlatGroup(int group, int firstRow, int rowCount, std::span<float> out) override;

private:
    /// Adds the means of `line`'s runs of b columns, times `scale`, to `out`.
    void binColumns(const float* line, float* out, float scale) const;
    /// An image of the source's rows behind [firstRow, firstRow + rowCount), binned.
    template <typename Read>
    bool readImage(int rowCount, std::span<float> out, Read&& read);

    std::shared_ptr<tomo::DatasetReader> m_source;
    int m_b, m_k, m_r;
    std::vector<float> m_buffer;
};

/// `p` for the dataset of BinnedReader(b, k) (rows not binned): axis, tilt,
/// offsets (one per run of projections), region and the correction's column
/// ranges in binned columns.
SliceParams binnedParams(SliceParams p, int b, int k);

} // namespace tomo::ui
