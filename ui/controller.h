// The reconstruction controller: runs core jobs off the UI thread and hands
// back plain structs through typed signals (STYLE.md, "hotspot").
//
//   UI thread ──requestSlice()──► [preview thread] PreviewSession::run ──sliceReady──► views
//             ──requestReference(), findAxis(), openFile(), openDemo() ──┘
//             ──exportVolume(), reconstructSubVolume(), compareModes() ──► [job thread]
//
// Live requests coalesce: while one runs, newer ones replace the pending one
// (the latest wins) and a run older than 250 ms is cancelled in their favour.
// References (cpu-reference, phantom) run when no slice is waiting and yield
// to a new slice at once (they are queued again).
// Core errors become failed(title, message) at the thread boundary; the
// controller never throws to the UI.
#pragma once

#include "recon_types.h"

#include <QElapsedTimer>
#include <QObject>
#include <QThread>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>

namespace tomo::ui {

class Controller : public QObject {
    Q_OBJECT
public:
    explicit Controller(QObject* parent = nullptr);
    ~Controller() override;

    /// Opens a dataset on the preview thread; datasetOpened or failed follows.
    /// The dataset on screen stays until the new one is open.
    void openFile(const QString& path, const tomo::OpenOptions& options = {});
    void openDemo(const DemoSpec& spec = {});

    /// Generation of the dataset on screen (0 = none): requests are tagged
    /// with it, results of an older dataset are dropped.
    int generation() const { return m_generation; }

    /// Live slice: coalesced, the latest wins.
    void requestSlice(const SliceParams& params);
    /// The reference to compare with (Exact or Truth; Pinned is kept by the UI).
    void requestReference(ReferenceKind kind, const SliceParams& params);
    /// Cancels the running live run and drops pending requests.
    void cancelSlice();
    bool sliceBusy() const;

    /// Runs the automatic rotation-axis finder on `row`; axisFound follows.
    void findAxis(int row);

    /// Long jobs, one at a time on the job thread (returns false, doing
    /// nothing, while another one runs or before a dataset is open).
    bool exportVolume(const ExportRequest& request);
    bool reconstructSubVolume(const SliceParams& params, int firstRow, int rowCount, int maxDisplaySize = 256);
    bool compareModes(const SliceParams& params, const std::vector<tomo::ReconOptions>& modes);
    void cancelJob();
    bool jobBusy() const;

signals:
    void datasetOpened(const tomo::ui::DatasetSummary& summary);
    /// openFile / openDemo failed (failed() carries the message); the
    /// dataset on screen, if any, stays.
    void openFailed(const QString& path);
    void sliceReady(const tomo::ui::SliceResult& result);
    void sliceCancelled(quint64 id);
    /// The live slice `id` failed (failed() carries the message).
    void sliceFailed(quint64 id);
    void referenceReady(const tomo::ui::ReferenceResult& reference);
    /// The reference asked for could not be made (failed() carries the message).
    void referenceFailed(const QString& message);
    void axisFound(const tomo::ui::AxisResult& result);
    /// The axis finder failed on `row` (failed() carries the message).
    void axisFailed(int row);
    void busyChanged(bool busy);

    void jobStarted(tomo::ui::JobKind kind);
    void jobProgress(const tomo::ui::JobProgress& progress);
    void exportFinished(const tomo::ui::ExportReport& report);
    void subVolumeReady(const tomo::ui::SubVolume& volume);
    void modeCompared(const tomo::ui::ModeComparison& row);
    void jobFinished(tomo::ui::JobKind kind, tomo::ui::JobStatus status, const QString& message);

    /// A user-facing error: a short title and a message naming the cause.
    void failed(const QString& title, const QString& message);

private:
    struct Source;
    struct Pending;
    void postPreview(std::function<void()> task);
    bool startJob(JobKind kind, std::function<void(const tomo::CancelToken&)> job);
    void scheduleDrain();
    void drain();
    void reportError(const QString& what, const std::exception& e);
    std::shared_ptr<tomo::DatasetReader> openJobReader() const;
    void installDataset(std::shared_ptr<tomo::DatasetReader> reader, std::shared_ptr<const Source> source,
                        DatasetSummary summary);

    QThread m_previewThread;
    QThread m_jobThread;
    QObject* m_previewContext = nullptr; // lives in m_previewThread
    QObject* m_jobContext = nullptr;     // lives in m_jobThread

    // Preview-thread state (touched only there).
    std::shared_ptr<tomo::DatasetReader> m_reader;
    std::unique_ptr<tomo::PreviewSession> m_session;
    std::unique_ptr<tomo::PreviewSession> m_referenceSession;
    std::optional<DemoSpec> m_demo;
    int m_workerGeneration = 0;

    // Shared state, under m_mutex.
    mutable std::mutex m_mutex;
    std::unique_ptr<Pending> m_pending;
    std::shared_ptr<tomo::CancelToken> m_running;
    QElapsedTimer m_runningSince;
    bool m_runningReference = false;
    quint64 m_cancelEpoch = 0;
    bool m_drainScheduled = false;
    bool m_previewBusy = false;
    std::shared_ptr<const Source> m_source;
    std::shared_ptr<tomo::CancelToken> m_jobToken;
    quint64 m_sequence = 0;

    // UI-thread state.
    int m_generation = 0;
};

} // namespace tomo::ui
