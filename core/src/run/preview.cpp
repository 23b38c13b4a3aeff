#include "tomo/preview.h"

#include "tomo/error.h"
#include "tomo/iterative_plan.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"
#include "tomo/worker_pool.h"

#include "run/cone_preview.h"
#include "run/growing_rows.h"
#include "run/preview_bands.h"
#include "run/row_block_reader.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace tomo {

void CancelToken::throwIfCancelled() const {
    if (cancelled()) throw Cancelled();
}

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A 64-bit fingerprint of each row of `rows` ([row][width] values) from
/// `first` on, appended to `out`: whether a row summed into a live slice
/// came out of the corrections the same, without keeping the row. Four
/// multiply-xorshift lanes over its bytes (each step a bijection of its
/// lane, so a change within one lane always shows), folded with the length.
void appendRowFingerprints(std::span<const float> rows, int width, std::size_t first,
                           std::vector<std::uint64_t>& out) {
    constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
    const auto mix = [](std::uint64_t& h, std::uint64_t word) {
        h = (h ^ word) * kMul;
        h ^= h >> 29;
    };
    const auto n = static_cast<std::size_t>(width);
    for (std::size_t r = first; r < rows.size() / n; ++r) {
        const float* row = rows.data() + r * n;
        std::uint64_t lane[4] = {1, 2, 3, 4};
        std::size_t i = 0;
        for (; i + 8 <= n; i += 8)
            for (std::size_t l = 0; l < 4; ++l) {
                std::uint64_t word = 0;
                std::memcpy(&word, row + i + 2 * l, sizeof word);
                mix(lane[l], word);
            }
        std::uint64_t h = n;
        for (; i < n; ++i) {
            std::uint32_t value = 0;
            std::memcpy(&value, row + i, sizeof value);
            mix(h, value);
        }
        for (const std::uint64_t l : lane) mix(h, l);
        out.push_back(h);
    }
}

/// Options that need a new plan (and so a new filtering) when they change.
bool samePlanOptions(const ReconOptions& a, const ReconOptions& b) {
    return a.strategy == b.strategy && a.interpolation == b.interpolation && a.precision == b.precision &&
           a.slicesPerPass == b.slicesPerPass && a.filter.window == b.filter.window &&
           a.filter.padding == b.filter.padding && a.device == b.device && a.threads == b.threads &&
           a.tuning == b.tuning && a.allowApproximate == b.allowApproximate &&
           sameMethod(a.iterative, b.iterative);
}

/// The strategy runs on a GPU (CUDA or OpenCL): its first speed guess,
/// band rows and band time differ from a CPU's.
bool runsOnGpu(const std::string& strategy) {
    const Backend* b = BackendRegistry::instance().find(strategy);
    return b && b->family() != "cpu";
}

void checkPositive(const DatasetInfo& info) {
    if (info.projections < 1 || info.rows < 1 || info.columns < 1)
        throw InvalidArgument("preview: the dataset '" + info.path.string() + "' has no data (" +
                              std::to_string(info.projections) + " projections, " + std::to_string(info.rows) +
                              " rows, " + std::to_string(info.columns) + " columns)");
    if (static_cast<int>(info.angles.size()) != info.projections)
        throw InvalidArgument("preview: the dataset '" + info.path.string() + "' has " +
                              std::to_string(info.angles.size()) + " angles for " +
                              std::to_string(info.projections) + " projections");
}

/// Memory for the next run's slice, made ready on a helper thread while the
/// current run back-projects. A new Image allocates and zero-fills its values
/// (16 MiB for 2048^2: 0.15 to 1.5 ms, several ms when the pages are fresh),
/// all of it before the back-projection could start; the values are
/// overwritten anyway. One persistent thread, so the memory comes from one
/// malloc arena and is reused run after run.
class SliceBufferPrefetcher {
public:
    SliceBufferPrefetcher() = default;
    SliceBufferPrefetcher(const SliceBufferPrefetcher&) = delete;
    SliceBufferPrefetcher& operator=(const SliceBufferPrefetcher&) = delete;
    ~SliceBufferPrefetcher() {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        if (m_worker.joinable()) m_worker.join();
    }

    /// `values` floats: the prepared buffer when it has that size, else a new
    /// one. Throws std::bad_alloc.
    std::vector<float> take(std::size_t values) {
        std::vector<float> out, stale;
        {
            std::unique_lock lock(m_mutex);
            m_done.wait(lock, [this] { return !m_pending; });
            if (m_ready.size() == values) out = std::move(m_ready);
            else stale = std::move(m_ready);
            m_ready = {};
        }
        if (out.size() != values) {
            stale = {};
            out = std::vector<float>(values);
        }
        return out;
    }

    /// Starts preparing a buffer of `values` floats in the background (best
    /// effort: without a thread, take() allocates).
    void prepare(std::size_t values) {
        {
            std::lock_guard lock(m_mutex);
            if (!m_worker.joinable()) {
                try {
                    m_worker = std::thread([this] { loop(); });
                } catch (const std::system_error&) {
                    return;
                }
            }
            m_requested = values;
            m_pending = true;
        }
        m_wake.notify_one();
    }

    /// Drops the prepared buffer (after a pending preparation ends).
    void clear() { (void)take(0); }

private:
    void loop() {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [this] { return m_stop || m_pending; });
            if (m_stop) return;
            const std::size_t values = m_requested;
            std::vector<float> old = std::move(m_ready);
            m_ready = {};
            lock.unlock();
            old = {};
            std::vector<float> buffer;
            try {
                buffer = std::vector<float>(values);
            } catch (const std::bad_alloc&) {
                // take() allocates (and reports) instead
            }
            lock.lock();
            m_ready = std::move(buffer);
            m_pending = false;
            m_done.notify_all();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake, m_done;
    std::thread m_worker;
    std::vector<float> m_ready;
    std::size_t m_requested = 0;
    bool m_pending = false;
    bool m_stop = false;
};

} // namespace

struct PreviewSession::Impl {
    std::shared_ptr<DatasetReader> reader;
    // Once grown (a live scan): the reader, keeping the rows read for the next snapshot.
    std::shared_ptr<preview::GrowingRowsReader> growing;
    // The corrections as requested (the stage's options() have found values filled in).
    CorrectionOptions corrections;
    std::unique_ptr<PreprocessingStage> stage;
    int stageGeneration = 0; // counts the stages made
    // The stage's corrections on the strategy's GPU (rings, zingers, Paganin:
    // a 2048 x 2048 row takes the CPU hundreds of milliseconds).
    std::unique_ptr<ChunkCorrector> corrector;
    std::string correctorStrategy;
    // Set for fan/cone-beam datasets: it makes their slices (FDK).
    std::unique_ptr<preview::ConeSlicePreview> cone;

    // The kept row (corrected) and what its corrections found.
    int loadedRow = -1;
    Image sinogram;
    PreprocessStats loadedStats;

    // The plan and what it was made / fed with.
    std::unique_ptr<ReconstructionPlan> plan;
    ReconOptions planRequestOptions; // as requested ("auto" unresolved)
    int filteredRow = -1;            // row whose filtered sinogram the plan holds, -1 = none

    int filterRuns = 0;
    int loadRuns = 0;
    double lastUpdatesPerSecond = 0.0; // speed of the last back-projection or band

    SliceBufferPrefetcher sliceBuffers; // the next run's result memory

    // A live scan: grow() was called, and the slice of the last run is kept
    // with what it was made from, for the next run to add to.
    struct LiveSum {
        int row = -1;
        double axis = 0.0;
        std::vector<double> offsets;
        Region region;
        ReconOptions requested;     // as requested (samePlanOptions)
        ReconOptions resolved;      // the strategy that ran ("auto" resolved)
        CorrectionOptions corrections;
        std::vector<double> angles; // of the projections summed
        int bins = 0;               // their corrected rows' width
        std::vector<std::uint64_t> rowPrints; // and fingerprints (appendRowFingerprints)
        std::vector<double> weights; // the weight each was summed with
        std::vector<float> slice;   // region pixels
        // What a run adds to the slice comes down here: memory of the plans'
        // kind (page-locked for a GPU's: the download lands by DMA, and no
        // plan of an update allocates staging for it), kept for the next.
        HostBuffer added;
    };
    bool live = false;
    std::optional<LiveSum> liveSum;
    // Adds a live update to a kept slice of 1024^2 or more (2048^2: ~3 ms on one core).
    std::unique_ptr<WorkerPool> sumThreads;

    /// Keeps the slice a run made from every projection of the loaded row
    /// (a live scan's next run adds to it).
    void keepLiveSum(const PreviewRequest& request, const PreviewResult& result, const ReconstructionPlan& from) {
        liveSum.reset();
        if (request.options.iterative.isIterative()) return; // not a sum over projections
        LiveSum k;
        k.row = request.row;
        k.axis = result.axis;
        k.offsets = request.axisOffsets;
        k.region = result.region;
        k.requested = request.options;
        k.resolved = from.options();
        k.corrections = request.corrections;
        k.angles = from.geometry().geometry.angles;
        k.bins = sinogram.width;
        appendRowFingerprints(sinogram.data, sinogram.width, 0, k.rowPrints);
        k.weights = viewWeights(from.geometry().geometry);
        k.slice = result.slice.data;
        liveSum = std::move(k);
    }

    /// The kept live slice, when a run of `request` (axis and region
    /// resolved) on the loaded row can add to it.
    LiveSum* extendable(const PreviewRequest& request, double axis, const Region& region) {
        if (!liveSum || request.options.iterative.isIterative()) return nullptr;
        LiveSum& k = *liveSum;
        const std::vector<double>& angles = stage->outputAngles();
        const std::size_t summed = k.angles.size();
        const auto prefix = [summed](const std::vector<double>& now, const std::vector<double>& then) {
            return now.size() >= summed && std::equal(then.begin(), then.end(), now.begin());
        };
        const bool same = k.row == request.row && k.axis == axis && k.region == region &&
                          samePlanOptions(k.requested, request.options) && k.corrections == request.corrections &&
                          sinogram.width == k.bins && prefix(angles, k.angles) &&
                          (request.axisOffsets.empty() ? k.offsets.empty() : prefix(request.axisOffsets, k.offsets));
        if (!same) return nullptr;
        // The rows already summed must have come out of the corrections the
        // same (a correction over the whole sinogram, e.g. stripe removal,
        // or a new flat changes them: then the sum starts again).
        std::vector<std::uint64_t> prints;
        prints.reserve(summed);
        appendRowFingerprints(std::span<const float>(sinogram.data).first(summed * static_cast<std::size_t>(k.bins)),
                              k.bins, 0, prints);
        return prints == k.rowPrints ? &k : nullptr;
    }

    /// Adds the projections of the loaded row that are new since `k` or
    /// whose weight changed, each with the change of its weight, to k's
    /// slice, and copies it into `result`. Returns false (nothing done) when
    /// they are more than half of all: the whole slice costs as much.
    bool addToLiveSum(LiveSum& k, const PreviewRequest& request, PreviewResult& result) {
        const std::vector<double>& angles = stage->outputAngles();
        const std::vector<double> weights = angularWeights(angles);
        // A weight that moved by less than this (relative) is a rounding of
        // the median step (angularWeights), below the float slice's resolution.
        constexpr double kUnchanged = 1e-7;
        Geometry g;
        g.bins = sinogram.width;
        g.axis = k.axis;
        std::vector<int> added;
        for (std::size_t p = 0; p < angles.size(); ++p) {
            const double delta = p < k.weights.size() ? weights[p] - k.weights[p] : weights[p];
            if (p < k.weights.size() && std::abs(delta) <= kUnchanged * std::abs(weights[p])) continue;
            added.push_back(static_cast<int>(p));
            g.angles.push_back(angles[p]);
            g.weights.push_back(delta);
            if (!request.axisOffsets.empty()) g.axisOffsets.push_back(request.axisOffsets[p]);
        }
        if (2 * added.size() > angles.size()) return false;
        if (!added.empty()) {
            std::vector<float> rows(added.size() * static_cast<std::size_t>(g.bins));
            for (std::size_t i = 0; i < added.size(); ++i)
                std::copy_n(sinogram.data.begin() + static_cast<std::ptrdiff_t>(added[i]) * g.bins, g.bins,
                            rows.begin() + static_cast<std::ptrdiff_t>(i * g.bins));
            ReconGeometry rg = ReconGeometry::fullSlice(std::move(g));
            rg.region = k.region;
            const auto filterStart = Clock::now();
            const std::unique_ptr<ReconstructionPlan> plan = createPlan(rg, k.resolved);
            plan->setSinograms(rows, 1);
            ++filterRuns;
            result.filtered = true;
            result.secondsFilter = secondsSince(filterStart);
            const auto bpStart = Clock::now();
            const std::size_t pixels = k.region.pixels();
            if (k.added.size() < pixels * sizeof(float)) k.added = plan->allocateHost(pixels * sizeof(float));
            const std::span<float> sum = k.added.as<float>(pixels);
            plan->backproject(sum);
            result.secondsBackproject = secondsSince(bpStart);
            // The sum, and the result as a copy of it, in one pass; on
            // threads for a large slice (the live volume's hundreds of
            // coarse rows, 256^2 at most, need none).
            std::vector<float> out = sliceBuffers.take(pixels);
            sliceBuffers.prepare(pixels);
            constexpr std::size_t kPart = std::size_t{1} << 18;
            const auto addPart = [&](int part, int) {
                const std::size_t end = std::min(pixels, (static_cast<std::size_t>(part) + 1) * kPart);
                for (std::size_t i = static_cast<std::size_t>(part) * kPart; i < end; ++i)
                    out[i] = k.slice[i] += sum[i];
            };
            const int parts = static_cast<int>((pixels + kPart - 1) / kPart);
            if (parts < 4) {
                for (int part = 0; part < parts; ++part) addPart(part, 0);
            } else {
                if (!sumThreads)
                    sumThreads = std::make_unique<WorkerPool>(
                        static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u)));
                sumThreads->parallelFor(parts, addPart);
            }
            result.slice.data = std::move(out);
            for (std::size_t i = 0; i < added.size(); ++i) {
                const auto p = static_cast<std::size_t>(added[i]);
                if (p >= k.weights.size()) k.weights.resize(p + 1, 0.0);
                k.weights[p] = weights[p];
            }
        }
        appendRowFingerprints(sinogram.data, sinogram.width, k.rowPrints.size(), k.rowPrints); // the new rows
        k.angles = angles;
        k.offsets = request.axisOffsets;
        result.slice.width = k.region.width;
        result.slice.height = k.region.height;
        if (added.empty()) result.slice.data = k.slice;
        result.addedProjections = static_cast<int>(added.size());
        result.strategy = k.resolved.strategy;
        const double updates = static_cast<double>(k.region.pixels()) * static_cast<double>(added.size());
        if (result.secondsBackproject > 0.0) result.gups = updates / result.secondsBackproject / 1e9;
        return true;
    }

    /// The stage for `wanted`, made anew (dropping the kept row) when they change.
    PreprocessingStage& stageFor(const CorrectionOptions& wanted) {
        if (!stage || !(corrections == wanted)) {
            corrector.reset();
            correctorStrategy.clear();
            stage.reset();
            loadedRow = -1;
            sinogram = Image();
            filteredRow = -1;
            stage = std::make_unique<PreprocessingStage>(*reader, wanted);
            ++stageGeneration;
            corrections = wanted;
        }
        return *stage;
    }

    /// The GPU corrector of `options` (strategy resolved, or empty when not
    /// known yet) when the stage has corrections worth moving there;
    /// nullptr = correct on the CPU.
    ChunkCorrector* correctorFor(PreprocessingStage& s, const ReconOptions& options) {
        const std::string& strategy = options.strategy;
        const CorrectionOptions& o = s.options();
        const bool worthIt = o.betweenFlatFieldAndLog() || o.halfAcquisition.enabled;
        if (!worthIt || !runsOnGpu(strategy)) return nullptr;
        if (strategy != correctorStrategy) {
            corrector.reset();
            correctorStrategy = strategy;
            corrector = BackendRegistry::instance().find(strategy)->createCorrector(s, options);
        }
        return corrector.get();
    }

    /// Row `row` corrected and kept; `options` say which device may correct it.
    const Image& load(int row, double* seconds, const ReconOptions& options) {
        const DatasetInfo& info = reader->info();
        if (row < 0 || row >= info.rows)
            throw InvalidArgument("preview: row " + std::to_string(row) + " is outside the dataset (0.." +
                                  std::to_string(info.rows - 1) + ")");
        PreprocessingStage& s = stageFor(corrections);
        if (row != loadedRow) {
            auto start = Clock::now();
            loadedRow = -1;
            PreprocessStats stats;
            ChunkCorrector* gpu = correctorFor(s, options);
            ImageStack stack = gpu ? gpu->correct(s.read(row, 1), &stats) : s.load(row, 1, &stats);
            sinogram = Image(stack.width, stack.height);
            sinogram.data = std::move(stack.data);
            loadedStats = std::move(stats);
            loadedRow = row;
            ++loadRuns;
            if (seconds) *seconds = secondsSince(start);
        }
        return sinogram;
    }
};

bool sameMethod(const IterativeOptions& a, const IterativeOptions& b) {
    return a.method == b.method && a.iterations == b.iterations && a.tvWeight == b.tvWeight && a.bounds == b.bounds &&
           a.init == b.init && a.tolerance == b.tolerance && a.matched == b.matched &&
           a.projector == b.projector;
}

namespace {

/// The reader a session reads rows through until it grows (a growing file's
/// then goes through a GrowingRowsReader): blocks of rows around the one
/// asked for from a file;
/// a live stream's snapshot as it is (its frames are in memory: a block of 8
/// rows of every projection, 49 MB for 1500 of 2048^2, would be allocated
/// and copied to serve one row).
std::shared_ptr<DatasetReader> rowReader(std::shared_ptr<DatasetReader> reader) {
    if (reader->info().format == DatasetFormat::Stream) return reader;
    return std::make_shared<preview::RowBlockReader>(std::move(reader));
}

} // namespace

PreviewSession::PreviewSession(std::shared_ptr<DatasetReader> reader) : m_impl(std::make_unique<Impl>()) {
    if (!reader) throw InvalidArgument("preview: no dataset");
    checkPositive(reader->info());
    if (reader->info().divergentBeam) m_impl->cone = std::make_unique<preview::ConeSlicePreview>(reader->info());
    m_impl->reader = rowReader(std::move(reader));
}

PreviewSession::~PreviewSession() = default;

const DatasetInfo& PreviewSession::info() const { return m_impl->reader->info(); }

const Image& PreviewSession::sinogram(int row) { return m_impl->load(row, nullptr, {}); }

const PreprocessingStage& PreviewSession::stage() { return m_impl->stageFor(m_impl->corrections); }

std::unique_ptr<ProjectorPair> PreviewSession::fanBeamPair(const PreviewRequest& request) {
    if (!m_impl->cone)
        throw InvalidArgument("the fan-beam projector pair: " + m_impl->reader->info().path.string() +
                              " is a parallel-beam scan");
    return m_impl->cone->fanBeamPair(request, IterativeOptions{});
}

int PreviewSession::filterRuns() const { return m_impl->filterRuns + (m_impl->cone ? m_impl->cone->filterRuns() : 0); }
int PreviewSession::loadRuns() const { return m_impl->loadRuns + (m_impl->cone ? m_impl->cone->loadRuns() : 0); }

std::optional<double> PreviewSession::defaultAxis() {
    if (m_impl->cone) return m_impl->cone->defaultAxis();
    return stage().outputAxis();
}

void PreviewSession::reset() {
    m_impl->stage.reset();
    m_impl->plan.reset();
    m_impl->filteredRow = -1;
    m_impl->loadedRow = -1;
    m_impl->sinogram = Image();
    m_impl->sliceBuffers.clear();
    m_impl->liveSum.reset();
    if (m_impl->cone) m_impl->cone->reset();
}

void PreviewSession::grow(std::shared_ptr<DatasetReader> reader) {
    Impl& d = *m_impl;
    if (!reader) throw InvalidArgument("preview: no dataset");
    checkPositive(reader->info());
    const DatasetInfo& was = info();
    if (reader->info().rows != was.rows || reader->info().columns != was.columns)
        throw InvalidArgument("preview: the grown dataset '" + reader->info().path.string() + "' has " +
                              std::to_string(reader->info().rows) + " x " + std::to_string(reader->info().columns) +
                              " pixels per projection (expected " + std::to_string(was.rows) + " x " +
                              std::to_string(was.columns) + ")");
    // The stage and the kept row were of the old frames; the plan and the
    // live slice stay (run() checks what they were made from).
    d.corrector.reset();
    d.correctorStrategy.clear();
    d.stage.reset();
    d.loadedRow = -1;
    d.sinogram = Image();
    d.filteredRow = -1;
    d.cone = reader->info().divergentBeam ? std::make_unique<preview::ConeSlicePreview>(reader->info()) : nullptr;
    if (reader->info().format == DatasetFormat::Stream) {
        // A stream's snapshot sorts its projections by index, so one that
        // arrives late lands among those read before: its rows are read
        // whole, from memory.
        d.growing.reset();
        d.reader = std::move(reader);
    } else {
        if (d.growing) d.growing->grow(std::move(reader));
        else d.growing = std::make_shared<preview::GrowingRowsReader>(std::move(reader));
        d.reader = d.growing;
    }
    d.live = true;
}

PreviewResult PreviewSession::run(const PreviewRequest& request, const CancelToken* cancel) {
    const auto start = Clock::now();
    Impl& d = *m_impl;
    auto checkCancel = [cancel] {
        if (cancel) cancel->throwIfCancelled();
    };

    if (d.cone) {
        PreprocessingStage& stage = d.stageFor(request.corrections); // first: it may start a new generation
        return d.cone->run(request, stage, d.stageGeneration, cancel);
    }

    // Validate the cheap parts first, so a bad request fails before any work.
    const PreprocessingStage& stage = d.stageFor(request.corrections);
    const int bins = stage.outputColumns();
    const int projections = stage.outputProjections();
    const double axis = request.axis.value_or(stage.outputAxis().value_or((bins - 1) / 2.0));
    validateAxis(axis, request.axisOffsets, projections);
    const Region region = request.region.value_or(Region{0, 0, bins, bins});
    validateRegion(region, bins, bins);

    PreviewResult result;
    result.row = request.row;
    result.axis = axis;
    result.region = region;
    result.gridSize = bins;
    result.projections = projections;

    checkCancel();
    // The strategy "auto" chose, once a plan for these options exists.
    const bool samePlan = d.plan && samePlanOptions(d.planRequestOptions, request.options);
    ReconOptions resolved = request.options;
    if (samePlan) resolved.strategy = d.plan->options().strategy;
    else if (resolved.strategy == "auto") resolved.strategy.clear();
    const Image& sino = d.load(request.row, &result.secondsLoad, resolved);
    result.corrections = d.loadedStats;
    checkCancel();

    if (Impl::LiveSum* kept = d.extendable(request, axis, region)) {
        if (d.addToLiveSum(*kept, request, result)) {
            result.secondsTotal = secondsSince(start);
            return result;
        }
    }

    // A new plan when the options or the corrected sinogram's shape change; a
    // new filtering when the plan is new or holds another row.
    const bool newPlan = !d.plan || !samePlanOptions(d.planRequestOptions, request.options) ||
                         d.plan->geometry().geometry.bins != bins ||
                         d.plan->geometry().geometry.angles != stage.outputAngles();
    if (newPlan || d.filteredRow != request.row) {
        auto filterStart = Clock::now();
        if (newPlan) {
            d.plan.reset();
            d.filteredRow = -1;
            Geometry g;
            g.angles = stage.outputAngles();
            g.bins = bins;
            g.axis = axis;
            g.axisOffsets = request.axisOffsets;
            ReconGeometry rg = ReconGeometry::fullSlice(std::move(g));
            rg.region = region;
            d.plan = createPlan(rg, request.options);
            d.planRequestOptions = request.options;
            d.lastUpdatesPerSecond = 0.0;
        }
        d.filteredRow = -1;
        d.plan->setSinograms(std::span<const float>(sino.data), 1);
        d.filteredRow = request.row;
        ++d.filterRuns;
        result.filtered = true;
        result.secondsFilter = secondsSince(filterStart);
        checkCancel();
    }

    ReconstructionPlan& plan = *d.plan;
    const Geometry& current = plan.geometry().geometry;
    if (current.axis != axis || current.axisOffsets != request.axisOffsets)
        plan.setAxis(axis, std::span<const double>(request.axisOffsets));

    // The result's memory was prepared during the last run; the next run's is
    // prepared while this one back-projects.
    result.slice.width = region.width;
    result.slice.height = region.height;
    result.slice.data = d.sliceBuffers.take(region.pixels());
    d.sliceBuffers.prepare(region.pixels());
    // Before the first timing: a 2-core CPU does about 2 GU/s, a GPU over 100.
    // Bands are whole multiples of the GPU kernels' tiles (16 to 64 rows);
    // a slow exact CPU mode needs thin ones.
    const bool gpu = runsOnGpu(plan.options().strategy);
    if (auto* iterative = dynamic_cast<IterativePlan*>(&plan)) {
        // One call: the iterations run on the whole grid (bands would repeat
        // them); the token is checked after each iteration instead.
        const auto itStart = Clock::now();
        iterative->setIterationCallback([&](const IterationState& state) {
            checkCancel();
            return request.onIteration ? request.onIteration(state) : true;
        });
        if (!(plan.geometry().region == region)) plan.setRegion(region);
        try {
            plan.backproject(std::span<float>(result.slice.data));
        } catch (...) {
            iterative->setIterationCallback({});
            throw;
        }
        iterative->setIterationCallback({});
        result.iterative = iterative->lastSummary();
        result.secondsBackproject = secondsSince(itStart);
        result.strategy = plan.options().strategy;
        result.secondsTotal = secondsSince(start);
        return result;
    }
    if (d.lastUpdatesPerSecond <= 0.0) d.lastUpdatesPerSecond = gpu ? 100e9 : 2.5e9;
    const auto bpStart = Clock::now();
    result.bands = preview::backprojectInBands(
        region, static_cast<double>(region.width) * projections, gpu ? 32 : 8,
        gpu ? preview::kGpuBandSeconds : preview::kCpuBandSeconds, d.lastUpdatesPerSecond, cancel,
        [&](const Region& band, int y) {
            if (!(plan.geometry().region == band)) plan.setRegion(band);
            float* out = result.slice.data.data() + static_cast<std::size_t>(y) * region.width;
            plan.backproject(std::span<float>(out, band.pixels()));
        });
    result.secondsBackproject = secondsSince(bpStart);
    const double updates = static_cast<double>(region.pixels()) * projections;
    if (result.secondsBackproject > 0.0) {
        d.lastUpdatesPerSecond = updates / result.secondsBackproject;
        result.gups = d.lastUpdatesPerSecond / 1e9;
    }
    checkCancel();

    result.strategy = plan.options().strategy;
    result.addedProjections = projections;
    if (d.live) d.keepLiveSum(request, result, plan);
    result.secondsTotal = secondsSince(start);
    return result;
}

// ---------------------------------------------------------------------------

namespace {

class MemoryDataset final : public DatasetReader {
public:
    MemoryDataset(ImageStack sinograms, std::vector<double> angles, std::filesystem::path name,
                  std::optional<DivergentBeam> beam)
        : m_sinograms(std::move(sinograms)) {
        if (m_sinograms.width < 1 || m_sinograms.height < 1 || m_sinograms.depth < 1)
            throw InvalidArgument("memory dataset: the sinogram stack is empty");
        if (static_cast<int>(angles.size()) != m_sinograms.height)
            throw InvalidArgument("memory dataset: " + std::to_string(angles.size()) + " angles for " +
                                  std::to_string(m_sinograms.height) + " projections");
        m_info.path = std::move(name);
        m_info.format = DatasetFormat::Raw;
        m_info.projections = m_sinograms.height;
        m_info.rows = m_sinograms.depth;
        m_info.columns = m_sinograms.width;
        m_info.sampleType = SampleType::Float32;
        m_info.angles = std::move(angles);
        m_info.logCorrected = true;
        m_info.divergentBeam = std::move(beam);
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        if (firstRow < 0 || rowCount < 1 || firstRow + rowCount > m_sinograms.depth)
            throw InvalidArgument("memory dataset: rows " + std::to_string(firstRow) + ".." +
                                  std::to_string(firstRow + rowCount - 1) + " are outside 0.." +
                                  std::to_string(m_sinograms.depth - 1));
        const std::size_t n = m_sinograms.imageSize() * static_cast<std::size_t>(rowCount);
        if (out.size() != n)
            throw InvalidArgument("memory dataset: output span has " + std::to_string(out.size()) +
                                  " values, expected " + std::to_string(n));
        std::memcpy(out.data(), m_sinograms.image(firstRow).data(), n * sizeof(float));
    }

    bool readMeanFlat(int, int, std::span<float>) override { return false; }
    bool readMeanDark(int, int, std::span<float>) override { return false; }

private:
    ImageStack m_sinograms;
};

} // namespace

std::unique_ptr<DatasetReader> makeMemoryDataset(ImageStack sinograms, std::vector<double> angles,
                                                 std::filesystem::path name, std::optional<DivergentBeam> beam) {
    return std::make_unique<MemoryDataset>(std::move(sinograms), std::move(angles), std::move(name), std::move(beam));
}

std::unique_ptr<DatasetReader> makeConePhantomDataset(const ConePhantom& phantom,
                                                      const CircularConeGeometry& geometry) {
    if (geometry.offsetU != 0.0 || geometry.offsetV != 0.0 ||
        (geometry.pixelHeight != 0.0 && geometry.pixelHeight != geometry.pixelWidth))
        throw InvalidArgument("cone phantom dataset: a declared geometry has square pixels and the central ray on "
                              "the detector centre");
    // [view][row][column] -> the sinograms [row][view][column] a dataset reads.
    ImageStack sinograms = projectPhantomCone(phantom, ConeGeometry::circular(geometry)).swapDepthAndHeight();
    DivergentBeam beam;
    beam.declared = "a phantom's circular scan";
    beam.sourceAxis = geometry.sourceAxis;
    beam.sourceDetector = geometry.sourceDetector;
    beam.pixelSize = geometry.pixelWidth;
    return makeMemoryDataset(std::move(sinograms), geometry.angles, "cone-phantom", beam);
}

} // namespace tomo
