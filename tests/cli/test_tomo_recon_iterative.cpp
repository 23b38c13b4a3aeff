// tomo-recon --method and its parameters, checked for the effect the README
// gives them: the iterative result is the library's plan on the same
// corrected data, stored with its parameters and replayed by --config;
// --tv-weight smooths, --nonnegative bounds, --init fbp starts from the FBP,
// --region cuts the whole grid's result; bad values and a strategy without a
// projector are refused in one line, nothing written; fan-beam data run on
// the fan-beam pair.
// And tomo-bench --iterative's table and JSON.
#include "cli_runner.h"

#include "tomo/cone_scan.h"
#include "tomo/dataset.h"
#include "tomo/iterative.h"
#include "tomo/projector.h"
#include "tomo/phantom.h"
#include "tomo/pipeline.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"
#include "tomo/volume_io.h"

#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace tomo {
namespace {

namespace fs = std::filesystem;
using test::quoted;
using test::runTool;
using test::ToolRun;

constexpr int kBins = 64, kRows = 2, kAngles = 40;

/// Total variation of every slice: the sum of |gradient| (forward differences).
double totalVariation(const ImageStack& v) {
    double tv = 0.0;
    for (int z = 0; z < v.depth; ++z)
        for (int y = 0; y + 1 < v.height; ++y)
            for (int x = 0; x + 1 < v.width; ++x) {
                const std::size_t i = (static_cast<std::size_t>(z) * v.height + y) * v.width + x;
                tv += std::hypot(v.data[i + 1] - v.data[i], v.data[i + v.width] - v.data[i]);
            }
    return tv;
}

class TomoReconIterative : public ::testing::Test {
protected:
    void SetUp() override {
        PhantomSpec spec;
        spec.bins = kBins;
        spec.rows = kRows;
        writePhantomDXchange(m_scan, spec, uniformAngles(kAngles), ScanSimulation{}); // Poisson noise, seed 1
    }
    /// tomo-recon on the scan into `name`.h5 with `options`; the volume (empty on failure).
    ImageStack reconstruct(const std::string& name, const std::string& options, ToolRun* run = nullptr) {
        const ToolRun r = recon(quoted(m_scan) + " -o " + quoted(output(name)) + " --center 31.5 " + options);
        if (run) *run = r;
        EXPECT_EQ(r.exitCode, 0) << options << "\n" << r.err;
        return r.exitCode == 0 ? readVolume(output(name)) : ImageStack();
    }
    ToolRun recon(const std::string& args) { return runTool(TOMO_RECON_EXE, args, m_dir.path()); }
    fs::path output(const std::string& name) const { return m_dir / (name + ".h5"); }
    /// Refused with exit code 2, one line naming `part`, no output.
    void refused(const std::string& options, const std::string& part) {
        const ToolRun r = recon(quoted(m_scan) + " -o " + quoted(output("refused")) + " --center 31.5 " + options);
        EXPECT_EQ(r.exitCode, 2) << options << "\n" << r.err;
        EXPECT_EQ(r.errLines().size(), 1u) << r.err;
        EXPECT_NE(r.err.find(part), std::string::npos) << options << "\n" << r.err;
        EXPECT_FALSE(fs::exists(output("refused"))) << options;
    }

    test::TempDir m_dir;
    fs::path m_scan = m_dir / "scan.h5";
};

// The CLI's volume is the library's: the conveyor with the same options on
// the same file (flat/dark + log on the way), bit for bit; the output
// carries the parameters and --config replays them.
TEST_F(TomoReconIterative, SirtIsTheLibrarysPlanStoredAndReplayed) {
    ToolRun run;
    const ImageStack cli = reconstruct("sirt", "--strategy cpu --method sirt --iterations 12 --nonnegative", &run);
    ASSERT_EQ(cli.depth, kRows);
    EXPECT_NE(run.out.find("with sirt, 12 iterations from zero, bounds [0, inf] on cpu's projector pair"),
              std::string::npos)
        << run.out;

    OpenOptions open;
    auto reader = openDataset(m_scan, open);
    VolumeJob job;
    Geometry g;
    g.angles = uniformAngles(kAngles);
    g.bins = kBins;
    g.axis = 31.5;
    job.geometry = ReconGeometry::fullSlice(g);
    job.options.strategy = "cpu";
    job.options.iterative.method = Method::Sirt;
    job.options.iterative.iterations = 12;
    job.options.iterative.bounds.lower = 0.0;
    struct Memory final : VolumeWriter {
        std::vector<float> v = std::vector<float>(kRows * kBins * kBins);
        void writeSlices(int first, int count, std::span<const float> d) override {
            std::copy(d.begin(), d.end(), v.begin() + first * static_cast<std::ptrdiff_t>(d.size() / count));
        }
        void commit() override {}
    } library;
    reconstructVolume(*reader, job, library);
    EXPECT_EQ(cli.data, library.v);

    const std::string stored = test::readText(output("sirt"));
    for (const char* text : {"\"method\": \"sirt\"", "\"iterations\": 12", "\"bounds\": [", "\"init\": \"zero\""})
        EXPECT_NE(stored.find(text), std::string::npos) << text; // the run config among the attributes
    const fs::path config = m_dir / "sirt.json";
    // Replay: the stored run config (attribute run_config) through --config.
    const auto begin = stored.find("{\n  \"angle_range\"");
    ASSERT_NE(begin, std::string::npos);
    const auto end = stored.find("\n}\n", begin);
    ASSERT_NE(end, std::string::npos);
    std::ofstream(config) << stored.substr(begin, end + 3 - begin);
    const ToolRun replay = recon("--config " + quoted(config) + " -o " + quoted(output("replay")));
    ASSERT_EQ(replay.exitCode, 0) << replay.err;
    EXPECT_EQ(readVolume(output("replay")).data, cli.data);
}

// --tv-weight: a larger weight, a smoother image (lower total variation);
// --nonnegative: no value below 0 where the unbounded run has some;
// --init fbp: after one iteration nearer the FBP than from zero.
TEST_F(TomoReconIterative, ParametersHaveTheirEffect) {
    const ImageStack weak = reconstruct("weak", "--strategy cpu --method tv --tv-weight 0.001 --iterations 30");
    const ImageStack strong = reconstruct("strong", "--strategy cpu --method tv --tv-weight 0.3 --iterations 30");
    EXPECT_LT(totalVariation(strong), 0.7 * totalVariation(weak));

    const ImageStack free = reconstruct("free", "--strategy cpu --method sirt --iterations 30");
    const ImageStack bounded = reconstruct("bounded", "--strategy cpu --method sirt --iterations 30 --nonnegative");
    EXPECT_LT(*std::min_element(free.data.begin(), free.data.end()), 0.0f);
    EXPECT_GE(*std::min_element(bounded.data.begin(), bounded.data.end()), 0.0f);

    const ImageStack fbp = reconstruct("fbp", "--strategy cpu");
    const ImageStack fromFbp = reconstruct("fromfbp", "--strategy cpu --method sirt --iterations 1 --init fbp");
    const ImageStack fromZero = reconstruct("fromzero", "--strategy cpu --method sirt --iterations 1");
    EXPECT_LT(test::relativeDifference(fromFbp.data, fbp.data), 0.5 * test::relativeDifference(fromZero.data, fbp.data));

    // --tolerance is stored with the other parameters.
    reconstruct("tol", "--strategy cpu --method cgls --iterations 40 --tolerance 0.01");
    EXPECT_NE(test::readText(output("tol")).find("\"tolerance\": 0.01"), std::string::npos);
}

// --projector fourier: the method runs on the Fourier pair (said, stored in
// the attributes and the run config), as near the phantom as Joseph's
// pair's result (the two discretise the line integrals differently and
// take different paths; measured 0.402 against Joseph's 0.405 after 20
// SIRT iterations of the noisy 64^2 phantom, 5e-2 apart); it applies to the
// iterative methods on cpu and the CUDA strategies only.
TEST_F(TomoReconIterative, FourierProjectorRunsStoredAndNearJosephs) {
    // The fixture's rows lie near the phantom's ends: a scan through its middle.
    PhantomSpec spec;
    spec.bins = kBins;
    spec.rows = 3;
    const fs::path middle = m_dir / "middle.h5";
    writePhantomDXchange(middle, spec, uniformAngles(kAngles), ScanSimulation{});
    const auto run = [&](const std::string& name, const std::string& options) {
        const ToolRun r = recon(quoted(middle) + " -o " + quoted(output(name)) + " --center 31.5 --rows 1 " + options);
        EXPECT_EQ(r.exitCode, 0) << options << "\n" << r.err;
        return std::pair{r, r.exitCode == 0 ? readVolume(output(name)) : ImageStack()};
    };
    const auto [said, fourier] = run("fourier", "--strategy cpu --method sirt --iterations 20 --projector fourier");
    EXPECT_NE(said.out.find("with sirt, 20 iterations from zero, fourier projector on cpu's projector pair"),
              std::string::npos)
        << said.out;
    const ImageStack joseph = run("joseph", "--strategy cpu --method sirt --iterations 20").second;
    ASSERT_EQ(fourier.depth, 1);
    const std::vector<float> truth = rasterizePhantom(spec, 1, kBins, kBins).data;
    const double fourierError = test::relativeDifference(fourier.data, truth);
    const double josephError = test::relativeDifference(joseph.data, truth);
    std::printf("MEASURED SIRT (20 iterations, noisy phantom) vs the phantom: fourier %.3g, joseph %.3g; "
                "between them %.3g\n",
                fourierError, josephError, test::relativeDifference(fourier.data, joseph.data));
    EXPECT_LT(std::abs(fourierError - josephError), 0.1 * josephError);
    const std::string stored = test::readText(output("fourier"));
    for (const char* text : {"fourier, matched, cpu pair", "\"projector\": \"fourier\""})
        EXPECT_NE(stored.find(text), std::string::npos) << text;
    refused("--projector fourier", "--projector applies to --method sirt, cgls or tv (the method is fbp)");
    refused("--method sirt --strategy cpu-reference --projector fourier",
            "strategy 'cpu-reference' has Joseph's projector pair only; the fourier projector runs on 'cpu' and the "
            "CUDA strategies");
    refused("--method sirt --projector radon", "--projector: radon not in {joseph,fourier}");
}

// --region: the iterations run on the whole grid; the region is cut out.
TEST_F(TomoReconIterative, RegionIsCutFromTheWholeGrid) {
    const ImageStack whole = reconstruct("whole", "--strategy cpu --method cgls --iterations 5");
    const ImageStack part = reconstruct("part", "--strategy cpu --method cgls --iterations 5 --region 10,20,30,25");
    ASSERT_EQ(part.width, 30);
    ASSERT_EQ(part.height, 25);
    for (int z = 0; z < kRows; ++z)
        for (int y = 0; y < 25; ++y)
            for (int x = 0; x < 30; ++x)
                ASSERT_EQ(part.data[(static_cast<std::size_t>(z) * 25 + y) * 30 + x],
                          whole.data[(static_cast<std::size_t>(z) * kBins + 20 + y) * kBins + 10 + x]);
}

TEST_F(TomoReconIterative, BadValuesAreRefusedInOneLineWithNothingWritten) {
    refused("--method sirt --iterations -3", "--iterations: '-3' is outside [1, 1000000]");
    refused("--method sirt --iterations 0", "--iterations: '0' is outside [1, 1000000]");
    refused("--method tv --tv-weight nan", "--tv-weight: 'nan' is not a finite number");
    refused("--method tv", "--method tv needs --tv-weight LAMBDA (> 0)");
    refused("--method sirt --tv-weight 0.1", "--tv-weight applies to --method tv (--method sirt)");
    refused("--iterations 5", "--iterations applies to --method sirt, cgls or tv (the method is fbp)");
    refused("--method cgls --nonnegative", "--nonnegative applies to --method sirt or tv (cgls has no constraints)");
    refused("--method sirt --bounds 2,1", "--bounds 2,1: expected MIN,MAX with MIN <= MAX");
    refused("--method sirt --nonnegative --bounds 0,1", "--nonnegative and --bounds: give one");
    refused("--method sirt --interp nearest",
            "method sirt projects with linear interpolation (Joseph's projector): interpolation nearest does not apply");
    refused("--method art", "--method: art not in {fbp,sirt,cgls,tv}");
    // A strategy without a projector pair: cpu-gridrec (in every build), ocl-* (with OpenCL).
    refused("--method sirt --strategy cpu-gridrec",
            "strategy 'cpu-gridrec' cannot run method sirt: it has no forward projector (the iterative methods run "
            "on cpu-reference, cpu");
    if (BackendRegistry::instance().find("ocl-alu"))
        refused("--method sirt --strategy ocl-alu",
                "strategy 'ocl-alu' cannot run method sirt: it has no forward projector (the iterative methods run "
                "on cpu-reference, cpu");
}

// Fan-beam data: the method runs on the fan-beam projector pair (--strategy
// cpu: auto takes the GPU's where there is one), the volume is the
// library's (makeFanProjector + the solver) bit for bit and carries the
// method; a strategy without the pair and a cone-beam volume are refused.
TEST_F(TomoReconIterative, FanBeamDataRunOnTheFanBeamPair) {
    const fs::path htc = test::realData("helsinki_htc2022_fanbeam/htc2022_ta.h5");
    TOMO_REQUIRE_FILE(htc);
    const std::string grid = " --volume 96,96,1 --voxel-size 0.8";
    const ToolRun r =
        recon(quoted(htc) + " -o " + quoted(output("fan")) + grid +
              " --strategy cpu --method sirt --iterations 4 --nonnegative");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("with sirt, 4 iterations from zero, bounds [0, inf] on the cpu-reference fan-beam joseph, "
                         "matched"),
              std::string::npos)
        << r.out;
    const ImageStack cli = readVolume(output("fan"));

    OpenOptions open;
    open.allowDivergentBeam = true;
    const auto reader = openDataset(htc, open);
    const ConeSetup setup = coneSetup(reader->info());
    VolumeGrid g = setup.grid;
    g.nx = g.ny = 96;
    g.nz = 1;
    g.voxelSize = 0.8;
    IterativeOptions sirt;
    sirt.method = Method::Sirt;
    sirt.iterations = 4;
    sirt.bounds.lower = 0.0;
    auto pair = makeFanProjector(setup.geometry, g, sirt, 0);
    auto b = pair->vector(Space::Sinogram, 1);
    auto x = pair->vector(Space::Image, 1);
    pair->upload(readConeProjections(*reader, setup), *b);
    makeSolver(*pair, sirt)->run(*b, *x);
    std::vector<float> library(g.voxels());
    pair->download(*x, library);
    EXPECT_EQ(cli.data, library);
    const std::string stored = test::readText(output("fan"));
    for (const char* text : {"sirt", "cpu-reference fan-beam joseph, matched", "0,inf"})
        EXPECT_NE(stored.find(text), std::string::npos) << text;

    for (const auto& [options, part] :
         std::vector<std::pair<std::string, std::string>>{
             {"--method sirt --strategy cpu-gridrec",
              "sirt on fan- or cone-beam data runs on the divergent-beam projector pair of the CPU"},
             {"--method cgls --volume 32,32,2", "fan-beam data (one detector row) make one slice; the volume has 2 slices"},
             {"--method tv", "--method tv needs --tv-weight"},
             {"--method sirt --projector fourier", "--projector does not apply to fan/cone-beam data"}}) {
        const ToolRun bad = recon(quoted(htc) + " -o " + quoted(output("refused")) + " " + options);
        EXPECT_EQ(bad.exitCode, 2) << options << "\n" << bad.err;
        EXPECT_EQ(bad.errLines().size(), 1u) << bad.err;
        EXPECT_NE(bad.err.find(part), std::string::npos) << options << "\n" << bad.err;
        EXPECT_FALSE(fs::exists(output("refused"))) << options;
    }
}

// tomo-bench --iterative on the CPU pairs, small: every figure of both
// projector pairs (Joseph's, then the Fourier one) in the table and the
// JSON, with the targets where the sizes are the issue's; and one
// pair alone with --projector.
TEST(TomoBenchIterative, PrintsTheFiguresAndWritesThem) {
    test::TempDir dir;
    const fs::path json = dir / "iterative.json";
    const std::string sizes = "--iterative --strategy cpu --size 32 --projections 24 --slices 3 --single-angles 20 "
                              "--iterations 4 --json " + quoted(json);
    const ToolRun r = runTool(TOMO_BENCH_EXE, sizes, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    for (const char* pair : {"[joseph] ", "[fourier] "})
        for (const char* line : {"SIRT iteration per slice, batch of 3 from 24 projections",
                                 "SIRT iteration of a 32^3 volume (estimate", "pair memory / (input + output)",
                                 "CGLS iteration per slice", "TV (FISTA) iteration per slice",
                                 "4 SIRT iterations of one slice from 20 angles"})
            EXPECT_NE(r.out.find(std::string(pair) + line), std::string::npos) << pair << line << "\n" << r.out;
    for (const char* line : {"cpu joseph, matched", "cpu fourier, matched", "forward projection, batch of 3",
                             "back projection (its transpose), batch of 3", "forward projection, one slice",
                             "back projection (its transpose), one slice", "of a SIRT iteration: forward projection",
                             "of a SIRT iteration: the rest (update, copies, sums, host)"})
        EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
    const nlohmann::json j = nlohmann::json::parse(test::readText(json));
    EXPECT_EQ(j["mode"], "iterative");
    ASSERT_EQ(j["pairs"].size(), 2u);
    EXPECT_EQ(j["pairs"][0]["projector"], "joseph");
    EXPECT_EQ(j["pairs"][1]["projector"], "fourier");
    EXPECT_EQ(j["pairs"][1]["pair"], "cpu fourier, matched");
    EXPECT_EQ(j["pairs"][0]["batch"], 3);
    ASSERT_EQ(j["figures"].size(), 32u);
    std::map<std::string, double> value;
    for (const auto& f : j["figures"]) value[f["key"].get<std::string>()] = f["value"].get<double>();
    ASSERT_EQ(value.size(), 32u) << "keys are unique";
    for (const auto& [key, v] : value) {
        if (key.find("rest_ms") != std::string::npos) continue; // the rest may be below 0 (noise)
        EXPECT_GT(v, 0.0) << key;
    }
    EXPECT_EQ(j["figures"][2]["target"], 1.5); // the memory target applies at any size
    // The split adds up: forward + back + rest = the iteration, per slice.
    for (const std::string key : {"", "fourier_"}) {
        const double batched = value[key + "sirt_iteration_ms_per_slice"];
        const double single = 1e3 * value[key + "single_slice_seconds"] / 4;
        EXPECT_NEAR(value[key + "forward_ms_per_slice"] + value[key + "back_ms_per_slice"] +
                        value[key + "rest_ms_per_slice"],
                    batched, 1e-9 * batched)
            << key;
        EXPECT_NEAR(value[key + "single_forward_ms_per_slice"] + value[key + "single_back_ms_per_slice"] +
                        value[key + "single_rest_ms_per_slice"],
                    single, 1e-9 * single)
            << key;
    }

    const ToolRun one = runTool(TOMO_BENCH_EXE, sizes + " --projector fourier", dir.path());
    ASSERT_EQ(one.exitCode, 0) << one.err;
    EXPECT_EQ(nlohmann::json::parse(test::readText(json))["figures"].size(), 16u);
    EXPECT_EQ(one.out.find("[joseph]"), std::string::npos) << one.out;
    const ToolRun bad = runTool(TOMO_BENCH_EXE, sizes + " --projector radon", dir.path());
    EXPECT_EQ(bad.exitCode, 2) << bad.err;
    EXPECT_NE(bad.err.find("projector 'radon' is not known (expected joseph or fourier)"), std::string::npos) << bad.err;
}

} // namespace
} // namespace tomo
