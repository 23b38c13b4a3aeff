// The parameters of one reconstruction as a JSON file: saved by the GUI,
// accepted by `tomo-recon --config`, so a reconstruction tuned interactively
// can be reproduced in batch.
#pragma once

#include "tomo/backend.h"
#include "tomo/corrections.h"
#include "tomo/dataset.h"
#include "tomo/geometry.h"

#include <filesystem>
#include <optional>
#include <string>

namespace tomo {

struct RunConfig {
    std::filesystem::path input;                 ///< dataset (may be empty)
    OpenOptions open;                            ///< how to read it: angles file and entries, units, range, raw layout
    std::optional<double> axis;                  ///< rotation axis (at row axisRow); unset = found automatically
    double axisTilt = 0.0;                       ///< columns per row: axis(row) = axis + axisTilt (row - axisRow)
    double axisRow = 0.0;                        ///< the row `axis` is given for (with a tilt)
    std::filesystem::path axisOffsetsFile;       ///< per-projection offsets (may be empty)
    int firstRow = 0;
    int rowCount = 0;                            ///< 0 = to the last row
    std::optional<Region> region;                ///< unset = whole slice
    ReconOptions options;
    /// The GPUs of a volume reconstruction, one conveyor lane each (tomo-recon
    /// --gpus, the workstation's Reconstruct to File): "all" or "0,1,...";
    /// empty = options.device alone.
    std::string gpus;
    CorrectionOptions corrections;
};

/// Bounds of RunConfig's threads and device (ReconOptions), also those of
/// tomo-recon's --threads and --device: more threads than any machine has
/// cores only spend seconds starting them (100000 took 11 s).
constexpr int kMaxThreads = 1024;
constexpr int kMaxDevice = 1023;
/// Bound of RunConfig's iterations and tomo-recon's --iterations.
constexpr int kMaxIterations = 1000000;

/// JSON object with keys input, angles_file, angles_lines [first, count],
/// angle_range, angle_units ("auto", "degrees", "radians"), raw_shape
/// [projections, rows, columns], raw_type, raw_header, raw_big_endian, axis,
/// axis_tilt, axis_row, axis_offsets_file, rows [first, count], region
/// [x, y, width, height], strategy, interpolation, precision,
/// slices_per_pass, filter, padding, device, gpus ("all" or "0,1,...";
/// absent = device alone), threads, corrections (an
/// object: dead_pixels, flat_field, zingers, rings, paganin,
/// half_acquisition, each an object of its own; see correctionsToJson),
/// method ("fbp", "sirt", "cgls", "tv"), iterations, tv_weight, bounds
/// [lower, upper] (null = none on that side), init ("zero", "fbp"),
/// tolerance (IterativeOptions; checked as a whole, validate());
/// absent keys keep defaults. Unknown keys are an error (typos must not pass
/// silently); axis_tilt and axis_row need axis, raw_type/raw_header/
/// raw_big_endian need raw_shape.
std::string toJson(const RunConfig& config);
/// Throws FormatError naming the key and what was expected (the offending
/// value shown in a few words, whatever its size), or when values are
/// nested more than 16 levels deep.
RunConfig runConfigFromJson(const std::string& json);

/// The "corrections" object alone, every field written:
/// {"dead_pixels": {"enabled", "saturation"},
///  "flat_field": {"background_columns": [first, count]},
///  "zingers": {"enabled", "threshold", "window"},
///  "rings": {"method", "snr", "sorting_window", "large_window", "drop_ratio",
///            "wavelet_level", "wavelet_sigma"},
///  "paganin": {"enabled", "delta_over_beta", "energy_kev", "distance_m", "pixel_size_m"},
///  "half_acquisition": {"enabled", "axis" (null = automatic), "window"}}.
/// Also stored in the output's attributes.
std::string correctionsToJson(const CorrectionOptions& corrections);

/// File versions; save writes a temporary then renames. Throw IoError /
/// FormatError naming the file; load refuses anything but a regular file
/// (a FIFO would block) and files over 1 MiB.
void saveRunConfig(const std::filesystem::path& path, const RunConfig& config);
RunConfig loadRunConfig(const std::filesystem::path& path);

} // namespace tomo
