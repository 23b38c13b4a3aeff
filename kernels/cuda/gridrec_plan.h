// The ReconstructionPlan of the CUDA "gridrec" strategy (the method:
// tomo/gridrec.h; the kernels: gridrec_kernels.h). Slices go in batches of
// up to kGridrecBatchPairs pairs (two slices per complex transform):
//
//   setSinograms, per batch:  H2D (copy-in stream) -> GpuFilter (cuFFT, the
//     filter every strategy uses) -> packRows -> 1D FFT of each row (kept:
//     the spectra of every slice stay on the device); reconstructRaw
//     uploads the raw rows as stored instead and corrects them on the
//     device first (raw_rows_upload.h, the flat-field kernel)
//   backproject, per batch:   phase -> gather -> 2D inverse FFT per pair ->
//     crop (deapodisation) -> D2H (copy-out stream); a lone slice (an odd
//     count: the live preview's one) is real, its grid Hermitian: half the
//     grid gathered and a C2R transform, half the work of a pair
//
// reconstruct() and reconstructRaw() run both per batch, one batch after
// the other, so batch i + 1's upload overlaps batch i's filtering and
// gridding, batch i's download batch i + 1's (two device buffers each way,
// events between the streams). setAxis() uploads the new phase shifts (and,
// for an axis that needs longer rows, rebuilds the spectra on the device:
// inverse FFT, zero extension, FFT), so the live preview's axis move is
// phase + gather + inverse FFT + crop. When all pairs fit in one batch the inverse-transformed
// grids stay valid until the slices or the axis change: another region
// (setRegion, the preview's bands) is a crop and a download.
//
// Stage times: upload = host staging + H2D, filter = (flat field +) filter +
// pack + 1D FFT, backproject = phase + gather + 2D FFT + crop, download =
// D2H + host copy.
#pragma once

#include "tomo/backend.h"

#include <memory>

namespace tomo::cuda {

/// Pairs of slices gridded per launch (device memory: ~(G^2 + 2 L P) x 8
/// bytes per pair, 220 MB for 2048^2 from 2048 projections).
inline constexpr int kGridrecBatchPairs = 4;

/// The plan (options checked by the backend). Throws InvalidArgument,
/// DeviceError, OutOfMemory (naming what was asked and what is free).
std::unique_ptr<ReconstructionPlan> makeGridrecPlan(const ReconGeometry& geometry, const ReconOptions& options);

} // namespace tomo::cuda
