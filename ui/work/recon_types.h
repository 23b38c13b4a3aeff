// Plain data passed between the reconstruction controller (worker threads)
// and the views through typed signals. No widgets here.
#pragma once

#include "work/image_stats.h"

#include "tomo/axis_finder.h"
#include "tomo/backend.h"
#include "tomo/dataset.h"
#include "tomo/metrics.h"
#include "tomo/output_range.h"
#include "tomo/phantom.h"
#include "tomo/pipeline.h"
#include "tomo/preview.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <QImage>
#include <QMetaType>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

QT_BEGIN_NAMESPACE
class QThread;
QT_END_NAMESPACE

namespace tomo::ui {

/// The built-in demo: the 3D Shepp-Logan phantom with exact projections.
struct DemoSpec {
    int bins = 512;
    int projections = 512;
    int rows = 64;
    tomo::PhantomSpec phantom() const;
};

struct AxisResult {
    int row = 0;
    tomo::AxisEstimate estimate;
    double seconds = 0.0; ///< the search's time
    bool onOpening = false; ///< the search a dataset's opening asked for (after its first slice)
};

/// The dataset on screen, as the views need it.
struct DatasetSummary {
    tomo::DatasetInfo info;
    QString title;                      ///< file name, or "Demo phantom"
    QString path;                       ///< empty for the demo
    tomo::OpenOptions options;          ///< how it was opened
    std::optional<DemoSpec> demo;       ///< set for the demo phantom
    double secondsToOpen = 0.0;
    /// The pixel size at the sample the file states (tomo::statedPixelSize), µm; 0 = none.
    double statedPixelSizeUm = 0.0;
    int generation = 0;                 ///< counts datasets opened (Controller::generation)
    /// The rotation axis is searched on the middle row once the first slice
    /// is on screen (opened without a remembered axis): axisFound with
    /// onOpening, or axisFailed, follows.
    bool axisSearchPending = false;

    /// A fan or cone beam (reconstructed with FDK): what the Dataset panel
    /// lists, and the column the rotation axis projects to (a new dataset's
    /// axis; the finder assumes a parallel beam).
    struct DivergentBeam {
        QString description;                             ///< one line (tomo::ConeSetup)
        std::vector<std::pair<QString, QString>> fields; ///< label, value
        double axis = 0.0;
    };
    std::optional<DivergentBeam> divergent;
};

/// Everything the parameter and corrections panels set: one preview
/// request, in GUI terms.
struct SliceParams {
    int row = 0;
    /// Rotation axis on this row. With a tilt the axis is the line through
    /// (row, axis): axis(r) = axis + axisTilt (r - row), tomo-recon's
    /// axis / axis_tilt / axis_row with axis_row = row.
    double axis = 0.0;
    double axisTilt = 0.0;              ///< columns per detector row
    QString axisOffsetsFile;            ///< where axisOffsets came from (may be empty)
    std::vector<double> axisOffsets;    ///< empty or one per projection
    std::optional<tomo::Region> region; ///< unset = whole slice
    tomo::ReconOptions options;
    tomo::CorrectionOptions corrections;
    /// The GPUs of Reconstruct to File, one conveyor lane each (RunConfig::gpus:
    /// "all" or "0,1,..."; empty = options.device alone). The live slice uses options.device.
    std::string gpus;

    /// With 360° half acquisition the slice's axis is the stitched
    /// sinogram's centre (the scan's axis is corrections.halfAcquisition's):
    /// the request leaves it unset and `axis` is not used.
    bool stitched() const { return corrections.halfAcquisition.enabled; }
    tomo::AxisLine axisLine() const { return {axis, axisTilt, static_cast<double>(row)}; }
    /// Moves to `newRow`, the axis along the line.
    void moveToRow(int newRow);

    tomo::PreviewRequest request() const;
    /// Same row, axis, offsets, region, filter and corrections: what the
    /// exact reference depends on.
    bool sameGeometry(const SliceParams& other) const;
    /// The region actually computed on a grid x grid slice.
    tomo::Region effectiveRegion(int grid) const;
};

enum class ReferenceKind {
    Exact,  ///< the exact mode with the same geometry and filter (see exactReferenceOptions)
    Truth,  ///< the true phantom image (demo only)
    Pinned, ///< an earlier result the user pinned
};

/// How new slices are shown. The UI sets it; the worker that reconstructs
/// reads it to colour each slice and compare it before the UI sees it.
struct DisplaySettings {
    bool autoWindow = true;             ///< window from each slice's percentiles
    float low = 0.0f;                   ///< the window when not automatic
    float high = 1.0f;
    QString colormap = QStringLiteral("grey");
    bool compare = true;                ///< someone looks at the comparison (quality panel, profile)
    ReferenceKind referenceKind = ReferenceKind::Exact;
    bool discOnly = true;               ///< quality figures inside the reconstruction disc only
    /// Device pixels per image pixel of the slice view and of the difference
    /// view now: the worker also prepares the image at that size (< 1 only).
    double sliceZoom = 1.0;
    double differenceZoom = 1.0;
};

/// A slice coloured for the screen, made on the worker thread.
struct SliceDisplay {
    QImage rendered;                    ///< the slice through the colormap, window [low, high]
    QImage scaled;                      ///< `rendered` at `zoom` (smooth), when the view shrinks it
    double zoom = 0.0;                  ///< device pixels per image pixel `scaled` was made for
    float low = 0.0f;
    float high = 1.0f;
    QString colormap;
    QThread* preparedOn = nullptr;      ///< the thread that coloured it
};

/// A reference to compare results with.
struct ReferenceResult {
    ReferenceKind kind = ReferenceKind::Exact;
    SliceParams params;
    tomo::ReconOptions options;         ///< the mode that made it (Exact); the result's (Pinned)
    tomo::Image image;                  ///< the region of params
    QString label;
    double seconds = 0.0;
};
using ReferencePtr = std::shared_ptr<const ReferenceResult>;

/// A result minus a reference, with the figures, made on the worker thread.
struct Comparison {
    quint64 resultId = 0;               ///< SliceResult::id it was made for
    ReferenceKind kind = ReferenceKind::Exact;
    QString referenceLabel;
    double referenceSeconds = 0.0;
    std::shared_ptr<const tomo::Image> difference; ///< result − reference (null with `error`)
    QImage rendered;                    ///< the difference in the diverging map, window [−range, range]
    QImage scaled;                      ///< `rendered` at `zoom`, when the view shrinks it
    double zoom = 0.0;
    float range = 1.0f;
    std::optional<tomo::QualityMetrics> metrics; ///< unset with `error`
    QString error;
    QThread* preparedOn = nullptr;      ///< the thread that compared
};

/// The preprocessing stage that made a slice: its output geometry and what
/// it found (copied from PreviewSession::stage() on the worker).
struct StageSummary {
    int columns = 0;                    ///< corrected sinogram width = slice grid
    int projections = 0;
    std::optional<double> stitchedAxis; ///< 360°: the stitched sinogram's axis (its centre)
    std::optional<double> scanAxis;     ///< 360°: the scan's axis used (given or found)
    std::optional<tomo::HalfAcquisitionAxis> found; ///< 360°: the automatic search's result
    std::vector<std::string> warnings;
};

/// A finished live slice, ready for the screen.
struct SliceResult {
    quint64 id = 0;
    SliceParams params;
    tomo::PreviewResult preview;
    StageSummary stage;
    ImageStats stats;
    QString family;                     ///< backend family: "cpu", "cuda", "opencl"
    SliceDisplay display;
    /// A reference fits: its comparison follows (Controller::comparisonReady).
    bool comparisonFollows = false;
    double secondsPrepare = 0.0;        ///< statistics and colours on the worker
    /// From the request to the worker taking it (a reference or comparison
    /// finishing, an older slice running).
    double secondsWaiting = 0.0;
};
using SliceResultPtr = std::shared_ptr<const SliceResult>;

/// What the Data panel shows: the raw material of the slice.
enum class DataViewKind {
    Sinogram,   ///< the log-corrected sinogram of a row (angles x columns)
    Projection, ///< the raw projection image at one angle (rows x columns)
    Flat,       ///< the mean flat field
    Dark,       ///< the mean dark field
};

struct DataView {
    DataViewKind kind = DataViewKind::Sinogram;
    int row = 0;                        ///< Sinogram: its row
    int angle = 0;                      ///< Projection: its index
    /// Empty with `error`. Shared: a 2048² sinogram copied on the UI thread
    /// took 5–10 ms per copy.
    std::shared_ptr<const tomo::Image> image = std::make_shared<const tomo::Image>();
    ImageStats stats;
    SliceDisplay display;               ///< coloured on the worker, automatic window
    QString error;                      ///< why there is nothing to show
};

/// One row of the "compare modes" table.
struct ModeComparison {
    tomo::ReconOptions options;         ///< strategy resolved
    bool exact = true;
    double secondsBackproject = 0.0;
    double gups = 0.0;
    tomo::QualityMetrics metrics;       ///< against cpu-reference, inside the disc
    QString error;                      ///< non-empty when the mode failed
    QString label() const;              ///< "alu · nearest · float16"
};

struct ExportRequest {
    QString target;
    int firstRow = 0;
    int rowCount = 0;                   ///< 0 = to the last row
    SliceParams params;                 ///< axis, offsets, region, options
    tomo::WriteOptions write;
};

struct ExportReport {
    QString target;
    tomo::VolumeReport report;
    tomo::OutputType type = tomo::OutputType::Float32;
    tomo::ClippedValues clipped;        ///< what the output type could not store
};

/// Trial slices of one row over a range of axes (the axis sweep gallery).
/// The largest side of an axis sweep's enlarged trial (AxisSweep::views).
inline constexpr int kSweepViewSize = 480;

struct AxisSweep {
    int row = 0;
    std::vector<double> axes;
    std::vector<QImage> thumbnails;     ///< one per axis, one window for all
    std::vector<QImage> views;          ///< the same at up to kSweepViewSize px (enlarged on a double click)
    std::optional<tomo::Region> region; ///< what they show (none: the whole slice)
    float low = 0.0f, high = 1.0f;      ///< that window (the middle slice's percentiles)
    QString strategy;
    double secondsFilter = 0.0;
    double secondsBackproject = 0.0;
};

/// A reconstructed sub-volume for the 3D view (binned for display).
struct SubVolume {
    tomo::ImageStack volume;
    int firstRow = 0;
    int binning = 1;                    ///< pixels per voxel in x and y
    /// Detector columns averaged before reconstruction (the rest of
    /// `binning` shrank the reconstructed slices), and the grid the slices
    /// were reconstructed on.
    int reconstructionBinning = 1;
    int reconstructionProjections = 0; ///< projections it was reconstructed from (runs of them averaged)
    int reconstructedWidth = 0;
    int reconstructedHeight = 0;
    /// Distance between rows in pixels: 1 for a detector (square pixels);
    /// the demo spreads its rows over the phantom's height.
    double rowSpacing = 1.0;
    ImageStats stats;
    double seconds = 0.0;
};

/// How the 3D view renders a volume: transparent up to `threshold`, then
/// colours and opacity rising to `opacity` at `high`. Its own, apart from
/// the 2D window.
struct TransferFunction {
    float threshold = 0.0f;
    float high = 1.0f;
    double opacity = 0.15;
};
/// The default for a volume: the threshold where the background ends
/// (backgroundThreshold), the top at the 99.5 % percentile.
TransferFunction automaticTransferFunction(const ImageStats& stats);

enum class JobKind { Export, SubVolume, CompareModes, AxisSweep, RangeEstimate };
enum class JobStatus { Done, Cancelled, Failed };

struct JobProgress {
    double fraction = 0.0;
    QString stage;
    double secondsElapsed = 0.0;
    double secondsLeft = -1.0;          ///< < 0 while unknown
};

/// An iterative slice while it runs (Controller::iterationProgress): the
/// residuals of every iteration since the last update, and every few
/// iterations (at most a few times a second) the current image.
struct IterationUpdate {
    quint64 id = 0;                     ///< SliceResult::id of the slice being made
    int iterations = 0;                 ///< planned
    /// (iteration, ||b - A x|| / ||b||) of each iteration since the last update.
    std::vector<std::pair<int, double>> residuals;
    /// The current image (the request's region) and its colours; null when not due.
    std::shared_ptr<const tomo::Image> image;
    tomo::Region region;
    SliceDisplay display;
};

/// Data consistency of the slice on screen (Controller::requestReprojection):
/// the measured sinogram of its row, the forward projection of the slice
/// (tomo::reproject) and their difference.
struct ReprojectionResult {
    quint64 resultId = 0;               ///< SliceResult::id of the slice projected
    int row = 0;
    QString method;                     ///< "fbp", "sirt", ...
    QString projector;                  ///< the pair that computed A x ("cpu joseph, matched")
    tomo::Image measured, projected, difference; ///< angles x bins
    QImage measuredRendered, projectedRendered; ///< grey, one window for both
    QImage differenceRendered;          ///< diverging, window [-range, range]
    float range = 0.0f;
    double norm = 0.0;                  ///< ||measured - A x||
    double relativeNorm = 0.0;          ///< ||measured - A x|| / ||measured||
    QString error;                      ///< why there is none (then nothing else is set)
};

/// The GUI parameters as the JSON run configuration tomo-recon accepts: the
/// dataset's path (none for the demo) and how it was opened, rows, params
/// (the axis line with axis_row = params.row; no axis with 360° stitching)
/// and corrections.
tomo::RunConfig toRunConfig(const SliceParams& params, const DatasetSummary& dataset, int firstRow, int rowCount);
/// The same way of reading a dataset (angles file, entries, units, range, raw layout).
bool sameOpenOptions(const tomo::OpenOptions& a, const tomo::OpenOptions& b);
/// A reader's warning with the dataset's path shortened to its file name.
QString readableWarning(const tomo::DatasetInfo& info, const std::string& warning);
/// Panel parameters from a run configuration (axis offsets file read) on
/// its first row, the axis taken there along the config's line; an axis of
/// NaN when the config has none. Throws as tomo::readAxisOffsetsFile.
SliceParams fromRunConfig(const tomo::RunConfig& config, int projections);

/// Whether `reference` is a reference for `result`: the same image size,
/// and for Exact the same geometry and filter (sameGeometry) made in the
/// mode exactReferenceOptions gives for the result, for Truth the same row
/// and region, for Pinned only the size.
bool referenceFits(const ReferenceResult& reference, const SliceResult& result);

/// The mode of the Exact reference for results of `family` ("cpu", "cuda"):
/// on the CPU cpu-reference linear (positions and sums in double); after a
/// GPU result the GPU's exact mode, so that a large slice's reference does
/// not cost the CPU seconds: alu linear (interpolation in float32
/// arithmetic, equal to cpu-reference linear to 1e-6), else tex-optimized
/// nearest (double positions, equal to cpu-reference nearest to 1e-5), else
/// cpu-reference. Filter, device and threads come from `like`. Fan/cone-beam
/// results (`divergent`) always compare with cpu-reference's FDK: the GPU's
/// FDK interpolates with the texture unit's 8-bit weights.
tomo::ReconOptions exactReferenceOptions(const tomo::ReconOptions& like, const QString& family, bool divergent = false);
/// "cpu-reference (exact)", "alu linear, float32 arithmetic (GPU exact)".
QString referenceModeLabel(const tomo::ReconOptions& referenceOptions);

/// Mask of the pixels of `region` (in a grid x grid slice) inside the disc the
/// FBP covers (radius grid / 2): quality figures are computed there.
std::vector<std::uint8_t> reconstructionDisc(const tomo::Region& region, int grid);

QString formatSeconds(double seconds);  ///< "87 ms", "3.2 s", "4 min 10 s"
/// "FBP", "SIRT, 100 iterations", "TV, 100 iterations, λ 0.1".
QString methodLabel(const tomo::IterativeOptions& options);

} // namespace tomo::ui

Q_DECLARE_METATYPE(tomo::ui::DatasetSummary)
Q_DECLARE_METATYPE(tomo::ui::SliceResultPtr)
Q_DECLARE_METATYPE(tomo::ui::ReferencePtr)
Q_DECLARE_METATYPE(tomo::ui::Comparison)
Q_DECLARE_METATYPE(tomo::ui::ModeComparison)
Q_DECLARE_METATYPE(tomo::ui::AxisResult)
Q_DECLARE_METATYPE(tomo::ui::ExportReport)
Q_DECLARE_METATYPE(tomo::ui::SubVolume)
Q_DECLARE_METATYPE(tomo::ui::JobProgress)
Q_DECLARE_METATYPE(tomo::ui::JobKind)
Q_DECLARE_METATYPE(tomo::ui::JobStatus)
Q_DECLARE_METATYPE(tomo::ui::DataView)
Q_DECLARE_METATYPE(tomo::ui::AxisSweep)
Q_DECLARE_METATYPE(tomo::RangeEstimate)
Q_DECLARE_METATYPE(tomo::ui::IterationUpdate)
Q_DECLARE_METATYPE(tomo::ui::ReprojectionResult)
