// The controller's long jobs (controller.h), one at a time on the job
// thread with a reader of their own: Reconstruct to File, the range
// estimate of an integer export, the axis sweep, the 3D view's sub-volume
// (at the view's resolution, binned_reader.h) and Compare Modes.
#include "work/controller_private.h"

#include "views/colormap.h"
#include "work/binned_reader.h"

#include "tomo/axis_sweep.h"
#include "tomo/cone_volume.h"
#include "tomo/error.h"
#include "tomo/gpu_list.h"
#include "tomo/metrics.h"
#include "tomo/output_range.h"
#include "tomo/phantom.h"
#include "tomo/pipeline.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"
#include "tomo/volume_io.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

namespace tomo::ui {

namespace {

/// Consecutive projections the 3D view may average for a grid `width`
/// voxels wide: as many as leave at least 90 % of the angles the grid needs
/// (pi/2 per voxel across and per 180 degrees covered, the outer voxels'
/// angular Nyquist rate); 1 when the angles are not in order (neighbours
/// in the file would not be neighbours in angle).
int projectionRun(const std::vector<double>& angles, int width) {
    if (angles.size() < 2) return 1;
    const double step = angles[1] - angles[0];
    for (std::size_t i = 1; i < angles.size(); ++i)
        if (!((angles[i] - angles[i - 1]) * step > 0.0)) return 1;
    const double span = std::abs(angles.back() - angles.front()) * static_cast<double>(angles.size()) /
                        static_cast<double>(angles.size() - 1);
    const double needed = span / 2.0 * width; // (span / pi) * (pi / 2) * width
    return std::max(1, static_cast<int>(std::floor(static_cast<double>(angles.size()) / (0.9 * needed))));
}

bool isExactMode(const tomo::ReconOptions& o) {
    const tomo::Backend* b = tomo::BackendRegistry::instance().find(o.strategy);
    return b && b->isExact() && o.interpolation == tomo::Interpolation::Linear &&
           o.precision == tomo::Precision::Float32;
}

/// Collects the slices of a volume in memory (the 3D view's sub-volume).
class MemoryVolumeWriter final : public tomo::VolumeWriter {
public:
    MemoryVolumeWriter(int width, int height, int slices) : m_stack(width, height, slices) {}
    void writeSlices(int first, int count, std::span<const float> data) override {
        if (first < 0 || count < 0 || first + count > m_stack.depth ||
            data.size() != m_stack.imageSize() * static_cast<std::size_t>(count))
            throw tomo::InvalidArgument("memory volume: slices " + std::to_string(first) + "+" +
                                        std::to_string(count) + " do not fit");
        std::memcpy(m_stack.image(first).data(), data.data(), data.size_bytes());
    }
    void commit() override {}
    tomo::ImageStack take() { return std::move(m_stack); }

private:
    tomo::ImageStack m_stack;
};

/// Block-average `stack` by `b` in x and y.
tomo::ImageStack binXY(const tomo::ImageStack& stack, int b) {
    if (b <= 1) return stack;
    tomo::ImageStack out(std::max(1, stack.width / b), std::max(1, stack.height / b), stack.depth);
    const float norm = 1.0f / static_cast<float>(b * b);
    for (int z = 0; z < stack.depth; ++z) {
        auto src = stack.image(z);
        auto dst = out.image(z);
        for (int y = 0; y < out.height; ++y)
            for (int x = 0; x < out.width; ++x) {
                float sum = 0.0f;
                for (int j = 0; j < b; ++j)
                    for (int i = 0; i < b; ++i)
                        sum += src[static_cast<std::size_t>(y * b + j) * stack.width + x * b + i];
                dst[static_cast<std::size_t>(y) * out.width + x] = sum * norm;
            }
    }
    return out;
}

/// Chunks small enough for a progress bar that moves (about 25 steps),
/// whole multiples of the slices per pass.
int chunkRowsFor(int rows, int slicesPerPass) {
    const int spp = std::max(1, slicesPerPass);
    int chunk = std::clamp(rows / 25, 1, 64);
    return std::max(spp, chunk / spp * spp);
}

/// The volume job of `p` over rows [first, first + count) (count 0 = to the
/// last row): the corrections, the corrected sinograms' geometry (360°
/// stitching widens it, its axis is their centre), the axis line when tilted.
tomo::VolumeJob volumeJob(tomo::DatasetReader& reader, const SliceParams& p, int first, int count) {
    const tomo::DatasetInfo& info = reader.info();
    if (count <= 0) count = info.rows - first;
    if (first < 0 || first >= info.rows || count < 1 || first + count > info.rows)
        throw tomo::InvalidArgument("rows " + std::to_string(first) + " to " + std::to_string(first + count - 1) +
                                    " are outside the dataset (0 to " + std::to_string(info.rows - 1) + ")");
    // What the corrections make of the data (a 360° axis found once, here).
    const tomo::PreprocessingStage stage(reader, p.corrections);
    tomo::VolumeJob job;
    job.firstRow = first;
    job.rowCount = count;
    job.corrections = stage.options();
    tomo::Geometry g;
    g.angles = stage.outputAngles();
    g.bins = stage.outputColumns();
    g.axis = stage.outputAxis().value_or(p.axis);
    g.axisOffsets = p.axisOffsets;
    job.geometry = tomo::ReconGeometry::fullSlice(std::move(g));
    job.geometry.region = p.effectiveRegion(job.geometry.geometry.bins);
    if (!p.stitched() && p.axisTilt != 0.0) job.axisLine = p.axisLine();
    job.options = p.options;
    // The GPUs chosen in Reconstruct to File: tomo-recon --gpus's conveyor, one lane each.
    if (!p.gpus.empty()) job.devices = tomo::parseGpus(p.gpus, tomo::gpuDevices(), "GPUs");
    job.chunkRows = chunkRowsFor(count, p.options.slicesPerPass);
    return job;
}

/// Slices [first, first + count) of a fan/cone-beam volume (count 0 = to
/// the last) with the live slice's parameters.
struct ConeSlices {
    tomo::PreviewRequest first; ///< its row: the first slice
    int count = 0;
    tomo::Region region;
};

ConeSlices coneSlices(tomo::DatasetReader& reader, const SliceParams& p, int first, int count) {
    const tomo::DatasetInfo& info = reader.info();
    if (count <= 0) count = info.rows - first;
    if (first < 0 || first >= info.rows || count < 1 || first + count > info.rows)
        throw tomo::InvalidArgument("slices " + std::to_string(first) + " to " + std::to_string(first + count - 1) +
                                    " are outside the volume (0 to " + std::to_string(info.rows - 1) + ")");
    ConeSlices out;
    out.first = p.request();
    out.first.row = first;
    out.count = count;
    out.region = p.effectiveRegion(info.columns);
    return out;
}

/// Progress callback for the pipeline: cancels, estimates the time left and
/// posts a JobProgress to `target` in the UI thread.
tomo::ProgressCallback progressReporter(Controller* target, const tomo::CancelToken& token,
                                        std::function<void(const JobProgress&)> emitter) {
    auto timer = std::make_shared<QElapsedTimer>();
    timer->start();
    return [target, &token, timer, emitter = std::move(emitter)](double fraction, std::string_view stage) {
        token.throwIfCancelled();
        JobProgress p;
        p.fraction = std::clamp(fraction, 0.0, 1.0);
        p.stage = QString::fromUtf8(stage.data(), static_cast<qsizetype>(stage.size()));
        p.secondsElapsed = timer->nsecsElapsed() / 1e9;
        p.secondsLeft = p.fraction > 0.0 ? p.secondsElapsed * (1.0 - p.fraction) / p.fraction : -1.0;
        QMetaObject::invokeMethod(target, [emitter, p] { emitter(p); }, Qt::QueuedConnection);
    };
}

} // namespace

bool Controller::jobBusy() const {
    std::lock_guard lock(m_mutex);
    return m_jobToken != nullptr;
}

void Controller::cancelJob() {
    std::lock_guard lock(m_mutex);
    if (m_jobToken) m_jobToken->cancel();
}

bool Controller::startJob(JobKind kind, std::function<void(const tomo::CancelToken&)> job) {
    std::shared_ptr<tomo::CancelToken> token;
    {
        std::lock_guard lock(m_mutex);
        if (m_jobToken || !m_source || m_shutDown.load()) return false;
        m_jobToken = std::make_shared<tomo::CancelToken>();
        token = m_jobToken;
    }
    emit jobStarted(kind);
    QMetaObject::invokeMethod(m_jobContext, [this, kind, job = std::move(job), token] {
        JobStatus status = JobStatus::Done;
        QString message;
        try {
            token->throwIfCancelled();
            job(*token);
        } catch (const tomo::Cancelled&) {
            status = JobStatus::Cancelled;
            message = tr("Cancelled");
        } catch (const std::exception& e) {
            status = JobStatus::Failed;
            message = QString::fromUtf8(e.what());
            const QString what = kind == JobKind::Export        ? tr("Reconstruction to file failed")
                                 : kind == JobKind::SubVolume   ? tr("3D sub-volume failed")
                                 : kind == JobKind::AxisSweep   ? tr("Axis sweep failed")
                                 : kind == JobKind::RangeEstimate ? tr("Range estimate failed")
                                                                : tr("Mode comparison failed");
            reportError(what, e);
        }
        {
            std::lock_guard lock(m_mutex);
            m_jobToken.reset();
        }
        toUi("job-finished", [this, kind, status, message] { emit jobFinished(kind, status, message); });
    }, Qt::QueuedConnection);
    return true;
}

bool Controller::exportVolume(const ExportRequest& request) {
    return startJob(JobKind::Export, [this, request](const tomo::CancelToken& token) {
        auto reader = openJobReader();
        ExportReport report;
        report.target = request.target;
        report.type = request.write.type;
        const auto progress = progressReporter(this, token, [this](const JobProgress& p) { emit jobProgress(p); });
        if (reader->info().divergentBeam) {
            const ConeSlices slices = coneSlices(*reader, request.params, request.firstRow, request.rowCount);
            auto writer = tomo::createVolumeWriter(request.target.toStdString(), slices.region.width,
                                                   slices.region.height, slices.count, request.write);
            report.report = tomo::reconstructConeVolume(*reader, slices.first, slices.count, *writer, progress);
            report.clipped = writer->clipped();
            writer.reset();
            toUi("export-finished", [this, report] { emit exportFinished(report); });
            return;
        }
        const tomo::VolumeJob job = volumeJob(*reader, request.params, request.firstRow, request.rowCount);
        const tomo::Region region = job.geometry.region;
        // The writer writes to a temporary and renames on commit; when the
        // job throws (cancel, error) it is destroyed uncommitted and the
        // temporary removed: no partial file under the target name.
        auto writer = tomo::createVolumeWriter(request.target.toStdString(), region.width, region.height,
                                               job.rowCount, request.write);
        report.report = tomo::reconstructVolume(*reader, job, *writer, progress);
        report.clipped = writer->clipped();
        writer.reset();
        toUi("export-finished", [this, report] { emit exportFinished(report); });
    });
}

bool Controller::estimateRange(const SliceParams& params, int firstRow, int rowCount) {
    return startJob(JobKind::RangeEstimate, [this, params, firstRow, rowCount](const tomo::CancelToken& token) {
        auto reader = openJobReader();
        const auto progress = progressReporter(this, token, [this](const JobProgress& p) { emit jobProgress(p); });
        tomo::RangeEstimate estimate;
        if (reader->info().divergentBeam) {
            const ConeSlices slices = coneSlices(*reader, params, firstRow, rowCount);
            estimate = tomo::estimateConeOutputRange(*reader, slices.first, slices.count, {}, progress);
        } else {
            estimate = tomo::estimateOutputRange(*reader, volumeJob(*reader, params, firstRow, rowCount), {}, progress);
        }
        toUi("range-estimated", [this, estimate] { emit rangeEstimated(estimate); });
    });
}

bool Controller::sweepAxis(const SliceParams& params, const std::vector<double>& axes, int thumbnailSize) {
    const int generation = m_generation;
    return startJob(JobKind::AxisSweep, [this, params, axes, thumbnailSize, generation](const tomo::CancelToken& token) {
        auto reader = openJobReader();
        if (params.stitched())
            throw tomo::InvalidArgument("with 360° half acquisition the axis is the stitched sinogram's centre: "
                                        "sweep the scan's axis in the Corrections panel instead");
        if (reader->info().divergentBeam)
            throw tomo::InvalidArgument("the axis sweep is for parallel-beam scans; with a fan or cone beam move the "
                                        "axis in the live view (each position filters the detector rows again)");
        tomo::PreprocessingStage stage(*reader, params.corrections);
        tomo::ImageStack rows = stage.load(params.row, 1);
        tomo::Image sinogram(rows.width, rows.height);
        sinogram.data = std::move(rows.data);
        tomo::AxisSweepJob job;
        job.axes = axes;
        job.axisOffsets = params.axisOffsets;
        job.region = params.region;
        job.options = params.options;
        const tomo::AxisSweepResult result = tomo::sweepAxis(
            sinogram, stage.outputAngles(), job,
            progressReporter(this, token, [this](const JobProgress& p) { emit jobProgress(p); }), &token);
        // One window for every trial (the middle one's percentiles), so they compare by eye.
        AxisSweep out;
        out.row = params.row;
        out.region = params.region;
        out.axes = result.axes;
        out.strategy = QString::fromStdString(result.strategy);
        out.secondsFilter = result.secondsFilter;
        out.secondsBackproject = result.secondsBackproject;
        const int middle = result.slices.depth / 2;
        const ImageStats stats = computeStats(result.slices.image(middle));
        out.low = stats.autoLow;
        out.high = stats.autoHigh > stats.autoLow ? stats.autoHigh : stats.autoLow + 1e-6f;
        const Colormap& map = colormap(QStringLiteral("grey"));
        for (int i = 0; i < result.slices.depth; ++i) {
            token.throwIfCancelled();
            const QImage image = renderImage(result.slices.image(i).data(), result.slices.width, result.slices.height,
                                             out.low, out.high, map);
            out.thumbnails.push_back(image.scaled(thumbnailSize, thumbnailSize, Qt::KeepAspectRatio,
                                                  Qt::SmoothTransformation));
            out.views.push_back(std::max(image.width(), image.height()) > kSweepViewSize
                                    ? image.scaled(kSweepViewSize, kSweepViewSize, Qt::KeepAspectRatio, Qt::SmoothTransformation)
                                    : image);
        }
        toUi("axis-sweep", [this, generation, out = std::move(out)] {
            if (generation == m_generation) emit axisSweepReady(out);
        });
    });
}

bool Controller::reconstructSubVolume(const SliceParams& params, int firstRow, int rowCount, int maxDisplaySize) {
    const int generation = m_generation;
    return startJob(JobKind::SubVolume, [this, params, firstRow, rowCount, maxDisplaySize,
                                         generation](const tomo::CancelToken& token) {
        QElapsedTimer timer;
        timer.start();
        auto reader = openJobReader();
        const auto progress = progressReporter(this, token, [this](const JobProgress& p) { emit jobProgress(p); });
        SubVolume out;
        tomo::Region region;
        std::optional<MemoryVolumeWriter> writer;
        if (reader->info().divergentBeam) { // cubic voxels: rows are as far apart as pixels
            const ConeSlices slices = coneSlices(*reader, params, firstRow, rowCount);
            region = slices.region;
            out.firstRow = slices.first.row;
            out.reconstructionProjections = reader->info().projections;
            writer.emplace(region.width, region.height, slices.count);
            tomo::reconstructConeVolume(*reader, slices.first, slices.count, *writer, progress);
        } else {
            // Reconstructed at the view's resolution: binned detector columns, a grid as coarse,
            // from the angles that grid needs (not with 360° stitching: the stage makes its
            // columns and pairs its projections).
            const int largest = std::max(params.effectiveRegion(reader->info().columns).width,
                                         params.effectiveRegion(reader->info().columns).height);
            const int b = params.stitched() ? 1 : std::max(1, (largest + maxDisplaySize - 1) / std::max(1, maxDisplaySize));
            const int k = params.stitched() ? 1 : projectionRun(reader->info().angles, largest / b);
            out.reconstructionBinning = b;
            std::shared_ptr<tomo::DatasetReader> source = reader;
            SliceParams p = params;
            if (b > 1 || k > 1) {
                source = std::make_shared<BinnedReader>(reader, b, k);
                p = binnedParams(params, b, k);
            }
            out.reconstructionProjections = source->info().projections;
            tomo::VolumeJob job = volumeJob(*source, p, firstRow, rowCount);
            // Four slices a pass where the strategy takes them: the `cpu` strategy's vector lanes
            // filled (7.0 s -> 2.6 s for 256² x 64 from 384 angles on the loaded 2 cores).
            job.options = tomo::BackendRegistry::instance().resolveOptions(job.options, job.geometry);
            if (tomo::ReconOptions four = job.options; job.options.slicesPerPass == 1) {
                four.slicesPerPass = 4;
                try {
                    tomo::BackendRegistry::instance().resolve(four, job.geometry).checkOptions(four);
                    job.options = four;
                    job.chunkRows = chunkRowsFor(job.rowCount, 4);
                } catch (const tomo::InvalidArgument&) {
                    // not this strategy: its slices per pass stay
                }
            }
            region = job.geometry.region;
            out.firstRow = job.firstRow;
            writer.emplace(region.width, region.height, job.rowCount);
            tomo::reconstructVolume(*source, job, *writer, progress);
        }
        out.reconstructedWidth = region.width;
        out.reconstructedHeight = region.height;
        {
            std::lock_guard lock(m_mutex);
            if (m_source && m_source->demo) {
                const tomo::PhantomSpec spec = m_source->demo->phantom();
                out.rowSpacing = spec.rows > 1 ? std::abs(tomo::phantomRowZ(spec, 1) - tomo::phantomRowZ(spec, 0)) *
                                                     spec.radiusFraction * spec.bins / 2.0
                                               : 1.0;
            }
        }
        // What is still larger than the view (fan/cone beams, 360° stitching) is shrunk here.
        const int largest = std::max(region.width, region.height);
        const int shrink = std::max(1, (largest + maxDisplaySize - 1) / std::max(1, maxDisplaySize));
        out.binning = out.reconstructionBinning * shrink;
        out.volume = binXY(writer->take(), shrink);
        // Attenuation per detector pixel, as the 2D view shows it (a binned pixel holds b of them).
        if (out.reconstructionBinning > 1)
            for (float& v : out.volume.data) v /= static_cast<float>(out.reconstructionBinning);
        out.stats = computeStats(out.volume.data);
        out.seconds = timer.nsecsElapsed() / 1e9;
        // Dropped when another dataset was opened meanwhile (the 3D view shows that one).
        toUi("sub-volume", [this, generation, out = std::move(out)] {
            if (generation == m_generation) emit subVolumeReady(out);
        });
    });
}

bool Controller::compareModes(const SliceParams& params, const std::vector<tomo::ReconOptions>& modes) {
    return startJob(JobKind::CompareModes, [this, params, modes](const tomo::CancelToken& token) {
        auto reader = openJobReader();
        const auto steps = static_cast<double>(modes.size() + 1);
        auto report = [this](double fraction, const QString& stage) {
            JobProgress p;
            p.fraction = fraction;
            p.stage = stage;
            toUi("job-progress", [this, p] { emit jobProgress(p); });
        };
        report(0.0, tr("cpu-reference"));
        tomo::PreviewRequest request = params.request();
        request.options = exactReferenceOptions(params.options, QStringLiteral("cpu"));
        tomo::PreviewSession referenceSession(reader);
        const tomo::PreviewResult exact = referenceSession.run(request, &token);
        const tomo::Image& reference = exact.slice;
        const auto mask = reconstructionDisc(exact.region, exact.gridSize);
        for (std::size_t i = 0; i < modes.size(); ++i) {
            token.throwIfCancelled();
            ModeComparison row;
            row.options = modes[i];
            report((static_cast<double>(i) + 1.0) / steps, row.label());
            try {
                tomo::PreviewSession session(reader);
                request.options = modes[i];
                session.run(request, &token); // load + filter
                tomo::PreviewResult best = session.run(request, &token);
                tomo::PreviewResult again = session.run(request, &token);
                if (again.secondsBackproject < best.secondsBackproject) best = std::move(again);
                row.options.strategy = best.strategy;
                row.exact = isExactMode(row.options);
                row.secondsBackproject = best.secondsBackproject;
                row.gups = best.gups;
                row.metrics = tomo::compareImages(best.slice, reference, mask);
            } catch (const tomo::Cancelled&) {
                throw;
            } catch (const std::exception& e) {
                row.error = QString::fromUtf8(e.what());
            }
            toUi("mode-compared", [this, row] { emit modeCompared(row); });
        }
        report(1.0, tr("done"));
    });
}

} // namespace tomo::ui
