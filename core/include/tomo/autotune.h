// The `auto` strategy: time the candidate strategies on this machine for this
// problem shape once, keep the winner in a cache file, reuse it.
//
//   BackendRegistry::resolve("auto")
//     └─ candidates: available exact backends accepting the options (and the
//        approximate ones with ReconOptions::allowApproximate)
//          └─ Autotuner::choose()
//               memory → cache file → time each candidate → write the file
//
// The user's interpolation and precision stay fixed; the strategy is tuned,
// and with it the kernel parameters of the strategies that have them
// (Backend::tuningCandidates: each set is one more candidate,
// "alu[shape=3]"; a tuning the user gives is kept), and, when the options
// leave them open (ReconOptions::slicesPerPass 0), the slices per pass: 1, 2
// and 4 where the strategy takes them, each one more candidate
// ("hybrid[shape=1,share=6]@2"; 1 is the preferred one without timing).
// Candidates are ranked by their kernel time per slice (the time per voxel
// update): what else a slice costs in a run - its upload, filter, download
// and writing - is the same for every candidate, so the fastest kernel per
// slice is the fastest run; the run then uses the choice for every chunk
// and device. GPU candidates are timed
// on a larger part of the region than CPU ones (up to 2^33 against ~2^26
// updates: a GPU call must outlast its launch overhead, and block shapes rank
// by the tile count of the real region), their times scaled to the CPU's
// region; a strategy that computes the whole slice whatever the region
// (Backend::computesWholeSlice: gridrec) is charged its time per whole
// slice. An approximate candidate (allowApproximate) wins only if its
// result on the timed problem lies within 2 % (relative RMS) of the first
// exact candidate's result on the same region; without timing
// (TOMO_AUTOTUNE=off) auto stays exact. The cache file (JSON) maps a key to
// its winner:
//
//   {"version": 1, "entries": {
//     "<device>|projections=<P>|bins=<B>|region=<W>x<H>|<interpolation>|<precision>|slicesPerPass=<S|auto>": {
//       "strategy": "cpu", "candidates": ["cpu-reference", "cpu"],
//       "seconds": {"cpu": 0.0031, "cpu-reference": 0.021}, "timedRegion": [256, 256]}}}
//   (a winner with kernel parameters also has "tuning": "shape=3"; with
//   slices per pass tuned, "slicesPerPass": 2; with allowApproximate the key
//   ends in "|approximate" and "errors" holds each approximate candidate's
//   difference to the exact result of the same timed problem)
//
// <device> names what the candidates run on: "cpu:<threads>" for the CPU
// family (options.threads, or the hardware threads when it is 0), the GPU's
// name (tomo::gpuDevices(), options.device) for the CUDA family, joined with
// " + " when the candidates span several. An entry is used only while its
// winner is still a candidate and the candidates are the same (a build with
// another strategy re-tunes).
#pragma once

#include "tomo/backend.h"
#include "tomo/geometry.h"
#include "tomo/registry.h"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tomo {

struct AutotuneEntry; // a strategy and one of its tunings (autotune.cpp)

/// The cache file: $TOMO_AUTOTUNE_CACHE if set, else
/// $XDG_CACHE_HOME/tomo-workstation/autotune.json, else
/// $HOME/.cache/tomo-workstation/autotune.json; empty when none of these
/// variables is set (choices are then kept in memory only).
std::filesystem::path defaultAutotuneCachePath();

/// False when the environment variable TOMO_AUTOTUNE is "off": `auto` then
/// takes the preferred candidate (the last registered: GPU before CPU)
/// without timing and without touching the cache, for reproducible tests and
/// CI runs.
bool autotuneEnabled();

class Autotuner {
public:
    /// Seconds per slice of one candidate on `geometry` (the timed part of
    /// the problem); `options` name the candidate (strategy, tuning, slices
    /// per pass). Empty = time plans (the default); tests give a fake to
    /// check the choice itself.
    using Timing = std::function<double(const ReconGeometry& geometry, const ReconOptions& options)>;

    /// A tuner with its cache at `cachePath`; an empty path means
    /// defaultAutotuneCachePath(), looked up at each choose() so a change of
    /// the environment takes effect.
    explicit Autotuner(std::filesystem::path cachePath = {}, Timing timing = {});

    /// The tuner BackendRegistry::resolve() uses for "auto".
    static Autotuner& instance();

    /// The fastest of `candidates` (non-empty, in registry order: the last is
    /// the preferred one) for this problem and these options. On a cache hit
    /// (in memory or in the file) no timing happens. Otherwise each candidate
    /// is timed, fastest expected first, on a synthetic Shepp-Logan sinogram
    /// (one warm-up, then the median of 3 backproject() calls; a candidate
    /// whose warm-up takes over twice the best median so far is not timed
    /// further; large regions are timed on a centred part of at most
    /// ~2^26 pixel x projection updates, 2^33 on a GPU; about 0.1-0.5 s in
    /// all, up to 4 s with the kernel parameter sets of the GPU strategies),
    /// and the winner is written to the cache file.
    ///
    /// Without timing, the preferred candidate is returned: a single
    /// candidate, TOMO_AUTOTUNE=off, a geometry that does not validate (the
    /// GUI checks options with an empty one), or no candidate that could run
    /// the timed problem (the real createPlan then reports why).
    /// A missing, unreadable or corrupt cache file is ignored and rewritten; a
    /// file that cannot be written only loses the choice for later processes.
    /// Never throws for cache or timing problems. Thread-safe.
    const Backend& choose(std::span<const Backend* const> candidates, const ReconGeometry& geometry,
                          const ReconOptions& options);

    /// The winner, its tuning (ReconOptions::tuning; "" for strategies
    /// without parameters) and its slices per pass (the options' own unless
    /// they were 0). choose() is its strategy. Throws InvalidArgument when
    /// slices per pass are to be chosen and no candidate takes any.
    struct Choice {
        const Backend* backend = nullptr;
        std::string tuning;
        int slicesPerPass = 1;
    };
    Choice chooseTuned(std::span<const Backend* const> candidates, const ReconGeometry& geometry,
                       const ReconOptions& options);

    /// Candidates this tuner has timed so far (a cache hit times none).
    int timedCandidates() const;

private:
    std::string deviceIdentity(std::span<const Backend* const> candidates, const ReconOptions& options);
    /// Times the candidates and writes the winner to the cache; its index,
    /// or nothing when no candidate could run the timed problem.
    std::optional<std::size_t> tune(const std::vector<struct AutotuneEntry>& entries, const ReconGeometry& geometry,
                                    const ReconOptions& options, const std::filesystem::path& cachePath,
                                    const std::string& key);

    std::filesystem::path m_cachePath;
    mutable std::mutex m_mutex;
    /// Index in the candidates of the winners chosen or read in this process,
    /// by cache path + key + candidate names: resolve() stays a map lookup
    /// after the first time, and an unwritable cache does not make every plan
    /// re-tune.
    std::map<std::string, std::size_t> m_chosen;
    std::optional<std::vector<GpuDevice>> m_gpus; ///< listed once, on first need
    Timing m_timing;
    int m_timedCandidates = 0;
};

} // namespace tomo
