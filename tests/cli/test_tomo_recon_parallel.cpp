// tomo-recon's --gpus on a bad list: one-line errors naming the option and
// what was expected (on a machine without GPUs, which CI is, and on one with
// them); --resume without --mpi.
#include "cli_runner.h"

#include "tomo/registry.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace tomo {
namespace {

using test::quoted;

constexpr int kBins = 32, kRows = 3, kAngles = 48;

class TomoReconParallel : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        s_data = new test::TempDir;
        test::writeNoiselessScan(scan(), kBins, kRows, kAngles);
    }
    static void TearDownTestSuite() {
        delete s_data;
        s_data = nullptr;
    }
    static std::filesystem::path scan() { return *s_data / "phantom.h5"; }

    /// Refused before anything is written: exit `code`, one line with `needle`.
    void expectOneLineError(const std::string& options, int code, const std::string& needle) {
        test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon",
                                 quoted(scan()) + " -o " + quoted(m_dir / "v.h5") + " --center 15.5 -q " + options,
                                 m_dir.path(), code, needle);
    }

    test::TempDir m_dir;
    static test::TempDir* s_data;
};

test::TempDir* TomoReconParallel::s_data = nullptr;

TEST_F(TomoReconParallel, BadGpuListsAreOneLineErrors) {
    expectOneLineError("--gpus ''", 2, "--gpus '': expected all|N,N,...");
    expectOneLineError("--gpus 0,x", 2, "--gpus 0,x: 'x' is not a GPU index");
    expectOneLineError("--gpus 0,-1", 2, "--gpus 0,-1: '-1' is not a GPU index");
    expectOneLineError("--gpus 1,,2", 2, "--gpus 1,,2: '' is not a GPU index");
    expectOneLineError("--gpus 0,1,0", 2, "--gpus 0,1,0: GPU 0 is listed twice; expected each GPU once");
    expectOneLineError("--gpus 0 --device 0", 2, "--gpus and --device both choose GPUs; give one of them");
    expectOneLineError("--gpus 0 --strategy cpu", 2,
                       "--gpus applies to the CUDA strategies; strategy 'cpu' runs on the CPU threads");
    if (gpuDevices().empty()) {
        expectOneLineError("--gpus 0", 4, "--gpus 0: there is no GPU 0; this machine has no CUDA GPU");
        expectOneLineError("--gpus all", 4, "--gpus all: this machine has no CUDA GPU");
    } else {
        expectOneLineError("--gpus 0,999", 4, "--gpus 0,999: there is no GPU 999; this machine has GPU");
    }
}

// The workstation's Reconstruct to File stores its GPU choice in the run
// config (key gpus): --config runs on those GPUs as --gpus would, and checks them as --gpus.
TEST_F(TomoReconParallel, TheRunConfigsGpusAreTakenAsGpusIs) {
    const auto config = [&](const std::string& json) {
        const std::filesystem::path path = m_dir / "run.json";
        std::ofstream(path) << json;
        return "--config " + quoted(path);
    };
    expectOneLineError(config(R"({"gpus": "0,0"})"), 3, "key 'gpus' must be all, or a comma-separated list of GPU indices 0..1023 each once");
    expectOneLineError(config(R"({"gpus": "0", "strategy": "cpu"})"), 2,
                       "--gpus applies to the CUDA strategies; strategy 'cpu' runs on the CPU threads");
    expectOneLineError(config(R"({"gpus": "7"})") + " --gpus 0,x", 2, "--gpus 0,x: 'x' is not a GPU index");
    if (gpuDevices().size() < 8)
        expectOneLineError(config(R"({"gpus": "7"})"), 4, "--gpus 7: there is no GPU 7");
}

TEST_F(TomoReconParallel, ResumeWithoutMpiIsAnError) {
    expectOneLineError("--resume", 2, "--resume continues the partial output of an --mpi run; add --mpi");
}

} // namespace
} // namespace tomo
