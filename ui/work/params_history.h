// Edit ▸ Undo / Redo of parameter changes: an undo stack of SliceParams
// steps. Consecutive axis moves less than a second apart (a slider drag, a
// run of key presses) are one step; changes the program makes on its own
// (a new dataset, undo itself, the ring-removal difference) are not steps.
#pragma once

#include "work/recon_types.h"

#include <QElapsedTimer>
#include <QUndoStack>

#include <functional>

namespace tomo::ui {

class ParamsHistory : public QUndoStack {
    Q_OBJECT
public:
    /// `apply` puts parameters on screen (undo and redo call it, unrecorded).
    ParamsHistory(std::function<void(const SliceParams&)> apply, QObject* parent = nullptr);

    /// The parameters on screen changed to `now`: a step from the last ones recorded.
    void record(const SliceParams& now);
    /// Runs `change` (which changes the parameters) without recording it.
    void quietly(const std::function<void()>& change);
    /// The parameters on screen are `now` without a step (after quietly()).
    void setRecorded(const SliceParams& now) { m_last = now; }
    /// A new dataset: no steps, starting at `params`.
    void restart(const SliceParams& params);

private:
    std::function<void(const SliceParams&)> m_apply;
    SliceParams m_last; // as after the last change recorded
    bool m_recording = true;
    QElapsedTimer m_clock;
};

} // namespace tomo::ui
