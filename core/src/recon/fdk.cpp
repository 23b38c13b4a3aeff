// FDK weights and filtering (Kak & Slaney ch. 3.6, Feldkamp et al. 1984;
// Parker 1982 for short scans), written for any projection matrices.
//
// With the matrix of a view taken apart (describeView: focal lengths f_u,
// f_v in pixels, principal point (u0, v0), isocentre depth D):
//   pre-weight:  p * cos = p / sqrt(1 + ((u - u0) / f_u)^2 + ((v - v0) / f_v)^2)
//                (times Parker's weight of the column's fan angle on a short scan)
//   ramp filter along each detector row, in pixels (SinogramFilter), then
//                times d_beta / 2 (full turn) or d_beta (Parker) and / tau,
//                tau = D / f_u the pixel size at the isocentre
//   back-project with the matrix scaled to w = depth / D: weight 1 / w^2 =
//                D^2 / depth^2; times the voxel size (attenuation per voxel).
// Source angles come from the source positions (the angle swept about the
// normal of the orbit), so circular scans and matrix files go the same way.
#include "tomo/fdk.h"

#include "tomo/error.h"
#include "tomo/geometry.h"

#include "recon/cone_backproject.h"
#include "recon/cpu_plan.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <numbers>
#include <numeric>
#include <sstream>
#include <string>

namespace tomo {

namespace {

constexpr double kPi = std::numbers::pi;
using Vec3 = std::array<double, 3>;

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec3 cross(const Vec3& a, const Vec3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

std::string degrees(double radians) {
    std::ostringstream s;
    s.precision(4);
    s << radians * 180.0 / kPi;
    return s.str();
}

/// Source angles, unwrapped, increasing along the orbit: each step is the
/// angle from one source position to the next about the orbit's normal.
std::vector<double> sourceAngles(const std::vector<ViewFrame>& frames) {
    Vec3 normal{};
    for (std::size_t p = 0; p + 1 < frames.size(); ++p) {
        const Vec3 c = cross(frames[p].source, frames[p + 1].source);
        for (int i = 0; i < 3; ++i) normal[i] += c[i];
    }
    const double n = std::sqrt(dot(normal, normal));
    if (!(n > 0.0))
        throw InvalidArgument("cone geometry: the source positions do not go round the isocentre (all views from one "
                              "direction); FDK needs a circular orbit");
    for (double& v : normal) v /= n;
    std::vector<double> beta(frames.size(), 0.0);
    for (std::size_t p = 0; p + 1 < frames.size(); ++p) {
        const Vec3& a = frames[p].source;
        const Vec3& b = frames[p + 1].source;
        beta[p + 1] = beta[p] + std::atan2(dot(cross(a, b), normal), dot(a, b));
    }
    return beta;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size();
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

/// Parker's weight at angle beta (from the first view) and fan angle gamma,
/// for a short scan of span pi + 2 delta. Gamma's sign: positive towards
/// where the source is going (the conjugate of (beta, gamma) is then
/// (beta + pi - 2 gamma, -gamma)); the weights of a ray and its conjugate add to 1.
double parkerWeight(double beta, double gamma, double delta) {
    gamma = std::clamp(gamma, -delta, delta);
    const double rise = 2.0 * (delta + gamma);
    if (beta <= 0.0) return 0.0;
    if (beta < rise) return std::pow(std::sin(kPi / 4.0 * beta / (delta + gamma)), 2);
    if (beta <= kPi + 2.0 * gamma) return 1.0;
    if (beta >= kPi + 2.0 * delta) return 0.0;
    return std::pow(std::sin(kPi / 4.0 * (kPi + 2.0 * delta - beta) / (delta - gamma)), 2);
}

/// Throws InvalidArgument unless there are views x rows x columns values.
void checkProjectionCount(const ConeGeometry& geometry, std::size_t values) {
    const std::size_t expected = static_cast<std::size_t>(geometry.columns) * geometry.rows * geometry.viewCount();
    if (values != expected)
        throw InvalidArgument("FDK: " + std::to_string(values) + " projection values (expected views x rows x columns = " +
                              std::to_string(geometry.viewCount()) + " x " + std::to_string(geometry.rows) + " x " +
                              std::to_string(geometry.columns) + ")");
}

} // namespace

std::string_view coneBackprojectorName(ConeBackprojector b) {
    switch (b) {
    case ConeBackprojector::Reference: return "cpu-reference";
    case ConeBackprojector::Fast: return "cpu";
    case ConeBackprojector::Cuda: return "cuda";
    }
    return "?";
}

ConeBackprojector parseConeBackprojector(std::string_view name) {
    if (name == "cpu") return ConeBackprojector::Fast;
    if (name == "cpu-reference") return ConeBackprojector::Reference;
    if (name == "cuda") return ConeBackprojector::Cuda;
    throw InvalidArgument("cone-beam back-projector '" + std::string(name) +
                          "' is not known (expected cpu, cpu-reference or cuda)");
}

namespace {
std::atomic<ConeGpuBackprojector> g_coneGpu{nullptr};
std::atomic<ConeGpuFdk> g_coneGpuFdk{nullptr};
} // namespace

void setConeGpuBackprojector(ConeGpuBackprojector backprojector) { g_coneGpu.store(backprojector); }
void setConeGpuFdk(ConeGpuFdk fdk) { g_coneGpuFdk.store(fdk); }

FdkWeights fdkWeights(const ConeGeometry& geometry) {
    geometry.validate();
    const int views = geometry.viewCount(), cols = geometry.columns;
    if (views < 2) throw InvalidArgument("FDK: " + std::to_string(views) + " view(s) (expected at least 2)");

    std::vector<ViewFrame> frames;
    for (int p = 0; p < views; ++p) frames.push_back(describeView(geometry.views[p], "view " + std::to_string(p)));
    const std::vector<double> beta = sourceAngles(frames);

    // Coverage: sorted source angles, their steps, the fan angle.
    FdkWeights out;
    out.columns = cols;
    out.rows = geometry.rows;
    std::vector<std::size_t> order(views);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return beta[a] < beta[b]; });
    const double first = beta[order.front()];
    ScanCoverage& cover = out.coverage;
    cover.span = beta[order.back()] - first;
    std::vector<double> steps;
    for (int q = 0; q + 1 < views; ++q)
        if (const double s = beta[order[q + 1]] - beta[order[q]]; s > 1e-9) steps.push_back(s);
    if (steps.empty()) throw InvalidArgument("FDK: every view has the same source position");
    cover.step = median(steps);
    for (const ViewFrame& f : frames) {
        const double edge = std::max(std::abs(-0.5 - f.centreU), std::abs(cols - 0.5 - f.centreU));
        cover.fanAngle = std::max(cover.fanAngle, 2.0 * std::atan(edge / f.focalU));
    }
    cover.shortScan = cover.span + cover.step < 2.0 * kPi - 0.5 * cover.step;
    if (cover.shortScan && cover.span < kPi + cover.fanAngle - 2.0 * cover.step)
        throw InvalidArgument("FDK: the views cover " + degrees(cover.span) + " degrees; a short scan needs 180 degrees "
                              "plus the fan angle (" + degrees(cover.fanAngle) + " degrees), a full scan 360");

    // Angular weight of each view: for a full turn, where each ray is
    // measured twice, d_beta / 2 = parallel-beam angularWeights() of beta / 2
    // (its period pi is beta's 2 pi; duplicates and gaps handled there); for
    // a short scan half the gap to each neighbour along the arc (Parker
    // weights share the rays measured twice).
    std::vector<double> dBeta(views);
    if (cover.shortScan) {
        for (int q = 0; q < views; ++q) {
            const double before = q > 0 ? beta[order[q]] - beta[order[q - 1]] : 0.0;
            const double after = q + 1 < views ? beta[order[q + 1]] - beta[order[q]] : 0.0;
            dBeta[order[q]] = 0.5 * (before + after);
        }
    } else {
        std::vector<double> half(beta);
        for (double& b : half) b *= 0.5;
        dBeta = angularWeights(half);
    }
    const double delta = std::max(0.5 * (cover.span - kPi), 1e-9);
    if (cover.shortScan) out.columnWeights.resize(static_cast<std::size_t>(views) * cols);
    for (int p = 0; p < views; ++p) {
        const ViewFrame& f = frames[p];
        out.frames.push_back({f.centreU, f.centreV, f.focalU, f.focalV});
        out.rowWeights.push_back(dBeta[p] * f.focalU / f.originDepth); // d_beta / tau
        out.normalised.push_back(f.normalised);
        if (!cover.shortScan) continue;
        // Which way gamma grows: towards where the source goes next.
        const std::size_t q = static_cast<std::size_t>(std::find(order.begin(), order.end(), p) - order.begin());
        const ViewFrame& next = frames[order[q + 1 < order.size() ? q + 1 : q - 1]];
        Vec3 motion{};
        for (int i = 0; i < 3; ++i) motion[i] = (next.source[i] - f.source[i]) * (q + 1 < order.size() ? 1.0 : -1.0);
        const double sense = dot(motion, f.axisU) >= 0.0 ? 1.0 : -1.0;
        for (int c = 0; c < cols; ++c)
            out.columnWeights[static_cast<std::size_t>(p) * cols + c] =
                static_cast<float>(parkerWeight(beta[p] - first, sense * std::atan((c - f.centreU) / f.focalU), delta));
    }
    return out;
}

FilteredProjections fdkFilter(const ConeGeometry& geometry, std::span<const float> projections,
                              const FdkOptions& options) {
    const FdkWeights w = fdkWeights(geometry);
    checkProjectionCount(geometry, projections.size());
    const int views = geometry.viewCount(), cols = geometry.columns, rows = geometry.rows;
    const std::size_t image = static_cast<std::size_t>(cols) * rows;
    FilteredProjections out;
    out.columns = cols;
    out.rows = rows;
    out.coverage = w.coverage;
    out.views = w.normalised;
    out.data.assign(projections.begin(), projections.end());
    WorkerPool pool(cpu::resolveThreads(options.threads));
    std::vector<std::unique_ptr<SinogramFilter>> filters;
    for (int t = 0; t < pool.threads(); ++t) filters.push_back(std::make_unique<SinogramFilter>(cols, options.filter));
    pool.parallelFor(views, [&](int p, int thread) {
        const auto& [centreU, centreV, focalU, focalV] = w.frames[p];
        const float* parker = w.columnWeights.empty() ? nullptr : w.columnWeights.data() + static_cast<std::size_t>(p) * cols;
        float* img = out.data.data() + image * p;
        for (int r = 0; r < rows; ++r) {
            const double tv = (r - centreV) / focalV;
            for (int c = 0; c < cols; ++c) {
                const double tu = (c - centreU) / focalU;
                double weight = 1.0 / std::sqrt(1.0 + tu * tu + tv * tv);
                if (parker) weight *= parker[c];
                img[static_cast<std::size_t>(r) * cols + c] *= static_cast<float>(weight);
            }
        }
        filters[thread]->apply(std::span<float>(img, image), rows, std::span<const double>(&w.rowWeights[p], 1));
    });
    return out;
}

void backprojectCone(const FilteredProjections& projections, const VolumeGrid& grid, double scale,
                     std::span<float> volume, const FdkOptions& options) {
    grid.validate();
    requireVolumeBeforeSources(projections.views, grid);
    const std::size_t image = static_cast<std::size_t>(projections.columns) * projections.rows;
    if (projections.columns < 1 || projections.rows < 1 || projections.views.empty() ||
        projections.data.size() != image * projections.views.size())
        throw InvalidArgument("cone back-projection: " + std::to_string(projections.data.size()) + " values for " +
                              std::to_string(projections.views.size()) + " views of " +
                              std::to_string(projections.columns) + "x" + std::to_string(projections.rows) +
                              " pixels (expected views x rows x columns, at least one view)");
    if (volume.size() != grid.voxels())
        throw InvalidArgument("cone back-projection: output has " + std::to_string(volume.size()) + " values (expected " +
                              std::to_string(grid.nx) + "x" + std::to_string(grid.ny) + "x" + std::to_string(grid.nz) + ")");
    if (options.backprojector == ConeBackprojector::Cuda) {
        const ConeGpuBackprojector gpu = g_coneGpu.load();
        if (!gpu) throw DeviceError("cone-beam back-projector 'cuda': this build has no CUDA support");
        gpu(projections, grid, scale, volume, options.device, options.times);
        return;
    }
    const auto start = std::chrono::steady_clock::now();
    WorkerPool pool(cpu::resolveThreads(options.threads));
    if (options.backprojector == ConeBackprojector::Reference)
        cone::backprojectReference(projections, grid, scale, volume, pool);
    else
        cone::backprojectFast(projections, grid, scale, volume, pool, options.clip);
    if (options.times)
        *options.times = {.backproject = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

ImageStack reconstructFdk(const ConeGeometry& geometry, std::span<const float> projections, const VolumeGrid& grid,
                          const FdkOptions& options) {
    grid.validate();
    requireVolumeBeforeSources(geometry.views, grid);
    ImageStack volume(grid.nx, grid.ny, grid.nz);
    if (options.backprojector == ConeBackprojector::Cuda) {
        const ConeGpuFdk gpu = g_coneGpuFdk.load();
        if (!gpu) throw DeviceError("cone-beam back-projector 'cuda': this build has no CUDA support");
        const FdkWeights weights = fdkWeights(geometry);
        checkProjectionCount(geometry, projections.size());
        gpu(weights, projections, options.filter, grid, grid.voxelSize, volume.data, options.device, options.times);
        return volume;
    }
    const auto start = std::chrono::steady_clock::now();
    const FilteredProjections filtered = fdkFilter(geometry, projections, options);
    const double filter = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    backprojectCone(filtered, grid, grid.voxelSize, volume.data, options);
    if (options.times) options.times->filter = filter;
    return volume;
}

} // namespace tomo
