// Iterative reconstruction: SIRT, CGLS and total-variation regularised least
// squares (FISTA with a TV proximal step), written once over a projector pair
// (projector.h) so the same code runs on the CPU and on the GPU.
//
//   Backend::createProjector(geometry, options) -> ProjectorPair
//        A (forward: Joseph's, or the Fourier pair's), A^T (back), and the
//        vector arithmetic, all in the pair's memory (host for the CPU
//        strategies, device for CUDA)
//   makeSolver(pair, options) -> IterativeSolver
//        run(b, x, callback): x (zeros or the FBP of b) improved until the
//        stopping rule (the iterations, or each slice's relative residual
//        change below the tolerance); the callback sees every iteration and
//        may stop it (keeping x) or throw Cancelled
//   createPlan() of the registry, for a method other than fbp, wraps the
//        pair and a solver in a ReconstructionPlan (IterativePlan), so the
//        conveyor, the preview and tomo-bench run iterative methods as FBP.
//
// Every slice of a batch is its own problem (its own step sizes and
// stopping rule): a slice's result does not depend on the batch it came in.
// Tests: tests/core/test_iterative*.cpp, tests/cuda/test_cuda_iterative.cpp.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tomo {

class BatchVector;
class ProjectorPair;

enum class Method { Fbp, Sirt, Cgls, Tv };

/// The projector pair's model (projector.h):
///   joseph   Joseph's ray-driven projector and its transpose (exact
///            geometry, interpolation on the image grid)
///   fourier  the Fourier slice theorem with gridrec's gridding
///            (tomo/gridrec.h): back() is gridrec's back-projection of the
///            unfiltered rows (FBP's linear interpolation, approximated in
///            frequency), forward() its exact adjoint; matched, approximate
///            (5e-4 to 3e-3 of linear interpolation's pair on a phantom's
///            data, 2-4 % on random data), 3.5x Joseph's SIRT on a GPU
enum class ProjectorKind { Joseph, Fourier };
/// The image the iterations start from.
enum class InitialImage { Zero, Fbp };

std::string_view methodName(Method m);            ///< "fbp", "sirt", "cgls", "tv"
Method parseMethod(std::string_view s);           ///< throws InvalidArgument listing the names
std::string_view initialImageName(InitialImage i); ///< "zero", "fbp"
std::string_view projectorKindName(ProjectorKind k); ///< "joseph", "fourier"
ProjectorKind parseProjectorKind(std::string_view s); ///< throws InvalidArgument
InitialImage parseInitialImage(std::string_view s); ///< throws InvalidArgument

/// Iterations when none are given: SIRT and TV converge slowly, CGLS fast
/// (and on noisy data fits the noise after a few tens).
int defaultIterations(Method m);

/// Inner iterations of the TV proximal step (Beck-Teboulle's FGP), warm
/// started from the previous outer iteration's dual: on the 256^2 few-view
/// phantom 10 gave the same error as 50 (within 1%).
inline constexpr int kTvInnerIterations = 10;

/// Value bounds of the iterates (box constraint); infinite = none.
struct Bounds {
    double lower = -std::numeric_limits<double>::infinity();
    double upper = std::numeric_limits<double>::infinity();
    bool any() const { return lower > -std::numeric_limits<double>::infinity() || upper < std::numeric_limits<double>::infinity(); }
    bool operator==(const Bounds&) const = default;
};

struct IterativeOptions {
    Method method = Method::Fbp;
    /// Iterations (>= 1); 0 = defaultIterations(method).
    int iterations = 0;
    /// TV: lambda of  1/2 ||A x - b||^2 + lambda TV(x)  (isotropic TV: the
    /// sum over the pixels of the length of the image's gradient, attenuation
    /// per pixel); required for Method::Tv, refused for the others.
    std::optional<double> tvWeight;
    /// SIRT and TV: x kept inside [lower, upper] (non-negativity: lower 0).
    Bounds bounds;
    InitialImage init = InitialImage::Zero;
    /// A slice stops when its residual changed by less than this fraction in
    /// one iteration; 0 = run all the iterations.
    double tolerance = 0.0;
    /// Back-projector of the pair: the exact transpose of the forward
    /// projector (matched), or the FBP back-projectors' linear interpolation
    /// on the detector (unmatched, as ASTRA's GPU pair). Matched by default.
    bool matched = true;
    /// The pair's model; fourier pairs are always matched.
    ProjectorKind projector = ProjectorKind::Joseph;

    bool isIterative() const { return method != Method::Fbp; }
    int resolvedIterations() const { return iterations > 0 ? iterations : defaultIterations(method); }
    /// Throws InvalidArgument naming the field and what was expected:
    /// iterations < 0, a TV weight that is NaN, infinite or <= 0, TV
    /// without a weight, a weight, bounds, iterations, an initial image or a
    /// tolerance for a method that ignores them, lower > upper or NaN bounds,
    /// a tolerance outside [0, 1), a fourier projector for fbp or unmatched.
    void validate() const;
};

/// Vectors a method keeps per slice, the data and the result included (a
/// pair's own scratch comes on top): the pairs size their batches by them.
struct Workspace {
    int images = 0;
    int sinograms = 0;
};
/// `tvAxes`: the TV dual's components (ProjectorPair::tvAxes()), images each.
Workspace workspaceOf(Method m, int tvAxes = 2);

/// What the callback sees after each iteration.
struct IterationState {
    int iteration = 0;   ///< 1-based, just done
    int iterations = 0;  ///< planned
    /// Per slice: ||b - A x|| / ||b|| at this iteration's point (SIRT and
    /// TV: the image the iteration started from; CGLS: the new image).
    std::span<const double> residuals;
    /// Per slice: still iterating (false once its tolerance was met).
    std::span<const char> active;
    /// Copies the current images ([slice][row][column] of the full grid)
    /// out of the pair, for a live display.
    std::function<void(std::span<float>)> image;
};
/// Return false to stop after this iteration, keeping the current images;
/// throw Cancelled to abandon the run.
using IterationCallback = std::function<bool(const IterationState&)>;

/// How a run ended.
struct IterativeSummary {
    int iterations = 0;                 ///< iterations run (the most of any slice)
    std::vector<double> residuals;      ///< per slice, the last relative residual
    std::vector<int> sliceIterations;   ///< per slice, iterations until it stopped
    bool stoppedByCallback = false;
};

/// One algorithm over a projector pair (CIL's Algorithm): run() is the loop
/// for all of them (stopping rule, callback), the subclasses only their
/// start and their iteration.
class IterativeSolver {
public:
    virtual ~IterativeSolver() = default;
    const IterativeOptions& options() const { return m_options; }

    /// Improves `x` (the initial images) for the data `b` (sinograms of the
    /// same slices) until the stopping rule; the pair's vectors of
    /// b.count() slices. Throws InvalidArgument when b and x differ in
    /// count, Cancelled from the callback, and what the pair throws.
    IterativeSummary run(const BatchVector& b, BatchVector& x, const IterationCallback& callback = {});

protected:
    IterativeSolver(ProjectorPair& pair, IterativeOptions options) : m_pair(pair), m_options(std::move(options)) {}

    /// Prepares the run (work vectors of b.count() slices).
    virtual void start(const BatchVector& b, BatchVector& x) = 0;
    /// One iteration of the slices with active[s] != 0 (the others keep
    /// their images); returns ||b - A x||^2 per slice (see IterationState).
    virtual std::vector<double> iterate(const BatchVector& b, BatchVector& x, std::span<const char> active) = 0;
    /// Frees the work vectors.
    virtual void finish() {}

    ProjectorPair& m_pair;
    IterativeOptions m_options;
};

/// The solver of options.method (not Fbp). Throws InvalidArgument as
/// IterativeOptions::validate. `lipschitz` (TV only): ||A||^2 when known
/// (estimateLipschitz), else estimated at the first run.
std::unique_ptr<IterativeSolver> makeSolver(ProjectorPair& pair, const IterativeOptions& options,
                                            double lipschitz = 0.0);

/// One problem solved whole on `pair` (its one image: a slice or a
/// volume): `data` uploaded, the start zeros or the FBP of the data
/// (options.init), the solver run with `onIteration`, the result downloaded
/// into `image`. Throws as makeSolver, the pair and the solver.
IterativeSummary solveOnce(ProjectorPair& pair, const IterativeOptions& options, std::span<const float> data,
                           std::span<float> image, const IterationCallback& onIteration = {});

/// An upper estimate of ||A||^2 = the largest eigenvalue of A^T A: power
/// iteration on one slice from a constant image, times a margin of 1.05 so
/// that FISTA's step 1/L stays below the bound. Depends on the geometry only.
double estimateLipschitz(ProjectorPair& pair);

} // namespace tomo
