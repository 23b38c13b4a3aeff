// Live preview of a fan- or cone-beam scan (FDK): one slice z = k of the
// default volume grid (cone_scan.h), the part of PreviewSession that runs
// for datasets declaring a divergent beam.
//
//   rows of the detector the slice's region projects to (over all views)
//     not loaded ──────► stage.load(rows and a margin)   the corrections
//     rows / filter changed ───► fdkFilter of those rows only (CPU)
//     axis moved ──────────────► no filtering within reach (see m_sides)
//     always ──────────► backprojectCone of the region at z, in bands
//                        (GPU: reconstructFdk of those rows, filtered there)
//   an iterative method (fan beam only) ──► the divergent pair's run on the
//                        whole slice (detector moved to the axis), the
//                        region cut out
//
// The FDK filter works row by row, so filtering a band of detector rows
// gives the same values as filtering all of them; the band's matrices are
// the scan's with the rows renumbered. The axis moves the detector
// sideways: the matrices' columns shift by (axis - defaultAxis()), plus the
// request's per-view offsets.
#pragma once

#include "tomo/cone_scan.h"
#include "tomo/fdk.h"
#include "tomo/pipeline.h"
#include "tomo/preprocess.h"
#include "tomo/preview.h"
#include "tomo/projector.h"
#include "tomo/volume_io.h"

#include <array>
#include <memory>
#include <span>
#include <vector>

namespace tomo::preview {

class ConeSlicePreview {
public:
    /// Throws InvalidArgument as coneSetup (a geometry the file does not
    /// fully declare).
    explicit ConeSlicePreview(const DatasetInfo& info);

    /// The detector column the rotation axis projects to (mean over views):
    /// the axis of a request without one.
    double defaultAxis() const { return m_defaultAxis; }
    const ConeSetup& setup() const { return m_setup; }

    /// The slice request.row of the volume grid: FDK, or for fan-beam data
    /// an iterative method (request.options.iterative) on the whole slice,
    /// the region cut out. `stageGeneration` changes
    /// whenever `stage` is a new one (other corrections): the loaded rows
    /// are dropped. Throws as PreviewSession::run.
    PreviewResult run(const PreviewRequest& request, PreprocessingStage& stage, int stageGeneration,
                      const CancelToken* cancel);

    /// Slices request.row .. request.row + slices - 1 into `writer` (its
    /// slices 0 .. slices - 1), in chunks, reporting progress after each
    /// (which may throw Cancelled).
    VolumeReport reconstruct(const PreviewRequest& request, int slices, PreprocessingStage& stage,
                             VolumeWriter& writer, const ProgressCallback& progress);

    /// The fan-beam pair of request's slice: the whole slice's grid, the
    /// detector moved to the request's axis and offsets, on the GPU for GPU
    /// strategies (coneBackprojectorFor). What an iterative slice runs on and
    /// the reprojection view projects with. Throws InvalidArgument for a cone
    /// beam (more than one detector row) or a bad axis, and as
    /// makeConeProjector.
    std::unique_ptr<ProjectorPair> fanBeamPair(const PreviewRequest& request, const IterativeOptions& options) const;

    int filterRuns() const { return m_filterRuns; }
    int loadRuns() const { return m_loadRuns; }
    void reset();

private:
    struct RowRange {
        int first = 0;
        int count = 0;
        bool operator==(const RowRange&) const = default;
    };
    struct Loaded {
        FdkOptions fdk;
        RowRange rows;              ///< the detector rows the slices need
        std::vector<double> shifts; ///< per view, the detector's columns moved to the axis
    };
    /// What every run of slices first .. last shares: the checks, the rows
    /// loaded; fills result's figures.
    Loaded load(const PreviewRequest& request, int last, PreprocessingStage& stage, int stageGeneration,
                PreviewResult& result, const CancelToken* cancel);
    /// An iterative method's slice (fan-beam data only): run() for them.
    PreviewResult runIterative(const PreviewRequest& request, PreprocessingStage& stage, int stageGeneration,
                               const CancelToken* cancel);
    /// load(), then FDK's filtering of the rows; returns the options.
    FdkOptions prepare(const PreviewRequest& request, int last, PreprocessingStage& stage, int stageGeneration,
                       PreviewResult& result, const CancelToken* cancel);
    /// `grid` (a part of the volume) from the band: back-projected from
    /// m_centre or m_moved, or for the GPU the whole FDK of the band there.
    void backprojectPart(const VolumeGrid& grid, std::span<float> out, const FdkOptions& fdk) const;
    /// Per view, the detector's columns moved to request's axis and offsets.
    std::vector<double> detectorShifts(const PreviewRequest& request) const;
    /// The scan's matrices for detector rows `rows`, each view's columns
    /// moved by shifts[view].
    ConeGeometry bandAt(const RowRange& rows, std::span<const double> shifts) const;
    /// Whether m_centre serves `shifts` (interpolated; not on short scans,
    /// whose Parker weights are not smooth enough in the shift).
    bool withinReach(std::span<const double> shifts) const;
    /// m_moved for `shifts` (within reach); m_sides filtered first if not yet.
    void moveFiltered(std::span<const double> shifts, const FdkOptions& fdk, PreviewResult& result);
    /// The grid of `region` in slices first .. first + count - 1.
    VolumeGrid part(const Region& region, int first, int count) const;

    /// Detector rows the voxels of `region` in slices first .. last project
    /// to in any view, with one row beyond each end (bilinear reads), at
    /// least one row.
    RowRange detectorRows(const Region& region, int first, int last) const;

    ConeSetup m_setup;
    double m_defaultAxis = 0.0;

    // Loaded projections [view][row][column] of detector rows m_loaded.
    std::vector<float> m_projections;
    RowRange m_loaded;
    int m_loadedGeneration = -1;
    PreprocessStats m_loadedStats;

    // The detector rows the slices need, raw, on the detector moved to the
    // axis (m_bandShifts: per view, columns moved).
    ConeGeometry m_band;
    std::vector<float> m_bandValues;
    std::vector<double> m_bandShifts;
    RowRange m_filteredRows;
    FilterOptions m_filterOptions;
    int m_filterThreads = -1;
    int m_filteredGeneration = -1;
    // Their CPU weighting and filtering (empty for the GPU, which filters
    // them itself) at shifts c (m_centre) and, from the first axis step on,
    // at c -+ h (m_sides; h = m_reach, per view), which an axis within
    // reach of c interpolates, quadratic in the shift (m_moved), instead of
    // filtering again. FDK's cosine weight depends on the moved detector,
    // so no one filtering serves every axis; but the filtering is linear in
    // the weight, and the weight smooth in the shift.
    FilteredProjections m_centre;
    std::array<FilteredProjections, 2> m_sides;
    FilteredProjections m_moved; // empty: the axis is at c
    std::vector<double> m_centreShifts;
    std::vector<double> m_reach;

    double m_updatesPerSecond = 0.0;
    int m_filterRuns = 0;
    int m_loadRuns = 0;
};

} // namespace tomo::preview
