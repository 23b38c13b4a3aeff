// The convergence of an iterative slice while it runs (issue 29): the
// relative residual ||b - A x|| / ||b|| per iteration, on a logarithmic
// axis, beside the slice. Qt Charts, like the profile plot.
#pragma once

#include <QList>
#include <QPointF>
#include <QWidget>

#include <utility>
#include <vector>

QT_BEGIN_NAMESPACE
class QChart;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QValueAxis;
QT_END_NAMESPACE

namespace tomo::ui {

class ConvergencePlot : public QWidget {
    Q_OBJECT
public:
    explicit ConvergencePlot(QWidget* parent = nullptr);

    /// A new run of `iterations` iterations of `method` ("SIRT"): the plot starts empty.
    void start(const QString& method, int iterations);
    /// Appends (iteration, relative residual) points; residuals that are not
    /// finite and > 0 cannot be drawn on the log axis and are left out.
    void append(const std::vector<std::pair<int, double>>& residuals);
    /// The run ended after `iterations` (stopped: by the user).
    void finish(int iterations, bool stopped);
    /// No iterative run (FBP): says so.
    void clear(const QString& hint);

    QList<QPointF> points() const;

private:
    QChart* m_chart = nullptr;
    QLineSeries* m_series = nullptr;
    QValueAxis* m_x = nullptr;
    QLogValueAxis* m_y = nullptr;
    QLabel* m_status = nullptr;
    QString m_method;
    double m_low = 0.0, m_high = 0.0; // residual range shown
};

} // namespace tomo::ui
