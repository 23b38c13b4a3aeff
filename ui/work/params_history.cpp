#include "work/params_history.h"

#include "tomo/run_config.h"

#include <utility>

namespace tomo::ui {
namespace {

/// The run-config JSON of `p`: two parameter sets are the same when it is.
std::string paramsKey(const SliceParams& p) { return tomo::toJson(toRunConfig(p, DatasetSummary{}, 0, 0)); }

/// What changed, for the Undo / Redo menu entries.
QString describeChange(const SliceParams& before, const SliceParams& after) {
    if (before.row != after.row) return QObject::tr("row %1 → %2").arg(before.row).arg(after.row);
    if (before.axis != after.axis)
        return QObject::tr("axis %1 → %2 px").arg(before.axis, 0, 'f', 3).arg(after.axis, 0, 'f', 3);
    if (before.region != after.region) return QObject::tr("region of interest");
    if (before.axisOffsets != after.axisOffsets) return QObject::tr("axis offsets");
    if (before.axisTilt != after.axisTilt)
        return QObject::tr("axis tilt %1 → %2 px/row").arg(before.axisTilt).arg(after.axisTilt);
    if (!(before.corrections == after.corrections)) return QObject::tr("corrections");
    return QObject::tr("reconstruction options");
}

/// One parameter change; consecutive axis moves less than a second apart
/// (a slider drag, a run of key presses) are one step.
class ParamsCommand : public QUndoCommand {
public:
    ParamsCommand(SliceParams before, SliceParams after, qint64 atMs, std::function<void(const SliceParams&)> apply)
        : QUndoCommand(describeChange(before, after)), m_before(std::move(before)), m_after(std::move(after)),
          m_atMs(atMs), m_apply(std::move(apply)) {}
    void undo() override { m_apply(m_before); }
    void redo() override {
        if (!std::exchange(m_pushed, true)) return; // pushed after the change was made
        m_apply(m_after);
    }
    int id() const override { return 1; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* next = static_cast<const ParamsCommand*>(other);
        if (!onlyAxis(m_before, m_after) || !onlyAxis(m_after, next->m_after) || next->m_atMs - m_atMs > 1000) return false;
        m_after = next->m_after;
        m_atMs = next->m_atMs;
        setText(describeChange(m_before, m_after));
        return true;
    }

private:
    static bool onlyAxis(const SliceParams& a, SliceParams b) {
        b.axis = a.axis;
        return paramsKey(a) == paramsKey(b);
    }
    SliceParams m_before, m_after;
    qint64 m_atMs;
    std::function<void(const SliceParams&)> m_apply;
    bool m_pushed = false;
};

} // namespace

ParamsHistory::ParamsHistory(std::function<void(const SliceParams&)> apply, QObject* parent)
    : QUndoStack(parent), m_apply(std::move(apply)) {
    m_clock.start();
}

void ParamsHistory::record(const SliceParams& now) {
    if (!m_recording || paramsKey(now) == paramsKey(m_last)) {
        m_last = now;
        return;
    }
    push(new ParamsCommand(m_last, now, m_clock.elapsed(), [this](const SliceParams& p) {
        quietly([&] { m_apply(p); }); // applying the history is not a new change
    }));
    m_last = now;
}

void ParamsHistory::quietly(const std::function<void()>& change) {
    m_recording = false;
    change();
    m_recording = true;
}

void ParamsHistory::restart(const SliceParams& params) {
    clear();
    m_last = params;
}

} // namespace tomo::ui
