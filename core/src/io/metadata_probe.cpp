// probeDatasetInChildProcess (tomo/dataset.h): a file's metadata read once
// in a child process, so that libhdf5's crashes, endless loops and endless
// allocations on some damaged files (tests/fuzz/upstream) end the child
// and become a FormatError here.
#include "io/memory_ceiling.h"
#include "tomo/dataset.h"
#include "tomo/error.h"

#if TOMO_WITH_HDF5
#include "io/hdf5/h5_util.h"
#endif

#include <chrono>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tomo {

namespace {

/// Metadata, angles and keys of the largest scans take megabytes; a damaged
/// heap took 20 GB in a minute from a 2 kB file.
constexpr std::size_t kProbeMemoryBytes = std::size_t{2} << 30;
/// The child's exit code when it grew by more than half of that.
constexpr int kProbeOutOfMemory = 4;

long maxResidentKiB() {
    rusage used{};
    ::getrusage(RUSAGE_SELF, &used);
    return used.ru_maxrss;
}

/// The child: open, and say by the exit code whether memory ran short.
[[noreturn]] void probeChild(const std::filesystem::path& path, const OpenOptions& options) {
#if TOMO_WITH_HDF5
    h5::renewLibraryMutexInChild();
#endif
    // A fault must end the child; Ctrl-C (sent to the whole process group)
    // keeps the parent's handler: the parent decides (cancelled).
    for (const int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(signal, SIG_DFL);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDERR_FILENO);
    ::dup2(devnull, STDOUT_FILENO);
    // The child starts with the parent's pages (a Python or GUI process may
    // map gigabytes): the cap and the test count what it takes from here.
    const long startKiB = maxResidentKiB();
    const detail::MemoryCeiling ceiling(kProbeMemoryBytes);
    try {
        (void)openDataset(path, options);
    } catch (...) {
        // Errors are the real open's to report.
    }
    const auto grownBytes = static_cast<double>(maxResidentKiB() - startKiB) * 1024.0;
    ::_exit(grownBytes > kProbeMemoryBytes / 2 ? kProbeOutOfMemory : 0);
}

} // namespace

void probeDatasetInChildProcess(const std::filesystem::path& path, const OpenOptions& options,
                                const std::function<bool()>& cancelled) {
    std::error_code ec;
    if (options.raw || std::filesystem::is_directory(path, ec)) return; // no metadata; TIFF folders file by file
    const int timeoutSeconds = metadataTimeoutSeconds();
    std::fflush(nullptr);
    pid_t pid = -1;
    {
#if TOMO_WITH_HDF5
        // No thread is inside HDF5 while the child is made: its state is whole there.
        const std::lock_guard noHdf5(h5::libraryMutex());
#endif
        pid = ::fork();
        if (pid == 0) probeChild(path, options);
    }
    if (pid < 0) return; // no probe, no protection: the open still works
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        const bool stop = cancelled && cancelled();
        if (stop || std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            if (stop) throw Cancelled();
            throw FormatError(path.string() + ": its metadata could not be read within " +
                              std::to_string(timeoutSeconds) +
                              " s (the HDF5 library loops on some damaged files; or a stalled file system)");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (cancelled && cancelled()) throw Cancelled();
    if (WIFSIGNALED(status))
        throw FormatError(path.string() + ": the file library crashed reading its metadata (signal " +
                          std::to_string(WTERMSIG(status)) + "): the file is damaged");
    if (WIFEXITED(status) && WEXITSTATUS(status) == kProbeOutOfMemory)
        throw FormatError(path.string() + ": reading its metadata took more than " +
                          std::to_string(kProbeMemoryBytes / 2 >> 30) +
                          " GiB of memory: the file is damaged (the HDF5 library allocates without end on some)");
}

} // namespace tomo
