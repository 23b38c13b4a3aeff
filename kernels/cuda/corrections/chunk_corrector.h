// The preprocessing stage's chain on a CUDA device (tomo::ChunkCorrector):
// the stored values uploaded as they are, then the flat-field kernel and
// the device corrections of device_corrections.h in the stage's order, and
// the corrected sinograms downloaded.
#pragma once

#include "tomo/preprocess.h"

#include <memory>

namespace tomo::cuda {

/// Throws DeviceError without a usable device, InvalidArgument as the
/// device corrections do for the stage's options.
std::unique_ptr<ChunkCorrector> createChunkCorrector(PreprocessingStage& stage, int device);

} // namespace tomo::cuda
