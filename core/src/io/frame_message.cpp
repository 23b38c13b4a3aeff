// The stream's message (tomo/live.h): a JSON header and the raw frame. The
// header carries RECASTX's fields beside this program's own, so a RECASTX
// receiver reads what tomo-stream sends and this receiver reads RECASTX's
// senders (uint16, angles from the projection count).
#include "tomo/error.h"
#include "tomo/live.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace tomo {

namespace {

using Json = nlohmann::json;

/// RECASTX's image_attributes.scan_index.
int recastxScanIndex(FrameKind kind) {
    switch (kind) {
    case FrameKind::Dark: return 0;
    case FrameKind::Flat: return 1;
    case FrameKind::Projection: return 2;
    }
    return 2;
}

[[noreturn]] void refuse(const std::string& what) { throw DataError("stream message refused: " + what); }

const Json& field(const Json& header, const char* name) {
    const auto it = header.find(name);
    if (it == header.end()) refuse(std::string("no \"") + name + "\" in the header");
    return *it;
}

long long integer(const Json& value, const char* name, long long low, long long high) {
    if (!value.is_number_integer()) refuse(std::string("\"") + name + "\" is not an integer");
    const long long v = value.get<long long>();
    if (v < low || v > high)
        refuse(std::string("\"") + name + "\" is " + std::to_string(v) + "; expected " + std::to_string(low) +
               " to " + std::to_string(high));
    return v;
}

} // namespace

FramePixels::FramePixels(std::vector<std::byte> bytes) {
    auto held = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
    m_bytes = std::span(*held);
    m_owner = std::move(held);
}

FramePixels FramePixels::copyOf(std::span<const std::byte> bytes) {
    return FramePixels(std::vector<std::byte>(bytes.begin(), bytes.end()));
}

bool operator==(const FramePixels& a, const FramePixels& b) { return std::ranges::equal(a, b); }

const char* frameKindName(FrameKind kind) {
    switch (kind) {
    case FrameKind::Projection: return "projection";
    case FrameKind::Flat: return "flat";
    case FrameKind::Dark: return "dark";
    }
    return "unknown";
}

std::string frameHeader(const Frame& frame, bool end) {
    Json h;
    h["kind"] = end ? "end" : frameKindName(frame.kind);
    h["scan_id"] = frame.scanId;
    if (end) return h.dump();
    h["index"] = frame.index;
    if (frame.kind == FrameKind::Projection) h["angle"] = frame.angleDegrees;
    h["shape"] = {frame.rows, frame.columns};
    h["dtype"] = sampleTypeName(frame.type);
    h["frame"] = frame.index;
    h["image_attributes"] = {{"scan_index", recastxScanIndex(frame.kind)}};
    return h.dump();
}

bool parseFrameMessage(std::span<const std::byte> header, FramePixels payload, const FrameLimits& limits,
                       const StreamDefaults& defaults, Frame& out) {
    if (header.size() > limits.maxHeaderBytes)
        refuse("header of " + std::to_string(header.size()) + " bytes; at most " +
               std::to_string(limits.maxHeaderBytes) + " expected");
    const auto* text = reinterpret_cast<const char*>(header.data());
    const Json h = Json::parse(text, text + header.size(), nullptr, /*allow_exceptions=*/false);
    if (h.is_discarded()) refuse("the header is not JSON");
    if (!h.is_object()) refuse("the header is not a JSON object");

    Frame f;
    if (const auto id = h.find("scan_id"); id != h.end()) {
        if (!id->is_string()) refuse("\"scan_id\" is not a string");
        f.scanId = id->get<std::string>().substr(0, 256);
    }
    const bool recastx = !h.contains("kind");
    if (!recastx) {
        const Json& kind = field(h, "kind");
        const std::string k = kind.is_string() ? kind.get<std::string>() : std::string();
        if (k == "end") {
            out = std::move(f);
            return false;
        }
        if (k == "projection") f.kind = FrameKind::Projection;
        else if (k == "flat") f.kind = FrameKind::Flat;
        else if (k == "dark") f.kind = FrameKind::Dark;
        else refuse("\"kind\" is " + kind.dump().substr(0, 40) + "; expected projection, flat, dark or end");
        f.index = integer(field(h, "index"), "index", 0, (1LL << 40));
    } else {
        const Json& attributes = field(h, "image_attributes");
        if (!attributes.is_object()) refuse("\"image_attributes\" is not an object");
        const long long scanIndex = integer(field(attributes, "scan_index"), "scan_index", 0, 2);
        f.kind = scanIndex == 0 ? FrameKind::Dark : scanIndex == 1 ? FrameKind::Flat : FrameKind::Projection;
        f.index = integer(field(h, "frame"), "frame", 0, (1LL << 40));
    }

    const Json& shape = field(h, "shape");
    if (!shape.is_array() || shape.size() != 2) refuse("\"shape\" is not [rows, columns]");
    f.rows = static_cast<int>(integer(shape[0], "shape[0]", 1, limits.maxRows));
    f.columns = static_cast<int>(integer(shape[1], "shape[1]", 1, limits.maxColumns));
    f.type = SampleType::UInt16;
    if (const auto dtype = h.find("dtype"); dtype != h.end()) {
        const std::string name = dtype->is_string() ? dtype->get<std::string>() : dtype->dump();
        bool known = false;
        for (SampleType t : {SampleType::UInt8, SampleType::UInt16, SampleType::Float32, SampleType::Float64})
            if (name == sampleTypeName(t)) {
                f.type = t;
                known = true;
            }
        if (!known) refuse("\"dtype\" is '" + name.substr(0, 40) + "'; expected uint8, uint16, float32 or float64");
    }

    const int perScan = defaults.projectionsPerScan;
    if (f.kind == FrameKind::Projection) {
        if (const auto angle = h.find("angle"); angle != h.end()) {
            if (!angle->is_number() || !std::isfinite(angle->get<double>()) || std::abs(angle->get<double>()) > 1e6)
                refuse("\"angle\" is not a finite number of degrees");
            f.angleDegrees = angle->get<double>();
        } else if (perScan > 0) {
            f.angleDegrees = static_cast<double>(f.index % perScan) * defaults.angleRangeDegrees / perScan;
        } else {
            refuse("projection " + std::to_string(f.index) +
                   " has no \"angle\" and the number of projections per scan is not set");
        }
    }
    // RECASTX numbers frames on across scans.
    if (recastx && perScan > 0) {
        if (f.scanId.empty()) f.scanId = "scan " + std::to_string(f.index / perScan);
        f.index %= perScan;
    }

    const std::size_t expected =
        static_cast<std::size_t>(f.rows) * static_cast<std::size_t>(f.columns) * sampleBytes(f.type);
    if (payload.size() != expected)
        refuse(std::string(frameKindName(f.kind)) + " " + std::to_string(f.index) + ": " +
               std::to_string(payload.size()) + " bytes of data; " + std::to_string(f.rows) + " x " +
               std::to_string(f.columns) + " " + sampleTypeName(f.type) + " is " + std::to_string(expected));
    f.values = std::move(payload);
    out = std::move(f);
    return true;
}

} // namespace tomo
