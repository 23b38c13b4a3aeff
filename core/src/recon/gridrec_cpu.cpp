// "cpu-gridrec": gridrec on the CPU (FFTW, the plan's threads), the twin of
// the CUDA "gridrec" and the tests' reference for it (the method:
// tomo/gridrec.h).
//
//   setSinograms: CpuPlan filters and weights the rows -> prepare(): per pair
//     of slices and view, the complex row zero-extended to L -> 1D FFT (kept)
//   backproject: per pair: phased samples -> spread (bands of grid rows in
//     parallel) -> inverse FFT of every grid row, then of the columns the
//     slice needs -> deapodised whole slices (kept); the region is cropped
//     from them. A call for another region of the same slices, axis and
//     offsets (the live preview's bands) only crops; a call for the same
//     region computes again (so timings stay honest). An axis that needs
//     longer rows (its pixels would read the next period of the row)
//     rebuilds the spectra first.
#include "recon/gridrec_cpu.h"

#include "tomo/cpu_backends.h"
#include "tomo/error.h"

#include "cpu_clones.h"
#include "recon/cpu_plan.h"
#include "recon/fftw_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

namespace tomo {

namespace gridrec {

namespace {

using Complex = std::complex<float>;
constexpr double kTwoPi = 2.0 * std::numbers::pi;
constexpr int kBandRows = 16;   ///< grid rows per spreading task
constexpr int kColumnBlock = 8; ///< columns per column-FFT task: 64 bytes of each row, one cache line

/// exp(2 pi i turns) with the whole turns removed first (in double).
void unitPhase(double turns, double& re, double& im) {
    const double f = turns - std::floor(turns);
    re = std::cos(kTwoPi * f);
    im = std::sin(kTwoPi * f);
}

/// floor(x) for |x| < 2^31 (std::floor is a library call on baseline x86-64).
inline int floorToInt(double x) {
    const int i = static_cast<int>(x);
    return i - (x < i);
}

/// The first grid column of the window of the sample at x = k ax, the sample
/// folded into [0, G) (the window may reach the margins), and that column's
/// offset from the sample (spreadRow and interpolateRow: the same weights).
inline int windowColumn(int k, double ax, int g, double hw, float& dx0) {
    double ux = k * ax; // |ux| < B G
    while (ux < 0.0) ux += g;
    while (ux >= g) ux -= g;
    const int jx0 = floorToInt(ux - hw) + 1;
    dx0 = static_cast<float>(jx0 - ux);
    return jx0;
}

/// out[t] += a[t] * b[t] for t < N, four at a time (the compiler left the
/// loop scalar: a store to `out` might change the weights' table).
template <int N>
inline void addProducts(float* out, const float* a, const float* b) {
    using Float4 = float __attribute__((vector_size(16)));
    int t = 0;
    for (; t + 4 <= N; t += 4) {
        Float4 o, x, y;
        std::memcpy(&o, out + t, sizeof o);
        std::memcpy(&x, a + t, sizeof x);
        std::memcpy(&y, b + t, sizeof y);
        o += x * y;
        std::memcpy(out + t, &o, sizeof o);
    }
    for (; t < N; ++t) out[t] += a[t] * b[t];
}

/// Adds the samples of canonical row i that reach grid rows [r0, r1). The
/// kernel width W is a template parameter: the window's loops unroll and
/// its W complex values go through the vector unit at once.
template <int W>
TOMO_CPU_CLONES void spreadRow(const Setup& s, int i, const Complex* samples, Complex* grid, std::size_t stride,
                               int r0, int r1) {
    const int g = s.gridSize;
    const int last = s.lastSample();
    const double hw = 0.5 * W;
    const double ax = s.dirX[i];
    const double ay = s.dirY[i];
    const float* table = s.table.data();
    const int tableLast = s.tableLast;
    const Complex* row = samples + static_cast<std::size_t>(i) * s.sampleStride() + last;
    float wx[2 * W]; // each weight twice: for the real and the imaginary part
    // Grid row j also stands for j + b G: the samples (|y| < B G) reach it
    // for b in -(ceil(B)+1)..ceil(B).
    const int copies = static_cast<int>(std::ceil(s.parameters.band));
    for (int b = -copies - 1; b <= copies; ++b) {
        const double yLo = r0 + static_cast<double>(b) * g - hw; // the sample's y lies in (yLo, yHi)
        const double yHi = r1 - 1 + static_cast<double>(b) * g + hw;
        int k0 = -last, k1 = last;
        if (std::abs(ay) < kParallel) {
            if (!(yLo < 0.0 && 0.0 < yHi)) continue;
        } else {
            const double t1 = std::clamp(yLo / ay, -1.0 - last, 1.0 + last);
            const double t2 = std::clamp(yHi / ay, -1.0 - last, 1.0 + last);
            k0 = std::max(k0, -floorToInt(-std::min(t1, t2)));
            k1 = std::min(k1, floorToInt(std::max(t1, t2)));
        }
        // The next row's samples for this band lie about where this row's
        // do (its angle is next): asked for now, they arrive while this row
        // is spread (the rows' short runs defeat the hardware's prefetch).
        if (i + 1 < s.projections)
            for (int k = k0; k <= k1; k += 64 / static_cast<int>(sizeof(Complex)))
                __builtin_prefetch(row + s.sampleStride() + k);
        for (int k = k0; k <= k1; ++k) {
            const double py = k * ay - static_cast<double>(b) * g;
            const int jy0 = std::max(r0, floorToInt(py - hw) + 1);
            const int jy1 = std::min(r1 - 1, -floorToInt(-(py + hw)) - 1);
            if (jy0 > jy1) continue;
            float dx0 = 0.0f;
            const int jx0 = windowColumn(k, ax, g, hw, dx0);
            for (int t = 0; t < W; ++t) wx[2 * t] = wx[2 * t + 1] = kernelWeight(table, tableLast, dx0 + t);
            // Every weight and value before the first store: the stores are
            // floats, as the table is, so a load after one would be repeated.
            float wy[W];
            for (int jy = jy0; jy <= jy1; ++jy) wy[jy - jy0] = kernelWeight(table, tableLast, static_cast<float>(jy - py));
            const Complex v = row[k];
            for (int jy = jy0; jy <= jy1; ++jy) {
                float vv[2 * W]; // the value x wy, (re, im) W times: one vector operation per row
                for (int t = 0; t < W; ++t) {
                    vv[2 * t] = wy[jy - jy0] * v.real();
                    vv[2 * t + 1] = wy[jy - jy0] * v.imag();
                }
                float* out = reinterpret_cast<float*>(grid + static_cast<std::size_t>(jy) * stride + kGridPad + jx0);
                addProducts<2 * W>(out, wx, vv);
            }
        }
    }
}

using SpreadRow = void (*)(const Setup&, int, const Complex*, Complex*, std::size_t, int, int);

template <int... W>
SpreadRow spreadRowFor(int width, std::integer_sequence<int, W...>) {
    SpreadRow f = nullptr;
    ((width == W + kMinKernelWidth ? (f = &spreadRow<W + kMinKernelWidth>, 0) : 0), ...);
    return f;
}

} // namespace

void phaseSamples(const Setup& s, const Complex* spectra, std::size_t spectrumStride, std::span<const double> shifts,
                  Complex* samples, WorkerPool& pool) {
    const int length = s.rowLength;
    const int last = s.lastSample();
    const int count = 2 * last + 1;
    pool.parallelFor(s.projections, [&](int i, int) {
        const Complex* spectrum = spectra + static_cast<std::size_t>(s.canonical[i]) * spectrumStride;
        Complex* out = samples + static_cast<std::size_t>(i) * s.sampleStride();
        const bool reversed = s.reversed[i];
        // exp(2 pi i k T / L) from k = -last on, by steps of exp(2 pi i T / L).
        double zr, zi, sr, si;
        unitPhase(-last * shifts[i] / length, zr, zi);
        unitPhase(shifts[i] / length, sr, si);
        int j = ((reversed ? last : -last) % length + length) % length; // spectrum index of k = -last
        for (int n = 0; n < count; ++n) {
            const double b = s.band[n];
            const double vr = spectrum[j].real(), vi = spectrum[j].imag();
            out[n] = Complex(static_cast<float>(b * (vr * zr - vi * zi)), static_cast<float>(b * (vr * zi + vi * zr)));
            const double r = zr * sr - zi * si;
            zi = zr * si + zi * sr;
            zr = r;
            j = reversed ? (j == 0 ? length - 1 : j - 1) : (j + 1 == length ? 0 : j + 1);
        }
        std::fill(out + count, out + s.sampleStride(), Complex{});
    });
}

void spread(const Setup& s, const Complex* samples, Complex* grid, std::size_t stride, WorkerPool& pool) {
    const int g = s.gridSize;
    const SpreadRow spreadRowOfWidth = spreadRowFor(
        s.parameters.kernelWidth, std::make_integer_sequence<int, kMaxKernelWidth - kMinKernelWidth + 1>{});
    const int bands = (g + kBandRows - 1) / kBandRows;
    pool.parallelFor(bands, [&](int band, int) {
        const int r0 = band * kBandRows;
        const int r1 = std::min(g, r0 + kBandRows);
        std::fill(grid + static_cast<std::size_t>(r0) * stride, grid + static_cast<std::size_t>(r1) * stride, Complex{});
        for (int i = 0; i < s.projections; ++i) spreadRowOfWidth(s, i, samples, grid, stride, r0, r1);
        for (int j = r0; j < r1; ++j) { // fold the margins round
            Complex* row = grid + static_cast<std::size_t>(j) * stride + kGridPad;
            for (int c = 1; c <= kGridPad; ++c) {
                row[g - c] += row[-c];
                row[c - 1] += row[g + c - 1];
                row[-c] = row[g + c - 1] = Complex{};
            }
        }
    });
}

namespace {

/// Row i's samples from the grid: the transpose of spreadRow (its windows,
/// its weights' arithmetic, the grid rows it reaches through the copies b).
template <int W>
TOMO_CPU_CLONES void interpolateRow(const Setup& s, int i, const Complex* grid, std::size_t stride, Complex* samples) {
    const int g = s.gridSize;
    const int last = s.lastSample();
    const double hw = 0.5 * W;
    const double ax = s.dirX[i];
    const double ay = s.dirY[i];
    const float* table = s.table.data();
    Complex* row = samples + static_cast<std::size_t>(i) * s.sampleStride() + last;
    float wx[W];
    for (int k = -last; k <= last; ++k) {
        const double y = k * ay;
        float dx0 = 0.0f;
        const int jx0 = windowColumn(k, ax, g, hw, dx0);
        for (int t = 0; t < W; ++t) wx[t] = kernelWeight(table, s.tableLast, dx0 + t);
        float re = 0.0f, im = 0.0f;
        for (int jyu = floorToInt(y - hw) + 1; jyu <= -floorToInt(-(y + hw)) - 1; ++jyu) {
            const int b = jyu >= 0 ? jyu / g : -((-jyu + g - 1) / g); // grid row jyu - b G lies in [0, G)
            const int jy = jyu - b * g;
            const double py = k * ay - static_cast<double>(b) * g;
            const float wy = kernelWeight(table, s.tableLast, static_cast<float>(jy - py));
            const Complex* in = grid + static_cast<std::size_t>(jy) * stride + kGridPad + jx0;
            float lr = 0.0f, li = 0.0f;
            for (int t = 0; t < W; ++t) {
                lr += wx[t] * in[t].real();
                li += wx[t] * in[t].imag();
            }
            re += wy * lr;
            im += wy * li;
        }
        row[k] = Complex(re, im);
    }
}

using InterpolateRow = void (*)(const Setup&, int, const Complex*, std::size_t, Complex*);

template <int... W>
InterpolateRow interpolateRowFor(int width, std::integer_sequence<int, W...>) {
    InterpolateRow f = nullptr;
    ((width == W + kMinKernelWidth ? (f = &interpolateRow<W + kMinKernelWidth>, 0) : 0), ...);
    return f;
}

/// Grid rows that hold slice pixels, and the first column block of each
/// run of columns that does (slice column ix is grid column (ix - shiftX)
/// mod G: [0, width - shiftX) and [G - shiftX, G)).
std::vector<int> sliceColumnBlocks(const Setup& s) {
    std::vector<int> blocks;
    for (int c = 0; c < s.width - s.shiftX; c += kColumnBlock) blocks.push_back(c);
    for (int c = (s.gridSize - s.shiftX) / kColumnBlock * kColumnBlock; c < s.gridSize; c += kColumnBlock)
        if (blocks.empty() || c > blocks.back()) blocks.push_back(c);
    return blocks;
}

} // namespace

void interpolateSamples(const Setup& s, Complex* grid, std::size_t stride, Complex* samples, WorkerPool& pool) {
    const int g = s.gridSize;
    // The margins hold the folded copies: spread() adds what lands there to
    // the other side, so reading there reads the other side.
    pool.parallelFor(g, [&](int j, int) {
        Complex* row = grid + static_cast<std::size_t>(j) * stride + kGridPad;
        for (int c = 1; c <= kGridPad; ++c) {
            row[-c] = row[g - c];
            row[g + c - 1] = row[c - 1];
        }
    });
    const InterpolateRow rowOfWidth = interpolateRowFor(
        s.parameters.kernelWidth, std::make_integer_sequence<int, kMaxKernelWidth - kMinKernelWidth + 1>{});
    pool.parallelFor(s.projections, [&](int i, int) {
        rowOfWidth(s, i, grid, stride, samples);
        Complex* row = samples + static_cast<std::size_t>(i) * s.sampleStride();
        std::fill(row + 2 * s.lastSample() + 1, row + s.sampleStride(), Complex{});
    });
}

void foldSamples(const Setup& s, const Complex* samples, std::span<const double> shifts, Complex* spectra,
                 std::size_t spectrumStride, WorkerPool& pool) {
    const int length = s.rowLength;
    const int last = s.lastSample();
    const int count = 2 * last + 1;
    pool.parallelFor(s.projections, [&](int i, int) {
        Complex* spectrum = spectra + static_cast<std::size_t>(s.canonical[i]) * spectrumStride;
        const Complex* in = samples + static_cast<std::size_t>(i) * s.sampleStride();
        const bool reversed = s.reversed[i];
        std::fill(spectrum, spectrum + length, Complex{});
        // phaseSamples' recurrence, conjugated.
        double zr, zi, sr, si;
        unitPhase(-last * shifts[i] / length, zr, zi);
        unitPhase(shifts[i] / length, sr, si);
        int j = ((reversed ? last : -last) % length + length) % length;
        for (int n = 0; n < count; ++n) {
            const double b = s.band[n];
            const double vr = in[n].real(), vi = in[n].imag();
            spectrum[j] += Complex(static_cast<float>(b * (vr * zr + vi * zi)), static_cast<float>(b * (vi * zr - vr * zi)));
            const double r = zr * sr - zi * si;
            zi = zr * si + zi * sr;
            zr = r;
            j = reversed ? (j == 0 ? length - 1 : j - 1) : (j + 1 == length ? 0 : j + 1);
        }
    });
}

GridPlans planGrid(int g, Complex* grid, std::size_t stride, int sign) {
    GridPlans plans;
    plans.sign = sign;
    auto* data = reinterpret_cast<fftwf_complex*>(grid + kGridPad);
    const int n[] = {g};
    std::lock_guard lock(fftw::plannerMutex());
    plans.rows.reset(fftwf_plan_dft_1d(g, data, data, sign, FFTW_ESTIMATE));
    plans.columns.reset(fftwf_plan_many_dft(1, n, kColumnBlock, data, nullptr, static_cast<int>(stride), 1, data,
                                            nullptr, static_cast<int>(stride), 1, sign, FFTW_ESTIMATE));
    if (!plans.rows || !plans.columns)
        throw Error("gridrec: FFTW could not plan the " + std::to_string(g) + "^2 grid transforms");
    return plans;
}

void transformGrid(const Setup& s, Complex* grid, std::size_t stride, const GridPlans& plans, WorkerPool& pool) {
    const int g = s.gridSize;
    Complex* data = grid + kGridPad;
    constexpr int kRowsPerTask = 16;
    const auto rows = [&] {
        pool.parallelFor((g + kRowsPerTask - 1) / kRowsPerTask, [&](int task, int) {
            for (int j = task * kRowsPerTask; j < std::min(g, (task + 1) * kRowsPerTask); ++j) {
                auto* row = reinterpret_cast<fftwf_complex*>(data + static_cast<std::size_t>(j) * stride);
                fftwf_execute_dft(plans.rows.get(), row, row);
            }
        });
    };
    const std::vector<int> blocks = sliceColumnBlocks(s);
    const auto columns = [&] {
        pool.parallelFor(static_cast<int>(blocks.size()), [&](int task, int) {
            auto* column = reinterpret_cast<fftwf_complex*>(data + blocks[task]);
            fftwf_execute_dft(plans.columns.get(), column, column);
        });
    };
    if (plans.sign == FFTW_BACKWARD) {
        rows();
        columns();
    } else {
        columns();
        rows();
    }
}

void cropSlices(const Setup& s, const Complex* grid, std::size_t stride, float* first, float* second, WorkerPool& pool) {
    pool.parallelFor(s.height, [&](int iy, int) {
        const int gy = (iy - s.shiftY + s.gridSize) % s.gridSize;
        const Complex* row = grid + static_cast<std::size_t>(gy) * stride + kGridPad;
        for (int ix = 0; ix < s.width; ++ix) {
            const Complex v = row[(ix - s.shiftX + s.gridSize) % s.gridSize] * (s.deapodizeX[ix] * s.deapodizeY[iy]);
            first[static_cast<std::size_t>(iy) * s.width + ix] = v.real();
            if (second) second[static_cast<std::size_t>(iy) * s.width + ix] = v.imag();
        }
    });
}

void placeSlices(const Setup& s, const float* first, const float* second, Complex* grid, std::size_t stride,
                 WorkerPool& pool) {
    const int g = s.gridSize;
    pool.parallelFor(g, [&](int gy, int) {
        Complex* row = grid + static_cast<std::size_t>(gy) * stride;
        std::fill(row, row + stride, Complex{});
        const int iy = (gy + s.shiftY) % g;
        if (iy >= s.height) return;
        row += kGridPad;
        for (int ix = 0; ix < s.width; ++ix) {
            const std::size_t at = static_cast<std::size_t>(iy) * s.width + ix;
            const float d = s.deapodizeX[ix] * s.deapodizeY[iy];
            row[(ix - s.shiftX + g) % g] = Complex(first[at], second ? second[at] : 0.0f) * d;
        }
    });
}

namespace {

class GridrecCpuPlan final : public cpu::CpuPlan {
public:
    GridrecCpuPlan(const ReconGeometry& geometry, const ReconOptions& options)
        : CpuPlan(geometry, options, copiesPerSlice(geometry)), m_parameters(checkOptions(kCpuName, options)) {
        m_setup = std::make_unique<Setup>(m_geometry, m_parameters);
        makeGridPlans();
    }

private:
    /// Sinogram-sized buffers per slice: the filtered stack, the spectra
    /// (half a complex row of L per view) and the kept whole slice.
    static int copiesPerSlice(const ReconGeometry& g) {
        const double sinogram = static_cast<double>(g.geometry.projections()) * g.geometry.bins;
        return 1 + static_cast<int>(std::ceil(rowLengthFor(g) / static_cast<double>(g.geometry.bins))) +
               static_cast<int>(std::ceil(static_cast<double>(g.sliceWidth) * g.sliceHeight / sinogram));
    }

    std::size_t spectrumStride() const { return (static_cast<std::size_t>(m_setup->rowLength) + 7) / 8 * 8; }
    std::size_t gridStride() const { return static_cast<std::size_t>(m_setup->gridSize) + 2 * kGridPad; }

    void makeGridPlans() {
        const int g = m_setup->gridSize;
        m_grid = fftw::allocate<Complex>(static_cast<std::size_t>(g) * gridStride());
        m_samples = fftw::allocate<Complex>(static_cast<std::size_t>(m_setup->projections) * m_setup->sampleStride());
        m_gridPlans = planGrid(g, m_grid.get(), gridStride(), FFTW_BACKWARD);
    }

    /// The kept spectra of the filtered slices, at the current row length.
    void computeSpectra() {
        const int count = sliceCount();
        const int pairs = (count + 1) / 2;
        const int projections = m_setup->projections;
        const int bins = m_setup->bins;
        const int length = m_setup->rowLength;
        const std::size_t stride = spectrumStride();
        m_spectra = fftw::allocate<Complex>(static_cast<std::size_t>(pairs) * projections * stride);
        m_spectrumPlan.reset(); // its deleter takes the planner lock
        {
            std::lock_guard lock(fftw::plannerMutex());
            auto* row = reinterpret_cast<fftwf_complex*>(m_spectra.get());
            m_spectrumPlan.reset(fftwf_plan_dft_1d(length, row, row, FFTW_FORWARD, FFTW_ESTIMATE));
        }
        if (!m_spectrumPlan) throw Error("cpu-gridrec: FFTW could not plan a transform of length " + std::to_string(length));
        const std::vector<float>& rows = filtered();
        const std::size_t sinogram = static_cast<std::size_t>(projections) * bins;
        pool().parallelFor(pairs * projections, [&](int task, int) {
            const int pair = task / projections;
            const int p = task % projections;
            Complex* out = m_spectra.get() + static_cast<std::size_t>(task) * stride;
            const float* a = rows.data() + 2 * pair * sinogram + static_cast<std::size_t>(p) * bins;
            const float* b = 2 * pair + 1 < count ? a + sinogram : nullptr;
            for (int n = 0; n < bins; ++n) out[n] = Complex(a[n], b ? b[n] : 0.0f);
            std::fill(out + bins, out + length, Complex{});
            fftwf_execute_dft(m_spectrumPlan.get(), reinterpret_cast<fftwf_complex*>(out),
                              reinterpret_cast<fftwf_complex*>(out));
        });
    }

    void prepare() override {
        m_wholeValid = false;
        computeSpectra();
    }

    /// Whole slices of every pair into m_whole (real part: slice 2j,
    /// imaginary part: slice 2j + 1).
    void computeWholeSlices() {
        const Setup& s = *m_setup;
        const int count = sliceCount();
        const std::size_t pixels = static_cast<std::size_t>(s.width) * s.height;
        m_whole.resize(static_cast<std::size_t>(count) * pixels);
        const std::vector<double> shifts = s.phaseShifts(m_geometry.geometry);
        for (int pair = 0; 2 * pair < count; ++pair) {
            phaseSamples(s, m_spectra.get() + static_cast<std::size_t>(pair) * s.projections * spectrumStride(),
                         spectrumStride(), shifts, m_samples.get(), pool());
            spread(s, m_samples.get(), m_grid.get(), gridStride(), pool());
            transformGrid(s, m_grid.get(), gridStride(), m_gridPlans, pool());
            float* first = m_whole.data() + 2 * pair * pixels;
            cropSlices(s, m_grid.get(), gridStride(), first, 2 * pair + 1 < count ? first + pixels : nullptr, pool());
        }
        m_wholeAxis = m_geometry.geometry.axis;
        m_wholeOffsets = m_geometry.geometry.axisOffsets;
        m_wholeValid = true;
    }

    void backprojectSlices(std::span<float> slices) override {
        const Geometry& g = m_geometry.geometry;
        if (const int needed = m_setup->rowLengthNeeded(g); needed > m_setup->rowLength) {
            m_setup = std::make_unique<Setup>(m_geometry, m_parameters, needed);
            m_samples = fftw::allocate<Complex>(static_cast<std::size_t>(m_setup->projections) * m_setup->sampleStride());
            computeSpectra();
            m_wholeValid = false;
        }
        const Region& r = m_geometry.region;
        if (!m_wholeValid || m_wholeAxis != g.axis || m_wholeOffsets != g.axisOffsets || m_wholeRegion == r)
            computeWholeSlices();
        m_wholeRegion = r;
        const std::size_t pixels = static_cast<std::size_t>(m_setup->width) * m_setup->height;
        for (int slice = 0; slice < sliceCount(); ++slice)
            for (int y = 0; y < r.height; ++y) {
                const float* from = m_whole.data() + slice * pixels + static_cast<std::size_t>(r.y + y) * m_setup->width + r.x;
                std::copy_n(from, r.width, slices.data() + slice * r.pixels() + static_cast<std::size_t>(y) * r.width);
            }
    }

    std::size_t extraBytes() const override {
        const Setup& s = *m_setup;
        const int pairs = (sliceCount() + 1) / 2;
        return static_cast<std::size_t>(pairs) * s.projections * spectrumStride() * sizeof(Complex) +
               s.samplesBytes() + static_cast<std::size_t>(s.gridSize) * gridStride() * sizeof(Complex) +
               m_whole.capacity() * sizeof(float);
    }

    Parameters m_parameters;
    std::unique_ptr<Setup> m_setup;
    fftw::Buffer<Complex> m_spectra; ///< [pair][view][spectrumStride()]
    fftw::Buffer<Complex> m_samples; ///< one pair's phased samples, canonical rows
    fftw::Buffer<Complex> m_grid;    ///< G rows of gridStride(), data from kGridPad
    fftw::Plan m_spectrumPlan;
    GridPlans m_gridPlans;
    std::vector<float> m_whole;      ///< [slice][row][column] of the whole grid
    bool m_wholeValid = false;
    double m_wholeAxis = 0.0;
    std::vector<double> m_wholeOffsets;
    Region m_wholeRegion; ///< the region of the last call
};

class GridrecCpuBackend final : public Backend {
public:
    std::string name() const override { return kCpuName; }
    std::string description() const override {
        return "CPU, Fourier-domain gridding (FFTW): each filtered row's spectrum with linear interpolation's response, "
               "spread onto an oversampled grid with a Kaiser-Bessel kernel, one 2D inverse FFT per two slices; "
               "approximate, the twin of 'gridrec'";
    }
    std::string family() const override { return "cpu"; }
    bool isExact() const override { return false; }
    bool computesWholeSlice() const override { return true; }
    std::vector<std::string> tuningCandidates(const ReconOptions&) const override { return gridrec::tuningCandidates(); }
    std::string unavailableReason() const override { return {}; }
    void checkOptions(const ReconOptions& options) const override {
        constexpr int kSlicesPerPass[] = {1, 2, 4};
        cpu::checkCpuOptions(kCpuName, options, kSlicesPerPass);
        (void)gridrec::checkOptions(kCpuName, options);
    }
    std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry,
                                                   const ReconOptions& options) const override {
        checkOptions(options);
        return std::make_unique<GridrecCpuPlan>(geometry, options);
    }
};

} // namespace

} // namespace gridrec

std::unique_ptr<Backend> makeGridrecCpuBackend() {
    return std::make_unique<gridrec::GridrecCpuBackend>();
}

} // namespace tomo
