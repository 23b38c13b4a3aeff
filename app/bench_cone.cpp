// tomo-bench --cone (see bench_cone.h). The scan: a circular orbit with
// magnification 2, a detector of 1.25 size x size pixels of 2 voxels (one
// voxel at the axis), the 3D Shepp-Logan phantom filling the volume.
#include "bench_cone.h"

#include "bench_pipeline.h"
#include "cli_support.h"

#include "tomo/error.h"
#include "tomo/fdk.h"
#include "tomo/phantom.h"
#include "tomo/preview.h"
#include "tomo/projector.h"
#include "tomo/registry.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>
#include <thread>

#include <time.h>

namespace tomo::cli {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// CPU seconds used by the whole process so far (all threads): on a shared
/// machine the wall time also counts the time other programs had the cores.
double processCpuSeconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// The iterative methods' divergent-beam pair (makeConeProjector) of each
/// strategy (cuda: the GPU's; cpu, cpu-reference: the CPU's, in double):
/// forward A, back A^T, one weighted SIRT step (gradientStep, its weights
/// made in the warm-up). Each timed call ends with a dot product or the
/// step's residual, which waits for the GPU.
nlohmann::json measureDivergentPairs(const ConeBenchSettings& s, const ConeGeometry& geometry, const VolumeGrid& grid,
                                     std::span<const float> projections, double updates) {
    nlohmann::json out = nlohmann::json::array();
    std::printf("\niterative pair (SIRT's), median of %d\n%-14s %10s %10s %10s %10s %10s\n", s.repeat, "strategy",
                "A ms", "A GUPS", "A^T ms", "A^T GUPS", "SIRT ms");
    bool measured[2] = {false, false}; // the CPU pair, the GPU's: each once (cpu and cpu-reference share one)
    for (const std::string& name : splitList(s.strategies)) {
        const bool gpu = parseConeBackprojector(name) == ConeBackprojector::Cuda;
        if (std::exchange(measured[gpu], true)) continue;
        const char* label = gpu ? "cuda" : "cpu";
        IterativeOptions sirt;
        sirt.method = Method::Sirt;
        auto pair = makeConeProjector(geometry, grid, sirt, s.threads, gpu ? std::optional<int>(s.device) : std::nullopt);
        auto b = pair->vector(Space::Sinogram, 1), y = pair->vector(Space::Sinogram, 1);
        auto x = pair->vector(Space::Image, 1);
        pair->upload(projections, *b);
        pair->back(*b, *x);
        std::vector<double> forwards, backs, steps;
        const double step[1] = {1.0};
        for (int run = 0; run < s.warmup + s.repeat; ++run) {
            throwIfInterrupted();
            auto t0 = Clock::now();
            pair->forward(*x, *y);
            (void)pair->dot(*y, *y);
            const double forward = secondsSince(t0);
            t0 = Clock::now();
            pair->back(*y, *x);
            (void)pair->dot(*x, *x);
            const double back = secondsSince(t0);
            t0 = Clock::now();
            (void)pair->gradientStep(*b, step, true, Bounds{}, *x);
            const double sirtStep = secondsSince(t0);
            if (run < s.warmup) continue; // (without a warm-up the first step makes SIRT's weights)
            forwards.push_back(forward);
            backs.push_back(back);
            steps.push_back(sirtStep);
        }
        for (auto* v : {&forwards, &backs, &steps}) std::sort(v->begin(), v->end());
        const double a = forwards[forwards.size() / 2], at = backs[backs.size() / 2], it = steps[steps.size() / 2];
        std::printf("%-14s %10.1f %10.2f %10.1f %10.2f %10.1f   %s\n", label, a * 1e3,
                    updates / a / 1e9, at * 1e3, updates / at / 1e9, it * 1e3, pair->name().c_str());
        std::fflush(stdout);
        out.push_back({{"strategy", label}, {"pair", pair->name()}, {"forward_ms", a * 1e3},
                       {"forward_gups", updates / a / 1e9}, {"back_ms", at * 1e3}, {"back_gups", updates / at / 1e9},
                       {"sirt_iteration_ms", it * 1e3}});
    }
    return out;
}

} // namespace

int runConeBenchmark(const ConeBenchSettings& s) {
    if (s.size < 1 || s.views < 2) throw InvalidArgument("--cone needs --size >= 1 and --projections >= 2");
    CircularConeGeometry circular;
    circular.angles = uniformAngles(s.views, 2.0 * std::numbers::pi);
    circular.sourceAxis = 2.0 * s.size;
    circular.sourceDetector = 4.0 * s.size;
    circular.columns = s.columns > 0 ? s.columns : s.size + s.size / 4;
    circular.rows = s.rows > 0 ? s.rows : s.size;
    circular.pixelWidth = 2.0;
    const ConeGeometry geometry = ConeGeometry::circular(circular);
    const VolumeGrid grid{s.size, s.size, s.size, 1.0, {}};
    ConePhantom phantom;
    phantom.radius = 0.45 * s.size;
    phantom.attenuation = 0.01;
    const double updates = static_cast<double>(grid.voxels()) * s.views;
    const int threads = s.threads > 0 ? s.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

    std::printf("tomo-bench --cone: %d^3 voxels from %d views of %dx%d (%.3g G updates per run), median of %d run%s "
                "after %d warm-up%s, %d thread%s\n",
                s.size, s.views, circular.columns, circular.rows, updates / 1e9, s.repeat, s.repeat > 1 ? "s" : "",
                s.warmup, s.warmup == 1 ? "" : "s", threads, threads > 1 ? "s" : "");
    std::printf("GUPS = voxels x views / back-projection wall time / 1e9; GUPS/cpu-s divides by the CPU time the "
                "threads used instead (what one core does while it runs, on a shared machine)\n");
    std::fflush(stdout);
    const ImageStack projections = projectPhantomCone(phantom, geometry);
    (void)BackendRegistry::instance(); // installs the GPU back-projector of a CUDA build

    nlohmann::json results = nlohmann::json::array();
    std::printf("%-14s %10s %10s %8s %10s %12s %22s %12s\n", "strategy", "filter ms", "bp ms", "GUPS", "GUPS/core",
                "GUPS/cpu-s", "upload/kernel/down ms", "kernel GUPS");
    for (const std::string& name : splitList(s.strategies)) {
        FdkOptions options;
        options.backprojector = parseConeBackprojector(name);
        options.threads = s.threads;
        options.device = s.device;
        std::vector<double> filterRuns, bpRuns, cpuRuns;
        ConeStageTimes stages; // of the last run
        options.times = &stages;
        std::vector<float> volume(grid.voxels());
        for (int run = 0; run < s.warmup + s.repeat; ++run) {
            throwIfInterrupted();
            const auto t0 = Clock::now();
            const FilteredProjections filtered = fdkFilter(geometry, projections.data, options);
            const double filter = secondsSince(t0);
            const auto t1 = Clock::now();
            const double cpu0 = processCpuSeconds();
            backprojectCone(filtered, grid, grid.voxelSize, volume, options);
            if (run < s.warmup) continue;
            bpRuns.push_back(secondsSince(t1));
            cpuRuns.push_back(processCpuSeconds() - cpu0);
            filterRuns.push_back(filter);
        }
        std::sort(bpRuns.begin(), bpRuns.end());
        std::sort(filterRuns.begin(), filterRuns.end());
        std::sort(cpuRuns.begin(), cpuRuns.end());
        const double bp = bpRuns[bpRuns.size() / 2], filter = filterRuns[filterRuns.size() / 2];
        const double gups = updates / bp / 1e9, perCpuSecond = updates / cpuRuns[cpuRuns.size() / 2] / 1e9;
        const std::string split = std::to_string(static_cast<long>(std::lround(stages.upload * 1e3))) + "/" +
                                  std::to_string(static_cast<long>(std::lround(stages.backproject * 1e3))) + "/" +
                                  std::to_string(static_cast<long>(std::lround(stages.download * 1e3)));
        const double kernelGups = stages.backproject > 0.0 ? updates / stages.backproject / 1e9 : gups;
        std::printf("%-14s %10.1f %10.1f %8.3f %10.3f %12.3f %22s %12.1f\n", name.c_str(), filter * 1e3, bp * 1e3, gups,
                    gups / threads, perCpuSecond, split.c_str(), kernelGups);
        std::fflush(stdout);
        results.push_back({{"strategy", name}, {"filter_ms", filter * 1e3}, {"bp_ms", bp * 1e3}, {"gups", gups},
                           {"gups_per_core", gups / threads}, {"gups_per_cpu_second", perCpuSecond},
                           {"stages_ms", {{"upload", stages.upload * 1e3}, {"backproject", stages.backproject * 1e3},
                                          {"download", stages.download * 1e3}}},
                           {"kernel_gups", kernelGups}});
    }

    // The whole FDK as tomo-recon runs it (reconstructFdk: for cuda the
    // weights and the ramp filter on the GPU too, the views uploaded raw).
    nlohmann::json whole = nlohmann::json::array();
    std::printf("\nwhole FDK (reconstructFdk), median of %d\n%-14s %10s %10s %22s %10s\n", s.repeat, "strategy",
                "total ms", "filter ms", "upload/bp/down ms", "GUPS");
    for (const std::string& name : splitList(s.strategies)) {
        FdkOptions options;
        options.backprojector = parseConeBackprojector(name);
        options.threads = s.threads;
        options.device = s.device;
        ConeStageTimes stages;
        options.times = &stages;
        std::vector<double> totals;
        for (int run = 0; run < s.warmup + s.repeat; ++run) {
            throwIfInterrupted();
            const auto t0 = Clock::now();
            (void)reconstructFdk(geometry, projections.data, grid, options);
            if (run >= s.warmup) totals.push_back(secondsSince(t0));
        }
        std::sort(totals.begin(), totals.end());
        const double total = totals[totals.size() / 2];
        char split[64];
        std::snprintf(split, sizeof split, "%.0f/%.0f/%.0f", stages.upload * 1e3, stages.backproject * 1e3,
                      stages.download * 1e3);
        std::printf("%-14s %10.1f %10.1f %22s %10.2f\n", name.c_str(), total * 1e3, stages.filter * 1e3, split,
                    updates / total / 1e9);
        std::fflush(stdout);
        whole.push_back({{"strategy", name}, {"total_ms", total * 1e3}, {"filter_ms", stages.filter * 1e3},
                         {"gups", updates / total / 1e9}});
    }

    // The workstation's live slice (PreviewSession on the scan as a dataset
    // declaring its cone beam): the middle slice of the default grid
    // (columns^2 voxels of the detector pixel at the axis) opened, then two
    // axis steps (the first filters the rows at both ends of the axis's
    // reach, the second, the one timed, only back-projects) and the next
    // slice, which filters the rows it needs.
    DivergentBeam beam;
    beam.declared = "tomo-bench";
    beam.sourceAxis = circular.sourceAxis;
    beam.sourceDetector = circular.sourceDetector;
    beam.pixelSize = circular.pixelWidth;
    std::shared_ptr<DatasetReader> scan =
        makeMemoryDataset(projections.swapDepthAndHeight(), circular.angles, "tomo-bench cone scan", beam);
    nlohmann::json live = nlohmann::json::array();
    std::printf("\nlive slice %dx%d (workstation): ms, median of %d\n%-14s %10s %10s %10s %12s %10s\n",
                circular.columns, circular.columns, s.repeat, "strategy", "open", "axis step", "next slice",
                "(of it: bp)", "bp GUPS");
    for (const std::string& name : splitList(s.strategies)) {
        PreviewRequest request;
        request.row = circular.rows / 2;
        request.options.strategy = name;
        request.options.threads = s.threads;
        request.options.device = s.device;
        const double centre = (circular.columns - 1) / 2.0;
        std::vector<double> opens, axisSteps, nextSlices, bps;
        double gups = 0.0;
        for (int run = 0; run < s.warmup + s.repeat; ++run) {
            throwIfInterrupted();
            PreviewSession session(scan);
            request.row = circular.rows / 2;
            request.axis = centre;
            const PreviewResult opened = session.run(request);
            request.axis = centre + 0.25;
            session.run(request);
            request.axis = centre + 0.5;
            const PreviewResult axisStep = session.run(request);
            request.row += 1;
            const PreviewResult next = session.run(request);
            if (run < s.warmup) continue;
            opens.push_back(opened.secondsTotal);
            axisSteps.push_back(axisStep.secondsTotal);
            nextSlices.push_back(next.secondsTotal);
            bps.push_back(next.secondsBackproject);
            gups = std::max(gups, next.gups);
        }
        const auto median = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            return v[v.size() / 2] * 1e3;
        };
        std::printf("%-14s %10.1f %10.1f %10.1f %12.1f %10.1f\n", name.c_str(), median(opens), median(axisSteps),
                    median(nextSlices), median(bps), gups);
        std::fflush(stdout);
        live.push_back({{"strategy", name}, {"open_ms", median(opens)}, {"axis_step_ms", median(axisSteps)},
                        {"next_slice_ms", median(nextSlices)}, {"backproject_ms", median(bps)}, {"gups", gups}});
    }
    const nlohmann::json iterative = measureDivergentPairs(s, geometry, grid, projections.data, updates);
    if (!s.json.empty())
        writeJson(s.json, {{"mode", "cone"}, {"size", s.size}, {"views", s.views}, {"columns", circular.columns},
                           {"rows", circular.rows}, {"threads", threads}, {"results", results}, {"whole_fdk", whole},
                           {"live_slice", live}, {"iterative", iterative}});
    return kExitOk;
}

} // namespace tomo::cli
