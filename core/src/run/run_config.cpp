#include "tomo/run_config.h"

#include "io/file_checks.h"
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

constexpr std::array kKeys = {"input",         "axis",      "axis_offsets_file", "rows",   "region",  "strategy",
                              "interpolation", "precision", "slices_per_pass",   "filter", "padding", "device",
                              "threads"};

std::string knownKeys() {
    std::string out;
    for (const char* k : kKeys) out += (out.empty() ? "" : ", ") + std::string(k);
    return out;
}

/// Deepest nesting parsed: a run config is flat, and a value nested
/// 100000 deep would overflow the stack of any recursive code that meets it.
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

} // namespace

std::string toJson(const RunConfig& config) {
    json j = json::object();
    j["input"] = config.input.string();
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

    for (const auto& [key, value] : j.items()) {
        if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
            throw FormatError("run config: unknown key '" + shortText(key) + "' (known keys: " + knownKeys() + ")");
    }

    RunConfig c;
    auto has = [&](const char* key) { return j.contains(key) && !j[key].is_null(); };
    if (has("input")) c.input = getPath(j["input"], "input");
    if (has("axis")) {
        if (!j["axis"].is_number() || !std::isfinite(j["axis"].get<double>()) || std::abs(j["axis"].get<double>()) > 1e9)
            wrongValue("axis", "a finite number (detector column)", j["axis"]);
        c.axis = j["axis"].get<double>();
    }
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
    if (has("device")) o.device = getInt(j["device"], "device", 0, kMaxDevice);
    if (has("threads")) o.threads = getInt(j["threads"], "threads", 0, kMaxThreads);
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
