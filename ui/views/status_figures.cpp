#include "views/status_figures.h"

#include <QAction>
#include <QLabel>
#include <QProgressBar>
#include <QStatusBar>
#include <QStringBuilder>
#include <QToolButton>

#include <initializer_list>

namespace tomo::ui {

StatusFigures::StatusFigures(QStatusBar* bar, QAction* pixelSizeAction)
    : QObject(bar), m_hover(new QLabel), m_backend(new QLabel), m_time(new QLabel), m_gups(new QLabel),
      m_busy(new QLabel), m_latency(new QLabel), m_jobBar(new QProgressBar), m_pixelButton(new QToolButton) {
    m_hover->setMinimumWidth(200);
    m_latency->setObjectName(QStringLiteral("latencyLabel"));
    m_jobBar->setMaximumWidth(220);
    m_jobBar->setRange(0, 100);
    m_jobBar->hide();
    m_backend->setToolTip(tr("Backend family · strategy that ran (and the one asked for) · interpolation · precision"));
    m_time->setToolTip(tr("Time of the last slice: whole run (back-projection only; filtering when it was redone)"));
    m_gups->setToolTip(tr("Back-projection speed: giga-updates per second (pixels × projections / s / 1e9)"));
    m_latency->setToolTip(tr("From the parameter change to the new slice on screen: waiting, reconstruction, "
                             "colours and comparison on the worker, and the paint"));
    m_pixelButton->setObjectName(QStringLiteral("pixelSizeButton"));
    m_pixelButton->setAutoRaise(true);
    connect(m_pixelButton, &QToolButton::clicked, pixelSizeAction, &QAction::trigger);
    bar->addWidget(m_hover);
    for (QWidget* w :
         std::initializer_list<QWidget*>{m_jobBar, m_busy, m_pixelButton, m_backend, m_time, m_gups, m_latency})
        bar->addPermanentWidget(w);
}

void StatusFigures::setHover(const QString& text) { m_hover->setText(text); }

void StatusFigures::showSlice(const SliceResult& r, const QString& mode) {
    const QString requested = QString::fromStdString(r.params.options.strategy);
    const QString ran = QString::fromStdString(r.preview.strategy);
    m_backend->setText(r.family % QStringLiteral(" · ") % ran %
                       (requested == QLatin1String("auto") ? tr(" (auto)") : QString()) % QStringLiteral(" · ") % mode);
    if (const auto& iterative = r.preview.iterative) {
        // An iterative slice has no back-projection rate: its iterations' is the figure.
        const double seconds = r.preview.secondsBackproject;
        const QString count =
            iterative->iterations == 1 ? tr("1 iteration") : tr("%1 iterations").arg(iterative->iterations);
        m_time->setText(tr("%1 (%2 %3)").arg(formatSeconds(r.preview.secondsTotal), count, formatSeconds(seconds)));
        m_gups->setText(seconds > 0.0 ? tr("%1 iterations/s").arg(iterative->iterations / seconds, 0, 'g', 3)
                                      : QString());
        return;
    }
    m_time->setText(tr("%1 (back-projection %2%3)")
                        .arg(formatSeconds(r.preview.secondsTotal))
                        .arg(formatSeconds(r.preview.secondsBackproject))
                        .arg(r.preview.filtered ? tr(", filter %1").arg(formatSeconds(r.preview.secondsFilter)) : QString()));
    m_gups->setText(tr("%1 GU/s").arg(r.preview.gups, 0, 'f', 2));
}

void StatusFigures::setLatency(double seconds) { m_latency->setText(tr("on screen %1").arg(formatSeconds(seconds))); }

void StatusFigures::setBusy(bool busy) { m_busy->setText(busy ? tr("● reconstructing…") : QString()); }

void StatusFigures::setPixelSize(const DatasetPixelSize& pixel, bool asking) {
    m_pixelButton->setText(pixel.known() ? tr("pixel %1").arg(pixel.sizeText())
                                         : asking ? tr("pixel size?") : tr("pixel size –"));
    m_pixelButton->setStyleSheet(asking ? QStringLiteral("color: #b9770e;") : QString());
    m_pixelButton->setToolTip(tr("Pixel size at the sample: %1. Click to change it for this dataset").arg(pixel.text()));
}

void StatusFigures::startJob(JobKind kind) {
    m_jobBar->setValue(0);
    m_jobBar->setFormat(kind == JobKind::SubVolume       ? tr("3D: %p %")
                        : kind == JobKind::AxisSweep     ? tr("axis sweep: %p %")
                        : kind == JobKind::RangeEstimate ? tr("range: %p %")
                                                         : tr("modes: %p %"));
    m_jobBar->show();
}

void StatusFigures::setJobPercent(int percent) { m_jobBar->setValue(percent); }

void StatusFigures::endJob() { m_jobBar->hide(); }

QString StatusFigures::summary() const {
    return m_backend->text() % QStringLiteral(" | ") % m_time->text() % QStringLiteral(" | ") % m_gups->text() %
           QStringLiteral(" | ") % m_latency->text();
}

} // namespace tomo::ui
