// The method options of tomo-recon (group "Method" of --help): FBP or an
// iterative method (iterative.h) with its parameters; how they are declared,
// applied over a run config, checked before any output exists, described
// and stored in the output.
#pragma once

#include "tomo/backend.h"
#include "tomo/iterative.h"

#include <CLI/CLI.hpp>

#include <map>
#include <string>

namespace tomo::cli {

/// The options as typed; applied only when given, so that they override --config.
struct MethodCommandLine {
    std::string method = "fbp";
    int iterations = 0;
    double tvWeight = 0.0;
    bool nonnegative = false;
    std::string bounds;
    std::string init = "zero";
    double tolerance = 0.0;
    std::string projector = "joseph";
};

/// Declares --method, --iterations, --tv-weight, --nonnegative, --bounds,
/// --init, --tolerance, --projector in the group "Method".
void addMethodOptions(CLI::App& app, MethodCommandLine& c);

/// `base` (the run config's) with the options given on the command line.
/// Throws InvalidArgument naming the option: iterative options with method
/// fbp, --tv-weight without method tv, tv without a weight, --nonnegative
/// with --bounds, bounds for cgls, and IterativeOptions::validate's errors.
IterativeOptions applyMethodOptions(const CLI::App& app, const MethodCommandLine& c, IterativeOptions base);

/// For an iterative method: makes the strategy's projector pair once for
/// `geometry`, so a strategy without one, a GPU too small for one slice or
/// a device that is missing fail before any output exists. Throws as
/// Backend::createProjector, InvalidArgument.
void checkMethodRuns(const ReconOptions& options, const ReconGeometry& geometry);

/// "sirt, 100 iterations from zero, bounds [0, inf)" (empty for fbp).
std::string describeMethod(const IterativeOptions& o);

/// Output attributes: "method", and for the iterative ones "iterations",
/// "tv_weight", "bounds", "init", "tolerance", "projector".
void addMethodAttributes(std::map<std::string, std::string>& attributes, const ReconOptions& options);

} // namespace tomo::cli
