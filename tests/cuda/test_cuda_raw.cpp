// Raw rows corrected on the GPU: the flat-field kernel equals the CPU's
// flatFieldRawRows for every stored type (within the two logf's rounding),
// reconstructRaw equals the CPU's correction followed by reconstruct(), with
// the same statistics and the same NaN/inf error, for every strategy whose
// plans correct raw rows (the texture ones and gridrec), and the batch
// conveyor with such a strategy (which hands the plan the stored values)
// equals one-shot reconstruction. Skips without a GPU.
#include "cuda_test_util.h"

#include "tomo/cuda/diagnostics.h"
#include "tomo/preprocess.h"
#include "tomo/pipeline.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <tuple>

namespace tomo::cudatest {
namespace {

constexpr float kFlat = 20000.0f, kDark = 100.0f;

/// Counts of the phantom's line integrals, projection order, in type T.
template <class T>
std::vector<std::byte> countsOf(const Dataset& d, int rows, float flat = kFlat, float dark = kDark) {
    const int projections = d.geometry.geometry.projections(), bins = d.geometry.geometry.bins;
    std::vector<std::byte> out(static_cast<std::size_t>(rows) * projections * bins * sizeof(T));
    T* v = reinterpret_cast<T*>(out.data());
    for (int r = 0; r < rows; ++r)
        for (int a = 0; a < projections; ++a)
            for (int c = 0; c < bins; ++c) {
                const float p = d.sinograms[(static_cast<std::size_t>(r) * projections + a) * bins + c];
                const float count = dark + (flat - dark) * std::exp(-p);
                v[(static_cast<std::size_t>(a) * rows + r) * bins + c] =
                    static_cast<T>(std::is_integral_v<T> ? std::round(count) : count);
            }
    return out;
}

FlatFieldRows fieldFor(int rows, int bins, float flat = kFlat, float dark = kDark) {
    std::vector<float> f(static_cast<std::size_t>(rows) * bins), k(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) {
        f[i] = flat * (1.0f + 0.01f * static_cast<float>(i % 7)); // a little structure across pixels
        k[i] = dark + static_cast<float>(i % 3);
    }
    return makeFlatFieldRows(f, k, rows, bins, "phantom", 0);
}

/// max |a - b| / max(1, |b|) over all values.
double worstRelative(std::span<const float> a, std::span<const float> b) {
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]) / std::max(1.0, std::abs(double(b[i]))));
    return worst;
}

/// The GPU lists the CPU's bad-value positions, in the same order; beyond
/// the list limit, as many of them, still in order.
void expectSameList(const PreprocessStats& gpu, const PreprocessStats& cpu) {
    if (cpu.badValueCount <= PreprocessStats::kListLimit) {
        EXPECT_EQ(gpu.badValues, cpu.badValues);
        return;
    }
    EXPECT_EQ(gpu.badValues.size(), PreprocessStats::kListLimit);
    const auto key = [](const PixelPosition& p) { return std::tuple(p.row, p.projection, p.column); };
    EXPECT_TRUE(std::is_sorted(gpu.badValues.begin(), gpu.badValues.end(),
                               [&](const PixelPosition& a, const PixelPosition& b) { return key(a) < key(b); }));
}

template <class T>
void expectKernelEqualsCpu(SampleType type, float flat) {
    static const Dataset d = phantomDataset(128, 90, 3);
    const int bins = d.geometry.geometry.bins, projections = d.geometry.geometry.projections();
    auto bytes = countsOf<T>(d, 3, flat, kDark / 10);
    T* values = reinterpret_cast<T*>(bytes.data());
    // A value below the dark level, and one at the saturation level.
    values[(static_cast<std::size_t>(5) * 3 + 1) * bins + 7] = static_cast<T>(1);
    values[(static_cast<std::size_t>(9) * 3 + 2) * bins + 70] = static_cast<T>(flat - 1);
    for (bool interpolate : {false, true}) {
        FlatFieldRows field = fieldFor(3, bins, flat, kDark / 10);
        field.interpolate = interpolate;
        field.saturation = interpolate ? flat - 1 : 0.0f;
        field.dead[2 * bins + 40] = 1;                               // a dead pixel
        if (interpolate) std::fill_n(field.dead.begin(), bins, 1);   // row 0 dead: lines without a good value
        const RawRows raw{type, bytes, projections, 3, bins, 0, "phantom", 0};
        for (const RawRows& part : {raw, rowsOf(raw, 1, 2)}) {
            const FlatFieldRows partField = part.rows == 3 ? field : rowsOf(field, 1, 2);
            std::vector<float> cpu(static_cast<std::size_t>(part.rows) * projections * bins);
            const PreprocessStats cpuStats = flatFieldRawRows(part, partField, cpu);
            PreprocessStats gpuStats;
            const std::vector<float> gpu = cuda::flatFieldOnGpu(part, partField, &gpuStats);
            const double worst = worstRelative(gpu, cpu);
            std::printf("MEASURED flat-field GPU vs CPU %-7s %s rows %d: worst relative difference %.2e, clamped "
                        "%zu, interpolated %zu\n",
                        sampleTypeName(type), interpolate ? "interpolated" : "clamped     ", part.rows, worst,
                        cpuStats.clamped, cpuStats.badValueCount);
            EXPECT_LE(worst, 1e-6) << sampleTypeName(type) << " interpolate " << interpolate;
            EXPECT_EQ(gpuStats.clamped, cpuStats.clamped);
            EXPECT_EQ(gpuStats.badValueCount, cpuStats.badValueCount);
            expectSameList(gpuStats, cpuStats);
            EXPECT_GT(cpuStats.clamped + cpuStats.badValueCount, 0u);
        }
    }
}

TEST(CudaRaw, FlatFieldKernelEqualsTheCpuForEveryStoredType) {
    TOMO_REQUIRE_CUDA();
    expectKernelEqualsCpu<std::uint8_t>(SampleType::UInt8, 250.0f);
    expectKernelEqualsCpu<std::uint16_t>(SampleType::UInt16, kFlat);
    expectKernelEqualsCpu<float>(SampleType::Float32, kFlat);
    expectKernelEqualsCpu<double>(SampleType::Float64, kFlat);
}

TEST(CudaRaw, NotFiniteValuesAreNamed) {
    TOMO_REQUIRE_CUDA();
    std::vector<float> values(4 * 3 * 5, 100.0f); // 4 angles x 3 rows x 5 columns
    values[(static_cast<std::size_t>(2) * 3 + 1) * 5 + 4] = std::numeric_limits<float>::quiet_NaN();
    std::vector<std::byte> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    const RawRows raw{SampleType::Float32, bytes, 4, 3, 5, 0, "scan.h5", 20};
    try {
        cuda::flatFieldOnGpu(raw, makeFlatFieldRows({}, {}, 3, 5, "scan.h5", 20));
        FAIL() << "no DataError";
    } catch (const DataError& e) {
        EXPECT_STREQ(e.what(), "scan.h5: value is NaN, inf or beyond float32's range at row 21, angle 2, column 4; "
                               "expected finite values within float32's range");
    }
}

/// A strategy whose plans correct raw rows on the device, and how close its
/// slices from the GPU's correction come to those from the CPU's (relative
/// RMSE of the worst slice).
struct RawCase {
    const char* strategy;
    int slicesPerPass;
    double tolerance;
};

/// The texture strategies: the correction's difference (<= 1e-6, the kernel
/// test above) goes through a linear back-projection: 1e-6 as before.
/// gridrec: 1e-5, the bound of its twin tests (test_cuda_gridrec.cpp,
/// kTwinTolerance: float FFTs, and pairs split otherwise in the conveyor).
/// The MEASURED lines give the figures.
const RawCase kRawCases[] = {{"tex-standard", 1, 1e-6},  {"tex-standard", 2, 1e-6},  {"tex-standard", 4, 1e-6},
                             {"tex-optimized", 1, 1e-6}, {"tex-optimized", 2, 1e-6}, {"tex-optimized", 4, 1e-6},
                             {"gridrec", 1, 1e-5}};

std::string caseName(const testing::TestParamInfo<RawCase>& info) {
    std::string name = std::string(info.param.strategy) + "_x" + std::to_string(info.param.slicesPerPass);
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
}

class CudaRawPlan : public testing::TestWithParam<RawCase> {};

TEST_P(CudaRawPlan, ReconstructRawEqualsCorrectionOnTheCpuThenReconstruct) {
    TOMO_REQUIRE_CUDA();
    const RawCase& c = GetParam();
    // 11 rows: several passes (texture) and two batches of gridrec's 8 slices
    // (its raw slots turn over; 3 slices in the second: a pair and a lone one).
    constexpr int kBlock = 12, kRows = 11;
    static const Dataset d = phantomDataset(192, 180, kBlock);
    const int bins = d.geometry.geometry.bins, projections = d.geometry.geometry.projections();
    auto bytes = countsOf<std::uint16_t>(d, kBlock);
    // Three counts at the dark level: interpolated, and listed where they are
    // (one in gridrec's second batch).
    auto* counts = reinterpret_cast<std::uint16_t*>(bytes.data());
    for (auto [a, r, c] : {std::tuple{7, 2, 30}, {7, 3, 31}, {150, 10, 100}})
        counts[(static_cast<std::size_t>(a) * kBlock + r) * bins + c] = static_cast<std::uint16_t>(kDark);
    FlatFieldRows field = fieldFor(kBlock, bins);
    field.interpolate = true;
    const RawRows block{SampleType::UInt16, bytes, projections, kBlock, bins, 0, "phantom", 0};
    // Rows 1..11 of the block: a pitched part, as the conveyor's batches are.
    const RawRows raw = rowsOf(block, 1, kRows);
    const FlatFieldRows partField = rowsOf(field, 1, kRows);
    std::vector<float> sinograms(static_cast<std::size_t>(kRows) * projections * bins);
    const PreprocessStats cpuStats = flatFieldRawRows(raw, partField, sinograms);
    ASSERT_EQ(cpuStats.badValueCount, 3u);

    const std::string what = std::string(c.strategy) + " x" + std::to_string(c.slicesPerPass);
    const auto options = optionsFor(c.strategy, Interpolation::Linear, Precision::Float32, c.slicesPerPass);
    auto onGpu = backendNamed(c.strategy).createPlan(d.geometry, options);
    auto onCpu = backendNamed(c.strategy).createPlan(d.geometry, options);
    ASSERT_TRUE(onGpu->correctsRawRows());
    std::vector<float> a(kRows * d.geometry.region.pixels(), -12345.0f), b(a.size(), -12345.0f);
    const PreprocessStats stats = onGpu->reconstructRaw(raw, partField, a);
    onCpu->reconstruct(sinograms, kRows, b);
    const Errors e = compare(a, b, kRows);
    report("reconstructRaw vs CPU correction + reconstruct " + what, e);
    EXPECT_TRUE(e.allWritten);
    EXPECT_LE(e.relative, c.tolerance) << what;
    EXPECT_EQ(stats.clamped, cpuStats.clamped);
    EXPECT_EQ(stats.badValueCount, cpuStats.badValueCount);
    EXPECT_EQ(stats.badValues, cpuStats.badValues);
    EXPECT_GT(onGpu->lastStageTimes().upload, 0.0);
    // The same values again, bit for bit; gridrec's lone last slice within
    // float rounding: gridded again from the same rows, it is summed by the
    // tap matrix, whose points near the origin are summed in another order
    // (test_cuda_gridrec.cpp).
    const std::size_t pixels = d.geometry.region.pixels();
    const std::size_t exact = std::string_view(c.strategy) == "gridrec" ? a.size() - pixels : a.size();
    auto expectSame = [&](std::span<const float> x, const char* how) {
        EXPECT_EQ(std::memcmp(x.data(), a.data(), exact * sizeof(float)), 0) << what << ", " << how;
        if (exact < a.size()) {
            EXPECT_LE(compare(x.subspan(exact), std::span<const float>(a).subspan(exact), 1).maxOfPeak, 1e-6)
                << what << ", " << how;
        }
    };
    // The kept sinograms are the corrected ones: a back-projection again gives the same.
    std::vector<float> again(a.size());
    onGpu->backproject(again);
    expectSame(again, "back-projected again");
    // Rows and slices in the plan's page-locked memory (the conveyor's
    // buffers): the rows go up and the slices come down by DMA alone, the
    // same values.
    const HostBuffer rawMemory = onGpu->allocateHost(bytes.size());
    std::memcpy(rawMemory.data(), bytes.data(), bytes.size());
    RawRows pinnedBlock = block;
    pinnedBlock.values = rawMemory.as<const std::byte>(bytes.size());
    const HostBuffer sliceMemory = onGpu->allocateHost(a.size() * sizeof(float));
    const std::span<float> pinned = sliceMemory.as<float>(a.size());
    std::fill(pinned.begin(), pinned.end(), -12345.0f);
    const PreprocessStats pinnedStats = onGpu->reconstructRaw(rowsOf(pinnedBlock, 1, kRows), partField, pinned);
    expectSame(pinned, "page-locked");
    EXPECT_EQ(pinnedStats.badValues, cpuStats.badValues);
    // Constants of other rows than the raw ones: refused, naming the call.
    try {
        onGpu->reconstructRaw(raw, rowsOf(field, 1, kRows - 1), a);
        ADD_FAILURE() << what << ": constants of 10 rows for 11 accepted";
    } catch (const InvalidArgument& error) {
        EXPECT_EQ(std::string(error.what()).rfind("reconstructRaw: 11 rows x 180 projections x 192 columns", 0), 0u)
            << error.what();
    }
}

/// A NaN in the raw rows (float32) is named by row, angle and column, as by
/// the flat-field kernel alone (NotFiniteValuesAreNamed), in any batch.
TEST_P(CudaRawPlan, NotFiniteValuesAreNamed) {
    TOMO_REQUIRE_CUDA();
    const RawCase& c = GetParam();
    static const Dataset d = phantomDataset(64, 30, 11);
    const int bins = d.geometry.geometry.bins, projections = d.geometry.geometry.projections();
    auto bytes = countsOf<float>(d, d.slices);
    reinterpret_cast<float*>(bytes.data())[(static_cast<std::size_t>(17) * d.slices + 9) * bins + 40] =
        std::numeric_limits<float>::infinity();
    const RawRows raw{SampleType::Float32, bytes, projections, d.slices, bins, 0, "scan.h5", 100};
    auto plan = backendNamed(c.strategy)
                    .createPlan(d.geometry, optionsFor(c.strategy, Interpolation::Linear, Precision::Float32,
                                                       c.slicesPerPass));
    std::vector<float> slices(static_cast<std::size_t>(d.slices) * d.geometry.region.pixels());
    try {
        plan->reconstructRaw(raw, fieldFor(d.slices, bins), slices);
        ADD_FAILURE() << c.strategy << ": no DataError";
    } catch (const DataError& e) {
        EXPECT_STREQ(e.what(), "scan.h5: value is NaN, inf or beyond float32's range at row 109, angle 17, column 40; "
                               "expected finite values within float32's range");
    }
}

INSTANTIATE_TEST_SUITE_P(Strategies, CudaRawPlan, testing::ValuesIn(kRawCases), caseName);

/// Raw uint16 counts of a phantom, with one flat and one dark level.
class CountsReader final : public DatasetReader {
public:
    explicit CountsReader(const Dataset& d) {
        m_info.path = "phantom-counts";
        m_info.format = DatasetFormat::Raw;
        m_info.sampleType = SampleType::UInt16;
        m_info.projections = d.geometry.geometry.projections();
        m_info.rows = d.slices;
        m_info.columns = d.geometry.geometry.bins;
        m_info.flats = 1;
        m_info.flatPositions = {-1.0};
        m_info.darks = 1;
        m_info.angles = d.geometry.geometry.angles;
        m_counts = countsOf<std::uint16_t>(d, d.slices);
    }
    void readSinograms(int, int, std::span<float>) override { throw InvalidArgument("raw rows only"); }
    void readRawRows(int firstRow, int rowCount, std::span<std::byte> out) override {
        const std::size_t line = static_cast<std::size_t>(m_info.columns) * sizeof(std::uint16_t);
        for (int a = 0; a < m_info.projections; ++a)
            std::memcpy(out.data() + static_cast<std::size_t>(a) * rowCount * line,
                        m_counts.data() + (static_cast<std::size_t>(a) * m_info.rows + firstRow) * line,
                        rowCount * line);
    }
    bool readMeanFlat(int, int, std::span<float> out) override {
        std::fill(out.begin(), out.end(), kFlat);
        return true;
    }
    bool readMeanDark(int, int, std::span<float> out) override {
        std::fill(out.begin(), out.end(), kDark);
        return true;
    }

private:
    std::vector<std::byte> m_counts;
};

/// The conveyor's cases: one texture strategy and gridrec.
const RawCase kConveyorCases[] = {{"tex-optimized", 2, 1e-6}, {"gridrec", 1, 1e-5}};

class CudaRawConveyor : public testing::TestWithParam<RawCase> {};

TEST_P(CudaRawConveyor, WithTheGpuCorrectingEqualsOneShot) {
    TOMO_REQUIRE_CUDA();
    const RawCase& c = GetParam();
    static const Dataset d = phantomDataset(160, 150, 7);
    CountsReader reader(d);
    const auto options = optionsFor(c.strategy, Interpolation::Linear, Precision::Float32, c.slicesPerPass);
    VolumeJob job;
    job.geometry = d.geometry;
    job.options = options;
    job.chunkRows = 3; // 3 + 3 + 1: batches that are not whole passes
    MemoryWriter writer(static_cast<std::size_t>(d.slices) * d.geometry.region.pixels());
    const VolumeReport volume = reconstructVolume(reader, job, writer);
    EXPECT_EQ(volume.strategy, c.strategy);
    EXPECT_EQ(volume.correctedOn, c.strategy); // the plan was handed the stored values
    EXPECT_GT(volume.plan.upload, 0.0);
    EXPECT_EQ(volume.preprocess.clamped, 0u);

    // One shot: the CPU's correction of all rows, one reconstruct().
    const auto bytes = countsOf<std::uint16_t>(d, d.slices);
    const FlatFieldRows field =
        makeFlatFieldRows(std::vector<float>(static_cast<std::size_t>(d.slices) * d.geometry.geometry.bins, kFlat),
                          std::vector<float>(static_cast<std::size_t>(d.slices) * d.geometry.geometry.bins, kDark),
                          d.slices, d.geometry.geometry.bins, "phantom-counts", 0);
    std::vector<float> sinograms(d.sinograms.size());
    flatFieldRawRows({SampleType::UInt16, bytes, d.geometry.geometry.projections(), d.slices,
                      d.geometry.geometry.bins, 0, "phantom-counts", 0},
                     field, sinograms);
    auto plan = backendNamed(c.strategy).createPlan(d.geometry, options);
    std::vector<float> expected(writer.volume.size());
    plan->reconstruct(sinograms, d.slices, expected);
    const Errors e = compare(writer.volume, expected, d.slices);
    report(std::string("conveyor (GPU correction) vs one shot (CPU correction) ") + c.strategy + " x" +
               std::to_string(c.slicesPerPass),
           e);
    EXPECT_TRUE(e.allWritten);
    EXPECT_LE(e.relative, c.tolerance) << c.strategy;
}

INSTANTIATE_TEST_SUITE_P(Strategies, CudaRawConveyor, testing::ValuesIn(kConveyorCases), caseName);

} // namespace
} // namespace tomo::cudatest
