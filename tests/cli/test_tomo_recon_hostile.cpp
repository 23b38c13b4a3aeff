// tomo-recon against hostile input, one test per class of failure: each ends
// with one line on stderr, the documented exit code, no crash, no hang and
// nothing left in the output folder.
#include "cli_runner.h"

#include "hdf5_builder.h"
#include "tiff_builder.h"
#include "tomo/dataset.h"
#include "tomo/phantom.h"
#include "tomo/volume_io.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <vector>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fcntl.h>
#include <cctype>
#include <fstream>
#include <thread>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if TOMO_WITH_HDF5

namespace tomo {
namespace {

namespace fs = std::filesystem;
using test::quoted;
using test::runTool;
using test::ToolRun;

constexpr int kBins = 48;
constexpr int kRows = 4;
constexpr int kAngles = 60;

class TomoReconHostile : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        s_data = new test::TempDir;
        test::writeNoiselessScan(scan(), kBins, kRows, kAngles);
    }
    static void TearDownTestSuite() {
        delete s_data;
        s_data = nullptr;
    }
    static fs::path scan() { return *s_data / "phantom.h5"; }
    /// A scan the exact strategy needs seconds for on one thread.
    static fs::path slowScan() {
        const fs::path path = *s_data / "slow.h5";
        if (!fs::exists(path)) {
            PhantomSpec spec;
            spec.bins = 256;
            spec.rows = 8;
            writePhantomDXchange(path, spec, uniformAngles(360), ScanSimulation{});
        }
        return path;
    }

    ToolRun recon(const std::string& args, const std::string& shellPrefix = {}) {
        // Guards the suite against a hang: a run that blocks is killed (exit 124).
        return runTool(TOMO_RECON_EXE, args, m_dir.path(), shellPrefix + "exec timeout 60 ");
    }

    std::vector<std::string> entries() const {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(m_dir.path())) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }

    /// Exit `code`, exactly one stderr line with the program's prefix that
    /// contains `needle`, and the output folder as it was.
    void expectOneLineError(const std::string& args, int code, const std::string& needle,
                            const std::string& shellPrefix = {}) {
        const auto before = entries();
        const ToolRun r = recon(args, shellPrefix);
        EXPECT_EQ(r.exitCode, code) << args << "\nstderr: " << r.err << "\nstdout: " << r.out;
        const auto lines = r.errLines();
        ASSERT_EQ(lines.size(), 1u) << args << "\nstderr: " << r.err;
        EXPECT_EQ(lines[0].rfind("tomo-recon: error: ", 0), 0u) << lines[0];
        EXPECT_NE(lines[0].find(needle), std::string::npos) << "'" << needle << "' not in: " << lines[0];
        EXPECT_LT(lines[0].size(), 2100u);
        EXPECT_EQ(entries(), before) << args << " left something behind";
    }

    std::string out(const std::string& name = "o.h5") const { return " -o " + quoted(m_dir / name); }

    test::TempDir m_dir;
    static test::TempDir* s_data;
};

test::TempDir* TomoReconHostile::s_data = nullptr;

TEST_F(TomoReconHostile, EveryNumericOptionIsValidated) {
    const std::string in = quoted(scan());
    const std::pair<std::string, std::string> cases[] = {
        {"--center ''", "--center"},          {"--center nan", "--center"},
        {"--center 12abc", "--center"},       {"--center 1e999", "--center"},
        {"--angle-range 0", "--angle-range"}, {"--angle-range -90", "--angle-range"},
        {"--angle-range 1e308", "--angle-range"},
        {"--threads 100000", "--threads"},    {"--threads -1", "--threads"},
        {"--threads ''", "--threads"},        {"--device -1", "--device"},
        {"--device 99999999999", "--device"}, {"--max-clamped 101", "--max-clamped"},
        {"--max-clamped -1", "--max-clamped"}, {"--slices-per-pass ''", "--slices-per-pass"},
        {"--tiff-bits 12", "--tiff-bits"},    {"--rows 99999999999:", "--rows"},
        {"--region 0,0,0,5", "--region"},     {"--region -1,0,5,5", "--region"},
        {"--angle-units grad", "--angle-units"},
        {"--raw-shape 1,1,1 --raw-header -4", "--raw-header"},
        {"--raw-shape 0,1,1", "--raw-shape"}, {"--raw-shape 2,99999999999,1", "--raw-shape"},
    };
    for (const auto& [args, option] : cases) expectOneLineError(in + out() + " " + args, 2, option);
    // Values that overflow float32 where the mapping is done in float.
    expectOneLineError(in + out("o.tif") + " --tiff-bits 16 --range 1e300,1e301", 2, "--range");
    expectOneLineError(in + out("o.tif") + " --tiff-bits 16 --range 1e-50,2e-50", 2, "--range");
    // Offsets of absurd size would move every ray off the detector.
    const fs::path offsets = m_dir / "offsets.txt";
    std::string text;
    for (int a = 0; a < kAngles; ++a) text += a == 7 ? "1e6\n" : "0.5\n";
    std::ofstream(offsets) << text;
    expectOneLineError(in + out() + " --axis-offsets " + quoted(offsets), 2, "axis offset 7 is 1e+06 pixels");
    fs::remove(offsets);
}

TEST_F(TomoReconHostile, FullDiskIsExitThreeWithOneLineAndNothingLeft) {
    // Writes beyond 50 kB fail with EFBIG, as on a full disk; SIGXFSZ is ignored.
    // Files may not grow beyond 10 blocks (5 kB with dash's 512-byte blocks,
    // 10 kB with bash's): writes fail with EFBIG as on a full disk; SIGXFSZ
    // is ignored.
    std::vector<std::string> names = {"full.h5"};
    if (TOMO_WITH_TIFF) names.insert(names.end(), {"full.tif", "full_stack"});
    for (const std::string& name : names)
        expectOneLineError(quoted(scan()) + out(name) + " -q", 3, name, "trap '' XFSZ; ulimit -f 10; ");
}

TEST_F(TomoReconHostile, NonRegularFilesNeverBlock) {
    const fs::path fifo = m_dir / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    expectOneLineError(quoted(fifo) + out(), 3, "is a FIFO");
    expectOneLineError(quoted(scan()) + out() + " --config " + quoted(fifo), 3, "is a FIFO");
    expectOneLineError(quoted(scan()) + out() + " --angles " + quoted(fifo), 3, "is a FIFO");
    expectOneLineError(quoted(scan()) + out() + " --axis-offsets " + quoted(fifo), 3, "is a FIFO");
    expectOneLineError(quoted(scan()) + out() + " --reference " + quoted(fifo), 3, "is a FIFO");
    expectOneLineError(quoted(fifo) + out() + " --raw-shape 2,2,2", 3, "is a FIFO");
    expectOneLineError("/dev/zero" + out() + " --raw-shape 2,2,2", 3, "/dev/zero is a character device");
}

#if TOMO_WITH_TIFF
TEST_F(TomoReconHostile, FileSystemTrapsAreExitThreeNamingThePath) {
    // A loop of links, inside a TIFF folder and as the input itself.
    const fs::path folder = m_dir / "tiffs";
    fs::create_directory(folder);
    for (int a = 0; a < 5; ++a)
        test::writeTiff(folder / ("p_" + std::to_string(a) + ".tif"), 4, 4, {std::vector<float>(16, 0.5f)},
                        SampleType::Float32);
    fs::create_symlink(folder / "b", folder / "a");
    fs::create_symlink(folder / "a", folder / "b");
    expectOneLineError(quoted(folder) + out(), 3, "a loop of symbolic links");
    expectOneLineError(quoted(folder / "a") + out(), 3, "a loop of symbolic links");
    fs::remove(folder / "a");
    fs::remove(folder / "b");
    // A gap in the series.
    fs::remove(folder / "p_2.tif");
    expectOneLineError(quoted(folder) + out(), 3, "misses number 2");
    fs::remove_all(folder);
    // A folder without permission (not "no such file"); root reads anyway.
    if (::geteuid() != 0) {
        fs::create_directory(m_dir / "closed");
        fs::permissions(m_dir / "closed", fs::perms::none);
        expectOneLineError(quoted(m_dir / "closed" / "scan.h5") + out(), 3, "Permission denied");
        fs::permissions(m_dir / "closed", fs::perms::owner_all);
        fs::remove(m_dir / "closed");
    }
}
#endif // TOMO_WITH_TIFF

TEST_F(TomoReconHostile, OutputNamesThatUsedToFail) {
    // A dangling link is something there: not replaced without --overwrite.
    fs::create_symlink(m_dir / "nowhere" / "v.h5", m_dir / "link.h5");
    expectOneLineError(quoted(scan()) + out("link.h5"), 2, "a symbolic link to nothing");
    fs::remove(m_dir / "link.h5");
    // 250 characters is a legal name: the hidden temporary must still fit.
    const std::string longName = std::string(247, 'n') + ".h5";
    const ToolRun r = recon(quoted(scan()) + out(longName) + " -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(readVolume(m_dir / longName).depth, kRows);
    fs::remove(m_dir / longName);
    expectOneLineError(quoted(scan()) + out(std::string(300, 'n') + ".h5"), 3, "the file system takes at most");
    expectOneLineError(quoted(scan()) + " -o ''", 2, "-o");
}

TEST_F(TomoReconHostile, ReferenceIsCheckedBeforeTheOutputIsWritten) {
    const fs::path reference = m_dir / "ref.h5";
    {
        ImageStack v(kBins, kBins, kRows, 0.25f);
        v.data[v.imageSize() + 3 * kBins + 5] = std::nanf("");
        auto writer = createVolumeWriter(reference, kBins, kBins, kRows, {});
        writer->writeSlices(0, kRows, v.data);
        writer->commit();
    }
    expectOneLineError(quoted(scan()) + out() + " --reference " + quoted(reference), 5,
                       "holds NaN at slice 1, row 3, column 5");
}

TEST_F(TomoReconHostile, BrokenFlatsOrUnwrittenDataStopTheRun) {
    // Flats equal to the darks: no value has a transmission.
    const fs::path broken = m_dir / "flats_equal_darks.h5";
    std::vector<std::uint16_t> counts(6 * 2 * 8, 900), references(2 * 2 * 8, 100);
    test::H5Builder(broken)
        .dataset("/exchange/data", {6, 2, 8}, counts)
        .dataset("/exchange/data_white", {2, 2, 8}, references)
        .dataset("/exchange/data_dark", {2, 2, 8}, references);
    expectOneLineError(quoted(broken) + out(), 5, "100 % of the values");
    expectOneLineError(quoted(broken) + out(), 5, "--max-clamped");
    // Acknowledged: the run completes and says how many were clamped.
    const ToolRun r = recon(quoted(broken) + out() + " --max-clamped 100 -q");
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("warning: 96 values had a transmission <= 0"), std::string::npos) << r.out;
    fs::remove(m_dir / "o.h5");
    // A dataset declared but never written.
    const fs::path empty = m_dir / "empty.h5";
    test::H5Builder(empty).unwrittenDataset("/exchange/data", {100000, 100000, 100000}, true);
    expectOneLineError(quoted(empty) + out(), 3, "never written");
    fs::remove(empty);
    fs::remove(broken);
}

TEST_F(TomoReconHostile, AmbiguousAnglesNeedTheirUnits) {
    const fs::path radians = m_dir / "radians.h5";
    std::vector<double> theta;
    for (int a = 0; a < 6; ++a) theta.push_back(a * M_PI / 6);
    test::H5Builder(radians)
        .dataset("/exchange/data", {6, 1, 8}, std::vector<float>(48, 0.5f))
        .dataset("/exchange/theta", {6}, theta);
    expectOneLineError(quoted(radians) + out(), 3, "look like radians");
    const ToolRun r = recon(quoted(radians) + out() + " --angle-units radians -q");
    EXPECT_EQ(r.exitCode, 0) << r.err;
    fs::remove(m_dir / "o.h5");
    fs::remove(radians);
}

TEST_F(TomoReconHostile, DeepOrHugeConfigIsOneShortLine) {
    const fs::path deep = m_dir / "deep.json";
    std::ofstream(deep) << R"({"axis": )" << std::string(100000, '[') << std::string(100000, ']') << "}";
    expectOneLineError(quoted(scan()) + out() + " --config " + quoted(deep), 3, "nested deeper than 16 levels");
    fs::remove(deep);
}

TEST_F(TomoReconHostile, RunConfigErrorsQuoteAFewWordsAndNameKeyAndFile) {
    // A 5000-character strategy gave a 2023-byte line quoting 2000 of them
    // and naming neither the key nor the file.
    const fs::path huge = m_dir / "huge.json";
    std::ofstream(huge) << R"({"strategy": ")" << std::string(5000, 'x') << R"("})";
    expectOneLineError(quoted(scan()) + out() + " --config " + quoted(huge), 3,
                       "run config '" + huge.string() + "': key 'strategy' must be a strategy name");
    EXPECT_LT(recon(quoted(scan()) + out() + " --config " + quoted(huge)).err.size(), 300u);
    fs::remove(huge);
    // A well-formed name this build does not have: key and file named too.
    const fs::path unknown = m_dir / "unknown.json";
    std::ofstream(unknown) << R"({"strategy": "fastest"})";
    expectOneLineError(quoted(scan()) + out() + " --config " + quoted(unknown), 3,
                       "run config '" + unknown.string() + "': key 'strategy': 'fastest' is not a strategy");
    fs::remove(unknown);
}

TEST_F(TomoReconHostile, AnOptionGivenAnEmptyValueIsRefused) {
    // --raw-shape '' read the file as if no layout were given (a raw file:
    // exit 3 "not a dataset"; an HDF5 scan: a run at exit 0).
    const fs::path raw = m_dir / "scan.raw";
    std::ofstream(raw, std::ios::binary) << std::string(4 * 8 * 8 * 4, '\0');
    expectOneLineError(quoted(raw) + out() + " --raw-shape ''", 2, "--raw-shape '': expected P,R,C");
    for (const char* option : {"--raw-shape", "--axis-offsets", "--reference", "--config", "--variable",
                               "--cone-geometry", "--range"})
        expectOneLineError(quoted(scan()) + out() + " " + option + " ''", 2, std::string(option) + " ''");
    fs::remove(raw);
}

TEST_F(TomoReconHostile, MessagesSayOutOfRangeAndPrintShortNumbers) {
    const std::string in = quoted(scan()) + out();
    // An integer beyond 64 bits is one all the same.
    expectOneLineError(in + " --raw-shape 1,1,1 --raw-header 18446744073709551615", 2,
                       "'18446744073709551615' is outside [0, 9223372036854775807]");
    expectOneLineError(in + " --threads 99999999999999999999999", 2, "is outside [0, 1024]");
    // Bounds and values in a few digits, not 300.
    const std::regex longNumber("[0-9]{20,}");
    for (const auto& [args, needle] :
         {std::pair<std::string, std::string>{" --zingers --zinger-threshold 0", "'0' is not a number > 0"},
          {" --saturation -1", "'-1' is not a number >= 0"},
          {" --paganin 1e300 --energy 20 --distance 0.1 --pixel-size 1e-6", "the kernel is 7.02e+149 pixels long"}}) {
        expectOneLineError(in + args, 2, needle);
        EXPECT_FALSE(std::regex_search(recon(in + args).err, longNumber)) << args;
    }
}

TEST_F(TomoReconHostile, ALockedHdf5FileSaysSoAndHowToGoOn) {
    // Another process writing the file holds HDF5's lock: this one was told
    // "truncated or corrupt?".
    const fs::path locked = m_dir / "locked.h5";
    fs::copy_file(scan(), locked);
    const hid_t writer = H5Fopen(locked.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(writer, 0);
    expectOneLineError(quoted(locked) + out(), 3, "locked by another process that has it open for writing");
    expectOneLineError(quoted(locked) + " --info", 3, "run with HDF5_USE_FILE_LOCKING=FALSE to read it anyway");
    // What the message says works.
    const ToolRun r = recon(quoted(locked) + " --info", "HDF5_USE_FILE_LOCKING=FALSE ");
    EXPECT_EQ(r.exitCode, 0) << r.err;
    H5Fclose(writer);
    fs::remove(locked);
}

TEST_F(TomoReconHostile, AMissingOrShortExternalRawFileIsNamed) {
    // /exchange/data stored in a raw file beside the HDF5 file (H5Pset_external).
    const int A = 6, R = 2, C = 8;
    const fs::path file = m_dir / "external.h5", frames = m_dir / "frames.raw";
    std::vector<std::uint16_t> counts(A * R * C);
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = static_cast<std::uint16_t>(1000 + 7 * i);
    {
        const hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        const hsize_t dims[3] = {A, R, C};
        const hid_t space = H5Screate_simple(3, dims, nullptr);
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_external(dcpl, frames.c_str(), 0, counts.size() * 2);
        const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        const hid_t data = H5Dcreate2(f, "/exchange/data", H5T_STD_U16LE, space, lcpl, dcpl, H5P_DEFAULT);
        ASSERT_GE(H5Dwrite(data, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, counts.data()), 0);
        H5Dclose(data);
        H5Pclose(lcpl);
        H5Pclose(dcpl);
        H5Sclose(space);
        H5Fclose(f);
    }
    ASSERT_EQ(fs::file_size(frames), counts.size() * 2);
    // Present: read through HDF5, values exact.
    {
        auto reader = openDataset(file);
        std::vector<float> row(static_cast<std::size_t>(A) * C);
        reader->readSinograms(1, 1, row);
        EXPECT_EQ(row[static_cast<std::size_t>(2) * C + 3], static_cast<float>(counts[(2 * R + 1) * C + 3]));
    }
    // Short: named, not read as zeros.
    fs::resize_file(frames, 100);
    expectOneLineError(quoted(file) + out(), 3, "its external file '" + frames.string() + "' has 100 bytes");
    // Missing: named, where "read failed" said nothing.
    fs::remove(frames);
    expectOneLineError(quoted(file) + out(), 3,
                       "stores its values in the external file '" + frames.string() + "', which is missing");
    fs::remove(file);
}

TEST_F(TomoReconHostile, AnExistingOutputIsExitTwoOnEveryPath) {
    // The README: an output that exists without --overwrite is exit 2.
    std::vector<std::string> names = {"v.h5"};
    if (TOMO_WITH_TIFF) names.insert(names.end(), {"v.tif", "stack"});
    for (const std::string& name : names) {
        const ToolRun r = recon(quoted(scan()) + out(name) + " --center 23.5 -q");
        ASSERT_EQ(r.exitCode, 0) << r.err;
        expectOneLineError(quoted(scan()) + out(name) + " --center 23.5", 2, "add --overwrite to replace it");
        expectOneLineError(quoted(scan()) + out(name) + " --center-sweep 22:24:1", 2, "add --overwrite");
        expectOneLineError(quoted(scan()) + out(name) + " --output-type uint8", 2, "add --overwrite");
        fs::remove_all(m_dir / name);
    }
}

TEST_F(TomoReconHostile, StaleTemporariesOfTheOutputAreRemovedOnTheNextRun) {
    // What a run killed with SIGKILL leaves: the hidden temporary of its
    // output (a file, or a folder for a TIFF stack) and an old target set
    // aside. A process id beyond pid_max runs nowhere.
    long pidMax = 4194304;
    std::ifstream("/proc/sys/kernel/pid_max") >> pidMax;
    char hostName[256] = {};
    ASSERT_EQ(::gethostname(hostName, sizeof hostName - 1), 0);
    std::string host;
    for (const char* c = hostName; *c && host.size() < 32; ++c)
        host += std::isalnum(static_cast<unsigned char>(*c)) || *c == '.' ? *c : '_';
    const std::string dead = host + "-" + std::to_string(pidMax + 1), alive = host + "-" + std::to_string(::getpid());
    const std::vector<fs::path> stale = {m_dir / (".o.h5.tmp-" + dead + "-0"), m_dir / (".o.h5.tmp-" + dead + "-3.old")};
    for (const fs::path& p : stale) std::ofstream(p) << "partial";
    fs::create_directory(m_dir / (".o.h5.tmp-" + dead + "-1"));
    std::ofstream(m_dir / (".o.h5.tmp-" + dead + "-1") / "slice_00000.tif") << "partial";
    // Left alone: a running process's temporary, another output's, and one
    // written on another machine of a shared file system (its process may
    // well run there).
    const std::string otherHost = "other" + host + "-" + std::to_string(pidMax + 1);
    const std::vector<fs::path> kept = {m_dir / (".o.h5.tmp-" + alive + "-0"), m_dir / (".other.h5.tmp-" + dead + "-0"),
                                        m_dir / (".o.h5x.tmp-" + dead + "-0"), m_dir / (".o.h5.tmp-" + otherHost + "-0")};
    for (const fs::path& p : kept) std::ofstream(p) << "partial";
    const ToolRun r = recon(quoted(scan()) + out() + " --center 23.5 -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    for (const fs::path& p : stale) EXPECT_FALSE(fs::exists(p)) << p;
    EXPECT_FALSE(fs::exists(m_dir / (".o.h5.tmp-" + dead + "-1")));
    for (const fs::path& p : kept) EXPECT_TRUE(fs::exists(p)) << p;
    // Said, even with -q (the run deleted something).
    EXPECT_NE(r.out.find("removed " + stale[0].string() + ": the hidden temporary of an earlier run writing this "
                         "output that never finished (its process " + std::to_string(pidMax + 1) + " is gone)"),
              std::string::npos)
        << r.out;
    for (const fs::path& p : {stale[1], m_dir / (".o.h5.tmp-" + dead + "-1")})
        EXPECT_NE(r.out.find("removed " + p.string() + ": "), std::string::npos) << r.out;
    for (const fs::path& p : kept) fs::remove(p);
}

TEST_F(TomoReconHostile, FanBeamFileRefusesParallelBeamOptions) {
    const fs::path htc = test::realData("helsinki_htc2022_fanbeam/htc2022_ta.h5");
    TOMO_REQUIRE_FILE(htc);
    expectOneLineError(quoted(htc) + out() + " --center 280", 2,
                       "--center does not apply to fan/cone-beam data (reconstructed with FDK)");
    expectOneLineError(quoted(htc) + out() + " --strategy tex-standard", 2,
                       "strategy 'tex-standard' has no fan/cone-beam back-projector");
    expectOneLineError(quoted(scan()) + out() + " --volume 8,8,8", 2,
                       "--volume applies to fan/cone-beam data only");
}

#if TOMO_WITH_TIFF
TEST_F(TomoReconHostile, SinogramTiffWithAnglesAndTheCountsWarning) {
    const fs::path sino = test::realData("sarepy_neutron_360/sinogram_360_neutron_image.tif");
    TOMO_REQUIRE_FILE(sino);
    const ToolRun r = recon(quoted(sino) + " --angles " + quoted(test::realData("sarepy_neutron_360/angles_deg.txt")) +
                            out() + " --center 244.9 --max-clamped 1 -q");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::size_t warning = r.out.find("has no flat fields");
    EXPECT_NE(r.out.find("warning: " + sino.string() + " has no flat fields"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("has no flat fields", warning + 1), std::string::npos) << "said twice:\n" << r.out;
    EXPECT_NE(r.out.find("detector gains are not corrected"), std::string::npos) << r.out;
    const ImageStack v = readVolume(m_dir / "o.h5");
    EXPECT_EQ(v.depth, 1);
    EXPECT_EQ(v.width, 503);
    for (float x : v.data) ASSERT_TRUE(std::isfinite(x));
}
#endif // TOMO_WITH_TIFF

/// Reconstructs `input` on one thread of the exact strategy (seconds),
/// waits until its hidden temporary exists, sends `signals` (each once, in
/// order, at once) and returns the wait status; stderr goes to `err`.
int signalledRun(const fs::path& input, const fs::path& dir, const std::vector<int>& signals, const fs::path& err) {
    const fs::path outFile = dir / "run.h5";
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int devnull = ::open("/dev/null", O_WRONLY);
        ::dup2(devnull, STDOUT_FILENO);
        const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(e, STDERR_FILENO);
        ::execl(TOMO_RECON_EXE, TOMO_RECON_EXE, input.c_str(), "-o", outFile.c_str(), "--strategy", "cpu-reference",
                "--threads", "1", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool started = false;
    while (!started && std::chrono::steady_clock::now() < deadline) {
        for (const auto& e : fs::directory_iterator(dir))
            if (e.path().filename().string().rfind(".run.h5.tmp-", 0) == 0) started = true;
        if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (int s : signals) ::kill(pid, s);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return started ? status : -1;
}

TEST_F(TomoReconHostile, SigtermAndSighupCancelLikeCtrlC) {
    const fs::path err = m_dir.path().parent_path() / (m_dir.path().filename().string() + "-stderr.txt");
    for (const auto& [signal, code] : {std::pair{SIGTERM, 143}, std::pair{SIGHUP, 129}}) {
        const int status = signalledRun(slowScan(), m_dir.path(), {signal}, err);
        ASSERT_NE(status, -1) << "the run never created its temporary";
        ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
        EXPECT_EQ(WEXITSTATUS(status), code) << test::readText(err);
        EXPECT_NE(test::readText(err).find("cancelled"), std::string::npos) << test::readText(err);
        EXPECT_TRUE(entries().empty()) << "left behind: " << entries().front();
    }
    fs::remove(err);
}

TEST_F(TomoReconHostile, SecondSignalRemovesTheTemporaryBeforeDying) {
    // Two different signals, both pending at once: the second arrives
    // before the run can notice the first, so the handler must clean up.
    const fs::path err = m_dir.path().parent_path() / (m_dir.path().filename().string() + "-stderr.txt");
    const int status = signalledRun(slowScan(), m_dir.path(), {SIGINT, SIGTERM}, err);
    ASSERT_NE(status, -1) << "the run never created its temporary";
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status) << ": " << test::readText(err);
    // Handlers may run on two threads at once: whichever signal came second
    // is the one the process dies of.
    EXPECT_TRUE(WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGINT) << WTERMSIG(status);
    EXPECT_TRUE(entries().empty()) << "left behind: " << entries().front();
    fs::remove(err);
}

TEST_F(TomoReconHostile, AFaultIsOneLineExitOneAndNoLeftover) {
    // Delivered from outside, the fault takes the path a crash in a file
    // library would: one line, the temporary deleted, exit code 1.
    const fs::path err = m_dir.path().parent_path() / (m_dir.path().filename().string() + "-stderr.txt");
    const int status = signalledRun(slowScan(), m_dir.path(), {SIGSEGV}, err);
    ASSERT_NE(status, -1) << "the run never created its temporary";
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 1);
    const std::string text = test::readText(err);
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    EXPECT_NE(text.find("tomo-recon: error: crashed (SIGSEGV) while working on '" + slowScan().string() + "'"),
              std::string::npos)
        << text;
    EXPECT_TRUE(entries().empty()) << "left behind: " << entries().front();
    fs::remove(err);
}

TEST_F(TomoReconHostile, DamagedFilesThatCrashOrHangHdf5AreOneLineErrors) {
    // Inputs on which libhdf5 1.10.8 itself faults or loops (found by
    // fuzzing, kept in tests/fuzz/upstream): the metadata probe in a child
    // process turns them into a format error naming the file; a fault later,
    // in data reads, would be the one-line internal error. Never a signal,
    // never a hang, never a leftover.
    int files = 0;
    for (const auto& entry : fs::directory_iterator(TOMO_FUZZ_UPSTREAM_DIR)) {
        ++files;
        const fs::path input = entry.path();
        const std::string name = input.filename().string();
        const ToolRun r = recon(quoted(input) + out(), "TOMO_METADATA_TIMEOUT=3 ");
        EXPECT_TRUE(r.exitCode == 1 || r.exitCode == 3) << name << ": exit " << r.exitCode << "\n" << r.err;
        ASSERT_EQ(r.errLines().size(), 1u) << r.err;
        EXPECT_EQ(r.errLines()[0].rfind("tomo-recon: error: ", 0), 0u) << r.err;
        EXPECT_EQ(r.err.find("no such file"), std::string::npos) << r.err;
        EXPECT_TRUE(entries().empty());
    }
    EXPECT_GE(files, 4);
}

TEST_F(TomoReconHostile, ANumberTypeWithBitsOutsideItsBytesIsRefusedByName) {
#if TOMO_WITH_HDF5
    // libhdf5 1.10.8 smashes its stack converting such values (found by the
    // fuzzer); the reader refuses the type before any read.
    const fs::path input = fs::path(TOMO_FUZZ_REGRESSIONS_DIR) / "fuzz_hdf5" / "integer_type_bits_outside_bytes.h5";
    expectOneLineError(quoted(input) + out(), 3,
                       "/entry/instrument/detector/data in " + input.string() +
                           " has a damaged uint16 type (its bits lie outside its 2 bytes)");
#else
    GTEST_SKIP() << "this build reads no HDF5";
#endif
}

TEST_F(TomoReconHostile, UncompressedStripsBeyondTheFileAreRefusedBeforeAllocating) {
#if TOMO_WITH_TIFF
    // libtiff replaces strip sizes that look too small by the image's own
    // (330 MiB here, from 480 bytes; found by the fuzzer): the file's size
    // bounds them, so nothing is allocated for the image.
    const fs::path input = fs::path(TOMO_FUZZ_REGRESSIONS_DIR) / "fuzz_volume" / "uncompressed_strips_beyond_the_file.tif";
    expectOneLineError(quoted(input) + out(), 3,
                       "(page 0) declares 9222 x 18761 uint16 (330.0 MiB) but its strips hold only 480 bytes");
#else
    GTEST_SKIP() << "this build reads no TIFF";
#endif
}

TEST_F(TomoReconHostile, InfoOnADamagedFileIsTheOneLineErrorOfARun) {
    // What the workstation runs before it opens a file: the same probe, the
    // same message naming the file, the same exit code, nothing written.
    for (const auto& entry : fs::directory_iterator(TOMO_FUZZ_UPSTREAM_DIR)) {
        const fs::path input = entry.path();
        const ToolRun r = recon("--info " + quoted(input), "TOMO_METADATA_TIMEOUT=3 ");
        EXPECT_EQ(r.exitCode, 3) << input << "\n" << r.err;
        ASSERT_EQ(r.errLines().size(), 1u) << r.err;
        EXPECT_EQ(r.errLines()[0].rfind("tomo-recon: error: " + input.string() + ": ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find("damaged"), std::string::npos) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
        EXPECT_TRUE(entries().empty());
    }
    // A scan cut in half, and no file at all.
    const std::string whole = test::readText(scan());
    const fs::path truncated = m_dir / "truncated.h5";
    std::ofstream(truncated, std::ios::binary) << whole.substr(0, whole.size() / 2);
    expectOneLineError("--info " + quoted(truncated), 3, truncated.string());
    expectOneLineError("--info " + quoted(m_dir / "missing.h5"), 3, (m_dir / "missing.h5").string());
}

TEST_F(TomoReconHostile, HelpDocumentsTheNewOptions) {
    const ToolRun r = recon("--help");
    ASSERT_EQ(r.exitCode, 0);
    for (const char* option : {"--angle-units", "--variable", "--log-corrected", "--max-clamped", "143", "129"})
        EXPECT_NE(r.out.find(option), std::string::npos) << option;
}

} // namespace
} // namespace tomo

#endif // TOMO_WITH_HDF5
