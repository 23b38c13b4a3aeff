// tomo-bench: back-projection speed (GU/s) of every strategy of this build,
// end-to-end time with its per-stage split, the texture units' share, and
// the live-preview latency (--preview).
#include "bench_cone.h"
#include "bench_iterative.h"
#include "bench_pipeline.h"
#include "bench_stream.h"
#include "cli_support.h"
#include "correction_options.h"

#include "tomo/autotune.h"
#include "tomo/error.h"
#include "tomo/phantom.h"
#include "tomo/preview.h"
#include "tomo/registry.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <thread>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace tomo;
using namespace tomo::cli;
using nlohmann::json;

namespace {

constexpr const char* kProgram = "tomo-bench";
constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

struct Settings {
    int projections = 512;
    int size = 512;
    int slices = 8;
    std::string strategies;
    std::string interps = "nearest,linear";
    std::string precisions = "float32,float16";
    std::string slicesPerPass = "1,2,4";
    int repeat = 0; // 0 = mode default
    int warmup = 1;
    int threads = 0;
    int device = 0;
    std::string openclDevice;
    std::string tunings; // --tuning: ';'-separated ReconOptions::tuning texts, or "all"
    std::string json;
    bool list = false;
    bool preview = false;
    bool openScan = false; // --pipeline --open-scan
    bool pipeline = false;
    bool cone = false;
    bool iterative = false;
    int singleAngles = IterativeBenchSettings{}.singleAngles; // --iterative
    int iterations = IterativeBenchSettings{}.iterations;     // --iterative
    std::string projectors = "joseph,fourier";                // --iterative
    bool tune = false;
    bool stream = false;
    StreamBenchSettings streamBench; // --stream
    bool allowApproximate = false; // --tune, --preview, --pipeline with auto
    std::vector<int> coneDetector{0, 0}; // --cone --detector COLS ROWS
    std::string outputType = "float32"; // --pipeline
    PipelineBenchSettings pipe;          // --pipeline: the scan, the folder, the output
    CorrectionCommandLine corrections;   // --preview and --pipeline
};

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
    if (v.empty()) return kNone;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

json number(double v) {
    return std::isfinite(v) ? json(v) : json(nullptr);
}

std::string cpuModel() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
        }
    return "unknown CPU";
}

int hardwareThreads() {
    return std::max(1u, std::thread::hardware_concurrency());
}

/// The backends the run covers: --strategy names (each must exist), or all.
std::vector<const Backend*> selectBackends(const std::string& names) {
    const BackendRegistry& registry = BackendRegistry::instance();
    if (names.empty()) return registry.backends();
    std::vector<const Backend*> out;
    for (const std::string& name : splitList(names)) {
        const Backend* b = registry.find(name);
        if (!b) {
            std::string known;
            for (const Backend* k : registry.backends()) known += (known.empty() ? "" : ", ") + k->name();
            throw InvalidArgument("--strategy: unknown strategy '" + name + "' (known: " + known + ")");
        }
        out.push_back(b);
    }
    return out;
}

struct Combination {
    Interpolation interpolation;
    Precision precision;
    int slicesPerPass;
};

std::vector<Combination> combinations(const Settings& s) {
    std::vector<Combination> out;
    const auto spps = parseInts(s.slicesPerPass, 0, 1, "--slices-per-pass");
    for (int spp : spps)
        if (spp != 1 && spp != 2 && spp != 4)
            throw InvalidArgument("--slices-per-pass " + s.slicesPerPass + ": each value must be 1, 2 or 4");
    for (const std::string& i : splitList(s.interps))
        for (const std::string& p : splitList(s.precisions))
            for (int spp : spps) out.push_back({parseInterpolation(i), parsePrecision(p), spp});
    return out;
}

std::string comboName(const Combination& c) {
    return std::string(interpolationName(c.interpolation)) + "/" + std::string(precisionName(c.precision)) + "/" +
           std::to_string(c.slicesPerPass);
}

/// One measured strategy x option set.
struct Result {
    std::string strategy;
    std::string family;
    Combination combo{};
    std::string tuning;          ///< kernel parameters (ALU strategies, gridrec), "" = none
    bool wholeSlice = false;     ///< Fourier strategies: GU/s is the equivalent rate (no back-projection)
    int threads = 0;             ///< CPU threads used (0 for GPU strategies)
    std::vector<double> bpRuns;  ///< back-projection seconds of each run
    std::vector<double> e2eRuns; ///< setSinograms + backproject seconds of each run
    StageTimes stages;           ///< medians of the stage split
    double bpSeconds = kNone;
    double e2eSeconds = kNone;
    double gups = kNone;
    double speedup = kNone; ///< vs cpu-reference with the same interpolation
    double fetchesPerUpdate = 0.0;
    double fetchShare = kNone; ///< of measureTextureFetchRate()
};

struct Skipped {
    std::string strategy;
    std::string combos; ///< e.g. "nearest/float16/1, linear/float16/1"
    std::string reason;
};

struct Problem {
    ReconGeometry geometry;
    ImageStack sinograms; ///< log-corrected phantom sinograms [slice][angle][bin]
    double updatesPerRun = 0.0;
};

Problem makeProblem(const Settings& s) {
    if (s.projections < 2 || s.size < 8 || s.slices < 1)
        throw InvalidArgument("--projections must be >= 2, --size >= 8 and --slices >= 1");
    Problem p;
    const std::vector<double> angles = uniformAngles(s.projections);
    PhantomSpec spec;
    spec.bins = s.size;
    spec.rows = s.slices;
    p.sinograms = projectPhantom(spec, angles);
    Geometry g;
    g.angles = angles;
    g.bins = s.size;
    g.axis = g.detectorCentre();
    p.geometry = ReconGeometry::fullSlice(g);
    p.updatesPerRun = static_cast<double>(s.size) * s.size * s.slices * s.projections;
    return p;
}

/// Times `repeat` runs (after `warmup`) of the whole stack through one plan,
/// in batches of at most maxSlices(). End to end = wall time of reconstruct()
/// (upload, filter, back-projection, download; GPU plans overlap them);
/// back-projection = the plan's lastStageTimes().backproject, or for a plan
/// that reports none, the wall time of a separate backproject() call.
void measure(ReconstructionPlan& plan, const Problem& problem, int warmup, int repeat, Result& r) {
    const int slices = problem.sinograms.depth;
    const int batch = std::max(1, plan.maxSlices());
    const std::size_t sinoSize = problem.sinograms.imageSize();
    const std::size_t slicePixels = problem.geometry.region.pixels();
    std::vector<float> out(slicePixels * std::min(batch, slices));
    std::vector<double> uploads, filters, downloads;

    for (int run = 0; run < warmup + repeat; ++run) {
        double e2e = 0.0;
        StageTimes sum;
        for (int first = 0; first < slices; first += batch) {
            throwIfInterrupted();
            const int n = std::min(batch, slices - first);
            const std::span<float> slicesOut = std::span<float>(out).first(n * slicePixels);
            const auto t0 = Clock::now();
            plan.reconstruct(std::span<const float>(problem.sinograms.data).subspan(first * sinoSize, n * sinoSize), n,
                             slicesOut);
            e2e += secondsSince(t0);
            const StageTimes st = plan.lastStageTimes();
            sum.upload += st.upload;
            sum.filter += st.filter;
            sum.download += st.download;
            if (st.backproject > 0.0) {
                sum.backproject += st.backproject;
            } else {
                const auto t1 = Clock::now();
                plan.backproject(slicesOut);
                sum.backproject += secondsSince(t1);
            }
        }
        if (run < warmup) continue;
        r.bpRuns.push_back(sum.backproject);
        r.e2eRuns.push_back(e2e);
        uploads.push_back(sum.upload);
        filters.push_back(sum.filter);
        downloads.push_back(sum.download);
    }
    r.bpSeconds = median(r.bpRuns);
    r.e2eSeconds = median(r.e2eRuns);
    r.stages = {median(uploads), median(filters), r.bpSeconds, median(downloads)};
    r.gups = problem.updatesPerRun / r.bpSeconds / 1e9;
}

void printList() {
    std::printf("%-18s %-7s %-6s %s\n", "strategy", "family", "exact", "available");
    for (const Backend* b : BackendRegistry::instance().backends()) {
        const std::string why = b->unavailableReason();
        std::printf("%-18s %-7s %-6s %s\n", b->name().c_str(), b->family().c_str(), b->isExact() ? "yes" : "no",
                    why.empty() ? ("yes  " + b->description()).c_str() : ("no: " + why).c_str());
    }
    std::printf("CPU: %s, %d hardware threads\n", cpuModel().c_str(), hardwareThreads());
    for (const std::string& line : gpuLines()) std::printf("%s\n", line.c_str());
    for (const std::string& line : openclDeviceLines()) std::printf("%s\n", line.c_str());
}

json machineJson() {
    json gpus = json::array();
    for (const GpuDevice& d : gpuDevices())
        gpus.push_back({{"index", d.index},
                        {"name", d.name},
                        {"multiprocessors", d.multiprocessors},
                        {"memory_bytes", d.memoryBytes},
                        {"compute", std::to_string(d.computeMajor) + "." + std::to_string(d.computeMinor)}});
    json opencl = json::array();
    for (const OpenClDevice& d : openclDevices())
        opencl.push_back({{"index", d.index}, {"name", d.name}, {"platform", d.platform}, {"type", d.type},
                          {"driver", d.driver}, {"compute_units", d.computeUnits}});
    return {{"cpu", cpuModel()}, {"hardware_threads", hardwareThreads()}, {"gpus", gpus}, {"opencl", opencl}};
}

std::string fmt(double v, const char* format) {
    if (!std::isfinite(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// ------------------------------------------------------------- back-projection

/// The tunings to time for a strategy and mode: --tuning's list (';'-separated),
/// "all" = the strategy's tuningCandidates(), none given = its default only.
std::vector<std::string> tuningsFor(const Backend& backend, const ReconOptions& options, const std::string& list) {
    if (list.empty()) return {""};
    std::vector<std::string> candidates = backend.tuningCandidates(options);
    if (list == "all" || candidates == std::vector<std::string>{""}) return candidates; // all, or it takes none
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t end = std::min(list.find(';', start), list.size());
        out.push_back(list.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

/// With several tunings of one strategy and mode: the fastest of each.
void printBestTunings(const std::vector<Result>& results) {
    std::vector<std::string> lines;
    for (const Result& r : results) {
        if (r.tuning.empty()) continue;
        int count = 0;
        bool best = true;
        for (const Result& o : results)
            if (o.strategy == r.strategy && o.combo.interpolation == r.combo.interpolation &&
                o.combo.precision == r.combo.precision && o.combo.slicesPerPass == r.combo.slicesPerPass) {
                ++count;
                if (o.gups > r.gups) best = false;
            }
        if (count > 1 && best)
            lines.push_back("  " + r.strategy + " " + std::string(interpolationName(r.combo.interpolation)) + "/" +
                            std::string(precisionName(r.combo.precision)) + "/" + std::to_string(r.combo.slicesPerPass) +
                            ": " + r.tuning + " (" + std::to_string(static_cast<long>(std::lround(r.gups))) + " GU/s of " +
                            std::to_string(count) + " tunings)");
    }
    if (lines.empty()) return;
    std::printf("\nfastest tuning per strategy and mode:\n");
    for (const std::string& l : lines) std::printf("%s\n", l.c_str());
}

/// --tune: what `auto` does for each mode, from an empty cache: every
/// candidate (strategy and tuning) timed, the winner.
int runTune(const Settings& s) {
    if (!autotuneEnabled()) throw InvalidArgument("--tune: TOMO_AUTOTUNE is 'off'; unset it to tune");
    const Problem problem = makeProblem(s);
    const fs::path cache = fs::temp_directory_path() / ("tomo-bench-tune-" + std::to_string(::getpid()) + ".json");
    const std::optional<std::vector<const Backend*>> only =
        s.strategies.empty() ? std::nullopt : std::optional(selectBackends(s.strategies));
    std::printf("tomo-bench --tune: 'auto' for %d projections x %d^2 from an empty cache\n", s.projections, s.size);
    int tuned = 0;
    for (const Combination& combo : combinations(s)) {
        ReconOptions o;
        o.interpolation = combo.interpolation;
        o.precision = combo.precision;
        o.slicesPerPass = combo.slicesPerPass;
        o.threads = s.threads;
        o.device = s.device;
        o.openclDevice = s.openclDevice;
        o.allowApproximate = s.allowApproximate;
        std::vector<const Backend*> candidates = BackendRegistry::instance().autoCandidates(o);
        if (only)
            std::erase_if(candidates, [&](const Backend* b) { return std::find(only->begin(), only->end(), b) == only->end(); });
        if (candidates.empty()) {
            std::printf("\n%s: no candidate\n", comboName(combo).c_str());
            continue;
        }
        std::error_code ec;
        fs::remove(cache, ec);
        Autotuner tuner(cache);
        const auto start = Clock::now();
        const Autotuner::Choice choice = tuner.chooseTuned(candidates, problem.geometry, o);
        const double seconds = secondsSince(start);
        ++tuned;
        std::ifstream in(cache);
        const json file = json::parse(in, nullptr, false);
        std::printf("\n%s: %d candidate(s) timed in %.2f s\n", comboName(combo).c_str(), tuner.timedCandidates(), seconds);
        if (file.is_object() && file.contains("entries") && !file["entries"].empty()) {
            const json entry = file["entries"].begin().value();
            const double pixels = entry["timedRegion"][0].get<double>() * entry["timedRegion"][1].get<double>();
            std::vector<std::pair<double, std::string>> rows;
            for (const auto& [label, secs] : entry["seconds"].items()) rows.emplace_back(secs.get<double>(), label);
            std::sort(rows.begin(), rows.end());
            const json errors = entry.value("errors", json::object());
            for (const auto& [secs, label] : rows) {
                // Approximate candidates (--allow-approximate): their difference to the exact result.
                const auto error = errors.find(label);
                const std::string note = error == errors.end() || !error->is_number()
                                             ? ""
                                             : "  (" + fmt(100.0 * error->get<double>(), "%.2f") + " % from exact)";
                std::printf("  %-40s %9.1f GU/s%s\n", label.c_str(), pixels * s.projections / secs / 1e9, note.c_str());
            }
        }
        std::printf("  winner: %s%s\n", choice.backend->name().c_str(),
                    choice.tuning.empty() ? "" : (" [" + choice.tuning + "]").c_str());
        fs::remove(cache, ec);
    }
    return tuned > 0 ? kExitOk : kExitUsage;
}

int runBackprojection(const Settings& s) {
    const int repeat = s.repeat > 0 ? s.repeat : 3;
    const auto backends = selectBackends(s.strategies);
    const auto combos = combinations(s);

    std::printf("tomo-bench: %d projections x %d^2 x %d slices (%.3g G updates per run), median of %d run%s after "
                "%d warm-up%s, I/O excluded\n",
                s.projections, s.size, s.slices, s.size * double(s.size) * s.slices * s.projections / 1e9, repeat,
                repeat > 1 ? "s" : "", s.warmup, s.warmup == 1 ? "" : "s");
    std::printf("CPU: %s, %d hardware threads%s\n", cpuModel().c_str(), hardwareThreads(),
                s.threads ? (", using " + std::to_string(s.threads)).c_str() : "");
    for (const GpuDevice& d : gpuDevices())
        if (d.index == s.device) std::printf("GPU %d: %s, %d SMs\n", d.index, d.name.c_str(), d.multiprocessors);
    std::fflush(stdout);

    const Problem problem = makeProblem(s);
    std::vector<Result> results;
    std::vector<Skipped> skipped;
    auto skip = [&](const std::string& strategy, const std::string& combo, const std::string& reason) {
        for (Skipped& k : skipped)
            if (k.strategy == strategy && k.reason == reason) {
                k.combos += ", " + combo;
                return;
            }
        skipped.push_back({strategy, combo, reason});
    };

    for (const Backend* backend : backends) {
        if (const std::string why = backend->unavailableReason(); !why.empty()) {
            skip(backend->name(), "all", why);
            continue;
        }
        for (const Combination& combo : combos) {
            ReconOptions options;
            options.strategy = backend->name();
            options.interpolation = combo.interpolation;
            options.precision = combo.precision;
            options.slicesPerPass = combo.slicesPerPass;
            options.threads = s.threads;
            options.device = s.device;
            options.openclDevice = s.openclDevice;
            try {
                backend->checkOptions(options);
            } catch (const InvalidArgument& e) {
                skip(backend->name(), comboName(combo), e.what());
                continue;
            }
            for (const std::string& tuning : tuningsFor(*backend, options, s.tunings)) {
            options.tuning = tuning;
            try {
                backend->checkOptions(options);
            } catch (const InvalidArgument& e) {
                skip(backend->name(), comboName(combo) + (tuning.empty() ? "" : " " + tuning), e.what());
                continue;
            }
            Result r;
            r.tuning = tuning;            r.strategy = backend->name();
            r.family = backend->family();
            r.wholeSlice = backend->computesWholeSlice();
            r.combo = combo;
            r.threads = r.family == "cpu" ? (s.threads > 0 ? s.threads : hardwareThreads()) : 0;
            r.fetchesPerUpdate = backend->textureFetchesPerUpdate(options);
            const bool tty = ::isatty(STDERR_FILENO);
            if (tty) std::fprintf(stderr, "%s %s...\r", r.strategy.c_str(), comboName(combo).c_str());
            std::string failure; // a plan the backend cannot make here (size, memory, device) is skipped
            try {
                auto plan = backend->createPlan(problem.geometry, options);
                measure(*plan, problem, s.warmup, repeat, r);
            } catch (const InvalidArgument& e) {
                failure = e.what();
            } catch (const DeviceError& e) {
                failure = e.what();
            } catch (const OutOfMemory& e) {
                failure = e.what();
            }
            if (tty) std::fprintf(stderr, "\033[K");
            if (!failure.empty()) {
                skip(backend->name(), comboName(combo) + (tuning.empty() ? "" : " " + tuning), failure);
                continue;
            }
            results.push_back(std::move(r));
            }
        }
    }

    // Speed-up of every strategy (GPU and OpenCL ones too) over cpu-reference
    // with the same interpolation.
    for (Result& r : results) {
        for (const Result& ref : results)
            if (ref.strategy == "cpu-reference" && ref.combo.interpolation == r.combo.interpolation)
                r.speedup = r.gups / ref.gups;
    }

    // Texture kernels against the texture unit's ceiling.
    double fetchRate = kNone;
    std::string fetchRateNote;
    // (CUDA's only: the ceiling is measured with CUDA, on --device.)
    const auto cudaTexture = [](const Result& r) { return r.fetchesPerUpdate > 0.0 && r.family == "cuda"; };
    const bool anyTexture = std::any_of(results.begin(), results.end(), cudaTexture);
    if (anyTexture) {
        try {
            fetchRate = measureTextureFetchRate(s.device);
        } catch (const DeviceError& e) {
            fetchRateNote = e.what();
        }
        for (Result& r : results)
            if (cudaTexture(r) && std::isfinite(fetchRate))
                r.fetchShare = r.gups * 1e9 * r.fetchesPerUpdate / fetchRate;
    }

    std::printf("\n%-15s %-7s %-7s %3s %10s %9s %7s %9s %10s %5s %27s %6s  %s\n", "strategy", "interp", "prec", "spp",
                "bp ms", "GU/s", "vs ref", "GU/s/core", "e2e ms", "%bp", "upload/filter/bp/down ms", "tex", "tuning");
    for (const Result& r : results) {
        const std::string split = fmt(r.stages.upload * 1e3, "%.1f") + "/" + fmt(r.stages.filter * 1e3, "%.1f") + "/" +
                                  fmt(r.stages.backproject * 1e3, "%.1f") + "/" + fmt(r.stages.download * 1e3, "%.1f");
        std::printf("%-15s %-7s %-7s %3d %10s %9s %7s %9s %10s %5s %27s %6s  %s\n", r.strategy.c_str(),
                    std::string(interpolationName(r.combo.interpolation)).c_str(),
                    std::string(precisionName(r.combo.precision)).c_str(), r.combo.slicesPerPass,
                    fmt(r.bpSeconds * 1e3, "%.2f").c_str(), fmt(r.gups, "%.3f").c_str(),
                    fmt(r.speedup, "%.1fx").c_str(), r.threads ? fmt(r.gups / r.threads, "%.3f").c_str() : "-",
                    fmt(r.e2eSeconds * 1e3, "%.2f").c_str(), fmt(100.0 * r.bpSeconds / r.e2eSeconds, "%.0f").c_str(),
                    split.c_str(), fmt(100.0 * r.fetchShare, "%.0f%%").c_str(), r.tuning.c_str());
    }
    if (results.empty()) std::printf("(no strategy ran)\n");
    if (std::any_of(results.begin(), results.end(), [](const Result& r) { return r.wholeSlice; }))
        std::printf("\ngridrec, cpu-gridrec: Fourier-domain gridding, no back-projection: 'GU/s' is the equivalent "
                    "rate (size^2 x projections x slices / time), 'bp' = phase + gridding + 2D inverse FFT + "
                    "crop, 'filter' includes the rows' 1D FFT\n");
    printBestTunings(results);
    if (anyTexture) {
        if (std::isfinite(fetchRate))
            std::printf("\ntexture fetch ceiling (float32 bilinear): %.0f G fetches/s; 'tex' = the kernel's fetches/s "
                        "as a share of it (fetches per update = 1/slices-per-pass for one packed fetch per pixel and "
                        "projection; half and point fetches can run up to twice this ceiling)\n",
                        fetchRate / 1e9);
        else
            std::printf("\ntexture fetch ceiling not measured: %s\n", fetchRateNote.c_str());
    }
    if (!skipped.empty()) {
        std::printf("\nskipped (interp/precision/slices-per-pass):\n");
        for (const Skipped& k : skipped)
            std::printf("  %s %s: %s\n", k.strategy.c_str(), k.combos.c_str(), k.reason.c_str());
    }

    if (!s.json.empty()) {
        json rows = json::array();
        for (const Result& r : results) {
            rows.push_back({
                {"strategy", r.strategy},
                {"family", r.family},
                {"interpolation", interpolationName(r.combo.interpolation)},
                {"precision", precisionName(r.combo.precision)},
                {"slices_per_pass", r.combo.slicesPerPass},
                {"tuning", r.tuning},
                {"gups_equivalent", r.wholeSlice},
                {"threads", r.threads},
                {"seconds_backproject", number(r.bpSeconds)},
                {"gups", number(r.gups)},
                {"gups_per_core", r.threads ? number(r.gups / r.threads) : json(nullptr)},
                {"speedup_vs_cpu_reference", number(r.speedup)},
                {"seconds_end_to_end", number(r.e2eSeconds)},
                {"backproject_share_of_end_to_end", number(r.bpSeconds / r.e2eSeconds)},
                {"stages_seconds",
                 {{"upload", number(r.stages.upload)},
                  {"filter", number(r.stages.filter)},
                  {"backproject", number(r.stages.backproject)},
                  {"download", number(r.stages.download)}}},
                {"texture_fetches_per_update", r.fetchesPerUpdate},
                {"texture_fetch_share", number(r.fetchShare)},
                {"runs_seconds_backproject", r.bpRuns},
                {"runs_seconds_end_to_end", r.e2eRuns},
            });
        }
        json skips = json::array();
        for (const Skipped& k : skipped)
            skips.push_back({{"strategy", k.strategy}, {"combinations", k.combos}, {"reason", k.reason}});
        writeJson(s.json, {{"program", std::string(kProgram) + " " + TOMO_VERSION},
                           {"mode", "backprojection"},
                           {"problem",
                            {{"projections", s.projections},
                             {"size", s.size},
                             {"slices", s.slices},
                             {"updates_per_run", problem.updatesPerRun}}},
                           {"repeat", repeat},
                           {"warmup", s.warmup},
                           {"machine", machineJson()},
                           {"texture_fetch_rate", number(fetchRate)},
                           {"results", rows},
                           {"skipped", skips}});
        std::printf("\nwrote %s\n", s.json.c_str());
    }
    return kExitOk;
}

// ----------------------------------------------------------------- preview

int runPreview(const Settings& s, const CLI::App& app) {
    const int repeat = s.repeat > 0 ? s.repeat : 10;
    std::printf("tomo-bench --preview: %d^2 slice from %d projections, axis change -> finished slice, median of %d\n",
                s.size, s.projections, repeat);
    std::fflush(stdout);

    Settings one = s;
    one.slices = 3; // row changes alternate between rows 1 and 2
    Problem problem = makeProblem(one);
    auto session = std::make_shared<PreviewSession>(
        makeMemoryDataset(std::move(problem.sinograms), problem.geometry.geometry.angles, "phantom"));

    // Strategies: those named, else "auto"; option lists only when given
    // (the preview's default is the exact linear float32 mode).
    std::vector<std::string> strategies =
        s.strategies.empty() ? std::vector<std::string>{"auto"} : splitList(s.strategies);
    Settings comboSettings = s;
    if (!app.count("--interp")) comboSettings.interps = "linear";
    if (!app.count("--precision")) comboSettings.precisions = "float32";
    if (!app.count("--slices-per-pass")) comboSettings.slicesPerPass = "1";

    json rows = json::array();
    std::printf("\n%-15s %-7s %-7s %10s %10s %9s %10s %10s %10s\n", "strategy", "interp", "prec", "median ms", "bp ms",
                "GU/s", "first ms", "row ms", "load ms");
    for (const std::string& strategy : strategies) {
        for (const Combination& combo : combinations(comboSettings)) {
            PreviewRequest request;
            request.row = 0;
            request.options.strategy = strategy;
            request.options.interpolation = combo.interpolation;
            request.options.precision = combo.precision;
            request.options.slicesPerPass = combo.slicesPerPass;
            request.options.threads = s.threads;
            request.options.device = s.device;
            request.options.openclDevice = s.openclDevice;
            request.options.allowApproximate = s.allowApproximate;
            request.corrections = applyCorrectionOptions(app, s.corrections, CorrectionOptions{});
            const double centre = problem.geometry.geometry.detectorCentre();
            std::vector<double> totals, bps, rowTotals, loads;
            PreviewResult first;
            try {
                session->reset();
                request.axis = centre;
                first = session->run(request); // loads and filters: not an axis change
                for (int i = 0; i < s.warmup + repeat; ++i) {
                    throwIfInterrupted();
                    request.axis = centre + 0.25 * ((i % 8) + 1); // a new axis every run
                    const PreviewResult r = session->run(request);
                    if (i < s.warmup) continue;
                    totals.push_back(r.secondsTotal);
                    bps.push_back(r.secondsBackproject);
                }
                for (int i = 0; i < s.warmup + repeat; ++i) {
                    throwIfInterrupted();
                    request.row = 1 + i % 2; // a new row every run: load, correct, filter, back-project
                    const PreviewResult r = session->run(request);
                    if (i < s.warmup) continue;
                    rowTotals.push_back(r.secondsTotal);
                    loads.push_back(r.secondsLoad);
                }
            } catch (const InvalidArgument& e) {
                std::printf("%-15s %-7s %-7s skipped: %s\n", strategy.c_str(),
                            std::string(interpolationName(combo.interpolation)).c_str(),
                            std::string(precisionName(combo.precision)).c_str(), e.what());
                continue;
            } catch (const DeviceError& e) {
                std::printf("%-15s skipped: %s\n", strategy.c_str(), e.what());
                continue;
            } catch (const OutOfMemory& e) {
                std::printf("%-15s skipped: %s\n", strategy.c_str(), e.what());
                continue;
            }
            const double total = median(totals), bp = median(bps);
            const double gups = static_cast<double>(s.size) * s.size * s.projections / bp / 1e9;
            std::printf("%-15s %-7s %-7s %10.2f %10.2f %9.3f %10.1f %10.1f %10.1f\n", first.strategy.c_str(),
                        std::string(interpolationName(combo.interpolation)).c_str(),
                        std::string(precisionName(combo.precision)).c_str(), total * 1e3, bp * 1e3, gups,
                        first.secondsTotal * 1e3, median(rowTotals) * 1e3, median(loads) * 1e3);
            rows.push_back({{"strategy", first.strategy},
                            {"requested", strategy},
                            {"interpolation", interpolationName(combo.interpolation)},
                            {"precision", precisionName(combo.precision)},
                            {"slices_per_pass", combo.slicesPerPass},
                            {"median_ms_axis_change_to_slice", total * 1e3},
                            {"median_ms_backproject", bp * 1e3},
                            {"gups", number(gups)},
                            {"first_run_ms_with_filter", first.secondsTotal * 1e3},
                            {"median_ms_row_change_to_slice", median(rowTotals) * 1e3},
                            {"median_ms_row_load_and_corrections", median(loads) * 1e3},
                            {"runs_ms", [&] {
                                 std::vector<double> ms;
                                 for (double t : totals) ms.push_back(t * 1e3);
                                 return ms;
                             }()}});
        }
    }
    std::printf("('median ms' = PreviewSession::run after an axis change, the filtered sinogram kept; 'first ms' = the "
                "first run, which loads and filters; 'row ms' = a run after a row change, and 'load ms' its reading "
                "and corrections)\n");
    if (!s.json.empty()) {
        writeJson(s.json, {{"program", std::string(kProgram) + " " + TOMO_VERSION},
                           {"mode", "preview"},
                           {"problem", {{"projections", s.projections}, {"size", s.size}}},
                           {"repeat", repeat},
                           {"warmup", s.warmup},
                           {"machine", machineJson()},
                           {"results", rows}});
        std::printf("wrote %s\n", s.json.c_str());
    }
    return kExitOk;
}

// ----------------------------------------------------------------- pipeline

int runPipeline(Settings s, const CLI::App& app) {
    // One value of each option list; an option not given takes the exact mode's value.
    auto one = [&](const std::string& list, const char* option, const char* fallback) {
        if (!app.count(option)) return std::string(fallback);
        const auto values = splitList(list);
        if (values.size() != 1)
            throw InvalidArgument(std::string("--pipeline takes one value of ") + option + ", got '" + list + "'");
        return values.front();
    };
    s.pipe.projections = s.projections;
    s.pipe.columns = s.size;
    s.pipe.json = s.json;
    s.pipe.outputType = parseOutputType(s.outputType, "--output-type");
    ReconOptions& o = s.pipe.options;
    o.strategy = one(s.strategies, "--strategy", "auto");
    o.interpolation = parseInterpolation(one(s.interps, "--interp", "linear"));
    o.precision = parsePrecision(one(s.precisions, "--precision", "float32"));
    o.slicesPerPass = parseInts(one(s.slicesPerPass, "--slices-per-pass", "1"), 1, 1, "--slices-per-pass").front();
    // As tomo-recon: `auto` chooses the slices per pass too, unless given.
    if (o.strategy == "auto" && !app.count("--slices-per-pass")) o.slicesPerPass = 0;
    o.threads = s.threads;
    o.device = s.device;
    o.openclDevice = s.openclDevice;
    o.allowApproximate = s.allowApproximate;
    s.pipe.corrections = applyCorrectionOptions(app, s.corrections, CorrectionOptions{});
    s.pipe.gpuCorrections = !s.corrections.cpuCorrections;
    // As tomo-recon's: capped at half the machine's memory, with a warning.
    s.pipe.memoryBudgetGiB = static_cast<double>(memoryBudget(s.pipe.memoryBudgetGiB).bytes) / (1 << 30);
    if (!s.pipe.writerThreads.empty()) return runWriterBenchmark(s.pipe);
    return s.openScan ? runOpenScanBenchmark(s.pipe) : runPipelineBenchmark(s.pipe);
}

void addOptions(CLI::App& app, Settings& s) {
    app.add_option("--projections", s.projections, "Projections (angles over 180 degrees)")
        ->type_name("N")
        ->capture_default_str();
    app.add_option("--size", s.size, "Detector bins = slice width and height")->type_name("N")->capture_default_str();
    app.add_option("--slices", s.slices, "Slices reconstructed per run (ignored by --preview)")
        ->type_name("N")
        ->capture_default_str();
    app.add_option("--strategy", s.strategies,
                   "Comma-separated strategies to run (default: every strategy of the build; unavailable ones are "
                   "listed with the reason; --preview: auto)")
        ->type_name("LIST");
    app.add_option("--interp", s.interps, "Comma-separated interpolations (--preview default: linear)")
        ->type_name("LIST")
        ->capture_default_str();
    app.add_option("--precision", s.precisions,
                   "Comma-separated sinogram storage precisions (--preview default: float32)")
        ->type_name("LIST")
        ->capture_default_str();
    app.add_option("--slices-per-pass", s.slicesPerPass, "Comma-separated slices per pass (--preview default: 1)")
        ->type_name("LIST")
        ->capture_default_str();
    app.add_option("--repeat", s.repeat,
                   "Timed runs per combination; the median is reported (default 3, --preview 10). cpu-reference at "
                   "512^3 x 8 takes ~10 s per run on 2 cores: use --repeat 1 for a quick look")
        ->type_name("N")
        ->check(CLI::Range(0, std::numeric_limits<int>::max()));
    app.add_option("--warmup", s.warmup, "Untimed runs before the timed ones")
        ->type_name("N")
        ->check(CLI::Range(0, std::numeric_limits<int>::max()))
        ->capture_default_str();
    app.add_option("--threads", s.threads, "Worker threads of CPU strategies (0 = all hardware threads)")
        ->type_name("N")
        ->check(CLI::Range(0, std::numeric_limits<int>::max()))
        ->capture_default_str();
    app.add_option("--device", s.device, "GPU index")
        ->type_name("N")
        ->check(CLI::Range(0, std::numeric_limits<int>::max()))
        ->capture_default_str();
    app.add_option("--opencl-device", s.openclDevice,
                   "Device of the OpenCL strategies: index or part of its name, as --list shows (default: "
                   "$TOMO_OPENCL_DEVICE, else the first GPU, else 0)")
        ->type_name("N|NAME");
    app.add_option("--tuning", s.tunings,
                   "Kernel parameters of the ALU strategies and gridrec to time, ';'-separated (e.g. "
                   "\"shape=0;shape=3\", hybrid also share=M; \"kernel=4;kernel=6,oversampling=1.5\"), or 'all' "
                   "(every candidate auto would time); default: their defaults")
        ->type_name("LIST");
    app.add_flag("--allow-approximate", s.allowApproximate,
                 "--tune, --preview, --pipeline with strategy auto: approximate strategies compete too "
                 "(as tomo-recon --allow-approximate)");
    app.add_option("--detector", s.coneDetector,
                   "--cone: detector columns and rows (default: --size + --size/4 by --size), e.g. --detector 1248 960")
        ->expected(2)
        ->check(positiveNumber())
        ->type_name("COLS ROWS");
    app.add_flag("--tune", s.tune,
                 "Show what --strategy auto does per mode (--interp, --precision, --slices-per-pass): every "
                 "candidate strategy and tuning timed from an empty cache, and the winner");
    app.add_option("--json", s.json, "Also write the results as JSON to this file")->type_name("FILE");
    app.add_flag("--list", s.list, "List the strategies with their availability, and the devices, then exit");
    app.add_flag("--preview", s.preview,
                 "Measure the live preview instead: time from an axis change to the finished --size^2 slice "
                 "(PreviewSession, filtered sinogram kept)");
    auto* pipeline = app.add_flag(
        "--pipeline", s.pipeline,
        "Measure the batch reconstruction end to end instead: write a simulated uint16 DXchange scan of "
        "--projections x --rows x --size to --dir, measure that folder's storage floor, run tomo-recon's path "
        "with the input cold and warm (one --strategy, --interp, --precision, --slices-per-pass)");
    app.add_flag("--cone", s.cone,
                 "Measure the cone-beam FDK back-projection instead: --size^3 voxels from --projections views over "
                 "360 degrees (one --strategy list of cpu, cpu-reference; default cpu), GUPS = voxels x views / s");
    auto* iterative = app.add_flag(
        "--iterative", s.iterative,
        "Measure the iterative methods on one strategy's projector pair instead (default: the GPU's, else cpu; "
        "--strategy picks another): one SIRT iteration per slice of a batch of --slices (default 16) of --size^2 "
        "(default 2048) from --projections (default 2048), the estimate for a --size^3 volume, the pair's memory "
        "against the batch's input + output, the projections' GU/s, CGLS and TV iterations, and --iterations SIRT "
        "iterations of one slice from --single-angles; with the issue's targets");
    app.add_option("--single-angles", s.singleAngles, "--iterative: projections of the one-slice figure")
        ->check(integerIn(2, 1 << 20))
        ->capture_default_str()
        ->needs(iterative);
    app.add_option("--iterations", s.iterations, "--iterative: SIRT iterations of the one-slice figure")
        ->check(integerIn(1, 1000000))
        ->capture_default_str()
        ->needs(iterative);
    app.add_option("--projector", s.projectors,
                   "--iterative: the projector pairs to measure, one after the other (joseph, fourier; default both)")
        ->type_name("LIST")
        ->needs(iterative);
    app.add_option("--dir", s.pipe.dir, "--pipeline: folder for the scan and the output; --stream: for the ipc socket, the growing file and "
                   "the recording (default: the temp folder)")
        ->type_name("DIR");
    app.add_option("--rows", s.pipe.rows, "--pipeline, --stream: detector rows (default: --size)")
        ->type_name("N")
        ->check(CLI::Range(1, std::numeric_limits<int>::max()));
    auto* stream = app.add_flag(
        "--stream", s.stream,
        "Measure live acquisition instead (tomo-stream's frames, sender and receiver in this process): ingest "
        "GB/s and frames lost with frames sent as fast as they are taken, then a live phase at --rate with three "
        "slices (rows at 1/4, 1/2, 3/4) reconstructed from the newest frames again and again (--strategy, one): "
        "display updates, frames skipped, and the latency from the last frame to the three slices");
    app.add_option("--stream-via", s.streamBench.via,
                   "--stream: inproc or ipc (ZeroMQ), or file (a growing SWMR file)")
        ->check(CLI::IsMember({"inproc", "ipc", "file"}))
        ->capture_default_str()
        ->needs(stream);
    app.add_option("--rate", s.streamBench.rate, "--stream: frames per second of the live phase (0 = as fast as possible)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str()
        ->needs(stream);
    app.add_flag("--record", s.streamBench.record,
                 "--stream: the ingest phase also records every frame to a DXchange file (Record), and checks that "
                 "none is missing")
        ->needs(stream);
    app.add_option("--output-format", s.pipe.output, "--pipeline: h5 or tiff (a folder of TIFF slices)")
        ->type_name("FORMAT")
        ->capture_default_str()
        ->needs(pipeline);
    app.add_option("--output-type", s.outputType,
                   "--pipeline: how the output stores the values (uint16/uint8: the range estimated from 5 rows "
                   "first, timed apart, as tomo-recon does)")
        ->check(CLI::IsMember({"float32", "float16", "uint16", "uint8"}))
        ->capture_default_str()
        ->needs(pipeline);
    app.add_flag("--contiguous", [&](std::int64_t) { s.pipe.chunkedInput = false; },
                 "--pipeline: write the scan as one contiguous dataset (default: one projection per chunk)")
        ->needs(pipeline);
    app.add_option("--gzip", s.pipe.gzipLevel, "--pipeline: gzip level of the scan's chunks (default 0: none)")
        ->type_name("N")
        ->check(CLI::Range(0, 9))
        ->needs(pipeline);
    app.add_flag("--open-scan", s.openScan,
                 "--pipeline: measure what the workstation does with the scan instead: open it with the page cache "
                 "dropped, the middle row's first slice, row changes to rows not read yet, axis changes (the live "
                 "preview's path, one --strategy, --interp, --precision)")
        ->needs(pipeline);
    app.add_option("--memory-budget", s.pipe.memoryBudgetGiB,
                   "--pipeline: GiB of host memory for the conveyor's chunks in flight, as tomo-recon's option "
                   "(default: 1/16 of the machine's memory, 1 to 4 GiB)")
        ->type_name("GIB")
        ->check(numberIn(0.001, 1e6))
        ->needs(pipeline);
    app.add_option("--gpus", s.pipe.gpus,
                   "--pipeline: the scaling table: the runs on the first 1, 2, 4, ... of these GPUs and on all of "
                   "them (all, or indices 0,1,...), each GPU a lane of the conveyor; with a CPU strategy the indices "
                   "only number lanes that share the cores. With --mpi: each rank's GPUs, as tomo-recon's")
        ->type_name("all|N,N,...")
        ->needs(pipeline);
    app.add_flag("--mpi", s.pipe.mpi,
                 "--pipeline: run under mpirun/srun: every rank takes part in each run as in tomo-recon --mpi (the "
                 "scan and output in --dir must be on a file system every rank sees); rank 0 prints the table. With "
                 "--writer-threads: the ranks write one shared output as tomo-recon --mpi's do (threads per rank)")
        ->needs(pipeline);
    app.add_option("--writer-threads", s.pipe.writerThreads,
                   "--pipeline: measure the output writer alone (no scan, no conveyor) with each of these thread "
                   "counts, e.g. 1,2,4,8: GB/s into --dir for --size, --rows, --output-type, --output-format")
        ->delimiter(',')
        ->check(CLI::Range(1, 1024))
        ->type_name("N,N,...")
        ->needs(pipeline);
    app.add_flag("--keep", s.pipe.keep,
                 "--pipeline: keep the scan (reused by the next run when it matches) and the output")
        ->needs(pipeline);
    addCorrectionOptions(app, s.corrections); // the preview's and the pipeline's corrections
    app.footer("Columns:\n"
               "  bp ms      back-projection time per run: the plan's own timing (GPU: kernel time) when it reports\n"
               "             one, else the wall time of backproject()\n"
               "  GU/s       size^2 x slices x projections / bp time / 1e9\n"
               "  vs ref     speed-up over cpu-reference with the same interpolation (when it ran)\n"
               "  GU/s/core  GU/s / CPU threads used\n"
               "  e2e ms     wall time of reconstruct(), host memory to host memory: upload, filter,\n"
               "             back-projection, download (GPU plans overlap them); disk excluded\n"
               "  %bp        bp / e2e\n"
               "  upload/filter/bp/down ms  the plan's stage split (sums over the batches)\n"
               "  tex        texture fetches/s (GU/s x the kernel's fetches per update) as a share of the measured\n"
               "             float32 bilinear fetch rate (texture kernels only)\n\n"
               "Examples:\n"
               "  tomo-bench --strategy cpu,cpu-reference --interp linear --slices-per-pass 4 --repeat 3\n"
               "  tomo-bench --projections 2048 --size 2048 --slices 32 --json h100.json\n"
               "  tomo-bench --preview --projections 2048 --size 2048\n"
               "  tomo-bench --cone --size 256 --projections 496\n"
               "  tomo-bench --iterative\n"
               "  tomo-bench --iterative --strategy cpu --size 128 --projections 128 --slices 4 --single-angles 90 "
               "--iterations 10\n"
               "  tomo-bench --stream --size 2048 --projections 1500 --record --strategy auto\n"
               "  tomo-bench --pipeline --projections 2048 --rows 512 --size 2048 --dir /data/scratch --strategy auto\n\n" +
               exitCodeHelp());
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"tomo-bench: back-projection speed in GU/s (giga voxel updates per second) of every strategy of "
                 "this build, on a Shepp-Logan phantom sinogram held in memory (I/O excluded).",
                 kProgram};
    Settings s;
    try {
        addOptions(app, s);
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        std::cerr << kProgram << ": error: " << e.what() << " (see --help)" << std::endl;
        return kExitUsage;
    } catch (const std::exception& e) {
        return reportError(kProgram, e);
    }
    try {
        if (s.list) {
            printList();
            return kExitOk;
        }
        installInterruptHandler();
        if (s.preview + s.pipeline + s.cone + s.iterative + s.stream > 1)
            throw InvalidArgument("--preview, --pipeline, --cone, --iterative and --stream each measure something "
                                  "else: give one of them");
        if (app.count("--rows") && !s.pipeline && !s.stream) throw InvalidArgument("--rows needs --pipeline or --stream");
        if (app.count("--dir") && !s.pipeline && !s.stream) throw InvalidArgument("--dir needs --pipeline or --stream");
        if (s.stream) {
            StreamBenchSettings b = s.streamBench;
            b.size = s.size;
            b.rows = s.pipe.rows;
            b.projections = s.projections;
            const auto strategies = splitList(s.strategies.empty() ? "auto" : s.strategies);
            if (strategies.size() != 1)
                throw InvalidArgument("--stream takes one --strategy, got '" + s.strategies + "'");
            b.strategy = strategies.front();
            b.threads = s.threads;
            b.device = s.device;
            b.dir = s.pipe.dir;
            b.json = s.json;
            return runStreamBenchmark(b);
        }
        if (s.pipeline) return runPipeline(s, app);
        if (s.iterative) {
            IterativeBenchSettings it;
            if (app.count("--size")) it.size = s.size;
            if (app.count("--projections")) it.projections = s.projections;
            if (app.count("--slices")) it.slices = s.slices;
            if (app.count("--strategy")) it.strategy = s.strategies;
            it.singleAngles = s.singleAngles;
            it.iterations = s.iterations;
            it.projectors.clear();
            for (const std::string& name : splitList(s.projectors)) it.projectors.push_back(parseProjectorKind(name));
            it.threads = s.threads;
            it.device = s.device;
            it.json = s.json;
            return runIterativeBenchmark(it);
        }
        if (s.cone)
            return runConeBenchmark({s.size, s.projections, s.strategies.empty() ? "cpu" : s.strategies,
                                     s.repeat > 0 ? s.repeat : 3, s.warmup, s.threads, s.json, s.coneDetector[0],
                                     s.coneDetector[1], s.device});
        if (s.tune) return runTune(s);
        return s.preview ? runPreview(s, app) : runBackprojection(s);
    } catch (const std::exception& e) {
        return reportError(kProgram, e);
    }
}
