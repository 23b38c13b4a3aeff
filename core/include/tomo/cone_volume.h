// FDK of part of a fan/cone-beam scan's default volume (cone_scan.h) into a
// VolumeWriter, with the preprocessing stage's corrections and the live
// preview's parameters: the workstation's export and 3D view of such scans
// (tomo-recon reconstructs whole volumes through cone_scan.h and fdk.h).
#pragma once

#include "tomo/dataset.h"
#include "tomo/pipeline.h"
#include "tomo/preview.h"
#include "tomo/progress.h"
#include "tomo/volume_io.h"

namespace tomo {

/// Slices first.row .. first.row + slices - 1 of the default grid (the
/// region, axis, offsets, options and corrections of `first`) into `writer`
/// (its slices 0 .. slices - 1), then commits it. `progress` is called after
/// each chunk and may throw Cancelled (the writer is then left uncommitted).
/// Throws as PreviewSession::run and the writer.
VolumeReport reconstructConeVolume(DatasetReader& reader, const PreviewRequest& first, int slices,
                                   VolumeWriter& writer, const ProgressCallback& progress = {});

} // namespace tomo
