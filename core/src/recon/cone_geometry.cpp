// Cone/fan-beam geometry: circular scans as projection matrices, matrices
// taken apart into source, detector axes and focal lengths, matrix files.
#include "tomo/cone_geometry.h"

#include "tomo/error.h"

#include "io/file_checks.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>
#include <sstream>

namespace tomo {

namespace {

using Vec3 = std::array<double, 3>;

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }
Vec3 rowOf(const ProjectionMatrix& p, int r) { return {p.m[4 * r], p.m[4 * r + 1], p.m[4 * r + 2]}; }

bool finitePositive(double v) { return std::isfinite(v) && v > 0.0; }

std::string number(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

constexpr std::uintmax_t kMaxMatrixFileBytes = std::uintmax_t{64} << 20;

} // namespace

void CircularConeGeometry::validate() const {
    if (angles.empty()) throw InvalidArgument("cone geometry: angles is empty (expected one angle per view)");
    for (std::size_t i = 0; i < angles.size(); ++i)
        if (!std::isfinite(angles[i]))
            throw InvalidArgument("cone geometry: angles[" + std::to_string(i) + "] is not finite");
    if (!finitePositive(sourceAxis))
        throw InvalidArgument("cone geometry: sourceAxis is " + number(sourceAxis) + " (expected a distance > 0)");
    if (!std::isfinite(sourceDetector) || !(sourceDetector > sourceAxis))
        throw InvalidArgument("cone geometry: sourceDetector is " + number(sourceDetector) +
                              " (expected a distance > sourceAxis = " + number(sourceAxis) + ")");
    if (columns < 1 || rows < 1)
        throw InvalidArgument("cone geometry: detector is " + std::to_string(columns) + "x" + std::to_string(rows) +
                              " pixels (expected columns and rows >= 1)");
    if (!finitePositive(pixelWidth))
        throw InvalidArgument("cone geometry: pixelWidth is " + number(pixelWidth) + " (expected a size > 0)");
    if (pixelHeight != 0.0 && !finitePositive(pixelHeight))
        throw InvalidArgument("cone geometry: pixelHeight is " + number(pixelHeight) +
                              " (expected a size > 0, or 0 for square pixels)");
    if (!std::isfinite(offsetU) || !std::isfinite(offsetV))
        throw InvalidArgument("cone geometry: detector offsets must be finite");
    if (detector == DetectorShape::Curved) {
        const double first = columnAngle(-0.5), last = columnAngle(columns - 0.5);
        if (std::max(-first, last) >= std::numbers::pi / 2)
            throw InvalidArgument("cone geometry: the curved detector's columns span ray angles from " +
                                  number(first * 180 / std::numbers::pi) + " to " +
                                  number(last * 180 / std::numbers::pi) +
                                  " degrees (expected within 90 of the central ray: pixelWidth or offsetU too large)");
    }
}

void CircularConeGeometry::checkVolume(const VolumeGrid& grid) const {
    // The orbit is centred on the axis (x = y = 0): the box's farthest
    // point from it is one of its four corners in x, y.
    double reach = 0.0;
    for (const double x : {grid.x(0) - 0.5 * grid.voxelSize, grid.x(grid.nx - 1) + 0.5 * grid.voxelSize})
        for (const double y : {grid.y(0) - 0.5 * grid.voxelSize, grid.y(grid.ny - 1) + 0.5 * grid.voxelSize})
            reach = std::max(reach, std::hypot(x, y));
    const std::string volume = "cone geometry: the volume (" + std::to_string(grid.nx) + "x" + std::to_string(grid.ny) +
                               " voxels of " + number(grid.voxelSize) + ") reaches " + number(reach) +
                               " from the rotation axis, ";
    const std::string expected = "; expected a volume inside both (fewer voxels or a smaller voxel size)";
    if (reach >= sourceAxis)
        throw InvalidArgument(volume + "as far as the source (source_axis " + number(sourceAxis) +
                              "): the source would pass through it" + expected);
    if (reach >= sourceDetector - sourceAxis)
        throw InvalidArgument(volume + "as far as the detector (source_detector - source_axis = " +
                              number(sourceDetector - sourceAxis) + ")" + expected);
}

ConeGeometry ConeGeometry::circular(const CircularConeGeometry& curvedOrFlat) {
    const CircularConeGeometry g = virtualFlatDetector(curvedOrFlat);
    const double D = g.sourceAxis;
    const double fu = g.sourceDetector / g.pixelWidth;
    const double fv = g.sourceDetector / g.rowPitch();
    const double cu = (g.columns - 1) / 2.0 + g.offsetU;
    const double cv = (g.rows - 1) / 2.0 + g.offsetV;
    ConeGeometry out;
    out.columns = g.columns;
    out.rows = g.rows;
    for (double b : g.angles) {
        const double s = std::sin(b), c = std::cos(b);
        // w = depth / D; u w = fu / D (X . e_u) + cu w; v w = fv / D z + cv w.
        const double w[4] = {-s / D, -c / D, 0.0, 1.0};
        ProjectionMatrix p;
        const double eu[4] = {c * fu / D, -s * fu / D, 0.0, 0.0};
        const double ev[4] = {0.0, 0.0, fv / D, 0.0};
        for (int i = 0; i < 4; ++i) {
            p.m[i] = eu[i] + cu * w[i];
            p.m[4 + i] = ev[i] + cv * w[i];
            p.m[8 + i] = w[i];
        }
        out.views.push_back(p);
    }
    return out;
}

void ConeGeometry::validate() const {
    if (columns < 1 || rows < 1)
        throw InvalidArgument("cone geometry: detector is " + std::to_string(columns) + "x" + std::to_string(rows) +
                              " pixels (expected columns and rows >= 1)");
    if (views.empty()) throw InvalidArgument("cone geometry: no views (expected one projection matrix per view)");
    for (std::size_t i = 0; i < views.size(); ++i) describeView(views[i], "view " + std::to_string(i));
}

ViewFrame describeView(const ProjectionMatrix& p, const std::string& what) {
    for (double v : p.m)
        if (!std::isfinite(v)) throw InvalidArgument("projection matrix of " + what + " has a value that is not finite");
    const Vec3 r3 = rowOf(p, 2);
    const double n = norm(r3);
    if (n == 0.0 || p.m[11] == 0.0)
        throw InvalidArgument("projection matrix of " + what +
                              (n == 0.0 ? " has a zero third row (expected a perspective projection)"
                                        : " puts the world origin (the isocentre) in the source plane"));
    // P and -P are the same projection; pick the sign that puts the origin
    // in front of the source, and scale the third row to a unit vector.
    const double scale = (p.m[11] > 0.0 ? 1.0 : -1.0) / n;
    ProjectionMatrix h;
    for (int i = 0; i < 12; ++i) h.m[i] = p.m[i] * scale;
    const Vec3 m1 = rowOf(h, 0), m2 = rowOf(h, 1), m3 = rowOf(h, 2);

    ViewFrame f;
    f.normal = m3;
    f.centreU = dot(m1, m3);
    f.centreV = dot(m2, m3);
    Vec3 au{}, av{};
    for (int i = 0; i < 3; ++i) {
        au[i] = m1[i] - f.centreU * m3[i];
        av[i] = m2[i] - f.centreV * m3[i];
    }
    f.focalU = norm(au);
    f.focalV = norm(av);
    if (!(f.focalU > 0.0) || !(f.focalV > 0.0))
        throw InvalidArgument("projection matrix of " + what + " is singular (its rows are not independent)");
    for (int i = 0; i < 3; ++i) {
        f.axisU[i] = au[i] / f.focalU;
        f.axisV[i] = av[i] / f.focalV;
    }
    // Source: the point P maps to (0, 0, 0), solved by Cramer's rule.
    const double det = m1[0] * (m2[1] * m3[2] - m2[2] * m3[1]) - m1[1] * (m2[0] * m3[2] - m2[2] * m3[0]) +
                       m1[2] * (m2[0] * m3[1] - m2[1] * m3[0]);
    if (std::abs(det) < 1e-12 * f.focalU * f.focalV)
        throw InvalidArgument("projection matrix of " + what + " is singular (its left 3x3 part has no inverse)");
    const Vec3 b{-h.m[3], -h.m[7], -h.m[11]};
    auto replaced = [&](int col) {
        Vec3 a1 = m1, a2 = m2, a3 = m3;
        a1[col] = b[0];
        a2[col] = b[1];
        a3[col] = b[2];
        return a1[0] * (a2[1] * a3[2] - a2[2] * a3[1]) - a1[1] * (a2[0] * a3[2] - a2[2] * a3[0]) +
               a1[2] * (a2[0] * a3[1] - a2[1] * a3[0]);
    };
    for (int i = 0; i < 3; ++i) f.source[i] = replaced(i) / det;
    f.originDepth = h.m[11];
    for (int i = 0; i < 12; ++i) f.normalised.m[i] = h.m[i] / f.originDepth;
    return f;
}

std::vector<ProjectionMatrix> readProjectionMatrices(const std::filesystem::path& path, MatrixOrder order) {
    const std::string text = detail::readSmallFile(path, "projection matrix file", kMaxMatrixFileBytes);
    std::vector<double> values;
    std::istringstream in(text);
    std::string line;
    for (int lineNo = 1; std::getline(in, line); ++lineNo) {
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        for (char& c : line)
            if (c == ',' || c == '\t' || c == '\r') c = ' ';
        std::istringstream words(line);
        std::string word;
        while (words >> word) {
            const char* first = word.data() + (word[0] == '+' ? 1 : 0);
            double v = 0.0;
            const auto [ptr, err] = std::from_chars(first, word.data() + word.size(), v);
            if (err != std::errc() || ptr != word.data() + word.size() || !std::isfinite(v)) {
                std::string shown = word.substr(0, 40);
                for (char& c : shown)
                    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) c = '?';
                throw FormatError(path.string() + ":" + std::to_string(lineNo) + ": '" + shown +
                                  "' is not a finite number (expected 12 numbers per projection matrix)");
            }
            values.push_back(v);
        }
    }
    if (values.empty() || values.size() % 12 != 0)
        throw FormatError(path.string() + ": holds " + std::to_string(values.size()) +
                          " numbers (expected 12 per projection matrix, one matrix per view)");
    std::vector<ProjectionMatrix> views(values.size() / 12);
    for (std::size_t v = 0; v < views.size(); ++v)
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 4; ++c)
                views[v].m[4 * r + c] = values[12 * v + (order == MatrixOrder::RowMajor ? 4 * r + c : 3 * c + r)];
    return views;
}

double VolumeGrid::halfDiagonal() const {
    return 0.5 * voxelSize * std::sqrt(double(nx) * nx + double(ny) * ny + double(nz) * nz);
}

void requireVolumeBeforeSources(std::span<const ProjectionMatrix> views, const VolumeGrid& grid) {
    const double h = 0.5 * grid.voxelSize;
    for (std::size_t v = 0; v < views.size(); ++v) {
        const ViewFrame f = describeView(views[v], "view " + std::to_string(v));
        for (const double x : {grid.x(0) - h, grid.x(grid.nx - 1) + h})
            for (const double y : {grid.y(0) - h, grid.y(grid.ny - 1) + h})
                for (const double z : {grid.z(0) - h, grid.z(grid.nz - 1) + h}) {
                    const Vec3 corner{x - f.source[0], y - f.source[1], z - f.source[2]};
                    if (dot(corner, f.normal) > 0.0) continue;
                    const auto middle = grid.middle();
                    const Vec3 fromCentre{f.source[0] - middle[0], f.source[1] - middle[1], f.source[2] - middle[2]};
                    throw InvalidArgument(
                        "cone geometry: the source of view " + std::to_string(v) + " is " + number(norm(fromCentre)) +
                        " from the volume's centre, inside the volume (" + std::to_string(grid.nx) + "x" +
                        std::to_string(grid.ny) + "x" + std::to_string(grid.nz) + " voxels of " +
                        number(grid.voxelSize) + ", reaching " + number(grid.halfDiagonal()) +
                        " from its centre) or beside it; expected every voxel in front of every source (fewer voxels "
                        "or a smaller voxel size)");
                }
    }
}

void VolumeGrid::validate() const {
    if (nx < 1 || ny < 1 || nz < 1)
        throw InvalidArgument("volume grid is " + std::to_string(nx) + "x" + std::to_string(ny) + "x" +
                              std::to_string(nz) + " (expected at least 1 voxel along each axis)");
    if (!finitePositive(voxelSize))
        throw InvalidArgument("volume grid: voxelSize is " + number(voxelSize) + " (expected a size > 0)");
    for (double c : centre)
        if (!std::isfinite(c)) throw InvalidArgument("volume grid: centre is not finite");
    if (voxels() > (std::size_t{1} << 36))
        throw InvalidArgument("volume grid of " + std::to_string(voxels()) + " voxels is too large");
}

} // namespace tomo
