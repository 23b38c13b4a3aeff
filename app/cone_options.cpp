#include "cone_options.h"

#include "cli_support.h"
#include "method_options.h"

#include "tomo/cone_run.h"
#include "tomo/cone_scan.h"
#include "tomo/error.h"
#include "tomo/fdk.h"
#include "tomo/iterative.h"

#include <algorithm>
#include <cstdio>
#include <numbers>
#include <utility>


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

/// Runs `run` and reports it as tomo-recon does: a line before, one after,
/// the output's attributes.
ImageStack reconstructWith(DivergentReconstruction& run, DatasetReader& reader,
                           std::map<std::string, std::string>& attributes, bool quiet) {
    const VolumeGrid& grid = run.grid();
    const ConeSetup& setup = run.setup();
    const ReconOptions& options = run.options();
    const std::string size = std::to_string(grid.nx) + "x" + std::to_string(grid.ny) +
                             (grid.nz > 1 || !run.iterative() ? "x" + std::to_string(grid.nz) + " voxels" : " pixels");
    if (!quiet) {
        std::printf("geometry: %s\n", setup.description.c_str());
        if (run.iterative())
            std::printf("reconstructing %s of %s with %s on the %s\n", size.c_str(), number(grid.voxelSize).c_str(),
                        describeMethod(options.iterative).c_str(), run.runsOn().c_str());
        else
            std::printf("reconstructing %s of %s with FDK (%s back-projection, %s filter)\n", size.c_str(),
                        number(grid.voxelSize).c_str(), run.runsOn().c_str(),
                        std::string(filterWindowName(run.fdk().filter.window)).c_str());
        std::fflush(stdout);
    }
    ImageStack volume = run.reconstruct(reader, [](const IterationState&) {
        throwIfInterrupted();
        return true;
    });
    const DivergentReport& r = run.report();
    const int views = setup.geometry.viewCount();
    attributes.insert(setup.attributes.begin(), setup.attributes.end());
    if (run.iterative()) {
        const IterativeSummary& summary = *r.iterative;
        std::printf("tomo-recon: %s of %d views -> %s: read %s, %d iterations %s, residual %.4g of the data\n",
                    run.method().c_str(), views, size.c_str(), formatSeconds(r.secondsRead).c_str(),
                    summary.iterations, formatSeconds(r.secondsReconstruct).c_str(),
                    summary.residuals.empty() ? 0.0 : summary.residuals.front());
        addMethodAttributes(attributes, options);
        attributes["reconstruction"] = run.method();
        attributes["projector"] = run.runsOn();
        if (run.fdk().backprojector != ConeBackprojector::Cuda) attributes["threads"] = std::to_string(options.threads);
    } else {
        const double updates = static_cast<double>(grid.voxels()) * views;
        std::printf("tomo-recon: FDK of %d views -> %s: read %s, filter %s, back-projection %s at %.3g GUPS\n", views,
                    size.c_str(), formatSeconds(r.secondsRead).c_str(), formatSeconds(r.secondsFilter).c_str(),
                    formatSeconds(r.secondsReconstruct).c_str(), updates / r.secondsReconstruct / 1e9);
        attributes["reconstruction"] = "FDK";
        attributes["strategy"] = run.runsOn();
        attributes["filter"] = std::string(filterWindowName(run.fdk().filter.window));
        attributes["padding"] = std::string(paddingName(run.fdk().filter.padding));
        attributes["threads"] = std::to_string(run.fdk().threads);
        attributes["angular_span_degrees"] = number(r.coverage.span * 180.0 / std::numbers::pi);
        attributes["short_scan"] = r.coverage.shortScan ? "parker" : "no";
    }
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
    const DatasetInfo& info = reader.info();
    ConeSetup setup = coneSetup(info, c.geometry);
    VolumeGrid grid = setup.grid;
    if (!c.volume.empty()) {
        const auto n = parseInts(c.volume, 3, 1, "--volume");
        grid.nx = n[0];
        grid.ny = n[1];
        grid.nz = n[2];
    }
    if (c.voxelSize > 0.0) grid.voxelSize = c.voxelSize;
    DivergentReconstruction run(info, std::move(setup), grid, options);
    return reconstructWith(run, reader, attributes, quiet);
}

} // namespace tomo::cli
