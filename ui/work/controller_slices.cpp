// The controller's live slice flow (controller.h), on the preview thread:
// requests that coalesce (the latest wins), the slice prepared for the
// screen, references at the lowest priority, comparisons, the axis finder
// and the Data panel's views.
#include "work/controller_private.h"

#include "work/slice_display.h"

#include "tomo/axis_finder.h"
#include "tomo/error.h"
#include "tomo/phantom.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"
#include "tomo/worker_pool.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace tomo::ui {

namespace {

/// A live run older than this is cancelled when a newer request arrives.
constexpr qint64 kCancelRunningAfterMs = 250;

QString familyOf(const std::string& strategy) {
    const tomo::Backend* b = tomo::BackendRegistry::instance().find(strategy);
    return b ? QString::fromStdString(b->family()) : QString();
}

tomo::Image crop(const tomo::Image& full, const tomo::Region& r) {
    tomo::Image out(r.width, r.height);
    for (int y = 0; y < r.height; ++y)
        std::memcpy(&out.data[static_cast<std::size_t>(y) * r.width],
                    &full.data[static_cast<std::size_t>(r.y + y) * full.width + r.x],
                    static_cast<std::size_t>(r.width) * sizeof(float));
    return out;
}

} // namespace

quint64 Controller::requestSlice(const SliceParams& params) {
    quint64 id = 0;
    {
        std::lock_guard lock(m_mutex);
        id = ++m_sequence;
        m_pending->slice = std::make_pair(id, params);
        m_pending->sliceGeneration = m_generation;
        m_pending->sliceRequested.start();
        // A reference yields to any slice (it is queued again); a slice
        // yields to a newer one only when it has run a while.
        if (m_running && (m_runningReference || (m_runningSince.isValid() &&
                                                 m_runningSince.elapsed() > kCancelRunningAfterMs)))
            m_running->cancel();
    }
    scheduleDrain();
    return id;
}

void Controller::requestReference(ReferenceKind kind, const SliceParams& params,
                                  const tomo::ReconOptions& referenceOptions) {
    if (kind == ReferenceKind::Pinned) return;
    {
        std::lock_guard lock(m_mutex);
        m_pending->reference = Pending::Reference{kind, params, referenceOptions};
        m_pending->referenceGeneration = m_generation;
    }
    scheduleDrain();
}

void Controller::setDisplaySettings(const DisplaySettings& settings) {
    std::lock_guard lock(m_mutex);
    m_display = settings;
}

DisplaySettings Controller::displaySettings() const {
    std::lock_guard lock(m_mutex);
    return m_display;
}

void Controller::setPinned(ReferencePtr pinned) {
    std::lock_guard lock(m_mutex);
    m_pinned = std::move(pinned);
}

void Controller::requestComparison() {
    {
        std::lock_guard lock(m_mutex);
        m_pending->comparison = true;
        if (m_running && m_runningReference) m_running->cancel(); // queued again after the comparison
    }
    scheduleDrain();
}

void Controller::cancelSlice() {
    {
        std::lock_guard lock(m_mutex);
        ++m_cancelEpoch;
        m_pending->slice.reset();
        m_pending->reference.reset();
        if (m_running) m_running->cancel();
    }
    publishBusy();
}

bool Controller::sliceBusy() const {
    std::lock_guard lock(m_mutex);
    return sliceBusyLocked();
}

bool Controller::referenceBusy() const {
    std::lock_guard lock(m_mutex);
    return referenceBusyLocked();
}

bool Controller::sliceBusyLocked() const { return m_pending->slice.has_value() || (m_running && !m_runningReference); }

bool Controller::referenceBusyLocked() const {
    return m_pending->reference.has_value() || (m_running && m_runningReference);
}

void Controller::publishBusy() {
    std::lock_guard lock(m_mutex);
    publishBusyLocked();
}

void Controller::publishBusyLocked() {
    const bool slice = sliceBusyLocked(), reference = referenceBusyLocked();
    toUi("busy-state", [this, slice, reference] {
        if (slice != m_shownSliceBusy) emit busyChanged(m_shownSliceBusy = slice);
        if (reference != m_shownReferenceBusy) emit referenceBusyChanged(m_shownReferenceBusy = reference);
    });
}

void Controller::scheduleDrain() {
    bool startNow = false;
    {
        std::lock_guard lock(m_mutex);
        if (!m_drainScheduled) {
            m_drainScheduled = true;
            startNow = true;
        }
    }
    publishBusy();
    if (startNow) postPreview([this] { drain(); });
}

void Controller::drain() {
    for (;;) {
        std::optional<std::pair<quint64, SliceParams>> slice;
        double waited = 0.0;
        std::optional<Pending::Reference> reference;
        bool comparison = false;
        int generation = 0;
        quint64 epoch = 0;
        std::shared_ptr<tomo::CancelToken> token;
        DisplaySettings settings;
        {
            std::lock_guard lock(m_mutex);
            // Priority: the live slice, then comparisons, then references.
            if (m_pending->slice) {
                slice.swap(m_pending->slice);
                generation = m_pending->sliceGeneration;
                waited = m_pending->sliceRequested.nsecsElapsed() / 1e9;
            } else if (m_pending->comparison) {
                comparison = std::exchange(m_pending->comparison, false);
            } else if (m_pending->reference) {
                reference.swap(m_pending->reference);
                generation = m_pending->referenceGeneration;
            } else {
                m_drainScheduled = false;
                m_running.reset();
                publishBusyLocked();
                return;
            }
            token = std::make_shared<tomo::CancelToken>();
            m_running = token;
            m_runningReference = reference.has_value();
            m_runningSince.start();
            epoch = m_cancelEpoch;
            settings = m_display;
        }
        publishBusy();
        if (comparison) {
            // Dropped when a slice waits: that slice brings its own comparison.
            if (m_lastSlice)
                if (auto c = compareLastSlice(*m_lastSlice, settings, [this] { return sliceWaiting(); }))
                    toUi("comparison", [this, c = std::move(*c)] { emit comparisonReady(c); });
        } else if (generation == m_workerGeneration && m_session) { // else made for another dataset
            if (slice) {
                runSlice(slice->first, slice->second, generation, *token, waited);
            } else {
                try {
                    runReference(reference->kind, reference->params, reference->options, generation, *token);
                } catch (const tomo::Cancelled&) {
                    // Pre-empted by a slice or a comparison: run it again later
                    // unless the user cancelled or a newer reference is waiting.
                    std::lock_guard lock(m_mutex);
                    if (epoch == m_cancelEpoch && !m_pending->reference) {
                        m_pending->reference = std::move(reference);
                        m_pending->referenceGeneration = generation;
                    }
                }
            }
        }
        std::lock_guard lock(m_mutex);
        m_running.reset();
    }
}

ReferencePtr Controller::fittingReference(const SliceResult& slice, const DisplaySettings& settings) {
    if (!settings.compare) return nullptr;
    ReferencePtr reference;
    if (settings.referenceKind == ReferenceKind::Pinned) {
        std::lock_guard lock(m_mutex);
        reference = m_pinned;
    } else if (m_computedReference && m_computedReference->kind == settings.referenceKind) {
        reference = m_computedReference;
    }
    return reference && referenceFits(*reference, slice) ? reference : nullptr;
}

tomo::WorkerPool& Controller::preparePool() {
    // Two cores stay free: the UI thread must never wait for a core while
    // statistics, colours and comparisons run (nor the worker's next slice).
    if (!m_preparePool)
        m_preparePool = std::make_unique<tomo::WorkerPool>(std::max(1, QThread::idealThreadCount() - 2));
    return *m_preparePool;
}

bool Controller::sliceWaiting() const {
    std::lock_guard lock(m_mutex);
    return m_pending->slice.has_value();
}

std::optional<Comparison> Controller::compareLastSlice(const SliceResult& slice, const DisplaySettings& settings,
                                                       const std::function<bool()>& abandoned) {
    const ReferencePtr reference = fittingReference(slice, settings);
    if (!reference) return std::nullopt;
    // The disc mask changes only with the region (kept between live slices).
    if (!(m_discRegion == slice.preview.region) || m_discGrid != slice.preview.gridSize) {
        m_disc = reconstructionDisc(slice.preview.region, slice.preview.gridSize);
        m_discRegion = slice.preview.region;
        m_discGrid = slice.preview.gridSize;
    }
    try {
        return compareWithReference(slice, *reference,
                                    settings.discOnly ? std::span<const std::uint8_t>(m_disc)
                                                      : std::span<const std::uint8_t>(),
                                    settings.differenceZoom, &preparePool(), abandoned);
    } catch (const tomo::Cancelled&) {
        return std::nullopt; // stale: a newer slice brings its own comparison
    }
}

void Controller::runSlice(quint64 id, const SliceParams& params, int generation, const tomo::CancelToken& token,
                          double waited) {
    try {
        auto r = std::make_shared<SliceResult>();
        r->id = id;
        r->secondsWaiting = waited;
        r->params = params;
        try {
            tomo::PreviewRequest request = r->params.request();
            if (params.options.iterative.isIterative()) request.onIteration = iterationObserver(id, params, generation);
            r->preview = m_session->run(request, &token);
        } catch (const tomo::InvalidArgument& e) {
            // Corrections the dataset cannot take (360° on a 180° scan, columns
            // beyond the detector): said as such, the last good ones stay usable.
            if (r->params.corrections == m_goodCorrections) throw;
            reportError(tr("These corrections cannot be used on this dataset"), e);
            const QString message = QString::fromUtf8(e.what());
            toUi("corrections-rejected", [this, generation, id, corrections = r->params.corrections, message] {
                if (generation != m_generation) return;
                emit correctionsRejected(corrections, message);
                emit sliceFailed(id);
            });
            return;
        }
        m_goodCorrections = r->params.corrections;
        const tomo::PreprocessingStage& stage = m_session->stage();
        r->stage.columns = stage.outputColumns();
        r->stage.projections = stage.outputProjections();
        r->stage.stitchedAxis = stage.outputAxis();
        if (stage.outputAxis()) r->stage.scanAxis = stage.options().halfAcquisition.axis;
        r->stage.found = stage.foundHalfAcquisitionAxis();
        r->stage.warnings = stage.warnings();
        // What the screen needs, here rather than on the UI thread.
        QElapsedTimer timer;
        timer.start();
        r->stats = computeStats(r->preview.slice.data, 256, 0.5, 99.5, &preparePool());
        // FDK's back-projectors: "cuda" is no registered strategy.
        r->family = r->preview.divergent && r->preview.strategy == "cuda" ? QStringLiteral("cuda")
                                                                    : familyOf(r->preview.strategy);
        const DisplaySettings settings = displaySettings();
        r->display = prepareDisplay(r->preview.slice, r->stats, settings, &preparePool());
        r->comparisonFollows = fittingReference(*r, settings) != nullptr;
        r->secondsPrepare = timer.nsecsElapsed() / 1e9;
        m_lastSlice = r;
        toUi("slice", [this, generation, r = SliceResultPtr(r)] {
            if (generation == m_generation) emit sliceReady(r);
        });
        // The comparison after the slice: it never delays the image, and a
        // newer slice waiting makes it stale (dropped between its steps).
        if (r->comparisonFollows)
            if (auto c = compareLastSlice(*r, settings, [this] { return sliceWaiting(); }))
                toUi("comparison", [this, generation, c = std::move(*c)] {
                    if (generation == m_generation) emit comparisonReady(c);
                });
    } catch (const tomo::Cancelled&) {
        toUi("slice-cancelled", [this, id] { emit sliceCancelled(id); });
        return; // the opening's axis search waits for a slice that ends
    } catch (const std::exception& e) {
        reportError(tr("Reconstruction failed"), e);
        toUi("slice-failed", [this, generation, id] {
            if (generation == m_generation) emit sliceFailed(id);
        });
    }
    // The opening's axis search, once its first slice is on its way.
    if (m_axisSearchRow && generation == m_workerGeneration)
        searchAxis(*std::exchange(m_axisSearchRow, std::nullopt), generation, true);
}

void Controller::runReference(ReferenceKind kind, const SliceParams& params, const tomo::ReconOptions& options,
                              int generation, const tomo::CancelToken& token) {
    try {
        auto ref = std::make_shared<ReferenceResult>();
        ref->kind = kind;
        ref->params = params;
        QElapsedTimer timer;
        timer.start();
        const tomo::DatasetInfo& info = m_session->info();
        if (kind == ReferenceKind::Truth) {
            if (!m_demo) throw tomo::InvalidArgument("the true image is known only for the demo phantom");
            const tomo::Region region = params.effectiveRegion(info.columns);
            ref->image = crop(tomo::rasterizePhantom(m_demo->phantom(), params.row, info.columns, info.columns), region);
            ref->label = tr("True phantom");
        } else {
            if (!m_referenceSession) m_referenceSession = std::make_unique<tomo::PreviewSession>(m_reader);
            tomo::PreviewRequest rq = params.request();
            rq.options = options;
            ref->image = m_referenceSession->run(rq, &token).slice;
            ref->options = options;
            ref->label = referenceModeLabel(options);
        }
        ref->seconds = timer.nsecsElapsed() / 1e9;
        m_computedReference = ref;
        // Not when a slice waits (it cancelled this run): the reference is
        // kept, and the slice must not wait for a comparison it makes stale.
        std::optional<Comparison> comparison;
        if (m_lastSlice && !token.cancelled())
            comparison = compareLastSlice(*m_lastSlice, displaySettings(), [&] { return token.cancelled(); });
        toUi("reference", [this, generation, ref = ReferencePtr(std::move(ref)),
                                         comparison = std::move(comparison)] {
            if (generation != m_generation) return;
            emit referenceReady(ref);
            if (comparison) emit comparisonReady(*comparison);
        });
    } catch (const tomo::Cancelled&) {
        throw;
    } catch (const std::exception& e) {
        // Corrections the dataset refuses are said once, by the live slice.
        const bool refusedCorrections =
            dynamic_cast<const tomo::InvalidArgument*>(&e) && !(params.corrections == m_goodCorrections);
        if (!refusedCorrections) reportError(tr("Reference failed"), e);
        const QString message = QString::fromUtf8(e.what());
        toUi("reference-failed", [this, generation, message] {
            if (generation == m_generation) emit referenceFailed(message);
        });
    }
}

void Controller::findAxis(int row) {
    const int generation = m_generation;
    postPreview([this, row, generation] {
        if (generation != m_workerGeneration || !m_session) return;
        searchAxis(row, generation, false);
    });
}

void Controller::searchAxis(int row, int generation, bool onOpening) {
    // Preview thread: the corrected sinogram of the row (kept by the session
    // for the slice on screen) and the stage's angles, copied for the search.
    AxisResult r;
    r.row = row;
    r.onOpening = onOpening;
    tomo::Image sinogram;
    std::vector<double> angles;
    try {
        if (m_session->info().divergentBeam)
            throw tomo::InvalidArgument("the axis finder assumes a parallel beam; with a fan or cone beam move the "
                                        "axis in the live view (it shifts the detector sideways)");
        sinogram = m_session->sinogram(row);
        angles = m_session->stage().outputAngles();
    } catch (const std::exception& e) {
        axisSearchFailed(row, generation, onOpening, e);
        return;
    }
    // The search itself (2D FFTs: seconds on a 2048² sinogram) runs off the
    // preview thread, so live slices go on meanwhile.
    m_axisSearches.start([this, generation, r, sinogram = std::move(sinogram), angles = std::move(angles)]() mutable {
        try {
            QElapsedTimer timer;
            timer.start();
            r.estimate = tomo::findRotationAxis(sinogram, angles);
            r.seconds = timer.nsecsElapsed() / 1e9;
            toUi("axis-found", [this, generation, r] {
                if (generation == m_generation) emit axisFound(r);
            });
        } catch (const std::exception& e) {
            axisSearchFailed(r.row, generation, r.onOpening, e);
        }
    });
}

void Controller::axisSearchFailed(int row, int generation, bool onOpening, const std::exception& e) {
    // The opening's search is the program's idea: its failure is a note, not a dialog.
    if (!onOpening) reportError(tr("Axis finder failed"), e);
    const QString why = QString::fromUtf8(e.what());
    toUi("axis-failed", [this, generation, row, why] {
        if (generation == m_generation) emit axisFailed(row, why);
    });
}

void Controller::requestDataView(DataViewKind kind, int row, int angle) {
    const int generation = m_generation;
    postPreview([this, kind, row, angle, generation] {
        if (generation != m_workerGeneration || !m_session) return;
        DataView view;
        view.kind = kind;
        view.row = row;
        view.angle = angle;
        try {
            const tomo::DatasetInfo& info = m_session->info();
            if (kind == DataViewKind::Sinogram) {
                view.image = std::make_shared<const tomo::Image>(m_session->sinogram(row));
            } else if (info.logCorrected) {
                view.error = tr("This dataset holds sinograms already log-corrected: no raw projections, flats or darks.");
            } else {
                tomo::Image image(info.columns, info.rows);
                if (kind == DataViewKind::Projection) {
                    m_reader->readProjection(angle, image.data);
                    view.image = std::make_shared<const tomo::Image>(std::move(image));
                } else if (kind == DataViewKind::Flat ? m_reader->readMeanFlat(0, info.rows, image.data)
                                                      : m_reader->readMeanDark(0, info.rows, image.data)) {
                    view.image = std::make_shared<const tomo::Image>(std::move(image));
                } else {
                    view.error = kind == DataViewKind::Flat ? tr("This dataset has no flat fields.")
                                                            : tr("This dataset has no dark fields.");
                }
            }
            if (view.error.isEmpty()) {
                view.stats = computeStats(view.image->data);
                view.display = prepareDisplay(*view.image, view.stats, DisplaySettings{});
            }
        } catch (const std::exception& e) {
            view.error = QString::fromUtf8(e.what());
        }
        toUi("data-view", [this, generation, view = std::move(view)] {
            if (generation == m_generation) emit dataViewReady(view);
        });
    });
}

} // namespace tomo::ui
