// What tomo-recon and tomo-bench share: exit codes, Ctrl-C handling, the
// progress bar, and parsers of the small comma/colon syntaxes of the options.
#pragma once

#include "tomo/geometry.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <exception>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace tomo::cli {

/// Exit codes, documented in --help of both programs.
enum ExitCode : int {
    kExitOk = 0,
    kExitInternal = 1,    ///< a bug: an exception that is not a tomo::Error
    kExitUsage = 2,       ///< bad command line or parameter (InvalidArgument)
    kExitIo = 3,          ///< file missing, unreadable, unwritable or malformed (IoError, FormatError)
    kExitDevice = 4,      ///< GPU missing/failed or out of memory (DeviceError, OutOfMemory)
    kExitData = 5,        ///< NaN or inf in the data (DataError)
    kExitCancelled = 130, ///< Ctrl-C (SIGINT), the shell's convention 128 + 2; SIGTERM 143, SIGHUP 129
};

/// `v` with `precision` significant digits, as a stream writes it (1e+06, 0.25).
std::string formatNumber(double v, int precision = 6);

/// The exit code for an exception caught in main().
int exitCodeFor(const std::exception& e);

/// The --help footer listing the exit codes.
std::string exitCodeHelp();

/// Prints "<program>: error: <message>" as one line on stderr (newlines and
/// other control characters in the message become "; " or "?", and a
/// message beyond 2000 characters is cut) and returns the exit code for `e`.
/// After a cancelling signal any failure is reported as the cancel (a
/// system call it interrupted fails as a side effect): 128 + the signal.
int reportError(std::string_view program, const std::exception& e);

/// Handles SIGINT, SIGTERM and SIGHUP: the first only raises a flag (the run
/// stops at the next check and cleans up); a second one deletes the hidden
/// temporary outputs (tomo::removeUncommittedOutputs) and ends the process
/// at once with the signal's default action. SIGPIPE is ignored, so a
/// closed output pipe cannot kill the process before it cleans up.
void installInterruptHandler();
/// The last line of defence: a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL) in
/// this program or in a file library on damaged data (HDF5 1.10 has such
/// faults) ends the run with one line on stderr naming `subject` (the
/// input), the temporary outputs deleted (removeUncommittedOutputs), and
/// exit code 1 (a bug: please report it) instead of a core dump. Runs on an
/// alternate stack, so a stack overflow is caught too.
void installCrashHandler(std::string_view program, std::string_view subject);

/// True once a cancelling signal arrived.
bool interrupted();
/// Throws tomo::Cancelled when a cancelling signal arrived.
void throwIfInterrupted();

/// CLI11 check: one finite number in [min, max] (refuses '', "nan",
/// "1e999", "12abc", which CLI11 alone converts or wraps).
CLI::Validator numberIn(double min, double max);
/// CLI11 check: one finite number > 0 and <= max (CLI11's PositiveNumber
/// prints its bounds with 300 digits).
CLI::Validator positiveNumber(double max = std::numeric_limits<double>::infinity());
/// CLI11 check: one finite number >= 0.
CLI::Validator nonNegativeNumber();
/// CLI11 check: one integer in [min, max] ("-4" is refused for an
/// unsigned option instead of wrapping to 2^64 - 4).
CLI::Validator integerIn(long long min, long long max);

/// One line per GPU ("GPU 0: NAME, 132 SMs, 79.1 GiB, compute 9.0"), or
/// "GPUs: none (REASON)" (the CUDA strategies' reason, e.g. no device found,
/// or a build without CUDA): what --list-strategies and --list print.
std::vector<std::string> gpuLines();

/// The chunk buffers' budget of --memory-budget GIB (0: not given) and how
/// it came about, for the summary and the output's attributes.
struct MemoryBudget {
    std::size_t bytes = 0; ///< 0 = the conveyor's default (defaultMemoryBudget())
    std::string text;      ///< "2 GiB (--memory-budget)", "1 GiB (the default: ...)"
};
/// A budget over half the machine's memory is capped there, with a warning
/// line on stdout: the plan, the file libraries' caches and the system need
/// the rest, and more chunk memory than that only swaps.
MemoryBudget memoryBudget(double gib);

/// Throws InvalidArgument for an option given an empty value (--raw-shape '',
/// -o ''): it would otherwise read as not given. Flags are not checked.
void refuseEmptyValues(const CLI::App& app);

/// A one-line progress bar on stderr: "[####----] 12/64 rows 3.1 rows/s ETA 0:15".
/// Draws only when enabled and stderr is a terminal.
class ProgressBar {
public:
    ProgressBar(int total, std::string unit, bool enabled);
    ~ProgressBar();
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    void update(int done);
    /// Erases the bar (called by the destructor too).
    void clear();

private:
    int m_total;
    std::string m_unit;
    bool m_enabled;
    bool m_drawn = false;
    std::chrono::steady_clock::time_point m_start;
    std::chrono::steady_clock::time_point m_lastDraw;
};

/// "1:05" / "0:03" / "1:02:03".
std::string formatDuration(double seconds);
/// Seconds with a sensible number of digits: "0.012 s", "1.23 s", "123 s".
std::string formatSeconds(double seconds);

/// "prepare 0.12 s, upload 0.31 s, ..." (a GPU corrector's busy time per step).
std::string formatSteps(const std::vector<std::pair<std::string, double>>& steps);

/// Detector rows from "a:b" (a to b-1), "a:" (a to the end), ":b" or "a"
/// (one row): first row and count (0 = to the end). Bounds are checked
/// against the dataset by checkRows. Throws InvalidArgument naming `option`.
struct RowRange {
    int first = 0;
    int count = 0;
};
RowRange parseRows(std::string_view text, std::string_view option = "--rows");
/// Throws InvalidArgument when the range is not inside [0, rows).
void checkRows(const RowRange& range, int rows, std::string_view option = "--rows");

/// Exactly `n` comma-separated integers (n = 0: any count >= 1), each >= min.
std::vector<int> parseInts(std::string_view text, std::size_t n, int min, std::string_view option);
/// Exactly `n` comma-separated finite numbers.
std::vector<double> parseDoubles(std::string_view text, std::size_t n, std::string_view option);
/// "x,y,w,h" with x, y >= 0 and w, h >= 1.
Region parseRegion(std::string_view text, std::string_view option = "--region");
/// Comma-separated words.
std::vector<std::string> splitList(std::string_view text);

} // namespace tomo::cli
