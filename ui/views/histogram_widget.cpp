#include "views/histogram_widget.h"
#include "work/latency_probe.h"

#include "views/colormap.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace tomo::ui {

HistogramWidget::HistogramWidget(QWidget* parent) : QWidget(parent), m_colormap(&colormap(QStringLiteral("grey"))) {
    setMinimumHeight(110);
    setMouseTracking(true);
    setToolTip(tr("Histogram of the slice (log counts). Drag the window edges to change the display range."));
}

void HistogramWidget::setStats(const ImageStats& stats) {
    m_stats = stats;
    update();
}

void HistogramWidget::setWindow(float low, float high) {
    m_low = low;
    m_high = high;
    update();
}

void HistogramWidget::setValueUnit(const ValueUnit& unit) {
    m_unit = unit;
    update();
}

void HistogramWidget::setColormap(const QString& name) {
    m_colormap = &colormap(name);
    update();
}

QRectF HistogramWidget::plotRect() const { return QRectF(8, 6, width() - 16, height() - 40); }

// The axis spans the data range and the window, whichever is wider.
double HistogramWidget::toX(double v) const {
    const double lo = std::min<double>(m_stats.min, m_low), hi = std::max<double>(m_stats.max, m_high);
    const QRectF r = plotRect();
    return hi > lo ? r.left() + (v - lo) / (hi - lo) * r.width() : r.left();
}

double HistogramWidget::toValue(double x) const {
    const double lo = std::min<double>(m_stats.min, m_low), hi = std::max<double>(m_stats.max, m_high);
    const QRectF r = plotRect();
    return lo + (x - r.left()) / std::max(1.0, r.width()) * (hi - lo);
}

void HistogramWidget::paintEvent(QPaintEvent*) {
    noteUiActivity("histogram-paint");
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const QRectF r = plotRect();
    if (m_stats.histogram.empty() || m_stats.finite == 0) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No slice yet"));
        return;
    }
    // Window band.
    const double x0 = toX(m_low), x1 = toX(m_high);
    p.fillRect(QRectF(QPointF(x0, r.top()), QPointF(x1, r.bottom())), QColor(60, 140, 230, 40));

    // Log-count histogram as a filled path.
    const int maxCount = *std::max_element(m_stats.histogram.begin(), m_stats.histogram.end());
    const double logMax = std::log1p(static_cast<double>(std::max(1, maxCount)));
    QPainterPath path(QPointF(toX(m_stats.min), r.bottom()));
    const std::size_t n = m_stats.histogram.size();
    for (std::size_t i = 0; i < n; ++i) {
        const double h = std::log1p(static_cast<double>(m_stats.histogram[i])) / logMax * r.height();
        path.lineTo(toX(m_stats.binEdge(i)), r.bottom() - h);
        path.lineTo(toX(m_stats.binEdge(i + 1)), r.bottom() - h);
    }
    path.lineTo(toX(m_stats.max), r.bottom());
    path.closeSubpath();
    p.setRenderHint(QPainter::Antialiasing);
    p.fillPath(path, palette().color(QPalette::Text).lighter(160));
    p.setPen(QPen(palette().color(QPalette::Text), 1));
    p.drawPath(path);

    // Window edges.
    p.setPen(QPen(QColor(30, 110, 220), 2));
    p.drawLine(QPointF(x0, r.top()), QPointF(x0, r.bottom()));
    p.drawLine(QPointF(x1, r.top()), QPointF(x1, r.bottom()));

    // Colour ramp under the window, and the axis labels.
    const QRectF ramp(QPointF(x0, r.bottom() + 3), QPointF(std::max(x0 + 1, x1), r.bottom() + 11));
    p.drawImage(ramp, colorbarImage(*m_colormap, 256, 1));
    p.setPen(palette().color(QPalette::Text));
    const QFontMetrics fm(p.font());
    const double lo = std::min<double>(m_stats.min, m_low), hi = std::max<double>(m_stats.max, m_high);
    const QRectF labels(r.left(), r.bottom() + 12, r.width(), fm.height() + 2);
    p.drawText(labels, Qt::AlignLeft | Qt::AlignVCenter, QString::number(m_unit.shown(lo), 'g', 4));
    p.drawText(labels, Qt::AlignRight | Qt::AlignVCenter, QString::number(m_unit.shown(hi), 'g', 4));
    p.drawText(labels, Qt::AlignHCenter | Qt::AlignVCenter,
               tr("window %1 … %2").arg(QString::number(m_unit.shown(m_low), 'g', 4), m_unit.format(m_high)));
}

void HistogramWidget::mousePressEvent(QMouseEvent* e) {
    if (m_stats.histogram.empty()) return;
    const double x = e->position().x();
    m_dragging = std::abs(x - toX(m_low)) <= std::abs(x - toX(m_high)) ? Edge::Low : Edge::High;
    mouseMoveEvent(e);
}

void HistogramWidget::mouseMoveEvent(QMouseEvent* e) {
    const double x = e->position().x();
    if (m_dragging == Edge::None) {
        const bool nearEdge = std::min(std::abs(x - toX(m_low)), std::abs(x - toX(m_high))) < 6;
        setCursor(nearEdge ? Qt::SizeHorCursor : Qt::ArrowCursor);
        return;
    }
    const auto v = static_cast<float>(toValue(x));
    if (m_dragging == Edge::Low) m_low = std::min(v, m_high - 1e-6f * std::max(1.0f, std::abs(m_high)));
    else m_high = std::max(v, m_low + 1e-6f * std::max(1.0f, std::abs(m_low)));
    update();
    emit windowChanged(m_low, m_high);
}

void HistogramWidget::mouseReleaseEvent(QMouseEvent*) { m_dragging = Edge::None; }

} // namespace tomo::ui
