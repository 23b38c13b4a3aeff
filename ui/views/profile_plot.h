// Profile plot (seed 000 Figs. 7, 8, 18, 19): the values of the result and
// of the reference along a line, overlaid, and their absolute difference in
// a second plot below. Qt Charts.
#pragma once

#include "views/value_unit.h"

#include "tomo/metrics.h"

#include <QList>
#include <QPointF>
#include <QWidget>

#include <vector>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QLineSeries;
class QValueAxis;
class QLabel;
QT_END_NAMESPACE

namespace tomo::ui {

class ProfilePlot : public QWidget {
    Q_OBJECT
public:
    explicit ProfilePlot(QWidget* parent = nullptr);

    /// Shows the profiles; `reference` may be empty (then no difference).
    /// Points outside the image (NaN) are left out.
    void setProfiles(const std::vector<tomo::ProfilePoint>& result, const QString& resultLabel,
                     const std::vector<tomo::ProfilePoint>& reference, const QString& referenceLabel);
    void clear(const QString& hint = {});
    /// The unit of the value axes (applies from the next setProfiles).
    void setValueUnit(const ValueUnit& unit);

    QList<QPointF> resultPoints() const;
    QList<QPointF> referencePoints() const;
    QList<QPointF> differencePoints() const;
    /// The charts of the values and of the difference (tests: axes, plot areas).
    QChart* valueChart() const { return m_chart; }
    QChart* differenceChart() const { return m_diffChart; }

private:
    QChart* m_chart = nullptr;
    QChart* m_diffChart = nullptr;
    QChartView* m_view = nullptr;
    QChartView* m_diffView = nullptr;
    QLineSeries* m_result = nullptr;
    QLineSeries* m_reference = nullptr;
    QLineSeries* m_difference = nullptr;
    QValueAxis* m_x = nullptr;
    QValueAxis* m_y = nullptr;
    QValueAxis* m_dx = nullptr;
    QValueAxis* m_dy = nullptr;
    QLabel* m_hint = nullptr;
    ValueUnit m_unit;
};

} // namespace tomo::ui
