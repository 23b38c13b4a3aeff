// CorrectionOptions: names, checks and the one-line summary.
#include "tomo/corrections.h"
#include "tomo/error.h"

#include <array>
#include <cmath>
#include <sstream>
#include <utility>

namespace tomo {

namespace {

constexpr std::array<std::pair<RingMethod, std::string_view>, 6> kRingMethods{{
    {RingMethod::Off, "off"},
    {RingMethod::Sorting, "sorting"},
    {RingMethod::Large, "large"},
    {RingMethod::Dead, "dead"},
    {RingMethod::All, "all"},
    {RingMethod::Wavelet, "wavelet"},
}};

/// "<what> <value> (run-config corrections.<key>, --<option>): expected <expected>".
[[noreturn]] void badOption(const std::string& what, double value, const char* key, const char* option,
                            const std::string& expected) {
    std::ostringstream s;
    s << what << " " << value << " (run-config corrections." << key << ", " << option << "): expected " << expected;
    throw InvalidArgument(s.str());
}

void checkPositive(double value, const std::string& what, const char* key, const char* option) {
    if (!(value > 0.0) || !std::isfinite(value)) badOption(what, value, key, option, "a finite number > 0");
}

void checkOddWindow(int value, const std::string& what, const char* key, const char* option) {
    if (value < 3 || value % 2 == 0) badOption(what, value, key, option, "an odd number of columns >= 3");
}

} // namespace

std::string_view ringMethodName(RingMethod m) {
    for (const auto& [method, name] : kRingMethods)
        if (method == m) return name;
    return "off";
}

RingMethod parseRingMethod(std::string_view name) {
    std::string known;
    for (const auto& [method, n] : kRingMethods) {
        if (n == name) return method;
        known += (known.empty() ? "" : ", ") + std::string(n);
    }
    throw InvalidArgument("unknown ring removal method '" + std::string(name) + "' (expected one of: " + known + ")");
}

CorrectionOptions CorrectionOptions::none() {
    CorrectionOptions o;
    o.badPixels.enabled = false;
    o.flatField.findBackground = false;
    return o;
}

void CorrectionOptions::validate() const {
    if (flatField.backgroundCount < 0 || flatField.backgroundFirst < 0)
        badOption("background columns first", flatField.backgroundFirst, "flat_field.background_columns",
                  "--background-columns", "first >= 0 and a count >= 0 (0 = off)");
    if (!(badPixels.saturation >= 0.0) || !std::isfinite(badPixels.saturation))
        badOption("saturation", badPixels.saturation, "dead_pixels.saturation", "--saturation",
                  "a finite count >= 0 (0 = the sample type's largest value)");
    if (zingers.enabled) {
        checkPositive(zingers.threshold, "zinger threshold", "zingers.threshold", "--zinger-threshold");
        checkOddWindow(zingers.window, "zinger window", "zingers.window", "--zinger-window");
    }
    switch (rings.method) {
    case RingMethod::Off:
        break;
    case RingMethod::Wavelet:
        if (rings.waveletLevel < 1 || rings.waveletLevel > 20)
            badOption("wavelet level", rings.waveletLevel, "rings.wavelet_level", "--wavelet-level", "1 ... 20");
        checkPositive(rings.waveletSigma, "wavelet sigma", "rings.wavelet_sigma", "--wavelet-sigma");
        break;
    case RingMethod::Sorting:
    case RingMethod::Large:
    case RingMethod::Dead:
    case RingMethod::All:
        if (!(rings.snr > 1.0) || !std::isfinite(rings.snr))
            badOption("ring snr", rings.snr, "rings.snr", "--ring-snr", "a finite number > 1");
        checkOddWindow(rings.sortingWindow, "ring sorting window", "rings.sorting_window", "--ring-window");
        checkOddWindow(rings.largeWindow, "ring large-stripe window", "rings.large_window", "--ring-large-window");
        if (!(rings.dropRatio >= 0.0 && rings.dropRatio <= 0.8))
            badOption("ring drop ratio", rings.dropRatio, "rings.drop_ratio", "--ring-drop-ratio", "0 ... 0.8");
        break;
    }
    if (paganin.enabled) {
        checkPositive(paganin.deltaOverBeta, "Paganin delta/beta", "paganin.delta_over_beta", "--paganin");
        checkPositive(paganin.energyKeV, "Paganin energy", "paganin.energy_kev", "--energy");
        checkPositive(paganin.distanceM, "Paganin distance", "paganin.distance_m", "--distance");
        checkPositive(paganin.pixelSizeM, "Paganin pixel size", "paganin.pixel_size_m", "--pixel-size");
    }
    if (halfAcquisition.enabled) {
        if (halfAcquisition.axis && !std::isfinite(*halfAcquisition.axis))
            badOption("half-acquisition axis", *halfAcquisition.axis, "half_acquisition.axis", "--half-acquisition",
                      "a finite detector column");
        if (halfAcquisition.window < 6)
            badOption("half-acquisition window", halfAcquisition.window, "half_acquisition.window", "--overlap-window",
                      "at least 6 columns");
    }
}

std::string CorrectionOptions::summary() const {
    std::ostringstream s;
    auto item = [&s, first = true]() mutable -> std::ostringstream& {
        if (!first) s << ", ";
        first = false;
        return s;
    };
    if (badPixels.enabled) item() << "dead pixels";
    if (flatField.backgroundCount > 0)
        item() << "beam normalisation (columns " << flatField.backgroundFirst << ":"
               << flatField.backgroundFirst + flatField.backgroundCount << ")";
    if (zingers.enabled)
        item() << "zingers (" << zingers.threshold << ", " << zingers.window << "x" << zingers.window << ")";
    if (paganin.enabled)
        item() << "Paganin (delta/beta " << paganin.deltaOverBeta << ", " << paganin.energyKeV << " keV, "
               << paganin.distanceM << " m, pixel " << paganin.pixelSizeM << " m)";
    if (rings.method != RingMethod::Off) item() << "rings " << ringMethodName(rings.method);
    if (halfAcquisition.enabled) {
        item() << "360 half acquisition (axis ";
        if (halfAcquisition.axis)
            s << *halfAcquisition.axis;
        else
            s << "automatic";
        s << ")";
    }
    const std::string text = s.str();
    return text.empty() ? "none" : text;
}

} // namespace tomo
