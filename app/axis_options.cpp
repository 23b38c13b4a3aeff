#include "axis_options.h"

#include "tomo/axis_finder.h"
#include "tomo/axis_sweep.h"
#include "tomo/error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <vector>

namespace tomo::cli {

namespace {

/// Rows the finder searches by default, spread over the detector (not over
/// --rows, so that a part of the volume gets the axis of the whole).
constexpr int kSearchRows = 5;
/// Most trial slices of one --center-sweep.
constexpr int kMaxSweep = 1000;

std::string number(double v, int precision = 6) {
    std::ostringstream s;
    s.precision(precision);
    s << v;
    return s.str();
}

std::string fixed(double v, int decimals) {
    char text[48];
    std::snprintf(text, sizeof text, "%.*f", decimals, v);
    return text;
}

/// Exactly `n` numbers separated by `separator` in `text`.
std::vector<double> parseNumbers(const std::string& text, char separator, std::size_t n, const std::string& option,
                                 const std::string& expected) {
    std::vector<double> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = std::min(text.find(separator, start), text.size());
        const std::string part = text.substr(start, end - start);
        double v = 0.0;
        const auto [stop, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
        if (part.empty() || ec != std::errc() || stop != part.data() + part.size() || !std::isfinite(v))
            throw InvalidArgument(option + " " + text + ": '" + part + "' is not a number (expected " + expected + ")");
        out.push_back(v);
        if (end == text.size()) break;
        start = end + 1;
    }
    if (out.size() != n) throw InvalidArgument(option + " " + text + ": expected " + expected);
    return out;
}

/// "R1:C1,R2:C2" -> the line through both points.
AxisLine parseCenterRows(const std::string& text) {
    const std::string expected = "ROW:COLUMN,ROW:COLUMN, e.g. 100:1020.5,1900:1023.25";
    const auto points = splitList(text);
    if (points.size() != 2) throw InvalidArgument("--center-rows " + text + ": expected " + expected);
    const auto a = parseNumbers(points[0], ':', 2, "--center-rows", expected);
    const auto b = parseNumbers(points[1], ':', 2, "--center-rows", expected);
    for (double row : {a[0], b[0]})
        if (row != std::floor(row) || row < 0 || row > std::numeric_limits<int>::max())
            throw InvalidArgument("--center-rows " + text + ": rows must be whole numbers >= 0 (expected " +
                                  expected + ")");
    if (a[0] == b[0]) throw InvalidArgument("--center-rows " + text + ": the two rows must differ");
    return AxisLine::through(static_cast<int>(a[0]), a[1], static_cast<int>(b[0]), b[1]);
}

/// Refuses an axis that leaves [-columns / 2, 1.5 columns] (the range of the
/// workstation's axis control) on the rows of the range, or rows outside.
void checkLine(const AxisLine& line, const RowRange& rows, const DatasetInfo& info, const std::string& what) {
    const double lo = -0.5 * info.columns, hi = 1.5 * info.columns;
    for (int row : {rows.first, rows.first + rows.count - 1}) {
        const double axis = line.at(row);
        if (!(axis >= lo && axis <= hi))
            throw InvalidArgument(what + ": the axis is " + number(axis) + " at row " + std::to_string(row) +
                                  "; expected a detector column in [" + number(lo) + ", " + number(hi) +
                                  "] (the detector has columns 0.." + std::to_string(info.columns - 1) + ")");
    }
}

int distinctRows(std::vector<int> rows) {
    std::sort(rows.begin(), rows.end());
    return static_cast<int>(std::unique(rows.begin(), rows.end()) - rows.begin());
}

std::string joinRows(const std::vector<int>& rows) {
    std::string out;
    for (int r : rows) out += (out.empty() ? "" : ", ") + std::to_string(r);
    return out;
}

/// "295.875" or "295.875 at row 67, tilt 0.0012 px/row = 0.069 degrees".
std::string describe(const AxisLine& line) {
    if (line.tilt == 0.0) return fixed(line.axis, 3);
    return fixed(line.axis, 3) + " at row " + number(line.referenceRow, 10) + ", tilt " + number(line.tilt, 3) +
           " px/row = " + number(line.tiltDegrees(), 3) + " degrees";
}

/// The finder on `searchRows`; prints each row unless quiet.
AxisSearch search(DatasetReader& reader, const std::vector<int>& searchRows, bool tilt, bool quiet) {
    if (!quiet)
        std::printf("axis finder: searching rows %s%s...\n", joinRows(searchRows).c_str(),
                    tilt ? " for a tilted axis" : "");
    std::fflush(stdout);
    const int count = static_cast<int>(searchRows.size());
    AxisSearch s;
    {
        ProgressBar bar(count, "rows searched", !quiet);
        s = findAxisOnRows(reader, searchRows, tilt, -1.0, [&](double fraction, std::string_view) {
            throwIfInterrupted();
            bar.update(static_cast<int>(std::lround(fraction * count)));
        });
    }
    if (!quiet)
        for (const AxisSearch::Row& r : s.rows)
            std::printf("axis finder: row %d: %.3f, confidence %.2f%s%s\n", r.row, r.estimate.axis,
                        r.estimate.confidence, r.used ? "" : " (left out)",
                        r.estimate.doubt.empty() ? "" : ("; " + r.estimate.doubt).c_str());
    return s;
}

} // namespace

void addAxisOptions(CLI::App& app, AxisCommandLine& c) {
    auto* center = app.add_option("--center", c.center,
                                  "Rotation axis: the detector column it projects onto (sub-pixel, 0-based), "
                                  "within [-columns/2, 1.5 columns]. Default: found automatically (--auto-center)")
                       ->type_name("COLUMN")
                       ->check(numberIn(-1e9, 1e9));
    auto* detector = app.add_flag("--detector-center", c.detectorCenter,
                                  "Rotation axis at the detector centre (columns - 1) / 2, without searching");
    auto* autoCenter =
        app.add_flag("--auto-center", c.autoCenter,
                     "Find the rotation axis (the default without --center or a config axis): Vo et al. 2014, "
                     "Fourier double-wedge metric, on 5 rows spread over the detector; prints the axis, the rows "
                     "used and the confidence (< 0.2 is doubtful). Overrides the axis of --config");
    auto* autoTilt = app.add_flag("--auto-tilt", c.autoTilt,
                                  "Like --auto-center, but fit a line to the rows' axes: a tilted axis, each slice "
                                  "reconstructed with the axis of its row; prints the tilt (px/row, degrees) and "
                                  "the fit's residual");
    auto* searchRows = app.add_option("--auto-center-rows", c.autoCenterRows,
                                      "Detector rows the finder searches, comma-separated. Default: 5 rows at the "
                                      "centres of equal parts of the detector")
                           ->type_name("R1,R2,...");
    auto* centerRows = app.add_option("--center-rows", c.centerRows,
                                      "A tilted axis through two points: axis C1 on row R1 and C2 on row R2, linear "
                                      "in the row between and beyond")
                           ->type_name("R1:C1,R2:C2");
    auto* sweep = app.add_option("--center-sweep", c.centerSweep,
                                 "Instead of a volume, write one slice per trial axis A, A + STEP, ... B (at most "
                                 "1000) of one row (the middle row of --rows); the axes are printed and stored "
                                 "in the output (attribute sweep_axes)")
                      ->type_name("A:B:STEP");
    center->excludes(detector)->excludes(autoCenter)->excludes(autoTilt)->excludes(searchRows)->excludes(centerRows);
    detector->excludes(autoCenter)->excludes(autoTilt)->excludes(searchRows)->excludes(centerRows);
    centerRows->excludes(autoCenter)->excludes(autoTilt)->excludes(searchRows);
    autoCenter->excludes(autoTilt);
    for (CLI::Option* other : {center, detector, autoCenter, autoTilt, searchRows, centerRows}) sweep->excludes(other);
}

void applyAxisOptions(const CLI::App& app, const AxisCommandLine& c, RunConfig& config) {
    if (app.count("--center")) {
        config.axis = c.center;
        config.axisTilt = 0.0;
        config.axisRow = 0.0;
    }
    if (app.count("--center-rows")) {
        const AxisLine line = parseCenterRows(c.centerRows);
        config.axis = line.axis;
        config.axisTilt = line.tilt;
        config.axisRow = line.referenceRow;
    }
}

AxisChoice chooseAxis(const CLI::App& app, const AxisCommandLine& c, RunConfig& config, DatasetReader& reader,
                      const RowRange& rows, bool quiet) {
    const DatasetInfo& info = reader.info();
    const double centre = (info.columns - 1) / 2.0;
    const bool findAsked = c.autoCenter || c.autoTilt || app.count("--auto-center-rows") > 0;
    AxisChoice choice;
    std::string source;
    bool print = true;

    if (c.detectorCenter) {
        choice.line = AxisLine{centre, 0.0, 0.0};
        source = "detector centre";
        print = !quiet;
    } else if (config.axis && !findAsked) {
        choice.line = AxisLine{*config.axis, config.axisTilt, config.axisRow};
        const bool onCommandLine = app.count("--center") || app.count("--center-rows");
        source = onCommandLine ? "given" : "given in --config";
        const std::string what = app.count("--center-rows") ? "--center-rows"
                                 : onCommandLine            ? "--center " + number(*config.axis)
                                                            : "axis of --config";
        checkLine(choice.line, rows, info, what);
        print = !quiet;
    } else {
        std::vector<int> searchRows = spreadRows(0, info.rows, kSearchRows);
        if (app.count("--auto-center-rows")) {
            searchRows = parseInts(c.autoCenterRows, 0, 0, "--auto-center-rows");
            for (int row : searchRows)
                if (row >= info.rows)
                    throw InvalidArgument("--auto-center-rows " + c.autoCenterRows + ": row " + std::to_string(row) +
                                          " is outside the dataset (rows 0.." + std::to_string(info.rows - 1) + ")");
            if (c.autoTilt && distinctRows(searchRows) < 2)
                throw InvalidArgument("--auto-tilt fits a line through the axes of several rows, but "
                                      "--auto-center-rows " + c.autoCenterRows +
                                      " names one row; expected at least two different rows");
        }
        try {
            const AxisSearch s = search(reader, searchRows, c.autoTilt, quiet);
            choice.line = s.line;
            std::vector<int> used;
            std::string perRow;
            for (const AxisSearch::Row& r : s.rows) {
                if (r.used) used.push_back(r.row);
                perRow += (perRow.empty() ? "" : ",") + std::to_string(r.row) + ":" + fixed(r.estimate.axis, 3) +
                          ":" + fixed(r.estimate.confidence, 2);
            }
            const std::string usedText =
                !used.empty() && used.size() < searchRows.size() ? " (" + std::to_string(used.size()) + " used)" : "";
            source = std::string("found automatically on row") + (searchRows.size() > 1 ? "s " : " ") +
                     joinRows(searchRows) + usedText +
                     (c.autoTilt && s.line.tilt != 0.0 ? ", fit residual " + fixed(s.residual, 2) + " px" : "") +
                     ", confidence " + fixed(s.confidence, 2);
            // A tilt needs axes found on two rows at least: a 1-row scan, or
            // rows the finder left out, leave one.
            if (c.autoTilt && distinctRows(used.empty() ? searchRows : used) < 2) {
                const std::string why =
                    "--auto-tilt fitted no tilt: the axis was found on one detector row only (" +
                    (info.rows == 1 ? std::string("the scan has one row")
                                    : "row " + std::to_string((used.empty() ? searchRows : used).front()) +
                                          "; the other rows searched were left out") +
                    "), so the axis is taken as untilted";
                std::printf("warning: %s\n", why.c_str());
                source += "; " + why;
            }
            choice.attributes["axis_confidence"] = fixed(s.confidence, 3);
            choice.attributes["axis_rows_searched"] = perRow; // row:axis:confidence
            checkLine(choice.line, rows, info, "the axis found automatically");
            if (s.confidence < kAxisDoubtful) {
                std::string why = "the rows disagree by " + fixed(s.residual, 2) + " px";
                if (used.empty()) // then the best row's estimate was taken
                    why = std::max_element(s.rows.begin(), s.rows.end(), [](const auto& a, const auto& b) {
                              return a.estimate.confidence < b.estimate.confidence;
                          })->estimate.doubt;
                source += "; doubtful: " + why + "; check it with --center-sweep or give --center";
            }
        } catch (const InvalidArgument& e) {
            if (findAsked) throw;
            choice.line = AxisLine{centre, 0.0, 0.0}; // the data do not suit the finder
            source = std::string("detector centre: the finder cannot run (") + e.what() + "); give --center";
        }
    }

    const std::string text = describe(choice.line);
    if (print) std::printf("axis %s (%s)\n", text.c_str(), source.c_str());
    choice.attributes["axis"] = number(choice.line.axis, 10);
    choice.attributes["axis_source"] = source;
    if (choice.line.tilt != 0.0) {
        choice.attributes["axis_tilt"] = number(choice.line.tilt, 10);
        choice.attributes["axis_row"] = number(choice.line.referenceRow, 10);
    }
    config.axis = choice.line.axis;
    config.axisTilt = choice.line.tilt;
    config.axisRow = choice.line.referenceRow;
    return choice;
}

bool sweepRequested(const AxisCommandLine& c) {
    return !c.centerSweep.empty();
}

void writeAxisSweep(const AxisCommandLine& c, const RunConfig& config, DatasetReader& reader, const RowRange& rows,
                    const Region& region, const std::filesystem::path& output, WriteOptions write, bool quiet) {
    const DatasetInfo& info = reader.info();
    const auto range = parseNumbers(c.centerSweep, ':', 3, "--center-sweep", "A:B:STEP, e.g. 290:300:0.5");
    AxisSweepJob job;
    job.axes = axisRange(range[0], range[1], range[2], kMaxSweep, "--center-sweep");
    checkLine(AxisLine{job.axes.front()}, {0, 1}, info, "--center-sweep " + c.centerSweep);
    checkLine(AxisLine{job.axes.back()}, {0, 1}, info, "--center-sweep " + c.centerSweep);
    if (!config.axisOffsetsFile.empty())
        job.axisOffsets = readAxisOffsetsFile(config.axisOffsetsFile, info.projections, info.columns);
    job.region = region;
    job.options = config.options;
    const int row = rows.first + rows.count / 2;
    const int count = static_cast<int>(job.axes.size());

    if (!quiet)
        std::printf("axis sweep: row %d, %d axes %s..%s in steps of %s\n", row, count, number(job.axes.front()).c_str(),
                    number(job.axes.back()).c_str(), number(range[2]).c_str());
    std::fflush(stdout);
    AxisSweepResult sweep;
    {
        ProgressBar bar(count, "axes", !quiet);
        sweep = sweepAxis(reader, row, job, [&](double fraction, std::string_view) {
            throwIfInterrupted();
            bar.update(static_cast<int>(std::lround(fraction * count)));
        });
    }

    std::string axes;
    for (double a : job.axes) axes += (axes.empty() ? "" : ",") + number(a, 10);
    write.attributes["axis"] = axes;
    write.attributes["axis_source"] = "--center-sweep " + c.centerSweep + ": slice i has the i-th axis";
    write.attributes["sweep_axes"] = axes;
    write.attributes["sweep_row"] = std::to_string(row);
    write.attributes["first_row"] = std::to_string(row);
    write.attributes["row_count"] = "1";
    auto writer = createVolumeWriter(output, region.width, region.height, count, write);
    writer->writeSlices(0, count, sweep.slices.data);
    writer->commit();
    std::printf("axis sweep: %d slices of %dx%d of row %d -> %s (filter %.3g s, back-projection %.3g s with %s); "
                "slice i has axis %s + i x %s: %s\n",
                count, region.width, region.height, row, output.c_str(), sweep.secondsFilter,
                sweep.secondsBackproject, sweep.strategy.c_str(), number(job.axes.front()).c_str(),
                number(range[2]).c_str(), axes.c_str());
}

} // namespace tomo::cli
