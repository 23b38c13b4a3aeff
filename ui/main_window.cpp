#include "main_window.h"

#include "work/file_places.h"
#include "work/latency_probe.h"
#include "work/live_mode.h"
#include "work/slice_session.h"

#include "application.h"
#include "dialogs/axis_sweep_dialog.h"
#include "dialogs/compare_modes_dialog.h"
#include "dialogs/export_dialog.h"
#include "dialogs/open_dialog.h"
#include "dialogs/shortcuts_dialog.h"
#include "panels/corrections_panel.h"
#include "panels/data_panel.h"
#include "panels/display_panel.h"
#include "panels/metadata_panel.h"
#include "panels/method_panel.h"
#include "panels/parameter_panel.h"
#include "panels/quality_panel.h"
#include "panels/volume_panel.h"
#include "views/histogram_widget.h"
#include "views/profile_plot.h"
#include "views/slice_view.h"
#include "views/status_figures.h"
#include "views/volume_view.h"
#include "work/dataset_check.h"

#include "tomo/error.h"
#include "tomo/metrics.h"
#include "tomo/registry.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressDialog>
#include <QSettings>
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

QString axisKey(const QString& path) { return datasetSettingsKey(QStringLiteral("axes"), path); }

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_controller(new Controller(this)), m_check(new DatasetCheck(this)),
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
    m_rememberAxis = new QTimer(this);
    m_rememberAxis->setSingleShot(true);
    m_rememberAxis->setInterval(1500);
    connect(m_rememberAxis, &QTimer::timeout, this, &MainWindow::rememberAxis);
    readSettings();
    syncDisplaySettings();
    updateTitle();
}

MainWindow::~MainWindow() = default;

CompareModesDialog* MainWindow::compareDialog() const { return m_compareDialog.data(); }
HistogramWidget* MainWindow::histogram() const { return m_display->histogram(); }
VolumeView* MainWindow::volumeView() const { return m_volumePanel->view(); }
QProgressDialog* MainWindow::exportProgress() const { return m_exportProgress.data(); }
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
        if (m_dataset) view->setDataset(m_dataset->info.rows, m_params->params().row);
        connect(view, &VolumeView::reconstructRequested, this, [this](int first, int count) {
            if (!m_dataset) {
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
        if (c.paganin.enabled && um > 0.0 && m_dataset && std::abs(um - m_pixel.micrometres) > 1e-9 * um)
            setPixelSize(um);
    });
    connect(m_metadata, &MetadataPanel::pixelSizeEntered, this, &MainWindow::setPixelSize);
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

    // File
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = action(tr("&Open…"), "open", QKeySequence::Open, tr("Open a dataset (HDF5, TIFF, folder of TIFFs)"), [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open dataset"), lastDirectory(),
            tr("Tomography data (*.h5 *.hdf5 *.hdf *.nxs *.tif *.tiff);;Parameter files (*.json);;All files (*)"));
        if (path.isEmpty()) return;
        if (path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive)) loadParameters(path);
        else openPath(path);
    });
    QAction* openWith = action(tr("Open &with Options…"), nullptr, QKeySequence(tr("Ctrl+Shift+O")),
                               tr("Open a folder of TIFFs or a raw file, with angles and raw layout"), [this] {
                                   OpenDialog dialog(lastDirectory(), this);
                                   if (dialog.exec() == QDialog::Accepted) openPath(dialog.path(), dialog.options());
                               });
    m_recentMenu = new QMenu(tr("Open &Recent"), this);
    QAction* demo = action(tr("Open &Demo Phantom"), "demo", QKeySequence(tr("Ctrl+D")),
                           tr("The 3D Shepp–Logan phantom with exact projections; its true image is known"),
                           [this] { openDemo(); });
    QAction* loadParams = action(tr("&Load Parameters…"), "load-params", QKeySequence(tr("Ctrl+L")),
                                 tr("Load reconstruction parameters from a JSON file (tomo-recon --config format)"), [this] {
                                     const QString path = QFileDialog::getOpenFileName(
                                         this, tr("Load parameters"), lastDirectory(), tr("Parameter files (*.json)"));
                                     if (!path.isEmpty()) loadParameters(path);
                                 });
    QAction* saveParams = action(tr("&Save Parameters…"), "save-params", QKeySequence::Save,
                                 tr("Save the parameters as JSON; run the same with tomo-recon --config FILE"), [this] {
                                     const QString base = m_dataset && !m_dataset->path.isEmpty()
                                                              ? QFileInfo(m_dataset->path).completeBaseName()
                                                              : QStringLiteral("demo_phantom");
                                     const QString path = QFileDialog::getSaveFileName(
                                         this, tr("Save parameters"),
                                         QDir(outputDirectory()).filePath(base % QStringLiteral("_params.json")),
                                         tr("Parameter files (*.json)"));
                                     if (!path.isEmpty()) saveParameters(path);
                                 });
    QAction* exportAction = action(tr("&Reconstruct to File…"), "export", QKeySequence(tr("Ctrl+E")),
                                   tr("Reconstruct a range of rows into an HDF5 file or TIFF stack"), [this] {
                                       if (!m_dataset) return;
                                       const std::unique_ptr<ExportDialog> dialog = makeExportDialog();
                                       if (dialog->exec() == QDialog::Accepted) startExport(dialog->request());
                                   });
    QAction* saveValues = action(tr("Save Slice &Values…"), nullptr, QKeySequence(tr("Ctrl+Shift+S")),
                                 tr("Save the current slice as float32 (TIFF or HDF5)"), [this] { saveSliceValues(); });
    QAction* saveImage = action(tr("Save Slice &Image…"), nullptr, QKeySequence(),
                                tr("Save the current slice as a PNG with the display window and colormap"),
                                [this] { saveSliceImage(); });
    QAction* workFolder = action(tr("&Work Folder…"), nullptr, QKeySequence(),
                                 tr("The folder that Reconstruct to File, Save Parameters and Save Slice propose"), [this] {
                                     const QString dir = QFileDialog::getExistingDirectory(this, tr("Work folder for results"),
                                                                                           outputDirectory());
                                     if (dir.isEmpty()) return;
                                     setOutputDirectory(dir);
                                     statusBar()->showMessage(tr("Results are proposed in %1").arg(dir), 6000);
                                 });
    QAction* quit = action(tr("&Quit"), nullptr, QKeySequence::Quit, tr("Quit"), [this] { close(); });
    file->addActions({open, openWith});
    file->addMenu(m_recentMenu);
    file->addAction(demo);
    file->addSeparator();
    m_live = new LiveMode(m_controller, this); // Open Stream…, Follow Growing File…, Record…, Stop Live
    m_live->addActions(file);
    connect(m_live, &LiveMode::failed, this, &MainWindow::showError);
    connect(m_controller, &Controller::liveSnapshotShown, this, [this](int projections) {
        if (!m_dataset) return;
        m_dataset->info.projections = projections; // the scan grew; the rest is the same
        requestSlice();
    });
    file->addSeparator();
    file->addActions({loadParams, saveParams});
    file->addSeparator();
    file->addActions({exportAction, saveValues, saveImage, workFolder});
    file->addSeparator();
    file->addAction(quit);

    // Reconstruction
    // Edit: undo / redo of parameter changes.
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_history->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    undo->setObjectName(QStringLiteral("undoAction"));
    QAction* redo = m_history->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts({QKeySequence::Redo, QKeySequence(tr("Ctrl+Y"))});
    redo->setObjectName(QStringLiteral("redoAction"));
    edit->addActions({undo, redo});

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
    // Values per pixel (as reconstructed) or, with the pixel size, per mm / cm.
    QMenu* units = new QMenu(tr("&Values"), this);
    m_unitGroup = new QActionGroup(this);
    const std::pair<ValueUnitKind, QString> kinds[] = {
        {ValueUnitKind::PerPixel, tr("Attenuation per &pixel")},
        {ValueUnitKind::PerMillimetre, tr("Attenuation per &mm")},
        {ValueUnitKind::PerCentimetre, tr("Attenuation per &cm")}};
    for (const auto& [kind, text] : kinds) {
        QAction* a = units->addAction(text);
        a->setCheckable(true);
        a->setData(static_cast<int>(kind));
        m_unitGroup->addAction(a);
        connect(a, &QAction::triggered, this, [this, kind = kind] { setValueUnitKind(kind); });
    }
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
    connect(m_controller, &Controller::datasetOpened, this, &MainWindow::onDatasetOpened);
    // The slice flow: what the panels ask for, and what it shows.
    m_session->setWish([this] {
        return SliceSession::Wish{m_dataset.has_value(), m_params->params(), m_quality->referenceKind(),
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
    auto openFailed = [this](const QString& path) {
        if (m_dataset) return; // the dataset on screen stays
        m_slice->setCaption(tr("Could not open %1. Open a dataset (Ctrl+O), drop one here, or open the demo "
                               "phantom (Ctrl+D).")
                                .arg(path.isEmpty() ? tr("the demo phantom") : QFileInfo(path).fileName()));
    };
    connect(m_controller, &Controller::openFailed, this, openFailed);
    connect(m_check, &DatasetCheck::passed, this, [this](const QString& path, const tomo::OpenOptions& options) {
        openChecked(path, options);
    });
    connect(m_check, &DatasetCheck::unchecked, this, &MainWindow::openChecked);
    connect(m_check, &DatasetCheck::failed, this, [this, openFailed](const QString& path, const QString& message) {
        showError(tr("Cannot open %1").arg(QFileInfo(path).fileName()), message);
        openFailed(path);
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

void MainWindow::openPath(const QString& path, const tomo::OpenOptions& options) {
    rememberAxis();
    setLastDirectory(path);
    if (LiveMode::isGrowingFile(path)) { // still being written: followed in Live mode
        m_live->followFile(path);
        return;
    }
    // A damaged file may crash or hang the file library: it is read in a
    // separate process first, and opened here only when that went well.
    if (DatasetCheck::applies(path, options)) {
        statusBar()->showMessage(tr("Checking %1…").arg(QFileInfo(path).fileName()));
        m_check->check(path, options);
    } else {
        m_check->cancel(); // the latest open wins
        openChecked(path, options);
    }
}

void MainWindow::openChecked(const QString& path, const tomo::OpenOptions& options, const QString& note) {
    // Without an axis remembered for this dataset (or one from a parameter
    // file about to be applied: a file without `axis` asks for the finder)
    // the finder runs after the first slice.
    const bool findAxis =
        !QSettings().contains(axisKey(path)) && (m_pendingParameters.isEmpty() || !m_pendingParametersSetAxis);
    const QString name = QFileInfo(path).fileName();
    m_openNote = note.isEmpty() ? QString() : QStringLiteral(" — ") % tr("without the damaged-file guard: %1").arg(note);
    statusBar()->showMessage((findAxis ? tr("Opening %1 and finding its rotation axis…").arg(name)
                                       : tr("Opening %1…").arg(name)) %
                             m_openNote);
    m_controller->openFile(path, options, findAxis);
}

void MainWindow::openDemo(const DemoSpec& spec) {
    m_check->cancel(); // the latest open wins
    m_openNote.clear();
    statusBar()->showMessage(tr("Projecting the demo phantom…"));
    m_controller->openDemo(spec);
}

void MainWindow::rememberAxis() {
    noteUiActivity("remember-axis");
    m_rememberAxis->stop();
    if (auto pending = std::exchange(m_axisToRemember, std::nullopt))
        QSettings().setValue(axisKey(pending->first), pending->second);
}

void MainWindow::onDatasetOpened(const DatasetSummary& summary) {
    rememberAxis(); // the previous dataset's
    m_dataset = summary;
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
    m_pixel = pixelSizeOf(summary); // never the previous dataset's
    applyPixelSize();
    if (m_sweepDialog) { // its trial slices were another dataset's
        m_sweepDialog->gallery()->clear();
        m_sweepDialog->hide();
    }
    if (VolumeView* volume = volumeView()) {
        volume->clearVolume(); // it showed the previous dataset
        volume->setDataset(summary.info.rows, summary.info.rows / 2);
    }
    if (!summary.path.isEmpty()) {
        addRecentFile(summary.path);
        rebuildRecentMenu();
    }
    updateTitle();

    // Keep the options the user had; the geometry is the new dataset's.
    const SliceParams previous = m_params->params();
    m_params->setDataset(summary);
    SliceParams p = m_params->params();
    p.options = previous.options;
    p.axis = summary.divergent ? summary.divergent->axis : (summary.info.columns - 1) / 2.0;
    QSettings settings;
    if (!summary.path.isEmpty()) p.axis = settings.value(axisKey(summary.path), p.axis).toDouble();
    // Without a remembered axis the first slice shows the detector centre
    // (a large scan's slice comes at once); the finder's axis follows.
    QString axisNote;
    m_openingAxis.reset();
    m_openingAxisPending = summary.axisSearchPending;
    m_axisBeforeSearch = p.axis;
    if (summary.axisSearchPending) {
        m_params->setAxisSearching();
        axisNote = tr("; finding its rotation axis…");
    }
    // A new dataset starts with the automatic window: the last one's values mean nothing here.
    m_display->autoWindowAction()->setChecked(true);
    syncDisplaySettings();
    // What the reader warns about (e.g. counts without flats) is said at once; the Dataset panel lists it.
    const auto& warnings = summary.info.warnings;
    const QString warningNote =
        warnings.empty() ? QString()
                         : QStringLiteral(" — ") % tr("warning: %1").arg(readableWarning(summary.info, warnings.front()));
    const QString pixelNote = m_pixel.source == DatasetPixelSize::Source::Unknown
                                  ? tr("; its pixel size is not stated: enter it in the Dataset panel")
                                  : m_pixel.known() ? tr("; pixel %1").arg(m_pixel.text()) : QString();
    statusBar()->showMessage(tr("Opened %1: %2 projections × %3 rows × %4 columns%5%6%7%8")
                                 .arg(summary.title)
                                 .arg(summary.info.projections)
                                 .arg(summary.info.rows)
                                 .arg(summary.info.columns)
                                 .arg(pixelNote)
                                 .arg(axisNote)
                                 .arg(warningNote)
                                 .arg(m_openNote),
                             warnings.empty() && m_openNote.isEmpty() ? 12000 : 30000);
    const QString pending = std::exchange(m_pendingParameters, QString());
    if (!pending.isEmpty()) {
        // A parameter file opened its dataset: its parameters make the first
        // slice, but only for that dataset (not another one opened after a
        // failure).
        try {
            const tomo::RunConfig config = tomo::loadRunConfig(pending.toStdString());
            const QString input = QString::fromStdString(config.input.string());
            if (input.isEmpty() ? summary.demo.has_value() : QFileInfo(input) == QFileInfo(summary.path)) {
                p = paramsFromConfig(config, p);
                statusBar()->showMessage(tr("Parameters loaded from %1").arg(QFileInfo(pending).fileName()), 8000);
            }
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
    SliceParams p = fromRunConfig(config, m_dataset->info.projections);
    // No axis in the file means "found automatically": keep the one found
    // on opening (or the current one).
    if (!config.axis) p.axis = m_openingAxis ? m_openingAxis->estimate.axis : current.axis;
    const bool covers = config.rowCount == 0 ? current.row >= config.firstRow
                                             : current.row >= config.firstRow && current.row < config.firstRow + config.rowCount;
    p.moveToRow(covers ? current.row : std::clamp(config.firstRow, 0, m_dataset->info.rows - 1)); // along a tilted axis
    return p;
}

bool MainWindow::loadParameters(const QString& path) {
    try {
        const tomo::RunConfig config = tomo::loadRunConfig(path.toStdString());
        setLastDirectory(path);
        const QString input = QString::fromStdString(config.input.string());
        const bool sameDataset =
            m_dataset && ((input.isEmpty() && m_dataset->demo) ||
                          (!input.isEmpty() && QFileInfo(input) == QFileInfo(m_dataset->path) &&
                           sameOpenOptions(config.open, m_dataset->options)));
        m_pendingParametersSetAxis = config.axis.has_value();
        if (!input.isEmpty() && !sameDataset) {
            m_pendingParameters = path; // applied when the dataset is open
            openPath(input, config.open);
            return true;
        }
        if (!m_dataset) {
            m_pendingParameters = path;
            openDemo();
            return true;
        }
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
        const QString input = m_dataset ? m_dataset->path : QString();
        tomo::saveRunConfig(path.toStdString(), toRunConfig(m_params->params(), m_dataset.value_or(DatasetSummary{}), 0, 0));
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

// ------------------------------------------------------------- live slices

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

void MainWindow::onParamsChanged() {
    if (!m_dataset) return;
    m_history->record(m_params->params());
    if (!m_params->liveUpdate()) {
        statusBar()->showMessage(tr("Parameters changed: press F5 to reconstruct"), 4000);
        return;
    }
    requestSlice();
}

void MainWindow::requestSlice() {
    noteUiActivity("request-slice");
    if (!m_dataset) return;
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
    const QString mode = r.preview.fdk ? tr("FDK") : modeText(r.params.options);
    m_slice->setCaption(tr("%1 %2 · %3 · %4 · %5%6")
                            .arg(r.preview.fdk ? tr("Slice") : tr("Row"))
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
    if (m_dataset && !m_dataset->path.isEmpty() && !r.params.stitched()) {
        // Remembered once the changes stop: a settings write costs the UI thread a file write.
        m_axisToRemember = std::make_pair(m_dataset->path, r.params.axis);
        m_rememberAxis->start();
    }
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
    box->setInformativeText(m_dataset ? tr("The workstation keeps running; the dataset on screen and its parameters "
                                           "are unchanged.")
                                        : tr("The workstation keeps running."));
    m_errorBox = box;
    box->open();
}

// ------------------------------------------------------- settings and files

void MainWindow::readSettings() {
    QSettings s;
    if (s.contains(QStringLiteral("window/geometry"))) {
        restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
        restoreState(s.value(QStringLiteral("window/state")).toByteArray());
        m_compactLayout = width() < kCompactWidth;
    } else {
        // First start: as large as 1600 x 1000 fits on the screen, with the layout for that size.
        const QSize available = screen() ? screen()->availableGeometry().size() : QSize(1600, 1000);
        resize(std::min(1600, available.width()), std::min(1000, available.height()));
        applyDefaultLayout();
    }
    setColormap(s.value(QStringLiteral("view/colormap"), QStringLiteral("grey")).toString());
    applyPixelSize(); // none until a dataset says or is told its own
    m_unitKind = static_cast<ValueUnitKind>(std::clamp(s.value(QStringLiteral("view/valueUnit"), 0).toInt(), 0, 2));
    updateValueUnit();
    m_display->autoWindowAction()->setChecked(s.value(QStringLiteral("view/autoWindow"), true).toBool());
    const bool live = s.value(QStringLiteral("parameters/live"), true).toBool();
    m_params->setLiveUpdate(live);
    m_params->liveUpdateAction()->setChecked(live);
    const QString options = s.value(QStringLiteral("parameters/options")).toString();
    if (!options.isEmpty()) {
        try {
            SliceParams p = m_params->params();
            p.options = tomo::runConfigFromJson(options.toStdString()).options;
            // Settings written on another machine (a GPU strategy where
            // there is none here): the fastest available one instead.
            const tomo::Backend* b = tomo::BackendRegistry::instance().find(p.options.strategy);
            if (p.options.strategy != "auto" && (!b || !b->unavailableReason().empty())) p.options.strategy = "auto";
            m_params->setParams(p);
        } catch (const std::exception&) {
            // Settings from another version: keep the defaults.
        }
    }
    m_quality->setReferenceKind(static_cast<ReferenceKind>(
        std::clamp(s.value(QStringLiteral("view/reference"), 0).toInt(), 0, 1)));
    rebuildRecentMenu();
}

void MainWindow::writeSettings() {
    rememberAxis();
    QSettings s;
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    s.setValue(QStringLiteral("window/state"), saveState());
    s.setValue(QStringLiteral("view/colormap"), m_slice->colormapName());
    s.setValue(QStringLiteral("view/valueUnit"), static_cast<int>(m_unitKind));
    s.setValue(QStringLiteral("view/autoWindow"), m_display->autoWindowAction()->isChecked());
    s.setValue(QStringLiteral("view/reference"), static_cast<int>(m_quality->referenceKind()));
    s.setValue(QStringLiteral("parameters/live"), m_params->liveUpdate());
    tomo::RunConfig options;
    options.options = m_params->params().options;
    s.setValue(QStringLiteral("parameters/options"), QString::fromStdString(tomo::toJson(options)));
}

QString MainWindow::outputDirectory() const { return tomo::ui::outputDirectory(); }

void MainWindow::rebuildRecentMenu() {
    m_recentMenu->clear();
    const QStringList files = recentFiles();
    int index = 1;
    for (const QString& f : files) {
        QAction* a = m_recentMenu->addAction(QStringLiteral("&%1  %2").arg(index++ % 10).arg(QFileInfo(f).fileName()));
        a->setToolTip(f);
        a->setStatusTip(f);
        connect(a, &QAction::triggered, this, [this, f] { openPath(f); });
    }
    if (files.isEmpty()) m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
    m_recentMenu->addSeparator();
    connect(m_recentMenu->addAction(tr("Clear List")), &QAction::triggered, this, [this] {
        clearRecentFiles();
        rebuildRecentMenu();
    });
}

void MainWindow::updateTitle() {
    setWindowTitle(m_dataset ? m_dataset->title % QStringLiteral(" — Tomo Workstation") : QStringLiteral("Tomo Workstation"));
}

QString MainWindow::statusSummary() const {
    return m_status->summary();
}

void MainWindow::setPixelSize(double micrometres) {
    m_pixel = micrometres > 0.0 ? DatasetPixelSize{micrometres, DatasetPixelSize::Source::Entered}
                                : DatasetPixelSize{0.0, DatasetPixelSize::Source::Declined};
    if (m_dataset) rememberPixelSize(m_dataset->path, m_pixel.micrometres);
    applyPixelSize();
    statusBar()->showMessage(m_pixel.known() ? tr("Pixel size %1 for %2").arg(m_pixel.sizeText(), m_dataset ? m_dataset->title : QString())
                                             : tr("Pixel size not known: values per pixel, lengths in pixels"),
                             6000);
}

void MainWindow::applyPixelSize() {
    const double um = m_pixel.micrometres;
    m_slice->setPixelSize(um);
    m_quality->view()->setPixelSize(um);
    m_metadata->setPixelSize(m_pixel);
    m_corrections->setPixelSize(um);
    const bool asking = m_pixel.source == DatasetPixelSize::Source::Unknown && m_dataset;
    m_status->setPixelSize(m_pixel, asking);
    updateValueUnit();
}

void MainWindow::setValueUnitKind(ValueUnitKind kind) {
    m_unitKind = kind;
    updateValueUnit();
}

void MainWindow::updateValueUnit() {
    m_unit = ValueUnit::make(m_unitKind, m_pixel.micrometres);
    for (QAction* a : m_unitGroup->actions()) {
        const auto kind = static_cast<ValueUnitKind>(a->data().toInt());
        a->setEnabled(kind == ValueUnitKind::PerPixel || m_pixel.known());
        a->setToolTip(a->isEnabled() ? QString() : tr("Enter the dataset's pixel size first (View ▸ Pixel Size)"));
        a->setChecked(kind == m_unit.kind);
    }
    m_slice->setValueUnit(m_unit);
    m_quality->setValueUnit(m_unit);
    m_display->setValueUnit(m_unit);
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
    writeSettings();
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
