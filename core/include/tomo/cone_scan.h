// Fan- and cone-beam scans from files: the geometry (what the dataset
// declares, or a geometry file) and all projections as line integrals, ready
// for reconstructFdk().
//
// Geometry file (JSON), either a circular scan, which takes the dataset's
// angles:
//   { "source_axis": 410.66, "source_detector": 553.74,
//     "pixel_size": 0.2,            (or [width, height]; at the detector)
//     "offset_u": 0, "offset_v": 0 } (central ray from the detector centre, pixels)
// or one projection matrix per view (cone_geometry.h conventions):
//   { "matrices": "views.txt",      (relative to the JSON file's folder)
//     "matrix_order": "row-major" } (or "rabbitct")
// Lengths in one unit (that of the pixel size); unknown keys are refused.
#pragma once

#include "tomo/cone_geometry.h"
#include "tomo/dataset.h"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace tomo {

struct ConeSetup {
    ConeGeometry geometry;
    /// The default volume: columns x columns x rows voxels (fan beam: one
    /// slice) of the detector pixel size at the rotation axis.
    VolumeGrid grid;
    /// For the output's attributes: the geometry and where it came from.
    std::map<std::string, std::string> attributes;
    std::string description; ///< one line, e.g. "fan beam, source-axis 410.66 mm, ..."
};

/// The geometry of `info`'s scan: from `geometryFile` when not empty, else
/// from info.divergentBeam with info.angles. Throws InvalidArgument when
/// neither gives a usable geometry (naming what is missing), FormatError /
/// IoError for a bad geometry file (naming the file and key), and when a
/// matrix file's view count differs from info.projections.
ConeSetup coneSetup(const DatasetInfo& info, const std::filesystem::path& geometryFile = {});

/// All projections of the dataset as line integrals, [view][row][column]
/// (flat/dark and -log applied unless the values are already log-corrected).
/// Throws as the reader and loadSinograms.
std::vector<float> readConeProjections(DatasetReader& reader);

} // namespace tomo
