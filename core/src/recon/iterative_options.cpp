// IterativeOptions: names, defaults and the checks every front end relies on.
#include "tomo/iterative.h"

#include "tomo/error.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace tomo {

namespace {

std::string number(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", v);
    return text;
}

} // namespace

std::string_view methodName(Method m) {
    switch (m) {
    case Method::Fbp: return "fbp";
    case Method::Sirt: return "sirt";
    case Method::Cgls: return "cgls";
    case Method::Tv: return "tv";
    }
    return "fbp";
}

Method parseMethod(std::string_view s) {
    for (Method m : {Method::Fbp, Method::Sirt, Method::Cgls, Method::Tv})
        if (s == methodName(m)) return m;
    throw InvalidArgument("method '" + std::string(s.substr(0, 40)) + "' is not known (expected fbp, sirt, cgls or tv)");
}

std::string_view initialImageName(InitialImage i) { return i == InitialImage::Fbp ? "fbp" : "zero"; }

InitialImage parseInitialImage(std::string_view s) {
    if (s == "zero") return InitialImage::Zero;
    if (s == "fbp") return InitialImage::Fbp;
    throw InvalidArgument("initial image '" + std::string(s.substr(0, 40)) + "' is not known (expected zero or fbp)");
}

std::string_view projectorKindName(ProjectorKind k) { return k == ProjectorKind::Fourier ? "fourier" : "joseph"; }

ProjectorKind parseProjectorKind(std::string_view s) {
    if (s == "joseph") return ProjectorKind::Joseph;
    if (s == "fourier") return ProjectorKind::Fourier;
    throw InvalidArgument("projector '" + std::string(s.substr(0, 40)) + "' is not known (expected joseph or fourier)");
}

int defaultIterations(Method m) {
    switch (m) {
    case Method::Sirt: return 100;
    case Method::Cgls: return 20;
    case Method::Tv: return 100;
    case Method::Fbp: return 0;
    }
    return 0;
}

Workspace workspaceOf(Method m, int tvAxes) {
    switch (m) {
    case Method::Sirt: return {1, 1};  // x; b
    case Method::Cgls: return {3, 3};  // x, s, p; b, r, q
    case Method::Tv: return {3 + 2 * tvAxes, 1}; // x, y, the prox's result, the dual and its extrapolation; b
    case Method::Fbp: return {1, 1};   // x; b
    }
    return {};
}

void IterativeOptions::validate() const {
    const std::string who = "method " + std::string(methodName(method));
    if (iterations < 0)
        throw InvalidArgument("iterations " + std::to_string(iterations) + ": expected a whole number >= 1");
    if (!isIterative()) {
        if (iterations > 0) throw InvalidArgument("iterations apply to the iterative methods (sirt, cgls, tv), not fbp");
        if (init != InitialImage::Zero)
            throw InvalidArgument("an initial image applies to the iterative methods (sirt, cgls, tv), not fbp");
        if (tolerance != 0.0) throw InvalidArgument("a tolerance applies to the iterative methods (sirt, cgls, tv), not fbp");
        if (projector != ProjectorKind::Joseph)
            throw InvalidArgument("a projector applies to the iterative methods (sirt, cgls, tv), not fbp");
    }
    if (method == Method::Tv && !tvWeight)
        throw InvalidArgument("method tv needs a TV weight (lambda of 1/2 ||Ax - b||^2 + lambda TV(x), > 0)");
    if (tvWeight) {
        if (method != Method::Tv)
            throw InvalidArgument("a TV weight applies to method tv only (" + who + ")");
        if (!std::isfinite(*tvWeight) || *tvWeight <= 0.0)
            throw InvalidArgument("TV weight " + number(*tvWeight) + ": expected a finite number > 0");
    }
    if (std::isnan(bounds.lower) || std::isnan(bounds.upper) || bounds.lower == std::numeric_limits<double>::infinity() ||
        bounds.upper == -std::numeric_limits<double>::infinity() || bounds.lower > bounds.upper)
        throw InvalidArgument("bounds [" + number(bounds.lower) + ", " + number(bounds.upper) +
                              "]: expected lower <= upper, neither NaN");
    if (bounds.any() && method != Method::Sirt && method != Method::Tv)
        throw InvalidArgument("bounds (--nonnegative, --bounds) apply to sirt and tv; " + who +
                              (method == Method::Cgls ? " has no constraints" : " does not take them"));
    if (projector == ProjectorKind::Fourier && !matched)
        throw InvalidArgument("the fourier projector pair is matched by construction (its back-projector is the "
                              "transpose of its forward projector); an unmatched pair is joseph only");
    if (!(tolerance >= 0.0 && tolerance < 1.0))
        throw InvalidArgument("tolerance " + number(tolerance) +
                              ": expected a relative residual change in [0, 1) (0 = run all the iterations)");
}

} // namespace tomo
