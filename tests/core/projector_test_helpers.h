// Helpers of the projector and iterative test suites (CPU, and the CUDA
// suites that compare with the CPU pairs): geometries, random vectors,
// phantom problems, pairs from the registry, inner products in double.
#pragma once

#include "tomo/backend.h"
#include "tomo/error.h"
#include "tomo/iterative.h"
#include "tomo/metrics.h"
#include "tomo/phantom.h"
#include "tomo/projector.h"
#include "tomo/registry.h"

#include <cmath>
#include <memory>
#include <numbers>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace tomo::projtest {

/// `angles` views over [0, range), the axis `axisShift` columns right of the
/// detector centre, a width x height grid (default bins x bins).
inline ReconGeometry parallelGeometry(int bins, int angles, double range = std::numbers::pi, int width = 0,
                                      int height = 0, double axisShift = 0.0) {
    Geometry g;
    g.angles = uniformAngles(angles, range);
    g.bins = bins;
    g.axis = g.detectorCentre() + axisShift;
    ReconGeometry r = ReconGeometry::fullSlice(g);
    if (width > 0) {
        r.sliceWidth = width;
        r.sliceHeight = height;
        r.region = Region{0, 0, width, height};
    }
    return r;
}

/// Uniform values in [-1, 1), reproducible.
inline std::vector<float> randomValues(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

inline double innerProduct(std::span<const float> a, std::span<const float> b) {
    double sum = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) sum += double(a[i]) * double(b[i]);
    return sum;
}

/// ||a - b|| / ||b|| in double.
inline double relativeError(std::span<const float> a, std::span<const float> b) {
    double d = 0.0, n = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        n += double(b[i]) * b[i];
    }
    return std::sqrt(d / n);
}

/// Uniform values in [0, 1): inner products of such vectors have no
/// cancellation, so their relative difference measures the pair, not luck.
inline std::vector<float> positiveValues(std::size_t n, unsigned seed) {
    std::vector<float> v = randomValues(n, seed);
    for (float& x : v) x = 0.5f * (x + 1.0f);
    return v;
}

struct GeometryCase {
    std::string name;
    ReconGeometry geometry;
};

/// Geometries that exercise both line directions, ties at 45 degrees, odd
/// and non-square grids, angles over 360 degrees, an off-centre axis and
/// per-projection offsets.
inline std::vector<GeometryCase> geometryCases() {
    std::vector<GeometryCase> cases;
    cases.push_back({"square64", parallelGeometry(64, 90)});
    cases.push_back({"eighths", parallelGeometry(48, 8)}); // 0, 22.5, 45, ... 157.5 degrees: ties at 45 and 135
    cases.push_back({"odd360", parallelGeometry(61, 37, 2 * std::numbers::pi, 50, 70, 3.3)});
    ReconGeometry offsets = parallelGeometry(40, 25, std::numbers::pi, 0, 0, -2.5);
    for (int p = 0; p < 25; ++p) offsets.geometry.axisOffsets.push_back(0.37 * std::sin(1.3 * p));
    cases.push_back({"offsets", offsets});
    return cases;
}

/// The pair of strategy `strategy` with these iterative options.
inline std::unique_ptr<ProjectorPair> pairOf(const std::string& strategy, const ReconGeometry& geometry,
                                             IterativeOptions iterative = {}, int threads = 0) {
    ReconOptions o;
    o.strategy = strategy;
    o.threads = threads;
    o.iterative = iterative;
    const Backend* b = BackendRegistry::instance().find(strategy);
    if (!b) throw std::runtime_error("no strategy " + strategy);
    return b->createProjector(geometry, o);
}

/// <A x, y> / <x, B y> - 1 per slice of a batch of `count`, for positive
/// random x and y (seeded by `seed`; no cancellation in the sums), the
/// inner products in the pair's own precision (pair.dot).
inline std::vector<double> adjointnessGaps(ProjectorPair& pair, int count, unsigned seed) {
    const ReconGeometry& g = pair.geometry();
    const std::size_t pixels = static_cast<std::size_t>(g.sliceWidth) * g.sliceHeight;
    const std::size_t values = static_cast<std::size_t>(g.geometry.projections()) * g.geometry.bins;
    auto x = pair.vector(Space::Image, count), ax = pair.vector(Space::Sinogram, count);
    auto y = pair.vector(Space::Sinogram, count), by = pair.vector(Space::Image, count);
    pair.upload(positiveValues(pixels * count, seed + count), *x);
    pair.upload(positiveValues(values * count, seed + 12 + count), *y);
    pair.forward(*x, *ax);
    pair.back(*y, *by);
    const std::vector<double> left = pair.dot(*ax, *y), right = pair.dot(*x, *by);
    std::vector<double> gaps;
    for (int s = 0; s < count; ++s) gaps.push_back(left[s] / right[s] - 1.0);
    return gaps;
}

/// The TV operators of `pair` on `count` random slices (projector.h):
/// L^T x, read from tvDual with a step small enough that the ball's
/// projection does nothing, is the forward difference along each axis (0
/// past a plane's last row, the last column, the last plane), and L, read
/// from tvPrimal, its adjoint: <L^T x, p> = <x, L p> for a dual p that is 0
/// where L^T x is. Returns the largest difference of L^T x from the
/// differences and the adjointness gap (relative).
struct TvCheck {
    double gradientError = 0.0;
    double adjointGap = 0.0;
};
inline TvCheck checkTvOperators(ProjectorPair& pair, int count) {
    const ReconGeometry& g = pair.geometry();
    const std::size_t W = g.sliceWidth, H = g.sliceHeight, n = W * H;
    const int axes = pair.tvAxes();
    const std::size_t planeRows = H / pair.tvPlanes();
    const std::vector<float> xs = randomValues(n * count, 7);
    std::vector<float> ps = randomValues(n * axes * count, 8);
    auto x = pair.vector(Space::Image, count), p = pair.vector(Space::TvDual, count);
    auto r = pair.vector(Space::TvDual, count);
    pair.upload(xs, *x);
    const double step = 1e-3;
    pair.tvDual(*x, step, 0.0, *p, *r);
    std::vector<float> gradient(n * axes * count);
    pair.download(*p, gradient);
    TvCheck check;
    for (int s = 0; s < count; ++s)
        for (std::size_t e = 0; e < n; ++e) {
            const std::size_t row = e / W, col = e % W, i = s * n + e;
            const double difference[3] = {row % planeRows + 1 < planeRows ? xs[i] - xs[i + W] : 0.0,
                                          col + 1 < W ? xs[i] - xs[i + 1] : 0.0,
                                          row + planeRows < H ? xs[i] - xs[i + planeRows * W] : 0.0};
            for (int c = 0; c < axes; ++c) {
                const std::size_t k = (s * axes + c) * n + e;
                check.gradientError = std::max(check.gradientError, std::abs(gradient[k] - step * difference[c]));
                if (difference[c] == 0.0) ps[k] = 0.0f; // a dual that respects the boundary
            }
        }
    auto zero = pair.vector(Space::Image, count), minusL = pair.vector(Space::Image, count);
    pair.upload(ps, *p);
    pair.tvPrimal(*zero, *p, 1.0, Bounds{}, *minusL);
    std::vector<float> lp(n * count);
    pair.download(*minusL, lp);
    const double left = innerProduct(gradient, ps) / step, right = -innerProduct(xs, lp);
    check.adjointGap = std::abs(left - right) / std::abs(right);
    return check;
}

/// A x for host images [slice][row][column] through `pair`.
inline std::vector<float> forwardOf(ProjectorPair& pair, std::span<const float> images, int count) {
    auto x = pair.vector(Space::Image, count);
    auto y = pair.vector(Space::Sinogram, count);
    pair.upload(images, *x);
    pair.forward(*x, *y);
    const ReconGeometry& g = pair.geometry();
    std::vector<float> out(static_cast<std::size_t>(count) * g.geometry.projections() * g.geometry.bins);
    pair.download(*y, out);
    return out;
}

/// B y for host sinograms [slice][angle][bin] through `pair`.
inline std::vector<float> backOf(ProjectorPair& pair, std::span<const float> sinograms, int count) {
    auto y = pair.vector(Space::Sinogram, count);
    auto x = pair.vector(Space::Image, count);
    pair.upload(sinograms, *y);
    pair.back(*y, *x);
    const ReconGeometry& g = pair.geometry();
    std::vector<float> out(static_cast<std::size_t>(count) * g.sliceWidth * g.sliceHeight);
    pair.download(*x, out);
    return out;
}

/// The 2D Shepp-Logan (Toft's densities): its exact sinogram and its image
/// on the grid of `geometry` (bins x bins, axis at the centre), 4 x 4
/// sub-samples per pixel.
struct PhantomProblem {
    PhantomSpec spec;
    std::vector<float> image;    ///< [row][column]
    std::vector<float> sinogram; ///< [angle][bin], exact line integrals through the bin centres
};

inline PhantomProblem sheppLogan(const ReconGeometry& geometry) {
    PhantomProblem p;
    p.spec.shapes = sheppLogan2D();
    p.spec.bins = geometry.geometry.bins;
    p.spec.rows = 1;
    p.image = rasterizePhantom(p.spec, 0, geometry.sliceWidth, geometry.sliceHeight).data;
    p.sinogram = projectPhantom(p.spec, geometry.geometry.angles).data;
    return p;
}

/// The sinogram measured with Poisson noise: counts = Poisson(incident x
/// exp(-p)), p = -log(max(counts, 1) / incident); fixed seed.
inline std::vector<float> withPoissonNoise(std::span<const float> sinogram, double incident, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::vector<float> out(sinogram.size());
    for (std::size_t i = 0; i < sinogram.size(); ++i) {
        std::poisson_distribution<long long> counts(incident * std::exp(-double(sinogram[i])));
        out[i] = static_cast<float>(-std::log(std::max<double>(double(counts(rng)), 1.0) / incident));
    }
    return out;
}

/// RMSE of `result` against `truth` inside the phantom's disc (both [row][column]).
inline double discRmse(std::span<const float> result, std::span<const float> truth, const ReconGeometry& g,
                       double radius) {
    Image a(g.sliceWidth, g.sliceHeight), b(g.sliceWidth, g.sliceHeight);
    a.data.assign(result.begin(), result.end());
    b.data.assign(truth.begin(), truth.end());
    return compareImages(a, b, discMask(g.sliceWidth, g.sliceHeight, radius)).rmse;
}

struct Solved {
    std::vector<float> images;                  ///< [slice][row][column]
    IterativeSummary summary;
    std::vector<std::vector<double>> residuals; ///< [iteration][slice]
};

/// Runs `options` on `pair` for `count` sinograms, from zeros or the FBP.
inline Solved solve(ProjectorPair& pair, std::span<const float> sinograms, int count, const IterativeOptions& options,
                    const IterationCallback& also = {}) {
    auto b = pair.vector(Space::Sinogram, count);
    auto x = pair.vector(Space::Image, count);
    pair.upload(sinograms, *b);
    if (options.init == InitialImage::Fbp) pair.filteredBackprojection(*b, *x);
    Solved run;
    run.summary = makeSolver(pair, options)->run(*b, *x, [&](const IterationState& state) {
        run.residuals.emplace_back(state.residuals.begin(), state.residuals.end());
        return also ? also(state) : true;
    });
    const ReconGeometry& g = pair.geometry();
    run.images.resize(static_cast<std::size_t>(count) * g.sliceWidth * g.sliceHeight);
    pair.download(*x, run.images);
    return run;
}

inline IterativeOptions method(Method m, int iterations) {
    IterativeOptions o;
    o.method = m;
    o.iterations = iterations;
    return o;
}

/// The phantom's disc radius in pixels on a bins-wide grid.
inline double discRadius(const PhantomProblem& p) { return p.spec.radiusFraction * p.spec.bins / 2.0; }

/// The few-view noisy phantom of the issue: 60 views over 180 degrees,
/// Poisson noise of 10^4 incident counts (fixed seed), 128 bins.
struct FewView {
    explicit FewView(int bins = 128) : geometry(parallelGeometry(bins, 60)) {}
    ReconGeometry geometry;
    PhantomProblem phantom = sheppLogan(geometry);
    std::vector<float> noisy = withPoissonNoise(phantom.sinogram, 1e4, 2024);
    double error(std::span<const float> image) const {
        return discRmse(image, phantom.image, geometry, discRadius(phantom));
    }
};

/// The few-view problem's errors on `pair` (iterative options with
/// `projector`): the pair's FBP start, SIRT (100 iterations), CGLS (8; 20
/// fit the noise), TV (lambda 0.1, 100, non-negative).
struct FewViewErrors {
    double fbp = 0.0, sirt = 0.0, cgls = 0.0, tv = 0.0;
};
inline FewViewErrors fewViewErrors(ProjectorPair& pair, const FewView& data,
                                   ProjectorKind projector = ProjectorKind::Joseph) {
    auto b = pair.vector(Space::Sinogram, 1), x = pair.vector(Space::Image, 1);
    pair.upload(data.noisy, *b);
    pair.filteredBackprojection(*b, *x);
    std::vector<float> fbp(data.phantom.image.size());
    pair.download(*x, fbp);
    const auto run = [&](IterativeOptions o) {
        o.projector = projector;
        return data.error(solve(pair, data.noisy, 1, o).images);
    };
    IterativeOptions tv = method(Method::Tv, 100);
    tv.tvWeight = 0.1;
    tv.bounds.lower = 0.0;
    return {data.error(fbp), run(method(Method::Sirt, 100)), run(method(Method::Cgls, 8)), run(tv)};
}

} // namespace tomo::projtest
