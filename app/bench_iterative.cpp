// tomo-bench --iterative (see bench_iterative.h). The data: the 3D
// Shepp-Logan's exact sinograms; the figures time the pair's work only
// (the data stay on it: uploads, downloads and plan creation excluded), each
// after untimed iterations, per slice of the batch.
#include "bench_iterative.h"

#include "cli_support.h"

#include "tomo/error.h"
#include "tomo/iterative.h"
#include "tomo/phantom.h"
#include "tomo/projector.h"
#include "tomo/registry.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace tomo::cli {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// The issue's targets (H100/H200).
constexpr double kTargetIterationMs = 4.0;     // one SIRT iteration per 2048^2 slice from 2048 projections
constexpr double kTargetSingleSeconds = 0.6;   // 100 iterations, 2048^2 from 1501 angles
constexpr double kTargetVolumeSeconds = 10.0;  // one iteration of 2048^3
constexpr double kTargetMemoryRatio = 1.5;     // x (input + output)

ReconGeometry geometryOf(int size, int projections) {
    Geometry g;
    g.angles = uniformAngles(projections);
    g.bins = size;
    g.axis = g.detectorCentre();
    return ReconGeometry::fullSlice(g);
}

/// `slices` exact sinograms of the 3D phantom through its middle rows.
std::vector<float> phantomSinograms(const ReconGeometry& g, int slices) {
    PhantomSpec spec;
    spec.bins = g.geometry.bins;
    spec.rows = slices + 2;
    const ImageStack all = projectPhantom(spec, g.geometry.angles);
    return std::vector<float>(all.data.begin() + static_cast<std::ptrdiff_t>(all.imageSize()),
                              all.data.begin() + static_cast<std::ptrdiff_t>(all.imageSize() * (slices + 1)));
}

struct Figure {
    std::string key;
    std::string what;
    double value = 0.0;
    std::string unit;
    double target = 0.0; ///< 0 = none
};

/// Seconds of `iterations` of `method` on `pair` for b, after `warmup` untimed ones.
double timeMethod(ProjectorPair& pair, const BatchVector& b, IterativeOptions o, int warmup, int iterations) {
    auto x = pair.vector(Space::Image, b.count());
    if (warmup > 0) {
        o.iterations = warmup;
        makeSolver(pair, o)->run(b, *x);
    }
    o.iterations = iterations;
    const auto solver = makeSolver(pair, o, o.method == Method::Tv ? estimateLipschitz(pair) : 0.0);
    const auto t0 = Clock::now();
    solver->run(b, *x, [](const IterationState&) {
        throwIfInterrupted();
        return true;
    });
    return secondsSince(t0);
}

/// Seconds of one forward (or back) projection of the batch, the median of `runs`.
double timeProjection(ProjectorPair& pair, const BatchVector& b, bool forward, int runs) {
    auto x = pair.vector(Space::Image, b.count());
    auto y = pair.vector(Space::Sinogram, b.count());
    std::vector<double> times;
    for (int i = 0; i < runs + 1; ++i) {
        throwIfInterrupted();
        const auto t0 = Clock::now();
        if (forward) pair.forward(*x, *y);
        else pair.back(b, *x);
        (void)pair.dot(forward ? static_cast<const BatchVector&>(*y) : *x, forward ? *y : *x); // waits for the device
        if (i > 0) times.push_back(secondsSince(t0));
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

/// Where one SIRT iteration's time goes: its forward projection, its back
/// projection (each alone, the median of `runs`), and the rest (the fused
/// residual and update, the transposed copy, the per-slice sums and the
/// wait for them, the solver's host work), per slice.
struct Split {
    double iteration = 0.0, forward = 0.0, back = 0.0; ///< seconds per slice
};

Split splitIteration(ProjectorPair& pair, const BatchVector& b, double iterationPerSlice, int runs) {
    const double count = b.count();
    return {iterationPerSlice, timeProjection(pair, b, true, runs) / count, timeProjection(pair, b, false, runs) / count};
}

/// The split's figures: the projections' GU/s and ms per slice, and the rest
/// of the iteration (negative when the fused iteration beats its parts).
void addSplit(std::vector<Figure>& figures, const std::string& key, const std::string& what, const Split& split,
              double updatesPerSlice) {
    figures.push_back({key + "forward_gups", "forward projection, " + what, updatesPerSlice / split.forward / 1e9,
                       "GU/s", 0.0});
    figures.push_back({key + "back_gups", "back projection (its transpose), " + what, updatesPerSlice / split.back / 1e9,
                       "GU/s", 0.0});
    figures.push_back({key + "forward_ms_per_slice", "  of a SIRT iteration: forward projection", 1e3 * split.forward,
                       "ms", 0.0});
    figures.push_back({key + "back_ms_per_slice", "  of a SIRT iteration: back projection", 1e3 * split.back, "ms", 0.0});
    figures.push_back({key + "rest_ms_per_slice", "  of a SIRT iteration: the rest (update, copies, sums, host)",
                       1e3 * (split.iteration - split.forward - split.back), "ms", 0.0});
}

/// The figures of one projector pair (`kind`) of the strategy; keys of the
/// fourier pair start with "fourier_".
void measurePair(const Backend& backend, ReconOptions options, ProjectorKind kind, const IterativeBenchSettings& s,
                 std::vector<Figure>& figures, json& pairs) {
    options.iterative.projector = kind;
    const std::string key = kind == ProjectorKind::Joseph ? "" : std::string(projectorKindName(kind)) + "_";
    const std::string tag = "[" + std::string(projectorKindName(kind)) + "] ";
    const ReconGeometry batchGeometry = geometryOf(s.size, s.projections);
    std::unique_ptr<ProjectorPair> pair = backend.createProjector(batchGeometry, options);
    const int batch = std::min(s.slices, pair->maxSlices());
    pairs.push_back({{"projector", projectorKindName(kind)}, {"pair", pair->name()}, {"batch", batch}});
    std::printf("tomo-bench --iterative: %s (strategy %s), %d^2 slices; batches of %d from %d projections, one slice "
                "from %d\n",
                pair->name().c_str(), options.strategy.c_str(), s.size, batch, s.projections, s.singleAngles);
    std::fflush(stdout);
    const double pixels = static_cast<double>(s.size) * s.size;
    const bool issueSize = s.size == 2048 && s.projections == 2048;
    {
        auto b = pair->vector(Space::Sinogram, batch);
        pair->upload(phantomSinograms(batchGeometry, batch), *b);
        const double sirt = timeMethod(*pair, *b, options.iterative, 2, s.timedIterations);
        const double perSlice = sirt / s.timedIterations / batch;
        figures.push_back({key + "sirt_iteration_ms_per_slice",
                           tag + "SIRT iteration per slice, batch of " + std::to_string(batch) + " from " +
                               std::to_string(s.projections) + " projections",
                           1e3 * perSlice, "ms", issueSize ? kTargetIterationMs : 0.0});
        figures.push_back({key + "volume_iteration_seconds",
                           tag + "SIRT iteration of a " + std::to_string(s.size) + "^3 volume (estimate: " +
                               std::to_string(s.size) + " x the above)",
                           perSlice * s.size, "s", issueSize ? kTargetVolumeSeconds : 0.0});
        const double inputOutput = static_cast<double>(batch) * (pixels + static_cast<double>(s.projections) * s.size) *
                                   sizeof(float);
        figures.push_back({key + "memory_ratio",
                           tag + "pair memory / (input + output) of the batch (" +
                               std::to_string(static_cast<long long>(pair->memoryBytes() >> 20)) + " MiB)",
                           static_cast<double>(pair->memoryBytes()) / inputOutput, "x", kTargetMemoryRatio});
        const Split split = splitIteration(*pair, *b, perSlice, 3);
        addSplit(figures, key, "batch of " + std::to_string(batch), split, pixels * s.projections);
        IterativeOptions cgls = options.iterative;
        cgls.method = Method::Cgls;
        figures.push_back({key + "cgls_iteration_ms_per_slice", tag + "CGLS iteration per slice",
                           1e3 * timeMethod(*pair, *b, cgls, 1, s.timedIterations) / s.timedIterations / batch, "ms",
                           0.0});
        IterativeOptions tv = options.iterative;
        tv.method = Method::Tv;
        tv.tvWeight = 0.1;
        figures.push_back({key + "tv_iteration_ms_per_slice",
                           tag + "TV (FISTA) iteration per slice, " + std::to_string(kTvInnerIterations) + " inner",
                           1e3 * timeMethod(*pair, *b, tv, 1, s.timedIterations) / s.timedIterations / batch, "ms", 0.0});
    }
    pair.reset(); // its memory before the next pair's
    const ReconGeometry single = geometryOf(s.size, s.singleAngles);
    std::unique_ptr<ProjectorPair> one = backend.createProjector(single, options);
    auto b = one->vector(Space::Sinogram, 1);
    one->upload(phantomSinograms(single, 1), *b);
    const double seconds = timeMethod(*one, *b, options.iterative, 2, s.iterations);
    figures.push_back({key + "single_slice_seconds",
                       tag + std::to_string(s.iterations) + " SIRT iterations of one slice from " +
                           std::to_string(s.singleAngles) + " angles",
                       seconds, "s",
                       s.size == 2048 && s.singleAngles == 1501 && s.iterations == 100 ? kTargetSingleSeconds : 0.0});
    addSplit(figures, key + "single_", "one slice", splitIteration(*one, *b, seconds / s.iterations, 5),
             pixels * s.singleAngles);
}

} // namespace

int runIterativeBenchmark(const IterativeBenchSettings& s) {
    if (s.size < 8 || s.projections < 2 || s.slices < 1 || s.singleAngles < 2 || s.iterations < 1 ||
        s.timedIterations < 1)
        throw InvalidArgument("--iterative needs --size >= 8, --projections >= 2, --slices >= 1, --single-angles >= 2 "
                              "and --iterations >= 1");
    if (s.projectors.empty()) throw InvalidArgument("--iterative needs at least one --projector");
    const BackendRegistry& registry = BackendRegistry::instance();
    ReconOptions options;
    options.strategy = s.strategy.empty() ? "auto" : s.strategy;
    options.threads = s.threads;
    options.device = s.device;
    options.iterative.method = Method::Sirt;
    options = registry.resolveOptions(options, geometryOf(s.size, s.projections));
    const Backend& backend = *registry.find(options.strategy);

    std::vector<Figure> figures;
    json pairs = json::array();
    for (ProjectorKind kind : s.projectors) measurePair(backend, options, kind, s, figures, pairs);

    std::printf("%-70s %12s %8s %s\n", "figure", "value", "unit", "target");
    for (const Figure& f : figures) {
        std::string target = f.target > 0.0 ? "<= " + formatNumber(f.target, 3) + (f.value <= f.target ? " met" : " missed")
                                            : "";
        std::printf("%-70s %12s %8s %s\n", f.what.c_str(), formatNumber(f.value, 4).c_str(), f.unit.c_str(),
                    target.c_str());
    }
    if (!s.json.empty()) {
        json out = {{"mode", "iterative"},
                    {"pairs", pairs},
                    {"strategy", options.strategy},
                    {"size", s.size},
                    {"projections", s.projections},
                    {"single_angles", s.singleAngles},
                    {"iterations", s.iterations},
                    {"gpus", json::array()}};
        for (const std::string& line : gpuLines()) out["gpus"].push_back(line);
        json list = json::array();
        for (const Figure& f : figures)
            list.push_back({{"key", f.key}, {"what", f.what}, {"value", f.value}, {"unit", f.unit},
                            {"target", f.target > 0.0 ? json(f.target) : json(nullptr)}});
        out["figures"] = list;
        std::ofstream file(s.json);
        file << out.dump(2) << "\n";
        if (!file) throw IoError("cannot write '" + s.json + "'");
    }
    return kExitOk;
}

} // namespace tomo::cli
