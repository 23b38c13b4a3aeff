// Analytic Shepp-Logan phantoms with exact parallel-beam projections.
#pragma once

#include "tomo/cone_geometry.h"
#include "tomo/geometry.h"
#include "tomo/image.h"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace tomo {

/// One ellipsoid of constant density (an ellipse when used in 2D: z terms
/// ignored). Centre and semi-axes in units of the phantom radius (the
/// phantom spans [-1, 1], Y up: image row 0 is the top); phi rotates about
/// z (counter-clockwise from X towards Y), in radians. c == 0 marks a 2D
/// ellipse: the same in every row (sheppLogan2D uses it).
struct Ellipsoid {
    double density;
    double a, b, c;       // semi-axes along x, y, z
    double x0, y0, z0;    // centre
    double phi;           // rotation in the x-y plane
};

/// The modified Shepp-Logan phantom (Toft's higher-contrast densities):
/// 10 ellipses in 2D, the 3D version of Kak & Slaney / Toft with ellipsoids.
std::vector<Ellipsoid> sheppLogan2D();
std::vector<Ellipsoid> sheppLogan3D();

struct PhantomSpec {
    std::vector<Ellipsoid> shapes = sheppLogan3D();
    /// Detector columns; the phantom radius is radiusFraction * bins / 2 pixels.
    int bins = 256;
    /// Detector rows (slices through the 3D phantom, spanning z in [-1, 1]).
    int rows = 1;
    double radiusFraction = 0.9;
    /// Attenuation per pixel at density 1 (kept small so transmissions stay
    /// well above 0 when flats/darks are simulated).
    double attenuationScale = 0.01;
};

/// Detector row `row` as z in phantom units (rows spread over [-0.9, 0.9]).
double phantomRowZ(const PhantomSpec& spec, int row);

/// Exact line integrals (attenuation per pixel x path length in pixels) of
/// the phantom for a parallel beam with the rotation axis at the detector
/// centre: sinograms [row][angle][bin] (width bins, height angles, depth rows).
/// Each bin is the average of `subsamples` exact ray integrals across its
/// width (1 = through the bin centre).
ImageStack projectPhantom(const PhantomSpec& spec, const std::vector<double>& angles, int subsamples = 1);

/// The true attenuation image of row `row` on a width x height grid with the
/// conventions of geometry.h (axis at the detector centre); each pixel is the
/// average of subsamples^2 point samples.
Image rasterizePhantom(const PhantomSpec& spec, int row, int width, int height, int subsamples = 4);

/// A phantom placed in cone/fan-beam world coordinates (cone_geometry.h):
/// phantom point (X, Y, Z) is the world point (R X, -R Y, R Z), so that slices
/// show it the usual way up, as the parallel-beam phantom; density 1 is
/// `attenuation` per world unit. Ellipsoids with c == 0 are infinite
/// cylinders along z (the 2D phantom, for fan beam).
struct ConePhantom {
    std::vector<Ellipsoid> shapes = sheppLogan3D();
    double radius = 1.0;      ///< R, world units
    double attenuation = 1.0; ///< per world unit at density 1
};

/// Exact line integrals of the phantom from each view's source through each
/// detector pixel ([view][row][column]: width columns, height rows, depth
/// views); each pixel averages subsamples x subsamples rays over its area.
/// Throws InvalidArgument (bad geometry, subsamples < 1).
ImageStack projectPhantomCone(const ConePhantom& phantom, const ConeGeometry& geometry, int subsamples = 1);
/// The same for a circular scan on its own detector: for a curved one the
/// rays through its pixels on the cylinder (what a curved scanner records,
/// before resampleToFlatDetector); for a flat one as through
/// ConeGeometry::circular(geometry).
ImageStack projectPhantomCone(const ConePhantom& phantom, const CircularConeGeometry& geometry, int subsamples = 1);

/// The true attenuation per voxel (attenuation x voxelSize) on `grid`, each
/// voxel the mean of subsamples^3 point samples.
ImageStack rasterizePhantomVolume(const ConePhantom& phantom, const VolumeGrid& grid, int subsamples = 2);

/// Options for turning the projections into a measured-looking scan.
struct ScanSimulation {
    double flatCounts = 20000.0; ///< mean flat-field counts per pixel
    double darkCounts = 100.0;   ///< mean dark counts
    int flats = 4;
    int darks = 4;
    bool poissonNoise = true;
    std::uint64_t seed = 1;
};

/// Writes a DXchange HDF5 file (uint16 data, flats, darks, theta in degrees)
/// of the phantom scan, via a temporary name then rename. Throws IoError,
/// InvalidArgument (counts that overflow uint16).
void writePhantomDXchange(const std::filesystem::path& path, const PhantomSpec& spec,
                          const std::vector<double>& angles, const ScanSimulation& sim);

/// n angles spread uniformly over [0, rangeRadians) (end point excluded).
std::vector<double> uniformAngles(int n, double rangeRadians = 3.14159265358979323846);

} // namespace tomo
