#include "views/profile_plot.h"

#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tomo::ui {
namespace {

QList<QPointF> finitePoints(const std::vector<tomo::ProfilePoint>& profile, const ValueUnit& unit) {
    QList<QPointF> out;
    out.reserve(static_cast<qsizetype>(profile.size()));
    for (const auto& p : profile)
        if (std::isfinite(p.value)) out.append(QPointF(p.distance, unit.shown(p.value)));
    return out;
}

void fitAxis(QValueAxis* axis, double lo, double hi) {
    if (!(hi > lo)) {
        lo -= 0.5;
        hi += 0.5;
    }
    const double pad = (hi - lo) * 0.05;
    axis->setRange(lo - pad, hi + pad);
    axis->applyNiceNumbers();
}

QChart* makeChart() {
    auto* chart = new QChart;
    chart->setMargins(QMargins(2, 0, 2, 0));
    chart->setBackgroundRoundness(0);
    chart->legend()->setAlignment(Qt::AlignTop);
    return chart;
}

} // namespace

ProfilePlot::ProfilePlot(QWidget* parent) : QWidget(parent) {
    m_chart = makeChart();
    m_result = new QLineSeries;
    m_reference = new QLineSeries;
    m_result->setName(tr("Result"));
    m_reference->setName(tr("Reference"));
    m_result->setPen(QPen(QColor(31, 119, 180), 1.6));
    m_reference->setPen(QPen(QColor(230, 120, 20), 1.4, Qt::DashLine));
    m_chart->addSeries(m_reference);
    m_chart->addSeries(m_result);
    m_x = new QValueAxis;
    m_y = new QValueAxis;
    m_y->setTitleText(m_unit.quantity());
    m_x->setLabelFormat(QStringLiteral("%.0f"));
    m_y->setLabelFormat(QStringLiteral("%.3g"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    for (QLineSeries* s : {m_result, m_reference}) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }

    m_diffChart = makeChart();
    m_diffChart->legend()->setAlignment(Qt::AlignTop);
    m_difference = new QLineSeries;
    m_difference->setName(tr("|result − reference|"));
    m_difference->setPen(QPen(QColor(200, 40, 40), 1.4));
    m_diffChart->addSeries(m_difference);
    m_dx = new QValueAxis;
    m_dy = new QValueAxis;
    m_dx->setLabelFormat(QStringLiteral("%.0f"));
    m_dy->setTitleText(tr("|Δ|")); // its unit is in the legend, the plot is too low for more
    m_dy->setLabelFormat(QStringLiteral("%.2g"));
    m_diffChart->addAxis(m_dx, Qt::AlignBottom);
    m_diffChart->addAxis(m_dy, Qt::AlignLeft);
    m_difference->attachAxis(m_dx);
    m_difference->attachAxis(m_dy);

    QFont small = font();
    small.setPointSizeF(std::max(6.5, small.pointSizeF() * 0.85));
    for (QValueAxis* a : {m_x, m_y, m_dx, m_dy}) {
        a->setLabelsFont(small);
        a->setTitleFont(small);
        a->setTruncateLabels(false); // "…" says nothing: the axes are sized for their labels
    }
    m_chart->legend()->setFont(small);
    m_diffChart->legend()->setFont(small);
    m_view = new QChartView(m_chart);
    m_diffView = new QChartView(m_diffChart);
    for (QChartView* v : {m_view, m_diffView}) v->setRenderHint(QPainter::Antialiasing);
    // High enough for labels and titles (the Profile dock scrolls on a small window).
    m_view->setMinimumHeight(150);
    m_diffView->setMinimumHeight(150);
    m_hint = new QLabel;
    m_hint->setWordWrap(true);
    m_hint->setAlignment(Qt::AlignCenter);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_hint, 1);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_diffView, 1);
    clear();
}

void ProfilePlot::clear(const QString& hint) {
    m_result->clear();
    m_reference->clear();
    m_difference->clear();
    m_hint->setText(hint.isEmpty() ? tr("Choose the line tool (L) and drag across the slice to plot a profile:\n"
                                        "the result and the reference overlaid, their absolute difference below.")
                                   : hint);
    m_hint->setVisible(true);
    m_view->setVisible(false);
    m_diffView->setVisible(false);
}

void ProfilePlot::setProfiles(const std::vector<tomo::ProfilePoint>& result, const QString& resultLabel,
                              const std::vector<tomo::ProfilePoint>& reference, const QString& referenceLabel) {
    m_hint->setVisible(false);
    m_view->setVisible(true);
    const QList<QPointF> r = finitePoints(result, m_unit);
    const QList<QPointF> ref = finitePoints(reference, m_unit);
    m_result->setName(resultLabel);
    m_reference->setName(referenceLabel);
    m_result->replace(r);
    m_reference->replace(ref);
    m_reference->setVisible(!ref.isEmpty());

    QList<QPointF> diff;
    if (!reference.empty() && reference.size() == result.size())
        for (std::size_t i = 0; i < result.size(); ++i)
            if (std::isfinite(result[i].value) && std::isfinite(reference[i].value))
                diff.append(QPointF(result[i].distance, std::abs(m_unit.shown(result[i].value - reference[i].value))));
    m_difference->replace(diff);
    m_diffView->setVisible(!diff.isEmpty());
    // The distance title once, under the lowest chart: the upper one keeps its height for the values.
    const QString distance = tr("distance (px)");
    m_x->setTitleText(diff.isEmpty() ? distance : QString());
    m_dx->setTitleText(distance);

    double lo = std::numeric_limits<double>::infinity(), hi = -lo, length = 0.0;
    for (const QList<QPointF>* list : {&r, &ref})
        for (const QPointF& p : *list) {
            lo = std::min(lo, p.y());
            hi = std::max(hi, p.y());
            length = std::max(length, p.x());
        }
    if (!std::isfinite(lo)) lo = hi = 0.0;
    // Distance axes end at the line's length, ticks every 1, 2 or 5 x 10^k px.
    const double span = std::max(1.0, length);
    const double raw = span / 5.0;
    const double p10 = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / p10 < 2.0 ? p10 : (raw / p10 < 5.0 ? 2.0 * p10 : 5.0 * p10);
    for (QValueAxis* a : {m_x, m_dx}) {
        a->setRange(0.0, span);
        a->setTickType(QValueAxis::TicksDynamic);
        a->setTickAnchor(0.0);
        a->setTickInterval(step);
    }
    fitAxis(m_y, lo, hi);
    double dmax = 0.0;
    for (const QPointF& p : diff) dmax = std::max(dmax, p.y());
    m_dy->setRange(0.0, dmax > 0.0 ? dmax * 1.1 : 1e-6);
    m_difference->setName(tr("|result − reference|, max %1 %2").arg(QString::number(dmax, 'g', 3), m_unit.symbol));
}

void ProfilePlot::setValueUnit(const ValueUnit& unit) {
    m_unit = unit;
    m_y->setTitleText(unit.quantity());
}

QList<QPointF> ProfilePlot::resultPoints() const { return m_result->points(); }
QList<QPointF> ProfilePlot::referencePoints() const { return m_reference->points(); }
QList<QPointF> ProfilePlot::differencePoints() const { return m_difference->points(); }

} // namespace tomo::ui
