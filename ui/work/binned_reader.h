// A dataset seen through coarser samples, for the 3D view's sub-volume:
// reconstructed at the view's resolution (binned detector columns, a grid
// as coarse, the angles that grid needs), not at the detector's and
// shrunk after (issue 30, item 5).
#pragma once

#include "work/recon_types.h"

#include "tomo/dataset.h"

#include <memory>
#include <vector>

namespace tomo::ui {

/// Consecutive projections the 3D view may average for a grid `width`
/// voxels wide: as many as leave at least 90 % of the angles the grid needs
/// (pi/2 per voxel across and per 180 degrees covered, the outer voxels'
/// angular Nyquist rate); 1 when the angles are not in order (neighbours
/// in the file would not be neighbours in angle).
int projectionRun(const std::vector<double>& angles, int width);

/// `source` through detector pixels `b` columns wide (the mean of each run
/// of b columns; the last columns that make no full run are left out) and
/// projections the mean of each run of `k` consecutive ones (at their mean
/// angle; the last run may be shorter).
std::shared_ptr<tomo::DatasetReader> binnedDataset(std::shared_ptr<tomo::DatasetReader> source, int b, int k);

/// `p` for the dataset of binnedDataset(b, k): axis, tilt, offsets (one
/// per run of projections), region and the correction's column ranges in
/// binned columns.
SliceParams binnedParams(SliceParams p, int b, int k);

} // namespace tomo::ui
