// MainWindow: the iterative methods (issue 29). The Method panel edits
// ReconOptions::iterative of the parameters (so the live slice, Reconstruct
// to File and the parameter file carry it); while an iterative slice runs
// its image is updated every few iterations and its residual plotted; the
// reprojection view checks any slice against its measured sinogram.
#include "main_window.h"

#include "work/controller.h"
#include "work/dataset_session.h"
#include "work/slice_session.h"
#include "panels/method_panel.h"
#include "panels/parameter_panel.h"
#include "views/slice_view.h"
#include "views/convergence_plot.h"
#include "views/reprojection_view.h"

#include <QDockWidget>
#include <QLabel>
#include <QStatusBar>

namespace tomo::ui {

void MainWindow::createIterativeDocks() {
    // "SIRT": the method of the slice being made.
    auto methodName = [this] {
        return QString::fromUtf8(tomo::methodName(m_params->params().options.iterative.method).data()).toUpper();
    };
    m_method = new MethodPanel;
    m_convergence = new ConvergencePlot;
    m_reprojection = new ReprojectionView;
    QDockWidget* method = m_method->makeDock(this);
    // The plot and the reprojection are views: their docks are the window's.
    m_convergenceDock = makeDock(this, tr("Convergence"), QStringLiteral("convergenceDock"), m_convergence, DockFit::Scroll);
    m_reprojectionDock =
        makeDock(this, tr("Reprojection"), QStringLiteral("reprojectionDock"), m_reprojection, DockFit::Scroll);
    addDockWidget(Qt::LeftDockWidgetArea, method);
    addDockWidget(Qt::BottomDockWidgetArea, m_convergenceDock);
    addDockWidget(Qt::BottomDockWidgetArea, m_reprojectionDock);
    tabifyDockWidget(m_params->dock(), method);
    tabifyDockWidget(m_profileDock, m_convergenceDock);
    tabifyDockWidget(m_convergenceDock, m_reprojectionDock);
    m_params->dock()->raise();
    m_profileDock->raise();

    // The method is part of the parameters (ParameterPanel::params()).
    connect(m_method, &MethodPanel::optionsChanged, this, [this](const tomo::IterativeOptions& o) {
        m_params->setIterative(o);
        if (o.isIterative()) m_convergenceDock->raise();
    });
    connect(m_params, &ParameterPanel::iterativeReplaced, m_method, &MethodPanel::setOptions);
    // Iterative methods need a strategy with a projector pair, or a fan beam.
    const auto beamOf = [](const DatasetSummary* d) {
        if (!d || !d->divergent) return MethodPanel::Beam::Parallel;
        return d->info.rows == 1 ? MethodPanel::Beam::Fan : MethodPanel::Beam::Cone;
    };
    connect(m_params, &ParameterPanel::paramsChanged, this, [this, beamOf] {
        m_method->setContext(m_params->params().options, beamOf(dataset() ? &*dataset() : nullptr));
    });
    connect(m_datasets, &DatasetSession::opened, this, [this, beamOf](const DatasetSummary& dataset) {
        m_method->setContext(m_params->params().options, beamOf(&dataset));
    });
    connect(m_method, &MethodPanel::stopRequested, m_controller, &Controller::stopIterations);

    // While an iterative slice runs: its residuals and, every few iterations, its image.
    connect(m_controller, &Controller::busyChanged, this, [this](bool busy) {
        const tomo::IterativeOptions o = m_params->params().options.iterative;
        m_method->setRunning(busy && o.isIterative(), o.resolvedIterations());
    });
    connect(m_controller, &Controller::iterationProgress, this, [this, methodName](const IterationUpdate& u) {
        if (u.id != m_plottedRun) {
            m_plottedRun = u.id;
            m_convergence->start(methodName(), u.iterations);
            m_method->setRunning(true, u.iterations);
        }
        m_convergence->append(u.residuals);
        if (!u.residuals.empty()) m_method->setProgress(u.residuals.back().first, u.residuals.back().second);
        if (u.image) {
            const SliceDisplay& d = u.display;
            m_slice->setPreparedImage(u.image, QPoint(u.region.x, u.region.y), d.rendered, d.low, d.high, d.colormap,
                                      d.scaled, d.zoom);
            m_slice->setCaption(tr("%1: iteration %2 of %3 (Stop keeps it)")
                                    .arg(methodName())
                                    .arg(u.residuals.empty() ? 0 : u.residuals.back().first)
                                    .arg(u.iterations));
        }
    });
    connect(m_controller, &Controller::sliceReady, this, [this](const SliceResultPtr& r) {
        m_method->setRunning(false);
        if (const auto& summary = r->preview.iterative) {
            if (r->id == m_plottedRun) m_convergence->finish(summary->iterations, summary->stoppedByCallback);
            if (summary->stoppedByCallback)
                statusBar()->showMessage(tr("Stopped after %1 iterations: the image so far is kept").arg(summary->iterations),
                                         8000);
        } else {
            m_plottedRun = 0;
            m_convergence->clear(tr("FBP: no iterations. Choose SIRT, CGLS or TV in the Method panel to see the "
                                    "residual per iteration."));
        }
        if (m_reprojectionDock->isVisible()) m_controller->requestReprojection();
    });
    for (auto ended : {&Controller::sliceCancelled, &Controller::sliceFailed})
        connect(m_controller, ended, this, [this] { m_method->setRunning(false); });

    // Data consistency, for any method: when asked, and for each slice while the view is open.
    connect(m_reprojection, &ReprojectionView::requested, m_controller, &Controller::requestReprojection);
    connect(m_reprojectionDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible && m_session->result()) m_controller->requestReprojection();
    });
    connect(m_controller, &Controller::reprojectionReady, m_reprojection, &ReprojectionView::setResult);
}

} // namespace tomo::ui
