#include "cli_support.h"

#include "tomo/error.h"
#include "tomo/pipeline.h"
#include "tomo/registry.h"
#include "tomo/volume_io.h"
#include "tomo/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <new>
#include <sstream>
#include <vector>

#include <unistd.h>

namespace tomo::cli {

std::string formatNumber(double v, int precision) {
    std::ostringstream s;
    s.precision(precision);
    s << v;
    return s.str();
}

int exitCodeFor(const std::exception& e) {
    if (dynamic_cast<const Cancelled*>(&e)) return kExitCancelled;
    if (dynamic_cast<const InvalidArgument*>(&e)) return kExitUsage;
    // A file-system failure that escaped the checks still names its paths.
    if (dynamic_cast<const IoError*>(&e) || dynamic_cast<const FormatError*>(&e) ||
        dynamic_cast<const std::filesystem::filesystem_error*>(&e))
        return kExitIo;
    if (dynamic_cast<const DeviceError*>(&e) || dynamic_cast<const OutOfMemory*>(&e) ||
        dynamic_cast<const std::bad_alloc*>(&e))
        return kExitDevice;
    if (dynamic_cast<const DataError*>(&e)) return kExitData;
    return kExitInternal;
}

std::string exitCodeHelp() {
    return "Exit codes:\n"
           "  0    success\n"
           "  1    internal error (a bug: please report it)\n"
           "  2    invalid command line or parameter\n"
           "  3    file missing, unreadable, unwritable, or not in the expected format\n"
           "  4    GPU missing or failed, or out of (host or GPU) memory\n"
           "  5    the data contain NaN or inf, or too many values without a positive transmission\n"
           "  130  cancelled with Ctrl-C (no output is left behind); 143 with SIGTERM, 129 with SIGHUP\n";
}

namespace {

/// The first cancelling signal, 0 before. Lock-free atomic: handlers may run
/// on several threads at once, and exactly one of them is the first.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

const char* signalName(int signal) {
    switch (signal) {
    case SIGINT: return "Ctrl-C";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
    }
}

extern "C" void onCancelSignal(int signal) {
    int none = 0;
    if (g_signal.compare_exchange_strong(none, signal)) return;
    // The second signal: no waiting for the run to notice. Only
    // async-signal-safe calls from here on.
    removeUncommittedOutputs();
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(signal, &action, nullptr);
    ::raise(signal);
}

} // namespace

int reportError(std::string_view program, const std::exception& e) {
    std::string message = dynamic_cast<const std::bad_alloc*>(&e) ? "out of host memory" : e.what();
    for (std::size_t pos; (pos = message.find('\n')) != std::string::npos;) message.replace(pos, 1, "; ");
    for (char& c : message)
        if (static_cast<unsigned char>(c) < 0x20) c = '?';
    constexpr std::size_t kMaxMessage = 2000;
    if (message.size() > kMaxMessage) message = message.substr(0, kMaxMessage) + "...";
    int code = exitCodeFor(e);
    if (const int signal = g_signal.load(); signal != 0) {
        if (code != kExitCancelled) message = "cancelled by the user";
        message += std::string(" (") + signalName(signal) + "; no output written)";
        code = 128 + signal;
    }
    std::cerr << program << ": error: " << message << std::endl;
    return code;
}

void installInterruptHandler() {
    struct sigaction action {};
    action.sa_handler = onCancelSignal;
    sigemptyset(&action.sa_mask);
    for (const int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, signal);
    action.sa_flags = 0; // no restart: a blocking read returns at once
    for (const int signal : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal, &action, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
}

namespace {

/// The crash message, composed before any crash: the handler may only
/// write it (write(2) is async-signal-safe, formatting is not).
char g_crashPrefix[256];
char g_crashSuffix[4096];

extern "C" void onFault(int signal) {
    const char* name = signal == SIGSEGV ? "SIGSEGV" : signal == SIGBUS ? "SIGBUS" : signal == SIGFPE ? "SIGFPE" : "SIGILL";
    (void)!::write(STDERR_FILENO, g_crashPrefix, std::strlen(g_crashPrefix));
    (void)!::write(STDERR_FILENO, name, std::strlen(name));
    (void)!::write(STDERR_FILENO, g_crashSuffix, std::strlen(g_crashSuffix));
    removeUncommittedOutputs();
    ::_exit(kExitInternal);
}

} // namespace

void installCrashHandler(std::string_view program, std::string_view subject) {
    std::snprintf(g_crashPrefix, sizeof g_crashPrefix, "%.*s: error: crashed (", static_cast<int>(program.size()),
                  program.data());
    std::string what(subject.substr(0, 2000));
    for (char& c : what)
        if (static_cast<unsigned char>(c) < 0x20) c = '?';
    std::snprintf(g_crashSuffix, sizeof g_crashSuffix,
                  ") while working on '%s': a bug here, or in a file library meeting damaged data; please report it "
                  "with the file (no output written)\n",
                  what.c_str());
    // A stack overflow leaves no stack for the handler: give it its own.
    static std::vector<char> stack(std::max<std::size_t>(SIGSTKSZ, 65536));
    stack_t alternate{};
    alternate.ss_sp = stack.data();
    alternate.ss_size = stack.size();
    sigaltstack(&alternate, nullptr);
    struct sigaction action {};
    action.sa_handler = onFault;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_ONSTACK | SA_RESETHAND; // a fault in the handler ends the process the usual way
    for (const int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) sigaction(signal, &action, nullptr);
}

bool interrupted() {
    return g_signal.load() != 0;
}

void throwIfInterrupted() {
    if (interrupted()) throw Cancelled();
}

ProgressBar::ProgressBar(int total, std::string unit, bool enabled) :
    m_total(total), m_unit(std::move(unit)), m_enabled(enabled && ::isatty(STDERR_FILENO)),
    m_start(std::chrono::steady_clock::now()) {
    update(0);
}

ProgressBar::~ProgressBar() {
    clear();
}

void ProgressBar::update(int done) {
    if (!m_enabled) return;
    const auto now = std::chrono::steady_clock::now();
    // At most ~10 redraws per second, but always the first and the last.
    if (m_drawn && done < m_total && now - m_lastDraw < std::chrono::milliseconds(100)) return;
    m_lastDraw = now;
    const double elapsed = std::chrono::duration<double>(now - m_start).count();
    constexpr int kWidth = 30;
    const double fraction = m_total > 0 ? static_cast<double>(done) / m_total : 1.0;
    const int filled = static_cast<int>(fraction * kWidth);
    std::ostringstream line;
    line << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '-') << "] " << done << "/" << m_total
         << " " << m_unit;
    if (done > 0 && elapsed > 0.0) {
        const double rate = done / elapsed;
        line.precision(rate < 10 ? 2 : 0);
        line << std::fixed << "  " << rate << " " << m_unit << "/s  ETA " << formatDuration((m_total - done) / rate);
    }
    line << "\033[K";
    std::cerr << line.str() << std::flush;
    m_drawn = true;
}

void ProgressBar::clear() {
    if (m_drawn) std::cerr << "\r\033[K" << std::flush;
    m_drawn = false;
}

std::string formatDuration(double seconds) {
    const long total = std::lround(std::max(0.0, seconds));
    const long h = total / 3600, m = total / 60 % 60, s = total % 60;
    char buf[32];
    if (h > 0)
        std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", h, m, s);
    else
        std::snprintf(buf, sizeof buf, "%ld:%02ld", m, s);
    return buf;
}

std::string formatSeconds(double seconds) {
    char buf[32];
    if (seconds < 0.1)
        std::snprintf(buf, sizeof buf, "%.3f s", seconds);
    else if (seconds < 100)
        std::snprintf(buf, sizeof buf, "%.2f s", seconds);
    else
        std::snprintf(buf, sizeof buf, "%.0f s", seconds);
    return buf;
}

std::string formatSteps(const std::vector<std::pair<std::string, double>>& steps) {
    std::string text;
    for (const auto& [name, seconds] : steps) text += (text.empty() ? "" : ", ") + name + " " + formatSeconds(seconds);
    return text;
}

namespace {

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(" \t");
    return std::string(s.substr(b, e - b + 1));
}

bool toInt(std::string_view text, int& out) {
    const std::string t = trim(text);
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    return ec == std::errc() && end == t.data() + t.size() && !t.empty();
}

} // namespace

std::vector<std::string> splitList(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        out.push_back(
            trim(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return out;
}

RowRange parseRows(std::string_view text, std::string_view option) {
    const auto fail = [&](const std::string& why) -> RowRange {
        throw InvalidArgument(std::string(option) + " " + std::string(text) + ": " + why +
                              " (expected a:b for rows a to b-1, a: to the end, :b, or a single row a)");
    };
    const std::size_t colon = text.find(':');
    RowRange r;
    if (colon == std::string_view::npos) {
        if (!toInt(text, r.first)) return fail("not a row number");
        r.count = 1;
    } else {
        const std::string a = trim(text.substr(0, colon)), b = trim(text.substr(colon + 1));
        if (!a.empty() && !toInt(a, r.first)) return fail("'" + a + "' is not a row number");
        int end = 0;
        if (!b.empty() && !toInt(b, end)) return fail("'" + b + "' is not a row number");
        if (!b.empty()) {
            if (end <= r.first) return fail("the end row must be greater than the first row");
            r.count = end - r.first;
        }
    }
    if (r.first < 0) return fail("rows are numbered from 0");
    return r;
}

void checkRows(const RowRange& range, int rows, std::string_view option) {
    if (range.first >= rows || range.count > rows - range.first)
        throw InvalidArgument(std::string(option) + ": rows " + std::to_string(range.first) + ".." +
                              std::to_string(range.count == 0 ? rows - 1
                                                              : static_cast<long long>(range.first) + range.count - 1) +
                              " are outside the dataset, which has rows 0.." + std::to_string(rows - 1));
}

std::vector<int> parseInts(std::string_view text, std::size_t n, int min, std::string_view option) {
    const auto parts = splitList(text);
    const std::string expected = (n ? std::to_string(n) + " comma-separated integers" : "comma-separated integers") +
                                 std::string(" >= ") + std::to_string(min);
    if (n && parts.size() != n)
        throw InvalidArgument(std::string(option) + " " + std::string(text) + ": expected " + expected);
    std::vector<int> out;
    for (const auto& p : parts) {
        int v = 0;
        if (!toInt(p, v) || v < min)
            throw InvalidArgument(std::string(option) + " " + std::string(text) + ": '" + p +
                                  "' is not valid, expected " + expected);
        out.push_back(v);
    }
    return out;
}

std::vector<double> parseDoubles(std::string_view text, std::size_t n, std::string_view option) {
    const auto parts = splitList(text);
    const std::string expected = std::to_string(n) + " comma-separated numbers";
    if (parts.size() != n)
        throw InvalidArgument(std::string(option) + " " + std::string(text) + ": expected " + expected);
    std::vector<double> out;
    for (const auto& p : parts) {
        double v = 0.0;
        auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
        if (ec != std::errc() || end != p.data() + p.size() || p.empty() || !std::isfinite(v))
            throw InvalidArgument(std::string(option) + " " + std::string(text) + ": '" + p + "' is not a number");
        out.push_back(v);
    }
    return out;
}

namespace {

/// One finite number v with min <= v (min < v when `aboveMin`) and v <= max
/// (no upper bound when max is infinite); bounds printed in a few digits.
CLI::Validator boundedNumber(double min, bool aboveMin, double max) {
    return CLI::Validator(
        [=](std::string& text) -> std::string {
            const std::string t = trim(text);
            const char* first = t.data() + (!t.empty() && t[0] == '+' ? 1 : 0);
            double v = 0.0;
            const auto [end, ec] = std::from_chars(first, t.data() + t.size(), v);
            if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v))
                return "'" + text.substr(0, 40) + "' is not a finite number";
            if ((aboveMin ? v > min : v >= min) && v <= max) return {};
            std::ostringstream s;
            s << "'" << text.substr(0, 40) << "' is ";
            if (std::isinf(max))
                s << "not a number " << (aboveMin ? "> " : ">= ") << min;
            else
                s << "outside " << (aboveMin ? "(" : "[") << min << ", " << max << "]";
            return s.str();
        },
        "NUMBER");
}

} // namespace

CLI::Validator numberIn(double min, double max) {
    return boundedNumber(min, false, max);
}

CLI::Validator positiveNumber(double max) {
    return boundedNumber(0.0, true, max);
}

CLI::Validator nonNegativeNumber() {
    return boundedNumber(0.0, false, std::numeric_limits<double>::infinity());
}

CLI::Validator integerIn(long long min, long long max) {
    return CLI::Validator(
        [min, max](std::string& text) -> std::string {
            const std::string t = trim(text);
            const char* first = t.data() + (!t.empty() && t[0] == '+' ? 1 : 0);
            long long v = 0;
            const auto [end, ec] = std::from_chars(first, t.data() + t.size(), v);
            if (t.empty() || (ec != std::errc() && ec != std::errc::result_out_of_range) || end != t.data() + t.size())
                return "'" + text.substr(0, 40) + "' is not an integer";
            // Beyond long long: an integer all the same, out of any range here.
            if (ec == std::errc::result_out_of_range || v < min || v > max)
                return "'" + text.substr(0, 40) + "' is outside [" + std::to_string(min) + ", " + std::to_string(max) +
                       "]";
            return {};
        },
        "INTEGER");
}

std::vector<std::string> gpuLines() {
    std::vector<std::string> lines;
    for (const GpuDevice& d : gpuDevices()) {
        char line[512];
        std::snprintf(line, sizeof line, "GPU %d: %s, %d SMs, %.1f GiB, compute %d.%d", d.index, d.name.c_str(),
                      d.multiprocessors, static_cast<double>(d.memoryBytes) / (1u << 30), d.computeMajor,
                      d.computeMinor);
        lines.emplace_back(line);
    }
    if (!lines.empty()) return lines;
    std::string why = "this build has no CUDA support";
    for (const Backend* b : BackendRegistry::instance().backends())
        if (b->family() == "cuda") {
            why = b->unavailableReason();
            break;
        }
    return {"GPUs: none (" + (why.empty() ? std::string("no CUDA device found") : why) + ")"};
}

MemoryBudget memoryBudget(double gib) {
    constexpr double kGiB = double(std::size_t{1} << 30);
    const double machine = static_cast<double>(physicalMemoryBytes());
    MemoryBudget out;
    if (gib <= 0.0) {
        out.text = formatNumber(static_cast<double>(defaultMemoryBudget()) / kGiB, 3) +
                   " GiB (the default: 1/16 of the machine's " + formatNumber(machine / kGiB, 3) +
                   " GiB, within 1 to 4 GiB)";
        return out;
    }
    double bytes = gib * kGiB;
    out.text = formatNumber(gib, 3) + " GiB (--memory-budget)";
    if (machine > 0.0 && bytes > machine / 2) {
        bytes = machine / 2;
        out.text = formatNumber(bytes / kGiB, 3) + " GiB (--memory-budget " + formatNumber(gib, 3) +
                   " capped at half the machine's memory)";
        std::printf("warning: --memory-budget %s GiB is more than half of this machine's %s GiB of memory; the "
                    "chunk buffers get %s GiB (the plan, the file caches and the system need the rest)\n",
                    formatNumber(gib, 3).c_str(), formatNumber(machine / kGiB, 3).c_str(),
                    formatNumber(bytes / kGiB, 3).c_str());
    }
    out.bytes = static_cast<std::size_t>(bytes);
    return out;
}

void refuseEmptyValues(const CLI::App& app) {
    for (const CLI::Option* option : app.get_options()) {
        if (option->count() == 0 || option->get_expected_min() == 0) continue; // not given, or a flag
        const auto& values = option->results();
        if (std::any_of(values.begin(), values.end(), [](const std::string& v) { return trim(v).empty(); }))
            throw InvalidArgument(
                (option->get_lnames().empty() ? option->get_name() : "--" + option->get_lnames().front()) +
                " '': expected " + (option->get_type_name().empty() ? "a value" : option->get_type_name()));
    }
}

Region parseRegion(std::string_view text, std::string_view option) {
    const auto v = parseInts(text, 4, 0, option);
    if (v[2] < 1 || v[3] < 1)
        throw InvalidArgument(std::string(option) + " " + std::string(text) + ": width and height must be at least 1");
    return Region{v[0], v[1], v[2], v[3]};
}

} // namespace tomo::cli
