// tomo-cuda-bench: GU/s of every CUDA strategy x interpolation x precision x
// slices per pass, the texture fetch-rate ceilings, and the end-to-end split,
// through the generic Backend API (what tomo-bench measures, plus the
// kernel-only time from lastStageTimes()).
//
//   tomo-cuda-bench [--projections N] [--bins B] [--slices S] [--reps R]
//                   [--csv FILE] [--layouts pitched,array] [--skip-standard]
#include "tomo/backend.h"
#include "tomo/cuda/cuda_backends.h"
#include "tomo/cuda/diagnostics.h"
#include "tomo/error.h"
#include "tomo/phantom.h"
#include "tomo/registry.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
    int projections = 2048;
    int bins = 2048;
    int slices = 32;
    int reps = 3;
    std::string csv;
    std::vector<std::string> layouts = {"pitched"};
    bool standard = true;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        const std::size_t end = s.find(',', start);
        out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) throw tomo::InvalidArgument(k + " needs a value");
            return argv[++i];
        };
        if (k == "--projections") a.projections = std::stoi(next());
        else if (k == "--bins") a.bins = std::stoi(next());
        else if (k == "--slices") a.slices = std::stoi(next());
        else if (k == "--reps") a.reps = std::stoi(next());
        else if (k == "--csv") a.csv = next();
        else if (k == "--layouts") a.layouts = split(next());
        else if (k == "--skip-standard") a.standard = false;
        else throw tomo::InvalidArgument("unknown option " + k);
    }
    return a;
}

/// Smooth, non-zero sinograms (never time on zeros): a few sinusoids whose
/// phase follows the angle, plus a small hash-noise term.
std::vector<float> makeSinograms(int slices, int projections, int bins) {
    std::vector<float> data(static_cast<std::size_t>(slices) * projections * bins);
    for (int s = 0; s < slices; ++s)
        for (int p = 0; p < projections; ++p) {
            const double a = std::numbers::pi * p / projections;
            float* row = data.data() + (static_cast<std::size_t>(s) * projections + p) * bins;
            for (int b = 0; b < bins; ++b) {
                const double u = (b - bins / 2.0) / (bins / 2.0);
                const double disc = std::max(0.0, 1.0 - u * u);
                unsigned h = static_cast<unsigned>(b * 2654435761u) ^ static_cast<unsigned>(p * 40503u + s * 977u);
                h ^= h >> 13;
                row[b] = static_cast<float>(std::sqrt(disc) * (1.0 + 0.3 * std::sin(6 * u + a + s)) +
                                            1e-3 * static_cast<double>(h % 1000) / 1000.0);
            }
        }
    return data;
}

} // namespace

int main(int argc, char** argv) try {
    const Args args = parse(argc, argv);
    auto& registry = tomo::BackendRegistry::instance();
    const auto devices = tomo::cuda::listDevices();
    if (devices.empty()) {
        const tomo::Backend* b = registry.find("tex-optimized");
        std::printf("%s\n", b ? b->unavailableReason().c_str() : "tex-optimized not registered");
        return 2;
    }
    const auto& d = devices[0];
    std::printf("device: %s, %d SMs, %.1f GiB, sm_%d%d\n", d.name.c_str(), d.multiprocessors,
                d.memoryBytes / 1073741824.0, d.computeMajor, d.computeMinor);
    std::FILE* csv = args.csv.empty() ? nullptr : std::fopen(args.csv.c_str(), "w");
    if (csv) std::fprintf(csv, "kind,strategy,layout,interpolation,precision,slices_per_pass,value1,value2,value3,value4,value5\n");

    // ---- fetch-rate ceilings
    std::printf("\n== texture fetch-rate ceilings (G fetches/s, lanes fetch overlapping footprints)\n");
    std::printf("%-9s %-9s %4s %10s\n", "precision", "interp", "ch", "Gfetch/s");
    const double ceiling = tomo::measureTextureFetchRate(0);
    double rate[2][2][5] = {}; // [half][linear][channels]
    for (int half = 0; half < 2; ++half)
        for (int linear = 1; linear >= 0; --linear)
            for (int ch : {1, 2, 4}) {
                const auto prec = half ? tomo::Precision::Float16 : tomo::Precision::Float32;
                const auto interp = linear ? tomo::Interpolation::Linear : tomo::Interpolation::Nearest;
                rate[half][linear][ch] = tomo::cuda::measureTextureFetchRate(0, prec, ch, interp);
                std::printf("%-9s %-9s %4d %10.1f\n", half ? "float16" : "float32", linear ? "linear" : "nearest", ch,
                            rate[half][linear][ch] / 1e9);
                if (csv)
                    std::fprintf(csv, "fetch,,,%s,%s,%d,%.4g,,,,\n", linear ? "linear" : "nearest",
                                 half ? "float16" : "float32", ch, rate[half][linear][ch]);
            }
    std::printf("ceiling (tomo::measureTextureFetchRate, float32 bilinear): %.1f G fetches/s\n", ceiling / 1e9);

    // ---- kernel table
    const int N = args.projections, B = args.bins, S = args.slices;
    std::printf("\n== back-projection, %d projections x %d bins -> %dx%d, %d slices (GU/s; kernel = lastStageTimes, "
                "wall = backproject() incl. overlapped download)\n",
                N, B, B, B, S);
    auto t0 = Clock::now();
    const std::vector<float> sinograms = makeSinograms(S, N, B);
    std::printf("(data generated in %.1f s)\n", std::chrono::duration<double>(Clock::now() - t0).count());
    std::vector<float> slices(static_cast<std::size_t>(S) * B * B);
    tomo::Geometry g;
    g.angles = tomo::uniformAngles(N);
    g.bins = B;
    g.axis = g.detectorCentre();
    const tomo::ReconGeometry geometry = tomo::ReconGeometry::fullSlice(g);
    const double updates = static_cast<double>(B) * B * S * N;

    std::printf("%-13s %-7s %-7s %-7s %3s %9s %9s %9s %9s %8s\n", "strategy", "layout", "interp", "prec", "spp",
                "GU/s", "GU/s wall", "%ceil", "%fmt", "setSino");
    struct Key {
        std::string strategy;
        std::string layout;
    };
    std::vector<Key> runs;
    if (args.standard) runs.push_back({"tex-standard", "pitched"});
    for (const auto& l : args.layouts) runs.push_back({"tex-optimized", l});
    for (const Key& key : runs) {
        setenv("TOMO_CUDA_SINOGRAM_LAYOUT", key.layout.c_str(), 1);
        const tomo::Backend* backend = registry.find(key.strategy);
        for (int half = 0; half < 2; ++half)
            for (int linear = 1; linear >= 0; --linear)
                for (int spp : {1, 2, 4}) {
                    tomo::ReconOptions o;
                    o.strategy = key.strategy;
                    o.interpolation = linear ? tomo::Interpolation::Linear : tomo::Interpolation::Nearest;
                    o.precision = half ? tomo::Precision::Float16 : tomo::Precision::Float32;
                    o.slicesPerPass = spp;
                    auto plan = backend->createPlan(geometry, o);
                    auto ts = Clock::now();
                    plan->setSinograms(sinograms, S);
                    const double setSeconds = std::chrono::duration<double>(Clock::now() - ts).count();
                    plan->backproject(slices); // warm-up
                    const int reps = key.strategy == "tex-standard" ? std::max(1, args.reps - 1) : args.reps;
                    std::vector<double> wall, kernel;
                    for (int r = 0; r < reps; ++r) {
                        const auto start = Clock::now();
                        plan->backproject(slices);
                        wall.push_back(std::chrono::duration<double>(Clock::now() - start).count());
                        kernel.push_back(plan->lastStageTimes().backproject);
                    }
                    const double gus = updates / median(kernel) / 1e9;
                    const double gusWall = updates / median(wall) / 1e9;
                    const double fetches = gus * 1e9 / spp;
                    std::printf("%-13s %-7s %-7s %-7s %3d %9.1f %9.1f %8.1f%% %8.1f%% %7.3fs\n", key.strategy.c_str(),
                                key.layout.c_str(), linear ? "linear" : "nearest", half ? "float16" : "float32", spp,
                                gus, gusWall, 100.0 * fetches / ceiling, 100.0 * fetches / rate[half][linear][spp],
                                setSeconds);
                    std::fflush(stdout);
                    if (csv)
                        std::fprintf(csv, "kernel,%s,%s,%s,%s,%d,%.2f,%.2f,%.4f,%.4f,%.4f\n", key.strategy.c_str(),
                                     key.layout.c_str(), linear ? "linear" : "nearest", half ? "float16" : "float32",
                                     spp, gus, gusWall, fetches / ceiling, fetches / rate[half][linear][spp],
                                     setSeconds);
                }
    }
    setenv("TOMO_CUDA_SINOGRAM_LAYOUT", args.layouts.front().c_str(), 1);

    // ---- nearest: texture-unit rounding vs snapping to bin centres (float / double positions)
    std::printf("\n== nearest sampling: float position to the texture unit (hardware) vs double position snapped "
                "(default)\n%-13s %-9s %-7s %3s %9s\n", "strategy", "sampling", "prec", "spp", "GU/s");
    for (const char* strategy : {"tex-standard", "tex-optimized"})
    for (const char* mode : {"hardware", "double"})
        for (int half = 0; half < 2; ++half)
            for (int spp : {1, 2, 4}) {
                if (!args.standard && std::string(strategy) == "tex-standard") continue;
                setenv("TOMO_CUDA_NEAREST", mode, 1);
                tomo::ReconOptions o;
                o.strategy = strategy;
                o.interpolation = tomo::Interpolation::Nearest;
                o.precision = half ? tomo::Precision::Float16 : tomo::Precision::Float32;
                o.slicesPerPass = spp;
                auto plan = registry.find(strategy)->createPlan(geometry, o);
                plan->setSinograms(sinograms, S);
                plan->backproject(slices);
                std::vector<double> kernel;
                for (int r = 0; r < (std::string(strategy) == "tex-standard" ? 1 : args.reps); ++r) {
                    plan->backproject(slices);
                    kernel.push_back(plan->lastStageTimes().backproject);
                }
                const double gus = updates / median(kernel) / 1e9;
                std::printf("%-13s %-9s %-7s %3d %9.1f\n", strategy, mode, half ? "float16" : "float32", spp, gus);
                std::fflush(stdout);
                if (csv)
                    std::fprintf(csv, "nearest-%s,%s,,nearest,%s,%d,%.2f,,,,\n", mode, strategy,
                                 half ? "float16" : "float32", spp, gus);
            }
    unsetenv("TOMO_CUDA_NEAREST");

    // ---- end to end: data in host memory -> slices in host memory
    std::printf("\n== end to end (reconstruct(): %d slices, host -> host; stage busy times overlap)\n", S);
    std::printf("%-13s %-7s %-7s %3s %8s %8s %8s %8s %8s %7s %9s\n", "strategy", "interp", "prec", "spp", "wall s",
                "upload", "filter", "backproj", "download", "bp %", "GU/s e2e");
    struct E2E {
        const char* strategy;
        bool linear;
        bool half;
        int spp;
    };
    const E2E e2e[] = {{"tex-optimized", true, false, 1}, {"tex-optimized", true, false, 2},
                       {"tex-optimized", true, true, 4},  {"tex-optimized", false, true, 4},
                       {"tex-standard", true, false, 1}};
    for (const E2E& e : e2e) {
        if (!args.standard && std::string(e.strategy) == "tex-standard") continue;
        tomo::ReconOptions o;
        o.strategy = e.strategy;
        o.interpolation = e.linear ? tomo::Interpolation::Linear : tomo::Interpolation::Nearest;
        o.precision = e.half ? tomo::Precision::Float16 : tomo::Precision::Float32;
        o.slicesPerPass = e.spp;
        auto plan = registry.find(e.strategy)->createPlan(geometry, o);
        plan->reconstruct(sinograms, S, slices); // warm-up
        std::vector<double> wall;
        tomo::StageTimes best{};
        double bestWall = 1e30;
        for (int r = 0; r < 2; ++r) {
            const auto start = Clock::now();
            plan->reconstruct(sinograms, S, slices);
            const double w = std::chrono::duration<double>(Clock::now() - start).count();
            wall.push_back(w);
            if (w < bestWall) {
                bestWall = w;
                best = plan->lastStageTimes();
            }
        }
        std::printf("%-13s %-7s %-7s %3d %8.3f %8.3f %8.3f %8.3f %8.3f %6.1f%% %9.1f\n", e.strategy,
                    e.linear ? "linear" : "nearest", e.half ? "float16" : "float32", e.spp, bestWall, best.upload,
                    best.filter, best.backproject, best.download, 100.0 * best.backproject / bestWall,
                    updates / bestWall / 1e9);
        if (csv)
            std::fprintf(csv, "e2e,%s,,%s,%s,%d,%.4f,%.4f,%.4f,%.4f,%.4f\n", e.strategy,
                         e.linear ? "linear" : "nearest", e.half ? "float16" : "float32", e.spp, bestWall, best.upload,
                         best.filter, best.backproject, best.download);
    }
    if (csv) std::fclose(csv);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "tomo-cuda-bench: %s\n", e.what());
    return 1;
}
