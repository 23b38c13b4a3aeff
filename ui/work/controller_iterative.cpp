// The controller's work for the iterative methods (controller.h): the
// callback that shows an iterative live slice while it runs and stops it,
// and the reprojection of the slice on screen. Both run on the preview
// thread; their results reach the UI thread as plain structs.
#include "work/controller_private.h"

#include "views/colormap.h"
#include "work/slice_display.h"

#include "tomo/error.h"
#include "tomo/projector.h"
#include "tomo/registry.h"

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tomo::ui {
namespace {

/// The projector pair of the strategy that made the slice (a GPU slice is
/// projected on its GPU, a cpu-reference one in double); for a strategy
/// without a pair (gridrec), the one "auto" gives the iterative methods.
/// Matched, as the iterative methods' A: Joseph's linear interpolation in
/// float32, whatever FBP approximation made the slice (nearest, float16,
/// a kernel's tuning).
std::unique_ptr<tomo::ProjectorPair> reprojectionPair(const tomo::ReconGeometry& geometry, tomo::ReconOptions options,
                                                      const std::string& strategy) {
    const tomo::BackendRegistry& registry = tomo::BackendRegistry::instance();
    options.interpolation = tomo::Interpolation::Linear;
    options.precision = tomo::Precision::Float32;
    options.tuning.clear();
    const tomo::Backend* own = registry.find(strategy);
    if (own && own->hasProjector() && own->unavailableReason().empty()) {
        options.strategy = strategy;
    } else {
        options.strategy = "auto";
        options.iterative.method = tomo::Method::Sirt; // only to resolve to the family's pair
        options.strategy = registry.resolveOptions(options, geometry).strategy;
        own = registry.find(options.strategy);
    }
    options.iterative = tomo::IterativeOptions{};
    return own->createProjector(geometry, options);
}

/// A new image of a running iterative slice at most this often: colouring
/// it costs the iterations' threads a few ms on a 2-core CPU.
constexpr qint64 kImageIntervalMs = 250;
/// Residuals go out at least this often (the plot moves while images wait).
constexpr qint64 kResidualIntervalMs = 60;

/// `values` (x, y = 0 .. width, height) coloured with one window.
QImage render(const tomo::Image& image, float low, float high, const QString& map, tomo::WorkerPool* pool) {
    return renderImage(image.data.data(), image.width, image.height, low, high, colormap(map), pool);
}

} // namespace

void Controller::stopIterations() { m_stopIterations = true; }

tomo::IterationCallback Controller::iterationObserver(quint64 id, const SliceParams& params, int generation) {
    m_stopIterations = false;
    struct Progress {
        QElapsedTimer sinceImage, sinceResiduals;
        std::vector<std::pair<int, double>> residuals; // not sent yet
        std::vector<float> full;                       // the whole grid, copied out of the pair
    };
    auto progress = std::make_shared<Progress>();
    progress->sinceImage.start();
    progress->sinceResiduals.start();
    return [this, id, params, generation, progress](const tomo::IterationState& state) {
        Progress& p = *progress;
        p.residuals.emplace_back(state.iteration, state.residuals.empty() ? std::numeric_limits<double>::quiet_NaN()
                                                                          : state.residuals.front());
        const bool stop = m_stopIterations.load();
        const bool last = state.iteration >= state.iterations || stop; // the slice itself follows
        const bool imageDue = !last && p.sinceImage.elapsed() >= kImageIntervalMs;
        if (!last && !imageDue && p.sinceResiduals.elapsed() < kResidualIntervalMs) return true;
        IterationUpdate u;
        u.id = id;
        u.iterations = state.iterations;
        u.residuals = std::exchange(p.residuals, {});
        if (imageDue && state.image) {
            const int grid = m_session->stage().outputColumns(); // the run's stage: its corrections are set
            p.full.resize(static_cast<std::size_t>(grid) * grid);
            state.image(p.full);
            u.region = params.effectiveRegion(grid);
            tomo::Image image(u.region.width, u.region.height);
            for (int y = 0; y < u.region.height; ++y) {
                const auto from = p.full.begin() + static_cast<std::ptrdiff_t>(u.region.y + y) * grid + u.region.x;
                std::copy(from, from + u.region.width, image.data.begin() + static_cast<std::ptrdiff_t>(y) * u.region.width);
            }
            const ImageStats stats = computeStats(image.data, 256, 0.5, 99.5, &preparePool());
            u.display = prepareDisplay(image, stats, displaySettings(), &preparePool());
            u.image = std::make_shared<const tomo::Image>(std::move(image));
            p.sinceImage.restart();
        }
        p.sinceResiduals.restart();
        toUi("iteration", [this, generation, u = std::move(u)] {
            if (generation == m_generation) emit iterationProgress(u);
        });
        return !stop;
    };
}

void Controller::requestReprojection() {
    const int generation = m_generation;
    postPreview([this, generation] { runReprojection(generation); });
}

void Controller::runReprojection(int generation) {
    // Preview thread: the slice and its row with the corrections of its run
    // (the session keeps them), copied for the projection, which runs on
    // m_reprojections so that live slices go on meanwhile.
    if (generation != m_workerGeneration || !m_session) return;
    ReprojectionResult out;
    SliceResultPtr slice = m_lastSlice;
    tomo::Image sinogram;
    tomo::Geometry g;
    std::shared_ptr<tomo::ProjectorPair> fanPair; // a fan-beam slice's, made here (the session's geometry)
    try {
        if (!slice) throw tomo::InvalidArgument("no slice has been reconstructed yet");
        out.resultId = slice->id;
        out.row = slice->params.row;
        out.method = QString::fromUtf8(tomo::methodName(slice->params.options.iterative.method).data());
        const tomo::PreviewResult& preview = slice->preview;
        if (!(preview.region == tomo::Region{0, 0, preview.gridSize, preview.gridSize}))
            throw tomo::InvalidArgument("the reprojection needs the whole slice: clear the region (Parameters)");
        if (preview.divergent) fanPair = m_session->fanBeamPair(slice->params.request()); // refuses a cone beam
        sinogram = m_session->sinogram(slice->params.row);
        g.angles = m_session->stage().outputAngles();
        g.bins = sinogram.width;
        g.axis = preview.axis;
        g.axisOffsets = slice->params.axisOffsets;
    } catch (const std::exception& e) {
        postReprojection(generation, failedReprojection(out, e));
        return;
    }
    (void)preparePool(); // made here: the job only uses it
    m_reprojections.start([this, generation, out = std::move(out), slice = std::move(slice),
                           sinogram = std::move(sinogram), g = std::move(g), fanPair = std::move(fanPair)]() mutable {
        try {
            const tomo::PreviewResult& preview = slice->preview;
            const std::shared_ptr<tomo::ProjectorPair> pair =
                fanPair ? std::move(fanPair)
                        : reprojectionPair(tomo::ReconGeometry::fullSlice(std::move(g)), slice->params.options,
                                           preview.strategy);
            out.projector = QString::fromStdString(pair->name());
            tomo::Reprojection r = tomo::reproject(*pair, preview.slice.data, sinogram.data);
            out.norm = r.norm;
            out.relativeNorm = r.relativeNorm;
            out.measured = std::move(sinogram);
            out.projected = tomo::Image(out.measured.width, out.measured.height);
            out.projected.data = std::move(r.projected);
            out.difference = tomo::Image(out.measured.width, out.measured.height);
            out.difference.data = std::move(r.difference);
            // Measured and projected in one window (the measured data's), so they read alike.
            const ImageStats stats = computeStats(out.measured.data, 256, 0.5, 99.5, &preparePool());
            out.measuredRendered = render(out.measured, stats.autoLow, stats.autoHigh, QStringLiteral("grey"), &preparePool());
            out.projectedRendered = render(out.projected, stats.autoLow, stats.autoHigh, QStringLiteral("grey"), &preparePool());
            std::vector<float> magnitude(out.difference.data.size());
            std::transform(out.difference.data.begin(), out.difference.data.end(), magnitude.begin(),
                           [](float v) { return std::abs(v); });
            out.range = std::max(percentile(magnitude, 99.5), std::numeric_limits<float>::min());
            const auto diverging =
                std::find_if(colormaps().begin(), colormaps().end(), [](const Colormap& c) { return c.diverging; });
            out.differenceRendered = render(out.difference, -out.range, out.range,
                                            diverging != colormaps().end() ? diverging->name : QStringLiteral("grey"),
                                            &preparePool());
        } catch (const std::exception& e) {
            out = failedReprojection(out, e);
        }
        postReprojection(generation, std::move(out));
    });
}

ReprojectionResult Controller::failedReprojection(const ReprojectionResult& of, const std::exception& e) {
    ReprojectionResult failed;
    failed.resultId = of.resultId;
    failed.row = of.row;
    failed.method = of.method;
    failed.error = QString::fromUtf8(e.what());
    return failed;
}

void Controller::postReprojection(int generation, ReprojectionResult out) {
    toUi("reprojection", [this, generation, out = std::move(out)] {
        if (generation == m_generation) emit reprojectionReady(out);
    });
}

} // namespace tomo::ui
