// Progress reporting and cancellation for long operations.
#pragma once

#include <functional>
#include <string_view>

namespace tomo {

/// Called with the fraction done (0..1) and a short stage name. To cancel,
/// the callback throws tomo::Cancelled; the operation then cleans up (no
/// partial output file is left) and rethrows.
using ProgressCallback = std::function<void(double fraction, std::string_view stage)>;

} // namespace tomo
