// tomo-recon's fan/cone-beam path: FDK of a whole scan (tomo/fdk.h) with
// the geometry the file declares or a geometry file gives (tomo/cone_scan.h).
#pragma once

#include "tomo/backend.h"
#include "tomo/dataset.h"
#include "tomo/image.h"

#include <CLI/CLI.hpp>

#include <map>
#include <string>

namespace tomo::cli {

struct ConeCommandLine {
    std::string geometry; ///< --cone-geometry FILE (JSON)
    std::string volume;   ///< --volume NX,NY,NZ
    double voxelSize = 0.0;
};

void addConeOptions(CLI::App& app, ConeCommandLine& c);

/// A fan/cone-beam run: the input declares a divergent beam, or
/// --cone-geometry is given. Throws InvalidArgument when --volume or
/// --voxel-size is given for a parallel-beam input.
bool isConeRun(const CLI::App& app, const DatasetInfo& info, const ConeCommandLine& c);

/// Reconstructs the whole scan (tomo/cone_run.h: FDK, or --method on the
/// divergent-beam pair), prints what runs and what it took, and adds the
/// geometry, the grid and the method to `attributes`. Throws
/// InvalidArgument naming any given option that does not apply to
/// fan/cone-beam data, and as coneSetup and DivergentReconstruction.
ImageStack reconstructCone(const CLI::App& app, const ConeCommandLine& c, const ReconOptions& options,
                           DatasetReader& reader, std::map<std::string, std::string>& attributes, bool quiet);

} // namespace tomo::cli
