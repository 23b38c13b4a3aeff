// Divergent-beam (cone and fan) geometry: one 3x4 projection matrix per view.
//
// Conventions (shared by the FDK filter, the back-projectors and the phantom):
//  * world coordinates (x, y, z) in one length unit (millimetres in the
//    files this program reads), the rotation axis along z through the
//    origin for circular scans;
//  * a view's matrix P maps a world point to the detector:
//        (u w, v w, w) = P (x, y, z, 1),   u = column, v = row,
//    pixel centres at whole numbers (column 0 .. columns - 1); w > 0 for
//    points in front of the source. Values outside the detector read as 0,
//    fading linearly over the half pixel beyond the outer pixel centres
//    (the parallel-beam rule of geometry.h);
//  * circular scans continue geometry.h's parallel beam: at angle b the
//    source sits at sourceAxis * (sin b, cos b, 0), the detector's column
//    axis points along (cos b, -sin b, 0) and its row axis along +z, so as
//    the source moves away the projection becomes s = x cos b - y sin b;
//  * the volume: voxel (i, j, k) has its centre at
//        x = (i - (nx - 1) / 2) * voxelSize + centre[0]   (likewise y, z)
//    and is stored at [k][j][i] (ImageStack: depth nz, height ny, width nx).
//    Fan beam is the case of one detector row and one slice (nz = 1, z = 0).
//
// A curved (cylindrical) detector is no pinhole camera, so no matrix: its
// projections are resampled onto a virtual flat detector
// (resampleToFlatDetector), whose matrices ConeGeometry::circular() gives;
// from there on FDK is the flat detector's.
#pragma once

#include <array>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace tomo {

/// Row-major 3x4 matrix: m[4 * r + c].
struct ProjectionMatrix {
    std::array<double, 12> m{};

    /// (u w, v w, w) of a world point.
    std::array<double, 3> apply(double x, double y, double z) const {
        return {m[0] * x + m[1] * y + m[2] * z + m[3], m[4] * x + m[5] * y + m[6] * z + m[7],
                m[8] * x + m[9] * y + m[10] * z + m[11]};
    }
};

enum class DetectorShape {
    Flat,
    /// A cylinder about the source with its axis along the rotation axis,
    /// radius sourceDetector: columns equi-angular (pixelWidth is the arc of
    /// one column), rows equally spaced along z.
    Curved,
};

struct VolumeGrid;

/// A circular scan with a flat or a curved detector.
struct CircularConeGeometry {
    std::vector<double> angles;  ///< source angles in radians, one per view
    double sourceAxis = 0.0;     ///< source to rotation axis
    double sourceDetector = 0.0; ///< source to detector (> sourceAxis)
    int columns = 0;             ///< detector columns
    int rows = 1;                ///< detector rows (1: fan beam)
    double pixelWidth = 0.0;     ///< detector pixel size along a row, at the detector
    double pixelHeight = 0.0;    ///< along a column; 0 = pixelWidth
    /// Where the central ray (through the axis, perpendicular to the
    /// detector) hits the detector, in pixels from the detector centre
    /// ((columns - 1) / 2, (rows - 1) / 2); on a curved detector offsetU
    /// is an angle, in columns.
    double offsetU = 0.0;
    double offsetV = 0.0;
    DetectorShape detector = DetectorShape::Flat;

    /// Throws InvalidArgument naming the field when the geometry is unusable
    /// (a curved detector must stay within 90 degrees of the central ray).
    void validate() const;
    /// Throws InvalidArgument naming the distances when `grid`'s voxels
    /// (centres +- half a voxel) reach, in the plane of the orbit, as far
    /// from the rotation axis as the source (sourceAxis) or the detector
    /// (sourceDetector - sourceAxis): a volume the scan cannot have seen.
    void checkVolume(const VolumeGrid& grid) const;
    /// Pixel size at the rotation axis (pixelWidth * sourceAxis / sourceDetector):
    /// the natural voxel size.
    double axisPixelSize() const { return pixelWidth * sourceAxis / sourceDetector; }
    /// Distance between detector rows at the detector.
    double rowPitch() const { return pixelHeight > 0.0 ? pixelHeight : pixelWidth; }
    /// Curved detector: the angle of the ray through column position `u`
    /// (pixel centres at whole numbers) to the central ray.
    double columnAngle(double u) const {
        return (u - (columns - 1) / 2.0 - offsetU) * pixelWidth / sourceDetector;
    }
};

/// Any divergent-beam geometry: a detector size and one matrix per view.
struct ConeGeometry {
    int columns = 0;
    int rows = 0;
    std::vector<ProjectionMatrix> views;

    int viewCount() const { return static_cast<int>(views.size()); }
    /// Throws InvalidArgument naming the view when a matrix is not finite
    /// or singular (its left 3x3 part), or the detector is empty.
    void validate() const;

    /// The matrices of g's views; for a curved detector, those of its
    /// virtual flat one (virtualFlatDetector). Throws as g.validate().
    static ConeGeometry circular(const CircularConeGeometry& g);
};

/// The flat detector a curved one is resampled onto: same source distance,
/// columns and rows; its outer column edges on the rays of the curved one's
/// outer column edges (the same fan), its rows pixelHeight / cos(the widest
/// ray's angle) apart so that it covers the curved rows' height in every
/// column. A flat g is returned as it is. Throws as g.validate().
CircularConeGeometry virtualFlatDetector(const CircularConeGeometry& g);

/// Projections [view][row][column] recorded on g's detector, on the
/// detector of ConeGeometry::circular(g) (a copy for a flat one). Each flat
/// pixel takes the curved value where its ray meets the cylinder, linear in
/// angle and in height (in angle only for one row). Where the flat detector
/// is taller than the curved one (towards its middle column) a ray passes
/// above or below the curved rows: it takes the nearest row's value, since
/// the ramp filter runs along rows and a row cut off to 0 would ring. Throws
/// InvalidArgument for an unusable g or a size other than
/// views x rows x columns.
std::vector<float> resampleToFlatDetector(const CircularConeGeometry& g, std::span<const float> projections);

/// A view's matrix taken apart (pinhole camera without skew).
struct ViewFrame {
    std::array<double, 3> source{}; ///< source position
    std::array<double, 3> axisU{};  ///< unit vector along a detector row (growing column index)
    std::array<double, 3> axisV{};  ///< unit vector along a detector column (growing row index)
    std::array<double, 3> normal{}; ///< unit principal ray direction (source towards detector)
    double focalU = 0.0;            ///< source-detector distance in column pixels
    double focalV = 0.0;            ///< ... in row pixels
    double centreU = 0.0;           ///< principal point (foot of the perpendicular from the source)
    double centreV = 0.0;
    /// Depth of the world origin (the isocentre) along the principal ray.
    double originDepth = 0.0;
    /// The matrix scaled so that w = depth / originDepth (1 at the
    /// isocentre): the FDK distance weight is then 1 / w^2.
    ProjectionMatrix normalised;
};

/// Throws InvalidArgument (naming `what`) if the matrix is singular or the
/// origin is not in front of the source.
ViewFrame describeView(const ProjectionMatrix& p, const std::string& what);

/// Order of the 12 numbers of a matrix in a file.
enum class MatrixOrder {
    RowMajor, ///< P[0][0], P[0][1], ... P[2][3]
    /// RabbitCT's (seed 002, Listing 1): A[0..2] is the first column, so
    /// u w = A[0] x + A[3] y + A[6] z + A[9]. RabbitCT's volume of L^3
    /// voxels of MM starting at O is VolumeGrid{L, L, L, MM, centre
    /// O + (L - 1) / 2 MM}; its projections come filtered, so they go to
    /// backprojectCone() with the matrices as given and scale 1.
    RabbitCT,
};

/// Reads projection matrices from a text file: 12 numbers per view
/// (whitespace or commas between them, any line breaks; '#' starts a
/// comment), views in acquisition order. Throws IoError / FormatError naming
/// the file (and the line of a bad number, or a count not a multiple of 12).
std::vector<ProjectionMatrix> readProjectionMatrices(const std::filesystem::path& path,
                                                     MatrixOrder order = MatrixOrder::RowMajor);

/// The reconstruction grid of a cone/fan-beam volume (see the conventions).
struct VolumeGrid {
    int nx = 0, ny = 0, nz = 0;
    double voxelSize = 0.0;
    std::array<double, 3> centre{};
    /// Voxels (half-integers) from `centre` to the grid's own middle: a part
    /// of a volume (a band of rows, a region) keeps the volume's centre and
    /// says here where it lies, so that its voxels' coordinates equal the
    /// volume's to the last bit (a banded preview is the same image).
    std::array<double, 3> shift{};

    double x(int i) const { return (i - (nx - 1) / 2.0 + shift[0]) * voxelSize + centre[0]; }
    double y(int j) const { return (j - (ny - 1) / 2.0 + shift[1]) * voxelSize + centre[1]; }
    double z(int k) const { return (k - (nz - 1) / 2.0 + shift[2]) * voxelSize + centre[2]; }
    /// The grid's middle.
    std::array<double, 3> middle() const {
        return {centre[0] + shift[0] * voxelSize, centre[1] + shift[1] * voxelSize, centre[2] + shift[2] * voxelSize};
    }
    std::size_t voxels() const {
        return static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny) * static_cast<std::size_t>(nz);
    }
    /// Throws InvalidArgument naming the field.
    void validate() const;
    /// Distance from the volume's centre to its farthest corner (voxel
    /// edges, not centres).
    double halfDiagonal() const;
};

/// Throws InvalidArgument naming the view and the distances when a corner
/// of `grid` (voxel edges) is not in front of a view's source (depth along
/// the principal ray <= 0): a source inside or beside the volume, where
/// FDK's distance weights divide by zero or change sign. Matrices as
/// ConeGeometry::views (describeView).
void requireVolumeBeforeSources(std::span<const ProjectionMatrix> views, const VolumeGrid& grid);

} // namespace tomo
