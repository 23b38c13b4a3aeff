// Quality panel: the difference between the live result and a reference
// (exact cpu-reference, the true phantom, or a pinned earlier result) as an
// image with a diverging colormap, and the figures of seed 000 §2.4 /
// seed 002 §7.2: max abs error, RMSE, PSNR, relative error.
#pragma once

#include "views/value_unit.h"
#include "work/recon_types.h"

#include "panels/panel.h"

#include <optional>

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
QT_END_NAMESPACE

namespace tomo::ui {

class SliceView;

class QualityPanel : public Panel {
    Q_OBJECT
public:
    explicit QualityPanel(QWidget* parent = nullptr);

    ReferenceKind referenceKind() const;
    void setReferenceKind(ReferenceKind kind);
    void setTruthAvailable(bool available);
    void setPinnedLabel(const QString& label); ///< empty: nothing pinned
    /// Only pixels inside the reconstruction disc count (default on).
    bool discOnly() const;
    /// The reference follows every change (at low priority); otherwise it
    /// is computed when asked (computeRequested).
    bool automaticReference() const;
    void setAutomaticReference(bool on);
    /// A reference is being computed (shown next to the figures).
    void setReferenceBusy(bool busy);
    /// The unit of max abs error and RMSE (and of the difference view's legend).
    void setValueUnit(const ValueUnit& unit);

    /// Shows a comparison prepared on the worker for `result`.
    void showComparison(const Comparison& comparison, const SliceResult& result);
    /// No comparison for the result on screen: says why (`text`), keeps
    /// the last difference image marked as outdated.
    void showWaiting(const QString& text);
    void clear();

    std::optional<tomo::QualityMetrics> metrics() const { return m_metrics; }
    /// The difference image shown (empty before the first comparison).
    const tomo::Image& difference() const;
    SliceView* view() const { return m_view; }
    /// Reconstruction ▸ Pin Result as Reference (pinRequested, as the Pin button).
    QAction* pinAction() const { return m_pinAction; }

signals:
    void referenceKindChanged(tomo::ui::ReferenceKind kind);
    void pinRequested();
    void discOnlyChanged(bool on);
    void automaticReferenceChanged(bool on);
    /// "Compute" was pressed: the reference for the parameters on screen.
    void computeRequested();

private:
    void setFigures(const std::optional<tomo::QualityMetrics>& m);

    QComboBox* m_reference = nullptr;
    QPushButton* m_pin = nullptr;
    QAction* m_pinAction = nullptr;
    QCheckBox* m_disc = nullptr;
    QCheckBox* m_automatic = nullptr;
    QPushButton* m_compute = nullptr;
    QLabel* m_busy = nullptr;
    SliceView* m_view = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_maxAbs = nullptr;
    QLabel* m_rmse = nullptr;
    QLabel* m_psnr = nullptr;
    QLabel* m_relative = nullptr;
    QLabel* m_pixels = nullptr;
    std::optional<tomo::QualityMetrics> m_metrics;
    ValueUnit m_unit;
};

} // namespace tomo::ui
