// Reconstructing a range of rows of a dataset into a volume, chunk by chunk,
// with bounded memory: read -> flat/dark + log -> plan (filter, back-project)
// -> writer.
#pragma once

#include "tomo/backend.h"
#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/preprocess.h"
#include "tomo/progress.h"
#include "tomo/volume_io.h"

#include <cstddef>
#include <string>

namespace tomo {

struct VolumeJob {
    int firstRow = 0;
    int rowCount = 0;       ///< 0 = to the last row
    /// Geometry of one row (angles come from the dataset when empty); the
    /// region / grid are those of every slice.
    ReconGeometry geometry;
    ReconOptions options;
    /// Rows read and reconstructed per chunk (0 = chosen from maxSlices()
    /// and a budget of about 1 GiB for the sinogram and slice buffers and
    /// the plan's working copies of a batch, whatever the region).
    int chunkRows = 0;
    /// Largest share (0..1) of a chunk's values that may have no positive
    /// transmission (raw <= dark, flat <= dark) and be clamped: beyond it the
    /// data are broken (flats all zero or equal to the darks, a missing
    /// source) and the run stops with TooManyClampedValues before anything
    /// is committed. 1 accepts everything.
    double maxClampedFraction = 0.01;
};

/// More than VolumeJob::maxClampedFraction of a chunk's values were clamped.
class TooManyClampedValues : public DataError {
public:
    using DataError::DataError;
};

struct VolumeReport {
    std::string strategy;        ///< resolved strategy name
    int slices = 0;
    PreprocessStats preprocess;
    double secondsRead = 0.0;
    double secondsPreprocess = 0.0;
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
/// no partial file remains). Throws as the reader, plan and writer do,
/// InvalidArgument for a maxClampedFraction outside [0, 1], and
/// TooManyClampedValues (naming the file and rows) when a chunk has too many
/// clamped values.
VolumeReport reconstructVolume(DatasetReader& reader, const VolumeJob& job, VolumeWriter& writer,
                               const ProgressCallback& progress = {});

} // namespace tomo
