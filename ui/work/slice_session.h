// The live slice's request/response cycle with the Controller, and what it
// is compared with: the slice on screen, the reference (exact mode, true
// phantom) asked for its parameters, the pinned result, the comparison that
// the worker made, the profile line, and the request -> screen timing.
// The window feeds it what the user wants (SliceSession::Wish) and shows
// what it holds; a new mode asks the Controller through it or beside it.
#pragma once

#include "work/recon_types.h"

#include <QElapsedTimer>
#include <QLineF>
#include <QObject>

#include <functional>
#include <map>
#include <optional>

namespace tomo::ui {

class Controller;

/// "linear · float32", or the iterative method's label: the mode of a result.
QString modeText(const tomo::ReconOptions& options);

class SliceSession : public QObject {
    Q_OBJECT
public:
    /// What the panels ask for now (read each time it matters).
    struct Wish {
        bool dataset = false;           ///< a dataset is open
        SliceParams params;             ///< the parameters on screen
        ReferenceKind kind = ReferenceKind::Exact;
        bool automatic = true;          ///< the reference follows every change
        bool watching = false;          ///< the quality panel is visible
    };

    explicit SliceSession(Controller* controller, QObject* parent = nullptr);
    void setWish(std::function<Wish()> wish) { m_wish = std::move(wish); }
    /// Starts following the controller's slices, references and comparisons
    /// (after the window's own connections to it: they run first).
    void listen();

    /// A new dataset: nothing shown, pinned or asked for.
    void reset();
    /// Asks the controller for the slice of `params`, and for its reference
    /// when someone looks at the comparison.
    quint64 requestSlice(const SliceParams& params);
    /// Cancels the live slice and the reference being computed.
    void cancel();
    /// Asks for the reference of the parameters on screen when someone looks
    /// at the comparison and it is automatic (or `asked`, the Compute button).
    void requestReferenceIfNeeded(bool asked = false);
    /// Another reference kind or disc: the worker compares the slice on screen again.
    void compareAgain();
    /// Pins the slice on screen as the reference (null when none is shown).
    ReferencePtr pinCurrent();

    /// The slice on screen (null before the first one).
    const SliceResultPtr& result() const { return m_result; }
    /// The reference the quality panel compares with now (if it matches).
    const ReferenceResult* activeReference() const;
    /// The last comparison the worker made for the slice on screen (null while none).
    const Comparison* comparison() const { return m_comparison ? &*m_comparison : nullptr; }
    /// That comparison when it is with the active reference (the quality panel shows it).
    const Comparison* comparisonToShow() const;
    /// Why there is no comparison to show yet (the quality panel's text);
    /// asks the worker to compare where the reference came after the slice.
    QString waitingText();

    const std::optional<QLineF>& line() const { return m_line; }
    void setLine(std::optional<QLineF> line) { m_line = line; }
    /// The profiles along the line: result, reference (empty while waiting), their labels.
    struct Profiles {
        std::vector<tomo::ProfilePoint> result, reference;
        QString resultLabel, referenceLabel;
    };
    std::optional<Profiles> profiles() const;

    /// The slice `id` was set on the view: its paint ends the latency.
    void awaitPaint(quint64 id) { m_awaitingPaint = id; }
    /// The slice view painted: resultOnScreen for the slice awaited.
    void painted();
    double lastLatency() const { return m_lastLatency; }
    double lastShowCpuSeconds() const { return m_lastShowCpu; }

signals:
    /// A new slice arrived (the session holds it as result(); `previous` was on screen before).
    void sliceShown(const tomo::ui::SliceResultPtr& result, const tomo::ui::SliceResultPtr& previous);
    /// The comparison or reference changed: show comparison() or waitingText(), and the profiles.
    void comparisonChanged();
    /// A reference arrived (after comparisonChanged).
    void referenceShown();
    /// The slice `id` was painted, `seconds` after it was requested.
    void resultOnScreen(quint64 id, double seconds);

private:
    void onSliceReady(const SliceResultPtr& result);
    Wish wish() const { return m_wish ? m_wish() : Wish{}; }

    Controller* m_controller;
    std::function<Wish()> m_wish;
    SliceResultPtr m_result;
    std::optional<Comparison> m_comparison;       // for m_result, when a reference matched
    ReferencePtr m_reference;                     // exact or truth, from the controller
    ReferencePtr m_pinned;
    std::optional<SliceParams> m_referenceRequested;
    tomo::ReconOptions m_referenceRequestedOptions;
    ReferenceKind m_referenceRequestedKind = ReferenceKind::Exact;
    QString m_referenceError;                     // why the requested reference failed
    quint64 m_comparisonAskedFor = 0;             // result id a comparison was requested for
    std::optional<QLineF> m_line;

    // Request -> screen timing (the status bar's "on screen" figure).
    QElapsedTimer m_clock;
    std::map<quint64, qint64> m_requestedAt;      // request id -> m_clock ns
    quint64 m_awaitingPaint = 0;                  // id of the slice set on the view, not yet painted
    double m_lastLatency = -1.0;
    double m_showCpuStart = -1.0;                 // UI-thread CPU time when the result on screen arrived
    double m_lastShowCpu = -1.0;
};

} // namespace tomo::ui
