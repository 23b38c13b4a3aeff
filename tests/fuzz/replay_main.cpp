// Runs a fuzz target without libFuzzer (GCC builds, CI on every commit):
// each input file given, or found in the folders given, once as it is, then
// -mutations=N deterministic mutations of it (bit flips, boundary integers,
// truncation, insertion, deletion, block copies; the same on every run for
// the same -seed). A crash or an escaping exception ends the process: the
// input that did it is written to ./fuzz-crash-<target> first.
//
//   fuzz_hdf5 [-mutations=N] [-seed=S] [-max_len=BYTES] [-dump=K] FILE|FOLDER...
//
// -dump=K writes mutation K of each input to ./<input>.mutation-K instead of
// running anything: how a slow or crashing mutation becomes a regression file.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

/// The input being run, for the crash handler (which may only make
/// async-signal-safe calls: open, write, close).
const std::vector<std::uint8_t>* g_current = nullptr;
char g_crashFile[512];

extern "C" void onCrash(int signal) {
    if (g_current) {
        const int fd = ::open(g_crashFile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            (void)!::write(fd, g_current->data(), g_current->size());
            ::close(fd);
        }
        static const char text[] = "fuzz replay: crashed; the input is in ";
        (void)!::write(STDERR_FILENO, text, sizeof text - 1);
        (void)!::write(STDERR_FILENO, g_crashFile, std::strlen(g_crashFile));
        (void)!::write(STDERR_FILENO, "\n", 1);
    }
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}

void mutate(std::vector<std::uint8_t>& data, std::mt19937_64& rng) {
    static constexpr std::uint64_t kInteresting[] = {0,          1,          0x7F,       0x80,
                                                     0xFF,       0x7FFF,     0x8000,     0xFFFF,
                                                     0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000ull,
                                                     0x7FFFFFFFFFFFFFFFull,    ~0ull,      0x7FF0000000000000ull,
                                                     0x7FF8000000000000ull};
    const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % std::max<std::size_t>(n, 1)); };
    const int operations = 1 + static_cast<int>(rng() % 4);
    for (int op = 0; op < operations; ++op) {
        switch (rng() % 7) {
        case 0: // flip a bit
            if (!data.empty()) data[pick(data.size())] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
            break;
        case 1: // an interesting byte
            if (!data.empty()) data[pick(data.size())] = static_cast<std::uint8_t>(kInteresting[pick(std::size(kInteresting))]);
            break;
        case 2: { // an interesting 2-, 4- or 8-byte integer
            const std::size_t width = std::size_t{2} << (rng() % 3);
            if (data.size() < width) break;
            const std::uint64_t value = kInteresting[pick(std::size(kInteresting))];
            std::memcpy(&data[pick(data.size() - width + 1)], &value, width);
            break;
        }
        case 3: // truncate
            data.resize(pick(data.size() + 1));
            break;
        case 4: { // insert random bytes
            const std::size_t at = pick(data.size() + 1), count = 1 + pick(16);
            std::vector<std::uint8_t> bytes(count);
            for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
            data.insert(data.begin() + static_cast<std::ptrdiff_t>(at), bytes.begin(), bytes.end());
            break;
        }
        case 5: { // delete a block
            if (data.empty()) break;
            const std::size_t at = pick(data.size()), count = 1 + pick(std::min<std::size_t>(64, data.size() - at));
            data.erase(data.begin() + static_cast<std::ptrdiff_t>(at), data.begin() + static_cast<std::ptrdiff_t>(at + count));
            break;
        }
        default: { // copy a block over another place
            if (data.size() < 2) break;
            const std::size_t count = 1 + pick(std::min<std::size_t>(64, data.size() / 2));
            const std::size_t from = pick(data.size() - count + 1), to = pick(data.size() - count + 1);
            std::memmove(&data[to], &data[from], count);
            break;
        }
        }
    }
}

void run(const std::vector<std::uint8_t>& input) {
    g_current = &input;
    LLVMFuzzerTestOneInput(input.data(), input.size());
    g_current = nullptr;
}

} // namespace

int main(int argc, char** argv) {
    long mutations = 0;
    long dump = -1;
    unsigned long long seed = 1;
    std::size_t maxLen = std::size_t{1} << 20;
    std::vector<std::filesystem::path> files;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("-mutations=", 0) == 0) mutations = std::strtol(arg.c_str() + 11, nullptr, 10);
        else if (arg.rfind("-seed=", 0) == 0) seed = std::strtoull(arg.c_str() + 6, nullptr, 10);
        else if (arg.rfind("-max_len=", 0) == 0) maxLen = std::strtoull(arg.c_str() + 9, nullptr, 10);
        else if (arg.rfind("-dump=", 0) == 0) dump = std::strtol(arg.c_str() + 6, nullptr, 10);
        else if (std::filesystem::is_directory(arg)) {
            for (const auto& entry : std::filesystem::directory_iterator(arg))
                if (entry.is_regular_file()) files.push_back(entry.path());
        } else if (std::filesystem::is_regular_file(arg)) {
            files.push_back(arg);
        } // a missing folder (no findings yet) is no input
    }
    std::sort(files.begin(), files.end());
    std::snprintf(g_crashFile, sizeof g_crashFile, "fuzz-crash-%s",
                  std::filesystem::path(argv[0]).filename().c_str());
    for (const int signal : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(signal, onCrash);

    const auto start = std::chrono::steady_clock::now();
    long runs = 0;
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        const std::vector<std::uint8_t> original{std::istreambuf_iterator<char>(in), {}};
        if (dump < 0) {
            run(original);
            ++runs;
        }
        // Large inputs (real scans) run once: their mutations are for
        // libFuzzer's longer runs.
        if (original.size() > maxLen) continue;
        std::mt19937_64 rng(seed ^ std::hash<std::string>{}(file.filename().string()));
        for (long m = 0; m < std::max(mutations, dump + 1); ++m) {
            std::vector<std::uint8_t> input = original;
            mutate(input, rng);
            if (dump == m) {
                std::ofstream(file.filename().string() + ".mutation-" + std::to_string(m), std::ios::binary)
                    .write(reinterpret_cast<const char*>(input.data()), static_cast<std::streamsize>(input.size()));
            } else if (dump < 0) {
                run(input);
                ++runs;
            }
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("MEASURED %s: %ld inputs (%zu files, %ld mutations each) in %.1f s\n",
                std::filesystem::path(argv[0]).filename().c_str(), runs, files.size(), mutations, seconds);
    return files.empty() ? 1 : 0;
}
