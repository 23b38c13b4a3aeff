// The correction options of tomo-recon (group "Corrections" of --help): how
// they are declared, applied over a run config, stored in the output and
// reported after the run.
#pragma once

#include "tomo/corrections.h"
#include "tomo/preprocess.h"

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

namespace tomo::cli {

/// The options as typed; applied only when given, so that they override --config.
struct CorrectionCommandLine {
    std::string deadPixels = "on";
    double saturation = 0.0;
    std::string backgroundColumns;
    bool zingers = false;
    double zingerThreshold = ZingerOptions{}.threshold;
    int zingerWindow = ZingerOptions{}.window;
    std::string rings = "off";
    double ringSnr = RingOptions{}.snr;
    int ringWindow = RingOptions{}.sortingWindow;
    int ringLargeWindow = RingOptions{}.largeWindow;
    double ringDropRatio = RingOptions{}.dropRatio;
    int waveletLevel = RingOptions{}.waveletLevel;
    double waveletSigma = RingOptions{}.waveletSigma;
    double paganin = 0.0;
    double energy = 0.0;
    double distance = 0.0;
    double pixelSize = 0.0;
    std::string halfAcquisition;
    int overlapWindow = HalfAcquisitionOptions{}.window;
    bool listBadPixels = false;
    bool cpuCorrections = false;
};

/// Declares the options in the group "Corrections".
void addCorrectionOptions(CLI::App& app, CorrectionCommandLine& c);

/// `base` (the run config's corrections) with the options given on the
/// command line applied. Throws InvalidArgument naming the option for bad
/// values and for parameters of a correction that stays off.
CorrectionOptions applyCorrectionOptions(const CLI::App& app, const CorrectionCommandLine& c, CorrectionOptions base);

/// Prints the corrections that will run: the summary, the 360° axis when
/// it was found, Paganin's row margin.
void printCorrectionSetup(const PreprocessingStage& stage);

/// Output attributes: "corrections" (the options as run-config JSON, with the
/// 360° axis found), "corrections_summary", "row_margin".
void addCorrectionAttributes(std::map<std::string, std::string>& attributes, const PreprocessingStage& stage);

/// Prints what the corrections found: counts and the first positions on
/// stdout, every listed position with `listAll` (--list-bad-pixels), and
/// the stage's warnings.
void printCorrectionReport(const PreprocessStats& stats, const std::vector<std::string>& warnings, bool listAll);

} // namespace tomo::cli
