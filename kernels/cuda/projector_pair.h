// The CUDA projector pair (projector.h) of every CUDA strategy: Joseph's
// forward projector and its transpose (projector.cu), or with
// ProjectorKind::Fourier the gridding operator and its adjoint
// (fourier_projector.h), or the divergent-beam operator of a fan or cone
// beam (divergent_projector.h; group_operator.h), the vector arithmetic (iterative_kernels.cu), the
// FBP start through the FBP plans' GPU filter, all on one stream of
// options.device.
//
//   memory: the vectors the algorithms ask for (a pool keeps freed ones for
//   the next batch of the same size); per batch, two groups of 4 slices:
//   one scratch (the transposed image the column projections read, or the
//   plain slices of an upload or download) and one sinogram group (b - A x
//   of a gradient step, which goes group by group, or the FBP start's
//   filtered rows); SIRT's weights (one slice); the FFT workspace of the
//   FBP start. SIRT holds b and x per slice: for n square slices from as
//   many projections as columns, (1 + 4 / n) x (input + output).
//   maxSlices(): what 80% of the free memory holds of the method's vectors
//   (iterative.h's workspaceOf), at most kMaxIterativeSlices.
#pragma once

#include "tomo/backend.h"
#include "tomo/projector.h"

#include <memory>

namespace tomo::cuda {

/// Throws InvalidArgument (device index), DeviceError, OutOfMemory naming
/// the method and the slice when the GPU cannot hold one slice's vectors.
std::unique_ptr<ProjectorPair> makeCudaProjector(const ReconGeometry& geometry, const ReconOptions& options);

} // namespace tomo::cuda
