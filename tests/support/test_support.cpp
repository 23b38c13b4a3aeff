#include "test_support.h"

#include <cmath>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <thread>

#include <unistd.h>

namespace tomo::test {

namespace {
// A suite run by hand behaves as under CTest (tests/CMakeLists.txt): "auto"
// never picks a timing-dependent strategy and the user's autotune cache is
// left alone. A value set by the caller wins; the autotune tests set their own.
[[maybe_unused]] const bool g_autotuneOff = ::setenv("TOMO_AUTOTUNE", "off", /*overwrite=*/0) == 0;
} // namespace

TempDir::TempDir() {
    static std::atomic<int> counter{0};
    std::random_device rd;
    auto base = std::filesystem::temp_directory_path();
    for (int attempt = 0; attempt < 100; ++attempt) {
        auto candidate = base / ("tomo-test-" + std::to_string(::getpid()) + "-" +
                                 std::to_string(counter++) + "-" + std::to_string(rd() % 100000));
        if (std::filesystem::create_directory(candidate)) {
            m_path = candidate;
            return;
        }
    }
    throw std::runtime_error("cannot create a temporary directory in " + base.string());
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    if (value)
        ::setenv(name, value, 1);
    else
        ::unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
    if (m_old)
        ::setenv(m_name, m_old->c_str(), 1);
    else
        ::unsetenv(m_name);
}

std::filesystem::path testData(const std::string& relative) {
    return std::filesystem::path(TOMO_TEST_DATA_DIR) / relative;
}

double relativeDifference(std::span<const float> a, std::span<const float> b) {
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        den += double(b[i]) * b[i];
    }
    return std::sqrt(num / den);
}

void printReadSpeedup(const std::string& what, double mib, const std::string& baseline, double baselineSeconds,
                      const std::string& ours, double oursSeconds) {
    std::printf("MEASURED %s: %s %.3f s (%.0f MiB/s), %s %.3f s (%.0f MiB/s), %.1fx on %u hardware threads\n",
                what.c_str(), baseline.c_str(), baselineSeconds, mib / baselineSeconds, ours.c_str(), oursSeconds,
                mib / oursSeconds, baselineSeconds / oursSeconds, std::thread::hardware_concurrency());
}

} // namespace tomo::test
