// reconstructVolume's limits: its host-memory budget (here 1 GiB for the
// chunk buffers and a CPU plan's working copies) whatever the region, and
// the share of clamped values beyond which data are refused as broken.
#include "tomo/pipeline.h"
#include "tomo/volume_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include <sys/resource.h>

namespace tomo {
namespace {

/// One transmission everywhere, made up on the fly: no file, no copy.
class ConstantReader final : public DatasetReader {
public:
    ConstantReader(int projections, int rows, int columns, float value = 0.5f) : m_value(value) {
        m_info.path = "constant";
        m_info.projections = projections;
        m_info.rows = rows;
        m_info.columns = columns;
        for (int a = 0; a < projections; ++a) m_info.angles.push_back(a * 3.14159265358979 / projections);
    }
    void readSinograms(int, int, std::span<float> out) override { std::fill(out.begin(), out.end(), m_value); }
    bool readMeanFlat(int, int, std::span<float>) override { return false; }
    bool readMeanDark(int, int, std::span<float>) override { return false; }

private:
    float m_value;
};

/// Keeps nothing: only the pipeline's own memory counts.
class DiscardingWriter final : public VolumeWriter {
public:
    void writeSlices(int, int count, std::span<const float>) override { slices += count; }
    void commit() override { committed = true; }
    int slices = 0;
    bool committed = false;
};

double peakResidentGiB() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0); // ru_maxrss is in KiB
}

TEST(PipelineLimits, SmallRegionStaysWithinTheMemoryBudget) {
    // 16 MiB per sinogram row: 24 rows are 384 MiB per copy. The fast CPU
    // strategy keeps three copies of a batch (filtered, and packed with its
    // differences): with unbounded batches the peak was 1.27 GiB here, with
    // the bound 0.86 GiB.
    constexpr int kProjections = 2048, kRows = 24, kColumns = 2048;
    ConstantReader reader(kProjections, kRows, kColumns);
    VolumeJob job;
    job.geometry.sliceWidth = kColumns;
    job.geometry.sliceHeight = kColumns;
    job.geometry.region = Region{1000, 1000, 16, 16};
    job.options.strategy = "cpu";
    job.memoryBudget = std::size_t{1} << 30;
    DiscardingWriter writer;
    const VolumeReport report = reconstructVolume(reader, job, writer);
    EXPECT_EQ(writer.slices, kRows);
    const double peak = peakResidentGiB();
    std::printf("MEASURED pipeline peak resident memory, 2048 x 2048 sinograms, 16x16 region: %.2f GiB (%s)\n", peak,
                report.strategy.c_str());
    // The budget (1 GiB) plus the program, the FFT plans and allocator slack.
    EXPECT_LT(peak, 1.1);
}

TEST(PipelineLimits, TooManyClampedValuesStopTheRunBeforeTheCommit) {
    // Transmission 0 (data never written, flats equal to darks): every value
    // is clamped. Refused by default, naming the file and the rows.
    ConstantReader zeros(30, 4, 16, 0.0f);
    VolumeJob job;
    job.options.strategy = "cpu-reference";
    job.chunkRows = 2;
    DiscardingWriter writer;
    try {
        reconstructVolume(zeros, job, writer);
        FAIL() << "no TooManyClampedValues";
    } catch (const TooManyClampedValues& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("rows 0..1 of constant: 100 % of the values (960 of 960)"), std::string::npos)
            << message;
        EXPECT_NE(message.find("expected at most 1 %"), std::string::npos) << message;
    }
    EXPECT_FALSE(writer.committed);

    // Acknowledged: the same data go through and are counted.
    job.maxClampedFraction = 1.0;
    DiscardingWriter accepting;
    EXPECT_EQ(reconstructVolume(zeros, job, accepting).preprocess.clamped, 4u * 30 * 16);
    EXPECT_TRUE(accepting.committed);

    job.maxClampedFraction = 1.5;
    DiscardingWriter invalid;
    EXPECT_THROW(reconstructVolume(zeros, job, invalid), InvalidArgument);
}

} // namespace
} // namespace tomo
