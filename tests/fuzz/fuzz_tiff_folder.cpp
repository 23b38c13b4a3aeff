// Fuzz target: a folder of TIFFs. The input is split at each "\n--file--\n"
// into up to 6 files named by their first line (e.g. "p_3.tif", "flat_0.tif",
// "angles.txt"): numbering, gaps, flats and darks, angles.txt, damaged files.
#include "fuzz_support.h"

#include <algorithm>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace fs = std::filesystem;
    const fs::path folder = tomo::fuzz::scratchDirectory() / "folder";
    std::error_code ec;
    fs::remove_all(folder, ec);
    fs::create_directory(folder, ec);
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    constexpr std::string_view kSeparator = "\n--file--\n";
    std::size_t start = 0;
    for (int file = 0; file < 6 && start <= input.size(); ++file) {
        const std::size_t end = std::min(input.find(kSeparator, start), input.size());
        const std::string_view part = input.substr(start, end - start);
        const std::size_t newline = part.find('\n');
        std::string name(part.substr(0, std::min<std::size_t>(newline, 32)));
        // A plain name inside the folder: no separators, no "." or "..".
        name.erase(std::remove_if(name.begin(), name.end(), [](char c) { return c == '/' || c == '\0'; }), name.end());
        if (!name.empty() && name != "." && name != ".." && newline != std::string_view::npos) {
            const std::string_view body = part.substr(newline + 1);
            tomo::fuzz::writeInput({reinterpret_cast<const std::uint8_t*>(body.data()), body.size()}, "folder/" + name);
        }
        start = end + kSeparator.size();
    }
    tomo::fuzz::openAndRead(folder);
    return 0;
}
