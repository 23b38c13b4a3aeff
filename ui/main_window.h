// The main window of tomo-workstation: a shell that creates the panels
// (each brings its dock and actions, panels/panel.h), the File menu
// (panels/file_menu.h) and the views, places them in its menus, toolbar and
// dock areas, and wires them to the controller (background reconstruction),
// the dataset on screen (work/DatasetSession: opening, recent files, what
// is remembered per dataset) and the slice flow (work/SliceSession); with
// drag and drop, the saved settings (work/WindowSettings) applied, and the
// error dialogs.
#pragma once

#include "views/value_unit.h"
#include "work/controller.h"
#include "work/params_history.h"
#include "work/recon_types.h"

#include <QLineF>
#include <QMainWindow>
#include <QPointer>

#include <memory>
#include <optional>

QT_BEGIN_NAMESPACE
class QAction;
class QDockWidget;
class QMessageBox;
class QProgressDialog;
class QUndoStack;
QT_END_NAMESPACE

namespace tomo::ui {

class AxisSweepDialog;
class CompareModesDialog;
class CorrectionsPanel;
class DataPanel;
class DatasetCheck;
class DatasetSession;
struct DatasetPixelSize;
class DisplayPanel;
class ExportDialog;
class HistogramWidget;
class LiveMode;
class MetadataPanel;
class MethodPanel;
class ConvergencePlot;
class ReprojectionView;
class ParameterPanel;
class ProfilePlot;
class QualityPanel;
class SliceSession;
class SliceView;
class StatusFigures;
class VolumePanel;
class VolumeView;
struct WindowSettings;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Entry points (menus, command line, drag and drop, tests).
    void openPath(const QString& path, const tomo::OpenOptions& options = {});
    void openDemo(const DemoSpec& spec = {});
    /// Loads a run configuration (JSON): opens its input when it names
    /// another dataset, then sets the parameters. Errors -> dialog, false.
    bool loadParameters(const QString& path);
    bool saveParameters(const QString& path);
    /// Starts a full reconstruction to a file with a progress dialog.
    bool startExport(const ExportRequest& request);
    void compareModes();
    void showVolumeView();
    /// Opens the axis sweep gallery around the axis on screen and runs it.
    void showAxisSweep();

    // For tests and scripting.
    Controller* controller() const { return m_controller; }
    ParameterPanel* parameterPanel() const { return m_params; }
    SliceView* sliceView() const { return m_slice; }
    QualityPanel* qualityPanel() const { return m_quality; }
    ProfilePlot* profilePlot() const { return m_profile; }
    HistogramWidget* histogram() const;
    DisplayPanel* displayPanel() const { return m_display; }
    MetadataPanel* metadataPanel() const { return m_metadata; }
    /// Null until the 3D view was first shown.
    VolumeView* volumeView() const;
    DataPanel* dataPanel() const { return m_data; }
    CorrectionsPanel* correctionsPanel() const { return m_corrections; }
    MethodPanel* methodPanel() const { return m_method; }
    ConvergencePlot* convergencePlot() const { return m_convergence; }
    ReprojectionView* reprojectionView() const { return m_reprojection; }
    QDockWidget* reprojectionDock() const { return m_reprojectionDock; }
    /// Runs tomo-recon --info on a file before it is opened (DatasetCheck).
    DatasetCheck* datasetCheck() const;
    /// The dataset on screen: opening, recent files, its axis and pixel size.
    DatasetSession* datasets() const { return m_datasets; }
    /// Null until Reconstruction ▸ Axis Sweep was opened.
    AxisSweepDialog* axisSweepDialog() const;
    /// Reconstruct to File's dialog for the parameters on screen, wired to
    /// the controller (range estimate) and sized for the slice grid.
    std::unique_ptr<ExportDialog> makeExportDialog();
    /// Parameter changes, undoable (Edit ▸ Undo / Redo).
    QUndoStack* history() const { return m_history; }
    CompareModesDialog* compareDialog() const;
    QProgressDialog* exportProgress() const;
    /// The slice on screen (null before the first one).
    const SliceResult* currentResult() const;
    const std::optional<DatasetSummary>& dataset() const;
    /// Live mode (File ▸ Open Stream…, Follow Growing File…).
    LiveMode* liveMode() const { return m_live; }
    /// The axis search the opening asked for runs (after the first slice).
    bool openingAxisPending() const { return m_openingAxisPending; }
    /// What it found (unset while pending, or when it failed).
    const std::optional<AxisResult>& openingAxis() const { return m_openingAxis; }
    /// The reference the quality panel compares with now (if it matches).
    const ReferenceResult* activeReference() const;
    /// The comparison made for the slice on screen (null while none).
    const Comparison* currentComparison() const;
    /// The slice flow: requests, the slice on screen, references and comparisons.
    SliceSession* session() const { return m_session; }
    /// backend · strategy · time · GU/s · on screen as shown in the status bar.
    QString statusSummary() const;
    /// Seconds from the request of the slice on screen (a parameter change)
    /// to its first paint; < 0 before the first one.
    double lastLatency() const;
    /// CPU time the UI thread spent showing the slice on screen: handling
    /// the result and its first paint (load-independent; < 0 where unknown).
    double lastShowCpuSeconds() const;
    void setProfileLine(const QLineF& line);
    /// The user's pixel size of the dataset on screen in micrometres (0 =
    /// not known), remembered with it: scale bar, value units and Paganin.
    void setPixelSize(double micrometres);
    const DatasetPixelSize& pixelSize() const;
    /// Pins the slice without ring removal as the reference of the one with
    /// it (the Corrections panel's damage guard button).
    void showRingDifference();
    /// Values per pixel, per mm or per cm (the last two need the pixel size).
    void setValueUnitKind(ValueUnitKind kind);
    const ValueUnit& valueUnit() const { return m_unit; }
    /// The work folder results are proposed in: the last folder a result
    /// was saved to (or File ▸ Work Folder), else the documents folder;
    /// never the input's folder by default.
    QString outputDirectory() const;

signals:
    void resultShown(quint64 id);
    /// The slice `id` was painted, `seconds` after it was requested.
    void resultOnScreen(quint64 id, double seconds);
    void referenceShown();
    void errorShown(const QString& title, const QString& message);
    /// The opening's axis search ended (found, applied or not, or failed).
    void openingAxisSearched();

protected:
    void closeEvent(QCloseEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    /// The parameters of a run config for the open dataset: no axis keeps
    /// the one found on opening, a row outside the config's rows moves in.
    SliceParams paramsFromConfig(const tomo::RunConfig& config, const SliceParams& current) const;
    /// The panels and their docks in their default places.
    void createDocks();
    /// Menus and toolbar: the window's actions and those the panels bring.
    void createActions();
    /// The panels' default places: beside the slice on a wide window, as
    /// tabs in one column below kCompactWidth (View ▸ Reset Layout).
    void applyDefaultLayout();
    /// The value unit from the choice and the pixel size, to every view.
    void updateValueUnit();
    /// The dataset's pixel size to the views, the Dataset and Corrections panels and the status bar.
    void applyPixelSize();
    void connectController();
    /// The long jobs' progress and results (main_window_jobs.cpp).
    void connectJobs();
    /// The settings of the last run on the window, its panels and views.
    void applySettings(const WindowSettings& settings);
    WindowSettings currentSettings() const;
    void onDatasetOpened(const DatasetSummary& summary);
    void onOpeningAxisFound(const AxisResult& result);
    /// The Method, Convergence and Reprojection docks, wired to the
    /// controller (main_window_iterative.cpp).
    void createIterativeDocks();

    // The live slice on screen (main_window_slice.cpp).
    /// Shows the slice the session received (`previous` was on screen before).
    void onSliceReady(const SliceResultPtr& result, const SliceResultPtr& previous);
    /// Tells the worker how to colour and compare the next slices.
    void syncDisplaySettings();
    void onParamsChanged();
    void requestSlice();
    /// The quality panel: the session's comparison, or why there is none yet.
    void refreshComparison();
    void refreshProfile();
    void applyWindow(float low, float high, bool fromUser);
    void setColormap(const QString& name);
    void pinCurrent();

    void saveSliceValues();
    void saveSliceImage();
    void showError(const QString& title, const QString& message);
    void showBusy();
    void updateTitle();

    Controller* m_controller = nullptr;
    DatasetSession* m_datasets = nullptr;
    SliceSession* m_session = nullptr;
    ParameterPanel* m_params = nullptr;
    SliceView* m_slice = nullptr;
    QualityPanel* m_quality = nullptr;
    ProfilePlot* m_profile = nullptr;
    DisplayPanel* m_display = nullptr;
    MetadataPanel* m_metadata = nullptr;
    VolumePanel* m_volumePanel = nullptr;
    DataPanel* m_data = nullptr;
    CorrectionsPanel* m_corrections = nullptr;
    ParamsHistory* m_history = nullptr;
    QDockWidget* m_profileDock = nullptr;        // the profile plot is a view: its dock is the window's
    MethodPanel* m_method = nullptr;
    ConvergencePlot* m_convergence = nullptr;     // views: their docks are the window's
    ReprojectionView* m_reprojection = nullptr;
    QDockWidget* m_convergenceDock = nullptr;
    QDockWidget* m_reprojectionDock = nullptr;
    quint64 m_plottedRun = 0;                     // the iterative slice the convergence plot shows
    QPointer<CompareModesDialog> m_compareDialog;
    QPointer<AxisSweepDialog> m_sweepDialog;
    QPointer<QProgressDialog> m_exportProgress;
    QPointer<QMessageBox> m_errorBox;

    StatusFigures* m_status = nullptr;

    QAction* m_panAction = nullptr;
    QAction* m_lineAction = nullptr;
    QAction* m_regionAction = nullptr;
    QByteArray m_defaultState;
    bool m_compactLayout = false;

    LiveMode* m_live = nullptr;
    /// Corrections this dataset refused: not asked for again until they change.
    std::optional<tomo::CorrectionOptions> m_rejectedCorrections;
    std::optional<JobKind> m_runningJob;          // between jobStarted and jobFinished
    /// The corrections to go back to once the slice without ring removal is pinned.
    std::optional<tomo::CorrectionOptions> m_ringDifference;
    ValueUnitKind m_unitKind = ValueUnitKind::PerPixel; // chosen (per mm / cm need the pixel size)
    ValueUnit m_unit;                                   // in effect

    bool m_openingAxisPending = false;
    std::optional<AxisResult> m_openingAxis;
    double m_axisBeforeSearch = 0.0; // the axis the first slice used: the found one replaces only that
};

} // namespace tomo::ui
