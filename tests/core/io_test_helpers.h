// Small helpers shared by the core I/O tests (dataset, volume, preprocess).
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

namespace tomo::test {

/// Success when `text` contains `part`; the failure shows both.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

/// Runs `f`, records a failure unless it throws E, and returns the message.
template <typename E, typename F>
std::string messageOf(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "wrong exception type, message: " << e.what();
        return {};
    }
    ADD_FAILURE() << "no exception thrown";
    return {};
}

inline void writeText(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

} // namespace tomo::test
