#include "work/slice_session.h"

#include "work/controller.h"
#include "work/latency_probe.h"

#include "tomo/metrics.h"
#include "tomo/registry.h"

#include <QStringBuilder>

#include <ctime>
#include <iterator>
#include <utility>

namespace tomo::ui {
namespace {

/// CPU time the calling thread has used, in seconds (-1 where unknown).
double threadCpuSeconds() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
    timespec t{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0) return static_cast<double>(t.tv_sec) + t.tv_nsec / 1e9;
#endif
    return -1.0;
}

} // namespace

QString modeText(const tomo::ReconOptions& o) {
    if (o.iterative.isIterative()) return methodLabel(o.iterative);
    return QString::fromUtf8(tomo::interpolationName(o.interpolation).data()) % QStringLiteral(" · ") %
           QString::fromUtf8(tomo::precisionName(o.precision).data());
}

SliceSession::SliceSession(Controller* controller, QObject* parent) : QObject(parent), m_controller(controller) {
    m_clock.start();
}

void SliceSession::listen() {
    connect(m_controller, &Controller::sliceReady, this, &SliceSession::onSliceReady);
    connect(m_controller, &Controller::referenceReady, this, [this](const ReferencePtr& ref) {
        noteUiActivity("reference-ready");
        m_reference = ref;
        m_referenceRequested.reset();
        m_referenceError.clear();
        emit comparisonChanged();
        emit referenceShown();
    });
    connect(m_controller, &Controller::comparisonReady, this, [this](const Comparison& comparison) {
        noteUiActivity("comparison-ready");
        if (!m_result || comparison.resultId != m_result->id) return; // made for a slice no longer shown
        m_comparison = comparison;
        emit comparisonChanged();
    });
    connect(m_controller, &Controller::referenceFailed, this, [this](const QString& message) {
        m_referenceError = message; // m_referenceRequested stays: not asked again for the same parameters
        emit comparisonChanged();
    });
}

void SliceSession::reset() {
    m_result.reset();
    m_comparison.reset();
    m_reference.reset();
    m_pinned.reset();
    m_controller->setPinned(nullptr);
    m_requestedAt.clear();
    m_awaitingPaint = 0;
    m_referenceRequested.reset();
    m_referenceError.clear();
    m_line.reset();
}

quint64 SliceSession::requestSlice(const SliceParams& params) {
    const quint64 id = m_controller->requestSlice(params);
    m_requestedAt[id] = m_clock.nsecsElapsed();
    requestReferenceIfNeeded();
    return id;
}

void SliceSession::cancel() {
    m_controller->cancelSlice();  // drops the pending reference too
    m_referenceRequested.reset(); // so the next request asks for it again
    emit comparisonChanged();
}

void SliceSession::compareAgain() {
    m_comparison.reset();
    m_controller->requestComparison();
    requestReferenceIfNeeded();
    emit comparisonChanged();
}

const ReferenceResult* SliceSession::activeReference() const {
    const ReferenceKind kind = wish().kind;
    const ReferenceResult* ref = kind == ReferenceKind::Pinned ? m_pinned.get()
                                                               : (m_reference && m_reference->kind == kind ? m_reference.get() : nullptr);
    if (!ref || !m_result || !referenceFits(*ref, *m_result)) return nullptr;
    return ref;
}

const Comparison* SliceSession::comparisonToShow() const {
    if (!m_result || !m_comparison || m_comparison->resultId != m_result->id || m_comparison->kind != wish().kind ||
        !activeReference())
        return nullptr;
    return &*m_comparison;
}

void SliceSession::requestReferenceIfNeeded(bool asked) {
    const Wish w = wish();
    if (!w.dataset) return;
    const ReferenceKind kind = w.kind;
    if (kind == ReferenceKind::Pinned) return;
    // Only while someone looks at it: the quality panel or a profile line.
    if (!asked && ((!w.watching && !m_line) || !w.automatic)) return;
    const SliceParams& p = w.params;
    const tomo::ReconOptions mode =
        exactReferenceOptions(p.options, m_result ? m_result->family : QStringLiteral("cpu"), m_result && m_result->preview.divergent);
    auto same = [&](const SliceParams& a, const tomo::ReconOptions& o) {
        return kind == ReferenceKind::Exact
                   ? a.sameGeometry(p) && o.strategy == mode.strategy && o.interpolation == mode.interpolation
                   : (a.row == p.row && a.region == p.region);
    };
    if (m_reference && m_reference->kind == kind && same(m_reference->params, m_reference->options)) return;
    if (m_referenceRequested && m_referenceRequestedKind == kind &&
        same(*m_referenceRequested, m_referenceRequestedOptions))
        return;
    m_referenceRequested = p;
    m_referenceRequestedKind = kind;
    m_referenceRequestedOptions = mode;
    m_referenceError.clear();
    m_controller->requestReference(kind, p, mode);
}

QString SliceSession::waitingText() {
    const Wish w = wish();
    if (activeReference()) {
        // The worker compared before this reference was chosen or arrived.
        if (m_result && !m_result->comparisonFollows && std::exchange(m_comparisonAskedFor, m_result->id) != m_result->id)
            m_controller->requestComparison();
        return tr("Comparing with the reference…");
    }
    if (w.kind == ReferenceKind::Pinned) return tr("The pinned result has another size (region); pin again.");
    if (!m_referenceRequested)
        return w.automatic ? tr("No reference computed for these parameters: press F5 to compute it.")
                           : tr("The reference follows changes only when asked: press Compute.");
    if (!m_referenceError.isEmpty()) return tr("The reference could not be computed: %1").arg(m_referenceError);
    return w.kind == ReferenceKind::Exact
               ? tr("Computing the %1 result for these parameters…").arg(referenceModeLabel(m_referenceRequestedOptions))
               : tr("Computing the true phantom image…");
}

std::optional<SliceSession::Profiles> SliceSession::profiles() const {
    if (!m_result || !m_line) return std::nullopt;
    const QLineF& l = *m_line;
    Profiles p;
    p.result = tomo::lineProfile(m_result->preview.slice, l.x1(), l.y1(), l.x2(), l.y2());
    p.resultLabel = tr("Result: %1 · %2").arg(QString::fromStdString(m_result->preview.strategy),
                                             modeText(m_result->params.options));
    p.referenceLabel = tr("Reference (waiting)");
    if (const ReferenceResult* ref = activeReference()) {
        p.reference = tomo::lineProfile(ref->image, l.x1(), l.y1(), l.x2(), l.y2());
        p.referenceLabel = ref->label;
    }
    return p;
}

ReferencePtr SliceSession::pinCurrent() {
    if (!m_result) return nullptr;
    auto pinned = std::make_shared<ReferenceResult>();
    pinned->kind = ReferenceKind::Pinned;
    pinned->params = m_result->params;
    pinned->options = m_result->params.options;
    pinned->image = m_result->preview.slice;
    // The corrections too: a pinned result is the "before" of a corrections change.
    pinned->label = tr("%1 · %2 · axis %3 · row %4 · %5")
                        .arg(QString::fromStdString(m_result->preview.strategy), modeText(m_result->params.options))
                        .arg(m_result->params.axis, 0, 'f', 3)
                        .arg(m_result->params.row)
                        .arg(QString::fromStdString(m_result->params.corrections.summary()));
    m_pinned = pinned;
    m_controller->setPinned(pinned);
    if (wish().kind == ReferenceKind::Pinned) { // the kind does not change: compare again here
        m_comparison.reset();
        m_controller->requestComparison();
    }
    return pinned;
}

void SliceSession::onSliceReady(const SliceResultPtr& result) {
    noteUiActivity("slice-ready");
    m_showCpuStart = threadCpuSeconds();
    const SliceResultPtr previous = std::exchange(m_result, result);
    m_comparison.reset(); // follows (comparisonReady) when a reference fits
    emit sliceShown(result, previous);
}

void SliceSession::painted() {
    const quint64 id = std::exchange(m_awaitingPaint, 0);
    if (id == 0) return;
    const auto it = m_requestedAt.find(id);
    if (it == m_requestedAt.end()) return;
    m_lastLatency = (m_clock.nsecsElapsed() - it->second) / 1e9;
    if (m_showCpuStart >= 0.0) m_lastShowCpu = threadCpuSeconds() - m_showCpuStart;
    m_requestedAt.erase(m_requestedAt.begin(), std::next(it)); // older requests were coalesced into this one
    emit resultOnScreen(id, m_lastLatency);
}

} // namespace tomo::ui
