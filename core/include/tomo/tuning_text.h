// The text of a strategy's kernel parameters (ReconOptions::tuning,
// "shape=3,share=6"): its items and their numbers, with the one wording of
// their errors for every strategy that takes them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tomo {

struct TuningItem {
    std::string_view text;  ///< "share=6"
    std::string_view key;   ///< "share"
    std::string_view value; ///< "6" (empty without '=')
};

/// The comma-separated items of `tuning`, in their order (none for "").
std::vector<TuningItem> tuningItems(std::string_view tuning);

/// The item's value as a number in [low, high] (a whole one if `integer`);
/// InvalidArgument "<who>: tuning KEY=VALUE (expected an integer LOW to HIGH)"
/// otherwise.
double tuningNumber(const TuningItem& item, double low, double high, bool integer, const std::string& who);

} // namespace tomo
