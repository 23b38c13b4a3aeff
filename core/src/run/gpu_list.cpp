#include "tomo/gpu_list.h"

#include "tomo/error.h"

#include <algorithm>

namespace tomo {

std::vector<int> parseGpus(const std::string& text, const std::vector<GpuDevice>& present, const std::string& option) {
    std::vector<int> indices;
    for (const GpuDevice& d : present) indices.push_back(d.index);
    std::string have = "this machine has no CUDA GPU";
    if (!indices.empty()) {
        have = std::string("this machine has GPU") + (indices.size() > 1 ? "s " : " ");
        for (std::size_t i = 0; i < indices.size(); ++i) {
            if (i > 0) have += ',';
            have += std::to_string(indices[i]);
        }
    }
    if (text == "all") {
        if (indices.empty()) throw DeviceError(option + " all: " + have);
        return indices;
    }
    const std::string expected = "expected all or a comma-separated list of GPU indices such as 0,1";
    if (text.empty()) throw InvalidArgument(option + " '': " + expected);
    std::vector<int> devices;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = text.find(',', start);
        std::string word = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        word.erase(0, word.find_first_not_of(" \t"));
        word.erase(word.find_last_not_of(" \t") + 1);
        const bool digits = !word.empty() && word.size() <= 4 &&
                            std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!digits) throw InvalidArgument(option + " " + text + ": '" + word + "' is not a GPU index; " + expected);
        const int device = std::stoi(word);
        if (std::find(devices.begin(), devices.end(), device) != devices.end())
            throw InvalidArgument(option + " " + text + ": GPU " + word + " is listed twice; expected each GPU once");
        devices.push_back(device);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    for (int d : devices)
        if (std::find(indices.begin(), indices.end(), d) == indices.end())
            throw DeviceError(option + " " + text + ": there is no GPU " + std::to_string(d) + "; " + have);
    return devices;
}

} // namespace tomo
