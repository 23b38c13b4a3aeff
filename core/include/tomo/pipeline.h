// Reconstructing a range of rows of a dataset into a volume, chunk by chunk,
// with bounded memory: read -> corrections (PreprocessingStage: flat/dark,
// ..., -log, ...) -> plan (filter, back-project) -> writer.
#pragma once

#include "tomo/backend.h"
#include "tomo/corrections.h"
#include "tomo/dataset.h"
#include "tomo/preprocess.h"
#include "tomo/progress.h"
#include "tomo/volume_io.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tomo {

struct VolumeJob {
    int firstRow = 0;
    int rowCount = 0;       ///< 0 = to the last row
    /// Geometry of one row (angles and bins come from the corrected
    /// sinograms when empty / 0: the dataset's, or the stitched ones with
    /// 360° half acquisition); the region / grid are those of every slice.
    ReconGeometry geometry;
    ReconOptions options;
    CorrectionOptions corrections;
    /// Rows read and reconstructed per chunk (0 = chosen from maxSlices()
    /// and a budget of about 1 GiB for the sinogram and slice buffers,
    /// Paganin's margin rows included; the plan's own memory,
    /// ReconstructionPlan::memoryBytes(), comes on top).
    int chunkRows = 0;
};

struct VolumeReport {
    std::string strategy;        ///< resolved strategy name
    int slices = 0;
    PreprocessStats preprocess;
    /// The stage's warnings (e.g. raw counts without flats).
    std::vector<std::string> warnings;
    double secondsRead = 0.0;       ///< reading raw values (PreprocessingStage::read)
    double secondsPreprocess = 0.0; ///< the corrections (PreprocessingStage::correct)
    double secondsReconstruct = 0.0;
    double secondsWrite = 0.0;
    double secondsTotal = 0.0;
    /// giga-updates per second of the reconstruct stage
    /// (region pixels x slices x projections / seconds / 1e9).
    double gups = 0.0;
};

/// Runs the job, writing slice i of the range as slice i of `writer`, and
/// commits the writer at the end. `progress` is called after every chunk;
/// a Cancelled thrown from it propagates (the caller drops the writer, so
/// no partial file remains). Throws as the reader, plan and writer do.
VolumeReport reconstructVolume(DatasetReader& reader, const VolumeJob& job, VolumeWriter& writer,
                               const ProgressCallback& progress = {});

} // namespace tomo
