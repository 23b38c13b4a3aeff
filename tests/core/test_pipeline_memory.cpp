// reconstructVolume keeps within its host-memory budget (about 1 GiB for the
// chunk buffers and a CPU plan's working copies) whatever the region: a
// small region back-projects fast, so without a bound its batches, and the
// plan's copies of them, would grow until the peak is twice the budget.
#include "tomo/pipeline.h"
#include "tomo/volume_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include <sys/resource.h>

namespace tomo {
namespace {

/// Transmission 0.5 everywhere, made up on the fly: no file, no copy.
class ConstantReader final : public DatasetReader {
public:
    ConstantReader(int projections, int rows, int columns) {
        m_info.path = "constant";
        m_info.projections = projections;
        m_info.rows = rows;
        m_info.columns = columns;
        for (int a = 0; a < projections; ++a) m_info.angles.push_back(a * 3.14159265358979 / projections);
    }
    void readSinograms(int, int, std::span<float> out) override { std::fill(out.begin(), out.end(), 0.5f); }
    bool readMeanFlat(int, int, std::span<float>) override { return false; }
    bool readMeanDark(int, int, std::span<float>) override { return false; }
};

/// Keeps nothing: only the pipeline's own memory counts.
class DiscardingWriter final : public VolumeWriter {
public:
    void writeSlices(int, int count, std::span<const float>) override { slices += count; }
    void commit() override {}
    int slices = 0;
};

double peakResidentGiB() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0); // ru_maxrss is in KiB
}

TEST(PipelineMemory, SmallRegionStaysWithinTheBudget) {
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
    DiscardingWriter writer;
    const VolumeReport report = reconstructVolume(reader, job, writer);
    EXPECT_EQ(writer.slices, kRows);
    const double peak = peakResidentGiB();
    std::printf("MEASURED pipeline peak resident memory, 2048 x 2048 sinograms, 16x16 region: %.2f GiB (%s)\n", peak,
                report.strategy.c_str());
    // The budget (1 GiB) plus the program, the FFT plans and allocator slack.
    EXPECT_LT(peak, 1.1);
}

} // namespace
} // namespace tomo
