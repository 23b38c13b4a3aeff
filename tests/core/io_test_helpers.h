// Small helpers shared by the core I/O tests (dataset, volume, preprocess).
#pragma once

#include "tomo/dataset.h"

#include <gtest/gtest.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

/// All sinograms of `reader` rows [first, first + count).
inline std::vector<float> sinograms(DatasetReader& reader, int first, int count) {
    const DatasetInfo& info = reader.info();
    std::vector<float> out(static_cast<std::size_t>(count) * info.projections * info.columns);
    reader.readSinograms(first, count, out);
    return out;
}

/// Rows [first, first + count) of every projection in their stored type.
inline std::vector<std::byte> rawRows(DatasetReader& reader, int first, int count) {
    const DatasetInfo& info = reader.info();
    std::vector<std::byte> out(static_cast<std::size_t>(count) * info.projections * info.columns *
                               sampleBytes(info.sampleType));
    reader.readRawRows(first, count, out);
    return out;
}

} // namespace tomo::test
