// Plans that take device memory (ReconstructionPlan::takesDeviceMemory, the
// CUDA texture plans): sinograms in GPU memory and slices written there give
// the host path's slices bit for bit (the same kernels on the same filtered
// data), for reconstruct() and setSinograms() + backproject(), in every mix
// of host and device spans. A plan that staged device memory through the
// host would crash here (a host memcpy of a cudaMalloc'd pointer).
#include "cuda_test_util.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

using namespace tomo;
using namespace tomo::cudatest;

namespace {

/// cudaMalloc'd floats, freed with the object.
class DeviceFloats {
public:
    explicit DeviceFloats(std::size_t values) : m_values(values) {
        if (cudaMalloc(&m_data, values * sizeof(float)) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
    }
    explicit DeviceFloats(std::span<const float> host) : DeviceFloats(host.size()) { upload(host); }
    ~DeviceFloats() { cudaFree(m_data); }
    DeviceFloats(const DeviceFloats&) = delete;
    DeviceFloats& operator=(const DeviceFloats&) = delete;

    void upload(std::span<const float> host) {
        if (cudaMemcpy(m_data, host.data(), host.size_bytes(), cudaMemcpyHostToDevice) != cudaSuccess)
            throw std::runtime_error("cudaMemcpy to the device failed");
    }
    std::vector<float> download() const {
        std::vector<float> host(m_values);
        if (cudaMemcpy(host.data(), m_data, host.size() * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess)
            throw std::runtime_error("cudaMemcpy to the host failed");
        return host;
    }
    std::span<float> span() { return {m_data, m_values}; }

private:
    float* m_data = nullptr;
    std::size_t m_values = 0;
};

bool sameBits(std::span<const float> a, std::span<const float> b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

} // namespace

TEST(CudaDeviceMemory, TexturePlansReadAndWriteDeviceMemoryAsHostMemory) {
    TOMO_REQUIRE_CUDA();
    // 5 slices: a partial last pass with 2 and 4 slices per pass.
    const Dataset d = phantomDataset(96, 90, 5);
    const std::size_t outValues = static_cast<std::size_t>(d.slices) * d.geometry.region.pixels();
    const std::vector<float> poison(outValues, -12345.0f);
    DeviceFloats sinograms(d.sinograms);
    DeviceFloats slices(outValues);
    for (const char* strategy : {"tex-standard", "tex-optimized", "alu", "hybrid", "oversample"})
        for (const int spp : {1, 4}) {
            SCOPED_TRACE(std::string(strategy) + " x" + std::to_string(spp));
            ReconOptions options = optionsFor(strategy, Interpolation::Linear, Precision::Float32, spp);
            // hybrid's blocks pick the texture or the ALU path as they start
            // (two roundings): all texture, so that two runs can be compared bit for bit.
            if (std::string(strategy) == "hybrid") options.tuning = "share=16";
            auto plan = backendNamed(strategy).createPlan(d.geometry, options);
            ASSERT_TRUE(plan->takesDeviceMemory());
            std::vector<float> host(outValues);
            plan->reconstruct(d.sinograms, d.slices, host);

            slices.upload(poison);
            plan->reconstruct(sinograms.span(), d.slices, slices.span());
            EXPECT_TRUE(sameBits(slices.download(), host)) << "reconstruct, device in and out";
            EXPECT_EQ(plan->lastStageTimes().upload, 0.0) << "device sinograms are not uploaded";

            std::vector<float> mixed(outValues, -12345.0f);
            plan->setSinograms(sinograms.span(), d.slices);
            plan->backproject(mixed);
            EXPECT_TRUE(sameBits(mixed, host)) << "setSinograms from the device, backproject to the host";

            slices.upload(poison);
            plan->setSinograms(d.sinograms, d.slices);
            plan->backproject(slices.span());
            EXPECT_TRUE(sameBits(slices.download(), host)) << "setSinograms from the host, backproject to the device";
        }
}

TEST(CudaDeviceMemory, ASinglePassForDeviceSlicesIsOneLaunchNotBands) {
    TOMO_REQUIRE_CUDA();
    // The host path of one pass runs in bands of 48 rows (texture_plan.h;
    // TOMO_CUDA_BAND_ROWS, read when the plan is made); device slices take
    // one launch, the same values.
    const Dataset d = phantomDataset(256, 128, 1);
    ASSERT_EQ(setenv("TOMO_CUDA_BAND_ROWS", "48", 1), 0);
    auto plan = backendNamed("tex-optimized")
                    .createPlan(d.geometry, optionsFor("tex-optimized", Interpolation::Linear, Precision::Float32, 1));
    unsetenv("TOMO_CUDA_BAND_ROWS");
    std::vector<float> banded(d.geometry.region.pixels(), -12345.0f);
    plan->setSinograms(d.sinograms, 1);
    plan->backproject(banded);
    DeviceFloats slices(std::vector<float>(banded.size(), -12345.0f));
    plan->backproject(slices.span());
    EXPECT_TRUE(sameBits(slices.download(), banded));
}

TEST(CudaDeviceMemory, OtherPlansSayTheyTakeHostMemoryOnly) {
    TOMO_REQUIRE_CUDA();
    const Dataset d = phantomDataset(64, 60, 1);
    for (const char* strategy : {"cpu", "cpu-reference", "gridrec"}) {
        auto plan = backendNamed(strategy).createPlan(
            d.geometry, optionsFor(strategy, Interpolation::Linear, Precision::Float32, 1));
        EXPECT_FALSE(plan->takesDeviceMemory()) << strategy;
    }
}
