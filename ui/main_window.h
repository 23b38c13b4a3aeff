// The main window of tomo-workstation: wires the controller (background
// reconstruction) to the views and owns menus, toolbar, docks, status bar,
// settings, recent files, drag and drop and the error dialogs.
#pragma once

#include "controller.h"
#include "recon_types.h"

#include <QLineF>
#include <QMainWindow>
#include <QPointer>

#include <optional>

QT_BEGIN_NAMESPACE
class QAction;
class QActionGroup;
class QComboBox;
class QDockWidget;
class QDoubleSpinBox;
class QLabel;
class QMenu;
class QMessageBox;
class QProgressBar;
class QProgressDialog;
QT_END_NAMESPACE

namespace tomo::ui {

class CompareModesDialog;
class HistogramWidget;
class MetadataPanel;
class ParameterPanel;
class ProfilePlot;
class QualityPanel;
class SliceView;
class VolumeView;

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

    // For tests and scripting.
    Controller* controller() const { return m_controller; }
    ParameterPanel* parameterPanel() const { return m_params; }
    SliceView* sliceView() const { return m_slice; }
    QualityPanel* qualityPanel() const { return m_quality; }
    ProfilePlot* profilePlot() const { return m_profile; }
    HistogramWidget* histogram() const { return m_histogram; }
    MetadataPanel* metadataPanel() const { return m_metadata; }
    VolumeView* volumeView() const { return m_volume; }
    CompareModesDialog* compareDialog() const;
    QProgressDialog* exportProgress() const;
    const std::optional<SliceResult>& currentResult() const { return m_result; }
    const std::optional<DatasetSummary>& dataset() const { return m_dataset; }
    /// The reference the quality panel compares with now (if it matches).
    const ReferenceResult* activeReference() const;
    /// backend · strategy · time · GU/s as shown in the status bar.
    QString statusSummary() const;
    void setProfileLine(const QLineF& line);

signals:
    void resultShown(quint64 id);
    void referenceShown();
    void errorShown(const QString& title, const QString& message);

protected:
    void closeEvent(QCloseEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    void createActions();
    void createDocks();
    void createStatusBar();
    void connectController();
    void readSettings();
    void writeSettings();
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    QString lastDirectory() const;
    void setLastDirectory(const QString& pathInside);

    void onDatasetOpened(const DatasetSummary& summary);
    void onSliceReady(const SliceResult& result);
    void onReferenceReady(const ReferenceResult& reference);
    void onParamsChanged();
    void requestSlice();
    /// Cancels the live slice and the reference being computed.
    void cancelLive();
    void requestReferenceIfNeeded();
    bool referenceMatches(const ReferenceResult& ref, const SliceResult& result) const;
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
    void showShortcuts();

    Controller* m_controller = nullptr;
    ParameterPanel* m_params = nullptr;
    SliceView* m_slice = nullptr;
    QualityPanel* m_quality = nullptr;
    ProfilePlot* m_profile = nullptr;
    HistogramWidget* m_histogram = nullptr;
    MetadataPanel* m_metadata = nullptr;
    VolumeView* m_volume = nullptr;
    QDockWidget* m_paramsDock = nullptr;
    QDockWidget* m_metadataDock = nullptr;
    QDockWidget* m_displayDock = nullptr;
    QDockWidget* m_qualityDock = nullptr;
    QDockWidget* m_profileDock = nullptr;
    QDockWidget* m_volumeDock = nullptr;
    QComboBox* m_colormapCombo = nullptr;
    QDoubleSpinBox* m_lowSpin = nullptr;
    QDoubleSpinBox* m_highSpin = nullptr;
    QPointer<CompareModesDialog> m_compareDialog;
    QPointer<QProgressDialog> m_exportProgress;
    QPointer<QMessageBox> m_errorBox;

    QLabel* m_backendLabel = nullptr;
    QLabel* m_timeLabel = nullptr;
    QLabel* m_gupsLabel = nullptr;
    QLabel* m_hoverLabel = nullptr;
    QLabel* m_busyLabel = nullptr;
    QProgressBar* m_jobBar = nullptr;

    QAction* m_liveAction = nullptr;
    QAction* m_autoWindowAction = nullptr;
    QAction* m_panAction = nullptr;
    QAction* m_lineAction = nullptr;
    QAction* m_regionAction = nullptr;
    QActionGroup* m_colormapGroup = nullptr;
    QMenu* m_recentMenu = nullptr;
    QByteArray m_defaultState;

    std::optional<DatasetSummary> m_dataset;
    std::optional<SliceResult> m_result;
    std::optional<ReferenceResult> m_reference;   // exact or truth, from the controller
    std::optional<ReferenceResult> m_pinned;
    std::optional<SliceParams> m_referenceRequested;
    ReferenceKind m_referenceRequestedKind = ReferenceKind::Exact;
    QString m_referenceError;                     // why the requested reference failed
    std::optional<QLineF> m_line;
    QString m_pendingParameters;                  // run config waiting for its dataset
    double m_pixelSize = 0.0;
};

} // namespace tomo::ui
