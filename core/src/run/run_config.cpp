#include "tomo/run_config.h"

#include "io/file_checks.h"
#include "tomo/error.h"
#include "tomo/gpu_list.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <system_error>
#include <unistd.h>

namespace tomo {

namespace {

using nlohmann::json;

constexpr std::array kKeys = {"input",      "angles_file",     "angles_lines",   "angle_range", "angle_units",
                              "raw_shape",  "raw_type",        "raw_header",     "raw_big_endian", "axis",
                              "axis_tilt",  "axis_row",        "axis_offsets_file", "rows",     "region",
                              "strategy",   "interpolation",   "precision",      "slices_per_pass", "filter",
                              "padding",    "device",          "gpus",           "opencl_device",  "tuning",  "threads",     "corrections",
                              "method",     "iterations",      "tv_weight",      "bounds",  "init",        "tolerance",
                              "projector"};

template <std::size_t N>
std::string knownKeys(const std::array<const char*, N>& keys) {
    std::string out;
    for (const char* k : keys) out += (out.empty() ? "" : ", ") + std::string(k);
    return out;
}

/// Deepest nesting parsed: a run config's values are at most objects of
/// objects, and a value nested 100000 deep would overflow the stack of any
/// recursive code that meets it.
constexpr int kMaxDepth = 16;
/// Largest run-config file read.
constexpr std::uintmax_t kMaxFileBytes = 1u << 20;

/// At most `max` characters of `text`, control characters as '?'.
std::string shortText(const std::string& text, std::size_t max = 40) {
    std::string out = text.substr(0, max);
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20) c = '?';
    return text.size() > max ? out + "..." : out;
}

/// Throws for a key of `object` (named `where`) not in `keys`.
template <std::size_t N>
void checkKeys(const json& object, const std::string& where, const std::array<const char*, N>& keys) {
    for (const auto& item : object.items()) {
        const std::string& key = item.key(); // not a structured binding: Clang 14 cannot capture those
        if (std::find_if(keys.begin(), keys.end(), [&](const char* k) { return key == k; }) == keys.end())
            throw FormatError("run config: unknown key '" + where + shortText(key) + "' (known keys" +
                              (where.empty() ? std::string() : " of " + where.substr(0, where.size() - 1)) + ": " +
                              knownKeys(keys) + ")");
    }
}

/// A value as a message shows it: short, whatever its size.
std::string describe(const json& j) {
    if (j.is_array()) return "an array of " + std::to_string(j.size()) + " value" + (j.size() == 1 ? "" : "s");
    if (j.is_object()) return "an object of " + std::to_string(j.size()) + " key" + (j.size() == 1 ? "" : "s");
    if (j.is_string()) return "\"" + shortText(j.get<std::string>()) + "\"";
    return j.dump(); // numbers, booleans, null: short
}

[[noreturn]] void wrongValue(const std::string& key, const std::string& expected, const json& got) {
    throw FormatError("run config: key '" + key + "' must be " + expected + ", got " + describe(got));
}

std::string getString(const json& j, const std::string& key) {
    if (!j.is_string()) wrongValue(key, "a string", j);
    return j.get<std::string>();
}

/// A file name: a string without NUL (which no path may hold).
std::filesystem::path getPath(const json& j, const std::string& key) {
    std::string text = getString(j, key);
    if (text.find('\0') != std::string::npos) wrongValue(key, "a file name (no NUL character)", j);
    return text;
}

int getInt(const json& j, const std::string& key, int min, int max = INT32_MAX) {
    if (!j.is_number_integer() || j.get<long long>() < min || j.get<long long>() > max)
        wrongValue(key, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]", j);
    return j.get<int>();
}

double getNumber(const json& j, const std::string& key) {
    if (!j.is_number() || !std::isfinite(j.get<double>())) wrongValue(key, "a finite number", j);
    return j.get<double>();
}

bool getBool(const json& j, const std::string& key) {
    if (!j.is_boolean()) wrongValue(key, "true or false", j);
    return j.get<bool>();
}

/// An array of `n` integers, each >= the matching minimum.
template <std::size_t N>
std::array<int, N> getInts(const json& j, const std::string& key, const std::array<int, N>& mins,
                           const std::string& expected) {
    if (!j.is_array() || j.size() != N) wrongValue(key, expected, j);
    std::array<int, N> out{};
    for (std::size_t i = 0; i < N; ++i) {
        if (!j[i].is_number_integer() || j[i].get<long long>() < mins[i] || j[i].get<long long>() > INT32_MAX)
            wrongValue(key, expected, j);
        out[i] = j[i].get<int>();
    }
    return out;
}

/// Runs a parse function of the core (which throws InvalidArgument) and
/// reports its complaint as a FormatError about `key`.
template <class Parse>
auto parseNamed(const json& j, const std::string& key, Parse parse) {
    std::string text = getString(j, key);
    try {
        return parse(text);
    } catch (const InvalidArgument& e) {
        throw FormatError("run config: key '" + key + "': " + shortText(e.what(), 200));
    }
}

json correctionsObject(const CorrectionOptions& c) {
    json j = json::object();
    j["dead_pixels"] = {{"enabled", c.badPixels.enabled}, {"saturation", c.badPixels.saturation}};
    j["flat_field"] = {{"background_columns", {c.flatField.backgroundFirst, c.flatField.backgroundCount}}};
    j["zingers"] = {{"enabled", c.zingers.enabled}, {"threshold", c.zingers.threshold}, {"window", c.zingers.window}};
    j["rings"] = {{"method", ringMethodName(c.rings.method)},
                  {"snr", c.rings.snr},
                  {"sorting_window", c.rings.sortingWindow},
                  {"large_window", c.rings.largeWindow},
                  {"drop_ratio", c.rings.dropRatio},
                  {"wavelet_level", c.rings.waveletLevel},
                  {"wavelet_sigma", c.rings.waveletSigma}};
    j["paganin"] = {{"enabled", c.paganin.enabled},
                    {"delta_over_beta", c.paganin.deltaOverBeta},
                    {"energy_kev", c.paganin.energyKeV},
                    {"distance_m", c.paganin.distanceM},
                    {"pixel_size_m", c.paganin.pixelSizeM}};
    j["half_acquisition"] = {{"enabled", c.halfAcquisition.enabled},
                             {"axis", c.halfAcquisition.axis ? json(*c.halfAcquisition.axis) : json(nullptr)},
                             {"window", c.halfAcquisition.window}};
    return j;
}

/// Reads the "corrections" object; absent keys keep the defaults. The
/// values are then checked as a whole (CorrectionOptions::validate).
CorrectionOptions correctionsFromJson(const json& j) {
    if (!j.is_object()) wrongValue("corrections", "an object", j);
    checkKeys(j, "corrections.",
              std::array{"dead_pixels", "flat_field", "zingers", "rings", "paganin", "half_acquisition"});
    CorrectionOptions c;
    // Visits the sub-object `name` (when present) with a getter for its keys.
    auto section = [&](const char* name, auto keys, auto read) {
        if (!j.contains(name) || j[name].is_null()) return;
        const std::string where = std::string("corrections.") + name;
        if (!j[name].is_object()) wrongValue(where, "an object", j[name]);
        checkKeys(j[name], where + ".", keys);
        read(j[name], where + ".");
    };
    // Each reads key `k` of `o` (at path `w`) into `field` when present.
    auto has = [](const json& o, const char* k) { return o.contains(k) && !o[k].is_null(); };
    auto flag = [&](const json& o, const std::string& w, const char* k, bool& field) {
        if (has(o, k)) field = getBool(o[k], w + k);
    };
    auto number = [&](const json& o, const std::string& w, const char* k, double& field) {
        if (has(o, k)) field = getNumber(o[k], w + k);
    };
    auto integer = [&](const json& o, const std::string& w, const char* k, int min, int& field) {
        if (has(o, k)) field = getInt(o[k], w + k, min);
    };
    section("dead_pixels", std::array{"enabled", "saturation"}, [&](const json& o, const std::string& w) {
        flag(o, w, "enabled", c.badPixels.enabled);
        number(o, w, "saturation", c.badPixels.saturation);
    });
    section("flat_field", std::array{"background_columns"}, [&](const json& o, const std::string& w) {
        if (!has(o, "background_columns")) return;
        const auto r = getInts<2>(o["background_columns"], w + "background_columns", {0, 0},
                                  "[first, count] with first >= 0 and count >= 0 (0 = off)");
        c.flatField.backgroundFirst = r[0];
        c.flatField.backgroundCount = r[1];
    });
    section("zingers", std::array{"enabled", "threshold", "window"}, [&](const json& o, const std::string& w) {
        flag(o, w, "enabled", c.zingers.enabled);
        number(o, w, "threshold", c.zingers.threshold);
        integer(o, w, "window", 3, c.zingers.window);
    });
    section("rings",
            std::array{"method", "snr", "sorting_window", "large_window", "drop_ratio", "wavelet_level",
                       "wavelet_sigma"},
            [&](const json& o, const std::string& w) {
                if (has(o, "method")) c.rings.method = parseNamed(o["method"], w + "method", parseRingMethod);
                number(o, w, "snr", c.rings.snr);
                integer(o, w, "sorting_window", 3, c.rings.sortingWindow);
                integer(o, w, "large_window", 3, c.rings.largeWindow);
                number(o, w, "drop_ratio", c.rings.dropRatio);
                integer(o, w, "wavelet_level", 1, c.rings.waveletLevel);
                number(o, w, "wavelet_sigma", c.rings.waveletSigma);
            });
    section("paganin", std::array{"enabled", "delta_over_beta", "energy_kev", "distance_m", "pixel_size_m"},
            [&](const json& o, const std::string& w) {
                flag(o, w, "enabled", c.paganin.enabled);
                number(o, w, "delta_over_beta", c.paganin.deltaOverBeta);
                number(o, w, "energy_kev", c.paganin.energyKeV);
                number(o, w, "distance_m", c.paganin.distanceM);
                number(o, w, "pixel_size_m", c.paganin.pixelSizeM);
            });
    section("half_acquisition", std::array{"enabled", "axis", "window"}, [&](const json& o, const std::string& w) {
        flag(o, w, "enabled", c.halfAcquisition.enabled);
        if (has(o, "axis")) c.halfAcquisition.axis = getNumber(o["axis"], w + "axis");
        integer(o, w, "window", 6, c.halfAcquisition.window);
    });
    try {
        c.validate();
    } catch (const InvalidArgument& e) {
        throw FormatError(std::string("run config: ") + e.what());
    }
    return c;
}

} // namespace

std::string correctionsToJson(const CorrectionOptions& corrections) {
    return correctionsObject(corrections).dump(2) + "\n";
}

std::string toJson(const RunConfig& config) {
    json j = json::object();
    j["input"] = config.input.string();
    const OpenOptions& open = config.open;
    j["angles_file"] = open.anglesFile ? open.anglesFile->string() : std::string();
    if (open.anglesLines) j["angles_lines"] = {open.anglesLines->first, open.anglesLines->count};
    j["angle_range"] = open.angleRangeDegrees;
    j["angle_units"] = angleUnitsName(open.angleUnits);
    if (open.raw) {
        j["raw_shape"] = {open.raw->projections, open.raw->rows, open.raw->columns};
        j["raw_type"] = sampleTypeName(open.raw->type);
        j["raw_header"] = open.raw->headerBytes;
        j["raw_big_endian"] = open.raw->bigEndian;
    }
    if (config.axis) j["axis"] = *config.axis;
    if (config.axisTilt != 0.0) {
        j["axis_tilt"] = config.axisTilt;
        j["axis_row"] = config.axisRow;
    }
    j["axis_offsets_file"] = config.axisOffsetsFile.string();
    j["rows"] = {config.firstRow, config.rowCount};
    if (config.region) j["region"] = {config.region->x, config.region->y, config.region->width, config.region->height};
    const ReconOptions& o = config.options;
    j["strategy"] = o.strategy;
    j["interpolation"] = interpolationName(o.interpolation);
    j["precision"] = precisionName(o.precision);
    j["slices_per_pass"] = o.slicesPerPass;
    j["filter"] = filterWindowName(o.filter.window);
    j["padding"] = paddingName(o.filter.padding);
    j["device"] = o.device;
    if (!config.gpus.empty()) j["gpus"] = config.gpus;
    if (!o.openclDevice.empty()) j["opencl_device"] = o.openclDevice;
    if (!o.tuning.empty()) j["tuning"] = o.tuning;
    j["threads"] = o.threads;
    const IterativeOptions& it = o.iterative;
    j["method"] = methodName(it.method);
    if (it.isIterative()) {
        if (it.iterations > 0) j["iterations"] = it.iterations;
        if (it.tvWeight) j["tv_weight"] = *it.tvWeight;
        if (it.bounds.any()) {
            auto side = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
            j["bounds"] = {side(it.bounds.lower), side(it.bounds.upper)};
        }
        j["init"] = initialImageName(it.init);
        if (it.tolerance > 0.0) j["tolerance"] = it.tolerance;
        j["projector"] = projectorKindName(it.projector);
    }
    j["corrections"] = correctionsObject(config.corrections);
    return j.dump(2) + "\n";
}

RunConfig runConfigFromJson(const std::string& text) {
    json j;
    try {
        // The callback sees every value as it is parsed, before it is nested further.
        j = json::parse(text, [](int depth, json::parse_event_t, json&) {
            if (depth > kMaxDepth)
                throw FormatError("run config: values nested deeper than " + std::to_string(kMaxDepth) +
                                  " levels; expected a flat object of settings");
            return true;
        });
    } catch (const json::exception& e) {
        // A syntax error, or a number beyond double (out_of_range); the
        // message's "last read" may quote a huge token.
        throw FormatError("run config: not valid JSON: " + shortText(e.what(), 200));
    }
    if (!j.is_object())
        throw FormatError("run config: expected a JSON object at the top level, got " + std::string(j.type_name()));

    checkKeys(j, "", kKeys);

    RunConfig c;
    auto has = [&](const char* key) { return j.contains(key) && !j[key].is_null(); };
    if (has("input")) c.input = getPath(j["input"], "input");
    OpenOptions& open = c.open;
    if (has("angles_file")) {
        const std::filesystem::path file = getPath(j["angles_file"], "angles_file");
        if (!file.empty()) open.anglesFile = file;
    }
    if (has("angles_lines")) {
        const auto lines = getInts<2>(j["angles_lines"], "angles_lines", {0, 0},
                                      "[first, count] with first >= 0 and count >= 0 (0 = to the end)");
        open.anglesLines = LineRange{lines[0], lines[1]};
    }
    if (has("angle_range")) {
        const json& v = j["angle_range"];
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0.0)
            wrongValue("angle_range", "a positive number of degrees", v);
        open.angleRangeDegrees = v.get<double>();
    }
    if (has("angle_units")) {
        const std::string units = getString(j["angle_units"], "angle_units");
        bool known = false;
        for (AngleUnits u : {AngleUnits::Auto, AngleUnits::Degrees, AngleUnits::Radians})
            if (units == angleUnitsName(u)) open.angleUnits = u, known = true;
        if (!known) wrongValue("angle_units", "\"auto\", \"degrees\" or \"radians\"", j["angle_units"]);
    }
    if (has("raw_shape")) {
        const auto shape = getInts<3>(j["raw_shape"], "raw_shape", {1, 1, 1},
                                      "[projections, rows, columns], each >= 1");
        RawLayout raw{shape[0], shape[1], shape[2]};
        if (has("raw_type")) {
            const std::string type = getString(j["raw_type"], "raw_type");
            bool known = false;
            for (SampleType t : {SampleType::UInt8, SampleType::UInt16, SampleType::Float32, SampleType::Float64})
                if (type == sampleTypeName(t)) raw.type = t, known = true;
            if (!known) wrongValue("raw_type", "\"uint8\", \"uint16\", \"float32\" or \"float64\"", j["raw_type"]);
        }
        if (has("raw_header")) raw.headerBytes = static_cast<std::size_t>(getInt(j["raw_header"], "raw_header", 0));
        if (has("raw_big_endian")) {
            if (!j["raw_big_endian"].is_boolean()) wrongValue("raw_big_endian", "true or false", j["raw_big_endian"]);
            raw.bigEndian = j["raw_big_endian"].get<bool>();
        }
        open.raw = raw;
    } else {
        for (const char* rawOnly : {"raw_type", "raw_header", "raw_big_endian"})
            if (has(rawOnly))
                throw FormatError(std::string("run config: key '") + rawOnly + "' needs 'raw_shape' (the raw layout)");
    }
    // Axis values beyond 1e9 columns are nonsense (and would lose all precision).
    auto getAxisValue = [&](const char* key, const std::string& expected) {
        if (!j[key].is_number() || !std::isfinite(j[key].get<double>()) || std::abs(j[key].get<double>()) > 1e9)
            wrongValue(key, expected, j[key]);
        return j[key].get<double>();
    };
    if (has("axis")) c.axis = getAxisValue("axis", "a finite number (detector column)");
    if (has("axis_tilt")) c.axisTilt = getAxisValue("axis_tilt", "a finite number (columns per row)");
    if (has("axis_row")) c.axisRow = getAxisValue("axis_row", "a finite number (the detector row of 'axis')");
    for (const char* key : {"axis_tilt", "axis_row"})
        if (has(key) && !c.axis)
            throw FormatError(std::string("run config: key '") + key +
                              "' needs 'axis' (axis(row) = axis + axis_tilt (row - axis_row))");
    if (has("axis_offsets_file")) c.axisOffsetsFile = getPath(j["axis_offsets_file"], "axis_offsets_file");
    if (has("rows")) {
        auto rows =
            getInts<2>(j["rows"], "rows", {0, 0}, "[first, count] with first >= 0 and count >= 0 (0 = to the end)");
        c.firstRow = rows[0];
        c.rowCount = rows[1];
    }
    if (has("region")) {
        auto r = getInts<4>(j["region"], "region", {0, 0, 1, 1},
                            "[x, y, width, height] with x, y >= 0 and width, height >= 1");
        c.region = Region{r[0], r[1], r[2], r[3]};
    }
    ReconOptions& o = c.options;
    if (has("strategy")) {
        // A name: a few lowercase letters, digits and dashes ("tex-optimized").
        o.strategy = getString(j["strategy"], "strategy");
        const bool name = !o.strategy.empty() && o.strategy.size() <= 64 &&
                          std::all_of(o.strategy.begin(), o.strategy.end(), [](char ch) {
                              return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
                          });
        if (!name) wrongValue("strategy", "a strategy name (as --list-strategies lists them) or \"auto\"", j["strategy"]);
    }
    if (has("interpolation")) o.interpolation = parseNamed(j["interpolation"], "interpolation", parseInterpolation);
    if (has("precision")) o.precision = parseNamed(j["precision"], "precision", parsePrecision);
    if (has("slices_per_pass")) {
        const json& v = j["slices_per_pass"];
        if (!v.is_number_integer() || (v.get<long long>() != 1 && v.get<long long>() != 2 && v.get<long long>() != 4))
            wrongValue("slices_per_pass", "1, 2 or 4", v);
        o.slicesPerPass = v.get<int>();
    }
    if (has("filter")) o.filter.window = parseNamed(j["filter"], "filter", parseFilterWindow);
    if (has("padding")) o.filter.padding = parseNamed(j["padding"], "padding", parsePadding);
    if (has("device")) o.device = getInt(j["device"], "device", 0, kMaxDevice);
    if (has("gpus")) {
        // Its form only: which GPUs exist is the run's to check (parseGpus).
        c.gpus = getString(j["gpus"], "gpus");
        std::vector<GpuDevice> any(kMaxDevice + 1);
        for (int i = 0; i <= kMaxDevice; ++i) any[static_cast<std::size_t>(i)].index = i;
        try {
            (void)parseGpus(c.gpus, any);
        } catch (const Error&) {
            wrongValue("gpus", "all, or a comma-separated list of GPU indices 0.." + std::to_string(kMaxDevice) +
                                   " each once, such as \"0,1\"",
                       j["gpus"]);
        }
    }
    if (has("opencl_device")) {
        // An index in the OpenCL device list, or part of a device or platform name.
        const json& v = j["opencl_device"];
        if (v.is_number_integer()) o.openclDevice = std::to_string(getInt(v, "opencl_device", 0, kMaxDevice));
        else o.openclDevice = getString(v, "opencl_device");
        if (o.openclDevice.empty() || o.openclDevice.find('\0') != std::string::npos)
            wrongValue("opencl_device", "a device index or a part of a device name", v);
    }
    if (has("tuning")) {
        // Kernel parameters (ReconOptions::tuning); the strategy checks them when the plan is made.
        o.tuning = getString(j["tuning"], "tuning");
        if (o.tuning.find('\0') != std::string::npos) wrongValue("tuning", "text such as \"shape=3\"", j["tuning"]);
    }
    if (has("threads")) o.threads = getInt(j["threads"], "threads", 0, kMaxThreads);
    IterativeOptions& it = o.iterative;
    if (has("method")) it.method = parseNamed(j["method"], "method", parseMethod);
    if (has("iterations")) it.iterations = getInt(j["iterations"], "iterations", 1, kMaxIterations);
    if (has("tv_weight")) {
        const json& v = j["tv_weight"];
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0.0)
            wrongValue("tv_weight", "a number > 0 (lambda of the TV term)", v);
        it.tvWeight = v.get<double>();
    }
    if (has("bounds")) {
        // [lower, upper]: numbers, or null for no bound on that side.
        const json& v = j["bounds"];
        const std::string expected = "[lower, upper]: finite numbers or null (no bound), lower <= upper";
        if (!v.is_array() || v.size() != 2) wrongValue("bounds", expected, v);
        for (std::size_t side = 0; side < 2; ++side) {
            if (v[side].is_null()) continue;
            if (!v[side].is_number() || !std::isfinite(v[side].get<double>())) wrongValue("bounds", expected, v);
            (side == 0 ? it.bounds.lower : it.bounds.upper) = v[side].get<double>();
        }
    }
    if (has("init")) it.init = parseNamed(j["init"], "init", parseInitialImage);
    if (has("tolerance")) {
        const json& v = j["tolerance"];
        if (!v.is_number() || !(v.get<double>() >= 0.0 && v.get<double>() < 1.0))
            wrongValue("tolerance", "a relative residual change in [0, 1) (0 = run all the iterations)", v);
        it.tolerance = v.get<double>();
    }
    if (has("projector")) it.projector = parseNamed(j["projector"], "projector", parseProjectorKind);
    try {
        it.validate();
    } catch (const InvalidArgument& e) {
        throw FormatError(std::string("run config: ") + shortText(e.what(), 200));
    }
    if (has("corrections")) c.corrections = correctionsFromJson(j["corrections"]);
    return c;
}

void saveRunConfig(const std::filesystem::path& path, const RunConfig& config) {
    const std::string text = toJson(config);
    // Temporary next to the target, so the rename stays on one file system.
    std::filesystem::path tmp = path;
    tmp += ".tmp-" + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            throw IoError("cannot write run config '" + path.string() + "': cannot create '" + tmp.string() + "'");
        out << text;
        out.close();
        if (!out) {
            std::error_code ec;
            std::filesystem::remove(tmp, ec);
            throw IoError("cannot write run config '" + path.string() + "' (disk full?)");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        throw IoError("cannot write run config '" + path.string() + "': rename failed: " + ec.message());
    }
}

RunConfig loadRunConfig(const std::filesystem::path& path) {
    const std::string text = detail::readSmallFile(path, "a run-config JSON file", kMaxFileBytes);
    try {
        return runConfigFromJson(text);
    } catch (const FormatError& e) {
        // "run config: ..." -> "run config 'FILE': ..."
        std::string msg = e.what();
        const std::string prefix = "run config:";
        if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
        throw FormatError("run config '" + path.string() + "':" + msg);
    }
}

} // namespace tomo
