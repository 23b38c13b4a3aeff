// The real scans of shared/data beside the checkout, and what a test does
// when one is missing: by default it skips, naming the file; built with
// -DTOMO_REQUIRE_REAL_DATA=ON (as CI is) it fails instead, so a run that
// lost the data cannot read as green. The GoogleTest suites check with
// TOMO_REQUIRE_FILE (test_support.h), the QTest suites with
// TOMO_GUI_REQUIRE_FILE (gui_test_support.h); both ask missingRealData().
// Neither GoogleTest nor Qt here: both kinds of suite link it.
#pragma once

#include <filesystem>
#include <string>

namespace tomo::test {

/// True in a build with -DTOMO_REQUIRE_REAL_DATA=ON: a missing scan fails the test.
bool realDataRequired();

/// shared/data/real/<relative> (TOMO_SHARED_DATA_DIR at configure time),
/// whether or not it exists.
std::filesystem::path realDataPath(const std::string& relative);

/// Empty when `path` exists; else the reason the test skips or fails.
std::string missingRealData(const std::filesystem::path& path);

} // namespace tomo::test
