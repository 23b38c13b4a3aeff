// MainWindow: the live slice on screen. Parameter changes ask the slice
// session (work/SliceSession) for a slice; a slice that arrives is shown
// with its caption, window and colormap, and handed to the panels that
// follow it (Data, Corrections, Parameters' grid, the axis gallery, the
// status bar); comparisons and profiles follow it; pinning and the ring
// damage guard's before/after; the window and colormap the user sets.
#include "main_window.h"

#include "work/dataset_session.h"
#include "work/latency_probe.h"
#include "work/slice_session.h"

#include "dialogs/axis_sweep_dialog.h"
#include "panels/corrections_panel.h"
#include "panels/data_panel.h"
#include "panels/display_panel.h"
#include "panels/parameter_panel.h"
#include "panels/quality_panel.h"
#include "views/histogram_widget.h"
#include "views/profile_plot.h"
#include "views/slice_view.h"
#include "views/status_figures.h"
#include "views/volume_view.h"

#include <QAction>
#include <QDockWidget>
#include <QStatusBar>

#include <utility>

namespace tomo::ui {

void MainWindow::onParamsChanged() {
    if (!dataset()) return;
    m_history->record(m_params->params());
    if (!m_params->liveUpdate()) {
        statusBar()->showMessage(tr("Parameters changed: press F5 to reconstruct"), 4000);
        return;
    }
    requestSlice();
}

void MainWindow::requestSlice() {
    noteUiActivity("request-slice");
    if (!dataset()) return;
    const QString error = m_params->validationError();
    if (!error.isEmpty()) {
        statusBar()->showMessage(error, 6000);
        if (!m_slice->hasImage()) m_slice->setCaption(tr("Cannot reconstruct: %1").arg(error));
        return;
    }
    const SliceParams params = m_params->params();
    if (m_rejectedCorrections && *m_rejectedCorrections == params.corrections) {
        // Asked once: the dataset cannot take them (the Corrections panel says why).
        statusBar()->showMessage(tr("These corrections cannot be used on this dataset: change them in the "
                                    "Corrections panel"), 6000);
        return;
    }
    syncDisplaySettings(); // the views' zoom now
    m_session->requestSlice(params);
}

void MainWindow::onSliceReady(const SliceResultPtr& result, const SliceResultPtr& previous) {
    const bool otherCorrections = !previous || !(previous->params.corrections == result->params.corrections);
    const SliceResult& r = *result;
    const tomo::Region& region = r.preview.region;
    if (m_session->line() && (m_slice->image().width != region.width || m_slice->image().height != region.height)) {
        m_session->setLine(std::nullopt); // the line belonged to another region
        m_slice->setLine(std::nullopt);
        m_quality->view()->setLine(std::nullopt);
        m_profile->clear();
    }
    // Colours come ready from the worker; only a window or colormap the
    // user changed while it worked is mapped again here.
    const float userLow = m_slice->windowLow(), userHigh = m_slice->windowHigh();
    const QString userColormap = m_slice->colormapName();
    m_slice->setPreparedImage(std::shared_ptr<const tomo::Image>(result, &r.preview.slice), QPoint(region.x, region.y),
                              r.display.rendered, r.display.low,
                              r.display.high, r.display.colormap, r.display.scaled, r.display.zoom);
    m_session->awaitPaint(r.id);
    m_slice->setColormap(userColormap);
    m_display->histogram()->setStats(r.stats);
    if (m_display->autoWindowAction()->isChecked()) applyWindow(r.display.low, r.display.high, false);
    else m_slice->setWindow(userLow, userHigh);
    const QString ran = QString::fromStdString(r.preview.strategy);
    // FDK has one mode: its back-projector says all.
    const QString mode = r.preview.divergent && !r.preview.iterative ? tr("FDK") : modeText(r.params.options);
    m_slice->setCaption(tr("%1 %2 · %3 · %4 · %5%6")
                            .arg(r.preview.divergent ? tr("Slice") : tr("Row"))
                            .arg(r.params.row)
                            .arg(r.stage.stitchedAxis ? tr("360° stitched, scan axis %1").arg(r.stage.scanAxis.value_or(0.0), 0, 'f', 2)
                                 : r.params.axisTilt != 0.0
                                     ? tr("axis %1 (tilt %2 px/row)").arg(r.params.axis, 0, 'f', 3).arg(r.params.axisTilt)
                                     : tr("axis %1").arg(r.params.axis, 0, 'f', 3))
                            .arg(ran)
                            .arg(mode)
                            .arg(r.params.region ? tr(" · region %1×%2 at (%3, %4)")
                                                       .arg(region.width)
                                                       .arg(region.height)
                                                       .arg(region.x)
                                                       .arg(region.y)
                                                 : QString()));
    m_data->setSliceParams(r.params.row, r.preview.axis);
    if (otherCorrections) m_data->refresh(); // the sinogram as the new corrections make it
    m_params->setGrid(r.preview.gridSize);
    m_corrections->showResult(r);
    if (m_sweepDialog) m_sweepDialog->setCurrentAxis(r.params.axis);
    m_status->showSlice(r, mode);
    if (!r.params.stitched()) m_datasets->noteAxis(r.params.axis);
    m_session->requestReferenceIfNeeded();
    refreshComparison();
    refreshProfile();
    emit resultShown(r.id);
    if (m_ringDifference && r.params.corrections.rings.method == tomo::RingMethod::Off) {
        const tomo::CorrectionOptions with = *std::exchange(m_ringDifference, std::nullopt);
        tomo::CorrectionOptions without = with;
        without.rings = {};
        if (!(r.params.corrections == without)) return; // the user changed the corrections meanwhile
        pinCurrent();
        m_history->quietly([&] { m_params->setCorrections(with); });
        m_history->setRecorded(m_params->params());
        if (!m_params->liveUpdate()) requestSlice();
    }
}

void MainWindow::syncDisplaySettings() {
    DisplaySettings d;
    d.autoWindow = m_display->autoWindowAction()->isChecked();
    d.low = m_slice->windowLow();
    d.high = m_slice->windowHigh();
    d.colormap = m_slice->colormapName();
    d.compare = m_quality->isVisible() || m_session->line().has_value();
    d.referenceKind = m_quality->referenceKind();
    d.discOnly = m_quality->discOnly();
    d.sliceZoom = m_slice->deviceZoom();
    d.differenceZoom = m_quality->view()->deviceZoom();
    m_controller->setDisplaySettings(d);
}

void MainWindow::refreshComparison() {
    const SliceResultPtr& result = m_session->result();
    if (!result) return;
    if (const Comparison* comparison = m_session->comparisonToShow()) m_quality->showComparison(*comparison, *result);
    else m_quality->showWaiting(m_session->waitingText());
    m_quality->view()->setLine(m_session->line());
}

void MainWindow::setProfileLine(const QLineF& line) {
    m_session->setLine(line);
    m_slice->setLine(line);
    m_quality->view()->setLine(line);
    m_profileDock->show();
    syncDisplaySettings();
    m_session->requestReferenceIfNeeded();
    refreshProfile();
}

void MainWindow::refreshProfile() {
    if (const auto p = m_session->profiles())
        m_profile->setProfiles(p->result, p->resultLabel, p->reference, p->referenceLabel);
}

void MainWindow::showRingDifference() {
    if (!m_session->result() || m_session->result()->params.corrections.rings.method == tomo::RingMethod::Off) return;
    // The same slice without ring removal first (pinned when it arrives,
    // onSliceReady), then back to the removal: not a change for Edit ▸ Undo.
    m_ringDifference = m_session->result()->params.corrections;
    tomo::CorrectionOptions without = *m_ringDifference;
    without.rings = {};
    m_history->quietly([&] { m_params->setCorrections(without); });
    if (!m_params->liveUpdate()) requestSlice();
    statusBar()->showMessage(tr("Reconstructing the slice without ring removal to compare…"), 6000);
}

void MainWindow::pinCurrent() {
    const ReferencePtr pinned = m_session->pinCurrent();
    if (!pinned) return;
    m_quality->setPinnedLabel(pinned->label);
    if (m_quality->referenceKind() == ReferenceKind::Pinned) refreshComparison(); // the kind does not change
    m_quality->setReferenceKind(ReferenceKind::Pinned);
    m_quality->showDock();
    statusBar()->showMessage(tr("Pinned %1 as the reference").arg(pinned->label), 6000);
}

// ----------------------------------------------------------------- display

void MainWindow::applyWindow(float low, float high, bool fromUser) {
    if (!(high > low)) return;
    if (fromUser) m_display->autoWindowAction()->setChecked(false);
    m_slice->setWindow(low, high);
    m_display->setWindow(low, high);
    syncDisplaySettings();
}

void MainWindow::setColormap(const QString& name) {
    m_slice->setColormap(name);
    m_display->setColormap(name);
    if (VolumeView* volume = volumeView()) volume->setColormap(name);
    syncDisplaySettings();
}

} // namespace tomo::ui
