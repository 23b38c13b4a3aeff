#include "real_data.h"

#include <system_error>

namespace tomo::test {

bool realDataRequired() { return TOMO_REQUIRE_REAL_DATA; }

std::filesystem::path realDataPath(const std::string& relative) {
    return std::filesystem::path(TOMO_SHARED_DATA_DIR) / "real" / relative;
}

std::string missingRealData(const std::filesystem::path& path) {
    std::error_code ec;
    if (!path.empty() && std::filesystem::exists(path, ec)) return {};
    std::string why = "real data not found: " + path.string() +
                      " (expected shared/data beside the checkout, or -DTOMO_SHARED_DATA_DIR=...)";
    if (realDataRequired()) why += "; a failure, not a skip: this build has TOMO_REQUIRE_REAL_DATA=ON";
    return why;
}

} // namespace tomo::test
