// The reconstruction controller: runs core jobs off the UI thread and hands
// back plain structs through typed signals (STYLE.md, "hotspot").
//
//   UI thread ──requestSlice()──► [preview thread] PreviewSession::run
//                                   + statistics, colours ──sliceReady──► views
//                                   + comparison ──comparisonReady──► quality panel
//             ──requestReference(), requestComparison(), findAxis(), openFile(), openDemo() ──┘
//             ──exportVolume(), reconstructSubVolume(), compareModes(),
//               sweepAxis(), estimateRange() ──► [job thread]
//
// The preview thread prepares each slice for the screen (statistics and
// colours with the DisplaySettings, on a pool of threads; then the
// difference against the chosen reference and its figures, sent after the
// slice), so the UI thread only shows ready images.
// Live requests coalesce: while one runs, newer ones replace the pending one
// (the latest wins) and a run older than 250 ms is cancelled in their favour.
// References (the exact mode, the phantom) have the lowest priority: they
// run when no slice or comparison is waiting and yield to a new slice at
// once (they are queued again), so they never delay a result.
// Core errors become failed(title, message) at the thread boundary; the
// controller never throws to the UI.
// Its source files by what they run (controller_private.h): controller.cpp
// (threads, opening), controller_slices.cpp (the preview thread's flow),
// controller_jobs.cpp (the job thread), controller_iterative.cpp.
#pragma once

#include "work/recon_types.h"

#include <QElapsedTimer>
#include <QObject>
#include <QThread>
#include <QThreadPool>

#include <atomic>
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
    /// Cancels the work in flight and stops the threads (the destructor's
    /// first step; again later does nothing). The window calls it before
    /// its widgets go, so no last piece of work runs while they are torn
    /// down.
    void shutdown();

    /// Opens a dataset on the preview thread; datasetOpened or failed follows.
    /// The dataset on screen stays until the new one is open. With
    /// `findAxis` the rotation axis is searched on the middle row after the
    /// first slice (DatasetSummary::axisSearchPending): axisFound (onOpening)
    /// or axisFailed follows; slices go on meanwhile.
    void openFile(const QString& path, const tomo::OpenOptions& options = {}, bool findAxis = false);
    void openDemo(const DemoSpec& spec = {});
    /// Live mode (live_mode.h): shows a snapshot of a live scan. With
    /// `sameScan` and the same detector shape it replaces the dataset under
    /// the preview (the parameters stay; liveSnapshotShown follows, then the
    /// window asks for the slice again); otherwise it is opened as a new
    /// dataset (datasetOpened, then liveSnapshotShown).
    void showLiveSnapshot(std::shared_ptr<tomo::DatasetReader> snapshot, const QString& title, bool sameScan);

    /// Generation of the dataset on screen (0 = none): requests are tagged
    /// with it, results of an older dataset are dropped.
    int generation() const { return m_generation; }

    /// Live slice: coalesced, the latest wins. Returns the request's id
    /// (SliceResult::id of the result that answers it).
    quint64 requestSlice(const SliceParams& params);
    /// The reference to compare with (Exact or Truth; Pinned comes through
    /// setPinned), made with `referenceOptions` (Exact only), at low priority.
    void requestReference(ReferenceKind kind, const SliceParams& params, const tomo::ReconOptions& referenceOptions);
    /// How the next slices are coloured and which reference they are compared with.
    void setDisplaySettings(const DisplaySettings& settings);
    DisplaySettings displaySettings() const;
    /// The pinned result (null: none).
    void setPinned(ReferencePtr pinned);
    /// Compares the last slice with the reference of the display settings
    /// again (after the kind, the pinned result or the disc changed):
    /// comparisonReady follows when that reference matches the slice.
    void requestComparison();
    /// Cancels the running live run and drops pending requests.
    void cancelSlice();
    /// A live slice is waiting or running.
    bool sliceBusy() const;
    /// A reference is waiting or being computed.
    bool referenceBusy() const;
    /// The thread that reconstructs and prepares live slices.
    QThread* previewThread() { return &m_previewThread; }

    /// Iterative methods (controller_iterative.cpp): the running live slice stops
    /// after its current iteration and keeps its image (sliceReady follows
    /// with it). From the UI thread; nothing when no iterative slice runs.
    void stopIterations();
    /// Forward projects the last slice (the whole grid, parallel beam) and
    /// compares it with its row's measured sinogram, on the preview thread;
    /// reprojectionReady follows.
    void requestReprojection();

    /// Runs the automatic rotation-axis finder on `row`; axisFound follows.
    void findAxis(int row);
    /// Reads what the Data panel shows (a row's sinogram, the projection at
    /// `angle`, the mean flat or dark) and colours it; dataViewReady follows.
    void requestDataView(DataViewKind kind, int row, int angle);

    /// Long jobs, one at a time on the job thread (returns false, doing
    /// nothing, while another one runs or before a dataset is open).
    bool exportVolume(const ExportRequest& request);
    bool reconstructSubVolume(const SliceParams& params, int firstRow, int rowCount, int maxDisplaySize = 256);
    bool compareModes(const SliceParams& params, const std::vector<tomo::ReconOptions>& modes);
    /// Trial slices of params.row at each axis (the row corrected and
    /// filtered once), as thumbnails of `thumbnailSize` px; axisSweepReady
    /// follows. Not with 360° stitching (its axis is the stitched centre).
    bool sweepAxis(const SliceParams& params, const std::vector<double>& axes, int thumbnailSize = 160);
    /// The value range of an integer export of rows [firstRow, firstRow +
    /// rowCount) (tomo::estimateOutputRange); rangeEstimated follows.
    bool estimateRange(const SliceParams& params, int firstRow, int rowCount);
    void cancelJob();
    bool jobBusy() const;

signals:
    void datasetOpened(const tomo::ui::DatasetSummary& summary);
    /// showLiveSnapshot installed a snapshot of `projections` projections.
    void liveSnapshotShown(int projections);
    /// openFile / openDemo failed (failed() carries the message); the
    /// dataset on screen, if any, stays.
    void openFailed(const QString& path);
    void sliceReady(const tomo::ui::SliceResultPtr& result);
    void sliceCancelled(quint64 id);
    /// The live slice `id` failed (failed() carries the message).
    void sliceFailed(quint64 id);
    /// The live slice failed because the dataset cannot take these
    /// corrections (`message` says why); sliceFailed follows. The last
    /// corrections that worked stay usable.
    void correctionsRejected(const tomo::CorrectionOptions& corrections, const QString& message);
    void referenceReady(const tomo::ui::ReferencePtr& reference);
    /// The last slice compared with a reference that arrived or was chosen later.
    void comparisonReady(const tomo::ui::Comparison& comparison);
    /// The reference asked for could not be made (failed() carries the message).
    void referenceFailed(const QString& message);
    void axisFound(const tomo::ui::AxisResult& result);
    /// The axis finder failed on `row`, for the reason `why` (a search the
    /// user asked for also shows it through failed()).
    void axisFailed(int row, const QString& why);
    void dataViewReady(const tomo::ui::DataView& view);
    /// An iterative live slice progressed (throttled, see IterationUpdate).
    void iterationProgress(const tomo::ui::IterationUpdate& update);
    void reprojectionReady(const tomo::ui::ReprojectionResult& result);
    /// A live slice started waiting or running / finished (sliceBusy()).
    void busyChanged(bool busy);
    /// The reference started / finished (referenceBusy()).
    void referenceBusyChanged(bool busy);

    void jobStarted(tomo::ui::JobKind kind);
    void jobProgress(const tomo::ui::JobProgress& progress);
    void exportFinished(const tomo::ui::ExportReport& report);
    void subVolumeReady(const tomo::ui::SubVolume& volume);
    void modeCompared(const tomo::ui::ModeComparison& row);
    void axisSweepReady(const tomo::ui::AxisSweep& sweep);
    void rangeEstimated(const tomo::RangeEstimate& estimate);
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
    void runSlice(quint64 id, const SliceParams& params, int generation, const tomo::CancelToken& token,
                  double waited);
    void runReference(ReferenceKind kind, const SliceParams& params, const tomo::ReconOptions& options,
                      int generation, const tomo::CancelToken& token);
    /// Preview thread: the threads that prepare slices and comparisons.
    tomo::WorkerPool& preparePool();
    /// The reference of the display settings, if it fits `slice`.
    ReferencePtr fittingReference(const SliceResult& slice, const DisplaySettings& settings);
    /// `slice` against the reference of the display settings, if one fits.
    /// Nothing when no reference fits, or when `abandoned` says so between its steps.
    std::optional<Comparison> compareLastSlice(const SliceResult& slice, const DisplaySettings& settings,
                                               const std::function<bool()>& abandoned);
    /// A live slice is waiting for the worker (what a comparison yields to).
    bool sliceWaiting() const;
    /// Reads sliceBusy/referenceBusy and sends the reading to the UI thread
    /// (busyChanged, referenceBusyChanged), posted under the lock so that
    /// readings arrive in order. From any thread; the ...Locked form with
    /// m_mutex held. The UI thread never takes the lock for it: a worker
    /// holding the lock may be waiting for a core.
    void publishBusy();
    void publishBusyLocked();
    /// Runs `task` in the UI thread (queued), noted as `what` for
    /// --measure-latency (noteUiActivity).
    template <typename Task>
    void toUi(const char* what, Task&& task);
    bool sliceBusyLocked() const;
    bool referenceBusyLocked() const;
    void reportError(const QString& what, const std::exception& e);
    /// Preview thread (controller_iterative.cpp): the callback of an iterative
    /// live slice `id`: residuals and throttled images to the UI, Stop.
    tomo::IterationCallback iterationObserver(quint64 id, const SliceParams& params, int generation);
    void runReprojection(int generation);
    static ReprojectionResult failedReprojection(const ReprojectionResult& of, const std::exception& e);
    /// Any thread: reprojectionReady(out) on the UI thread unless the dataset changed since.
    void postReprojection(int generation, ReprojectionResult out);
    std::shared_ptr<tomo::DatasetReader> openJobReader() const;
    void installDataset(std::shared_ptr<tomo::DatasetReader> reader, std::shared_ptr<const Source> source,
                        DatasetSummary summary, bool findAxis = false);
    /// Preview thread: copies `row`'s sinogram and searches its axis on
    /// m_axisSearches; axisFound or axisFailed follows.
    void searchAxis(int row, int generation, bool onOpening);
    void axisSearchFailed(int row, int generation, bool onOpening, const std::exception& e);

    QThread m_previewThread;
    QThread m_jobThread;
    QThreadPool m_axisSearches; // the axis finder, off the preview thread
    QThreadPool m_reprojections; // the reprojection view's projections, off the preview thread
    QObject* m_previewContext = nullptr; // lives in m_previewThread (deleted when it finishes)
    QObject* m_jobContext = nullptr;     // lives in m_jobThread (likewise)
    std::atomic<bool> m_shutDown{false}; // shutdown() began: nothing more goes to the threads
    std::mutex m_postMutex;              // postPreview() against shutdown()

    // Preview-thread state (touched only there).
    std::shared_ptr<tomo::DatasetReader> m_reader;
    std::unique_ptr<tomo::PreviewSession> m_session;
    std::unique_ptr<tomo::PreviewSession> m_referenceSession;
    std::optional<int> m_axisSearchRow; // the opening's axis search, after the first slice
    std::optional<DemoSpec> m_demo;
    tomo::CorrectionOptions m_goodCorrections; // of the last slice made: a failure with others blames them
    int m_workerGeneration = 0;
    SliceResultPtr m_lastSlice;             // the last slice prepared (for later comparisons)
    ReferencePtr m_computedReference;       // the last Exact / Truth reference made
    std::unique_ptr<tomo::WorkerPool> m_preparePool; // statistics, colours and comparisons: preparePool()
    std::vector<std::uint8_t> m_disc;       // reconstructionDisc(m_discRegion, m_discGrid)
    tomo::Region m_discRegion{};
    int m_discGrid = -1;

    // Shared state, under m_mutex.
    mutable std::mutex m_mutex;
    std::unique_ptr<Pending> m_pending;
    std::shared_ptr<tomo::CancelToken> m_running;
    QElapsedTimer m_runningSince;
    bool m_runningReference = false;
    quint64 m_cancelEpoch = 0;
    bool m_drainScheduled = false;
    DisplaySettings m_display;
    ReferencePtr m_pinned;
    std::shared_ptr<const Source> m_source;
    std::shared_ptr<tomo::CancelToken> m_jobToken;
    quint64 m_sequence = 0;
    std::atomic<bool> m_stopIterations{false}; // Stop pressed: the running iterative slice keeps its image

    // UI-thread state.
    int m_generation = 0;
    bool m_shownSliceBusy = false;
    bool m_shownReferenceBusy = false;
};

} // namespace tomo::ui
