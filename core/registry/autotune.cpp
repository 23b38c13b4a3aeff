// Autotuner: the cache file, the synthetic problem and the timing. The policy
// and the file format are described in autotune.h.
#include "tomo/autotune.h"

#include "tomo/error.h"
#include "tomo/image.h"
#include "tomo/phantom.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <new>
#include <string_view>
#include <thread>

namespace tomo {

namespace fs = std::filesystem;
using nlohmann::json;

/// One candidate of the tuner: a strategy, one of its tunings ("" = none)
/// and, when the tuner chooses them, slices per pass.
struct AutotuneEntry {
    const Backend* backend = nullptr;
    std::string tuning;
    int slicesPerPass = 0; ///< 1, 2 or 4 when tuned; 0 = the options' own

    /// "cpu", "alu[shape=3]" with a tuning, "alu[shape=3]@2" with 2 slices
    /// per pass tuned: the name in the cache file.
    std::string label() const {
        std::string name = tuning.empty() ? backend->name() : backend->name() + "[" + tuning + "]";
        if (slicesPerPass > 0) name += '@' + std::to_string(slicesPerPass);
        return name;
    }
    /// `options` naming this candidate.
    ReconOptions options(const ReconOptions& options) const {
        ReconOptions o = options;
        o.strategy = backend->name();
        o.tuning = tuning;
        if (slicesPerPass > 0) o.slicesPerPass = slicesPerPass;
        return o;
    }
};

namespace {

using Entry = AutotuneEntry;

using Clock = std::chrono::steady_clock;

constexpr int kCacheVersion = 1;

/// Pixel x projection x slice updates of one timed call. Large problems are
/// timed on a centred part of the region with about this many updates: the
/// slowest candidate (cpu-reference, ~0.3 GU/s per core) then needs ~0.1-0.2 s
/// for the one call it gets before it is dropped, the fast CPU path 20-40 ms a
/// call on 2 cores, and a GPU still gets tens of thousands of pixels (threads)
/// even with thousands of projections. The per-update cost of every strategy
/// depends little on the region size beyond that, so the ranking holds.
constexpr double kTimedUpdates = 67108864.0; // 2^26
/// The same for GPU candidates (any family but "cpu"): at ~3 T updates/s a
/// call of 2^26 would take ~20 us, as short as a launch's own overhead, and
/// kernel parameter sets that differ by a few percent would rank at random.
/// The ranking of block shapes also depends on the tile count (a 64x64 tile
/// is 1/1024 of a 2048^2 slice but 1/256 of 1024^2: a part of a slice leaves
/// SMs idle that the whole slice keeps busy), so a GPU times the whole region
/// up to 2^33 updates per slice (2048^2 pixels x 2048 projections, ~3 ms a
/// call). Their times are scaled to the CPU's timed region.
constexpr double kTimedUpdatesGpu = 8589934592.0; // 2^33
/// Smallest timed region (pixels), whatever the projection count.
constexpr double kMinTimedPixels = 64.0 * 64.0;
/// No further candidate is started once tuning has taken this long and one
/// candidate has a time: with the limits above this only triggers on very
/// slow or very busy machines, and keeps tuning well under ~2 s there too.
constexpr double kTuningBudgetSeconds = 1.0;
/// With kernel parameter sets (tunings) to time as well: 0.1 s per timed
/// entry, at most this long.
constexpr double kMaxTuningBudgetSeconds = 4.0;
/// Views of the phantom that are projected exactly; see syntheticSinograms().
constexpr int kPhantomViews = 32;
/// With ReconOptions::allowApproximate: an approximate candidate competes
/// only if its result on the timed problem lies within this relative RMS
/// difference of an exact candidate's result on the same region (gridrec:
/// 0.2-1 %, oversample: ~0.3 %; float16 and nearest are the user's choice
/// and stay as chosen).
constexpr double kApproximateErrorBound = 0.02;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The slices per pass the tuner chooses among, when the options leave them
/// to it (ReconOptions::slicesPerPass 0).
constexpr int kTunedSlicesPerPass[] = {1, 2, 4};

bool accepts(const Backend& b, const ReconOptions& options) {
    try {
        b.checkOptions(options);
        return true;
    } catch (const InvalidArgument&) {
        return false;
    }
}

/// Every candidate: each strategy's tunings (its default first) and, when
/// tuned, each of its slices per pass (1 first), a strategy's entries
/// together.
std::vector<Entry> entriesOf(std::span<const Backend* const> candidates, const ReconOptions& options) {
    std::vector<Entry> entries;
    for (const Backend* b : candidates) {
        std::vector<int> passes{0};
        if (options.slicesPerPass == 0) {
            passes.clear();
            for (int s : kTunedSlicesPerPass) {
                ReconOptions o = options;
                o.slicesPerPass = s;
                o.tuning.clear();
                if (accepts(*b, o)) passes.push_back(s);
            }
        }
        for (int s : passes) {
            ReconOptions o = options;
            if (s > 0) o.slicesPerPass = s;
            if (!options.tuning.empty()) {
                entries.push_back({b, options.tuning, s}); // the user fixed it
                continue;
            }
            for (const std::string& t : b->tuningCandidates(o)) entries.push_back({b, t, s});
        }
    }
    return entries;
}

std::string joinedNames(const std::vector<Entry>& entries) {
    std::string names;
    for (const Entry& e : entries) {
        if (!names.empty()) names += ',';
        names += e.label();
    }
    return names;
}

json candidateNames(const std::vector<Entry>& entries) {
    json names = json::array();
    for (const Entry& e : entries) names.push_back(e.label());
    return names;
}

std::string cacheKey(const std::string& device, const ReconGeometry& g, const ReconOptions& o) {
    return device + "|projections=" + std::to_string(g.geometry.projections()) +
           "|bins=" + std::to_string(g.geometry.bins) + "|region=" + std::to_string(g.region.width) + "x" +
           std::to_string(g.region.height) + "|" + std::string(interpolationName(o.interpolation)) + "|" +
           std::string(precisionName(o.precision)) + "|slicesPerPass=" +
           (o.slicesPerPass == 0 ? std::string("auto") : std::to_string(o.slicesPerPass)) +
           (o.allowApproximate ? "|approximate" : "");
}

json emptyCache() {
    return json{{"version", kCacheVersion}, {"entries", json::object()}};
}

/// The cache file's content; an empty cache when the file is missing,
/// unreadable, not JSON or not in this version's layout (it is then
/// rewritten whole by the next tuning: a cache is never worth an error).
json readCache(const fs::path& path) {
    if (path.empty()) return emptyCache();
    std::ifstream in(path);
    if (!in) return emptyCache();
    json cache = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!cache.is_object()) return emptyCache(); // also the parse failure (discarded)
    const auto version = cache.find("version");
    const auto entries = cache.find("entries");
    if (version == cache.end() || *version != kCacheVersion || entries == cache.end() || !entries->is_object())
        return emptyCache();
    return cache;
}

/// Index in `entries` of the cached winner for `key`, if the entry is
/// well-formed, was tuned among the same candidates and its winner is one.
std::optional<std::size_t> cachedWinner(const json& cache, const std::string& key, const std::vector<Entry>& entries) {
    const json& all = cache.at("entries");
    const auto entry = all.find(key);
    if (entry == all.end() || !entry->is_object()) return std::nullopt;
    const auto strategy = entry->find("strategy");
    const auto tunedAmong = entry->find("candidates");
    if (strategy == entry->end() || !strategy->is_string() || tunedAmong == entry->end() ||
        *tunedAmong != candidateNames(entries))
        return std::nullopt;
    const auto tuning = entry->find("tuning");
    const std::string tuningText = tuning != entry->end() && tuning->is_string() ? tuning->get<std::string>() : "";
    const auto passes = entry->find("slicesPerPass");
    const int passesValue = passes != entry->end() && passes->is_number_integer() ? passes->get<int>() : 0;
    for (std::size_t i = 0; i < entries.size(); ++i)
        if (entries[i].backend->name() == strategy->get<std::string>() && entries[i].tuning == tuningText &&
            entries[i].slicesPerPass == passesValue)
            return i;
    return std::nullopt;
}

/// Writes the cache through a temporary file in the same folder and a rename,
/// so a reader never sees half a file. Failures are ignored: the choice is
/// still kept in memory, and a later process only tunes again.
void writeCache(const fs::path& path, const json& cache) {
    if (path.empty()) return;
    std::error_code ec;
    if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    static std::atomic<int> counter{0};
    fs::path tmp = path;
    tmp += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << cache.dump(2) << '\n';
        out.close();
        if (!out) {
            fs::remove(tmp, ec);
            return;
        }
    }
    fs::rename(tmp, path, ec);
    if (ec) fs::remove(tmp, ec);
}

/// The problem that is timed: the user's geometry with, when the region
/// holds more than kTimedUpdates updates per pass, a centred part of it of
/// the same aspect ratio instead (same projections and bins, smaller region:
/// see kTimedUpdates for why that ranks the strategies the same way).
ReconGeometry timedGeometry(const ReconGeometry& geometry, int slicesPerPass, double updates) {
    ReconGeometry timed = geometry;
    const Region& r = geometry.region;
    const double perPixel = static_cast<double>(geometry.geometry.projections()) * slicesPerPass;
    const double maxPixels = std::max(updates / perPixel, kMinTimedPixels);
    if (static_cast<double>(r.pixels()) <= maxPixels) return timed;
    const double scale = std::sqrt(maxPixels / static_cast<double>(r.pixels()));
    const int width = std::clamp(static_cast<int>(r.width * scale), 1, r.width);
    const int height = std::clamp(static_cast<int>(r.height * scale), 1, r.height);
    timed.region = Region{r.x + (r.width - width) / 2, r.y + (r.height - height) / 2, width, height};
    return timed;
}

/// `count` copies of a 2D Shepp-Logan sinogram with the problem's projection
/// count and bins. Exact projections cost ~100 ns per bin and view (0.3 s for
/// 1500 views of 2048 bins) and the timing only needs realistic non-zero
/// data, so kPhantomViews of the angles are projected and each row repeats
/// the last of them at or before its own angle.
std::vector<float> syntheticSinograms(const Geometry& g, int count) {
    const int projections = g.projections();
    const auto bins = static_cast<std::size_t>(g.bins);
    const int views = std::min(projections, kPhantomViews);
    std::vector<double> angles(static_cast<std::size_t>(views));
    for (int i = 0; i < views; ++i)
        angles[static_cast<std::size_t>(i)] = g.angles[static_cast<std::size_t>(i) * projections / views];
    PhantomSpec spec;
    spec.shapes = sheppLogan2D();
    spec.bins = g.bins;
    const ImageStack phantom = projectPhantom(spec, angles);

    const std::size_t sliceSize = static_cast<std::size_t>(projections) * bins;
    std::vector<float> sinograms(sliceSize * static_cast<std::size_t>(count));
    for (int p = 0; p < projections; ++p) {
        const std::size_t view = static_cast<std::size_t>(p) * views / projections;
        std::copy_n(phantom.data.begin() + static_cast<std::ptrdiff_t>(view * bins), bins,
                    sinograms.begin() + static_cast<std::ptrdiff_t>(p * bins));
    }
    for (int s = 1; s < count; ++s)
        std::copy_n(sinograms.begin(), sliceSize, sinograms.begin() + static_cast<std::ptrdiff_t>(s * sliceSize));
    return sinograms;
}

/// Seconds per slice of one backproject() of `backend` on the timed problem:
/// the median of 3 calls after a warm-up, or the warm-up alone when it
/// already took over `giveUpAfter` (that candidate has lost anyway). The
/// slices of the last call land in `out`.
double timeCandidate(const Entry& entry, const ReconGeometry& timed, const ReconOptions& options,
                     std::span<const float> sinograms, int count, double giveUpAfter, std::vector<float>& out) {
    const std::unique_ptr<ReconstructionPlan> plan = entry.backend->createPlan(timed, entry.options(options));
    // A plan may take fewer slices than a pass (memory bound): seconds per
    // slice keep such a candidate comparable.
    const int slices = std::min(count, plan->maxSlices());
    const std::size_t sliceSize = sinograms.size() / static_cast<std::size_t>(count);
    plan->setSinograms(sinograms.first(sliceSize * static_cast<std::size_t>(slices)), slices);
    out.assign(timed.region.pixels() * static_cast<std::size_t>(slices), 0.0f);
    // The back-projection's own time where the plan measures it (GPU
    // events: the kernels without the download, which is the same for every
    // candidate and would only blur their differences), else the wall time.
    auto timedCall = [&] {
        const auto start = Clock::now();
        plan->backproject(out);
        const double wall = secondsSince(start);
        const double kernels = plan->lastStageTimes().backproject;
        return (kernels > 0.0 && kernels <= wall ? kernels : wall) / slices;
    };
    const double warmUp = timedCall();
    if (warmUp > giveUpAfter) return warmUp;
    std::array<double, 3> calls{timedCall(), timedCall(), timedCall()};
    std::sort(calls.begin(), calls.end());
    return calls[1];
}

} // namespace

fs::path defaultAutotuneCachePath() {
    if (const char* path = std::getenv("TOMO_AUTOTUNE_CACHE"); path && *path) return path;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return fs::path(xdg) / "tomo-workstation" / "autotune.json";
    if (const char* home = std::getenv("HOME"); home && *home)
        return fs::path(home) / ".cache" / "tomo-workstation" / "autotune.json";
    return {};
}

bool autotuneEnabled() {
    const char* value = std::getenv("TOMO_AUTOTUNE");
    return !(value && std::string_view(value) == "off");
}

Autotuner::Autotuner(fs::path cachePath, Timing timing) : m_cachePath(std::move(cachePath)), m_timing(std::move(timing)) {}

Autotuner& Autotuner::instance() {
    static Autotuner tuner;
    return tuner;
}

int Autotuner::timedCandidates() const {
    std::lock_guard lock(m_mutex);
    return m_timedCandidates;
}

std::string Autotuner::deviceIdentity(std::span<const Backend* const> candidates, const ReconOptions& options) {
    std::vector<std::string> ids;
    for (const Backend* b : candidates) {
        const std::string family = b->family();
        std::string id;
        if (family == "cpu") {
            const int threads = options.threads > 0
                                    ? options.threads
                                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
            id = "cpu:" + std::to_string(threads);
        } else if (family == "cuda") {
            if (!m_gpus) m_gpus = gpuDevices();
            const auto gpu = std::find_if(m_gpus->begin(), m_gpus->end(),
                                          [&](const GpuDevice& d) { return d.index == options.device; });
            id = gpu != m_gpus->end() ? gpu->name : "cuda:" + std::to_string(options.device);
        } else if (family == "opencl") {
            // The user's choice as given (index or name), as the backends resolve it.
            const char* env = std::getenv("TOMO_OPENCL_DEVICE");
            id = "opencl:" + (!options.openclDevice.empty() ? options.openclDevice
                              : env && *env                ? std::string(env)
                                                           : std::string("0"));
        } else {
            id = family + ":" + std::to_string(options.device);
        }
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    std::sort(ids.begin(), ids.end());
    std::string joined;
    for (const std::string& id : ids) {
        if (!joined.empty()) joined += " + ";
        joined += id;
    }
    return joined;
}

const Backend& Autotuner::choose(std::span<const Backend* const> candidates, const ReconGeometry& geometry,
                                 const ReconOptions& options) {
    return *chooseTuned(candidates, geometry, options).backend;
}

Autotuner::Choice Autotuner::chooseTuned(std::span<const Backend* const> candidates, const ReconGeometry& geometry,
                                         const ReconOptions& options) {
    assert(!candidates.empty());
    const std::vector<Entry> entries = entriesOf(candidates, options);
    if (entries.empty())
        throw InvalidArgument("no candidate strategy accepts slices per pass 1, 2 or 4 with these options");
    const auto choice = [&](std::size_t i) {
        return Choice{entries[i].backend, entries[i].tuning, entries[i].options(options).slicesPerPass};
    };
    // The preferred: the last exact strategy (the last one when all are
    // approximate) with its default tuning (listed first). Without timing an
    // approximate one is never chosen: its error bound is measured.
    std::size_t preferred = entries.size() - 1;
    for (std::size_t i = entries.size(); i-- > 0;)
        if (entries[i].backend->isExact()) {
            preferred = i;
            break;
        }
    while (preferred > 0 && entries[preferred - 1].backend == entries[preferred].backend) --preferred;
    if (entries.size() == 1 || !autotuneEnabled()) return choice(preferred);
    try {
        geometry.validate();
    } catch (const InvalidArgument&) {
        return choice(preferred); // nothing to time (an options check); createPlan reports a real geometry's problem
    }

    std::lock_guard lock(m_mutex);
    const fs::path cachePath = m_cachePath.empty() ? defaultAutotuneCachePath() : m_cachePath;
    const std::string key = cacheKey(deviceIdentity(candidates, options), geometry, options);
    const std::string memoKey = cachePath.string() + '\n' + key + '\n' + joinedNames(entries);
    if (const auto it = m_chosen.find(memoKey); it != m_chosen.end()) return choice(it->second);
    if (const auto cached = cachedWinner(readCache(cachePath), key, entries)) {
        m_chosen[memoKey] = *cached;
        return choice(*cached);
    }
    const std::optional<std::size_t> winner = tune(entries, geometry, options, cachePath, key);
    if (!winner) return choice(preferred); // not remembered: the next plan tries again
    m_chosen[memoKey] = *winner;
    return choice(*winner);
}

std::optional<std::size_t> Autotuner::tune(const std::vector<AutotuneEntry>& entries, const ReconGeometry& geometry,
                                           const ReconOptions& options, const fs::path& cachePath,
                                           const std::string& key) {
    const auto start = Clock::now();
    // Times are seconds per slice of `timed`, the CPU's region at one slice
    // per pass, whatever region a candidate was timed on (they are scaled by
    // its pixels): with slices per pass tuned, a candidate of 4 is timed on
    // a region of a quarter of the pixels, the same updates per call.
    const ReconGeometry timed = timedGeometry(geometry, std::max(options.slicesPerPass, 1), kTimedUpdates);
    int mostPasses = std::max(options.slicesPerPass, 1);
    for (const Entry& e : entries) mostPasses = std::max(mostPasses, e.slicesPerPass);
    std::vector<float> sinograms; // projections x bins each: the same for every region
    try {
        if (!m_timing) sinograms = syntheticSinograms(timed.geometry, mostPasses);
    } catch (const std::bad_alloc&) {
        return std::nullopt; // the real reconstruction will report the memory it lacks
    }
    const bool withTunings = std::any_of(entries.begin(), entries.end(), [](const Entry& e) { return !e.tuning.empty(); });
    const double budget =
        withTunings ? std::clamp(0.1 * static_cast<double>(entries.size()), kTuningBudgetSeconds, kMaxTuningBudgetSeconds)
                    : kTuningBudgetSeconds;

    json seconds = json::object();
    json errors = json::object();
    std::optional<std::size_t> best;
    double bestSeconds = std::numeric_limits<double>::infinity(); // per slice of `timed`, exact candidates
    // Approximate candidates wait for the error check after the loop: their
    // time and result. The result of the first exact candidate of each timed
    // problem (CPU or GPU region, slices per pass) is their reference.
    struct Pending {
        std::size_t entry;
        double seconds;
        bool gpu;
        int slicesPerPass;
        std::vector<float> out;
    };
    std::vector<Pending> approximate;
    // Keyed by the timed problem: CPU or GPU region, slices per pass.
    std::map<std::pair<bool, int>, std::vector<float>> reference;
    std::vector<float> out;
    // Preferred (fastest expected) first, so the slow ones stop after their
    // warm-up call; a strategy's tunings in their order (its default first).
    std::vector<std::size_t> order;
    for (std::size_t i = entries.size(); i-- > 0;) {
        std::size_t first = i;
        while (first > 0 && entries[first - 1].backend == entries[i].backend) --first;
        for (std::size_t k = first; k <= i; ++k) order.push_back(k);
        i = first;
    }
    for (const std::size_t i : order) {
        if (best && secondsSince(start) > budget) break;
        ++m_timedCandidates;
        const bool gpu = entries[i].backend->family() != "cpu";
        const ReconOptions named = entries[i].options(options);
        // A CPU candidate of more slices per pass is timed on fewer pixels
        // (the same updates per call), one pass. A GPU candidate is timed as
        // a run uses it: the region of one slice per pass (a smaller centred
        // one reads fewer detector bins, a smaller footprint in the L2 cache)
        // and the same slices for all, so several passes at fewer slices per
        // pass. Timed on fewer pixels and one pass each, auto chose hybrid at
        // 4 slices per pass on an H200 (2048^2, 2048 views, float32), which
        // ran at 3.67 ms a slice where 2 slices per pass run at 2.32; timed
        // so, it chooses hybrid at 2.
        const ReconGeometry region =
            gpu ? timedGeometry(geometry, 1, kTimedUpdatesGpu) : timedGeometry(geometry, named.slicesPerPass, kTimedUpdates);
        const int slices = gpu ? mostPasses : named.slicesPerPass;
        // Seconds per slice of `timed`, whatever region was timed; a strategy
        // that computes the whole slice anyway costs its time per whole slice.
        const double pixels = static_cast<double>(
            entries[i].backend->computesWholeSlice() ? geometry.region.pixels() : region.region.pixels());
        const double scale = static_cast<double>(timed.region.pixels()) / pixels;
        try {
            const double s =
                scale * (m_timing ? m_timing(region, named)
                                  : timeCandidate(entries[i], region, options, sinograms, slices,
                                                  2.0 * bestSeconds / scale, out));
            seconds[entries[i].label()] = s;
            if (!entries[i].backend->isExact()) {
                approximate.push_back({i, s, gpu, named.slicesPerPass, out});
            } else {
                reference.try_emplace({gpu, named.slicesPerPass}, out);
                if (s < bestSeconds) {
                    best = i;
                    bestSeconds = s;
                }
            }
        } catch (const Error&) {
            // This candidate cannot run the problem here (device, memory,
            // geometry): the others still compete.
        } catch (const std::bad_alloc&) {
        }
    }
    // An approximate candidate wins only within the error bound of an exact
    // result of its own region (the same slices of the same problem).
    for (const Pending& a : approximate) {
        const auto found = reference.find({a.gpu, a.slicesPerPass});
        if (found == reference.end() || found->second.size() != a.out.size()) continue; // nothing exact to check it against
        const std::vector<float>* ref = &found->second;
        double num = 0.0, den = 0.0;
        for (std::size_t k = 0; k < a.out.size(); ++k) {
            const double d = static_cast<double>(a.out[k]) - (*ref)[k];
            num += d * d;
            den += static_cast<double>((*ref)[k]) * (*ref)[k];
        }
        const double error = den > 0.0 ? std::sqrt(num / den) : std::numeric_limits<double>::infinity();
        errors[entries[a.entry].label()] = std::isfinite(error) ? json(error) : json(nullptr);
        if (error <= kApproximateErrorBound && a.seconds < bestSeconds) {
            best = a.entry;
            bestSeconds = a.seconds;
        }
    }
    if (!best) return std::nullopt;

    // Re-read just before writing, so entries another process wrote while
    // this one was timing are kept.
    json cache = readCache(cachePath);
    json entry{{"strategy", entries[*best].backend->name()},
               {"candidates", candidateNames(entries)},
               {"seconds", seconds},
               {"timedRegion", {timed.region.width, timed.region.height}}};
    if (!errors.empty()) entry["errors"] = errors;
    if (!entries[*best].tuning.empty()) entry["tuning"] = entries[*best].tuning;
    if (entries[*best].slicesPerPass > 0) entry["slicesPerPass"] = entries[*best].slicesPerPass;
    cache["entries"][key] = entry;
    writeCache(cachePath, cache);
    return best;
}

} // namespace tomo
