// Live preview of one slice: the filtered sinogram of the slice on screen is
// kept, so moving the rotation axis or the region re-runs only the
// back-projection (seed 000 Fig. 4, "live preview"). No Qt: the GUI worker
// and `tomo-bench --preview` are thin wrappers around PreviewSession.
//
//   PreviewSession::run(request)
//     corrections changed ─────► new PreprocessingStage    (drops the kept row)
//     row changed ─────────────► stage.load(row)           read + the corrections
//     row / options changed ───► createPlan, setSinograms  ramp filter (counted)
//     axis / offsets changed ──► plan->setAxis             no filtering
//     region changed ──────────► plan->setRegion           no filtering
//     always ──────────────────► plan->backproject         the strategy's kernel
//                                  (an iterative method: its iterations, in
//                                  one call, onIteration after each)
//
// A live scan (grow(): the same scan with more projections) keeps the
// slice it showed: when the row, axis, region, options and corrections are
// unchanged and the corrected rows of the projections already summed came
// out the same, run() filters and back-projects only the projections that
// are new or whose angular weight changed (a back-projection is a weighted
// sum over projections, each filtered alone) and adds them to the kept
// slice; anything else reconstructs the whole slice again.
//
// Fan/cone-beam datasets (DatasetInfo::divergentBeam) go through FDK
// instead: the request's row is a slice z of the default volume grid, and
// only the detector rows that slice needs are loaded and filtered
// (run/cone_preview.h).
//
// Tests: tests/core/test_preview.cpp (same image as a fresh reconstruction,
// filter runs counted, cancellation, banded = unbanded).
#pragma once

#include "tomo/backend.h"
#include "tomo/cone_geometry.h"
#include "tomo/corrections.h"
#include "tomo/dataset.h"
#include "tomo/geometry.h"
#include "tomo/image.h"
#include "tomo/phantom.h"
#include "tomo/preprocess.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tomo {

class ProjectorPair;

/// Cancellation flag shared between the thread running a job and the thread
/// that wants it stopped (e.g. because a newer request arrived: the GUI
/// coalesces live changes, the latest wins). Thread-safe.
class CancelToken {
public:
    void cancel() noexcept { m_cancelled.store(true, std::memory_order_relaxed); }
    bool cancelled() const noexcept { return m_cancelled.load(std::memory_order_relaxed); }
    /// Throws Cancelled if cancel() was called.
    void throwIfCancelled() const;

private:
    std::atomic<bool> m_cancelled{false};
};

/// What to preview: one detector row with one set of parameters.
struct PreviewRequest {
    int row = 0;
    /// Rotation axis (column of the corrected sinogram); unset = its centre
    /// (with 360° stitching: the stitched sinogram's axis).
    std::optional<double> axis;
    /// Per-projection axis corrections: empty, or one per projection.
    std::vector<double> axisOffsets;
    /// Part of the bins x bins slice grid to compute; unset = all of it.
    std::optional<Region> region;
    ReconOptions options;
    /// Applied when the row is loaded; the corrected row is kept, so moving
    /// the axis costs no correction (except with 360° stitching, whose
    /// axis lives in corrections.halfAcquisition).
    CorrectionOptions corrections;
    /// Iterative methods (options.iterative): called after every iteration
    /// on run()'s thread, e.g. to show the slice and the residual while they
    /// run; returning false stops them and keeps the image so far.
    IterationCallback onIteration;
};

/// The same method with the same parameters: an iterative plan keeps them,
/// so PreviewSession makes a new plan when they change.
bool sameMethod(const IterativeOptions& a, const IterativeOptions& b);

/// One finished preview slice and how it was made.
struct PreviewResult {
    Image slice;              ///< region.width x region.height
    int row = 0;
    double axis = 0.0;
    Region region;
    int gridSize = 0;         ///< the full slice grid is gridSize x gridSize (= bins)
    int projections = 0;
    /// Projections this run back-projected: all of them, or, adding to the
    /// kept slice of a live scan (grow()), those that are new or whose
    /// weight changed (each with the change of its weight).
    int addedProjections = 0;
    std::string strategy;     ///< the strategy that ran ("auto" resolved; FDK: its back-projector)
    bool divergent = false;   ///< a fan/cone-beam slice (FDK, or an iterative method on fan-beam data)
    bool filtered = false;    ///< this run (re)filtered the sinogram
    double secondsLoad = 0.0; ///< read + corrections (0 when the row was cached)
    double secondsFilter = 0.0;      ///< plan creation + setSinograms (0 when kept)
    double secondsBackproject = 0.0; ///< backproject() only
    double secondsTotal = 0.0;       ///< the whole run() call
    /// Giga-updates per second of the back-projection:
    /// region pixels x projections / secondsBackproject / 1e9.
    double gups = 0.0;
    /// Bands of rows the back-projection ran in (1 = one call; > 1 only
    /// for a cancellable run estimated slower than one band's aim, see run()).
    int bands = 1;
    /// What the corrections found in the row (when it was loaded by an
    /// earlier run: the figures of that load).
    PreprocessStats corrections;
    /// How an iterative method ended (iterations run, last residual, stopped
    /// early); unset for FBP.
    std::optional<IterativeSummary> iterative;
};

/// Holds one dataset row's corrected sinogram and a ReconstructionPlan
/// with its filtered sinogram, and recomputes only what a request changes.
/// Not thread-safe: one thread calls run() at a time; the CancelToken passed
/// to run() may be cancelled from any thread.
/// The memory of the next result's slice is allocated on a helper thread of
/// the session while run() back-projects (so the session holds one spare
/// slice; reset() drops it).
class PreviewSession {
public:
    /// Throws InvalidArgument if `reader` is null or the dataset has no
    /// projections, rows or columns.
    explicit PreviewSession(std::shared_ptr<DatasetReader> reader);
    ~PreviewSession();
    PreviewSession(const PreviewSession&) = delete;
    PreviewSession& operator=(const PreviewSession&) = delete;

    const DatasetInfo& info() const;

    /// Reconstructs the requested slice, reusing the loaded row, the plan and
    /// its filtered sinogram when the request allows. With a token, the
    /// back-projection of a slow run is split into bands of rows (each
    /// estimated at <= 0.025 s on a CPU, <= 0.005 s on a GPU, from the speed
    /// of the plan's last band or run, or from a fixed guess before its
    /// first; at least 8 rows on a CPU, 32 on a GPU; the image is the same; see
    /// PreviewResult::bands) and the token is checked between stages and bands.
    /// Throws InvalidArgument (row outside the dataset, offsets count !=
    /// projections, region outside the grid, options the strategy rejects,
    /// corrections the dataset does not allow),
    /// DeviceError / OutOfMemory (from the backend), IoError / FormatError /
    /// DataError (reading the row), Cancelled (token cancelled; the session
    /// stays usable and keeps what was completed, e.g. the filtered sinogram).
    PreviewResult run(const PreviewRequest& request, const CancelToken* cancel = nullptr);

    /// The corrected sinogram of `row` with the corrections of the last run
    /// (defaults before any run): height = stage().outputProjections(),
    /// width = stage().outputColumns(); loaded once and kept until another
    /// row or other corrections are asked for.
    /// Throws as run() does for reading; InvalidArgument for a bad row.
    const Image& sinogram(int row);

    /// The preprocessing stage of the last run (its output angles, columns,
    /// warnings); made with default corrections before the first run.
    const PreprocessingStage& stage();

    /// The axis of a request without one, if it is not the grid's centre:
    /// the stitched centre (360° stitching); for a fan/cone beam the column
    /// the rotation axis projects to.
    std::optional<double> defaultAxis();

    /// For a fan-beam dataset: Joseph's matched pair of request's slice, on
    /// the CPU or the GPU as request.options.strategy says (the one an
    /// iterative slice runs on; the reprojection view projects with it).
    /// Throws InvalidArgument for a parallel or cone beam, naming it.
    std::unique_ptr<ProjectorPair> fanBeamPair(const PreviewRequest& request);

    /// How many times run() filtered a sinogram (setSinograms calls) and
    /// loaded a row, since construction; for tests and benchmarks.
    int filterRuns() const;
    int loadRuns() const;

    /// The dataset grew: `reader` holds the same scan with more frames (a
    /// live source's newer snapshot, tomo/live.h). The next run() adds the
    /// new projections to the slice of the last one when it can (see the
    /// top of this file; PreviewResult::addedProjections), else
    /// reconstructs as for a new dataset. From a growing file (frames only
    /// appended) the stored rows read from the earlier snapshots are kept
    /// and only the new projections are read
    /// (DatasetReader::readRawRowsOfProjections); a stream's snapshot, which
    /// sorts a late projection in among the others, is read whole. Throws InvalidArgument for a
    /// null reader, one without data, or other rows or columns.
    void grow(std::shared_ptr<DatasetReader> reader);

    /// Drops the plan and the kept rows (e.g. to free device memory).
    void reset();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// A dataset held in memory: already log-corrected sinograms
/// [row][angle][bin] (width = bins, height = angles, depth = rows) and their
/// angles in radians; readSinograms copies, so one reader may be read from
/// several threads at once. Used for the built-in demo phantom and for
/// benchmarks; with `beam`, a fan/cone-beam scan declared as a file would
/// (DatasetInfo::divergentBeam). Throws InvalidArgument if the stack is
/// empty or the angle count differs from sinograms.height.
std::unique_ptr<DatasetReader> makeMemoryDataset(ImageStack sinograms, std::vector<double> angles,
                                                 std::filesystem::path name = "memory",
                                                 std::optional<DivergentBeam> beam = std::nullopt);

/// A circular fan/cone-beam scan of `phantom` (exact line integrals,
/// projectPhantomCone) as a memory dataset declaring its geometry: for
/// tests and benchmarks of the fan/cone-beam preview. `geometry` as
/// DivergentBeam describes it: square pixels, the central ray on the
/// detector centre (InvalidArgument otherwise).
std::unique_ptr<DatasetReader> makeConePhantomDataset(const ConePhantom& phantom,
                                                      const CircularConeGeometry& geometry);

} // namespace tomo
