// MainWindow's long jobs (Controller's job thread): Reconstruct to File,
// Compare Modes, the axis sweep gallery, the 3D sub-volume, and saving the
// slice on screen; with the wiring of their progress and results.
#include "main_window.h"

#include "work/file_places.h"
#include "work/slice_session.h"

#include "dialogs/axis_sweep_dialog.h"
#include "dialogs/compare_modes_dialog.h"
#include "dialogs/export_dialog.h"
#include "panels/parameter_panel.h"
#include "panels/quality_panel.h"
#include "panels/volume_panel.h"
#include "views/slice_view.h"
#include "views/status_figures.h"
#include "views/volume_view.h"

#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QProgressDialog>
#include <QStatusBar>

#include <cmath>

namespace tomo::ui {

void MainWindow::connectJobs() {
    connect(m_controller, &Controller::jobStarted, this, [this](JobKind kind) {
        m_runningJob = kind;
        if (kind != JobKind::Export) {
            m_status->startJob(kind);
        }
        if (VolumeView* volume = volumeView()) volume->setBusy(true);
    });
    connect(m_controller, &Controller::jobProgress, this, [this](const JobProgress& p) {
        const int percent = static_cast<int>(std::lround(p.fraction * 100.0));
        m_status->setJobPercent(percent);
        if (m_compareDialog && m_runningJob == JobKind::CompareModes) m_compareDialog->setProgress(p);
        if (m_sweepDialog && m_runningJob == JobKind::AxisSweep) m_sweepDialog->setProgress(p);
        // Only an export's own progress: setValue() shows a hidden dialog again.
        if (m_exportProgress && m_runningJob == JobKind::Export) {
            m_exportProgress->setLabelText(
                p.secondsLeft >= 0.0 ? tr("Reconstructing… %1 done, about %2 left (%3 elapsed)")
                                           .arg(QStringLiteral("%1 %").arg(percent))
                                           .arg(formatSeconds(p.secondsLeft))
                                           .arg(formatSeconds(p.secondsElapsed))
                                     : tr("Reconstructing… %1").arg(p.stage));
            // Last: a window-modal QProgressDialog::setValue() processes
            // events (jobFinished among them, which resets and hides it).
            m_exportProgress->setValue(percent);
        }
    });
    connect(m_controller, &Controller::jobFinished, this, [this](JobKind kind, JobStatus status, const QString& message) {
        m_runningJob.reset();
        m_status->endJob();
        if (VolumeView* volume = volumeView()) volume->setBusy(false);
        if (kind == JobKind::Export && m_exportProgress) {
            // Hidden, not deleted: this may run inside the dialog's own
            // setValue() (see jobProgress); the next export replaces it.
            m_exportProgress->reset();
            m_exportProgress->hide();
        }
        if (kind == JobKind::CompareModes && m_compareDialog) m_compareDialog->finish(status, message);
        if (kind == JobKind::AxisSweep && m_sweepDialog) m_sweepDialog->finish(status, message);
        if (status == JobStatus::Cancelled)
            statusBar()->showMessage(kind == JobKind::Export ? tr("Reconstruction to file cancelled: no file written")
                                                             : tr("Cancelled"),
                                     8000);
    });
    connect(m_controller, &Controller::exportFinished, this, [this](const ExportReport& r) {
        const QString clipped =
            r.clipped.total() == 0
                ? QString()
                : tr("%1 values could not be stored as %2: %3 below the range, %4 above, %5 NaN")
                      .arg(r.clipped.total())
                      .arg(QLatin1String(tomo::outputTypeName(r.type)))
                      .arg(r.clipped.below)
                      .arg(r.clipped.above)
                      .arg(r.clipped.nan);
        // The whole path: on a first export the folder was chosen for the user (outputDirectory).
        statusBar()->showMessage(tr("Wrote %1 (%2): %3 slices in %4 (%5 GU/s, %6)%7")
                                     .arg(QDir::toNativeSeparators(QFileInfo(r.target).absoluteFilePath()))
                                     .arg(QLatin1String(tomo::outputTypeName(r.type)))
                                     .arg(r.report.slices)
                                     .arg(formatSeconds(r.report.secondsTotal))
                                     .arg(r.report.gups, 0, 'f', 2)
                                     .arg(QString::fromStdString(r.report.strategy))
                                     .arg(clipped.isEmpty() ? QString() : QStringLiteral("; ") % clipped),
                                 15000);
        if (!clipped.isEmpty()) {
            // Said once, without blocking: the file is written and usable.
            auto* box = new QMessageBox(QMessageBox::Warning, tr("Values clipped"),
                                        tr("%1 is written. %2.").arg(QFileInfo(r.target).fileName(), clipped),
                                        QMessageBox::Ok, this);
            box->setObjectName(QStringLiteral("clippedDialog"));
            box->setInformativeText(tomo::isQuantized(r.type)
                                        ? tr("They are stored at the range's ends (NaN as 0). Widen the range "
                                             "(Estimate, or type it) or store float32 to keep them.")
                                        : tr("They are stored as ±65504. Store float32 to keep them."));
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
        }
    });
    connect(m_controller, &Controller::axisSweepReady, this, [this](const AxisSweep& sweep) {
        if (!m_sweepDialog) return;
        m_sweepDialog->showSweep(sweep);
        if (m_session->result()) m_sweepDialog->setCurrentAxis(m_session->result()->params.axis);
    });
    connect(m_controller, &Controller::subVolumeReady, this, [this](const SubVolume& v) {
        if (VolumeView* volume = volumeView()) volume->setVolume(v, m_slice->colormapName());
    });
    connect(m_controller, &Controller::modeCompared, this, [this](const ModeComparison& row) {
        if (m_compareDialog) m_compareDialog->addRow(row);
    });
}

// ---------------------------------------------------------------- long jobs

bool MainWindow::startExport(const ExportRequest& request) {
    if (!m_controller->exportVolume(request)) {
        showBusy();
        return false;
    }
    setOutputDirectory(request.target);
    m_params->setGpus(request.params.gpus); // the next export and saved parameters keep the choice
    delete m_exportProgress; // the previous export's, hidden
    auto* progress = new QProgressDialog(tr("Reconstructing rows %1–%2 to %3…")
                                             .arg(request.firstRow)
                                             .arg(request.firstRow + request.rowCount - 1)
                                             .arg(QFileInfo(request.target).fileName()),
                                         tr("Cancel"), 0, 100, this);
    progress->setWindowTitle(tr("Reconstruct to file"));
    progress->setWindowModality(Qt::WindowModal);
    progress->setAutoClose(false);
    progress->setAutoReset(false);
    progress->setMinimumDuration(0);
    progress->setMinimumWidth(460);
    progress->setValue(0);
    connect(progress, &QProgressDialog::canceled, m_controller, &Controller::cancelJob);
    m_exportProgress = progress;
    progress->show();
    return true;
}

void MainWindow::compareModes() {
    if (!dataset()) return;
    const SliceParams p = m_params->params();
    const auto modes = CompareModesDialog::modesToCompare(p.options);
    if (!m_compareDialog) {
        m_compareDialog = new CompareModesDialog(this);
        connect(m_compareDialog, &CompareModesDialog::cancelRequested, m_controller, &Controller::cancelJob);
    }
    if (!m_controller->compareModes(p, modes)) {
        showBusy();
        return;
    }
    const tomo::Region r = p.effectiveRegion(m_session->result() ? m_session->result()->preview.gridSize : dataset()->info.columns);
    m_compareDialog->start(tr("Row %1, axis %2 px, %3 × %4 px, filter %5: each mode against cpu-reference, inside the "
                              "reconstruction disc. Times are back-projection only, best of two runs with the "
                              "filtered sinogram kept.")
                               .arg(p.row)
                               .arg(p.axis, 0, 'f', 2)
                               .arg(r.width)
                               .arg(r.height)
                               .arg(QString::fromUtf8(tomo::filterWindowName(p.options.filter.window).data())),
                           static_cast<int>(modes.size()), m_unit);
    m_compareDialog->show();
    m_compareDialog->raise();
}

AxisSweepDialog* MainWindow::axisSweepDialog() const { return m_sweepDialog.data(); }

void MainWindow::showAxisSweep() {
    if (!dataset()) return;
    const SliceParams p = m_params->params();
    if (p.stitched()) {
        statusBar()->showMessage(tr("With 360° half acquisition the axis is set in the Corrections panel"), 6000);
        return;
    }
    if (!m_sweepDialog) {
        m_sweepDialog = new AxisSweepDialog(this);
        connect(m_sweepDialog, &AxisSweepDialog::runRequested, this, [this](const std::vector<double>& axes) {
            SliceParams p = m_params->params();
            if (!p.region) p.region = m_sweepDialog->region(); // zoomed on the object
            if (!m_controller->sweepAxis(p, axes)) {
                m_sweepDialog->finish(JobStatus::Failed, tr("another long job is running"));
                showBusy();
            }
        });
        connect(m_sweepDialog, &AxisSweepDialog::cancelRequested, m_controller, &Controller::cancelJob);
        connect(m_sweepDialog, &AxisSweepDialog::axisPicked, this, [this](double axis) {
            m_params->setAxis(axis);
            statusBar()->showMessage(tr("Axis %1 px picked from the sweep").arg(axis, 0, 'f', 3), 6000);
        });
    }
    m_sweepDialog->setCentre(p.row, p.axis, dataset()->info.columns);
    // The object in the slice on screen (when it is this row's whole slice).
    std::optional<tomo::Region> box;
    if (m_session->result() && !m_session->result()->params.region && m_session->result()->params.row == p.row && !p.region)
        box = objectBox(m_session->result()->preview.slice, QPoint(m_session->result()->preview.region.x, m_session->result()->preview.region.y),
                        m_session->result()->stats.autoLow, m_session->result()->stats.autoHigh);
    m_sweepDialog->setObject(box);
    m_sweepDialog->show();
    m_sweepDialog->raise();
    m_sweepDialog->run();
}

std::unique_ptr<ExportDialog> MainWindow::makeExportDialog() {
    auto dialog = std::make_unique<ExportDialog>(dataset().value_or(DatasetSummary{}), m_params->params(),
                                                 m_slice->windowLow(), m_slice->windowHigh(), outputDirectory(), this,
                                                 m_controller);
    if (m_session->result() && m_session->result()->params.corrections == m_params->corrections()) dialog->setGrid(m_session->result()->preview.gridSize);
    return dialog;
}

void MainWindow::showVolumeView() { m_volumePanel->showView(); }

// ------------------------------------------------------------ saving slices

void MainWindow::saveSliceValues() {
    if (!m_session->result()) return;
    const QString path = QFileDialog::getSaveFileName(this, tr("Save slice values"),
                                                      QDir(outputDirectory()).filePath(QStringLiteral("slice.tif")),
                                                      tr("TIFF float32 (*.tif);;HDF5 (*.h5)"));
    if (path.isEmpty()) return;
    try {
        const tomo::Image& img = m_session->result()->preview.slice;
        tomo::WriteOptions options;
        options.overwrite = true;
        options.attributes["tomo_run_config"] =
            tomo::toJson(toRunConfig(m_session->result()->params, dataset().value_or(DatasetSummary{}), m_session->result()->params.row, 1));
        auto writer = tomo::createVolumeWriter(path.toStdString(), img.width, img.height, 1, options);
        writer->writeSlices(0, 1, img.data);
        writer->commit();
        setOutputDirectory(path);
        statusBar()->showMessage(tr("Saved %1").arg(path), 6000);
    } catch (const std::exception& e) {
        showError(tr("Cannot save the slice"), QString::fromUtf8(e.what()));
    }
}

void MainWindow::saveSliceImage() {
    if (!m_session->result()) return;
    const QString path = QFileDialog::getSaveFileName(this, tr("Save slice image"),
                                                      QDir(outputDirectory()).filePath(QStringLiteral("slice.png")),
                                                      tr("PNG images (*.png)"));
    if (path.isEmpty()) return;
    const tomo::Image& img = m_session->result()->preview.slice;
    const QImage image = renderImage(img.data.data(), img.width, img.height, m_slice->windowLow(), m_slice->windowHigh(),
                                     colormap(m_slice->colormapName()));
    if (!image.save(path)) showError(tr("Cannot save the image"), tr("Writing %1 failed.").arg(path));
    else setOutputDirectory(path);
}

} // namespace tomo::ui
