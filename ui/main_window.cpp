#include "main_window.h"

#include "work/dataset_session.h"
#include "work/file_places.h"
#include "work/live_mode.h"
#include "work/slice_session.h"
#include "work/window_settings.h"

#include "application.h"
#include "dialogs/axis_sweep_dialog.h"
#include "dialogs/compare_modes_dialog.h"
#include "dialogs/export_dialog.h"
#include "dialogs/shortcuts_dialog.h"
#include "panels/corrections_panel.h"
#include "panels/data_panel.h"
#include "panels/display_panel.h"
#include "panels/file_menu.h"
#include "panels/metadata_panel.h"
#include "panels/method_panel.h"
#include "panels/parameter_panel.h"
#include "panels/quality_panel.h"
#include "panels/volume_panel.h"
#include "views/profile_plot.h"
#include "views/slice_view.h"
#include "views/status_figures.h"
#include "views/volume_view.h"

#include "tomo/registry.h"
#include "tomo/run_config.h"

#include <QAction>
#include <QActionGroup>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileInfo>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressDialog>
#include <QScreen>
#include <QTimer>
#include <QStatusBar>
#include <QToolBar>

#include <algorithm>
#include <cmath>
#include <utility>

namespace tomo::ui {
namespace {

/// Below this window width the default layout stacks every panel as tabs in
/// one column, so the slice keeps about two thirds of the width.
constexpr int kCompactWidth = 1280;

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_controller(new Controller(this)), m_datasets(new DatasetSession(m_controller, this)),
      m_session(new SliceSession(m_controller, this)),
      m_history(new ParamsHistory([this](const SliceParams& p) { m_params->setParams(p); }, this)) {
    setObjectName(QStringLiteral("MainWindow"));
    setAcceptDrops(true);
    setDockNestingEnabled(true);
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);

    m_slice = new SliceView;
    m_slice->setObjectName(QStringLiteral("sliceView"));
    m_slice->setCaption(tr("Opening…"));
    setCentralWidget(m_slice);

    createDocks();
    createActions();
    m_status = new StatusFigures(statusBar(), m_metadata->pixelSizeAction());
    connectController();
    m_defaultState = saveState();
    applySettings(WindowSettings::read());
    syncDisplaySettings();
    updateTitle();
}

MainWindow::~MainWindow() {
    // The controller (a child QObject) would go after the child widgets:
    // its threads stop first.
    m_controller->shutdown();
}

CompareModesDialog* MainWindow::compareDialog() const { return m_compareDialog.data(); }
HistogramWidget* MainWindow::histogram() const { return m_display->histogram(); }
VolumeView* MainWindow::volumeView() const { return m_volumePanel->view(); }
QProgressDialog* MainWindow::exportProgress() const { return m_exportProgress.data(); }
const std::optional<DatasetSummary>& MainWindow::dataset() const { return m_datasets->dataset(); }
const DatasetPixelSize& MainWindow::pixelSize() const { return m_datasets->pixelSize(); }
DatasetCheck* MainWindow::datasetCheck() const { return m_datasets->check(); }
void MainWindow::openPath(const QString& path, const tomo::OpenOptions& options) { m_datasets->open(path, options); }
void MainWindow::openDemo(const DemoSpec& spec) { m_datasets->openDemo(spec); }
void MainWindow::setPixelSize(double micrometres) { m_datasets->setPixelSize(micrometres); }
const SliceResult* MainWindow::currentResult() const { return m_session->result().get(); }
const ReferenceResult* MainWindow::activeReference() const { return m_session->activeReference(); }
const Comparison* MainWindow::currentComparison() const { return m_session->comparison(); }
double MainWindow::lastLatency() const { return m_session->lastLatency(); }
double MainWindow::lastShowCpuSeconds() const { return m_session->lastShowCpuSeconds(); }

// ------------------------------------------------------------------ layout

void MainWindow::createDocks() {
    // Each panel makes its dock; the window only places them.
    auto place = [this](QDockWidget* dock, Qt::DockWidgetArea area) {
        addDockWidget(area, dock);
        return dock;
    };
    m_params = new ParameterPanel;
    m_corrections = new CorrectionsPanel;
    m_metadata = new MetadataPanel;
    m_display = new DisplayPanel;
    m_quality = new QualityPanel;
    m_data = new DataPanel;
    m_volumePanel = new VolumePanel;
    m_profile = new ProfilePlot;
    QDockWidget* params = place(m_params->makeDock(this), Qt::LeftDockWidgetArea);
    QDockWidget* corrections = place(m_corrections->makeDock(this), Qt::LeftDockWidgetArea);
    QDockWidget* metadata = place(m_metadata->makeDock(this), Qt::LeftDockWidgetArea);
    tabifyDockWidget(params, corrections);
    tabifyDockWidget(corrections, metadata);
    params->raise();
    QDockWidget* display = place(m_display->makeDock(this), Qt::RightDockWidgetArea);
    QDockWidget* quality = place(m_quality->makeDock(this), Qt::RightDockWidgetArea);
    // The profile plot is a view: its dock is the window's.
    m_profileDock = place(makeDock(this, tr("Profile"), QStringLiteral("profileDock"), m_profile, DockFit::Scroll),
                          Qt::BottomDockWidgetArea);
    QDockWidget* data = place(m_data->makeDock(this), Qt::BottomDockWidgetArea);
    tabifyDockWidget(m_profileDock, data);
    m_profileDock->raise();
    QDockWidget* volume = place(m_volumePanel->makeDock(this), Qt::RightDockWidgetArea);
    tabifyDockWidget(quality, volume);
    quality->raise();
    createIterativeDocks();
    resizeDocks({params, display}, {340, 430}, Qt::Horizontal);
    resizeDocks({display, quality}, {200, 560}, Qt::Vertical);
    resizeDocks({m_profileDock}, {330}, Qt::Vertical);

    // The parameter panel holds the corrections (its params() is the whole
    // request); the Corrections panel edits them.
    connect(m_corrections, &CorrectionsPanel::optionsChanged, this,
            [this](const tomo::CorrectionOptions& c) { m_params->setCorrections(c); });
    connect(m_data, &DataPanel::requested, m_controller, &Controller::requestDataView);
    connect(m_volumePanel, &VolumePanel::viewCreated, this, [this](VolumeView* view) {
        if (dataset()) view->setDataset(dataset()->info.rows, m_params->params().row);
        connect(view, &VolumeView::reconstructRequested, this, [this](int first, int count) {
            if (!dataset()) {
                statusBar()->showMessage(tr("Open a dataset first"), 4000);
                return;
            }
            if (!m_controller->reconstructSubVolume(m_params->params(), first, count)) showBusy();
        });
    });

    connect(m_display, &DisplayPanel::colormapChosen, this, &MainWindow::setColormap);
    connect(m_display, &DisplayPanel::lowEdited, this, [this](float low) { applyWindow(low, m_slice->windowHigh(), true); });
    connect(m_display, &DisplayPanel::highEdited, this, [this](float high) { applyWindow(m_slice->windowLow(), high, true); });
    connect(m_display, &DisplayPanel::windowDragged, this, [this](float lo, float hi) { applyWindow(lo, hi, true); });
    connect(m_slice, &SliceView::windowChanged, this, [this](float lo, float hi) { applyWindow(lo, hi, true); });
    connect(m_slice, &SliceView::lineChanged, this, &MainWindow::setProfileLine);
    connect(m_slice, &SliceView::regionSelected, this, [this](const QRect& r) {
        m_params->setRegion(tomo::Region{r.x(), r.y(), r.width(), r.height()});
        m_panAction->trigger();
    });
    connect(m_slice, &SliceView::hovered, this, [this](QPoint p, float v, bool inside) {
        m_status->setHover(inside ? QStringLiteral("x %1  y %2  %3").arg(p.x()).arg(p.y()).arg(m_unit.format(v, 5))
                                     : QString());
    });
    // Result and difference views move together.
    connect(m_slice, &SliceView::viewChanged, m_quality->view(), &SliceView::setView);
    connect(m_quality->view(), &SliceView::viewChanged, m_slice, &SliceView::setView);
    connect(m_quality->view(), &SliceView::lineChanged, this, &MainWindow::setProfileLine);
    connect(m_quality->view(), &SliceView::hovered, this, [this](QPoint p, float v, bool inside) {
        m_status->setHover(inside ? tr("x %1  y %2  Δ %3").arg(p.x()).arg(p.y()).arg(m_unit.format(v)) : QString());
    });

    connect(m_params, &ParameterPanel::paramsChanged, this, &MainWindow::onParamsChanged);
    connect(m_params, &ParameterPanel::reconstructRequested, this, &MainWindow::requestSlice);
    connect(m_params, &ParameterPanel::cancelRequested, this, [this] {
        m_session->cancel();
        statusBar()->showMessage(tr("Slice cancelled"), 3000);
    });
    connect(m_params, &ParameterPanel::findAxisRequested, m_controller, &Controller::findAxis);
    connect(m_params, &ParameterPanel::drawRegionRequested, this, [this] { m_regionAction->trigger(); });
    connect(m_params, &ParameterPanel::failed, this, &MainWindow::showError);
    connect(m_params, &ParameterPanel::correctionsReplaced, this, [this](const tomo::CorrectionOptions& c) {
        // A parameter file's Paganin pixel size is this dataset's (one pixel size for everything).
        const double um = c.paganin.pixelSizeM * 1e6;
        m_corrections->setOptions(c);
        if (c.paganin.enabled && um > 0.0 && dataset() && std::abs(um - pixelSize().micrometres) > 1e-9 * um)
            m_datasets->setPixelSize(um);
    });
    connect(m_metadata, &MetadataPanel::pixelSizeEntered, m_datasets, &DatasetSession::setPixelSize);
    connect(m_corrections, &CorrectionsPanel::ringDifferenceRequested, this, &MainWindow::showRingDifference);

    // Another reference or disc: the worker compares the slice on screen again.
    auto compareAgain = [this] {
        syncDisplaySettings();
        m_session->compareAgain();
    };
    connect(m_quality, &QualityPanel::referenceKindChanged, this, compareAgain);
    connect(m_quality, &QualityPanel::discOnlyChanged, this, compareAgain);
    connect(m_quality, &QualityPanel::pinRequested, this, &MainWindow::pinCurrent);
    connect(m_quality, &QualityPanel::automaticReferenceChanged, this, [this](bool on) {
        if (on) m_session->requestReferenceIfNeeded();
    });
    connect(m_quality, &QualityPanel::computeRequested, this, [this] { m_session->requestReferenceIfNeeded(true); });
    connect(m_quality->dock(), &QDockWidget::visibilityChanged, this, [this, compareAgain](bool visible) {
        if (visible) compareAgain();
        else syncDisplaySettings();
    });
}

void MainWindow::createActions() {
    auto action = [this](const QString& text, const char* iconName, const QKeySequence& key, const QString& tip,
                         auto slot) {
        QAction* a = makeAction(this, text, iconName, key, tip);
        connect(a, &QAction::triggered, this, slot);
        return a;
    };

    // File (Live mode's entries among them)
    m_live = new LiveMode(m_controller, this);
    m_datasets->setLiveMode(m_live);
    connect(m_live, &LiveMode::failed, this, &MainWindow::showError);
    auto* fileMenu = new FileMenu(this, m_datasets, m_live);
    connect(fileMenu, &FileMenu::loadParametersRequested, this, &MainWindow::loadParameters);
    connect(fileMenu, &FileMenu::saveParametersRequested, this, &MainWindow::saveParameters);
    connect(fileMenu, &FileMenu::exportRequested, this, [this] {
        const std::unique_ptr<ExportDialog> dialog = makeExportDialog();
        if (dialog->exec() == QDialog::Accepted) startExport(dialog->request());
    });
    connect(fileMenu, &FileMenu::saveSliceValuesRequested, this, &MainWindow::saveSliceValues);
    connect(fileMenu, &FileMenu::saveSliceImageRequested, this, &MainWindow::saveSliceImage);
    QAction* open = fileMenu->openAction();
    QAction* demo = fileMenu->demoAction();
    QAction* loadParams = fileMenu->loadParametersAction();
    QAction* saveParams = fileMenu->saveParametersAction();
    QAction* exportAction = fileMenu->exportAction();
    connect(m_controller, &Controller::liveSnapshotShown, this, [this] {
        if (dataset()) requestSlice(); // the scan grew (DatasetSession counts its projections)
    });

    // Edit: undo / redo of parameter changes.
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_history->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    undo->setObjectName(QStringLiteral("undoAction"));
    QAction* redo = m_history->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts({QKeySequence::Redo, QKeySequence(tr("Ctrl+Y"))});
    redo->setObjectName(QStringLiteral("redoAction"));
    edit->addActions({undo, redo});

    // Reconstruction
    QMenu* recon = menuBar()->addMenu(tr("&Reconstruction"));
    QAction* run = action(tr("&Reconstruct Slice"), "reconstruct", QKeySequence(Qt::Key_F5),
                          tr("Reconstruct the current slice now"), [this] { requestSlice(); });
    QAction* cancel = action(tr("&Cancel"), "cancel", QKeySequence(Qt::Key_Escape), tr("Cancel the running slice or job"),
                             [this] {
                                 m_session->cancel();
                                 m_controller->cancelJob();
                                 statusBar()->showMessage(tr("Cancelled"), 3000);
                             });
    QAction* live = m_params->liveUpdateAction();
    QAction* findAxis = m_params->findAxisAction();
    const QList<QAction*> steps = m_params->stepActions(); // axis and row
    QAction* sweep = action(tr("Axis &Sweep…"), nullptr, QKeySequence(tr("Ctrl+Shift+F")),
                            tr("Trial slices of this row over a range of axes; click the sharpest to use its axis"),
                            [this] { showAxisSweep(); });
    QAction* compare = action(tr("Compare &Modes…"), "compare", QKeySequence(tr("Ctrl+M")),
                              tr("Reconstruct this slice in every available mode; error and speed side by side"),
                              [this] { compareModes(); });
    QAction* pin = m_quality->pinAction();
    recon->addActions({run, cancel, live});
    recon->addSeparator();
    recon->addActions({findAxis, sweep});
    recon->addActions(steps);
    recon->addSeparator();
    recon->addActions({pin, compare, exportAction});

    // View
    QMenu* view = menuBar()->addMenu(tr("&View"));
    auto* tools = new QActionGroup(this);
    m_panAction = action(tr("&Pan Tool"), "pan", QKeySequence(Qt::Key_H), tr("Drag to pan; wheel zooms everywhere"),
                         [this] { m_slice->setTool(SliceView::Tool::Pan); m_quality->view()->setTool(SliceView::Tool::Pan); });
    m_lineAction = action(tr("&Line Tool"), "line", QKeySequence(Qt::Key_L), tr("Drag a line on the slice to plot its profile"),
                          [this] { m_slice->setTool(SliceView::Tool::Line); m_quality->view()->setTool(SliceView::Tool::Line); });
    m_regionAction = action(tr("&Region Tool"), "region", QKeySequence(Qt::Key_R),
                            tr("Drag a rectangle to reconstruct only that region"),
                            [this] { m_slice->setTool(SliceView::Tool::Region); });
    for (QAction* a : {m_panAction, m_lineAction, m_regionAction}) {
        a->setCheckable(true);
        tools->addAction(a);
    }
    m_panAction->setChecked(true);
    m_slice->setTool(SliceView::Tool::Pan);
    QAction* fit = action(tr("&Fit to Window"), "fit", QKeySequence(Qt::Key_F), tr("Fit the slice into the view"), [this] {
        m_slice->fitToWindow();
        m_quality->view()->fitToWindow();
    });
    QAction* oneToOne = action(tr("Zoom &1:1"), "one-to-one", QKeySequence(Qt::Key_1),
                               tr("One screen pixel per slice pixel"), [this] { m_slice->zoomOneToOne(); });
    QAction* autoWindow = m_display->autoWindowAction();
    connect(autoWindow, &QAction::triggered, this, [this](bool on) {
        if (on && m_session->result()) applyWindow(m_session->result()->stats.autoLow, m_session->result()->stats.autoHigh, false);
        syncDisplaySettings();
    });
    view->addMenu(tr("&Colormap"))->addActions(m_display->colormapActions());
    QAction* pixelSize = m_metadata->pixelSizeAction();
    QMenu* units = new QMenu(tr("&Values"), this);
    units->addActions(m_display->valueUnitActions());
    connect(m_display, &DisplayPanel::valueUnitChosen, this, &MainWindow::setValueUnitKind);
    QAction* show3d = m_volumePanel->showAction();
    QAction* resetLayout = action(tr("Reset &Layout"), nullptr, QKeySequence(),
                                  tr("Put every panel back in its place (as tabs in one column on a small window)"),
                                  [this] { applyDefaultLayout(); });
    view->addActions({m_panAction, m_lineAction, m_regionAction});
    view->addSeparator();
    view->addActions({fit, oneToOne, autoWindow, pixelSize});
    view->addMenu(units);
    view->addSeparator();
    for (QDockWidget* d : {m_params->dock(), m_method->dock(), m_corrections->dock(), m_metadata->dock(),
                           m_display->dock(), m_quality->dock(), m_profileDock, m_data->dock(), m_convergenceDock,
                           m_reprojectionDock})
        view->addAction(d->toggleViewAction());
    view->addAction(show3d);
    view->addAction(resetLayout);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(action(tr("&Keyboard Shortcuts"), nullptr, QKeySequence(Qt::Key_F1), tr("List the shortcuts"),
                           [this] { showShortcuts(this, findChildren<QAction*>()); }));
    help->addAction(action(tr("&About"), nullptr, QKeySequence(), tr("About Tomo Workstation"), [this] {
        QMessageBox::about(this, tr("About Tomo Workstation"),
                           tr("<h3>Tomo Workstation %1</h3><p>Parallel-beam tomography: live slice reconstruction, "
                              "quality comparison of fast approximate back-projection modes, 3D view.</p>"
                              "<p>Strategies in this build: %2</p>")
                               .arg(QCoreApplication::applicationVersion())
                               .arg([] {
                                   QStringList names;
                                   for (const tomo::Backend* b : tomo::BackendRegistry::instance().backends())
                                       names << QString::fromStdString(b->name()) %
                                                    (b->unavailableReason().empty() ? QString() : tr(" (unavailable)"));
                                   return names.join(QStringLiteral(", "));
                               }()));
    }));

    // Toolbar
    QToolBar* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setIconSize(QSize(22, 22));
    bar->setToolButtonStyle(svgIconsAvailable() ? Qt::ToolButtonIconOnly : Qt::ToolButtonTextOnly);
    bar->addActions({open, demo, loadParams, saveParams});
    bar->addSeparator();
    bar->addActions({run, cancel, live, findAxis});
    bar->addSeparator();
    bar->addActions({m_panAction, m_lineAction, m_regionAction, fit, oneToOne, autoWindow});
    bar->addSeparator();
    bar->addActions({pin, compare, exportAction, show3d});
    addActions(steps);
}

void MainWindow::connectController() {
    connect(m_datasets, &DatasetSession::opened, this, &MainWindow::onDatasetOpened);
    connect(m_datasets, &DatasetSession::failed, this, &MainWindow::showError);
    connect(m_datasets, &DatasetSession::status, this,
            [this](const QString& message, int timeoutMs) { statusBar()->showMessage(message, timeoutMs); });
    connect(m_datasets, &DatasetSession::pixelSizeChanged, this, &MainWindow::applyPixelSize);
    // The slice flow: what the panels ask for, and what it shows.
    m_session->setWish([this] {
        return SliceSession::Wish{dataset().has_value(), m_params->params(), m_quality->referenceKind(),
                                  m_quality->automaticReference(), m_quality->isVisible()};
    });
    connect(m_session, &SliceSession::sliceShown, this, &MainWindow::onSliceReady);
    connect(m_session, &SliceSession::comparisonChanged, this, [this] {
        refreshComparison();
        refreshProfile();
    });
    connect(m_session, &SliceSession::referenceShown, this, &MainWindow::referenceShown);
    connect(m_session, &SliceSession::resultOnScreen, this, [this](quint64 id, double seconds) {
        m_status->setLatency(seconds);
        emit resultOnScreen(id, seconds);
    });
    connect(m_controller, &Controller::dataViewReady, m_data, &DataPanel::setView);
    connect(m_slice, &SliceView::imagePainted, m_session, &SliceSession::painted);
    connect(m_controller, &Controller::failed, this, &MainWindow::showError);
    connect(m_controller, &Controller::axisFound, this, [this](const AxisResult& r) {
        if (r.onOpening) {
            onOpeningAxisFound(r);
            return;
        }
        m_params->setAxisEstimate(r);
        statusBar()->showMessage(tr("Rotation axis %1 px (confidence %2)").arg(r.estimate.axis, 0, 'f', 3)
                                     .arg(r.estimate.confidence, 0, 'f', 2), 8000);
    });
    connect(m_datasets, &DatasetSession::openFailed, this, [this](const QString& path) {
        if (dataset()) return; // the dataset on screen stays
        m_slice->setCaption(tr("Could not open %1. Open a dataset (Ctrl+O), drop one here, or open the demo "
                               "phantom (Ctrl+D).")
                                .arg(path.isEmpty() ? tr("the demo phantom") : QFileInfo(path).fileName()));
    });
    connect(m_controller, &Controller::axisFailed, this, [this](int, const QString& why) {
        m_params->setAxisSearchFailed(why);
        if (!std::exchange(m_openingAxisPending, false)) return;
        statusBar()->showMessage(tr("The rotation axis could not be found automatically (%1): the slice stays at %2 px")
                                     .arg(why)
                                     .arg(m_params->params().axis, 0, 'f', 3),
                                 12000);
        emit openingAxisSearched();
    });
    connect(m_controller, &Controller::correctionsRejected, this,
            [this](const tomo::CorrectionOptions& corrections, const QString& message) {
                m_rejectedCorrections = corrections;
                if (corrections == m_params->corrections()) m_corrections->showRejected(message);
                m_corrections->showDock();
            });
    connect(m_controller, &Controller::sliceCancelled, this, [this] {
        if (!m_slice->hasImage()) m_slice->setCaption(tr("Cancelled: press F5 to reconstruct"));
    });
    connect(m_controller, &Controller::sliceFailed, this, [this] {
        if (!m_slice->hasImage())
            m_slice->setCaption(tr("The reconstruction failed (see the message): change the parameters or press F5"));
    });
    connect(m_controller, &Controller::busyChanged, this, [this](bool busy) {
        m_status->setBusy(busy);
        m_params->setBusy(busy);
    });
    connect(m_controller, &Controller::referenceBusyChanged, m_quality, &QualityPanel::setReferenceBusy);

    connectJobs();
    m_session->listen();
}

// ---------------------------------------------------------------- datasets

void MainWindow::onDatasetOpened(const DatasetSummary& summary) {
    m_session->reset();
    m_slice->clear();
    m_slice->setCaption(tr("Reconstructing…"));
    m_quality->clear();
    m_quality->setTruthAvailable(summary.demo.has_value());
    m_quality->setPinnedLabel({});
    m_profile->clear();
    m_metadata->setDataset(summary);
    m_data->setDataset(summary);
    m_corrections->setDataset(summary);
    m_rejectedCorrections.reset();
    m_ringDifference.reset();
    applyPixelSize(); // the new dataset's (DatasetSession)
    if (m_sweepDialog) { // its trial slices were another dataset's
        m_sweepDialog->gallery()->clear();
        m_sweepDialog->hide();
    }
    if (VolumeView* volume = volumeView()) {
        volume->clearVolume(); // it showed the previous dataset
        volume->setDataset(summary.info.rows, summary.info.rows / 2);
    }
    updateTitle();

    // Keep the options the user had; the geometry is the new dataset's.
    const SliceParams previous = m_params->params();
    m_params->setDataset(summary);
    SliceParams p = m_params->params();
    p.options = previous.options;
    p.axis = summary.divergent ? summary.divergent->axis : (summary.info.columns - 1) / 2.0;
    p.axis = m_datasets->rememberedAxis(summary.path).value_or(p.axis);
    // Without a remembered axis the first slice shows the detector centre
    // (a large scan's slice comes at once); the finder's axis follows.
    m_openingAxis.reset();
    m_openingAxisPending = summary.axisSearchPending;
    m_axisBeforeSearch = p.axis;
    if (summary.axisSearchPending) m_params->setAxisSearching();
    // A new dataset starts with the automatic window: the last one's values mean nothing here.
    m_display->autoWindowAction()->setChecked(true);
    syncDisplaySettings();
    const auto [opened, timeoutMs] = m_datasets->openedStatus();
    statusBar()->showMessage(opened, timeoutMs);
    // A parameter file opened this dataset: its parameters make the first slice.
    if (const auto pending = m_datasets->takePendingParameters()) {
        try {
            p = paramsFromConfig(pending->config, p);
            statusBar()->showMessage(tr("Parameters loaded from %1").arg(QFileInfo(pending->path).fileName()), 8000);
        } catch (const std::exception& e) {
            showError(tr("Cannot load parameters"), QString::fromUtf8(e.what()));
        }
    }
    // The history starts with this dataset's parameters.
    m_history->quietly([&] { m_params->setParams(p); }); // emits paramsChanged -> first slice
    m_history->restart(m_params->params());
    if (!m_params->liveUpdate()) requestSlice();
}

SliceParams MainWindow::paramsFromConfig(const tomo::RunConfig& config, const SliceParams& current) const {
    SliceParams p = fromRunConfig(config, dataset()->info.projections);
    // No axis in the file means "found automatically": keep the one found
    // on opening (or the current one).
    if (!config.axis) p.axis = m_openingAxis ? m_openingAxis->estimate.axis : current.axis;
    const bool covers = config.rowCount == 0 ? current.row >= config.firstRow
                                             : current.row >= config.firstRow && current.row < config.firstRow + config.rowCount;
    p.moveToRow(covers ? current.row : std::clamp(config.firstRow, 0, dataset()->info.rows - 1)); // along a tilted axis
    return p;
}

bool MainWindow::loadParameters(const QString& path) {
    try {
        const tomo::RunConfig config = tomo::loadRunConfig(path.toStdString());
        setLastDirectory(path);
        if (m_datasets->openFor(config, path)) return true; // applied once its dataset is open
        m_params->setParams(paramsFromConfig(config, m_params->params()));
        statusBar()->showMessage(tr("Parameters loaded from %1").arg(QFileInfo(path).fileName()), 8000);
        return true;
    } catch (const std::exception& e) {
        showError(tr("Cannot load parameters"), QString::fromUtf8(e.what()));
        return false;
    }
}

bool MainWindow::saveParameters(const QString& path) {
    try {
        const QString input = dataset() ? dataset()->path : QString();
        tomo::saveRunConfig(path.toStdString(), toRunConfig(m_params->params(), dataset().value_or(DatasetSummary{}), 0, 0));
        setOutputDirectory(path);
        statusBar()->showMessage(
            input.isEmpty() ? tr("Saved %1 (demo phantom: no input file recorded)").arg(QFileInfo(path).fileName())
                            : tr("Saved %1: tomo-recon --config %1 reproduces this reconstruction")
                                  .arg(QFileInfo(path).fileName()),
            10000);
        return true;
    } catch (const std::exception& e) {
        showError(tr("Cannot save parameters"), QString::fromUtf8(e.what()));
        return false;
    }
}

void MainWindow::onOpeningAxisFound(const AxisResult& r) {
    m_openingAxisPending = false;
    m_openingAxis = r;
    const QString found = tr("rotation axis %1 px found automatically (confidence %2)")
                              .arg(r.estimate.axis, 0, 'f', 3)
                              .arg(r.estimate.confidence, 0, 'f', 2);
    if (m_params->params().axis != m_axisBeforeSearch) {
        // The user moved the axis meanwhile: theirs stays.
        statusBar()->showMessage(tr("%1; not applied: the axis was moved meanwhile").arg(found), 12000);
        m_params->setAxisSearchFailed(tr("found %1 px, not applied: the axis was moved meanwhile").arg(r.estimate.axis, 0, 'f', 3));
    } else {
        m_params->setAxisEstimate(r, true);
        statusBar()->showMessage(found.left(1).toUpper() % found.mid(1), 12000);
        onParamsChanged(); // the slice at the found axis
    }
    emit openingAxisSearched();
}

// ------------------------------------------------------------------ errors

void MainWindow::showBusy() {
    showError(tr("Busy"), tr("Another long job is running; cancel it or wait for it to finish."));
}

void MainWindow::showError(const QString& title, const QString& message) {
    emit errorShown(title, message);
    statusBar()->showMessage(title, 8000);
    if (m_errorBox && m_errorBox->isVisible()) {
        // One dialog at a time: later errors are appended, each once (a
        // failing strategy fails again on every live change).
        const QString entry = title % QStringLiteral(": ") % message;
        if (m_errorBox->windowTitle() == title && m_errorBox->text() == message) return;
        if (!m_errorBox->text().contains(entry)) m_errorBox->setText(m_errorBox->text() % QStringLiteral("\n\n") % entry);
        return;
    }
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("errorDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setInformativeText(dataset() ? tr("The workstation keeps running; the dataset on screen and its parameters "
                                           "are unchanged.")
                                        : tr("The workstation keeps running."));
    m_errorBox = box;
    box->open();
}

// ------------------------------------------------------- settings and files

void MainWindow::applySettings(const WindowSettings& settings) {
    if (!settings.geometry.isEmpty()) {
        restoreGeometry(settings.geometry);
        restoreState(settings.state);
        m_compactLayout = width() < kCompactWidth;
    } else {
        // First start: as large as 1600 x 1000 fits on the screen, with the layout for that size.
        const QSize available = screen() ? screen()->availableGeometry().size() : QSize(1600, 1000);
        resize(std::min(1600, available.width()), std::min(1000, available.height()));
        applyDefaultLayout();
    }
    setColormap(settings.colormap);
    applyPixelSize(); // none until a dataset says or is told its own
    m_unitKind = settings.valueUnit;
    updateValueUnit();
    m_display->autoWindowAction()->setChecked(settings.autoWindow);
    m_params->setLiveUpdate(settings.liveUpdate);
    m_params->liveUpdateAction()->setChecked(settings.liveUpdate);
    if (settings.options) {
        SliceParams p = m_params->params();
        p.options = *settings.options;
        m_params->setParams(p);
    }
    m_quality->setReferenceKind(settings.reference);
}

WindowSettings MainWindow::currentSettings() const {
    WindowSettings s;
    s.geometry = saveGeometry();
    s.state = saveState();
    s.colormap = m_slice->colormapName();
    s.valueUnit = m_unitKind;
    s.autoWindow = m_display->autoWindowAction()->isChecked();
    s.reference = m_quality->referenceKind();
    s.liveUpdate = m_params->liveUpdate();
    s.options = m_params->params().options;
    return s;
}

QString MainWindow::outputDirectory() const { return tomo::ui::outputDirectory(); }

void MainWindow::updateTitle() {
    setWindowTitle(dataset() ? dataset()->title % QStringLiteral(" — Tomo Workstation") : QStringLiteral("Tomo Workstation"));
}

QString MainWindow::statusSummary() const {
    return m_status->summary();
}

void MainWindow::applyPixelSize() {
    const DatasetPixelSize& pixel = pixelSize();
    const double um = pixel.micrometres;
    m_slice->setPixelSize(um);
    m_quality->view()->setPixelSize(um);
    m_metadata->setPixelSize(pixel);
    m_corrections->setPixelSize(um);
    const bool asking = pixel.source == DatasetPixelSize::Source::Unknown && dataset();
    m_status->setPixelSize(pixel, asking);
    updateValueUnit();
}

void MainWindow::setValueUnitKind(ValueUnitKind kind) {
    m_unitKind = kind;
    updateValueUnit();
}

void MainWindow::updateValueUnit() {
    m_unit = ValueUnit::make(m_unitKind, pixelSize().micrometres);
    m_slice->setValueUnit(m_unit);
    m_quality->setValueUnit(m_unit);
    m_display->setValueUnit(m_unit, pixelSize().known());
    m_profile->setValueUnit(m_unit);
    applyWindow(m_slice->windowLow(), m_slice->windowHigh(), false);
    refreshProfile();
}

void MainWindow::applyDefaultLayout() {
    restoreState(m_defaultState);
    m_compactLayout = width() < kCompactWidth;
    if (!m_compactLayout) return;
    // Two groups of tabs, so that every tab's title fits its tab: what
    // makes the slice in the left column, what looks at it below the slice.
    QDockWidget* params = m_params->dock();
    QDockWidget* display = m_display->dock();
    for (QDockWidget* d : {m_method->dock(), m_corrections->dock(), m_metadata->dock()}) {
        addDockWidget(Qt::LeftDockWidgetArea, d);
        tabifyDockWidget(params, d);
    }
    addDockWidget(Qt::BottomDockWidgetArea, display);
    for (QDockWidget* d : {m_quality->dock(), m_volumePanel->dock(), m_profileDock, m_data->dock(), m_convergenceDock,
                           m_reprojectionDock}) {
        addDockWidget(Qt::BottomDockWidgetArea, d);
        tabifyDockWidget(display, d);
    }
    params->raise();
    display->raise();
    resizeDocks({params}, {std::max(params->minimumSizeHint().width(), width() / 3)}, Qt::Horizontal);
    resizeDocks({display}, {height() * 3 / 10}, Qt::Vertical);
}

void MainWindow::resizeEvent(QResizeEvent* e) {
    QMainWindow::resizeEvent(e);
    // Crossing the compact width: the default layout for the new size
    // (after the resize, so the docks are sized for it).
    if ((width() < kCompactWidth) != m_compactLayout && isVisible())
        QTimer::singleShot(0, this, [this] {
            if ((width() < kCompactWidth) != m_compactLayout) applyDefaultLayout();
        });
}

void MainWindow::closeEvent(QCloseEvent* e) {
    m_datasets->rememberAxis();
    currentSettings().write();
    m_session->cancel();
    m_controller->cancelJob();
    e->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
    if (e->mimeData()->hasUrls() && !e->mimeData()->urls().isEmpty() && e->mimeData()->urls().first().isLocalFile())
        e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
    const QString path = e->mimeData()->urls().first().toLocalFile();
    e->acceptProposedAction();
    if (path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive)) loadParameters(path);
    else openPath(path);
}

} // namespace tomo::ui
