// The preprocessing stage on the GPU (Backend::createCorrector): every
// correction and their combination equal to the CPU stage's correct()
// within 1e-5 relative, with the same statistics (zingers and their
// positions, dead pixels, bad values, clamped values, the ring damage
// guard); chunks with Paganin's row margin; 360° stitching; log-corrected
// input; counts without flats (open-beam columns found); float64 beyond
// float32's range refused; and the batch conveyor with a GPU strategy
// correcting on the GPU. Skips without a GPU.
#include "cuda_test_util.h"

#include "../core/corrections_test_helpers.h"
#include "../core/io_test_helpers.h"
#include "tomo/pipeline.h"
#include "tomo/preprocess.h"
#include "tomo/preview.h"

#include <cmath>
#include <cstdint>
#include <random>

namespace tomo::cudatest {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int kRows = 7, kProjections = 180, kColumns = 160;
constexpr float kFlat = 20000.0f, kDark = 100.0f;

/// Raw uint16 counts of a Shepp-Logan scan with what real detectors add:
/// column gains (rings), zingers, a dead pixel, noise, and two flat groups
/// (before and after) that differ, so flats are blended.
std::shared_ptr<test::CountsDataset> faultyScan(double lastAngle = kPi, int projections = kProjections) {
    std::vector<double> angles(static_cast<std::size_t>(projections));
    for (int a = 0; a < projections; ++a) angles[a] = lastAngle * a / projections;
    const ImageStack p = projectPhantom(test::phantom2D(kColumns, kRows), angles);
    std::mt19937 random(7);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    std::vector<float> gain(kColumns);
    for (int c = 0; c < kColumns; ++c) gain[c] = 1.0f + (c % 17 == 3 ? 0.04f : 0.0f) + (c % 29 == 5 ? -0.03f : 0.0f);
    ImageStack counts(kColumns, projections, kRows);
    for (int r = 0; r < kRows; ++r)
        for (int a = 0; a < projections; ++a)
            for (int c = 0; c < kColumns; ++c) {
                const float drift = 1.0f + 0.05f * a / projections; // the beam brightens: flats before and after
                float v = kDark + (kFlat * drift - kDark) * gain[c] * std::exp(-p.image(r)[static_cast<std::size_t>(a) * kColumns + c] * (1.0f + 0.02f * r)) +
                          40.0f * noise(random);
                if ((r * 131 + a * 17 + c) % 997 == 0) v += 15000.0f; // a zinger
                counts.image(r)[static_cast<std::size_t>(a) * kColumns + c] = std::round(std::clamp(v, 0.0f, 65535.0f));
            }
    auto scan = std::make_shared<test::CountsDataset>(std::move(counts), angles, SampleType::UInt16);
    std::vector<float> before(static_cast<std::size_t>(kRows) * kColumns), after(before.size()),
        dark(before.size(), kDark);
    for (int r = 0; r < kRows; ++r)
        for (int c = 0; c < kColumns; ++c) {
            before[r * kColumns + c] = kDark + (kFlat - kDark) * gain[c];
            after[r * kColumns + c] = kDark + (kFlat * 1.05f - kDark) * gain[c];
        }
    before[3 * kColumns + 50] = after[3 * kColumns + 50] = kDark; // a dead pixel
    scan->addFlatGroup(0, before);
    scan->addFlatGroup(projections, after);
    scan->setDark(dark);
    return scan;
}

double relativeDifference(const ImageStack& gpu, const ImageStack& cpu) {
    double worst = 0.0, peak = 0.0;
    for (std::size_t i = 0; i < cpu.data.size(); ++i) {
        worst = std::max(worst, std::abs(static_cast<double>(gpu.data[i]) - cpu.data[i]));
        peak = std::max(peak, std::abs(static_cast<double>(cpu.data[i])));
    }
    return worst / peak;
}

/// Rows [first, first + count) through the CPU stage and the GPU corrector.
void expectGpuEqualsCpu(DatasetReader& reader, const CorrectionOptions& options, int first, int count,
                        const std::string& what) {
    SCOPED_TRACE(what);
    PreprocessingStage stage(reader, options);
    PreprocessStats cpuStats, gpuStats;
    const ImageStack cpu = stage.correct(stage.read(first, count), &cpuStats);
    const ReconOptions recon = optionsFor("tex-optimized", Interpolation::Linear, Precision::Float32, 1);
    const std::unique_ptr<ChunkCorrector> corrector = backendNamed("tex-optimized").createCorrector(stage, recon);
    ASSERT_TRUE(corrector);
    EXPECT_TRUE(corrector->where().find("CUDA device") != std::string::npos) << corrector->where();
    const ImageStack gpu = corrector->correct(stage.read(first, count), &gpuStats);
    ASSERT_EQ(gpu.width, cpu.width);
    ASSERT_EQ(gpu.height, cpu.height);
    ASSERT_EQ(gpu.depth, cpu.depth);
    const double difference = relativeDifference(gpu, cpu);
    std::printf("[ GPU stage ] %-40s max |gpu - cpu| / peak = %.3g\n", what.c_str(), difference);
    EXPECT_LE(difference, 1e-5);
    EXPECT_EQ(gpuStats.zingerCount, cpuStats.zingerCount);
    EXPECT_EQ(gpuStats.zingers, cpuStats.zingers);
    EXPECT_EQ(gpuStats.flatZingerCount, cpuStats.flatZingerCount);
    EXPECT_EQ(gpuStats.deadPixelCount, cpuStats.deadPixelCount);
    EXPECT_EQ(gpuStats.deadPixels, cpuStats.deadPixels);
    EXPECT_EQ(gpuStats.badValueCount, cpuStats.badValueCount);
    EXPECT_EQ(gpuStats.badValues, cpuStats.badValues);
    EXPECT_EQ(gpuStats.clamped, cpuStats.clamped);
    EXPECT_EQ(gpuStats.clampedByCorrections, cpuStats.clampedByCorrections);
    // The guard: the same sums but for the logs' last bit (logf on both sides).
    const PreprocessStats::RingDamage &g = gpuStats.rings, &c = cpuStats.rings;
    EXPECT_EQ(g.rows, c.rows);
    EXPECT_NEAR(g.nonStripe, c.nonStripe, 1e-4 + 1e-3 * c.nonStripe);
    EXPECT_NEAR(g.meanChange, c.meanChange, 1e-6 + 1e-3 * std::abs(c.meanChange));
    EXPECT_EQ(g.exceeded(), c.exceeded());
    if (c.rows > 0) std::printf("[ GPU stage ] %-40s guard: %s\n", what.c_str(), g.summary().c_str());
}

CorrectionOptions withRings(RingMethod method) {
    CorrectionOptions o;
    o.rings.method = method;
    return o;
}

TEST(CudaStageCorrections, EveryCorrectionEqualsTheCpuStage) {
    TOMO_REQUIRE_CUDA();
    const std::shared_ptr<test::CountsDataset> held = faultyScan();
    test::CountsDataset& scan = *held;
    expectGpuEqualsCpu(scan, CorrectionOptions(), 0, kRows, "flats before and after, dead pixels");
    CorrectionOptions zingers;
    zingers.zingers.enabled = true;
    expectGpuEqualsCpu(scan, zingers, 0, kRows, "zingers (default 5x5)");
    zingers.zingers.window = 3;
    zingers.zingers.threshold = 0.2;
    expectGpuEqualsCpu(scan, zingers, 1, 4, "zingers 3x3");
    // The wavelet method runs on the logs of these transmissions; each method
    // reports the damage guard's figures for its output rows.
    for (RingMethod m : {RingMethod::Sorting, RingMethod::Large, RingMethod::Dead, RingMethod::All, RingMethod::Wavelet})
        expectGpuEqualsCpu(scan, withRings(m), 0, kRows, "rings " + std::string(ringMethodName(m)));
    CorrectionOptions strong = withRings(RingMethod::Wavelet);
    strong.rings.waveletSigma = 0.5;
    strong.rings.waveletLevel = 2;
    expectGpuEqualsCpu(scan, strong, 2, 3, "rings wavelet, sigma 0.5, level 2");
    CorrectionOptions background;
    background.flatField.backgroundFirst = 2;
    background.flatField.backgroundCount = 8;
    expectGpuEqualsCpu(scan, background, 0, kRows, "background columns");
}

TEST(CudaStageCorrections, CountsWithoutFlatsAreNormalisedByTheOpenBeamFound) {
    TOMO_REQUIRE_CUDA();
    // The phantom (radius 0.9 of the field: air at both edges) as counts of
    // an open beam of 20000, no flats: the stage finds the open-beam columns
    // and both sides divide by them.
    const std::vector<double> angles = uniformAngles(kProjections);
    ImageStack counts = projectPhantom(test::phantom2D(kColumns, 3), angles);
    for (float& v : counts.data) v = std::round(20000.0f * std::exp(-v));
    test::CountsDataset scan(std::move(counts), angles, SampleType::UInt16);
    CorrectionOptions o;
    o.rings.method = RingMethod::Sorting;
    PreprocessingStage stage(scan, o);
    ASSERT_TRUE(stage.foundBackgroundColumns());
    EXPECT_GT(stage.foundBackgroundColumns()->count, 0);
    expectGpuEqualsCpu(scan, o, 0, 3, "no flats: open beam found, rings sorting");
}

/// Float64 counts in memory ([projection][row][column]) with a flat of 2000:
/// readRawRows hands the doubles over as stored (an HDF5 float64 dataset does).
class Float64Counts final : public DatasetReader {
public:
    Float64Counts(std::vector<double> values, int projections, int rows, int columns) : m_values(std::move(values)) {
        m_info.path = "big.h5";
        m_info.format = DatasetFormat::Raw;
        m_info.projections = projections;
        m_info.rows = rows;
        m_info.columns = columns;
        m_info.sampleType = SampleType::Float64;
        m_info.angles = uniformAngles(projections);
        m_info.flats = 1;
    }
    void readSinograms(int, int, std::span<float>) override { throw Error("not used"); }
    bool readMeanFlat(int, int, std::span<float> out) override {
        std::fill(out.begin(), out.end(), 2000.0f);
        return true;
    }
    bool readMeanDark(int, int, std::span<float>) override { return false; }
    void readRawRows(int firstRow, int rowCount, std::span<std::byte> out) override {
        const DatasetInfo& i = m_info;
        auto* to = reinterpret_cast<double*>(out.data());
        for (int a = 0; a < i.projections; ++a)
            for (int r = 0; r < rowCount; ++r)
                for (int c = 0; c < i.columns; ++c)
                    *to++ = m_values[(static_cast<std::size_t>(a) * i.rows + firstRow + r) * i.columns + c];
    }

private:
    std::vector<double> m_values;
};

TEST(CudaStageCorrections, Float64BeyondFloat32IsRefused) {
    TOMO_REQUIRE_CUDA();
    constexpr int A = 32, R = 2, C = 40;
    std::vector<double> data(static_cast<std::size_t>(A) * R * C, 1000.0);
    data[(7 * R + 1) * C + 9] = 1e300; // +inf in float: the whole slice would be wrong
    Float64Counts reader(std::move(data), A, R, C);
    PreprocessingStage stage(reader, CorrectionOptions());
    const ReconOptions recon = optionsFor("tex-optimized", Interpolation::Linear, Precision::Float32, 1);
    const std::unique_ptr<ChunkCorrector> corrector = backendNamed("tex-optimized").createCorrector(stage, recon);
    ASSERT_TRUE(corrector);
    const std::string message = test::messageOf<DataError>([&] { corrector->correct(stage.read(0, 2)); });
    EXPECT_TRUE(test::contains(message, "big.h5: value is NaN, inf or beyond float32's range at row 1, angle 7, "
                                        "column 9"));
    // The CPU names the value.
    EXPECT_TRUE(test::contains(test::messageOf<DataError>([&] { stage.load(0, 2); }),
                               "big.h5: value is 1e+300 at row 1, angle 7, column 9"));
}

TEST(CudaStageCorrections, PaganinWithItsRowMarginAndEverythingTogether) {
    TOMO_REQUIRE_CUDA();
    const std::shared_ptr<test::CountsDataset> held = faultyScan();
    test::CountsDataset& scan = *held;
    CorrectionOptions paganin;
    paganin.paganin = {true, 200.0, 25.0, 0.5, 3e-6};
    // Chunks inside the detector and at both edges (margin rows repeated).
    expectGpuEqualsCpu(scan, paganin, 0, 2, "Paganin, rows 0-1");
    expectGpuEqualsCpu(scan, paganin, 3, 2, "Paganin, rows 3-4");
    expectGpuEqualsCpu(scan, paganin, 5, 2, "Paganin, rows 5-6");
    CorrectionOptions all = paganin;
    all.zingers.enabled = true;
    all.rings.method = RingMethod::All;
    all.flatField.backgroundFirst = 0;
    all.flatField.backgroundCount = 6;
    expectGpuEqualsCpu(scan, all, 2, 3, "zingers, background, rings all, Paganin");
}

TEST(CudaStageCorrections, HalfAcquisitionStitchingEqualsTheCpuStage) {
    TOMO_REQUIRE_CUDA();
    const std::shared_ptr<test::CountsDataset> held = faultyScan(2 * kPi, 2 * kProjections);
    test::CountsDataset& scan = *held;
    CorrectionOptions half;
    half.halfAcquisition.enabled = true;
    half.halfAcquisition.axis = 30.25;
    half.rings.method = RingMethod::Sorting;
    expectGpuEqualsCpu(scan, half, 0, kRows, "360° stitched at 30.25, rings sorting");
}

TEST(CudaStageCorrections, LogCorrectedInputEqualsTheCpuStage) {
    TOMO_REQUIRE_CUDA();
    const std::vector<double> angles = uniformAngles(kProjections);
    ImageStack p = projectPhantom(test::phantom2D(kColumns, 3), angles);
    for (std::size_t i = 0; i < p.data.size(); i += 613) p.data[i] -= 2.0f; // dark zingers in line integrals
    test::CountsDataset scan(std::move(p), angles);
    scan.setLogCorrected();
    CorrectionOptions o;
    o.zingers.enabled = true;
    o.rings.method = RingMethod::All;
    expectGpuEqualsCpu(scan, o, 0, 3, "log-corrected: zingers, rings all");
}

TEST(CudaStageCorrections, ConveyorCorrectsOnTheGpuAndEqualsTheCpuStage) {
    TOMO_REQUIRE_CUDA();
    const std::shared_ptr<test::CountsDataset> held = faultyScan();
    test::CountsDataset& scan = *held;
    VolumeJob job;
    job.geometry = ReconGeometry::fullSlice([&] {
        Geometry g;
        g.angles = scan.info().angles;
        g.bins = kColumns;
        return g;
    }());
    job.options = optionsFor("tex-optimized", Interpolation::Linear, Precision::Float32, 1);
    job.corrections.zingers.enabled = true;
    job.corrections.rings.method = RingMethod::All;
    job.chunkRows = 3;
    job.maxClampedFraction = 1.0;
    MemoryWriter writer(static_cast<std::size_t>(kRows) * job.geometry.region.pixels());
    const VolumeReport volume = reconstructVolume(scan, job, writer);
    EXPECT_TRUE(volume.correctedOn.find("CUDA device") != std::string::npos) << volume.correctedOn;
    EXPECT_GT(volume.preprocess.zingerCount, 0u);

    // The CPU stage's sinograms through the same plan.
    PreprocessingStage stage(scan, job.corrections);
    const ImageStack sinograms = stage.load(0, kRows);
    auto plan = backendNamed("tex-optimized").createPlan(job.geometry, job.options);
    std::vector<float> expected(static_cast<std::size_t>(kRows) * job.geometry.region.pixels());
    plan->reconstruct(sinograms.data, kRows, expected);
    const Errors e = compare(writer.volume, expected, kRows);
    EXPECT_TRUE(e.allWritten);
    report("conveyor (GPU corrections) vs CPU stage + plan", e);
    EXPECT_LE(e.relative, 1e-5);
}

TEST(CudaStageCorrections, PreviewCorrectsRowsOnTheGpu) {
    TOMO_REQUIRE_CUDA();
    const std::shared_ptr<test::CountsDataset> scan = faultyScan();
    PreviewSession session(scan);
    PreviewRequest request;
    request.options = optionsFor("tex-optimized", Interpolation::Linear, Precision::Float32, 1);
    request.corrections.zingers.enabled = true;
    request.corrections.rings.method = RingMethod::All;
    for (int row : {2, 5}) {
        request.row = row;
        const PreviewResult result = session.run(request);
        EXPECT_GT(result.corrections.zingerCount, 0u);
        PreprocessingStage stage(*scan, request.corrections);
        PreprocessStats cpuStats;
        const ImageStack cpu = stage.load(row, 1, &cpuStats);
        // The guard's figures come back with the preview, for the workstation to show.
        EXPECT_EQ(result.corrections.rings.rows, 1);
        EXPECT_EQ(result.corrections.rings.nonStripeRow, row);
        EXPECT_NEAR(result.corrections.rings.nonStripe, cpuStats.rings.nonStripe, 1e-4 + 1e-3 * cpuStats.rings.nonStripe);
        ImageStack gpu(cpu.width, cpu.height, 1);
        gpu.data = session.sinogram(row).data;
        EXPECT_LE(relativeDifference(gpu, cpu), 1e-5) << "row " << row;
    }
}

} // namespace
} // namespace tomo::cudatest
