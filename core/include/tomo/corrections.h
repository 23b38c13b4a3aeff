// The real-data corrections of the preprocessing stage, each a function over
// plain float arrays with its definition stated exactly (window sizes, edge
// handling, tie rules, order of operations), so that another implementation
// (the GPU port) can reproduce it to 1e-5 relative. PreprocessingStage
// (preprocess.h) chains them; the options say which run.
//
//   raw counts ─► flat/dark (flat groups interpolated by projection index)
//              ─► dead / zero / saturated values masked, interpolated along the row
//              ─► zingers replaced by their local median
//              ─► beam-intensity normalisation (optional background columns)
//              ─► stripe (ring) removal on each sinogram of transmissions
//              ─► Paganin phase retrieval (whole projections, transmission in and out)
//              ─► -log
//              ─► 360° half-acquisition stitching
// Stripes are removed before the log, where Vo et al.'s methods work (as in
// algotom's workflow: their stripe ratios and the large-stripe normalisation
// model a detector gain, and air is 1, not 0); data that arrive
// log-corrected get the same steps on their line integrals. The wavelet
// method is linear and can overshoot below 0: it runs on the logs of the
// transmissions (exp of the result taken back), where a gain is an additive
// stripe and no value is impossible.
//
// Layouts: a sinogram is [projection][column] (value of projection a,
// column c at a * columns + c); a projection block is [detector row][column].
// Functions that take a WorkerPool split their work over it (nullptr = the
// calling thread only); results do not depend on the thread count.
// Tests: tests/core/test_corrections*.cpp.
#pragma once

#include "tomo/image.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tomo {

class WorkerPool;

// ============================================================== options

/// Stripe (ring) removal methods: Vo, Atwood & Drakopoulos, Opt. Express 26,
/// 28396 (2018), algorithms 3 (sorting), 5 (large), 6 (dead) and their
/// combination "all" (dead -> large -> sorting, as algotom's
/// remove_all_stripe; "dead" is algotom's remove_dead_stripe with
/// residual=False, its default True being dead -> large); Münch et al.,
/// Opt. Express 17, 8567 (2009) wavelet-Fourier filtering (algotom's
/// remove_stripe_based_wavelet_fft).
enum class RingMethod { Off, Sorting, Large, Dead, All, Wavelet };
/// "off", "sorting", "large", "dead", "all", "wavelet".
std::string_view ringMethodName(RingMethod m);
/// Inverse of ringMethodName; throws InvalidArgument listing the names.
RingMethod parseRingMethod(std::string_view name);

struct FlatFieldOptions {
    /// Beam-intensity normalisation: columns [first, first + count) of every
    /// projection see only the open beam; each (row, projection) line of
    /// transmissions is divided by their mean (line integrals: their mean is
    /// subtracted). count 0 = off.
    int backgroundFirst = 0;
    int backgroundCount = 0;
    /// Intensities without flat fields and without background columns, that
    /// look like raw counts (an integer type, or a mean above 2), are
    /// normalised by open-beam columns found in the data
    /// (findBackgroundColumns) - else the log of the counts shifts every line
    /// integral by -ln(open beam) and every slice value by about
    /// 2 ln(open beam) / (pi x the filter's padded length). Off: taken as
    /// they are.
    bool findBackground = true;
    bool operator==(const FlatFieldOptions&) const = default;
};

/// On by default: it only touches values that have no usable transmission
/// (which would otherwise be clamped to an arbitrary p = 11.5).
struct BadPixelOptions {
    bool enabled = true;
    /// Raw values >= saturation are masked, and flat pixels >= saturation make
    /// a dead pixel. 0 = the largest value of an integer sample type
    /// (255, 65535), no saturation for float data.
    double saturation = 0.0;
    bool operator==(const BadPixelOptions&) const = default;
};

struct ZingerOptions {
    bool enabled = false;
    /// A value is a zinger when it exceeds its local median by more than
    /// threshold x max(|median|, mean |value| of the sinogram) (see removeZingers).
    double threshold = 0.3;
    /// Odd window width (projections and columns), >= 3. 5 by default: a
    /// 3 x 3 median is outvoted by zingers of 3 or more neighbouring values
    /// (on the PSI basalt scan it left 0.21 of the outliers' energy, 5 x 5
    /// leaves 0.05; tests/core/test_corrections_pixels.cpp says how that is
    /// measured).
    int window = 5;
    bool operator==(const ZingerOptions&) const = default;
};

struct RingOptions {
    RingMethod method = RingMethod::Off;
    /// Stripe detection ratio (> 1; larger = less sensitive): large, dead, all.
    double snr = 3.0;
    /// Median window across columns of the sorting method (odd, >= 3): sorting, all.
    int sortingWindow = 21;
    /// Median window of the large/dead stripe detection (odd, >= 3): large, dead, all.
    int largeWindow = 51;
    /// Share of the sorted values dropped at each end when measuring stripe
    /// strength (0 ... 0.8): large, all.
    double dropRatio = 0.1;
    /// Wavelet decomposition levels (1 ... 20), at most what the padded
    /// sinogram allows (waveletPadding). Algotom's default 5: deeper levels
    /// also damp the coarse profile of the object across the columns, which
    /// shifts the slice's mean.
    int waveletLevel = 5;
    /// Width of the Gaussian damping of the wavelet method, in frequency
    /// samples (> 0). Algotom's default 1: the earlier 2 (with Daubechies 5
    /// and no level limit) halved the mean of a small object on the axis
    /// (Diamond I13 row 70).
    double waveletSigma = 1.0;
    bool operator==(const RingOptions&) const = default;
};

struct PaganinOptions {
    bool enabled = false;
    double deltaOverBeta = 0.0; ///< δ/β of the (assumed homogeneous) material, > 0
    double energyKeV = 0.0;     ///< photon energy, > 0
    double distanceM = 0.0;     ///< sample-detector propagation distance in metres, > 0
    double pixelSizeM = 0.0;    ///< detector pixel size in metres (at the sample), > 0
    bool operator==(const PaganinOptions&) const = default;
};

struct HalfAcquisitionOptions {
    bool enabled = false;
    /// Rotation axis on the detector (column, 0-based) of the 360° scan;
    /// unset = found automatically (findHalfAcquisitionAxis).
    std::optional<double> axis;
    /// Width of the matching window of the automatic search (>= 6 columns).
    int window = 100;
    bool operator==(const HalfAcquisitionOptions&) const = default;
};

/// Every correction the stage can run. Defaults: dead-pixel interpolation
/// on, everything else off.
struct CorrectionOptions {
    FlatFieldOptions flatField;
    BadPixelOptions badPixels;
    ZingerOptions zingers;
    RingOptions rings;
    PaganinOptions paganin;
    HalfAcquisitionOptions halfAcquisition;

    /// Only flat/dark + log with clamping (every correction off, dead pixels
    /// and the search for open-beam columns too).
    static CorrectionOptions none();

    /// Throws InvalidArgument naming the option (run-config key and CLI
    /// option) and what was expected. Checks that need the dataset (column
    /// ranges, log-corrected input) are made by PreprocessingStage.
    void validate() const;

    /// True when a correction runs between the flat field and the log
    /// (zingers, background columns, rings, Paganin). Flat field, dead
    /// pixels and the log alone are one pass over the values.
    bool betweenFlatFieldAndLog() const {
        return zingers.enabled || flatField.backgroundCount > 0 || rings.method != RingMethod::Off || paganin.enabled;
    }

    /// One line for logs and the CLI, e.g. "dead pixels, zingers (0.3, 3x3), rings all".
    std::string summary() const;

    bool operator==(const CorrectionOptions&) const = default;
};

// ========================================================== flat field

/// Where projection `projection` lies between the flat groups taken at
/// `positions` (DatasetInfo::flatPositions, non-decreasing): its flat is
/// (1 - weight) * group[lower] + weight * group[upper], linear in the
/// projection index; before the first / after the last group that group
/// alone (clamped). Groups at one position are averaged by the caller.
struct FlatBlend {
    int lower = 0;
    int upper = 0;
    double weight = 0.0;
};
/// Throws InvalidArgument for no positions or decreasing positions.
FlatBlend flatBlend(std::span<const double> positions, int projection);

/// Open-beam columns found in intensities without flats.
struct BackgroundColumns {
    int first = 0;
    int count = 0;           ///< 0: none found
    double openBeam = 0.0;   ///< the open-beam level (mean over projections of B(a) below)
};

/// Finds the columns that see only the open beam in every projection of
/// every sinogram of `intensities` (rows of [projection][column]
/// intensities, dark subtracted), at one edge of the detector:
///  1. per projection a, B0(a) = the largest 5-column running median of
///     its line (an upper estimate of its open beam);
///  2. noise s = 1.4826 median |Q(a, c+1) - Q(a, c)| / sqrt(2) of Q = I / B0;
///  3. candidates: columns whose median over the projections of Q is >= 1 -
///     6 s; B(a) = the mean of I over them;
///  4. a column is open beam when its values / B(a), averaged over 3
///     neighbouring projections (clamped), stay >= 1 - max(0.02, 6 s /
///     sqrt(3)) in every projection (an object dips there at least once);
/// the columns open in every sinogram, the longer of the runs that start at
/// column 0 and that end at the last column (the left one on a tie), less
/// 2 columns at its inner end (the object's penumbra); at least 4 columns,
/// else none (count 0; openBeam still estimated). Throws InvalidArgument
/// for an empty stack.
BackgroundColumns findBackgroundColumns(const std::vector<Image>& intensities);

// ========================================================== bad pixels

/// Replaces the values of `line` whose mask byte is non-zero by linear
/// interpolation between the nearest unmasked values to the left and right
/// (in column distance); masked values at an end take the nearest unmasked
/// value. Returns false (leaving `line` untouched) when every value is masked.
bool interpolateMasked(std::span<float> line, std::span<const std::uint8_t> mask);

// ============================================================= zingers

/// Position of a value in the dataset; projection -1 = a detector pixel
/// (every projection, e.g. a dead pixel found in the flats).
struct PixelPosition {
    int row = 0;
    int projection = -1;
    int column = 0;
    bool operator==(const PixelPosition&) const = default;
};

/// What the values are: zingers are excess counts, so they are bright in a
/// transmission and dark in a line integral.
enum class ValueKind { Transmission, LineIntegral };

/// Removes zingers from one sinogram (height = projections, width =
/// columns) or one flat row (height 1):
///   m(a, c) = median of the window x window values around (a, c), indices
///             clamped to the image (edge replication), window odd so the
///             median is the middle value of the sorted window;
///   s       = mean |value| over the whole image;
///   zinger  : value - m > threshold * max(|m|, s)   (Transmission)
///             m - value > threshold * max(|m|, s)   (LineIntegral);
/// zingers are replaced by m. All medians come from the input values (every
/// zinger is replaced at once, none sees another's replacement). Returns the
/// count; appends the (projection = image row, column) of each, in row-major
/// order, to `positions` until it holds `maxPositions`.
std::size_t removeZingers(std::span<float> image, int height, int width, const ZingerOptions& options, ValueKind kind,
                          std::vector<PixelPosition>* positions = nullptr, std::size_t maxPositions = 0,
                          WorkerPool* pool = nullptr);

// ===================================================== stripes / rings
//
// Shared definitions of the Vo et al. methods (algotom's):
//  * sorting a column: the projections' values of one column sorted
//    ascending, ties by projection index (stable); "sorting back" puts each
//    value where its rank came from;
//  * median across columns with window w (odd): the median of columns
//    c - w/2 ... c + w/2 of the same row, the row extended by half-sample
//    reflection (... x1 x0 | x0 x1 ... x[n-1] | x[n-1] x[n-2] ..., scipy's
//    "reflect"), repeated for windows longer than the row;
//  * detectStripes(ratios, snr) below; dilation by one column (a stripe
//    column marks its two neighbours too).

/// Algorithm 4: marks the outliers of `ratios` (one per column). The values
/// are sorted; a least-squares line y = b + k x is fitted to the sorted
/// values at x = n/4 ... n - n/4 - 2 (n/4 rounded down); y_end = b + k (n - 1),
/// noise = max(|y_end - b|, 1e-5) (the floor lets noise-free data through,
/// where algotom refuses). If (max - y_end) / noise >= snr, values
/// > y_end + noise * snr / 2 are marked; if (b - min) / noise >= snr, values
/// <= b - noise * snr / 2 are marked. No mark for fewer than 8 values.
std::vector<std::uint8_t> detectStripes(std::span<const float> ratios, double snr);

/// Algorithm 3 (remove_stripe_based_sorting, dim 1): sort each column, take
/// the median across columns (window) of the sorted image, sort back.
void removeStripesSorting(std::span<float> sinogram, int projections, int columns, int window,
                          WorkerPool* pool = nullptr);

/// Algorithm 5 (remove_large_stripe, norm on): sort each column; smoothed =
/// median across columns (window) of the sorted image; d = int(dropRatio *
/// projections / 2); ratio[c] = mean of sorted[d .. P-d-1][c] / mean of
/// smoothed[d .. P-d-1][c] (1 where the latter is 0); every column is divided
/// by its ratio; columns marked by detectStripes(ratio, snr) (dilated) are
/// replaced by their smoothed values sorted back.
void removeLargeStripes(std::span<float> sinogram, int projections, int columns, double snr, int window,
                        double dropRatio, WorkerPool* pool = nullptr);

/// Algorithm 6 (remove_dead_stripe, residual off): smooth[a][c] = mean of
/// the 10 values a-5 ... a+4 of column c (reflected at the ends, scipy's
/// uniform_filter1d); diff[c] = sum over a of |value - smooth|; background =
/// 1D median (window, reflected) of diff, zeros replaced by its mean |.|;
/// columns marked by detectStripes(diff / background, snr), dilated, except
/// the first two and last two, are replaced in every row by linear
/// interpolation between the nearest unmarked columns - only when fewer than
/// columns / 3 are marked.
void removeDeadStripes(std::span<float> sinogram, int projections, int columns, double snr, int window,
                       WorkerPool* pool = nullptr);

/// Münch et al. as algotom's remove_stripe_based_wavelet_fft (its defaults
/// db9, level 5, size 1 = sigma): the sinogram is padded (waveletPadding) by
/// `pad` rows of each column's mean above and below, then by `pad` copies of
/// the edge columns left and right; waveletPadding(...).levels times a 2D
/// Daubechies-9 DWT (pywt's dwt2, "symmetric" extension: lengths n -> (n +
/// 17) / 2) splits off the details; each vertical-detail band (high-pass
/// across columns, low-pass along projections) of height m is damped along
/// its projection axis: FFT of each column, coefficient k (0 <= k <= m/2)
/// times waveletDamping(k, m, sigma), inverse FFT. The inverse DWT (each
/// approximation cropped to its detail size first) and a crop to the input
/// give the result. A sinogram too small for one level is left as it is.
/// Linear: the stage runs it on line integrals (so no transmission can
/// become <= 0; a detector gain is an additive stripe there).
void removeStripesWavelet(std::span<float> sinogram, int projections, int columns, int level, double sigma,
                          WorkerPool* pool = nullptr);

/// The padded shape of removeStripesWavelet: pad = min(150, floor(0.1 x
/// min(projections, columns))), height and width the padded sizes, levels =
/// min(level, floor(log2(min(height, width) / 16))) (0 below 32), algotom's.
struct WaveletPadding {
    int pad = 0;
    int height = 0;
    int width = 0;
    int levels = 0;
};
WaveletPadding waveletPadding(int projections, int columns, int level);

/// The damping of frequency k (0 <= k <= n / 2) of a vertical-detail column
/// of n values: algotom multiplies the centred spectrum by the window
/// w(x) = 1 - exp(-x^2 / (2 sigma^2)), x = i - (ceil(n / 2) - 1) at index
/// i, and keeps the real part of the inverse, which is the spectrum times
/// (w(k + s) + w(s - k)) / 2 with s = 1 for even n, 0 for odd n (for even
/// n, w(s - k) alone at k = n / 2). So even columns keep 1 - exp(-1 / (2
/// sigma^2)) of their zero frequency (0.39 for sigma 1).
double waveletDamping(int k, int n, double sigma);

/// The method chosen in `options` (nothing for Off). removeStripes with
/// All = removeDeadStripes(snr, largeWindow), removeLargeStripes(snr,
/// largeWindow, dropRatio), removeStripesSorting(sortingWindow).
void removeStripes(std::span<float> sinogram, int projections, int columns, const RingOptions& options,
                   WorkerPool* pool = nullptr);

/// Daubechies-9 decomposition low-pass filter (pywt's db9 dec_lo, 18 taps);
/// the other three filters follow by the quadrature-mirror relations.
std::span<const double> daubechies9();

// ================================================== ring damage guard
//
// What a stripe removal changed that is not a stripe. A stripe is constant
// along the angles; an object's sinogram is not (except where it is centred
// on the axis, and then its integral tells). Of one sinogram, in line
// integrals (transmissions T as p = -log max(T, kMinTransmission)):
//   D = p after - p before;
//   x~ = x smoothed by a box of 2 ha + 1 projections (ha = max(1,
//        round(0.04 P)), indices clamped) and of 2 hc + 1 columns (hc = 3,
//        clamped): noise, independent per value, is averaged away, an
//        object's change is not; a stripe stays constant along the angles;
//   noise^2 of x = (1.4826 median |x(a, c+1) - x(a, c)|)^2 / 2 (the median
//        of a histogram of the float bits: bins of 1/16 of an octave,
//        linear inside the bin), g = 1 / ((2 ha + 1)(2 hc + 1)) its share
//        that survives the smoothing;
//   signal    = sum over a, c of (p~ - mean over a of p~)^2 - P N g noise^2(p)
//               (the object's angular variation; at least P N g noise^2(p));
//   nonStripe = sqrt(max(0, sum (D~ - mean over a of D~)^2 - P N g
//               noise^2(D)) / signal): the share of the object's angular
//               signal that the removal changed (0 when signal is 0);
//   meanChange = sum D / sum |p|: the relative change of the object's
//               integral (the slice's mean).
// Measured with algotom's functions on the real scans: the tooth with dead,
// large, all 0.08-0.11 or a mean change of 0.4-0.6 %, I13 row 70 with
// sorting 0.16 and -2.7 %, all 0.46 and -15 %; the dendrites with sorting
// 0.013 and -0.01 %, the wavelet method <= 0.04 everywhere.

/// Half-widths of the guard's smoothing box.
int ringGuardAngles(int projections);
inline constexpr int kRingGuardColumns = 3;
/// Bins of the guard's noise histograms: float bits >> kRingNoiseShift of
/// a value >= 0.
inline constexpr int kRingNoiseShift = 19;
inline constexpr int kRingNoiseBins = 1 << (31 - kRingNoiseShift);

/// The sums over one sinogram that ringChange turns into figures (the GPU
/// computes them on the device, ringChangeSums on the host).
struct RingChangeSums {
    int projections = 0, columns = 0;
    double signalEnergy = 0.0;    ///< sum over columns of sum over a of (p~ - mean p~)^2
    double nonStripeEnergy = 0.0; ///< the same of D~
    double lineIntegralSum = 0.0; ///< sum |p|
    double changeSum = 0.0;       ///< sum D
    /// Histograms (kRingNoiseBins) of |p(a, c+1) - p(a, c)| and of D's.
    std::vector<std::uint32_t> signalSteps, changeSteps;
};

/// One sinogram's figures.
struct RingChange {
    double nonStripe = 0.0;
    double meanChange = 0.0;
};

/// The sums of one sinogram before and after a stripe removal (kind: what
/// the values are). Throws InvalidArgument for sizes that do not match.
RingChangeSums ringChangeSums(std::span<const float> before, std::span<const float> after, int projections,
                              int columns, ValueKind kind, WorkerPool* pool = nullptr);
RingChange ringChange(const RingChangeSums& sums);

// ============================================================= Paganin

/// Paganin et al., J. Microsc. 206, 33 (2002), single distance: on the
/// flat-corrected transmission T of a whole projection,
///   T' = F^-1[ F[T] / (1 + alpha (kx^2 + ky^2)) ],
///   alpha = distance * wavelength * (delta/beta) / (4 pi),
///   wavelength = 1.23984193e-9 m keV / energy, k = 2 pi f / pixelSize
/// with f the FFT frequency in cycles per pixel; the stage then takes
/// -log(T') (so it acts on intensities, before the log).
/// The block (rows x columns) is extended by repeating its edge rows and
/// columns to rows + 2 margin and columns + 2 margin, then to the next
/// length whose prime factors are 2, 3, 5, 7 (extension split evenly, the
/// extra one after), transformed with FFTW (single precision).
/// The padded transform of PaganinFilter(rows, columns, options): sizes,
/// where the block sits in it, alpha and the squared angular frequencies
/// (what a GPU twin needs to filter exactly as the CPU does).
struct PaganinTransform {
    int rows = 0, columns = 0;
    int paddedRows = 0, paddedColumns = 0;
    int top = 0, left = 0; ///< the block's first row and column in the padded one
    double alpha = 0.0;
    std::vector<double> ky2; ///< (2 pi f / pixelSize)^2 of each padded row
    std::vector<double> kx2; ///< the same for columns 0 ... paddedColumns / 2 (the r2c half spectrum)
};

class PaganinFilter {
public:
    /// The transform of a filter of this shape. Throws InvalidArgument for
    /// non-positive parameters or sizes.
    static PaganinTransform transform(int rows, int columns, const PaganinOptions& options);

    /// Throws InvalidArgument for non-positive parameters or sizes.
    PaganinFilter(int rows, int columns, const PaganinOptions& options);
    ~PaganinFilter();
    PaganinFilter(const PaganinFilter&) = delete;
    PaganinFilter& operator=(const PaganinFilter&) = delete;

    /// Decay length of the filter's kernel in pixels, sqrt(alpha) / pixelSize:
    /// its profile along one axis is exp(-|y| / length) / (2 length).
    static double kernelLength(const PaganinOptions& options);
    /// Rows needed above and below a block so that the rows beyond carry
    /// less than 1e-8 of the kernel: ceil(length * ln(1e8)), at least 1.
    static int margin(const PaganinOptions& options);

    int rows() const;
    int columns() const;

    /// Filters a rows x columns block ([row][column]) in place.
    /// Thread-safe: several threads may filter different blocks at once.
    void apply(std::span<float> block) const;

private:
    struct Impl;
    Impl* m_impl = nullptr;
};

// ================================================ 360° half acquisition

/// How a 360° scan with the axis near one detector edge becomes a
/// double-width 180° sinogram (Vo et al., Opt. Express 29, 17849 (2021);
/// algotom's convert_sinogram_360_to_180, with exact sub-pixel sampling).
///  * views: the projections with angle < first angle + pi (minus 1e-6 rad);
///    each one's partner is the sinogram interpolated linearly in angle at
///    angle + pi (between the two projections around it; beyond the last
///    projection, between it and the first at + 2 pi; a weight within 1e-6
///    of 0 or 1 takes the nearer projection alone);
///  * R = max(axis, columns - 1 - axis), r = min(...): the output has
///    width 2 floor(R) + 1 and its axis at its centre floor(R); output
///    column j is at distance s = j - floor(R) from the axis;
///  * the view is sampled at detector column axis + s, the partner at
///    axis - s (linear interpolation, the edge column beyond the detector);
///  * where both see s (|s| <= r) they are blended with a linear ramp: the
///    weight of the view is (s + r) / (2 r) when the axis is in the left
///    half (the view covers s >= -r), (r - s) / (2 r) otherwise (for r < 0.5
///    the view alone on its side of the axis); elsewhere the one that sees s.
struct HalfAcquisitionLayout {
    double axis = 0.0; ///< the 360° scan's axis (input column)
    int inputColumns = 0;
    int columns = 0;                             ///< output width 2 floor(R) + 1
    double outputAxis = 0.0;                     ///< floor(R): the centre of the output
    std::vector<int> views;                      ///< input projection of each output row
    std::vector<int> partnerLower, partnerUpper; ///< projections the partner is interpolated from
    std::vector<float> partnerWeight;            ///< weight of partnerUpper
    std::vector<double> angles;                  ///< output angles (radians) = the views'
};

/// Throws InvalidArgument when the angles do not increase, do not cover
/// 360° (last - first >= 2 pi - 2.5 mean steps), or the axis is outside
/// the detector.
HalfAcquisitionLayout planHalfAcquisition(const std::vector<double>& angles, int columns, double axis);

/// out = the stitched sinogram ([view][column], layout.views.size() x
/// layout.columns) of `sinogram` ([projection][column] of the 360° scan).
/// Throws InvalidArgument for spans of the wrong size.
void stitchHalfAcquisition(std::span<const float> sinogram, const HalfAcquisitionLayout& layout, std::span<float> out);

struct HalfAcquisitionAxis {
    double axis = 0.0;      ///< detector column of the rotation axis
    double overlap = 0.0;   ///< width of the overlap of view and mirrored partner
    bool axisOnLeft = true; ///< the axis is in the left half of the detector
    /// 0..1: how clearly the best match stands out (1 - best / median metric).
    double confidence = 0.0;
};

/// Finds the axis of a 360° scan (after algotom's find_center_360 /
/// find_overlap, Vo et al. 2021): views V and mirrored partners M (partners
/// flipped left to right), both smoothed by a Gaussian of sigma 2 px in both
/// directions (radius 8, half-sample reflection at the edges). For each
/// overlap o = 6 ... columns (the columns both see) and w = min(window, o),
/// window clamped to columns / 2 - 1: with the axis on the left, V's columns
/// [o - w, o) are compared with M's last w columns; on the right, V's
/// columns [n - o, n - o + w) with M's first w (algotom slides a fixed
/// window, which cannot find overlaps narrower than it). Metric = 1 -
/// Pearson correlation. The minimum is refined by a parabola through it and
/// its neighbours; the side whose metric (divided by its minimum) has the
/// larger curvature (5-point parabola fit) wins. Axis = o/2 - 0.5 (left) or
/// columns - o/2 - 0.5 (right).
/// Throws InvalidArgument as planHalfAcquisition, or for a window < 6 or
/// wider than half the detector.
HalfAcquisitionAxis findHalfAcquisitionAxis(const Image& sinogram, const std::vector<double>& angles, int window);

} // namespace tomo
