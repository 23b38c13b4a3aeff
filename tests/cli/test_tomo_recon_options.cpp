// tomo-recon options checked for the effect the README gives them, not only
// that they parse: raw samples' byte order, saturation, kernel parameters,
// the ring methods' parameters, the half-acquisition window, corrections on
// the CPU beside a GPU strategy; and what --info, --list-strategies and the
// memory budget say.
#include "cli_runner.h"

#include "tomo/phantom.h"
#include "tomo/pipeline.h"
#include "tomo/registry.h"
#include "tomo/volume_io.h"
#include "tomo/worker_pool.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <numbers>
#include <regex>
#include <vector>

namespace tomo {
namespace {

namespace fs = std::filesystem;
using test::quoted;
using test::runTool;
using test::ToolRun;

constexpr int kBins = 64, kRows = 2, kAngles = 180;

/// Line integrals p(angle, row, column) of a scan.
using LineIntegrals = std::function<double(int angle, int row, int column)>;

/// The 2D Shepp-Logan phantom's exact line integrals on `bins` columns over
/// `angles` (the same in every row).
LineIntegrals phantomScan(int bins, const std::vector<double>& angles) {
    PhantomSpec spec;
    spec.shapes = sheppLogan2D();
    spec.bins = bins;
    spec.rows = 1;
    const auto p = std::make_shared<ImageStack>(projectPhantom(spec, angles));
    return [p, bins](int a, int, int c) { return p->image(0)[static_cast<std::size_t>(a) * bins + c]; };
}

/// Samples [angle][row][column] written as they are, or byte-swapped.
template <class T>
void writeSamples(const fs::path& file, const std::vector<T>& samples, bool bigEndian = false) {
    std::vector<T> out = samples;
    if (bigEndian)
        for (T& v : out) {
            auto bytes = std::bit_cast<std::array<unsigned char, sizeof(T)>>(v);
            std::reverse(bytes.begin(), bytes.end());
            v = std::bit_cast<T>(bytes);
        }
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size() * sizeof(T)));
}

/// Raw float32 transmissions exp(-p) of `angles` x kRows x `columns`.
fs::path writeTransmissions(const fs::path& file, int angles, int columns, const LineIntegrals& p) {
    std::vector<float> t;
    for (int a = 0; a < angles; ++a)
        for (int r = 0; r < kRows; ++r)
            for (int c = 0; c < columns; ++c) t.push_back(static_cast<float>(std::exp(-p(a, r, c))));
    writeSamples(file, t);
    return file;
}

std::string rawShape(int angles, int columns) {
    return " --raw-shape " + std::to_string(angles) + "," + std::to_string(kRows) + "," + std::to_string(columns);
}

/// RMS of a - b over every value.
double rmsDifference(const ImageStack& a, const ImageStack& b) {
    EXPECT_EQ(a.data.size(), b.data.size());
    double sum = 0.0;
    for (std::size_t i = 0; i < a.data.size() && i < b.data.size(); ++i)
        sum += (static_cast<double>(a.data[i]) - b.data[i]) * (static_cast<double>(a.data[i]) - b.data[i]);
    return std::sqrt(sum / static_cast<double>(a.data.size()));
}

double maxAbsDifference(const ImageStack& a, const ImageStack& b) {
    double worst = 0.0;
    for (std::size_t i = 0; i < a.data.size() && i < b.data.size(); ++i)
        worst = std::max(worst, std::abs(static_cast<double>(a.data[i]) - b.data[i]));
    return worst;
}

class TomoReconOptions : public ::testing::Test {
protected:
    /// Runs tomo-recon on `input` into a new output named `name`; the
    /// volume read back (empty on failure, with the run's messages).
    ImageStack reconstruct(const std::string& input, const std::string& name, const std::string& options,
                           ToolRun* run = nullptr) {
        const fs::path out = m_dir / (name + ".h5");
        const ToolRun r = runTool(TOMO_RECON_EXE, input + " -o " + quoted(out) + " --strategy cpu " + options,
                                  m_dir.path());
        if (run) *run = r;
        EXPECT_EQ(r.exitCode, 0) << options << "\n" << r.err;
        return r.exitCode == 0 ? readVolume(out) : ImageStack();
    }
    ToolRun recon(const std::string& args) { return runTool(TOMO_RECON_EXE, args, m_dir.path()); }
    std::string stored(const std::string& name) const { return test::readText(m_dir / (name + ".h5")); }

    test::TempDir m_dir;
};

// ---------------------------------------------------------------- input

TEST_F(TomoReconOptions, RawBigEndianReadsByteSwappedSamples) {
    // uint16 counts of the phantom, stored little- and big-endian.
    const LineIntegrals p = phantomScan(kBins, uniformAngles(kAngles));
    std::vector<std::uint16_t> counts;
    for (int a = 0; a < kAngles; ++a)
        for (int r = 0; r < kRows; ++r)
            for (int c = 0; c < kBins; ++c)
                counts.push_back(static_cast<std::uint16_t>(std::lround(40000.0 * std::exp(-p(a, r, c)))));
    writeSamples(m_dir / "little.raw", counts);
    writeSamples(m_dir / "big.raw", counts, true);
    const std::string shape = rawShape(kAngles, kBins) + " --raw-type uint16 --center 31.5 -q";
    const ImageStack little = reconstruct(quoted(m_dir / "little.raw"), "little", shape);
    const ImageStack big = reconstruct(quoted(m_dir / "big.raw"), "big", shape + " --raw-big-endian");
    ASSERT_FALSE(little.data.empty());
    EXPECT_EQ(big.data, little.data);
    // Read in the wrong order, the counts are other numbers.
    const ImageStack wrong = reconstruct(quoted(m_dir / "big.raw"), "wrong", shape);
    EXPECT_GT(maxAbsDifference(wrong, little), 0.01) << "the big-endian file read as little-endian";
    EXPECT_NE(stored("big").find("\"raw_big_endian\": true"), std::string::npos) << "not in the run config";
}

TEST_F(TomoReconOptions, SaturationMasksRawValuesAtOrAboveTheCount) {
    // uint16 counts (40000 in the open beam), four of them saturated at
    // 62000 where the object attenuates: read as they are, they are
    // brighter than the open beam.
    const LineIntegrals p = phantomScan(kBins, uniformAngles(kAngles));
    const std::vector<std::array<int, 3>> saturated = {{10, 0, 30}, {20, 1, 31}, {30, 0, 33}, {40, 1, 29}};
    std::vector<std::uint16_t> clean, faulty;
    for (int a = 0; a < kAngles; ++a)
        for (int r = 0; r < kRows; ++r)
            for (int c = 0; c < kBins; ++c) {
                const auto v = static_cast<std::uint16_t>(std::lround(40000.0 * std::exp(-p(a, r, c))));
                clean.push_back(v);
                const bool hit = std::find(saturated.begin(), saturated.end(), std::array{a, r, c}) != saturated.end();
                faulty.push_back(hit ? std::uint16_t{62000} : v);
            }
    writeSamples(m_dir / "clean.raw", clean);
    writeSamples(m_dir / "faulty.raw", faulty);
    const std::string shape = rawShape(kAngles, kBins) + " --raw-type uint16 --center 31.5";
    const ImageStack truth = reconstruct(quoted(m_dir / "clean.raw"), "clean", shape + " -q");
    ToolRun asRead, masked, above;
    const ImageStack plain = reconstruct(quoted(m_dir / "faulty.raw"), "plain", shape, &asRead);
    const ImageStack fixed = reconstruct(quoted(m_dir / "faulty.raw"), "fixed", shape + " --saturation 62000", &masked);
    reconstruct(quoted(m_dir / "faulty.raw"), "above", shape + " --saturation 62001", &above);
    const std::string line = "values <= 0 or saturated, interpolated along the row: ";
    // Without it, uint16's saturation is 65535: nothing is masked.
    EXPECT_EQ(asRead.out.find(line), std::string::npos) << asRead.out;
    // At the count: the four values, each named.
    EXPECT_NE(masked.out.find(line + "4 ("), std::string::npos) << masked.out;
    for (const auto& [a, r, c] : saturated)
        EXPECT_NE(masked.out.find("row " + std::to_string(r) + " projection " + std::to_string(a) + " column " +
                                  std::to_string(c)),
                  std::string::npos)
            << masked.out;
    // Above it: not saturated.
    EXPECT_EQ(above.out.find(line), std::string::npos) << above.out;
    EXPECT_NE(stored("fixed").find("\"saturation\": 62000"), std::string::npos);
    // Interpolated along the row, they come close to the clean values.
    const double before = maxAbsDifference(plain, truth), after = maxAbsDifference(fixed, truth);
    std::cout << "MEASURED saturated counts: max abs error " << before << " read as they are, " << after
              << " masked\n";
    EXPECT_LT(after, 0.2 * before); // measured: 0.0043 as read, 4.6e-5 masked
}

// ---------------------------------------------------------------- kernel parameters

TEST_F(TomoReconOptions, TuningIsRefusedByStrategiesWithoutKernelParameters) {
    test::writeNoiselessScan(m_dir / "scan.h5", 32, 2, 60);
    const std::string in = quoted(m_dir / "scan.h5") + " --center 15.5 -o " + quoted(m_dir / "o.h5");
    // Kept unused and recorded as if it had run, before: refused now.
    for (const std::string& args : {std::string("--strategy cpu --tuning garbage"),
                                    std::string("--strategy cpu-reference --tuning shape=1")})
        test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon", in + " " + args, m_dir.path(), 2,
                                 "has no kernel parameters");
    std::ofstream(m_dir / "run.json") << R"({"strategy": "cpu", "tuning": "foo=1"})";
    test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon", in + " --config " + quoted(m_dir / "run.json"),
                             m_dir.path(), 2, "tuning 'foo=1': strategy 'cpu' has no kernel parameters");
    fs::remove(m_dir / "run.json");
    // auto weighs only the strategies that take the tuning: none without a GPU.
    if (gpuDevices().empty())
        test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon", in + " --strategy auto --tuning shape=1",
                                 m_dir.path(), 2, "no available strategy accepts these options");
}

TEST_F(TomoReconOptions, TuningRunsAndIsRecordedByTheStrategiesWithKernelParameters) {
    if (gpuDevices().empty())
        GTEST_SKIP() << "no CUDA device: the strategies with kernel parameters (alu, hybrid, oversample) cannot run "
                        "here";
    test::writeNoiselessScan(m_dir / "scan.h5", 32, 2, 60);
    const std::string in = quoted(m_dir / "scan.h5") + " --center 15.5 -o " + quoted(m_dir / "o.h5");
    const ToolRun r = recon(in + " --strategy alu --tuning shape=0 -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(test::readText(m_dir / "o.h5").find("shape=0"), std::string::npos);
    fs::remove(m_dir / "o.h5");
    test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon", in + " --strategy alu --tuning shape=9", m_dir.path(), 2,
                             "shape");
}

// ---------------------------------------------------------------- ring removal

/// A sinogram of constant line integrals (an infinite slab: its slice is
/// flat) with `stripe` added: what ring removal should take out, with no
/// object to damage. Results are compared with the slab alone.
class RingParameters : public TomoReconOptions {
protected:
    void SetUp() override {
        writeTransmissions(m_dir / "slab.raw", kAngles, kBins, [](int, int, int) { return 0.5; });
        m_slab = reconstruct(input("slab"), "slab", "");
    }
    std::string input(const std::string& name) const {
        return quoted(m_dir / (name + ".raw")) + rawShape(kAngles, kBins) + " --center 31.5 -q";
    }
    /// The RMS differences from the slab's slice of the slab with `stripe`
    /// added: untreated, then after `--rings METHOD --OPTION VALUE` with
    /// each of the two values (outputs NAME_1, NAME_2), printed.
    std::array<double, 3> residuals(const std::string& name, const LineIntegrals& stripe, const std::string& method,
                                    const std::string& option, const std::array<std::string, 2>& values) {
        writeTransmissions(m_dir / (name + ".raw"), kAngles, kBins,
                           [&](int a, int r, int c) { return 0.5 + stripe(a, r, c); });
        std::array<double, 3> out{};
        for (int i = 0; i < 3; ++i) {
            const std::string options = i == 0 ? "" : "--rings " + method + " --" + option + " " + values[i - 1];
            out[i] = rmsDifference(reconstruct(input(name), name + "_" + std::to_string(i), options), m_slab);
        }
        std::cout << "MEASURED " << name << " residual: " << out[0] << " untreated, " << out[1] << " with --" << option
                  << " " << values[0] << ", " << out[2] << " with " << values[1] << "\n";
        return out;
    }
    ImageStack m_slab;
};

TEST_F(RingParameters, WaveletSigmaIsTheDampingWidthAlongTheAngles) {
    // A stripe whose strength varies slowly with the angle (3 periods over
    // the scan): damped only where the damping is wider than 3 frequency
    // samples. Measured: 5.8e-4 untreated, 2.7e-4 at sigma 0.5, 3.2e-5 at 8.
    const auto stripe = [](int a, int, int c) {
        return c == 40 ? 0.05 * (1.0 + 0.8 * std::sin(2.0 * std::numbers::pi * 3.0 * a / kAngles)) : 0.0;
    };
    const auto [untreated, narrow, wide] = residuals("varying", stripe, "wavelet", "wavelet-sigma", {"0.5", "8"});
    EXPECT_LT(narrow, untreated);
    EXPECT_LT(wide, 0.3 * narrow);
    EXPECT_NE(stored("varying_2").find("\"wavelet_sigma\": 8"), std::string::npos) << "not recorded";
}

TEST_F(RingParameters, RingLargeWindowMustSpanMoreThanTheStripe) {
    // A stripe 15 columns wide: a median over 21 columns follows it (not
    // detected: measured residual equal to the untreated one); over 51, the
    // default, it is found and removed (measured: no residual left).
    const auto stripe = [](int, int, int c) { return c >= 20 && c < 35 ? 0.1 : 0.0; };
    const auto [untreated, narrow, wide] = residuals("wide", stripe, "large", "ring-large-window", {"21", "51"});
    EXPECT_GT(narrow, 0.9 * untreated);
    EXPECT_LT(wide, 0.1 * untreated);
    EXPECT_NE(stored("wide_1").find("\"large_window\": 21"), std::string::npos) << "not recorded";
}

TEST_F(RingParameters, RingDropRatioLeavesOutThatShareOfTheSortedValuesHalfAtEachEnd) {
    // A stripe in the first quarter of the views only: the large-stripe
    // measure (the mean of each column's sorted values) sees it unless the
    // quarter is dropped: a drop ratio of 0.45 leaves out 0.225 at each end
    // (stripe found and removed, measured: no residual), 0.55 leaves out
    // 0.275 (not found: the untreated residual).
    const auto stripe = [](int a, int, int c) { return c == 40 && a < kAngles / 4 ? 0.3 : 0.0; };
    const auto [untreated, kept, dropped] = residuals("partial", stripe, "large", "ring-drop-ratio", {"0.45", "0.55"});
    EXPECT_LT(kept, 0.1 * untreated);
    EXPECT_GT(dropped, 0.9 * untreated);
    EXPECT_NE(stored("partial_2").find("\"drop_ratio\": 0.55"), std::string::npos) << "not recorded";
}

// ---------------------------------------------------------------- half acquisition, GPU corrections

TEST_F(TomoReconOptions, OverlapWindowSetsHowManyColumnsAreMatched) {
    // 360 degrees, the detector sees columns 43 ... 126 of a 127-column
    // field: the axis (63) at its column 20.
    const int full = 127, first = 43, columns = full - first, projections = 360;
    const LineIntegrals field = phantomScan(full, uniformAngles(projections, 2 * std::numbers::pi));
    writeTransmissions(m_dir / "half.raw", projections, columns,
                       [&](int a, int r, int c) { return field(a, r, first + c); });
    auto foundAxis = [&](int window) {
        const ToolRun r = recon(quoted(m_dir / "half.raw") + rawShape(projections, columns) +
                                " --angle-range 360 --strategy cpu --half-acquisition auto --overlap-window " +
                                std::to_string(window) + " -o " + quoted(m_dir / ('w' + std::to_string(window) + ".h5")));
        EXPECT_EQ(r.exitCode, 0) << r.err;
        std::smatch m;
        EXPECT_TRUE(std::regex_search(r.out, m, std::regex(R"(half acquisition: axis ([0-9.]+) found)"))) << r.out;
        return m.empty() ? NAN : std::stod(m[1]);
    };
    // Measured: 19.82 matching 6 columns, 19.97 matching 100.
    const double narrow = foundAxis(6), wide = foundAxis(100);
    std::cout << "MEASURED half-acquisition axis (truth 20): " << narrow << " matching 6 columns, " << wide
              << " matching 100\n";
    EXPECT_LT(std::abs(wide - 20.0), 0.1);
    EXPECT_GT(std::abs(narrow - 20.0), 2 * std::abs(wide - 20.0));
    EXPECT_NE(test::readText(m_dir / "w6.h5").find("\"window\": 6"), std::string::npos) << "not recorded";
}

TEST_F(TomoReconOptions, CpuCorrectionsKeepsTheCorrectionsOfAGpuStrategyOnTheCpu) {
    if (gpuDevices().empty())
        GTEST_SKIP() << "no CUDA device: --cpu-corrections only moves the corrections of a CUDA strategy";
    test::writeNoiselessScan(m_dir / "scan.h5", 64, 4, 90);
    const std::string in = quoted(m_dir / "scan.h5") + " --center 31.5 --strategy tex-optimized --zingers";
    ToolRun onGpu, onCpu;
    onGpu = recon(in + " -o " + quoted(m_dir / "gpu.h5"));
    onCpu = recon(in + " --cpu-corrections -o " + quoted(m_dir / "cpu.h5"));
    ASSERT_EQ(onGpu.exitCode, 0) << onGpu.err;
    ASSERT_EQ(onCpu.exitCode, 0) << onCpu.err;
    EXPECT_EQ(onGpu.out.find("(on cpu)"), std::string::npos) << onGpu.out;
    EXPECT_NE(onCpu.out.find("(on cpu)"), std::string::npos) << onCpu.out;
    // The README: the same values within 1e-5 relative.
    const ImageStack gpu = readVolume(m_dir / "gpu.h5"), cpu = readVolume(m_dir / "cpu.h5");
    double peak = 0.0;
    for (float v : cpu.data) peak = std::max(peak, std::abs(static_cast<double>(v)));
    EXPECT_LE(maxAbsDifference(gpu, cpu), 1e-5 * peak);
}

// ---------------------------------------------------------------- what the program says

TEST_F(TomoReconOptions, InfoChecksTheReconstructionOptionsFormButAppliesNone) {
    test::writeNoiselessScan(m_dir / "scan.h5", 32, 2, 60);
    const std::string in = quoted(m_dir / "scan.h5") + " --info ";
    // Well-formed options that a run would refuse for this input are not applied.
    const ToolRun r = recon(in + "--rows 500:600 --center 1e6 --region 0,0,5000,5000");
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("input: "), std::string::npos) << r.out;
    // Malformed ones are refused, as in a run (the README says so).
    for (const std::string& bad : {std::string("--filter bogus"), std::string("--rows abc"),
                                   std::string("--threads 5000"), std::string("--slices-per-pass 3")})
        test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon", in + bad, m_dir.path(), 2,
                                 bad.substr(0, bad.find(' ')));
}

TEST_F(TomoReconOptions, ListStrategiesSaysWhyThereIsNoGpu) {
    const ToolRun r = recon("--list-strategies");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    if (gpuDevices().empty()) {
        // Before, nothing was said about GPUs at all.
        EXPECT_TRUE(std::regex_search(r.out, std::regex(R"((^|\n)GPUs: none \(.+\)\n)"))) << r.out;
    } else {
        EXPECT_NE(r.out.find("GPU 0: "), std::string::npos) << r.out;
    }
}

TEST_F(TomoReconOptions, MemoryBudgetIsPrintedStoredAndCappedAtHalfTheMemory) {
    test::writeNoiselessScan(m_dir / "scan.h5", 32, 2, 60);
    const std::string in = quoted(m_dir / "scan.h5") + " --center 15.5 --strategy cpu -q -o ";
    // The default: printed and stored.
    const ToolRun byDefault = recon(in + quoted(m_dir / "default.h5"));
    ASSERT_EQ(byDefault.exitCode, 0) << byDefault.err;
    const double defaultGiB = static_cast<double>(defaultMemoryBudget()) / (1 << 30);
    EXPECT_NEAR(test::numberAfter(byDefault.out, "MiB of a"), defaultGiB, 0.01 * defaultGiB) << byDefault.out;
    EXPECT_NE(test::readText(m_dir / "default.h5").find("GiB (the default: 1/16 of the machine's"), std::string::npos);
    // Given: the same.
    const ToolRun given = recon(in + quoted(m_dir / "given.h5") + " --memory-budget 0.5");
    ASSERT_EQ(given.exitCode, 0) << given.err;
    EXPECT_EQ(test::numberAfter(given.out, "MiB of a"), 0.5) << given.out;
    EXPECT_NE(test::readText(m_dir / "given.h5").find("0.5 GiB (--memory-budget)"), std::string::npos);
    // Beyond the machine's memory: capped at half of it, with a warning.
    const ToolRun huge = recon(in + quoted(m_dir / "huge.h5") + " --memory-budget 1e6");
    ASSERT_EQ(huge.exitCode, 0) << huge.err;
    const double half = static_cast<double>(physicalMemoryBytes()) / 2 / (1 << 30);
    EXPECT_NE(huge.out.find("warning: --memory-budget 1e+06 GiB is more than half of this machine's"),
              std::string::npos)
        << huge.out;
    EXPECT_NEAR(test::numberAfter(huge.out, "MiB of a"), half, 0.01 * half) << huge.out;
    EXPECT_NE(test::readText(m_dir / "huge.h5").find("capped at half the machine's memory"), std::string::npos);
}

} // namespace
} // namespace tomo
