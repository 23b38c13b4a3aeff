// gridrec: Fourier-domain reconstruction by gridding (the Fourier slice
// theorem with a non-uniform FFT; Marone & Stampanoni 2012, Beatty et al.
// 2005), shared by the CPU plan (core/src/recon/gridrec_cpu.cpp) and the
// CUDA plan (kernels/cuda/gridrec_plan.cpp).
//
// It computes what FBP with linear interpolation computes,
//   f(x, y) = sum_p q_p(x cos a_p - y sin a_p + axis_p),
// q_p the filtered, weighted row p (the same filter and angular weights as
// every strategy), but in frequency:
//
//   setSinograms: per pair of slices, row p of slice 2j + i * row p of slice
//     2j + 1, zero-extended to `rowLength` L bins -> 1D FFT Q_p[k] (kept).
//   backproject:  sample |k| < B L of row p is the frequency
//     nu = k / L cycles per bin along the direction (cos a_p, -sin a_p), with
//       c = Q_p[k mod L] * sinc^2(nu) / L * exp(2 pi i nu T_p)
//     (sinc^2 = linear interpolation's response, kept over |nu| < B: its
//     base band and images, B = `band` in 1..2; the phase ramp puts the row's
//     axis_p, and the half pixel of even grids, T_p, at the origin) -> spread onto a G x G
//     grid (G ~ oversampling x the slice) with a Kaiser-Bessel kernel W
//     cells wide, folded round the torus -> 2D inverse FFT -> divide by the
//     kernel's Fourier transform (deapodisation) -> crop the slice: the real
//     part is slice 2j, the imaginary part slice 2j + 1.
//
// The row length L makes the periodic row long enough that no pixel reads
// the data of the next period: L >= max_p(axis_p + R + 1, bins - axis_p + R)
// (+ 2 for the band limit's ringing), R the farthest pixel from the axis.
// An axis move beyond that needs a longer row (Setup::rowLengthNeeded).
//
// Sample rows are kept in "canonical" order: angles modulo pi, ascending; a
// row of a view at a + pi is stored reversed (k -> -k), so row i's sample k
// lies at k * (dirX[i], dirY[i]) grid cells. The gather (gridrec_gather.h)
// finds a grid point's rows by angle; the CPU spreads them row by row.
#pragma once

#include "tomo/backend.h"
#include "tomo/geometry.h"
#include "tomo/gridrec_gather.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tomo::gridrec {

/// Registry names: the CUDA plan and its CPU twin.
inline constexpr const char* kCudaName = "gridrec";
inline constexpr const char* kCpuName = "cpu-gridrec";

/// Kernel parameters: ReconOptions::tuning "kernel=W,oversampling=S,band=B".
struct Parameters {
    /// Kernel width in grid cells, 2..16. The default 4 keeps the gridding
    /// error under 1e-3 of FBP's result (README, "gridrec").
    int kernelWidth = 4;
    /// Grid size over the slice size, 1.25..3 (rounded up to an FFT size).
    double oversampling = 2.0;
    /// Cycles per bin of linear interpolation's response kept, 1..2: the
    /// samples (and the gridding) grow with it, the difference to FBP's
    /// linear interpolation falls. The default 1.75 keeps that difference
    /// under 1e-2 on the phantoms and the tooth scan (band 1: up to 1.9 %;
    /// README, "gridrec").
    double band = 1.75;
};
inline constexpr int kMinKernelWidth = 2;
inline constexpr int kMaxKernelWidth = 16;
inline constexpr double kMinOversampling = 1.25;
inline constexpr double kMaxOversampling = 3.0;
inline constexpr double kMinBand = 1.0;
inline constexpr double kMaxBand = 2.0;

/// Parses `tuning` (empty = the defaults). Throws InvalidArgument naming the
/// strategy, the key and the accepted values.
Parameters parseParameters(std::string_view strategy, std::string_view tuning);
/// Throws InvalidArgument naming `strategy` and the option unless `options`
/// ask for what gridrec computes: linear interpolation (it reproduces FBP's
/// linear interpolation in frequency), float32, 1, 2 or 4 slices per pass
/// (accepted; two slices always share one transform), a valid tuning.
/// Returns the parsed tuning.
Parameters checkOptions(std::string_view strategy, const ReconOptions& options);
/// "kernel=4,oversampling=2,band=1.75" (canonical text; parseParameters reads it back).
std::string parametersText(const Parameters& parameters);
/// The parameter sets `auto` times (with --allow-approximate), the default first.
std::vector<std::string> tuningCandidates();

/// The method's sizes and tables for one reconstruction geometry (host
/// memory; the CUDA plan uploads them).
struct Setup {
    /// `minRowLength`: at least this row length (a plan growing its rows).
    /// Throws InvalidArgument for an invalid geometry.
    Setup(const ReconGeometry& geometry, const Parameters& parameters, int minRowLength = 0);

    Parameters parameters;
    int bins = 0;
    int projections = 0;
    int width = 0;       ///< slice grid
    int height = 0;
    int gridSize = 0;    ///< G: a multiple of 8, 7-smooth
    int rowLength = 0;   ///< L: even, 7-smooth
    int shiftX = 0;      ///< grid position of pixel column ix is ix - shiftX (width / 2)
    int shiftY = 0;
    double beta = 0.0;   ///< Kaiser-Bessel shape
    float halfWidth = 0.0f;
    /// Kernel (value, slope) pairs at d = i / kTableScale, i = 0..tableLast.
    std::vector<float> table;
    int tableLast = 0;
    /// 1 / (kernel's Fourier transform) at each slice column / row.
    std::vector<float> deapodizeX;
    std::vector<float> deapodizeY;
    /// sinc^2(k / L) / L for k = -lastSample()..lastSample() (index k + lastSample()).
    std::vector<float> band;
    /// Canonical order (see above): acquisition index, reversed or not,
    /// direction and reciprocals, angle bins (GatherView).
    std::vector<int> canonical;
    std::vector<unsigned char> reversed;
    std::vector<double> dirX, dirY;
    std::vector<float> invX, invY;
    std::vector<int> binStart;

    /// The largest |k| of a sample row: ceil(B L) - 1 (|k / L| < B).
    int lastSample() const { return m_lastSample; }
    /// Complex values per kept sample row (2 lastSample() + 1, rounded up to even).
    int sampleStride() const { return 2 * m_lastSample + 2; }
    /// The row length the axis positions of `g` need (see above).
    int rowLengthNeeded(const Geometry& g) const;
    /// T of each canonical row: axis_p + the half-pixel shift of even grids
    /// along the view's direction, negated for reversed rows, so that the
    /// row's sample k has the phase exp(2 pi i k T / L).
    std::vector<double> phaseShifts(const Geometry& g) const;
    /// The gather's view of these tables over `samples` (host memory).
    GatherView gatherView(const float* samples) const;

    /// Bytes of one pair's kept spectra, sample rows and grid (complex float).
    std::size_t spectrumBytes() const;
    std::size_t samplesBytes() const;
    std::size_t gridBytes() const;

private:
    int m_lastSample = 0;
    double m_radius = 0.0; ///< farthest pixel centre from the axis
    double m_halfX = 0.0;  ///< shiftX - (width - 1) / 2: 0 or 0.5
    double m_halfY = 0.0;
    std::vector<double> m_cos, m_sin; ///< acquisition order
};

/// The row length Setup would choose for this geometry (for memory sizing).
int rowLengthFor(const ReconGeometry& geometry);

} // namespace tomo::gridrec
