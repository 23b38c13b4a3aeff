// tomo-recon --mpi under mpirun on this machine, the cpu strategy: 2 and 3
// ranks write the volume of one process bit for bit (HDF5 and a TIFF
// folder; 29 rows, which no rank count divides); a rank killed mid-run
// leaves no output but its slices recorded, and --resume (with another rank
// count) finishes the same volume; a rank that fails is named with its host
// and error; each rank runs on every core of the host unless mpirun is told
// to bind it; --mpi without a launcher runs as one rank; tomo-bench's table
// and its writer alone under mpirun.
#include "cli_runner.h"

#include "tomo/volume_io.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <sched.h>
#include <unistd.h>

namespace tomo {
namespace {

namespace fs = std::filesystem;
using test::quoted;
using test::runTool;
using test::ToolRun;

constexpr int kBins = 48, kRows = 29, kAngles = 60;
/// Small chunks (about 16 rows), so that each rank takes several spans.
constexpr const char* kOptions = " --center 23.5 --strategy cpu --threads 1 --memory-budget 0.002";

/// Why the MPI tests cannot run here, or "".
std::string whyNoMpi() {
    if (!TOMO_WITH_MPI) return "this build has no MPI (configure with -DTOMO_WITH_MPI=ON, libopenmpi-dev)";
    if (std::string(TOMO_MPIEXEC).empty() || !fs::exists(TOMO_MPIEXEC))
        return "no MPI launcher found (mpirun: apt-get install openmpi-bin)";
    return {};
}

class TomoReconMpi : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (!whyNoMpi().empty()) return;
        s_data = new test::TempDir;
        test::writeNoiselessScan(scan(), kBins, kRows, kAngles);
        for (const std::string name : {"one.h5", "one"}) {
            const ToolRun r = runTool(TOMO_RECON_EXE, quoted(scan()) + " -o " + quoted(*s_data / name) + kOptions + " -q",
                                      s_data->path());
            ASSERT_EQ(r.exitCode, 0) << r.err;
        }
    }
    static void TearDownTestSuite() {
        delete s_data;
        s_data = nullptr;
    }
    void SetUp() override {
        if (const std::string why = whyNoMpi(); !why.empty()) GTEST_SKIP() << why;
    }

    static fs::path scan() { return *s_data / "phantom.h5"; }
    /// The single-process volume written as `name` ("one.h5" or the folder "one").
    static ImageStack oneProcess(const std::string& name) { return readVolume(*s_data / name); }

    /// mpirun `options` (and --allow-run-as-root as root) `command`, in the test's folder.
    ToolRun launch(std::string options, const std::string& command) {
        if (::geteuid() == 0) options += " --allow-run-as-root";
        return runTool(TOMO_MPIEXEC, options + " " + command, m_dir.path());
    }
    /// mpirun -n `ranks` `wrapper` tomo-recon ... --mpi.
    ToolRun mpirun(int ranks, const std::string& args, const std::string& wrapper = {}) {
        return launch("--oversubscribe -n " + std::to_string(ranks),
                      wrapper + " '" + TOMO_RECON_EXE + "' " + args + " --mpi");
    }
    /// tomo-bench --pipeline --mpi `args` on two ranks.
    ToolRun benchOnTwoRanks(const std::string& args) {
        return launch("--oversubscribe -n 2", std::string("'") + TOMO_BENCH_EXE + "' --pipeline --mpi " + args);
    }
    std::string outputArgs(const fs::path& output) { return quoted(scan()) + " -o " + quoted(output) + kOptions; }

    /// Only `expected` in the run's folder (no temporary, no record).
    void expectOnly(const std::string& expected) {
        for (const auto& entry : fs::directory_iterator(m_dir.path()))
            EXPECT_EQ(entry.path().filename().string(), expected) << "left behind";
    }

    test::TempDir m_dir;
    static test::TempDir* s_data;
};

test::TempDir* TomoReconMpi::s_data = nullptr;

/// "N cores" (or "1 core") this test may run on: the ranks of mpirun's
/// default binding too (it binds each of two ranks to one core; tomo-recon
/// undoes that).
std::string coresHere(int cores = 0) {
    if (cores == 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        cores = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    }
    return std::to_string(cores) + (cores == 1 ? " core" : " cores");
}

std::string hostName() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return name;
}

TEST_F(TomoReconMpi, TwoAndThreeRanksWriteTheVolumeOfOneProcessBitForBit) {
    for (const int ranks : {2, 3})
        for (const std::string name : {"one.h5", "one"}) {
            SCOPED_TRACE(std::to_string(ranks) + " ranks, " + name);
            const fs::path output = m_dir / name;
            const ToolRun r = mpirun(ranks, outputArgs(output));
            ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
            EXPECT_NE(r.out.find("tomo-recon: " + std::to_string(ranks) + " ranks on one host"), std::string::npos)
                << r.out;
            int slices = 0;
            for (int rank = 0; rank < ranks; ++rank) {
                const std::string line =
                    "tomo-recon: rank " + std::to_string(rank) + " on " + hostName() + " (CPU, " + coresHere() + "): ";
                const std::size_t at = r.out.find(line);
                ASSERT_NE(at, std::string::npos) << line << " not in\n" << r.out;
                slices += std::stoi(r.out.substr(at + line.size()));
            }
            EXPECT_EQ(slices, kRows) << "the ranks' slices add up to the volume";
            const ImageStack volume = readVolume(output);
            EXPECT_EQ(volume.data, oneProcess(name).data);
            expectOnly(name);
            fs::remove_all(output);
        }
}

TEST_F(TomoReconMpi, ARankKilledMidRunLeavesNoOutputAndResumeFinishesTheSameVolume) {
    const fs::path output = m_dir / "v.h5";
    const fs::path record = m_dir / ".v.h5.tomo-partial.done";
    // A larger scan through cpu-reference in spans of about two rows: rank 1
    // is killed right after its first span is recorded, when the others are
    // far from done (each slice takes milliseconds).
    const fs::path bigger = m_dir / "bigger.h5";
    test::writeNoiselessScan(bigger, 96, 64, 180);
    const std::string slow = " --strategy cpu-reference --threads 1 --memory-budget 0.002";
    const std::string args = quoted(bigger) + " -o " + quoted(output) + slow + " --center 47.5";
    const ToolRun killed = mpirun(3, args,
                                  "-x KILL_RANK=1 -x RECORD=" + quoted(record) + " '" + TOMO_MPI_KILL_RANK + "'");
    EXPECT_NE(killed.exitCode, 0);
    EXPECT_NE((killed.out + killed.err).find("rank 1"), std::string::npos) << killed.out << killed.err;
    EXPECT_NE((killed.out + killed.err).find(hostName()), std::string::npos) << killed.out << killed.err;
    EXPECT_FALSE(fs::exists(output)) << "a partial volume under the final name";
    ASSERT_TRUE(fs::exists(record));
    ASSERT_TRUE(fs::exists(m_dir / ".v.h5.tomo-partial"));

    // Without --resume the partial output is in the way, one line says so.
    const ToolRun refused = runTool(TOMO_RECON_EXE, args + " --mpi -q", m_dir.path());
    EXPECT_EQ(refused.exitCode, 3);
    ASSERT_EQ(refused.errLines().size(), 1u) << refused.err;
    EXPECT_NE(refused.err.find("a partial output of an earlier run is there"), std::string::npos) << refused.err;
    // Resumed with other options: refused, naming what differs.
    const ToolRun other = runTool(TOMO_RECON_EXE, quoted(bigger) + " -o " + quoted(output) + slow +
                                                      " --center 48 --mpi --resume -q",
                                  m_dir.path());
    EXPECT_EQ(other.exitCode, 2);
    EXPECT_NE(other.err.find("was made with other parameters ('axis'"), std::string::npos) << other.err;

    // Two ranks finish it: only the slices missing, the volume of one process.
    const ToolRun resumed = mpirun(2, args + " --resume");
    ASSERT_EQ(resumed.exitCode, 0) << resumed.out << resumed.err;
    const std::string said = "slices were written before";
    ASSERT_NE(resumed.out.find(said), std::string::npos) << resumed.out;
    const ToolRun reference =
        runTool(TOMO_RECON_EXE, quoted(bigger) + " -o " + quoted(m_dir / "ref.h5") + slow + " --center 47.5 -q",
                m_dir.path());
    ASSERT_EQ(reference.exitCode, 0) << reference.err;
    EXPECT_EQ(readVolume(output).data, readVolume(m_dir / "ref.h5").data);
    EXPECT_FALSE(fs::exists(record));
    EXPECT_FALSE(fs::exists(m_dir / ".v.h5.tomo-partial"));
}

TEST_F(TomoReconMpi, ABindingAskedOfMpirunIsKept) {
    if (coresHere() == coresHere(1)) GTEST_SKIP() << "one core here: every binding is to one core";
    const ToolRun r =
        launch("--bind-to core -n 2", std::string("'") + TOMO_RECON_EXE + "' " + outputArgs(m_dir / "v.h5") + " --mpi");
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    for (const char* rank : {"0", "1"}) {
        const std::string line = std::string("tomo-recon: rank ") + rank + " on " + hostName() + " (CPU, 1 core): ";
        EXPECT_NE(r.out.find(line), std::string::npos) << line << " not in\n" << r.out;
    }
    EXPECT_EQ(readVolume(m_dir / "v.h5").data, oneProcess("one.h5").data);
}

TEST_F(TomoReconMpi, AFailingRankIsNamedWithItsHostAndErrorAndNothingIsCommitted) {
    // Rank 2 may write files of 4 kB at most: its slices (9 kB of floats)
    // fail as on a full disk.
    const fs::path output = m_dir / "slices";
    std::string launcher = "--oversubscribe";
    if (::geteuid() == 0) launcher += " --allow-run-as-root";
    const std::string tool = std::string("'") + TOMO_RECON_EXE + "' " + outputArgs(output) + " --mpi -q";
    const ToolRun r = runTool(TOMO_MPIEXEC,
                              launcher + " -n 2 " + tool + " : -n 1 sh -c \"trap '' XFSZ; ulimit -f 4; exec " + tool + "\"",
                              m_dir.path());
    EXPECT_EQ(r.exitCode, 3) << r.out << r.err;
    const std::string line = "tomo-recon: error: rank 2 on " + hostName() + ": ";
    EXPECT_NE(r.err.find(line), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("slice_"), std::string::npos) << "the error names the file: " << r.err;
    EXPECT_FALSE(fs::exists(output));
}

TEST_F(TomoReconMpi, WithoutALauncherItRunsAsOneRankAndSaysSo) {
    const fs::path output = m_dir / "one.h5";
    const ToolRun r = runTool(TOMO_RECON_EXE, outputArgs(output) + " --mpi", m_dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("tomo-recon: --mpi: no MPI launcher (mpirun, srun) started this process: running as one rank"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(readVolume(output).data, oneProcess("one.h5").data);
    expectOnly("one.h5");
}

TEST_F(TomoReconMpi, AMultiPageTiffIsRefusedInOneLine) {
    test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon", outputArgs(m_dir / "v.tif") + " --mpi -q", m_dir.path(), 2,
                             "a multi-page TIFF is appended page by page by one process");
}

TEST_F(TomoReconMpi, TheBenchmarksTableHasEveryRanksShare) {
    const fs::path json = m_dir / "bench.json";
    const ToolRun r = benchOnTwoRanks("--strategy cpu --threads 1 --projections 48 --size 48 --rows 21 --dir " +
                                      quoted(m_dir.path()) + " --json " + quoted(json));
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("2 ranks, warm input: busy per device (reconstruct seconds / chunks): r0/"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("; cores per rank: "), std::string::npos) << r.out;
    const std::string text = test::readText(json);
    EXPECT_NE(text.find("\"ranks\": 2"), std::string::npos) << text;
}

TEST_F(TomoReconMpi, TheWriterAloneWritesOneOutputSharedByTheRanks) {
    const fs::path json = m_dir / "writer.json";
    const ToolRun r = benchOnTwoRanks("--writer-threads 1,2 --size 48 --rows 150 --dir " + quoted(m_dir.path()) +
                                      " --json " + quoted(json));
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("150 slices of 48^2 float32 (HDF5, 0.00 GiB) into " + m_dir.path().string() +
                         ", shared by 2 MPI ranks"),
              std::string::npos)
        << r.out;
    const std::string text = test::readText(json);
    EXPECT_NE(text.find("\"ranks\": 2"), std::string::npos) << text;
    EXPECT_NE(text.find("\"threads\": 2"), std::string::npos) << text;
    expectOnly("writer.json"); // each run's output committed and removed, no partial output left
}

TEST(TomoReconWithoutMpi, MpiInABuildWithoutItNamesTheCMakeOption) {
    if (TOMO_WITH_MPI) GTEST_SKIP() << "this build has MPI; the error is for builds without it";
    test::TempDir dir;
    test::writeNoiselessScan(dir / "scan.h5", 16, 2, 24);
    test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon",
                             quoted(dir / "scan.h5") + " -o " + quoted(dir / "v.h5") + " --mpi -q", dir.path(), 2,
                             "--mpi: this build has no MPI support; configure it with -DTOMO_WITH_MPI=ON");
}

} // namespace
} // namespace tomo
