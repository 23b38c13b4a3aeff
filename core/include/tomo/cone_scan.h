// Fan- and cone-beam scans from files: the geometry (what the dataset
// declares, or a geometry file) and all projections as line integrals, ready
// for reconstructFdk().
//
// Geometry file (JSON), either a circular scan, which takes the dataset's
// angles:
//   { "source_axis": 410.66, "source_detector": 553.74,
//     "pixel_size": 0.2,            (or [width, height]; at the detector)
//     "offset_u": 0, "offset_v": 0,  (central ray from the detector centre, pixels)
//     "detector": "flat" }          (or "curved": cylindrical, equi-angular columns)
// or one projection matrix per view (cone_geometry.h conventions, a flat detector):
//   { "matrices": "views.txt",      (relative to the JSON file's folder)
//     "matrix_order": "row-major" } (or "rabbitct")
// Lengths in one unit (that of the pixel size); unknown keys are refused.
#pragma once

#include "tomo/cone_geometry.h"
#include "tomo/dataset.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tomo {

struct ConeSetup {
    /// What FDK takes: for a curved detector that of its virtual flat one,
    /// which the projections reach through onGeometryDetector().
    ConeGeometry geometry;
    /// The circular scan as declared (none for projection matrices).
    std::optional<CircularConeGeometry> circular;
    /// The default volume: columns x columns x rows voxels (fan beam: one
    /// slice) of the detector pixel size at the rotation axis.
    VolumeGrid grid;
    /// For the output's attributes: the geometry and where it came from.
    std::map<std::string, std::string> attributes;
    std::string description; ///< one line, e.g. "fan beam, source-axis 410.66 mm, ..."

    /// The detector the projections were recorded on.
    DetectorShape detector() const { return circular ? circular->detector : DetectorShape::Flat; }
    /// Throws InvalidArgument (naming the distances) unless `grid` is a
    /// volume this scan saw: valid, inside the source's orbit and short of
    /// the detector (circular scans, CircularConeGeometry::checkVolume), in
    /// front of every view's source (requireVolumeBeforeSources).
    void checkGrid(const VolumeGrid& grid) const;
};

/// The geometry of `info`'s scan: from `geometryFile` when not empty, else
/// from info.divergentBeam with info.angles. Throws InvalidArgument when
/// neither gives a usable geometry (naming what is missing) or the default
/// grid is not one the scan saw (ConeSetup::checkGrid), FormatError /
/// IoError for a bad geometry file (naming the file and key), and when a
/// matrix file's view count differs from info.projections.
ConeSetup coneSetup(const DatasetInfo& info, const std::filesystem::path& geometryFile = {});

/// All projections of the dataset as line integrals, [view][row][column]
/// (flat/dark and -log applied unless the values are already log-corrected),
/// on the detector of setup.geometry (onGeometryDetector). Throws as the
/// reader, loadSinograms and onGeometryDetector.
std::vector<float> readConeProjections(DatasetReader& reader, const ConeSetup& setup);

/// Projections [view][row][column] (all rows) as recorded, on the detector
/// of setup.geometry: returned as they are for a flat detector, resampled
/// for a curved one (resampleToFlatDetector). Throws InvalidArgument when
/// the size is not views x rows x columns of the setup.
std::vector<float> onGeometryDetector(const ConeSetup& setup, std::vector<float> projections);

} // namespace tomo
