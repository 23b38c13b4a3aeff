// Plain data passed between the reconstruction controller (worker threads)
// and the views through typed signals. No widgets here.
#pragma once

#include "image_stats.h"

#include "tomo/axis_finder.h"
#include "tomo/backend.h"
#include "tomo/dataset.h"
#include "tomo/metrics.h"
#include "tomo/phantom.h"
#include "tomo/pipeline.h"
#include "tomo/preview.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <QMetaType>
#include <QString>

#include <optional>
#include <vector>

namespace tomo::ui {

/// The built-in demo: the 3D Shepp-Logan phantom with exact projections.
struct DemoSpec {
    int bins = 512;
    int projections = 512;
    int rows = 64;
    tomo::PhantomSpec phantom() const;
};

/// The dataset on screen, as the views need it.
struct DatasetSummary {
    tomo::DatasetInfo info;
    QString title;                      ///< file name, or "Demo phantom"
    QString path;                       ///< empty for the demo
    std::optional<DemoSpec> demo;       ///< set for the demo phantom
    double secondsToOpen = 0.0;
    int generation = 0;                 ///< counts datasets opened (Controller::generation)
};

/// Everything the parameter panel sets: one preview request, in GUI terms.
struct SliceParams {
    int row = 0;
    double axis = 0.0;
    QString axisOffsetsFile;            ///< where axisOffsets came from (may be empty)
    std::vector<double> axisOffsets;    ///< empty or one per projection
    std::optional<tomo::Region> region; ///< unset = whole slice
    tomo::ReconOptions options;

    tomo::PreviewRequest request() const;
    /// Same row, axis, offsets, region and filter: what the exact reference depends on.
    bool sameGeometry(const SliceParams& other) const;
    /// The region actually computed on a grid x grid slice.
    tomo::Region effectiveRegion(int grid) const;
};

/// A finished live slice.
struct SliceResult {
    quint64 id = 0;
    SliceParams params;
    tomo::PreviewResult preview;
    ImageStats stats;
    QString family;                     ///< backend family: "cpu", "cuda", "opencl"
};

enum class ReferenceKind {
    Exact,  ///< cpu-reference with the same geometry and filter
    Truth,  ///< the true phantom image (demo only)
    Pinned, ///< an earlier result the user pinned
};

struct ReferenceResult {
    ReferenceKind kind = ReferenceKind::Exact;
    SliceParams params;
    tomo::Image image;                  ///< the region of params
    QString label;
    double seconds = 0.0;
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

struct AxisResult {
    int row = 0;
    tomo::AxisEstimate estimate;
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
};

/// A reconstructed sub-volume for the 3D view (binned for display).
struct SubVolume {
    tomo::ImageStack volume;
    int firstRow = 0;
    int binning = 1;                    ///< pixels per voxel in x and y
    /// Distance between rows in pixels: 1 for a detector (square pixels);
    /// the demo spreads its rows over the phantom's height.
    double rowSpacing = 1.0;
    ImageStats stats;
    double seconds = 0.0;
};

enum class JobKind { Export, SubVolume, CompareModes };
enum class JobStatus { Done, Cancelled, Failed };

struct JobProgress {
    double fraction = 0.0;
    QString stage;
    double secondsElapsed = 0.0;
    double secondsLeft = -1.0;          ///< < 0 while unknown
};

/// The GUI parameters as the JSON run configuration tomo-recon accepts.
tomo::RunConfig toRunConfig(const SliceParams& params, const QString& input, int firstRow, int rowCount);
/// Panel parameters from a run configuration (axis offsets file read).
/// Throws as tomo::readAxisOffsetsFile.
SliceParams fromRunConfig(const tomo::RunConfig& config, int projections);

/// Mask of the pixels of `region` (in a grid x grid slice) inside the disc the
/// FBP covers (radius grid / 2): quality figures are computed there.
std::vector<std::uint8_t> reconstructionDisc(const tomo::Region& region, int grid);

QString formatSeconds(double seconds);  ///< "87 ms", "3.2 s", "4 min 10 s"

} // namespace tomo::ui

Q_DECLARE_METATYPE(tomo::ui::DatasetSummary)
Q_DECLARE_METATYPE(tomo::ui::SliceResult)
Q_DECLARE_METATYPE(tomo::ui::ReferenceResult)
Q_DECLARE_METATYPE(tomo::ui::ModeComparison)
Q_DECLARE_METATYPE(tomo::ui::AxisResult)
Q_DECLARE_METATYPE(tomo::ui::ExportReport)
Q_DECLARE_METATYPE(tomo::ui::SubVolume)
Q_DECLARE_METATYPE(tomo::ui::JobProgress)
Q_DECLARE_METATYPE(tomo::ui::JobKind)
Q_DECLARE_METATYPE(tomo::ui::JobStatus)
