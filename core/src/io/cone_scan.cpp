// Fan/cone-beam scans from files (cone_scan.h): the geometry file, the
// geometry a dataset declares, the projections in view order.
#include "tomo/cone_scan.h"

#include "tomo/error.h"
#include "tomo/preprocess.h"

#include "io/file_checks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

namespace tomo {

namespace {

using nlohmann::json;

constexpr std::uintmax_t kMaxGeometryFileBytes = std::uintmax_t{1} << 20;

std::string text(double v) {
    std::ostringstream s;
    s.precision(10);
    s << v;
    return s.str();
}

double numberAt(const json& doc, const char* key, const std::filesystem::path& path) {
    const json& v = doc.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()))
        throw FormatError(path.string() + ": \"" + key + "\" must be a finite number");
    return v.get<double>();
}

/// "0.2" or "0.2,0.4" (width, height).
std::string pixelText(const CircularConeGeometry& c, const char* separator) {
    std::ostringstream s;
    s.precision(10);
    s << c.pixelWidth;
    if (c.pixelHeight > 0.0) s << separator << c.pixelHeight;
    return s.str();
}

const char* detectorName(DetectorShape shape) { return shape == DetectorShape::Curved ? "curved" : "flat"; }

/// "detector": "flat" (the default) or "curved".
DetectorShape detectorAt(const json& doc, const std::filesystem::path& path) {
    if (!doc.contains("detector")) return DetectorShape::Flat;
    const json& v = doc["detector"];
    if (v == "flat") return DetectorShape::Flat;
    if (v == "curved") return DetectorShape::Curved;
    throw FormatError(path.string() + ": \"detector\" is " + v.dump().substr(0, 40) +
                      " (expected \"flat\" or \"curved\": cylindrical)");
}

/// The default grid of a geometry: columns^2 x rows voxels of `voxel`.
VolumeGrid defaultGrid(const ConeGeometry& g, double voxel) {
    return VolumeGrid{g.columns, g.columns, g.rows, voxel, {}};
}

ConeSetup circularSetup(const DatasetInfo& info, CircularConeGeometry c, const std::string& source,
                        const std::string& unit) {
    c.angles = info.angles;
    c.columns = info.columns;
    c.rows = info.rows;
    c.validate();
    ConeSetup s;
    s.geometry = ConeGeometry::circular(c);
    s.circular = c;
    s.grid = defaultGrid(s.geometry, c.axisPixelSize());
    s.checkGrid(s.grid);
    const std::string u = unit.empty() ? "" : " " + unit;
    s.description = std::string(c.rows == 1 ? "fan" : "cone") + " beam (" + source + "): source-axis " +
                    text(c.sourceAxis) + u + ", source-detector " + text(c.sourceDetector) + u + ", pixel " +
                    pixelText(c, "x") + u + ", " + detectorName(c.detector) + " detector";
    if (c.detector == DetectorShape::Curved)
        s.description += " (resampled onto a flat one of pixel " + pixelText(virtualFlatDetector(c), "x") + u + ")";
    s.attributes = {{"beam", c.rows == 1 ? "fan" : "cone"},
                    {"detector", detectorName(c.detector)},
                    {"cone_geometry_source", source},
                    {"source_axis_distance", text(c.sourceAxis)},
                    {"source_detector_distance", text(c.sourceDetector)},
                    {"detector_pixel_size", pixelText(c, ",")},
                    {"detector_offset", text(c.offsetU) + "," + text(c.offsetV)},
                    {"length_unit", unit}};
    return s;
}

ConeSetup fromGeometryFile(const DatasetInfo& info, const std::filesystem::path& path) {
    const std::string content = detail::readSmallFile(path, "cone-beam geometry file (JSON)", kMaxGeometryFileBytes);
    json doc;
    try {
        doc = json::parse(content);
    } catch (const json::parse_error& e) {
        throw FormatError(path.string() + ": not valid JSON (" + std::string(e.what()).substr(0, 120) + ")");
    }
    if (!doc.is_object()) throw FormatError(path.string() + ": expected a JSON object of geometry keys");
    static const char* const kKeys[] = {"source_axis", "source_detector", "pixel_size",   "offset_u", "offset_v",
                                        "detector",    "matrices",        "matrix_order", "unit"};
    for (const auto& item : doc.items()) {
        const std::string& key = item.key(); // not a structured binding: Clang 14 cannot capture those
        if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; }) == std::end(kKeys))
            throw FormatError(path.string() + ": unknown key \"" + key.substr(0, 40) +
                              "\" (expected source_axis, source_detector, pixel_size, offset_u, offset_v, detector, "
                              "unit, or matrices and matrix_order)");
    }
    const std::string unit = doc.contains("unit") && doc["unit"].is_string() ? doc["unit"].get<std::string>() : "";
    const DetectorShape detector = detectorAt(doc, path);
    if (doc.contains("matrices")) {
        if (detector == DetectorShape::Curved)
            throw FormatError(path.string() + ": \"detector\": \"curved\" cannot go with \"matrices\" (a "
                              "projection matrix describes a flat detector; give source_axis, source_detector and "
                              "pixel_size instead)");
        if (!doc["matrices"].is_string()) throw FormatError(path.string() + ": \"matrices\" must be a file name");
        MatrixOrder order = MatrixOrder::RowMajor;
        if (doc.contains("matrix_order")) {
            const json& o = doc["matrix_order"];
            if (o == "rabbitct") order = MatrixOrder::RabbitCT;
            else if (o != "row-major")
                throw FormatError(path.string() + ": \"matrix_order\" must be \"row-major\" or \"rabbitct\"");
        }
        const std::filesystem::path matrices = path.parent_path() / doc["matrices"].get<std::string>();
        ConeSetup s;
        s.geometry.columns = info.columns;
        s.geometry.rows = info.rows;
        s.geometry.views = readProjectionMatrices(matrices, order);
        if (s.geometry.viewCount() != info.projections)
            throw FormatError(matrices.string() + " holds " + std::to_string(s.geometry.viewCount()) +
                              " projection matrices but " + info.path.string() + " has " +
                              std::to_string(info.projections) + " projections (expected one matrix per projection)");
        s.geometry.validate();
        const ViewFrame f = describeView(s.geometry.views[0], "view 0 of " + matrices.string());
        s.grid = defaultGrid(s.geometry, f.originDepth / f.focalU);
        try {
            s.checkGrid(s.grid);
        } catch (const InvalidArgument& e) {
            throw FormatError(path.string() + ": " + e.what());
        }
        s.description = std::string(info.rows == 1 ? "fan" : "cone") + " beam: " +
                        std::to_string(s.geometry.viewCount()) + " projection matrices from " + matrices.string() +
                        ", flat detector";
        s.attributes = {{"beam", info.rows == 1 ? "fan" : "cone"},
                        {"cone_geometry_source", path.string()},
                        {"detector", detectorName(DetectorShape::Flat)},
                        {"projection_matrices", matrices.string()},
                        {"matrix_order", order == MatrixOrder::RabbitCT ? "rabbitct" : "row-major"},
                        {"length_unit", unit}};
        return s;
    }
    for (const char* key : {"source_axis", "source_detector", "pixel_size"})
        if (!doc.contains(key))
            throw FormatError(path.string() + ": no \"" + key +
                              "\" (a circular scan needs source_axis, source_detector and pixel_size; or give "
                              "\"matrices\")");
    CircularConeGeometry c;
    c.sourceAxis = numberAt(doc, "source_axis", path);
    c.sourceDetector = numberAt(doc, "source_detector", path);
    const json& pixel = doc["pixel_size"];
    if (pixel.is_array() && pixel.size() == 2 && pixel[0].is_number() && pixel[1].is_number()) {
        c.pixelWidth = pixel[0].get<double>();
        c.pixelHeight = pixel[1].get<double>();
    } else if (pixel.is_number()) {
        c.pixelWidth = pixel.get<double>();
    } else {
        throw FormatError(path.string() + ": \"pixel_size\" must be a number or [width, height]");
    }
    if (doc.contains("offset_u")) c.offsetU = numberAt(doc, "offset_u", path);
    if (doc.contains("offset_v")) c.offsetV = numberAt(doc, "offset_v", path);
    c.detector = detector;
    try {
        return circularSetup(info, c, path.string(), unit);
    } catch (const InvalidArgument& e) {
        throw FormatError(path.string() + ": " + e.what());
    }
}

} // namespace

ConeSetup coneSetup(const DatasetInfo& info, const std::filesystem::path& geometryFile) {
    if (!geometryFile.empty()) return fromGeometryFile(info, geometryFile);
    if (!info.divergentBeam)
        throw InvalidArgument(info.path.string() +
                              " declares no fan or cone beam: give its geometry in a geometry file (source and "
                              "detector distances and pixel size, or projection matrices)");
    const DivergentBeam& b = *info.divergentBeam;
    std::string missing;
    if (!(b.sourceAxis > 0.0)) missing += " distanceSourceOrigin";
    if (!(b.sourceDetector > 0.0)) missing += " distanceSourceDetector";
    if (!(b.pixelSize > 0.0)) missing += " pixelSize";
    if (!missing.empty())
        throw InvalidArgument(info.path.string() + " declares " + b.declared + " but not its" + missing +
                              ": give the geometry in a geometry file");
    CircularConeGeometry c;
    c.sourceAxis = b.sourceAxis;
    c.sourceDetector = b.sourceDetector;
    c.pixelWidth = b.pixelSize;
    try {
        return circularSetup(info, c, "attributes of " + info.path.filename().string(), b.unit);
    } catch (const InvalidArgument& e) {
        throw FormatError(info.path.string() + ": the declared " + e.what());
    }
}

void ConeSetup::checkGrid(const VolumeGrid& grid) const {
    grid.validate();
    if (circular) circular->checkVolume(grid);
    requireVolumeBeforeSources(geometry.views, grid);
}

std::vector<float> readConeProjections(DatasetReader& reader, const ConeSetup& setup) {
    const ImageStack sinograms = loadSinograms(reader, 0, reader.info().rows); // [row][view][column]
    return onGeometryDetector(setup, sinograms.swapDepthAndHeight().data);
}

std::vector<float> onGeometryDetector(const ConeSetup& setup, std::vector<float> projections) {
    const ConeGeometry& g = setup.geometry;
    const std::size_t expected = static_cast<std::size_t>(g.viewCount()) * g.rows * g.columns;
    if (projections.size() != expected)
        throw InvalidArgument("cone-beam projections: " + std::to_string(projections.size()) +
                              " values (expected views x rows x columns = " + std::to_string(g.viewCount()) + " x " +
                              std::to_string(g.rows) + " x " + std::to_string(g.columns) + ")");
    if (setup.detector() == DetectorShape::Flat) return projections;
    return resampleToFlatDetector(*setup.circular, projections);
}

} // namespace tomo
