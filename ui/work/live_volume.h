// Live mode's coarse volume: the scan reconstructed at no more than 256
// voxels a side (the detector binned b x r, BinnedReader, before the
// corrections, as the 3D view's sub-volume) and grown with each snapshot,
// for the views across the rows (views/ortho_views.h).
//
//   snapshot ─► BinnedReader(b, 1, r) ─► PreprocessingStage::load(all coarse rows)
//            ─► one PreviewSession per coarse row: grow(its corrected row), run()
//               (the live slice's path: only the projections that are new,
//               or whose angular weight changed, are filtered and summed)
//            ─► CoarseVolume ──volumeReady──► UI thread
//
// One refresh at a time, on a thread of its own (at a lower priority than
// the preview thread, kBackgroundNice); LiveMode asks for the
// next one only when due() (its rate is bounded so the slices at the
// user's rows, on the preview thread, stay responsive). The sessions keep
// each coarse row's corrected sinogram (what was summed only as a
// fingerprint per projection) and its slice: about rows x projections x
// columns floats, 0.4 GB for 256 x 256 from 1500 projections (0.8 GB when
// the summed rows were kept too).
#pragma once

#include "work/recon_types.h"

#include "tomo/image.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace tomo {
class DatasetReader;
}

namespace tomo::ui {

/// One refresh of the coarse volume and what it was made from.
struct CoarseVolume {
    /// x, y: the slice grid of binned columns; z: the binned rows (slice z =
    /// detector rows [z * rowBinning, (z + 1) * rowBinning)). Attenuation per
    /// detector pixel, as the slice view shows it.
    tomo::ImageStack volume;
    int binning = 1;    ///< detector columns per voxel in x and y
    int rowBinning = 1; ///< detector rows per voxel in z
    int projections = 0;
    /// Projections summed by this refresh over all rows (the rest were kept).
    long long addedProjections = 0;
    int scan = 0;       ///< the caller's scan number it belongs to
    SliceParams params; ///< in detector units, as the caller gave them
    std::string strategy; ///< the strategy that ran ("auto" resolved)
    double seconds = 0.0;
};

class LiveVolume : public QObject {
    Q_OBJECT
public:
    /// At most this many voxels a side (the detector's columns and rows binned to fit).
    static constexpr int kDefaultSide = 256;
    /// Refreshes start at least this far apart, and at least twice the last
    /// one's duration after it ended (the volume takes at most a third of the time).
    static constexpr int kMinIntervalMs = 1000;

    explicit LiveVolume(QObject* parent = nullptr);
    ~LiveVolume() override;

    void setMaxSide(int side) { m_side = side; }
    int maxSide() const { return m_side; }

    /// No refresh running and the last ended long enough ago (kMinIntervalMs).
    bool due() const;
    bool busy() const { return m_busy; }
    /// Starts a refresh of scan `scan` from `snapshot` with `params` (the
    /// user's, detector units; an iterative method is replaced by FBP: the
    /// volume is a sum over projections). False when one is running.
    bool refresh(std::shared_ptr<tomo::DatasetReader> snapshot, const SliceParams& params, int scan);
    /// Forgets the volume (a new scan): a refresh under way is abandoned.
    void clear();

    /// Whether a volume made with `a` would be made anew with `b`.
    static bool sameVolume(const SliceParams& a, const SliceParams& b);

signals:
    void volumeReady(std::shared_ptr<const CoarseVolume> volume);
    /// A refresh failed (one line); the next one tries again.
    void failed(const QString& message);

private:
    struct Job {
        std::shared_ptr<tomo::DatasetReader> snapshot;
        SliceParams params;
        int scan = 0;
        int generation = 0;
        int side = kDefaultSide;
    };
    struct Sessions;
    void loop();
    CoarseVolume compute(const Job& job);
    /// On the UI thread, after a refresh.
    void finished(double seconds);

    int m_side = kDefaultSide;
    bool m_busy = false;
    QElapsedTimer m_sinceEnd; ///< invalid before the first refresh ended
    double m_lastSeconds = 0.0;

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::unique_ptr<Job> m_job; ///< the next job for the thread
    std::atomic<int> m_generation{0}; ///< grows with clear(): the thread abandons older jobs
    bool m_stop = false;
    std::unique_ptr<Sessions> m_sessions; ///< the thread's
    std::thread m_thread;
};

} // namespace tomo::ui
