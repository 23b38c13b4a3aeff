// The OpenCL runtime around the kernels: devices and their choice, the
// message without a platform, option checks, build failures with their log,
// the program-binary cache across processes.
#include "opencl_test_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

namespace tomo::ocltest {
namespace {

namespace fs = std::filesystem;

/// This test process; in a death-test child (which re-runs the test body
/// from its start), its parent: so both name the same folders and sources.
int testProcessId() { return GTEST_FLAG_GET(internal_run_death_test).empty() ? ::getpid() : ::getppid(); }

/// A fresh folder of this test (the same in a death-test child), removed at the end.
struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& tag) {
        path = fs::temp_directory_path() / ("tomo-ocl-test-" + tag + "-" + std::to_string(testProcessId()));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

/// Sets an environment variable for the scope of the object.
struct ScopedEnv {
    std::string name, old;
    bool had = false;
    ScopedEnv(const char* n, const std::string& value) : name(n) {
        if (const char* v = std::getenv(n)) had = true, old = v;
        ::setenv(n, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (had) ::setenv(name.c_str(), old.c_str(), 1);
        else ::unsetenv(name.c_str());
    }
};

/// A program source no other test builds (so no process has it in memory
/// or on disk), the same in a death-test child.
std::string uniqueSource(const std::string& tag) {
    return "// " + tag + " " + std::to_string(testProcessId()) +
           "\n__kernel void scaleBy(__global float* v, float s) { v[get_global_id(0)] *= s; }\n";
}

TEST(OpenClRuntime, DevicesAreListedAndChosenByIndexOrName) {
    TOMO_REQUIRE_OPENCL();
    const auto devices = openclDevices();
    ASSERT_FALSE(devices.empty());
    EXPECT_TRUE(openclStatus().empty());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        EXPECT_EQ(devices[i].index, static_cast<int>(i));
        EXPECT_FALSE(devices[i].name.empty());
        EXPECT_FALSE(devices[i].platform.empty());
        std::printf("MEASURED OpenCL device %d: %s (%s, %s), %d compute units, images %s, fp16 %s, fp64 %s\n",
                    devices[i].index, devices[i].name.c_str(), devices[i].platform.c_str(), devices[i].type.c_str(),
                    devices[i].computeUnits, devices[i].images ? "yes" : "no", devices[i].fp16 ? "yes" : "no",
                    devices[i].fp64 ? "yes" : "no");
    }
    const Dataset d = gputest::phantomDataset(32, 16, 1);
    ReconOptions o = optionsFor("ocl-alu", Interpolation::Linear, Precision::Float32, 1);
    // By a part of its name, in any case.
    std::string part = devices.front().name.substr(0, 4);
    for (char& c : part) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    o.openclDevice = part;
    EXPECT_NO_THROW(gputest::backendNamed("ocl-alu").createPlan(d.geometry, o));
    // A device that does not exist: the error lists those that do.
    for (const std::string& bad : {std::to_string(devices.size()), std::string("no-such-device-xyz")}) {
        o.openclDevice = bad;
        try {
            gputest::backendNamed("ocl-alu").createPlan(d.geometry, o);
            FAIL() << "device '" << bad << "' was accepted";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(devices.front().name), std::string::npos) << e.what();
        }
    }
    // The environment's choice is the default.
    ScopedEnv env("TOMO_OPENCL_DEVICE", "no-such-device-xyz");
    o.openclDevice.clear();
    EXPECT_THROW(gputest::backendNamed("ocl-alu").createPlan(d.geometry, o), InvalidArgument);
}

TEST(OpenClRuntime, AutoWeighsOpenClOnACpuDriverOnlyWhenChosen) {
    TOMO_REQUIRE_OPENCL();
    const OpenClDevice device = testDevice();
    const char* env = std::getenv("TOMO_OPENCL_DEVICE");
    const bool chosen = env && *env;
    // Left to the default: a CPU driver (PoCL) is not weighed, a GPU is.
    EXPECT_EQ(opencl::autoConsiders(""), chosen || device.type != "cpu") << device.name << " (" << device.type << ")";
    // Named, by option or environment: weighed whatever it is.
    EXPECT_TRUE(opencl::autoConsiders(std::to_string(device.index)));
    ScopedEnv named("TOMO_OPENCL_DEVICE", std::to_string(device.index));
    EXPECT_TRUE(opencl::autoConsiders(""));
}

TEST(OpenClRuntime, WithoutAPlatformTheStrategiesSayWhy) {
    // A child process whose ICD loader sees no vendor (discovery runs once per process).
    // Not every loader reads OCL_ICD_VENDORS (ocl-icd does; the one shipped with the
    // CUDA toolkit does not): the child writes what it saw, and the parent skips there.
    TempDir empty("no-vendors");
    TempDir result("no-vendors-result");
    const fs::path seen = result.path / "seen.txt";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            ::setenv("OCL_ICD_VENDORS", empty.path.c_str(), 1);
            const std::string why = gputest::backendNamed("ocl-alu").unavailableReason();
            const bool listed = openclDevices().empty() && openclStatus() == why;
            std::ofstream(seen) << (openclDevices().empty() ? "no devices\n" : "devices\n") << why;
            std::exit(openclDevices().empty() && (why.empty() || !listed) ? 1 : 0);
        },
        ::testing::ExitedWithCode(0), "");
    std::ifstream in(seen);
    std::string devices, why((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    devices = why.substr(0, why.find('\n'));
    if (devices == "devices") GTEST_SKIP() << "this OpenCL ICD loader ignores OCL_ICD_VENDORS: it still finds the installed platforms";
    EXPECT_EQ(devices, "no devices");
    EXPECT_NE(why.find("no OpenCL platform"), std::string::npos) << why;
}

TEST(OpenClRuntime, UnsupportedOptionsAreRejectedClearly) {
    TOMO_REQUIRE_OPENCL();
    for (const char* strategy : {"ocl-tex-standard", "ocl-tex-optimized", "ocl-alu"}) {
        const Backend& b = gputest::backendNamed(strategy);
        ReconOptions o = optionsFor(strategy, Interpolation::Linear, Precision::Float32, 3);
        try {
            b.checkOptions(o);
            FAIL() << strategy << " accepted 3 slices per pass";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find("slicesPerPass 3 (supported: 1, 2, 4)"), std::string::npos)
                << e.what();
        }
    }
    // Wrong sizes name what was expected.
    const Dataset d = gputest::phantomDataset(32, 16, 2);
    auto plan = gputest::backendNamed("ocl-alu").createPlan(d.geometry,
                                                             optionsFor("ocl-alu", Interpolation::Linear,
                                                                        Precision::Float32, 1));
    std::vector<float> out(d.geometry.region.pixels());
    EXPECT_THROW(plan->backproject(out), InvalidArgument); // nothing set yet
    EXPECT_THROW(plan->setSinograms(std::span<const float>(d.sinograms).first(10), 1), InvalidArgument);
    plan->setSinograms(d.sinograms, 2);
    EXPECT_THROW(plan->backproject(out), InvalidArgument); // room for 1 slice, 2 set
    EXPECT_THROW(plan->setRegion(Region{0, 0, 33, 32}), InvalidArgument);
}

TEST(OpenClRuntime, ABuildFailureReportsTheBuildLog) {
    TOMO_REQUIRE_OPENCL();
    const std::string broken = uniqueSource("broken") +
                               "__kernel void broken(__global float* v) { v[0] = tomo_undeclared_identifier; }\n";
    try {
        opencl::buildProgram(broken, "-DTOMO_CHANNELS=1 -DTOMO_HALF=0 -DTOMO_FP64=0");
        FAIL() << "a broken source built";
    } catch (const DeviceError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("does not compile"), std::string::npos) << what;
        EXPECT_NE(what.find("build log"), std::string::npos) << what;
        EXPECT_NE(what.find("tomo_undeclared_identifier"), std::string::npos) << what; // the compiler's own words
    }
}

TEST(OpenClRuntime, ProgramBinariesAreCachedAcrossProcesses) {
    TOMO_REQUIRE_OPENCL();
    TempDir cache("cache");
    ScopedEnv env("TOMO_OPENCL_CACHE", cache.path.string());
    EXPECT_EQ(opencl::programCacheDir(), cache.path);
    const std::string source = uniqueSource("cached");
    const std::string defines = "-DTOMO_CHANNELS=1 -DTOMO_HALF=0 -DTOMO_FP64=0";

    // Another process builds it first and leaves its binary (temp + rename: no temporary left).
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            const opencl::BuildReport first = opencl::buildProgram(source, defines);
            std::exit(!first.fromCache && !first.fromMemory && fs::exists(first.cacheFile) ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(cache.path)) files.push_back(entry.path());
    ASSERT_EQ(files.size(), 1u) << "one binary, no temporary file";
    EXPECT_EQ(files.front().extension(), ".bin");

    // This process reads it, then keeps it in memory.
    const opencl::BuildReport second = opencl::buildProgram(source, defines);
    EXPECT_TRUE(second.fromCache);
    EXPECT_EQ(second.cacheFile, files.front());
    EXPECT_TRUE(opencl::buildProgram(source, defines).fromMemory);

    // A damaged binary is rebuilt from source and replaced.
    const std::string other = uniqueSource("damaged");
    EXPECT_EXIT(std::exit(opencl::buildProgram(other, defines).fromCache ? 1 : 0), ::testing::ExitedWithCode(0), "");
    fs::path damaged;
    for (const auto& entry : fs::directory_iterator(cache.path))
        if (entry.path() != files.front()) damaged = entry.path();
    ASSERT_FALSE(damaged.empty());
    { std::ofstream(damaged, std::ios::binary | std::ios::trunc) << "not a program binary"; }
    const opencl::BuildReport rebuilt = opencl::buildProgram(other, defines);
    EXPECT_FALSE(rebuilt.fromCache);
    std::ifstream in(damaged, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(bytes, "not a program binary");
}

} // namespace
} // namespace tomo::ocltest
