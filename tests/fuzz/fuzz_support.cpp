#include "fuzz_support.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace tomo::fuzz {

namespace {

/// Largest sinogram row the harness reads: 64 Mi values (256 MiB).
constexpr std::size_t kMaxRowValues = std::size_t{1} << 26;

struct Scratch {
    std::filesystem::path path;
    Scratch() {
        std::error_code ec;
        const std::filesystem::path base =
            std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm")
                                                          : std::filesystem::temp_directory_path();
        path = base / ("tomo-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(path);
    }
    ~Scratch() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

} // namespace

const std::filesystem::path& scratchDirectory() {
    static const Scratch scratch;
    return scratch.path;
}

std::filesystem::path writeInput(std::span<const std::uint8_t> data, const std::string& name) {
    const auto path = scratchDirectory() / name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    return path;
}

void openAndRead(const std::filesystem::path& path, const OpenOptions& options) {
    try {
        const auto reader = openDataset(path, options);
        const DatasetInfo& info = reader->info();
        const std::size_t rowValues = static_cast<std::size_t>(info.projections) * static_cast<std::size_t>(info.columns);
        if (rowValues > kMaxRowValues) return;
        std::vector<float> row(rowValues);
        std::vector<float> reference(static_cast<std::size_t>(info.columns));
        for (const int r : {0, info.rows - 1}) {
            reader->readSinograms(r, 1, row);
            reader->readMeanFlat(r, 1, reference);
            reader->readMeanDark(r, 1, reference);
            for (int g = 0; g < static_cast<int>(info.flatPositions.size()); ++g) reader->readFlatGroup(g, r, 1, reference);
        }
    } catch (const Error&) {
        // Refused with a message: what bad input must get.
    }
}

} // namespace tomo::fuzz
