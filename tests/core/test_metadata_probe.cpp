// probeDatasetInChildProcess: files that crash, loop or allocate without end
// in libhdf5 (tests/fuzz/upstream) become a FormatError naming the file;
// good files pass; the probe is safe while other threads read HDF5 files.
#include "io_test_helpers.h"
#include "test_support.h"
#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/phantom.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace tomo {
namespace {

using test::contains;
using test::messageOf;
using test::TempDir;

/// A small DXchange scan of the phantom.
std::filesystem::path writeScan(const TempDir& dir) {
    PhantomSpec spec;
    spec.bins = 32;
    spec.rows = 2;
    const auto path = dir / "scan.h5";
    writePhantomDXchange(path, spec, uniformAngles(24), ScanSimulation{});
    return path;
}

/// TOMO_METADATA_TIMEOUT for one test (the looping file would take 60 s).
class ShortTimeout {
public:
    ShortTimeout() { ::setenv("TOMO_METADATA_TIMEOUT", "3", 1); }
    ~ShortTimeout() { ::unsetenv("TOMO_METADATA_TIMEOUT"); }
};

#if TOMO_WITH_HDF5

TEST(MetadataProbe, FilesThatCrashOrHangHdf5AreFormatErrorsNamingThem) {
    const ShortTimeout timeout;
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(TOMO_FUZZ_UPSTREAM_DIR)) {
        ++files;
        const std::string message =
            messageOf<FormatError>([&] { probeDatasetInChildProcess(entry.path()); });
        EXPECT_TRUE(contains(message, entry.path().string() + ": ")) << message;
        EXPECT_TRUE(contains(message, "damaged") || contains(message, "could not be read within 3 s")) << message;
    }
    EXPECT_GE(files, 4);
}

TEST(MetadataProbe, GoodFilesPassAndTheirErrorsAreLeftToTheOpen) {
    TempDir dir;
    const auto scan = writeScan(dir);
    probeDatasetInChildProcess(scan);
    EXPECT_EQ(openDataset(scan)->info().projections, 24);
    // A missing dataset: the child's error is not the probe's to report.
    test::writeText(dir / "text.h5", "not HDF5");
    probeDatasetInChildProcess(dir / "text.h5");
    probeDatasetInChildProcess(dir / "missing.h5");
}

TEST(MetadataProbe, CancelledKillsTheChild) {
    TempDir dir;
    const auto scan = writeScan(dir);
    EXPECT_THROW(probeDatasetInChildProcess(scan, {}, [] { return true; }), Cancelled);
}

TEST(MetadataProbe, SafeWhileOtherThreadsReadHdf5) {
    // The child is made while no thread is inside HDF5 (the readers' lock),
    // and the lock, held by the forking thread, is free in the child: with
    // readers busy on two threads, every probe finishes and passes.
    TempDir dir;
    const auto scan = writeScan(dir);
    std::atomic<bool> stop{false};
    std::atomic<int> reads{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; ++t)
        readers.emplace_back([&] {
            std::vector<float> row(24 * 32);
            while (!stop) {
                openDataset(scan)->readSinograms(1, 1, row);
                ++reads;
            }
        });
    const ShortTimeout timeout; // a child stuck on a lock would fail here, not hang
    for (int i = 0; i < 20; ++i) EXPECT_NO_THROW(probeDatasetInChildProcess(scan)) << "probe " << i;
    stop = true;
    for (auto& t : readers) t.join();
    EXPECT_GT(reads.load(), 0);
}

#endif // TOMO_WITH_HDF5

TEST(MetadataProbe, RawFilesAndFoldersAreNotProbed) {
    TempDir dir;
    OpenOptions raw;
    raw.raw = RawLayout{};
    // Nothing is read: a missing raw file or a folder returns at once.
    probeDatasetInChildProcess(dir / "missing.raw", raw);
    probeDatasetInChildProcess(dir.path());
}

} // namespace
} // namespace tomo
