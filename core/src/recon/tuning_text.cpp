#include "tomo/tuning_text.h"

#include "tomo/error.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace tomo {

std::vector<TuningItem> tuningItems(std::string_view tuning) {
    std::vector<TuningItem> items;
    std::string_view rest = tuning;
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view text = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        const std::size_t eq = text.find('=');
        items.push_back({text, text.substr(0, eq), eq == std::string_view::npos ? std::string_view{} : text.substr(eq + 1)});
    }
    return items;
}

double tuningNumber(const TuningItem& item, double low, double high, bool integer, const std::string& who) {
    double value = 0.0;
    const std::string_view text = item.value;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || !(value >= low && value <= high) ||
        (integer && value != std::floor(value))) {
        char range[64];
        std::snprintf(range, sizeof range, integer ? "an integer %g to %g" : "a number %g to %g", low, high);
        throw InvalidArgument(who + ": tuning " + std::string(item.key) + "=" + std::string(text) + " (expected " +
                              range + ")");
    }
    return value;
}

} // namespace tomo
