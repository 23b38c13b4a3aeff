#include "correction_options.h"

#include "cli_support.h"

#include "tomo/error.h"
#include "tomo/run_config.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace tomo::cli {

namespace {

constexpr const char* kGroup = "Corrections";

/// "A:B" -> first A, count B - A (B > A >= 0).
std::pair<int, int> parseColumnRange(const std::string& text, const char* option) {
    const auto colon = text.find(':');
    int a = -1, b = -1;
    const bool ok = colon != std::string::npos &&
                    std::from_chars(text.data(), text.data() + colon, a).ec == std::errc() &&
                    std::from_chars(text.data() + colon + 1, text.data() + text.size(), b).ec == std::errc();
    if (!ok || a < 0 || b <= a)
        throw InvalidArgument(std::string(option) + " " + text +
                              ": expected A:B, columns A to B-1 with 0 <= A < B (e.g. 0:30)");
    return {a, b - a};
}

std::string position(const PixelPosition& p) {
    std::ostringstream s;
    s << "row " << p.row;
    if (p.projection >= 0) s << " projection " << p.projection;
    s << " column " << p.column;
    return s.str();
}

/// "what: N <noun> (row r column c, ...)" with the first positions, or all
/// listed ones one per line.
void printList(const char* what, std::size_t count, const std::vector<PixelPosition>& list, bool listAll) {
    if (count == 0) return;
    constexpr std::size_t kInSummary = 5;
    std::printf("%s: %zu", what, count);
    if (listAll) {
        std::printf("%s\n", list.size() < count ? " (the first listed)" : "");
        for (const PixelPosition& p : list) std::printf("  %s\n", position(p).c_str());
        return;
    }
    std::printf(" (");
    for (std::size_t i = 0; i < std::min(list.size(), kInSummary); ++i)
        std::printf("%s%s", i ? "; " : "", position(list[i]).c_str());
    std::printf("%s)\n", count > kInSummary ? "; ... --list-bad-pixels lists them" : "");
}

} // namespace

void addCorrectionOptions(CLI::App& app, CorrectionCommandLine& c) {
    app.add_option("--dead-pixels", c.deadPixels,
                   "Values without a usable transmission (flat <= dark, raw <= dark, saturated) are interpolated "
                   "along the detector row (on) or clamped to p = 11.5 (off)")
        ->check(CLI::IsMember({"on", "off"}))
        ->capture_default_str()
        ->group(kGroup);
    app.add_option("--saturation", c.saturation,
                   "Raw value at or above which a pixel is saturated (masked); default: the largest value of an "
                   "integer sample type, none for float data")
        ->type_name("COUNT")
        ->check(nonNegativeNumber())
        ->group(kGroup);
    app.add_option("--background-columns", c.backgroundColumns,
                   "Beam-intensity normalisation: columns A to B-1 see only the open beam; each row of each "
                   "projection is divided by their mean transmission. Default: off")
        ->type_name("A:B")
        ->group(kGroup);
    app.add_flag("--zingers", c.zingers,
                 "Replace zingers (values above their local median by more than --zinger-threshold) by that median, "
                 "in projections, flats and darks")
        ->group(kGroup);
    app.add_option("--zinger-threshold", c.zingerThreshold,
                   "Zinger threshold, relative to the local median (or the sinogram's mean where larger)")
        ->type_name("T")
        ->check(positiveNumber())
        ->capture_default_str()
        ->group(kGroup);
    app.add_option("--zinger-window", c.zingerWindow, "Zinger median window (projections x columns), odd")
        ->type_name("N")
        ->check(CLI::Range(3, 99))
        ->capture_default_str()
        ->group(kGroup);
    app.add_option("--rings", c.rings,
                   "Stripe (ring) removal on each sinogram: sorting, large, dead, all (dead -> large -> sorting; "
                   "Vo et al. 2018) or wavelet (Muench et al. 2009)")
        ->check(CLI::IsMember({"off", "sorting", "large", "dead", "all", "wavelet"}))
        ->capture_default_str()
        ->group(kGroup);
    app.add_option("--ring-snr", c.ringSnr, "Stripe detection ratio of large/dead/all (> 1; larger = fewer stripes)")
        ->type_name("R")
        ->capture_default_str()
        ->group(kGroup);
    app.add_option("--ring-window", c.ringWindow, "Median window across columns of the sorting method (odd)")
        ->type_name("N")
        ->capture_default_str()
        ->group(kGroup);
    app.add_option("--ring-large-window", c.ringLargeWindow, "Median window of the large/dead stripe detection (odd)")
        ->type_name("N")
        ->capture_default_str()
        ->group(kGroup);
    app.add_option("--ring-drop-ratio", c.ringDropRatio,
                   "Share of each column's values, sorted along the angles, left out when measuring large stripes, "
                   "half at each end (0 ... 0.8)")
        ->type_name("F")
        ->capture_default_str()
        ->group(kGroup);
    app.add_option("--wavelet-level", c.waveletLevel, "Decomposition levels of the wavelet method (1 ... 20)")
        ->type_name("N")
        ->capture_default_str()
        ->group(kGroup);
    app.add_option("--wavelet-sigma", c.waveletSigma, "Damping width of the wavelet method (frequency samples)")
        ->type_name("S")
        ->capture_default_str()
        ->group(kGroup);
    app.add_option("--paganin", c.paganin,
                   "Paganin phase retrieval with this delta/beta (needs --energy, --distance, --pixel-size); reads "
                   "extra rows above and below each chunk (printed as the row margin)")
        ->type_name("DELTA/BETA")
        ->group(kGroup);
    app.add_option("--energy", c.energy, "Photon energy for --paganin")->type_name("KEV")->group(kGroup);
    app.add_option("--distance", c.distance, "Sample-detector distance for --paganin")
        ->type_name("METRES")
        ->group(kGroup);
    app.add_option("--pixel-size", c.pixelSize, "Detector pixel size (at the sample) for --paganin")
        ->type_name("METRES")
        ->group(kGroup);
    app.add_option("--half-acquisition", c.halfAcquisition,
                   "360-degree scan with the rotation axis near a detector edge: each 0-180 degree view is joined "
                   "with its mirrored partner 180 degrees later into a double-width sinogram. AXIS = the axis on "
                   "this detector (column), auto = found from the overlap (Vo et al. 2021). --center then refers "
                   "to the stitched sinogram (default: its centre)")
        ->type_name("AXIS|auto")
        ->group(kGroup);
    app.add_option("--overlap-window", c.overlapWindow, "Matching window of --half-acquisition auto (columns)")
        ->type_name("N")
        ->capture_default_str()
        ->group(kGroup);
    app.add_flag("--cpu-corrections", c.cpuCorrections,
                 "Run the corrections on the CPU even when the strategy runs on a GPU (by default a CUDA strategy "
                 "corrects on its GPU)")
        ->group(kGroup);
    app.add_flag("--list-bad-pixels", c.listBadPixels,
                 "After the run, list every dead pixel, interpolated value and zinger found (up to 1000 each)")
        ->group(kGroup);
}

CorrectionOptions applyCorrectionOptions(const CLI::App& app, const CorrectionCommandLine& c, CorrectionOptions o) {
    auto given = [&](const char* name) { return app.count(name) > 0; };
    if (given("--dead-pixels")) o.badPixels.enabled = c.deadPixels == "on";
    if (given("--saturation")) o.badPixels.saturation = c.saturation;
    if (given("--background-columns")) {
        const auto [first, count] = parseColumnRange(c.backgroundColumns, "--background-columns");
        o.flatField.backgroundFirst = first;
        o.flatField.backgroundCount = count;
    }
    if (given("--zingers")) o.zingers.enabled = true;
    if (given("--zinger-threshold")) o.zingers.threshold = c.zingerThreshold;
    if (given("--zinger-window")) o.zingers.window = c.zingerWindow;
    if (given("--rings")) o.rings.method = parseRingMethod(c.rings);
    if (given("--ring-snr")) o.rings.snr = c.ringSnr;
    if (given("--ring-window")) o.rings.sortingWindow = c.ringWindow;
    if (given("--ring-large-window")) o.rings.largeWindow = c.ringLargeWindow;
    if (given("--ring-drop-ratio")) o.rings.dropRatio = c.ringDropRatio;
    if (given("--wavelet-level")) o.rings.waveletLevel = c.waveletLevel;
    if (given("--wavelet-sigma")) o.rings.waveletSigma = c.waveletSigma;
    if (given("--paganin")) {
        o.paganin.enabled = true;
        o.paganin.deltaOverBeta = c.paganin;
    }
    if (given("--energy")) o.paganin.energyKeV = c.energy;
    if (given("--distance")) o.paganin.distanceM = c.distance;
    if (given("--pixel-size")) o.paganin.pixelSizeM = c.pixelSize;
    if (given("--half-acquisition")) {
        o.halfAcquisition.enabled = true;
        o.halfAcquisition.axis.reset();
        if (c.halfAcquisition != "auto") {
            double axis = 0.0;
            const auto end = c.halfAcquisition.data() + c.halfAcquisition.size();
            const auto [ptr, ec] = std::from_chars(c.halfAcquisition.data(), end, axis);
            if (ec != std::errc() || ptr != end || !std::isfinite(axis))
                throw InvalidArgument("--half-acquisition " + c.halfAcquisition +
                                      ": expected the axis column (e.g. 20.5) or auto");
            o.halfAcquisition.axis = axis;
        }
    }
    if (given("--overlap-window")) o.halfAcquisition.window = c.overlapWindow;

    // Parameters of a correction that stays off are a mistake worth saying.
    auto needs = [&](std::initializer_list<const char*> options, bool on, const char* enable) {
        for (const char* option : options)
            if (given(option) && !on) throw InvalidArgument(std::string(option) + " has no effect without " + enable);
    };
    needs({"--zinger-threshold", "--zinger-window"}, o.zingers.enabled, "--zingers");
    needs({"--ring-snr", "--ring-window", "--ring-large-window", "--ring-drop-ratio", "--wavelet-level",
           "--wavelet-sigma"},
          o.rings.method != RingMethod::Off, "--rings METHOD");
    needs({"--energy", "--distance", "--pixel-size"}, o.paganin.enabled, "--paganin DELTA/BETA");
    needs({"--overlap-window"}, o.halfAcquisition.enabled, "--half-acquisition");
    needs({"--saturation"}, o.badPixels.enabled, "--dead-pixels on");
    if (o.paganin.enabled)
        for (const auto& [option, value] :
             {std::pair{"--energy", o.paganin.energyKeV}, std::pair{"--distance", o.paganin.distanceM},
              std::pair{"--pixel-size", o.paganin.pixelSizeM}})
            if (!(value > 0.0)) throw InvalidArgument(std::string("--paganin needs ") + option + " (a value > 0)");
    o.validate();
    return o;
}

void printCorrectionSetup(const PreprocessingStage& stage) {
    std::printf("corrections: %s\n", stage.options().summary().c_str());
    if (const auto& found = stage.foundHalfAcquisitionAxis())
        std::printf("half acquisition: axis %.2f found automatically (overlap %.1f columns, confidence %.2f%s); the "
                    "stitched sinogram is %d columns wide, its axis at %.0f\n",
                    found->axis, found->overlap, found->confidence,
                    found->confidence < 0.2 ? ", doubtful: check it" : "", stage.outputColumns(), *stage.outputAxis());
    if (stage.rowMargin() > 0)
        std::printf("Paganin: %d extra rows read above and below each chunk\n", stage.rowMargin());
}

void addCorrectionAttributes(std::map<std::string, std::string>& attributes, const PreprocessingStage& stage) {
    attributes["corrections"] = correctionsToJson(stage.options());
    attributes["corrections_summary"] = stage.options().summary();
    attributes["row_margin"] = std::to_string(stage.rowMargin());
}

void printCorrectionReport(const PreprocessStats& stats, const std::vector<std::string>& warnings, bool listAll) {
    printList("dead pixels interpolated in every projection", stats.deadPixelCount, stats.deadPixels, listAll);
    printList("values <= 0 or saturated, interpolated along the row", stats.badValueCount, stats.badValues, listAll);
    printList("zingers replaced", stats.zingerCount, stats.zingers, listAll);
    if (stats.flatZingerCount > 0) std::printf("zingers replaced in flats and darks: %zu\n", stats.flatZingerCount);
    if (stats.clamped > 0)
        std::printf("warning: %zu values had a transmission <= 0 (raw <= dark or flat <= dark) and were clamped to "
                    "p = 11.5 (with --dead-pixels off, or where no value of the row was usable)\n",
                    stats.clamped);
    if (stats.clampedByCorrections > 0)
        std::printf("warning: Paganin's filter left %zu values at a transmission <= 0 (its overshoot next to values "
                    "without signal); they were clamped to p = 11.5\n",
                    stats.clampedByCorrections);
    if (stats.rings.rows > 0) {
        std::printf("ring removal: %s\n", stats.rings.summary().c_str());
        if (stats.rings.exceeded())
            std::printf("warning: ring removal changed the object beyond its stripes (more than %.0f %% of its "
                        "angular signal or %.2f %% of its integral): compare the slice with --rings off, or another "
                        "method\n",
                        100.0 * PreprocessStats::RingDamage::kNonStripeLimit,
                        100.0 * PreprocessStats::RingDamage::kMeanChangeLimit);
    }
    for (const std::string& w : warnings) std::printf("warning: %s\n", w.c_str());
}

} // namespace tomo::cli
