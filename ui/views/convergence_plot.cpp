#include "views/convergence_plot.h"

#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tomo::ui {

ConvergencePlot::ConvergencePlot(QWidget* parent) : QWidget(parent) {
    m_chart = new QChart;
    m_chart->setMargins(QMargins(2, 0, 2, 0));
    m_chart->setBackgroundRoundness(0);
    m_chart->legend()->hide();
    m_series = new QLineSeries;
    m_series->setPen(QPen(QColor(31, 119, 180), 1.6));
    m_chart->addSeries(m_series);
    m_x = new QValueAxis;
    m_x->setTitleText(tr("iteration"));
    m_x->setLabelFormat(QStringLiteral("%.0f"));
    m_y = new QLogValueAxis;
    m_y->setTitleText(tr("‖b − Ax‖ / ‖b‖"));
    m_y->setLabelFormat(QStringLiteral("%.2g"));
    m_y->setBase(10.0);
    m_y->setMinorTickCount(8); // 2, 3, ... 9 of each decade
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    m_series->attachAxis(m_x);
    m_series->attachAxis(m_y);
    auto* view = new QChartView(m_chart);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(90); // a small window keeps the slice at least half its height
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("convergenceStatus"));
    m_status->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_status);
    layout->addWidget(view, 1);
    clear(tr("Choose an iterative method (Method panel) to see its residual per iteration."));
}

void ConvergencePlot::start(const QString& method, int iterations) {
    m_method = method;
    m_series->clear();
    m_low = m_high = 0.0;
    m_x->setRange(1, std::max(2, iterations));
    m_y->setRange(1e-3, 1.0);
    m_status->setText(tr("%1: running, %2 iterations planned").arg(method).arg(iterations));
}

void ConvergencePlot::append(const std::vector<std::pair<int, double>>& residuals) {
    QList<QPointF> points;
    for (const auto& [iteration, residual] : residuals) {
        if (!(std::isfinite(residual) && residual > 0.0)) continue;
        points.append(QPointF(iteration, residual));
        m_low = m_low > 0.0 ? std::min(m_low, residual) : residual;
        m_high = std::max(m_high, residual);
    }
    if (points.isEmpty()) return;
    m_series->append(points);
    // Whole decades around what was seen, so the axis does not jump every iteration.
    m_y->setRange(std::pow(10.0, std::floor(std::log10(m_low))), std::pow(10.0, std::ceil(std::log10(m_high))));
    const QPointF last = points.back();
    m_status->setText(tr("%1: iteration %2, residual %3").arg(m_method).arg(last.x()).arg(last.y(), 0, 'g', 4));
}

void ConvergencePlot::finish(int iterations, bool stopped) {
    const QString residual = m_series->count() > 0 ? QString::number(m_series->at(m_series->count() - 1).y(), 'g', 4)
                                                   : tr("—");
    m_status->setText(stopped ? tr("%1: stopped after %2 iterations, residual %3 (image kept)")
                                    .arg(m_method).arg(iterations).arg(residual)
                              : tr("%1: %2 iterations, residual %3").arg(m_method).arg(iterations).arg(residual));
}

void ConvergencePlot::clear(const QString& hint) {
    m_series->clear();
    m_status->setText(hint);
}

QList<QPointF> ConvergencePlot::points() const { return m_series->points(); }

} // namespace tomo::ui
