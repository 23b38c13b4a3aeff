// Reconstructing a range of rows of a dataset into a volume with bounded
// memory, as a conveyor of stages on their own threads, each a bounded queue
// apart, so reading, preprocessing, reconstruction and writing overlap:
//
//                                 +-> lane 0: preprocess -> reconstruct -+
//   read (one thread) -> [queue] -+-> lane 1: preprocess -> reconstruct -+-> [queue] -> write
//                                 +-> ...  (one lane per device)         +
//
//   read:        PreprocessingStage::read (stored values, flats, dark)
//   preprocess:  PreprocessingStage::correct (flat/dark, ..., -log, ...), the
//                lane's ChunkCorrector on its GPU, or left to a plan that
//                corrects raw rows itself
//   reconstruct: the lane's plan (filter, back-project) on its device
//   write:       VolumeWriter::writeSlices into the one output
//
// A lane takes the next chunk read only when it has room for it, so a faster
// device takes more chunks; chunks may reach the writer out of order. Each
// stage's busy time is reported (each lane's too), so the slowest one (the
// bottleneck) has a name.
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

/// Where a conveyor's rows come from when they are not simply all of the
/// job's, in order (as slices of the output: slice `first` is detector row
/// VolumeJob::firstRow + first): an MPI rank takes slabs from rank 0 by demand, a resumed
/// run only the slices still missing (see tomo/cluster.h).
class RowSource {
public:
    virtual ~RowSource() = default;
    /// The next rows for this conveyor, at most `most` (>= 1), or nothing
    /// once no rows are left for it. Called from the conveyor's read thread
    /// only; may wait. Throws to stop the conveyor with that error.
    virtual std::optional<SliceSpan> next(int most) = 0;
    /// The rows of a span next() gave are in the writer (each span once, in
    /// any order). Called from the conveyor's write thread only.
    virtual void written(const SliceSpan& span) = 0;
    /// The share of the whole job's rows written so far, by every process
    /// (for progress; 0..1).
    virtual double fractionWritten() const = 0;
};

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
    /// Largest share (0..1) of a chunk's values that may have no usable
    /// transmission (raw <= dark, flat <= dark, saturated), whether
    /// interpolated or clamped (PreprocessStats::unusable): beyond it the
    /// data are broken (flats all zero or equal to the darks, a missing
    /// source) and the run stops with TooManyClampedValues before anything
    /// is committed. 1 accepts everything.
    double maxClampedFraction = 0.01;
    /// Run the corrections on the strategy's GPU when it has one
    /// (Backend::createCorrector); false = on the CPU threads.
    bool gpuCorrections = true;
    /// The devices to reconstruct on, one lane each: its own plan
    /// (options.device = the lane's device; "auto" resolved per device), its
    /// own corrector and its own preprocess and reconstruct threads. Empty =
    /// options.device alone (one lane). The same index twice is an error.
    /// CPU strategies ignore the device: several lanes there share the cores.
    std::vector<int> devices;
    /// The rows to reconstruct, when not all of [firstRow, firstRow +
    /// rowCount) in order (nullptr); slices are still indexed in that range.
    /// Must outlive the call.
    RowSource* rows = nullptr;
};

/// More than VolumeJob::maxClampedFraction of a chunk's values had no usable transmission.
class TooManyClampedValues : public DataError {
public:
    using DataError::DataError;
};

/// One lane's share of the work (VolumeReport::lanes).
struct LaneReport {
    int device = 0;
    std::string strategy;        ///< resolved strategy name of the lane's plan
    std::string tuning;          ///< and its kernel parameters ("" = none or the defaults)
    int slicesPerPass = 1;       ///< and slices per pass
    std::string correctedOn;     ///< as VolumeReport::correctedOn
    int chunks = 0;              ///< chunks this lane reconstructed
    int slices = 0;
    /// Busy seconds of its preprocess and reconstruct threads.
    double secondsPreprocess = 0.0;
    double secondsReconstruct = 0.0;
    StageTimes plan;             ///< the plan's own split, summed over its calls
    double gups = 0.0;           ///< over secondsReconstruct
    std::vector<std::pair<std::string, double>> preprocessSteps; ///< its GPU corrector's, if any
};

struct VolumeReport {
    /// Resolved strategy name (the lanes' names joined with ", " where
    /// they differ).
    std::string strategy;
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
    /// writing the slices. With several lanes, preprocess and reconstruct
    /// are the busiest lane's (the lanes run side by side).
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
    /// (GPU plans: upload, filter, back-projection, download busy times);
    /// with several lanes, the busiest lane's.
    StageTimes plan;
    /// Every lane, in the order of VolumeJob::devices.
    std::vector<LaneReport> lanes;
    /// Host memory of the conveyor's chunk buffers at their peak (the plan's
    /// own memory and the reader's library caches come on top).
    std::size_t peakBufferBytes = 0;
    /// The budget the chunks were sized by: VolumeJob::memoryBudget, or the
    /// default (per lane, grown for the stage's margin rows, see there).
    std::size_t memoryBudget = 0;
    /// giga-updates per second of the reconstruct stage, all lanes together
    /// (region pixels x slices x projections / secondsReconstruct / 1e9).
    double gups = 0.0;

    /// The stage with the largest busy time: "read", "preprocess",
    /// "reconstruct" or "write".
    std::string bottleneck() const;
};

/// A sixteenth of the machine's physical memory, at least 1 GiB and at most
/// 4 GiB: chunks large enough that per-chunk costs vanish, small enough that
/// the buffers' first touch (page faults) stays a small share of the run.
/// With several lanes, the conveyor's default is this per lane, up to a
/// quarter of the machine's memory (defaultMemoryBudget(lanes)).
std::size_t defaultMemoryBudget();
std::size_t defaultMemoryBudget(int lanes);

/// Runs the job, writing slice i of the range as slice i of `writer`, and
/// commits the writer at the end. `progress` is called on the calling thread
/// as slices are reconstructed and written (with a RowSource: its
/// fractionWritten(); for an iterative method also every half second
/// meanwhile); a Cancelled thrown from it stops every stage, an iterative
/// plan between iterations, and propagates (the caller drops the writer, so no partial file remains).
/// The reader and the writer are called from different threads, at the same
/// time: they must allow that (the HDF5 ones serialise their library calls);
/// the reader from one thread, the writer from one thread. The stage's
/// correct() runs on several lanes at once (PreprocessingStage allows it).
/// Chunks reach the writer out of order with several lanes; for a writer
/// that holds early slices (VolumeWriter::holdsEarlySlices) the reader stays
/// within the chunks in flight of the oldest one not yet written. Throws
/// the first error of any stage or lane, as the reader, plans and writer
/// do, InvalidArgument for a maxClampedFraction outside [0, 1] or a device
/// listed twice, and TooManyClampedValues (naming the file and rows) when a
/// chunk has too many clamped values.
VolumeReport reconstructVolume(DatasetReader& reader, const VolumeJob& job, VolumeWriter& writer,
                               const ProgressCallback& progress = {});

} // namespace tomo
