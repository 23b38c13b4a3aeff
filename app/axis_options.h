// The rotation-axis options of tomo-recon: an axis given, the detector
// centre, the finder (the default), a tilted axis through two rows or fitted
// to the finder's rows, and the axis sweep.
#pragma once

#include "cli_support.h"

#include "tomo/dataset.h"
#include "tomo/geometry.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <map>
#include <string>

namespace tomo::cli {

/// What the axis options say on the command line.
struct AxisCommandLine {
    double center = 0.0;
    bool detectorCenter = false;
    bool autoCenter = false;
    bool autoTilt = false;
    std::string autoCenterRows; ///< rows the finder searches: "R1,R2,..."
    std::string centerRows;     ///< a tilted axis: "R1:C1,R2:C2"
    std::string centerSweep;    ///< "A:B:STEP"
};

/// Adds --center, --detector-center, --auto-center, --auto-tilt,
/// --auto-center-rows, --center-rows and --center-sweep to `app`.
void addAxisOptions(CLI::App& app, AxisCommandLine& c);

/// --center / --center-rows into the run config (they override --config).
/// Throws InvalidArgument for a malformed --center-rows.
void applyAxisOptions(const CLI::App& app, const AxisCommandLine& c, RunConfig& config);

/// The axis of a run and how it was chosen.
struct AxisChoice {
    AxisLine line; ///< tilt 0: one axis for every row
    /// Stored with the output: axis, axis_source, and with a tilt or a
    /// search axis_tilt, axis_row, axis_confidence, axis_rows_searched.
    std::map<std::string, std::string> attributes;
};

/// The axis of the run: the config's (given or through two rows), the
/// detector centre, or the finder's on rows spread over the detector (the
/// default; falls back to the detector centre with a warning when the data
/// do not suit the finder and it was not asked for explicitly). Prints the
/// axis it used (and, unless quiet, each searched row). Records the axis in
/// `config` so that its JSON reproduces the run. Throws InvalidArgument for
/// an axis outside [-columns / 2, 1.5 columns] on the rows of the range,
/// bad --auto-center-rows, and as findAxisOnRows does.
AxisChoice chooseAxis(const CLI::App& app, const AxisCommandLine& c, RunConfig& config, DatasetReader& reader,
                      const RowRange& rows, bool quiet);

bool sweepRequested(const AxisCommandLine& c);

/// --center-sweep: one slice of the middle row of `rows` per trial axis,
/// written to `output` with the axes in the attributes (axis, sweep_axes,
/// sweep_row) and printed. `write` carries the run's other attributes.
/// Throws InvalidArgument for a bad range, as sweepAxis and the writer do.
void writeAxisSweep(const AxisCommandLine& c, const RunConfig& config, DatasetReader& reader, const RowRange& rows,
                    const Region& region, const std::filesystem::path& output, WriteOptions write, bool quiet);

} // namespace tomo::cli
