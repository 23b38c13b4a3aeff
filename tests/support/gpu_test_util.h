// Helpers shared by the GPU test suites (CUDA and OpenCL): phantom datasets,
// cached cpu-reference results, error figures, the filter comparison.
#pragma once

#include "tomo/backend.h"
#include "tomo/metrics.h"
#include "tomo/error.h"
#include "tomo/filter.h"
#include "tomo/geometry.h"
#include "tomo/phantom.h"
#include "tomo/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace tomo::gputest {

inline const Backend& backendNamed(const std::string& name) {
    const Backend* b = BackendRegistry::instance().find(name);
    if (!b) throw std::runtime_error("backend " + name + " is not registered");
    return *b;
}

/// Log-corrected phantom sinograms [slice][angle][bin] and their geometry.
struct Dataset {
    ReconGeometry geometry;
    std::vector<float> sinograms;
    int slices = 0;
    std::string key; // identifies the data for the reference cache

    std::size_t sliceValues() const {
        return static_cast<std::size_t>(geometry.geometry.projections()) * geometry.geometry.bins;
    }
    std::span<const float> slice(int s, int count = 1) const {
        return std::span<const float>(sinograms).subspan(s * sliceValues(), count * sliceValues());
    }
};

/// The 3D Shepp-Logan through `slices` rows well inside the phantom (rows
/// 1..slices of slices + 2, so no slice is empty), angles uniform over pi,
/// axis at the detector centre, a width x height grid (default bins x bins).
inline Dataset phantomDataset(int bins, int angles, int slices, int width = 0, int height = 0) {
    PhantomSpec spec;
    spec.bins = bins;
    spec.rows = slices + 2;
    const std::vector<double> a = uniformAngles(angles);
    const ImageStack stack = projectPhantom(spec, a, 1);
    Dataset d;
    d.slices = slices;
    d.sinograms.assign(stack.data.begin() + static_cast<std::ptrdiff_t>(stack.imageSize()),
                       stack.data.begin() + static_cast<std::ptrdiff_t>(stack.imageSize() * (slices + 1)));
    Geometry g;
    g.angles = a;
    g.bins = bins;
    g.axis = g.detectorCentre();
    d.geometry = ReconGeometry::fullSlice(g);
    if (width > 0) {
        d.geometry.sliceWidth = width;
        d.geometry.sliceHeight = height;
        d.geometry.region = Region{0, 0, width, height};
    }
    d.key = std::to_string(bins) + "x" + std::to_string(angles) + "x" + std::to_string(slices) + "/" +
            std::to_string(d.geometry.sliceWidth) + "x" + std::to_string(d.geometry.sliceHeight);
    return d;
}

inline ReconOptions optionsFor(const std::string& strategy, Interpolation interp, Precision precision, int spp) {
    ReconOptions o;
    o.strategy = strategy;
    o.interpolation = interp;
    o.precision = precision;
    o.slicesPerPass = spp;
    return o;
}

/// The `roi` window of every slice of full-grid results ([slice][row][col]).
inline std::vector<float> windowOf(std::span<const float> full, const Dataset& d, const Region& roi) {
    std::vector<float> window(static_cast<std::size_t>(d.slices) * roi.pixels());
    for (int s = 0; s < d.slices; ++s)
        for (int y = 0; y < roi.height; ++y)
            for (int x = 0; x < roi.width; ++x)
                window[(static_cast<std::size_t>(s) * roi.height + y) * roi.width + x] =
                    full[(static_cast<std::size_t>(s) * d.geometry.sliceHeight + roi.y + y) * d.geometry.sliceWidth +
                         roi.x + x];
    return window;
}

// Tolerances of the GPU strategies against cpu-reference (relative RMSE
// ||gpu - ref|| / ||ref|| per slice), with why; measured values in
// docs/cuda_notes.md.
//  * float32 nearest (1e-5): positions in double, the texel itself fetched;
//    what is left is the float32 filter (FFT rounding, ~1.5e-7 of |row x
//    weight| per value, correlated over similar rows) and float summation.
//    Measured 7.7e-6 (256^2 phantom), 3.8e-6 (1000x1001).
inline constexpr double kNearestFloat = 1e-5;
//  * float32 linear through a texture unit (2e-3): interpolation weights with
//    8 fractional bits. Measured 4.9e-4 (max 1.0e-3 of the peak).
inline constexpr double kLinearFloat = 2e-3;
//  * float16 storage, nearest: each texel rounded to 11 significant bits
//    (2^-12 = 2.4e-4 relative, random over the projections summed), after a
//    power-of-two scale that keeps it away from float16 subnormals. Measured
//    7.7e-5 (256^2) and 7.8e-5 (1000x1001): bound 2e-4 = 2.6x the worst
//    measurement and below one half-ulp; seed 004 claims < 1% of grey values.
inline constexpr double kHalfNearest = 2e-4;
//  * float16 storage, linear through a texture unit: the 8-bit weights
//    dominate (measured 5.0e-4, float32 linear 4.9e-4).
inline constexpr double kHalfLinear = 2e-3;

/// The bound of a texture strategy's mode (above).
inline double tolerance(Interpolation i, Precision p) {
    if (p == Precision::Float16) return i == Interpolation::Nearest ? kHalfNearest : kHalfLinear;
    return i == Interpolation::Nearest ? kNearestFloat : kLinearFloat;
}

/// "alu linear float32 x2" (plus " <tuning>" when given).
inline std::string describe(const std::string& strategy, Interpolation i, Precision p, int spp,
                            const std::string& tuning = "") {
    return strategy + " " + std::string(interpolationName(i)) + " " + std::string(precisionName(p)) + " x" +
           std::to_string(spp) + (tuning.empty() ? "" : " " + tuning);
}

/// A GPU mode of a parameterised test: strategy, interpolation, precision, slices per pass.
using ModeParam = std::tuple<std::string, Interpolation, Precision, int>;

/// Its test name: "tex_optimized_linear_float32_x2".
inline std::string modeTestName(const ::testing::TestParamInfo<ModeParam>& info) {
    std::string name = std::get<0>(info.param) + "_" + std::string(interpolationName(std::get<1>(info.param))) + "_" +
                       std::string(precisionName(std::get<2>(info.param))) + "_x" + std::to_string(std::get<3>(info.param));
    for (char& c : name)
        if (c == '-') c = '_';
    return name;
}

/// Runs `strategy` over all slices of the dataset with `geometry` (region,
/// offsets) and returns [slice][row][col] of the region.
inline std::vector<float> run(const std::string& strategy, const Dataset& d, const ReconGeometry& geometry,
                              const ReconOptions& options) {
    ReconOptions o = options;
    o.strategy = strategy;
    auto plan = backendNamed(strategy).createPlan(geometry, o);
    std::vector<float> out(static_cast<std::size_t>(d.slices) * geometry.region.pixels(), -12345.0f);
    plan->reconstruct(d.sinograms, d.slices, out);
    return out;
}

/// cpu-reference result (float32, 1 slice per pass), cached per data, geometry, interpolation.
inline const std::vector<float>& reference(const Dataset& d, const ReconGeometry& geometry, Interpolation interp,
                                           const std::string& geometryKey = "") {
    static std::map<std::string, std::vector<float>> cache;
    const Region& r = geometry.region;
    const std::string key = d.key + "|" + geometryKey + "|" + std::to_string(r.x) + "," + std::to_string(r.y) + "," +
                            std::to_string(r.width) + "," + std::to_string(r.height) + "|" +
                            std::string(interpolationName(interp));
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    return cache[key] = run("cpu-reference", d, geometry, optionsFor("cpu-reference", interp, Precision::Float32, 1));
}

struct Errors {
    double relative = 0.0;   ///< ||result - ref||_2 / ||ref||_2 (relative RMSE), worst slice
    double maxOfPeak = 0.0;  ///< max |result - ref| / max |ref|, worst slice
    bool identical = true;   ///< bit-for-bit equal
    bool allWritten = true;  ///< no poison value left
};

/// Compares slice by slice; `mask` (one value per pixel of a slice, empty =
/// all) selects the pixels that count.
inline Errors compare(std::span<const float> result, std::span<const float> ref, int slices,
                      std::span<const std::uint8_t> mask = {}) {
    Errors e;
    const std::size_t n = ref.size() / static_cast<std::size_t>(slices);
    for (int s = 0; s < slices; ++s) {
        double d2 = 0.0, r2 = 0.0, maxDiff = 0.0, peak = 0.0;
        for (std::size_t i = s * n; i < (s + 1) * n; ++i) {
            if (!mask.empty() && !mask[i - s * n]) continue;
            const double d = static_cast<double>(result[i]) - ref[i];
            if (result[i] == -12345.0f || std::isnan(result[i])) e.allWritten = false;
            if (result[i] != ref[i]) e.identical = false;
            d2 += d * d;
            r2 += static_cast<double>(ref[i]) * ref[i];
            maxDiff = std::max(maxDiff, std::abs(d));
            peak = std::max(peak, std::abs(static_cast<double>(ref[i])));
        }
        e.relative = std::max(e.relative, r2 > 0 ? std::sqrt(d2 / r2) : (d2 > 0 ? INFINITY : 0.0));
        e.maxOfPeak = std::max(e.maxOfPeak, peak > 0 ? maxDiff / peak : (maxDiff > 0 ? INFINITY : 0.0));
    }
    return e;
}

/// One greppable line per measurement: "MEASURED <what> rel=<> maxOfPeak=<>".
inline void report(const std::string& what, const Errors& e) {
    std::printf("MEASURED %-58s rel=%.3e maxOfPeak=%.3e%s\n", what.c_str(), e.relative, e.maxOfPeak,
                e.identical ? " identical" : "");
    std::fflush(stdout);
}

/// A GPU filter (CUDA, OpenCL) against the CPU's SinogramFilter on a smooth
/// pattern of rows x bins, for every window and padding; `device(data, rows,
/// bins, options, weights)` filters on the device. Both sides are float32
/// FFTs of the padded length, whose rounding is ~log2(padded) ulp of the
/// *input* (x weight) magnitude; the ramp filter leaves outputs far smaller
/// than inputs (edge padding of offset rows: 1e-5 of the output peak,
/// 1.5e-7 of the input), so the tolerance follows the input.
template <class DeviceFilter>
void expectFilterEqualsCpu(const char* label, std::initializer_list<int> binCounts,
                           std::initializer_list<int> rowCounts, DeviceFilter device) {
    for (int bins : binCounts)
        for (int rows : rowCounts)
            for (auto window : {FilterWindow::RamLak, FilterWindow::Hann})
                for (auto padding : {Padding::Edge, Padding::Zero}) {
                    std::vector<float> data(static_cast<std::size_t>(rows) * bins);
                    for (std::size_t i = 0; i < data.size(); ++i)
                        data[i] = static_cast<float>(1.0 + std::sin(0.05 * i) + 0.3 * std::cos(0.31 * (i % bins)));
                    const std::vector<double> weights = angularWeights(uniformAngles(rows));
                    FilterOptions f;
                    f.window = window;
                    f.padding = padding;
                    std::vector<float> cpu = data;
                    SinogramFilter(bins, f).apply(cpu, rows, weights);
                    const std::vector<float> gpu = device(data, rows, bins, f, weights);
                    ASSERT_EQ(gpu.size(), cpu.size());
                    double maxDiff = 0.0, peak = 0.0, scale = 0.0;
                    for (std::size_t i = 0; i < cpu.size(); ++i) {
                        maxDiff = std::max(maxDiff, std::abs(double(gpu[i]) - cpu[i]));
                        peak = std::max(peak, std::abs(double(cpu[i])));
                        scale = std::max(scale, std::abs(data[i] * weights[(i / bins) % weights.size()]));
                    }
                    const double tolerance = 4.0 * std::log2(double(paddedLength(bins))) * 1.1920929e-7 * scale;
                    std::printf("MEASURED %s bins %d rows %d %s %s: max diff %.2e of input, %.2e of output peak\n",
                                label, bins, rows, std::string(filterWindowName(window)).c_str(),
                                std::string(paddingName(padding)).c_str(), maxDiff / scale, maxDiff / peak);
                    EXPECT_LE(maxDiff, tolerance) << label << ": " << bins << " bins, " << rows << " rows";
                }
}

} // namespace tomo::gputest
