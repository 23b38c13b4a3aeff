#include "cone_options.h"

#include "cli_support.h"
#include "method_options.h"

#include "tomo/cone_scan.h"
#include "tomo/error.h"
#include "tomo/worker_pool.h"
#include "tomo/fdk.h"
#include "tomo/iterative.h"
#include "tomo/projector.h"
#include "tomo/registry.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <sstream>


namespace tomo::cli {

namespace {

/// The options a fan/cone-beam run takes (long names); any other given
/// option is refused rather than silently ignored.
constexpr const char* kConeOptions[] = {
    "output",     "cone-geometry", "volume",       "voxel-size",  "strategy",   "filter",      "padding",
    "threads",    "angles",        "angles-lines", "angle-range", "angle-units", "variable",  "log-corrected",
    "raw-shape",  "raw-type",      "raw-header",   "raw-big-endian", "output-type", "range",   "tiff-bits",
    "overwrite",  "quiet",         "device",       "method",      "iterations", "tv-weight",   "nonnegative",
    "bounds",     "init",          "tolerance"};

std::string number(double v) { return formatNumber(v, 10); }

/// --method sirt|cgls|tv on fan- or cone-beam data: the method on the
/// divergent-beam projector pair (projector.h), the whole volume at once.
ImageStack reconstructDivergentIterative(const ConeSetup& setup, const VolumeGrid& grid, const ReconOptions& options,
                                         bool onGpu, DatasetReader& reader,
                                         std::map<std::string, std::string>& attributes, bool quiet) {
    const auto pair = makeConeProjector(setup.geometry, grid, options.iterative, options.threads,
                                        onGpu ? std::optional<int>(options.device) : std::nullopt);
    const std::string size = std::to_string(grid.nx) + "x" + std::to_string(grid.ny) +
                             (grid.nz > 1 ? "x" + std::to_string(grid.nz) + " voxels" : " pixels");
    if (!quiet) {
        std::printf("geometry: %s\n", setup.description.c_str());
        std::printf("reconstructing %s of %s with %s on the %s\n", size.c_str(), number(grid.voxelSize).c_str(),
                    describeMethod(options.iterative).c_str(), pair->name().c_str());
        std::fflush(stdout);
    }
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    const std::vector<float> projections = readConeProjections(reader, setup);
    throwIfInterrupted();
    auto b = pair->vector(Space::Sinogram, 1);
    auto x = pair->vector(Space::Image, 1);
    pair->upload(projections, *b);
    if (options.iterative.init == InitialImage::Fbp) pair->filteredBackprojection(*b, *x);
    const auto t1 = Clock::now();
    const IterativeSummary summary = makeSolver(*pair, options.iterative)->run(*b, *x, [](const IterationState&) {
        throwIfInterrupted();
        return true;
    });
    const auto t2 = Clock::now();
    ImageStack volume(grid.nx, grid.ny, grid.nz);
    pair->download(*x, volume.data);
    auto seconds = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
    std::printf("tomo-recon: %s of %d views -> %s: read %s, %d iterations %s, residual %.4g of the data\n",
                std::string(methodName(options.iterative.method)).c_str(), setup.geometry.viewCount(), size.c_str(),
                formatSeconds(seconds(t0, t1)).c_str(), summary.iterations, formatSeconds(seconds(t1, t2)).c_str(),
                summary.residuals.empty() ? 0.0 : summary.residuals.front());

    attributes.insert(setup.attributes.begin(), setup.attributes.end());
    addMethodAttributes(attributes, options);
    attributes["reconstruction"] = std::string(methodName(options.iterative.method));
    attributes["projector"] = pair->name();
    if (!onGpu) attributes["threads"] = std::to_string(options.threads);
    attributes["volume_grid"] = std::to_string(grid.nx) + "x" + std::to_string(grid.ny) + "x" + std::to_string(grid.nz);
    attributes["voxel_size"] = number(grid.voxelSize);
    attributes["volume_centre"] = number(grid.centre[0]) + "," + number(grid.centre[1]) + "," + number(grid.centre[2]);
    attributes["units"] = "attenuation per voxel";
    return volume;
}

} // namespace

void addConeOptions(CLI::App& app, ConeCommandLine& c) {
    app.add_option("--cone-geometry", c.geometry,
                   "Fan/cone-beam geometry (JSON: source_axis, source_detector, pixel_size, offset_u, offset_v; or "
                   "matrices: a file of 3x4 projection matrices): reconstruct INPUT with FDK. Files that declare a "
                   "fan or cone beam (HDF5 attributes geometryType, distanceSourceOrigin, ...) need none")
        ->type_name("FILE");
    app.add_option("--volume", c.volume,
                   "Fan/cone beam: voxels NX,NY,NZ (default: columns,columns,rows; fan beam: one slice)")
        ->type_name("NX,NY,NZ");
    app.add_option("--voxel-size", c.voxelSize,
                   "Fan/cone beam: voxel size in the geometry's length unit (default: the detector pixel at the "
                   "rotation axis)")
        ->type_name("SIZE")
        ->check(positiveNumber());
}

bool isConeRun(const CLI::App& app, const DatasetInfo& info, const ConeCommandLine& c) {
    if (info.divergentBeam || !c.geometry.empty()) return true;
    for (const char* option : {"--volume", "--voxel-size"})
        if (app.count(option))
            throw InvalidArgument(std::string(option) + " applies to fan/cone-beam data only; " + info.path.string() +
                                  " declares no divergent beam (give its geometry with --cone-geometry)");
    return false;
}

ImageStack reconstructCone(const CLI::App& app, const ConeCommandLine& c, const ReconOptions& options,
                           DatasetReader& reader, std::map<std::string, std::string>& attributes, bool quiet) {
    for (const CLI::Option* option : app.get_options()) {
        if (option->count() == 0 || option->get_positional() || option->get_lnames().empty()) continue;
        const std::string& name = option->get_lnames().front();
        if (std::find(std::begin(kConeOptions), std::end(kConeOptions), name) == std::end(kConeOptions))
            throw InvalidArgument("--" + name + " does not apply to fan/cone-beam data (reconstructed with FDK)");
    }
    const bool iterative = options.iterative.isIterative();
    const std::string method = "--method " + std::string(methodName(options.iterative.method));
    if (iterative && options.strategy != "auto" && options.strategy != "cpu" && options.strategy != "cpu-reference" &&
        options.strategy != "cuda")
        throw InvalidArgument(method + " on fan- or cone-beam data runs on the divergent-beam projector pair of the "
                              "CPU (--strategy cpu or cpu-reference) or the GPU (cuda; auto: the GPU when there is "
                              "one), not on '" + options.strategy + "'");
    FdkOptions fdk;
    fdk.backprojector = coneBackprojectorFor(options.strategy); // iterative: where the pair runs (cpu-reference: cpu)
    fdk.filter = options.filter;
    fdk.threads = options.threads;
    fdk.device = options.device;

    const DatasetInfo& info = reader.info();
    const ConeSetup setup = coneSetup(info, c.geometry);
    VolumeGrid grid = setup.grid;
    if (!c.volume.empty()) {
        const auto n = parseInts(c.volume, 3, 1, "--volume");
        grid.nx = n[0];
        grid.ny = n[1];
        grid.nz = n[2];
    }
    if (c.voxelSize > 0.0) grid.voxelSize = c.voxelSize;
    setup.checkGrid(grid);
    if (iterative && setup.geometry.rows == 1 && grid.nz != 1)
        throw InvalidArgument(method + ": fan-beam data (one detector row) make one slice; the volume has " +
                              std::to_string(grid.nz) + " slices (--volume NX,NY,1)");
    // The volume and about four copies of the projections (as read, in view
    // order, filtered, padded for the back-projector) are held at once.
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    const double projectionBytes = 4.0 * info.projections * static_cast<double>(info.rows) * info.columns;
    const double needed = 4.0 * static_cast<double>(grid.voxels()) + 4.0 * projectionBytes;
    const auto memory = static_cast<double>(physicalMemoryBytes());
    if (memory > 0 && needed > memory)
        throw OutOfMemory("FDK of " + info.path.string() + " into " + std::to_string(grid.nx) + "x" +
                          std::to_string(grid.ny) + "x" + std::to_string(grid.nz) + " voxels needs " +
                          formatNumber(needed / kGiB, 3) + " GiB (the volume and four copies of the projections) "
                          "but this machine has " + formatNumber(memory / kGiB, 3) + " GiB");
    const bool onGpu = fdk.backprojector == ConeBackprojector::Cuda;
    if (iterative && onGpu) return reconstructDivergentIterative(setup, grid, options, true, reader, attributes, quiet);
    if (iterative) {
        // The pair's vectors in double (the method's, and the pair's scratch: projector_host.h), besides
        // the projections as read.
        const Workspace w = workspaceOf(options.iterative.method, grid.nz > 1 ? 3 : 2);
        const double pairBytes = 8.0 * ((w.images + 2) * static_cast<double>(grid.voxels()) +
                                        (w.sinograms + 1) * projectionBytes / 4.0) +
                                 projectionBytes;
        if (memory > 0 && pairBytes > memory)
            throw OutOfMemory(method + " of " + info.path.string() + " into " + std::to_string(grid.nx) + "x" +
                              std::to_string(grid.ny) + "x" + std::to_string(grid.nz) + " voxels needs " +
                              formatNumber(pairBytes / kGiB, 3) + " GiB but this machine has " +
                              formatNumber(memory / kGiB, 3) + " GiB");
        return reconstructDivergentIterative(setup, grid, options, false, reader, attributes, quiet);
    }
    if (!quiet) {
        std::printf("geometry: %s\n", setup.description.c_str());
        std::printf("reconstructing %dx%dx%d voxels of %s with FDK (%s back-projection, %s filter)\n", grid.nx,
                    grid.ny, grid.nz, number(grid.voxelSize).c_str(),
                    std::string(coneBackprojectorName(fdk.backprojector)).c_str(),
                    std::string(filterWindowName(fdk.filter.window)).c_str());
        std::fflush(stdout);
    }

    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    const std::vector<float> projections = readConeProjections(reader, setup);
    throwIfInterrupted();
    const auto t1 = Clock::now();
    ConeStageTimes stages;
    fdk.times = &stages;
    ImageStack volume = reconstructFdk(setup.geometry, projections, grid, fdk); // "cuda": all of it on the GPU
    const auto t2 = Clock::now();
    auto seconds = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
    const double backproject = seconds(t1, t2) - stages.filter; // the GPU's transfers included
    const double updates = static_cast<double>(grid.voxels()) * setup.geometry.viewCount();
    std::printf("tomo-recon: FDK of %d views -> %dx%dx%d voxels: read %s, filter %s, back-projection %s at %.3g GUPS\n",
                setup.geometry.viewCount(), grid.nx, grid.ny, grid.nz, formatSeconds(seconds(t0, t1)).c_str(),
                formatSeconds(stages.filter).c_str(), formatSeconds(backproject).c_str(), updates / backproject / 1e9);
    const ScanCoverage coverage = fdkWeights(setup.geometry).coverage;

    attributes.insert(setup.attributes.begin(), setup.attributes.end());
    attributes["reconstruction"] = "FDK";
    attributes["strategy"] = std::string(coneBackprojectorName(fdk.backprojector));
    attributes["filter"] = std::string(filterWindowName(fdk.filter.window));
    attributes["padding"] = std::string(paddingName(fdk.filter.padding));
    attributes["threads"] = std::to_string(fdk.threads);
    attributes["volume_grid"] = std::to_string(grid.nx) + "x" + std::to_string(grid.ny) + "x" + std::to_string(grid.nz);
    attributes["voxel_size"] = number(grid.voxelSize);
    attributes["volume_centre"] = number(grid.centre[0]) + "," + number(grid.centre[1]) + "," + number(grid.centre[2]);
    attributes["angular_span_degrees"] = number(coverage.span * 180.0 / 3.14159265358979323846);
    attributes["short_scan"] = coverage.shortScan ? "parker" : "no";
    attributes["units"] = "attenuation per voxel";
    return volume;
}

} // namespace tomo::cli
