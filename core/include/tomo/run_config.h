// The parameters of one reconstruction as a JSON file: saved by the GUI,
// accepted by `tomo-recon --config`, so a reconstruction tuned interactively
// can be reproduced in batch.
#pragma once

#include "tomo/backend.h"
#include "tomo/dataset.h"
#include "tomo/geometry.h"

#include <filesystem>
#include <optional>
#include <string>

namespace tomo {

struct RunConfig {
    std::filesystem::path input;                 ///< dataset (may be empty)
    OpenOptions open;                            ///< how to read it: angles file and entries, angle range, raw layout
    std::optional<double> axis;                  ///< rotation axis; unset = detector centre
    std::filesystem::path axisOffsetsFile;       ///< per-projection offsets (may be empty)
    int firstRow = 0;
    int rowCount = 0;                            ///< 0 = to the last row
    std::optional<Region> region;                ///< unset = whole slice
    ReconOptions options;
};

/// JSON object with keys input, angles_file, angles_lines [first, count],
/// angle_range, raw_shape [projections, rows, columns], raw_type,
/// raw_header, raw_big_endian, axis, axis_offsets_file, rows [first, count],
/// region [x, y, width, height], strategy, interpolation, precision,
/// slices_per_pass, filter, padding, device, threads; absent keys keep
/// defaults. Unknown keys are an error (typos must not pass silently).
std::string toJson(const RunConfig& config);
/// Throws FormatError naming the key and what was expected.
RunConfig runConfigFromJson(const std::string& json);

/// File versions; save writes a temporary then renames. Throw IoError /
/// FormatError naming the file.
void saveRunConfig(const std::filesystem::path& path, const RunConfig& config);
RunConfig loadRunConfig(const std::filesystem::path& path);

} // namespace tomo
