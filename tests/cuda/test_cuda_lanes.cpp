// The conveyor on two GPUs (VolumeJob::devices): the slices of one GPU,
// bit for bit, both on the raw path (each plan
// corrects the stored values it gets, from the page-locked buffers lane 0's
// plan allocated) and with a corrector per GPU (rings and zingers).
#include "cuda_test_util.h"

#include "../core/pipeline_test_helpers.h"

#include "tomo/registry.h"

#include <gtest/gtest.h>

namespace tomo {
namespace {

using namespace test;

TEST(CudaLanes, TwoGpusGiveTheSlicesOfOne) {
    TOMO_REQUIRE_CUDA();
    const std::vector<GpuDevice> gpus = gpuDevices();
    if (gpus.size() < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << gpus.size();
    Scan scan = makeScan(37); // rows no lane count divides
    CountsReader reader(scan.lineIntegrals, scan.angles);
    for (const bool corrections : {false, true}) {
        SCOPED_TRACE(corrections ? "rings and zingers on each GPU" : "raw rows corrected by each plan");
        VolumeJob job = jobFor(scan, "alu", 4);
        job.options.device = gpus[0].index;
        if (corrections) {
            job.corrections.rings.method = RingMethod::Sorting;
            job.corrections.zingers.enabled = true;
        }
        MemoryWriter one(kBins, kBins, 37);
        const VolumeReport single = reconstructVolume(reader, job, one);
        job.devices = {gpus[0].index, gpus[1].index};
        MemoryWriter two(kBins, kBins, 37);
        const VolumeReport report = reconstructVolume(reader, job, two);
        ASSERT_EQ(report.lanes.size(), 2u);
        EXPECT_GT(report.lanes[0].chunks, 0);
        EXPECT_GT(report.lanes[1].chunks, 0) << "the second GPU took no chunk";
        EXPECT_EQ(report.lanes[0].slices + report.lanes[1].slices, 37);
        EXPECT_EQ(report.lanes[1].correctedOn.find("CUDA device") != std::string::npos, corrections)
            << report.lanes[1].correctedOn;
        EXPECT_EQ(single.lanes.size(), 1u);
        // The same kernels on the same inputs, IEEE arithmetic: the same floats on either GPU.
        EXPECT_EQ(two.volume.data, one.volume.data) << gpus[0].name << " / " << gpus[1].name;
    }
}

} // namespace
} // namespace tomo
