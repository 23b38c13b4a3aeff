// The detector pixel size a scan file states: the workstation's scale bar,
// attenuation units and Paganin filter use it (asked for when it is absent).
#pragma once

#include <filesystem>

namespace tomo {

/// Size of a detector pixel at the sample in metres, as the HDF5 file at
/// `path` states it: NXtomo's or DXchange's x_pixel_size (in its `units`
/// attribute; without one, values below 1e-3 are metres, larger ones
/// micrometres), else HTC2022's effectivePixelSizePost attribute of the
/// root (in its distanceUnit, mm). 0 when the file states none, is not
/// HDF5 (TIFF, raw) or cannot be read, and in a build without HDF5. Never
/// throws.
double statedPixelSize(const std::filesystem::path& path);

} // namespace tomo
