// Helpers shared by the test suites: temporary folders and the real data.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>

namespace tomo::test {

/// A fresh empty directory, removed with everything in it on destruction.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::filesystem::path& path() const { return m_path; }
    std::filesystem::path operator/(const std::string& name) const { return m_path / name; }

private:
    std::filesystem::path m_path;
};

/// Sets an environment variable for the scope of a test (nullptr: unsets
/// it), then puts the old value back.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value);
    ~ScopedEnv();
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

/// shared/data/real/<relative>; empty path when the shared data folder is not
/// present (tests then GTEST_SKIP with that reason).
std::filesystem::path realData(const std::string& relative);

/// tests/data/<relative> in the source tree.
std::filesystem::path testData(const std::string& relative);

/// ||a - b|| / ||b|| (sizes equal), in double.
double relativeDifference(std::span<const float> a, std::span<const float> b);

/// Prints "MEASURED <what>: <baseline> T s (R MiB/s), <ours> T s (R MiB/s),
/// Nx on H hardware threads": a reading speed against the library's own,
/// reported, never asserted.
void printReadSpeedup(const std::string& what, double mib, const std::string& baseline, double baselineSeconds,
                      const std::string& ours, double oursSeconds);

} // namespace tomo::test

/// Skips the current test, naming the missing file, when `path` is empty or absent.
#define TOMO_REQUIRE_FILE(path)                                                              \
    do {                                                                                     \
        if ((path).empty() || !std::filesystem::exists(path))                               \
            GTEST_SKIP() << "real data not found: " << (path).string()                       \
                         << " (expected shared/data beside the checkout)";                   \
    } while (0)
