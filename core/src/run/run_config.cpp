#include "tomo/run_config.h"

#include "tomo/error.h"

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

constexpr std::array kKeys = {"input",     "angles_file",    "angles_lines",      "angle_range", "raw_shape",
                              "raw_type",  "raw_header",     "raw_big_endian",    "axis",        "axis_offsets_file",
                              "rows",      "region",         "strategy",          "interpolation", "precision",
                              "slices_per_pass", "filter",   "padding",           "device",      "threads"};

std::string knownKeys() {
    std::string out;
    for (const char* k : kKeys) out += (out.empty() ? "" : ", ") + std::string(k);
    return out;
}

[[noreturn]] void wrongValue(const std::string& key, const std::string& expected, const json& got) {
    throw FormatError("run config: key '" + key + "' must be " + expected + ", got " + got.dump());
}

std::string getString(const json& j, const std::string& key) {
    if (!j.is_string()) wrongValue(key, "a string", j);
    return j.get<std::string>();
}

int getInt(const json& j, const std::string& key, int min) {
    if (!j.is_number_integer() || j.get<long long>() < min || j.get<long long>() > INT32_MAX)
        wrongValue(key, "an integer >= " + std::to_string(min), j);
    return j.get<int>();
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
        throw FormatError("run config: key '" + key + "': " + e.what());
    }
}

} // namespace

std::string toJson(const RunConfig& config) {
    json j = json::object();
    j["input"] = config.input.string();
    const OpenOptions& open = config.open;
    j["angles_file"] = open.anglesFile ? open.anglesFile->string() : std::string();
    if (open.anglesLines) j["angles_lines"] = {open.anglesLines->first, open.anglesLines->count};
    j["angle_range"] = open.angleRangeDegrees;
    if (open.raw) {
        j["raw_shape"] = {open.raw->projections, open.raw->rows, open.raw->columns};
        j["raw_type"] = sampleTypeName(open.raw->type);
        j["raw_header"] = open.raw->headerBytes;
        j["raw_big_endian"] = open.raw->bigEndian;
    }
    if (config.axis) j["axis"] = *config.axis;
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
    j["threads"] = o.threads;
    return j.dump(2) + "\n";
}

RunConfig runConfigFromJson(const std::string& text) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        throw FormatError(std::string("run config: not valid JSON: ") + e.what());
    }
    if (!j.is_object())
        throw FormatError("run config: expected a JSON object at the top level, got " + std::string(j.type_name()));

    for (const auto& [key, value] : j.items()) {
        if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
            throw FormatError("run config: unknown key '" + key + "' (known keys: " + knownKeys() + ")");
    }

    RunConfig c;
    auto has = [&](const char* key) { return j.contains(key) && !j[key].is_null(); };
    if (has("input")) c.input = getString(j["input"], "input");
    OpenOptions& open = c.open;
    if (has("angles_file")) {
        const std::string file = getString(j["angles_file"], "angles_file");
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
    if (has("axis")) {
        if (!j["axis"].is_number() || !std::isfinite(j["axis"].get<double>()))
            wrongValue("axis", "a finite number (detector column)", j["axis"]);
        c.axis = j["axis"].get<double>();
    }
    if (has("axis_offsets_file")) c.axisOffsetsFile = getString(j["axis_offsets_file"], "axis_offsets_file");
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
        o.strategy = getString(j["strategy"], "strategy");
        if (o.strategy.empty()) wrongValue("strategy", "a strategy name or \"auto\"", j["strategy"]);
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
    if (has("device")) o.device = getInt(j["device"], "device", 0);
    if (has("threads")) o.threads = getInt(j["threads"], "threads", 0);
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
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError("cannot read run config '" + path.string() + "': " + std::generic_category().message(errno));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw IoError("cannot read run config '" + path.string() + "'");
    try {
        return runConfigFromJson(text.str());
    } catch (const FormatError& e) {
        // "run config: ..." -> "run config 'FILE': ..."
        std::string msg = e.what();
        const std::string prefix = "run config:";
        if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
        throw FormatError("run config '" + path.string() + "':" + msg);
    }
}

} // namespace tomo
