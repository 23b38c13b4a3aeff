#include "run/cone_preview.h"

#include "tomo/cone_volume.h"

#include "tomo/error.h"
#include "tomo/iterative.h"
#include "tomo/projector.h"
#include "tomo/registry.h"
#include "tomo/worker_pool.h"

#include "recon/cpu_plan.h"
#include "run/preview_bands.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <span>
#include <string>

namespace tomo::preview {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Loaded rows reach this far beyond the ones a slice needs, so stepping
/// through slices reads the detector once every few steps.
constexpr int kRowMargin = 8;

/// How far the axis may move from where the band was filtered, times the
/// focal length f in pixels, before it is filtered again. The cosine weight
/// g(s) = 1 / sqrt(1 + ((u - u0 - s) / f)^2 + t^2), interpolated through
/// s = c - h, c, c + h (h = kReach f), misses by at most
/// max|g⁽³⁾/g| f³ / 6 * 2 / (3 sqrt 3) * kReach³ = 2.07 / 6 * 0.385 * 8e-6
/// ~ 1.1e-6 of itself (the filtering and back-projection are linear in it).
constexpr double kReach = 0.02;

/// `p` seen by a detector whose columns are shifted by `du` and whose rows
/// start at `firstRow`: (u + du, v - firstRow).
ProjectionMatrix moved(const ProjectionMatrix& p, double du, int firstRow) {
    ProjectionMatrix out = p;
    for (int c = 0; c < 4; ++c) {
        out.m[c] += du * p.m[8 + c];
        out.m[4 + c] -= firstRow * p.m[8 + c];
    }
    return out;
}

} // namespace

ConeSlicePreview::ConeSlicePreview(const DatasetInfo& info) : m_setup(coneSetup(info)) {
    double sum = 0.0;
    for (const ProjectionMatrix& p : m_setup.geometry.views) {
        sum += p.m[3] / p.m[11]; // column of the origin
        m_reach.push_back(kReach * describeView(p, "view").focalU);
    }
    m_defaultAxis = sum / m_setup.geometry.viewCount();
}

void ConeSlicePreview::reset() {
    m_projections = {};
    m_loadedGeneration = -1;
    m_band = {};
    m_bandValues = {};
    m_centre = {};
    m_sides = {};
    m_moved = {};
    m_filteredGeneration = -1;
}

ConeGeometry ConeSlicePreview::bandAt(const RowRange& rows, std::span<const double> shifts) const {
    ConeGeometry band{m_setup.geometry.columns, rows.count, {}};
    for (int p = 0; p < m_setup.geometry.viewCount(); ++p)
        band.views.push_back(moved(m_setup.geometry.views[p], shifts[p], rows.first));
    return band;
}

bool ConeSlicePreview::withinReach(std::span<const double> shifts) const {
    if (m_centre.views.empty() || m_centre.coverage.shortScan) return false;
    for (std::size_t p = 0; p < shifts.size(); ++p)
        if (!(std::abs(shifts[p] - m_centreShifts[p]) <= m_reach[p])) return false;
    return true;
}

void ConeSlicePreview::moveFiltered(std::span<const double> shifts, const FdkOptions& fdk, PreviewResult& result) {
    const int views = m_setup.geometry.viewCount();
    if (m_sides[0].views.empty()) {
        const auto filterStart = Clock::now();
        for (int side = 0; side < 2; ++side) {
            std::vector<double> at = m_centreShifts;
            for (int p = 0; p < views; ++p) at[p] += (side == 0 ? -1.0 : 1.0) * m_reach[p];
            m_sides[side] = fdkFilter(bandAt(m_filteredRows, at), m_bandValues, fdk);
            ++m_filterRuns;
        }
        result.filtered = true;
        result.secondsFilter = secondsSince(filterStart);
    }
    // Per view, the parabola through (c - h, below), (c, centre), (c + h, above) at the shift.
    m_moved.columns = m_centre.columns;
    m_moved.rows = m_centre.rows;
    m_moved.coverage = m_centre.coverage;
    m_moved.views.clear();
    for (const ProjectionMatrix& view : bandAt(m_filteredRows, shifts).views) m_moved.views.push_back(describeView(view, "view").normalised);
    m_moved.data.resize(m_centre.data.size());
    const std::size_t image = static_cast<std::size_t>(m_centre.columns) * m_centre.rows;
    WorkerPool pool(cpu::resolveThreads(fdk.threads));
    pool.parallelFor(views, [&](int p, int) {
        const double x = (shifts[p] - m_centreShifts[p]) / m_reach[p];
        const auto below = static_cast<float>(0.5 * x * (x - 1.0)), centre = static_cast<float>(1.0 - x * x),
                   above = static_cast<float>(0.5 * x * (x + 1.0));
        const std::size_t first = image * static_cast<std::size_t>(p);
        for (std::size_t i = first; i < first + image; ++i)
            m_moved.data[i] = below * m_sides[0].data[i] + centre * m_centre.data[i] + above * m_sides[1].data[i];
    });
}

ConeSlicePreview::RowRange ConeSlicePreview::detectorRows(const Region& region, int first, int last) const {
    // v is a ratio of linear functions of (x, y, z): over the box of the
    // slices' voxels its extremes lie at the corners (the voxel centres at
    // the border, widened by half a voxel).
    const VolumeGrid& g = m_setup.grid;
    const double half = 0.5 * g.voxelSize;
    const double xs[2] = {g.x(region.x) - half, g.x(region.x + region.width - 1) + half};
    const double ys[2] = {g.y(region.y) - half, g.y(region.y + region.height - 1) + half};
    const double zs[2] = {g.z(first), g.z(last)};
    double low = std::numeric_limits<double>::infinity(), high = -low;
    for (const ProjectionMatrix& p : m_setup.geometry.views)
        for (double x : xs)
            for (double y : ys)
                for (double z : zs) {
                    const auto [uw, vw, w] = p.apply(x, y, z);
                    if (!(w > 0.0)) continue; // behind the source: never reached
                    low = std::min(low, vw / w);
                    high = std::max(high, vw / w);
                }
    const int rows = m_setup.geometry.rows;
    if (!(low <= high)) return {rows / 2, 1};
    const int firstRow = static_cast<int>(std::clamp(std::floor(low) - 1.0, 0.0, rows - 1.0));
    const int lastRow = static_cast<int>(std::clamp(std::ceil(high) + 1.0, 0.0, rows - 1.0));
    return {firstRow, std::max(1, lastRow - firstRow + 1)};
}

VolumeGrid ConeSlicePreview::part(const Region& region, int first, int count) const {
    const VolumeGrid& g = m_setup.grid;
    VolumeGrid out{region.width, region.height, count, g.voxelSize, g.centre};
    // Whole and half numbers: exact, so out.x(i) == g.x(region.x + i) bit for bit.
    out.shift = {g.shift[0] + region.x - (g.nx - 1) / 2.0 + (region.width - 1) / 2.0,
                 g.shift[1] + region.y - (g.ny - 1) / 2.0 + (region.height - 1) / 2.0,
                 g.shift[2] + first - (g.nz - 1) / 2.0 + (count - 1) / 2.0};
    return out;
}

ConeSlicePreview::Loaded ConeSlicePreview::load(const PreviewRequest& request, int last, PreprocessingStage& stage,
                                                int stageGeneration, PreviewResult& result,
                                                const CancelToken* cancel) {
    auto checkCancel = [cancel] {
        if (cancel) cancel->throwIfCancelled();
    };
    const ConeGeometry& geometry = m_setup.geometry;
    const VolumeGrid& grid = m_setup.grid;
    const int views = geometry.viewCount(), columns = geometry.columns;

    // The cheap checks first, so a bad request fails before any work.
    if (request.corrections.halfAcquisition.enabled)
        throw InvalidArgument("360° half-acquisition stitching does not apply to fan/cone-beam data (FDK takes the "
                              "divergent views as they are)");
    for (int slice : {request.row, last})
        if (slice < 0 || slice >= grid.nz)
            throw InvalidArgument("slice " + std::to_string(slice) + " is outside the volume (0.." +
                                  std::to_string(grid.nz - 1) + ")");
    const double axis = request.axis.value_or(m_defaultAxis);
    validateAxis(axis, request.axisOffsets, views);
    const Region region = request.region.value_or(Region{0, 0, grid.nx, grid.ny});
    validateRegion(region, grid.nx, grid.ny);
    FdkOptions fdk;
    fdk.filter = request.options.filter;
    fdk.threads = request.options.threads;
    fdk.device = request.options.device;
    fdk.backprojector = coneBackprojectorFor(request.options.strategy, true);

    result.row = request.row;
    result.axis = axis;
    result.region = region;
    result.gridSize = grid.nx;
    result.projections = views;
    result.strategy = std::string(coneBackprojectorName(fdk.backprojector));
    result.divergent = true;
    checkCancel();

    // Detector rows, corrected by the stage, in view order.
    const RowRange rows = detectorRows(region, request.row, last);
    if (stageGeneration != m_loadedGeneration || rows.first < m_loaded.first ||
        rows.first + rows.count > m_loaded.first + m_loaded.count) {
        const auto loadStart = Clock::now();
        m_loadedGeneration = -1;
        const int first = std::max(0, rows.first - kRowMargin);
        const int count = std::min(geometry.rows, rows.first + rows.count + kRowMargin) - first;
        PreprocessStats stats;
        const ImageStack sinograms = stage.load(first, count, &stats); // [row][view][column]
        if (sinograms.width != columns || sinograms.height != views)
            throw InvalidArgument("the corrections give " + std::to_string(sinograms.height) + " views of " +
                                  std::to_string(sinograms.width) + " columns; the fan/cone-beam geometry has " +
                                  std::to_string(views) + " of " + std::to_string(columns));
        m_projections = sinograms.swapDepthAndHeight().data;
        m_loaded = {first, count};
        m_loadedStats = std::move(stats);
        m_loadedGeneration = stageGeneration;
        ++m_loadRuns;
        result.secondsLoad = secondsSince(loadStart);
        checkCancel();
    }
    result.corrections = m_loadedStats;

    return {fdk, rows, detectorShifts(request)};
}

std::vector<double> ConeSlicePreview::detectorShifts(const PreviewRequest& request) const {
    const double axis = request.axis.value_or(m_defaultAxis);
    std::vector<double> shifts(m_setup.geometry.viewCount(), axis - m_defaultAxis);
    for (std::size_t p = 0; p < request.axisOffsets.size(); ++p) shifts[p] += request.axisOffsets[p];
    return shifts;
}

std::unique_ptr<ProjectorPair> ConeSlicePreview::fanBeamPair(const PreviewRequest& request,
                                                             const IterativeOptions& options) const {
    const ConeGeometry& geometry = m_setup.geometry;
    if (geometry.rows != 1)
        throw InvalidArgument("the fan-beam projector pair: this scan has " + std::to_string(geometry.rows) +
                              " detector rows (a cone beam, whose slices share their rays)");
    validateAxis(request.axis.value_or(m_defaultAxis), request.axisOffsets, geometry.viewCount());
    const bool gpu = coneBackprojectorFor(request.options.strategy, true) == ConeBackprojector::Cuda;
    return makeConeProjector(bandAt(RowRange{0, 1}, detectorShifts(request)),
                             part(Region{0, 0, m_setup.grid.nx, m_setup.grid.ny}, 0, 1), options,
                             request.options.threads, gpu ? std::optional<int>(request.options.device) : std::nullopt);
}

FdkOptions ConeSlicePreview::prepare(const PreviewRequest& request, int last, PreprocessingStage& stage,
                                     int stageGeneration, PreviewResult& result, const CancelToken* cancel) {
    Loaded loaded = load(request, last, stage, stageGeneration, result, cancel);
    const FdkOptions fdk = loaded.fdk;
    const RowRange rows = loaded.rows;
    std::vector<double> shifts = std::move(loaded.shifts);
    const int views = m_setup.geometry.viewCount(), columns = m_setup.geometry.columns;
    auto checkCancel = [cancel] {
        if (cancel) cancel->throwIfCancelled();
    };

    // Those rows weighted and filtered.
    const bool gpu = fdk.backprojector == ConeBackprojector::Cuda;
    const bool sameBand = m_filteredGeneration == stageGeneration && m_filteredRows == rows &&
                          m_filterOptions.window == fdk.filter.window && m_filterOptions.padding == fdk.filter.padding &&
                          m_filterThreads == fdk.threads;
    // (A CPU back-projector after the GPU's finds no m_centre: not within reach.)
    if (!sameBand || (gpu && m_bandShifts != shifts) || (!gpu && !withinReach(shifts))) {
        const auto filterStart = Clock::now();
        m_filteredGeneration = -1;
        m_filteredRows = rows;
        m_band = bandAt(m_filteredRows, shifts);
        const std::size_t line = static_cast<std::size_t>(columns);
        m_bandValues.resize(line * rows.count * views);
        for (int p = 0; p < views; ++p)
            std::copy_n(m_projections.data() + (static_cast<std::size_t>(p) * m_loaded.count + rows.first - m_loaded.first) * line,
                        line * rows.count, m_bandValues.data() + static_cast<std::size_t>(p) * rows.count * line);
        // The GPU filters the raw band itself, each time it back-projects.
        m_centre = gpu ? FilteredProjections{} : fdkFilter(m_band, m_bandValues, fdk);
        m_centreShifts = shifts;
        m_sides = {};
        m_moved = {};
        m_bandShifts = std::move(shifts);
        m_filterOptions = fdk.filter;
        m_filterThreads = fdk.threads;
        m_filteredGeneration = stageGeneration;
        ++m_filterRuns;
        result.filtered = true;
        result.secondsFilter = secondsSince(filterStart);
        checkCancel();
    } else if (m_bandShifts != shifts) { // the CPU's, the axis within reach: filtered at most on the first step
        if (shifts == m_centreShifts)
            m_moved = {};
        else
            moveFiltered(shifts, fdk, result);
        m_band = bandAt(m_filteredRows, shifts);
        m_bandShifts = std::move(shifts);
        checkCancel();
    }
    return fdk;
}

void ConeSlicePreview::backprojectPart(const VolumeGrid& grid, std::span<float> out, const FdkOptions& fdk) const {
    if (fdk.backprojector != ConeBackprojector::Cuda) {
        backprojectCone(m_moved.views.empty() ? m_centre : m_moved, grid, m_setup.grid.voxelSize, out, fdk);
        return;
    }
    const ImageStack part = reconstructFdk(m_band, m_bandValues, grid, fdk);
    std::copy(part.data.begin(), part.data.end(), out.begin());
}

PreviewResult ConeSlicePreview::runIterative(const PreviewRequest& request, PreprocessingStage& stage,
                                             int stageGeneration, const CancelToken* cancel) {
    const auto start = Clock::now();
    const IterativeOptions& options = request.options.iterative;
    const std::string method(methodName(options.method));
    if (m_setup.geometry.rows != 1)
        throw InvalidArgument(method + " in the live view: fan-beam scans only (one detector row); the slices of a "
                              "cone-beam scan share its rays, so an iterative method reconstructs the whole volume "
                              "at once (tomo-recon --method " + method + ")");
    if (options.projector == ProjectorKind::Fourier)
        throw InvalidArgument("the Fourier projector pair is made for parallel-beam scans; a fan-beam scan is "
                              "projected with Joseph's pair");
    PreviewResult result;
    (void)load(request, request.row, stage, stageGeneration, result, cancel); // one row: m_projections [view][column]

    // The whole slice: the region is cut out of it (a region alone would not
    // explain the data).
    const auto itStart = Clock::now();
    const VolumeGrid& grid = m_setup.grid;
    const auto pair = fanBeamPair(request, options);
    std::vector<float> whole(grid.voxels());
    result.iterative = solveOnce(*pair, options, m_projections, whole, [&](const IterationState& state) {
        if (cancel) cancel->throwIfCancelled();
        return request.onIteration ? request.onIteration(state) : true;
    });
    const Region& region = result.region;
    result.slice = Image(region.width, region.height);
    for (int y = 0; y < region.height; ++y)
        std::copy_n(whole.begin() + static_cast<std::ptrdiff_t>(region.y + y) * grid.nx + region.x, region.width,
                    result.slice.data.begin() + static_cast<std::ptrdiff_t>(y) * region.width);
    result.strategy = pair->name();
    result.secondsBackproject = secondsSince(itStart);
    result.secondsTotal = secondsSince(start);
    return result;
}

PreviewResult ConeSlicePreview::run(const PreviewRequest& request, PreprocessingStage& stage, int stageGeneration,
                                    const CancelToken* cancel) {
    if (request.options.iterative.isIterative()) return runIterative(request, stage, stageGeneration, cancel);
    const auto start = Clock::now();
    PreviewResult result;
    const FdkOptions fdk = prepare(request, request.row, stage, stageGeneration, result, cancel);
    const Region region = result.region;

    // The region at z, in bands of slice rows when the run can be cancelled.
    result.slice = Image(region.width, region.height);
    const bool gpu = fdk.backprojector == ConeBackprojector::Cuda;
    if (m_updatesPerSecond <= 0.0) m_updatesPerSecond = gpu ? 50e9 : 1e9;
    const auto bpStart = Clock::now();
    result.bands = backprojectInBands(region, static_cast<double>(region.width) * result.projections, gpu ? 32 : 8,
                                      gpu ? kGpuBandSeconds : kCpuBandSeconds, m_updatesPerSecond, cancel,
                                      [&](const Region& band, int y) {
                                          float* out = result.slice.data.data() +
                                                       static_cast<std::size_t>(y) * region.width;
                                          backprojectPart(part(band, request.row, 1),
                                                          std::span<float>(out, band.pixels()), fdk);
                                      });
    result.secondsBackproject = secondsSince(bpStart);
    if (result.secondsBackproject > 0.0) {
        m_updatesPerSecond = static_cast<double>(region.pixels()) * result.projections / result.secondsBackproject;
        result.gups = m_updatesPerSecond / 1e9;
    }
    if (cancel) cancel->throwIfCancelled();
    result.secondsTotal = secondsSince(start);
    return result;
}

VolumeReport ConeSlicePreview::reconstruct(const PreviewRequest& request, int slices, PreprocessingStage& stage,
                                           VolumeWriter& writer, const ProgressCallback& progress) {
    const auto start = Clock::now();
    auto report = [&](double fraction, std::string_view what) {
        if (progress) progress(fraction, what);
    };
    if (slices < 1) throw InvalidArgument("FDK volume: " + std::to_string(slices) + " slices (expected at least 1)");
    if (request.options.iterative.isIterative()) {
        // A fan beam's one slice, as the live view makes it (run() checks the rest).
        report(0.0, "iterating");
        PreviewRequest iterating = request;
        iterating.onIteration = [&](const IterationState& state) {
            report(0.9 * state.iteration / std::max(1, state.iterations), "iterating");
            return request.onIteration ? request.onIteration(state) : true;
        };
        if (m_setup.geometry.rows == 1 && slices != 1)
            throw InvalidArgument("a fan-beam scan has one slice; " + std::to_string(slices) + " were asked for");
        const PreviewResult slice = runIterative(iterating, stage, -2, nullptr);
        VolumeReport out;
        out.strategy = slice.strategy;
        out.slices = 1;
        out.chunkRows = 1;
        out.preprocess = slice.corrections;
        out.warnings = stage.warnings();
        out.secondsRead = slice.secondsLoad;
        out.secondsReconstruct = slice.secondsBackproject;
        report(0.9, "writing");
        const auto writeStart = Clock::now();
        writer.writeSlices(0, 1, slice.slice.data);
        writer.commit();
        out.secondsWrite = secondsSince(writeStart);
        report(1.0, "writing");
        out.peakBufferBytes = (m_projections.size() + 2 * slice.slice.data.size()) * sizeof(float);
        out.secondsTotal = secondsSince(start);
        return out;
    }
    report(0.0, "reading and filtering");
    PreviewResult figures;
    const FdkOptions fdk = prepare(request, request.row + slices - 1, stage, -2, figures, nullptr);
    VolumeReport out;
    out.strategy = figures.strategy;
    out.slices = slices;
    out.preprocess = figures.corrections;
    out.warnings = stage.warnings();
    out.secondsRead = figures.secondsLoad;
    out.secondsReconstruct = figures.secondsFilter;

    // Chunks of about 1/20 of the volume (at least one slice), written as
    // made; on the GPU one, filtered once.
    const Region region = figures.region;
    const int chunk = fdk.backprojector == ConeBackprojector::Cuda ? slices : std::max(1, slices / 20);
    out.chunkRows = chunk;
    std::vector<float> values;
    for (int done = 0; done < slices;) {
        report(0.1 + 0.9 * done / slices, "back-projection");
        const int count = std::min(chunk, slices - done);
        values.assign(region.pixels() * static_cast<std::size_t>(count), 0.0f);
        const auto bpStart = Clock::now();
        backprojectPart(part(region, request.row + done, count), values, fdk);
        out.secondsReconstruct += secondsSince(bpStart);
        const auto writeStart = Clock::now();
        writer.writeSlices(done, count, values);
        out.secondsWrite += secondsSince(writeStart);
        done += count;
    }
    report(1.0, "writing");
    const auto commitStart = Clock::now();
    writer.commit();
    out.secondsWrite += secondsSince(commitStart);
    out.peakBufferBytes = (m_projections.size() + m_bandValues.size() + m_centre.data.size() + m_sides[0].data.size() +
                           m_sides[1].data.size() + m_moved.data.size() + values.size()) *
                          sizeof(float);
    out.secondsTotal = secondsSince(start);
    if (out.secondsReconstruct > 0.0)
        out.gups = static_cast<double>(region.pixels()) * slices * figures.projections / out.secondsReconstruct / 1e9;
    return out;
}

} // namespace tomo::preview

namespace tomo {

VolumeReport reconstructConeVolume(DatasetReader& reader, const PreviewRequest& first, int slices,
                                   VolumeWriter& writer, const ProgressCallback& progress) {
    preview::ConeSlicePreview cone(reader.info());
    PreprocessingStage stage(reader, first.corrections);
    return cone.reconstruct(first, slices, stage, writer, progress);
}

} // namespace tomo
