// Helpers shared by the test suites: temporary folders and the real data.
#pragma once

#include "real_data.h"

#include "tomo/registry.h"

#include <filesystem>
#include <memory>
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

/// The test backend B, added to the registry on first use (the registry
/// owns it; it stays for the process).
template <class B>
B& registeredOnce() {
    static B* const backend = [] {
        auto owned = std::make_unique<B>();
        B* raw = owned.get();
        BackendRegistry::instance().add(std::move(owned));
        return raw;
    }();
    return *backend;
}

/// shared/data/real/<relative>, whether or not it exists: tests check it
/// with TOMO_REQUIRE_FILE.
inline std::filesystem::path realData(const std::string& relative) { return realDataPath(relative); }

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

/// Skips the current test, naming the missing file, when `path` is empty or
/// absent; fails it instead in a build with TOMO_REQUIRE_REAL_DATA=ON.
#define TOMO_REQUIRE_FILE(path)                                                                     \
    do {                                                                                            \
        if (const std::string tomo_missing_ = ::tomo::test::missingRealData(path);                  \
            !tomo_missing_.empty()) {                                                               \
            if (::tomo::test::realDataRequired()) GTEST_FAIL() << tomo_missing_;                    \
            GTEST_SKIP() << tomo_missing_;                                                          \
        }                                                                                           \
    } while (0)
