// A projector pair's operator that works one group of the CUDA pair's
// vectors at a time (projector_pair.cpp): the pair keeps the vectors, the
// vector arithmetic and SIRT's weights, and routes forward, back and
// SIRT's two halves through its operator when it has one. Joseph's
// parallel-beam pair is the pair's own (no operator); the Fourier pair
// (fourier_projector.h) and the divergent-beam pair
// (divergent_projector.h) are operators.
//
// A group is `lanes` (1, 2 or 4) slices interleaved per element
// ([element][lane]), `valid` of them real (projector_kernels.h).
#pragma once

#include "projector_kernels.h"

#include "tomo/error.h"
#include "tomo/geometry.h"

#include <cstddef>
#include <string>

namespace tomo::cuda {

class GroupOperator {
public:
    virtual ~GroupOperator() = default;

    /// "fourier", "cone-beam joseph": the pair's name begins with it.
    virtual std::string kind() const = 0;
    /// Device bytes it holds now.
    virtual std::size_t bytes() const = 0;
    /// SIRT's weights: ray and pixel sums below this weigh 0.
    virtual float minWeightSum() const = 0;

    /// y = A x of one group (lanes past `valid`: 0).
    virtual void forwardGroup(const float* d_image, int lanes, int valid, float* d_sinogram) = 0;
    /// SIRT's first half of one group: d_residual = W (b - A x), W =
    /// d_rowWeights (or 1 when null), and the sums of (b - A x)^2 per block
    /// and lane into d_partial[residualBlocks()][lanes].
    virtual void residualGroup(const float* d_image, const float* d_data, const float* d_rowWeights, int lanes,
                               int valid, float* d_residual, double* d_partial) = 0;
    virtual int residualBlocks() const = 0;
    /// x = B y of one group (lanes past `valid`: 0).
    virtual void backGroup(const float* d_sinogram, int lanes, int valid, float* d_image) = 0;
    /// SIRT's second half: x = clamp(x + steps[lane] V B r), V =
    /// d_columnWeights (or 1 when null).
    virtual void stepGroup(const float* d_residual, int lanes, int valid, const SliceScalars& steps,
                           const float* d_columnWeights, float lower, float upper, float* d_image) = 0;
    /// The FBP start of one group, for an operator with its own (the
    /// divergent beam's FDK; the pair is told so when it is made); the
    /// others keep the pair's parallel-beam FBP.
    virtual void filteredBackprojection(const float* d_sinogram, int lanes, int valid, float* d_image) {
        (void)d_sinogram, (void)lanes, (void)valid, (void)d_image;
        throw InvalidArgument("projector: this operator has no FBP start of its own");
    }
    /// A moved rotation axis (the caller's kernels are done with the old
    /// one). Throws InvalidArgument where there is no axis to move.
    virtual void setAxis(const Geometry& geometry) = 0;
};

} // namespace tomo::cuda
