// The dataset on screen and how it got there. Opening a file: a file still
// being written goes to Live mode (followed); a file the damaged-file guard
// applies to is read by `tomo-recon --info` first (DatasetCheck) and opened
// only when that went well; the latest open wins. The demo phantom. A
// parameter file that names another dataset opens it, its parameters
// waiting for it. The recent files. And what is remembered per dataset:
// its rotation axis and its pixel size (pixel_size.h).
//
//   open(path) ──growing──► LiveMode::followFile
//              ──check────► DatasetCheck ──passed / unchecked──► Controller::openFile
//                                         └─failed──────────────► failed(title, message), openFailed(path)
//   Controller::datasetOpened ──► (axis of the last one written, pixel size,
//                                  recent files) ──► opened(summary)
//
// The window shows what it emits: status lines, error dialogs, the caption.
#pragma once

#include "work/pixel_size.h"
#include "work/recon_types.h"

#include <QObject>
#include <QString>

#include <optional>
#include <utility>

QT_BEGIN_NAMESPACE
class QTimer;
QT_END_NAMESPACE

namespace tomo::ui {

class Controller;
class DatasetCheck;
class LiveMode;

class DatasetSession : public QObject {
    Q_OBJECT
public:
    DatasetSession(Controller* controller, QObject* parent = nullptr);

    /// Where a file still being written is handed over (File ▸ Open on one).
    void setLiveMode(LiveMode* live) { m_live = live; }

    void open(const QString& path, const tomo::OpenOptions& options = {});
    void openDemo(const DemoSpec& spec = {});
    /// A parameter file's dataset: opened, with the parameters waiting for
    /// it (takePendingParameters), when it is not the one on screen (the
    /// demo phantom when the file names no input and nothing is open).
    /// False: it is on screen, the parameters apply now.
    bool openFor(const tomo::RunConfig& config, const QString& parameterFile);

    struct PendingParameters {
        tomo::RunConfig config;
        QString path; ///< the parameter file
    };
    /// The waiting parameters, once: when they are the dataset on screen's
    /// (not another one's opened after a failure). A file that no longer
    /// loads: failed(), nothing.
    std::optional<PendingParameters> takePendingParameters();

    /// The dataset on screen (none before the first one opened).
    const std::optional<DatasetSummary>& dataset() const { return m_dataset; }
    /// The damaged-file guard (tests set its program).
    DatasetCheck* check() const { return m_check; }

    /// The axis remembered for the dataset at `path` (none for the demo or
    /// a dataset never shown).
    std::optional<double> rememberedAxis(const QString& path) const;
    /// The axis of the slice on screen: remembered once the changes stop
    /// (a settings write costs the UI thread a file write).
    void noteAxis(double axis);
    /// Writes the noted axis now (another dataset opens, the window closes).
    void rememberAxis();

    /// "Opened …: projections × rows × columns" for the dataset on screen,
    /// with its pixel size, the axis search, the reader's first warning and
    /// the guard's note; shown longer when there is a warning or a note.
    std::pair<QString, int> openedStatus() const;

    /// The pixel size of the dataset on screen (from its file, entered for it, or not known).
    const DatasetPixelSize& pixelSize() const { return m_pixel; }
    /// The user's pixel size for the dataset on screen (0 = not known, do
    /// not ask again), remembered with it; pixelSizeChanged follows.
    void setPixelSize(double micrometres);

signals:
    /// A new dataset is on screen (the session already holds it).
    void opened(const tomo::ui::DatasetSummary& summary);
    /// Opening `path` failed (empty: the demo); the dataset on screen, if any, stays.
    void openFailed(const QString& path);
    void failed(const QString& title, const QString& message);
    /// A line for the status bar (timeout 0: until the next one).
    void status(const QString& message, int timeoutMs);
    void pixelSizeChanged();
    void recentFilesChanged();

private:
    /// Opens `path` once its check passed (or could not run: `note` says why).
    void openChecked(const QString& path, const tomo::OpenOptions& options, const QString& note = {});
    void onDatasetOpened(const DatasetSummary& summary);

    Controller* m_controller;
    DatasetCheck* m_check;
    LiveMode* m_live = nullptr;
    std::optional<DatasetSummary> m_dataset;
    DatasetPixelSize m_pixel;                      // of the dataset on screen
    QString m_openNote;                            // " — without the damaged-file guard: why", or empty
    QString m_pendingParameters;                   // run config waiting for its dataset
    bool m_pendingParametersSetAxis = false;       // ... and it names an axis (else the finder runs)
    std::optional<std::pair<QString, double>> m_axisToRemember; // dataset path, axis: not written yet
    QTimer* m_rememberAxis;
};

} // namespace tomo::ui
