// Histogram of the slice values with the display window drawn on it; the
// window's edges can be dragged. Log-scaled counts (CT histograms are
// dominated by the background peak).
#pragma once

#include "views/value_unit.h"
#include "work/image_stats.h"

#include <QWidget>

namespace tomo::ui {

struct Colormap;

class HistogramWidget : public QWidget {
    Q_OBJECT
public:
    explicit HistogramWidget(QWidget* parent = nullptr);

    void setStats(const ImageStats& stats);
    void setWindow(float low, float high);
    void setColormap(const QString& name);
    /// How the axis labels show values.
    void setValueUnit(const ValueUnit& unit);
    const ImageStats& stats() const { return m_stats; }

    QSize sizeHint() const override { return {320, 150}; }

signals:
    void windowChanged(float low, float high);

protected:
    void paintEvent(QPaintEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;

private:
    QRectF plotRect() const;
    double toX(double value) const;
    double toValue(double x) const;

    ImageStats m_stats;
    float m_low = 0.0f;
    float m_high = 1.0f;
    const Colormap* m_colormap = nullptr;
    ValueUnit m_unit;
    enum class Edge { None, Low, High } m_dragging = Edge::None;
};

} // namespace tomo::ui
