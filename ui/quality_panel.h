// Quality panel: the difference between the live result and a reference
// (exact cpu-reference, the true phantom, or a pinned earlier result) as an
// image with a diverging colormap, and the figures of seed 000 §2.4 /
// seed 002 §7.2: max abs error, RMSE, PSNR, relative error.
#pragma once

#include "recon_types.h"

#include <QWidget>

#include <optional>

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
QT_END_NAMESPACE

namespace tomo::ui {

class SliceView;

class QualityPanel : public QWidget {
    Q_OBJECT
public:
    explicit QualityPanel(QWidget* parent = nullptr);

    ReferenceKind referenceKind() const;
    void setReferenceKind(ReferenceKind kind);
    void setTruthAvailable(bool available);
    void setPinnedLabel(const QString& label); ///< empty: nothing pinned
    /// Only pixels inside the reconstruction disc count (default on).
    bool discOnly() const;

    /// Shows result - reference; `reference` null or not matching the
    /// result's geometry shows `waitingText` instead.
    void showComparison(const SliceResult& result, const ReferenceResult* reference, const QString& waitingText = {});
    void clear();

    std::optional<tomo::QualityMetrics> metrics() const { return m_metrics; }
    const tomo::Image& difference() const { return m_difference; }
    SliceView* view() const { return m_view; }

signals:
    void referenceKindChanged(tomo::ui::ReferenceKind kind);
    void pinRequested();
    void discOnlyChanged(bool on);

private:
    void setFigures(const std::optional<tomo::QualityMetrics>& m);

    QComboBox* m_reference = nullptr;
    QPushButton* m_pin = nullptr;
    QCheckBox* m_disc = nullptr;
    SliceView* m_view = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_maxAbs = nullptr;
    QLabel* m_rmse = nullptr;
    QLabel* m_psnr = nullptr;
    QLabel* m_relative = nullptr;
    QLabel* m_pixels = nullptr;
    tomo::Image m_difference;
    std::vector<std::uint8_t> m_discMask; // reconstructionDisc(m_discRegion, m_discGrid)
    tomo::Region m_discRegion{};
    int m_discGrid = -1;
    std::optional<tomo::QualityMetrics> m_metrics;
};

} // namespace tomo::ui
