// Reconstructing a range of rows of a dataset into a volume with bounded
// memory, as a conveyor of stages on their own threads, each a bounded queue
// apart, so reading, preprocessing, reconstruction and writing overlap:
//
//   read (PreprocessingStage::read: stored values, flats, dark) ->
//   preprocess (PreprocessingStage::correct: flat/dark, ..., -log, ...; or
//   left to a plan that corrects raw rows on the GPU) -> reconstruct (plan:
//   filter, back-project) -> write
//
// Each stage's busy time is reported, so the slowest one (the bottleneck)
// has a name.
#pragma once

#include "tomo/backend.h"
#include "tomo/corrections.h"
#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/preprocess.h"
#include "tomo/progress.h"
#include "tomo/volume_io.h"

#include <cstddef>
#include <optional>
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
    /// A tilted axis: slice r gets axisLine->at(r) (detector row r) in place
    /// of geometry.geometry.axis; with a tilt, one slice per plan call, each
    /// after setAxis. Unset = the same axis for every slice.
    std::optional<AxisLine> axisLine;
    ReconOptions options;
    CorrectionOptions corrections;
    /// Rows read and reconstructed per chunk, the last one what is left (0 =
    /// as many as the memory budget allows, a whole number of plan batches,
    /// with smaller chunks at both ends: see run/chunk_schedule.h).
    int chunkRows = 0;
    /// Host memory the conveyor's chunk buffers may take, all chunks in
    /// flight together (0 = defaultMemoryBudget(), grown for chunks of twice
    /// the stage's row margin, up to a quarter of the memory). The plan's own memory
    /// (ReconstructionPlan::memoryBytes()) and the file libraries' caches
    /// come on top.
    std::size_t memoryBudget = 0;
    /// Largest share (0..1) of a chunk's values that may have no positive
    /// transmission (raw <= dark, flat <= dark) and be clamped: beyond it the
    /// data are broken (flats all zero or equal to the darks, a missing
    /// source) and the run stops with TooManyClampedValues before anything
    /// is committed. 1 accepts everything.
    double maxClampedFraction = 0.01;
    /// Run the corrections on the strategy's GPU when it has one
    /// (Backend::createCorrector); false = on the CPU threads.
    bool gpuCorrections = true;
};

/// More than VolumeJob::maxClampedFraction of a chunk's values were clamped.
class TooManyClampedValues : public DataError {
public:
    using DataError::DataError;
};

struct VolumeReport {
    std::string strategy;        ///< resolved strategy name
    /// Where the preprocessing ran: "cpu", the GPU corrector's device
    /// (ChunkCorrector::where), or the strategy when its plan corrected the
    /// stored values itself (flat field and log only).
    std::string correctedOn;
    /// With a GPU corrector: the busy seconds of each of its steps
    /// (ChunkCorrector::stepSeconds); empty otherwise.
    std::vector<std::pair<std::string, double>> preprocessSteps;
    int slices = 0;
    int chunkRows = 0;           ///< rows of the conveyor's largest chunks
    PreprocessStats preprocess;
    /// The stage's warnings (e.g. raw counts without flats).
    std::vector<std::string> warnings;
    /// Busy time of each stage (they overlap, so their sum exceeds the
    /// total): reading the file (PreprocessingStage::read), the corrections
    /// (PreprocessingStage::correct), the plan's reconstruct() calls,
    /// writing the slices.
    double secondsRead = 0.0;
    double secondsPreprocess = 0.0;
    double secondsReconstruct = 0.0;
    double secondsWrite = 0.0;
    double secondsTotal = 0.0;   ///< wall time of the whole job, commit included
    /// Of the total: before the stages start (the plan made, with the
    /// strategy's tuning on its first use; the corrections prepared;
    /// tomo-recon and tomo-bench add the output's creation).
    double secondsSetup = 0.0;
    /// Of the setup: making the plan.
    double secondsPlan = 0.0;
    /// From the stages' start until the reconstruct stage began its first
    /// chunk (the first read and preprocessing, overlapped by nothing).
    double secondsLeadIn = 0.0;
    /// From the reconstruct stage's last slice to the end (the last writes
    /// and the commit, overlapped by nothing).
    double secondsTail = 0.0;
    /// The plan's own split of the reconstruct stage, summed over the calls
    /// (GPU plans: upload, filter, back-projection, download busy times).
    StageTimes plan;
    /// Host memory of the conveyor's chunk buffers at their peak (the plan's
    /// own memory and the reader's library caches come on top).
    std::size_t peakBufferBytes = 0;
    /// The budget the chunks were sized by: VolumeJob::memoryBudget, or the
    /// default (grown for the stage's margin rows, see there).
    std::size_t memoryBudget = 0;
    /// giga-updates per second of the reconstruct stage
    /// (region pixels x slices x projections / secondsReconstruct / 1e9).
    double gups = 0.0;

    /// The stage with the largest busy time: "read", "preprocess",
    /// "reconstruct" or "write".
    std::string bottleneck() const;
};

/// A sixteenth of the machine's physical memory, at least 1 GiB and at most
/// 4 GiB: chunks large enough that per-chunk costs vanish, small enough that
/// the buffers' first touch (page faults) stays a small share of the run.
std::size_t defaultMemoryBudget();

/// Runs the job, writing slice i of the range as slice i of `writer`, and
/// commits the writer at the end. `progress` is called on the calling thread
/// as slices are reconstructed and written (for an iterative method also
/// every half second meanwhile); a Cancelled thrown from it stops every
/// stage, an iterative plan between iterations, and propagates (the caller
/// drops the writer, so no partial
/// file remains). The reader and the writer are called from different
/// threads, at the same time: they must allow that (the HDF5 ones serialise
/// their library calls). Throws the first error of any stage, as the
/// reader, plan and writer do, InvalidArgument for a maxClampedFraction
/// outside [0, 1], and TooManyClampedValues (naming the file and rows) when
/// a chunk has too many clamped values.
VolumeReport reconstructVolume(DatasetReader& reader, const VolumeJob& job, VolumeWriter& writer,
                               const ProgressCallback& progress = {});

} // namespace tomo
