#include "method_options.h"

#include "cli_support.h"

#include "tomo/error.h"
#include "tomo/projector.h"
#include "tomo/registry.h"
#include "tomo/run_config.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace tomo::cli {

namespace {

constexpr const char* kGroup = "Method";

std::string boundText(double v) {
    return std::isinf(v) ? (v < 0 ? "-inf" : "inf") : formatNumber(v);
}

/// "MIN,MAX": finite numbers, or -inf / inf for no bound on that side.
Bounds parseBounds(const std::string& text) {
    const std::string expected = "--bounds " + text.substr(0, 40) +
                                 ": expected MIN,MAX with MIN <= MAX, numbers or -inf / inf (no bound on that side)";
    const std::vector<std::string> parts = splitList(text);
    if (parts.size() != 2) throw InvalidArgument(expected);
    double v[2] = {};
    for (int i = 0; i < 2; ++i) {
        const std::string& p = parts[i];
        if (p == "inf" || p == "-inf") {
            v[i] = p == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
            continue;
        }
        const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v[i]);
        if (p.empty() || ec != std::errc() || end != p.data() + p.size() || !std::isfinite(v[i]))
            throw InvalidArgument(expected);
    }
    if (!(v[0] <= v[1]) || v[0] == std::numeric_limits<double>::infinity() ||
        v[1] == -std::numeric_limits<double>::infinity())
        throw InvalidArgument(expected);
    return Bounds{v[0], v[1]};
}

} // namespace

void addMethodOptions(CLI::App& app, MethodCommandLine& c) {
    app.add_option("--method", c.method,
                   "Reconstruction method: fbp (filtered back-projection with --strategy's kernel), or an iterative "
                   "one on the strategy's forward/back projector pair (cpu-reference, cpu, the CUDA strategies): "
                   "sirt, cgls, tv (total variation, needs --tv-weight)")
        ->check(CLI::IsMember({"fbp", "sirt", "cgls", "tv"}))
        ->group(kGroup)
        ->capture_default_str();
    app.add_option("--iterations", c.iterations,
                   "Iterations of sirt, cgls or tv (default: sirt 100, cgls 20, tv 100)")
        ->type_name("N")
        ->check(integerIn(1, kMaxIterations))
        ->group(kGroup);
    app.add_option("--tv-weight", c.tvWeight,
                   "tv: lambda of 1/2 ||Ax - b||^2 + lambda TV(x) (isotropic total variation; the data in line "
                   "integrals per pixel, e.g. 0.1 for 60 noisy views of a 128^2 phantom)")
        ->type_name("LAMBDA")
        ->check(positiveNumber(1e12))
        ->group(kGroup);
    app.add_flag("--nonnegative", c.nonnegative, "sirt, tv: keep every value >= 0 (= --bounds 0,inf)")->group(kGroup);
    app.add_option("--bounds", c.bounds, "sirt, tv: keep every value inside [MIN, MAX] (inf or -inf: no bound)")
        ->type_name("MIN,MAX")
        ->group(kGroup);
    app.add_option("--init", c.init, "sirt, cgls, tv: start from zero or from the FBP of the data")
        ->check(CLI::IsMember({"zero", "fbp"}))
        ->group(kGroup)
        ->capture_default_str();
    app.add_option("--tolerance", c.tolerance,
                   "sirt, cgls, tv: a slice stops once its residual ||b - Ax|| changes by less than this fraction in "
                   "one iteration (default 0: run all the iterations)")
        ->type_name("REL")
        ->check(numberIn(0.0, 0.999999))
        ->group(kGroup);
    app.add_option("--projector", c.projector,
                   "sirt, cgls, tv: the projector pair. joseph: Joseph's ray-driven projector and its exact "
                   "transpose; fourier: gridrec's Fourier-domain back-projection of the unfiltered rows and its "
                   "exact adjoint (matched, approximate: ~1e-3 of linear interpolation's pair on smooth data; "
                   "several times faster on a GPU; 'cpu' and the CUDA strategies)")
        ->check(CLI::IsMember({"joseph", "fourier"}))
        ->group(kGroup)
        ->capture_default_str();
}

IterativeOptions applyMethodOptions(const CLI::App& app, const MethodCommandLine& c, IterativeOptions o) {
    auto given = [&](const char* name) { return app.count(name) > 0; };
    if (given("--method")) o.method = parseMethod(c.method);
    const std::string method = "--method " + std::string(methodName(o.method));
    if (!o.isIterative())
        for (const char* option :
             {"--iterations", "--tv-weight", "--nonnegative", "--bounds", "--init", "--tolerance", "--projector"})
            if (given(option))
                throw InvalidArgument(std::string(option) + " applies to --method sirt, cgls or tv (the method is fbp)");
    if (given("--iterations")) o.iterations = c.iterations;
    if (given("--tv-weight")) {
        if (o.method != Method::Tv) throw InvalidArgument("--tv-weight applies to --method tv (" + method + ")");
        o.tvWeight = c.tvWeight;
    }
    if (given("--nonnegative") && given("--bounds"))
        throw InvalidArgument("--nonnegative and --bounds: give one (--nonnegative is --bounds 0,inf)");
    if (given("--nonnegative")) o.bounds = Bounds{0.0, std::numeric_limits<double>::infinity()};
    if (given("--bounds")) o.bounds = parseBounds(c.bounds);
    if ((given("--nonnegative") || given("--bounds")) && o.method == Method::Cgls)
        throw InvalidArgument(std::string(given("--bounds") ? "--bounds" : "--nonnegative") +
                              " applies to --method sirt or tv (cgls has no constraints)");
    if (given("--init")) o.init = parseInitialImage(c.init);
    if (given("--tolerance")) o.tolerance = c.tolerance;
    if (given("--projector")) o.projector = parseProjectorKind(c.projector);
    if (o.method == Method::Tv && !o.tvWeight)
        throw InvalidArgument("--method tv needs --tv-weight LAMBDA (> 0): the weight of the total variation against "
                              "the data");
    o.validate();
    return o;
}

void checkMethodRuns(const ReconOptions& options, const ReconGeometry& geometry) {
    if (!options.iterative.isIterative()) return;
    const BackendRegistry& registry = BackendRegistry::instance();
    // "auto" stays unresolved where --gpus lanes resolve it each on its own device.
    const ReconOptions o = options.strategy == "auto" ? registry.resolveOptions(options, geometry) : options;
    const Backend* b = registry.find(o.strategy);
    if (!b) throw InvalidArgument("unknown strategy '" + options.strategy + "'");
    if (!b->createProjector(geometry, o))
        throw InvalidArgument("strategy '" + b->name() + "' cannot run --method " +
                              std::string(methodName(o.iterative.method)));
}

std::string describeMethod(const IterativeOptions& o) {
    if (!o.isIterative()) return {};
    std::string text = std::string(methodName(o.method)) + ", " + std::to_string(o.resolvedIterations()) +
                       " iterations from " + std::string(initialImageName(o.init));
    if (o.tvWeight) text += ", lambda " + formatNumber(*o.tvWeight);
    if (o.bounds.any()) text += ", bounds [" + boundText(o.bounds.lower) + ", " + boundText(o.bounds.upper) + "]";
    if (o.tolerance > 0.0) text += ", tolerance " + formatNumber(o.tolerance);
    if (o.projector != ProjectorKind::Joseph) text += ", " + std::string(projectorKindName(o.projector)) + " projector";
    return text;
}

void addMethodAttributes(std::map<std::string, std::string>& attributes, const ReconOptions& options) {
    const IterativeOptions& o = options.iterative;
    attributes["method"] = std::string(methodName(o.method));
    if (!o.isIterative()) return;
    attributes["iterations"] = std::to_string(o.resolvedIterations());
    if (o.tvWeight) attributes["tv_weight"] = formatNumber(*o.tvWeight, 17);
    attributes["bounds"] = boundText(o.bounds.lower) + "," + boundText(o.bounds.upper);
    attributes["init"] = std::string(initialImageName(o.init));
    attributes["tolerance"] = formatNumber(o.tolerance, 17);
    const Backend* b = BackendRegistry::instance().find(options.strategy);
    attributes["projector"] = std::string(projectorKindName(o.projector)) + ", " + (o.matched ? "matched" : "unmatched") + ", " +
                              (b ? b->family() : std::string("unknown")) + " pair";
}

} // namespace tomo::cli
