// Forward and back projection of parallel-beam slices, and the vector
// arithmetic the iterative methods need, in one object per strategy family.
//
//   ProjectorPair (Backend::createProjector)
//     vector(space, count)          zeros: `count` images or sinograms
//     upload / download             [slice][row][column], [slice][angle][bin]
//     forward(x, y)                 y = A x: Joseph's ray-driven projector (or
//                                   the Fourier pair's, makeFourierCpuProjector)
//     back(y, x)                    x = B y: A^T (matched) or the FBP's
//                                   detector interpolation (unmatched)
//     gradientStep                  SIRT's iteration and FISTA's gradient step
//     axpby, dot, clamp, tv*        the rest of the algorithms' arithmetic
//                                   (tv*: the dual is a TvDual vector, the
//                                   gradient's 2 or 3 components, tvAxes())
//
// The forward projector A (Joseph 1982): the ray of bin k at projection p is
// the line x cos(a_p) - y sin(a_p) + axis_p = k (geometry.h's conventions).
// Where |cos| >= |sin| it is stepped row by row, else column by column; on
// each line it takes the image linearly interpolated between the two pixels
// around the crossing, times the path length per line (1 / max(|cos|,
// |sin|)). Pixels outside the grid are zero. Written as a matrix: pixel
// (x, y) and bin k are joined by
//     w = max(0, c - |k - s|) / c^2,  s = x cos - y sin + axis_p,
//     c = max(|cos a_p|, |sin a_p|),
// so its exact transpose is a pixel-driven back-projector with a triangle of
// half-width c (< 1 off the axes) in place of the FBP's linear interpolation
// (c = 1, no 1/c^2): the FBP back-projectors are NOT the transpose of A
// (unmatched, as ASTRA's GPU pair). Every pair computes both; which one
// back() uses is chosen when the pair is made (IterativeOptions::matched).
//
// Pairs: "cpu-reference" (double, plain loops: the oracle), "cpu" (float,
// threads, 1/2/4 slices interleaved per pass), CUDA (float, batched over
// slices). The float pairs' forward takes w from the ray's crossing t on
// the line ((1 - f) / c and f / c, f = t - floor t: the same entries, 3
// operations a line) and their back from s, so in float32 the two differ by
// rounding: <A x, y> = <x, A^T y> to ~1e-7 relative (measured 9.4e-8); the
// CPU and CUDA float pairs run the same operations per sample
// (recon/joseph.h).
//
// Vectors live in the pair's memory and belong to it: they must not outlive
// it. Scalars that differ per slice (step sizes) come as spans of `count`.
// Errors: InvalidArgument for vectors of the wrong space or count, spans of
// the wrong size; DeviceError, OutOfMemory from a GPU.
#pragma once

#include "tomo/cone_geometry.h"
#include "tomo/filter.h"
#include "tomo/geometry.h"
#include "tomo/iterative.h"

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tomo {

/// Image: the full slice grid; Sinogram: angles x bins; TvDual: the total
/// variation's dual, one image per axis of the gradient
/// (ProjectorPair::tvAxes(), [component][row][column] per slice).
enum class Space { Image, Sinogram, TvDual };

/// `count` images (full slice grid), sinograms or TV duals in a pair's memory.
class BatchVector {
public:
    virtual ~BatchVector() = default;
    BatchVector(const BatchVector&) = delete;
    BatchVector& operator=(const BatchVector&) = delete;

    Space space() const { return m_space; }
    int count() const { return m_count; }

protected:
    BatchVector(Space space, int count) : m_space(space), m_count(count) {}

private:
    Space m_space;
    int m_count;
};

class ProjectorPair {
public:
    virtual ~ProjectorPair() = default;

    /// The geometry; the pair works on the full sliceWidth x sliceHeight
    /// grid (the region is the plan's business).
    const ReconGeometry& geometry() const { return m_geometry; }
    /// "cpu-reference", "cpu" or "cuda", and the back-projector: e.g.
    /// "cuda joseph, matched".
    virtual std::string name() const = 0;
    /// back() is the exact transpose of forward().
    bool isMatched() const { return m_matched; }
    /// Most slices one vector may hold.
    virtual int maxSlices() const = 0;
    /// Axes of the total variation's gradient: 2 (a slice: rows, columns),
    /// or 3 for a volume of tvPlanes() planes stacked in the slice's rows
    /// (the divergent-beam pairs: also across z).
    int tvAxes() const { return m_tvPlanes > 1 ? 3 : 2; }
    int tvPlanes() const { return m_tvPlanes; }
    /// Bytes the pair holds now (its vectors included; device memory for CUDA).
    virtual std::size_t memoryBytes() const = 0;

    /// A vector of zeros. Throws InvalidArgument for count outside
    /// [1, maxSlices()], OutOfMemory.
    virtual std::unique_ptr<BatchVector> vector(Space space, int count) = 0;
    /// `values`: count x rows x columns (image), count x projections x bins
    /// (sinogram) or count x tvAxes() x rows x columns (TV dual) floats.
    virtual void upload(std::span<const float> values, BatchVector& v) = 0;
    virtual void download(const BatchVector& v, std::span<float> values) = 0;

    /// y = A x.
    virtual void forward(const BatchVector& x, BatchVector& y) = 0;
    /// x = B y (B = A^T for a matched pair).
    virtual void back(const BatchVector& y, BatchVector& x) = 0;

    /// x = clamp(x + steps[s] V B W (b - A x), bounds) per slice s, with
    /// SIRT's weights W = diag(1 / (A 1)) per ray and V = diag(1 / (B 1))
    /// per pixel (0 for rays that miss the grid and pixels no ray sees)
    /// when `weighted`, else W = V = 1 (a gradient step of 1/2 ||A x - b||^2
    /// for a matched pair). Returns ||b - A x||^2 per slice, x before the
    /// step. One call, so a pair can go group by group and keep b - A x of
    /// a few slices only (the CUDA pair).
    virtual std::vector<double> gradientStep(const BatchVector& b, std::span<const double> steps, bool weighted,
                                             const Bounds& bounds, BatchVector& x) = 0;
    /// x = the FBP of b: ramp filter (the pair's FilterOptions), angular
    /// weights, back-projection with linear interpolation (what the FBP
    /// strategies compute, up to float rounding).
    virtual void filteredBackprojection(const BatchVector& b, BatchVector& x) = 0;

    /// y = a[s] x + b[s] y per slice s (b[s] == 0: y = a[s] x, whatever y held).
    virtual void axpby(std::span<const double> a, const BatchVector& x, std::span<const double> b, BatchVector& y) = 0;
    /// Sum of x * y per slice, in double.
    virtual std::vector<double> dot(const BatchVector& x, const BatchVector& y) = 0;
    /// x = clamp(x, bounds).
    virtual void clamp(BatchVector& x, const Bounds& bounds) = 0;

    // Total variation (isotropic, Beck & Teboulle 2009, "fast gradient
    // projection"): the dual p = (p_0, p_1[, p_2]) (a TvDual vector) lives
    // on the image grid: p_0 along rows (0 on a plane's last row), p_1 along
    // columns (0 on the last column), p_2 across the planes of a volume (0
    // on the last plane); L p = sum_a p_a - p_a(one back along a) is the
    // negative divergence and L^T x = (x - x(row + 1), x - x(column + 1)[,
    // x - x(plane + 1)]) its adjoint; ||L||^2 <= 4 tvAxes().

    /// x = clamp(z - mu L p, bounds).
    virtual void tvPrimal(const BatchVector& z, const BatchVector& p, double mu, const Bounds& bounds,
                          BatchVector& x) = 0;
    /// p' = the projection of r + step L^T x onto the unit ball at each
    /// pixel; then r = p' + momentum (p' - p) and p = p'.
    virtual void tvDual(const BatchVector& x, double step, double momentum, BatchVector& p, BatchVector& r) = 0;

    /// Moves the rotation axis (offsets: empty or one per angle); the
    /// vectors keep their values. Throws InvalidArgument.
    virtual void setAxis(double axis, std::span<const double> offsets) = 0;

protected:
    /// Validates the geometry (the region is ignored). `tvPlanes`: planes
    /// of a volume stacked in the slice's rows (1: a slice), dividing them.
    ProjectorPair(const ReconGeometry& geometry, const FilterOptions& filter, bool matched, int tvPlanes = 1);

    /// Throws InvalidArgument unless v holds `space` vectors.
    static void requireSpace(const BatchVector& v, Space space, const char* what);
    /// Throws InvalidArgument unless a and b hold the same number of slices.
    static void requireSameCount(const BatchVector& a, const BatchVector& b, const char* what);
    /// Throws InvalidArgument unless the span holds v.count() values.
    static void requirePerSlice(std::span<const double> values, const BatchVector& v, const char* what);
    /// The TV steps' arguments: `images` image vectors and `duals` TV dual
    /// vectors, all of as many slices. Throws InvalidArgument.
    static void requireTvVectors(std::initializer_list<const BatchVector*> images,
                                 std::initializer_list<const BatchVector*> duals, const char* what);
    /// Values of one slice of `space`.
    std::size_t sliceValues(Space space) const;
    /// Throws InvalidArgument unless 1 <= count <= maxSlices().
    void requireCount(int count) const;
    /// Throws InvalidArgument unless `values` holds v's slices.
    void requireHostValues(std::span<const float> values, const BatchVector& v, const char* what) const;

    ReconGeometry m_geometry;
    FilterOptions m_filter;
    bool m_matched;
    int m_tvPlanes = 1;
};

/// Data consistency of one slice: how well an image (from any method, FBP
/// included) explains the measured data.
struct Reprojection {
    std::vector<float> projected;  ///< A x, [angle][bin]
    std::vector<float> difference; ///< measured - A x
    double norm = 0.0;             ///< ||measured - A x||
    double relativeNorm = 0.0;     ///< ||measured - A x|| / ||measured|| (0 for measured = 0)
};

/// Forward projects `image` (one slice on the pair's full grid, [row][column])
/// and compares it with `measured` ([angle][bin]). Throws InvalidArgument
/// naming the sizes when either does not fit the pair's geometry.
Reprojection reproject(ProjectorPair& pair, std::span<const float> image, std::span<const float> measured);

/// The CPU pairs (the registry's cpu-reference and cpu backends make them).
/// `threads` as ReconOptions::threads. Throws InvalidArgument.
std::unique_ptr<ProjectorPair> makeReferenceProjector(const ReconGeometry& geometry, const FilterOptions& filter,
                                                      const IterativeOptions& options, int threads);
std::unique_ptr<ProjectorPair> makeCpuProjector(const ReconGeometry& geometry, const FilterOptions& filter,
                                                const IterativeOptions& options, int threads);

/// SIRT's weights of the Joseph pairs (parallel and divergent beam, CPU and
/// GPU): ray and pixel sums below this (in pixels of path, ~ a ray grazing
/// a corner) weigh 0, as rays that miss the grid.
inline constexpr double kMinWeightSum = 1e-3;
/// SIRT's weights of the Fourier pairs: ray and pixel sums below this (half
/// a pixel of path) weigh 0. The gridding's ringing leaves rays that miss
/// the grid small sums instead of 0, which 1 / sum would blow up.
inline constexpr double kFourierMinWeightSum = 0.5;

/// The Fourier pair (ProjectorKind::Fourier) on the CPU (FFTW, the pair's
/// threads; projector_fourier.cpp), the twin of the CUDA one. With gridrec's
/// Setup S of the geometry (default Parameters; tomo/gridrec.h), for two
/// slices at once packed as the real and imaginary parts (a lone slice:
/// imaginary part 0):
///   back(y) = gridrec's back-projection of the unfiltered, unweighted rows:
///     c_p = y_a,p + i y_b,p zero-extended to L -> DFT_L (e^-) -> the phased
///     samples (gridrec::phaseSamples) -> spread onto the G x G grid ->
///     inverse DFT_2D (e^+, unnormalised) -> crop x deapodisation;
///     a = real part, b = imaginary part.
///   forward(x) = its adjoint, step by step in reverse: (a + i b) x
///     deapodisation placed on the zero grid -> DFT_2D (e^-) -> each
///     sample the kernel-weighted sum of the grid points it was spread
///     onto (gridrec::interpolateSamples) -> band x conj(phase), summed into
///     its spectrum bin (gridrec::foldSamples) -> inverse DFT_L (e^+) ->
///     bins 0..bins-1; y_a = real part, y_b = imaginary part.
/// So back() approximates the FBP back-projectors' linear interpolation (the
/// pixel-driven triangle; 5e-4 to 3e-3 on a phantom's sinogram, 2-4 % on
/// random data) and forward() the pixel-driven projector
/// of unit-area triangles; <A x, y> = <x, A^T y> to float rounding. Throws
/// InvalidArgument as the CPU pairs, and for options.matched false.
std::unique_ptr<ProjectorPair> makeFourierCpuProjector(const ReconGeometry& geometry, const FilterOptions& filter,
                                                       const IterativeOptions& options, int threads);

/// The fan-beam pair: Joseph's projector along the divergent rays of a
/// one-row flat detector (cone_geometry.h's matrices, the sources and the
/// detector row in the plane of the one-slice `grid`) and its exact
/// transpose; sinograms are views x columns, images grid.ny x grid.nx (mu
/// times the voxel size for line-integral data, as FDK's). On the CPU
/// (`gpu` unset: double, `threads`, projector_fan.cpp) or on GPU `*gpu`
/// (float vectors, the samples in double, the transpose by atomic
/// additions: equal to the CPU pair's to ~1e-6, not bit for bit from run
/// to run; kernels/cuda/divergent_projector.h). filteredBackprojection() is
/// FDK (refused by it for a scan short of 180 degrees + the fan);
/// setAxis() is refused. Throws InvalidArgument for more than one row or
/// slice, an unmatched back-projector, views outside the slice's plane, a
/// grid not in front of every source; DeviceError for a GPU in a build
/// without CUDA (or without that device), OutOfMemory.
std::unique_ptr<ProjectorPair> makeFanProjector(const ConeGeometry& geometry, const VolumeGrid& grid,
                                                const IterativeOptions& options, int threads,
                                                std::optional<int> gpu = std::nullopt);

/// The cone-beam pair (a detector of one row is the fan-beam pair):
/// Joseph's projector along the rays of the projection matrices through the
/// whole grid, stepped along x or y with the volume interpolated bilinearly
/// across the ray, and its exact transpose, on the CPU or a GPU as the fan
/// pair. One vector slice is the whole volume: images nx x (ny nz)
/// ([z][y][x]), sinograms views x (rows columns) ([view][row][column]).
/// filteredBackprojection() is FDK; its TV is the volume's (tvAxes() 3).
/// Throws as the fan pair, InvalidArgument for rays steeper along z than
/// across it (a cone over 45 degrees).
std::unique_ptr<ProjectorPair> makeConeProjector(const ConeGeometry& geometry, const VolumeGrid& grid,
                                                 const IterativeOptions& options, int threads,
                                                 std::optional<int> gpu = std::nullopt);

/// The GPU's divergent-beam pair, which a build with CUDA provides (the
/// backend registry installs it when it is created;
/// BackendRegistry::instance()), for geometries makeConeProjector checked.
using ConeGpuProjector = std::unique_ptr<ProjectorPair> (*)(const ConeGeometry& geometry, const VolumeGrid& grid,
                                                            const IterativeOptions& options, int device);
void setConeGpuProjector(ConeGpuProjector projector);

} // namespace tomo
