// Launchers of the CUDA projector pair's kernels (projector.cu,
// iterative_kernels.cu): Joseph's forward projector and its transpose with
// SIRT's fused halves, and the vector arithmetic of the iterative methods.
// Plain C++: no CUDA type; d_ = device pointer.
//
// Vectors hold `groups` groups of `lanes` slices (1, 2 or 4) interleaved per
// element: [group][element][lane], element = row * width + column (images)
// or angle * bins + bin (sinograms); see core/src/recon/joseph.h.
#pragma once

#include "kernel_launch.h"

#include <cstddef>

namespace tomo::joseph {
struct Projection;
}

namespace tomo::cuda {

/// Most slices a vector of the CUDA pair holds: per-slice scalars travel as
/// kernel parameters (SliceScalars, 512 bytes).
inline constexpr int kMaxIterativeSlices = 128;

/// One float per slice of a vector (index group * lanes + lane).
struct SliceScalars {
    float v[kMaxIterativeSlices];
};

struct JosephGeometry {
    const joseph::Projection* d_projections = nullptr; ///< one per projection
    int projections = 0;
    int bins = 0;
    int width = 0;  ///< slice grid
    int height = 0;
};

/// y = A x for ONE group (the column projections read `d_transposed`,
/// launchTranspose's copy of the group), or with `d_data` SIRT's first half:
/// y = W (b - A x) (W = d_rowWeights [angle][bin], or 1 when null) and each
/// block's sum of (b - A x)^2 per lane into d_partial[block][lane].
struct ForwardLaunch {
    JosephGeometry geometry;
    int lanes = 1;
    const float* d_image = nullptr;
    const float* d_transposed = nullptr;
    float* d_out = nullptr;
    const float* d_data = nullptr;
    const float* d_rowWeights = nullptr;
    double* d_partial = nullptr; ///< forwardBlocks() x lanes
};
/// Blocks of one forward launch (the partial sums it writes).
int forwardBlocks(const JosephGeometry& geometry);
void launchForward(const ForwardLaunch& launch, StreamHandle stream);

/// x = B y for `groups` groups (B = A^T, or with `interpolate` the FBP's
/// linear interpolation), or with `step` SIRT's second half:
/// x = clamp(x + steps[slice] V B y, lower, upper), V = d_columnWeights
/// [row][column] (or 1 when null).
struct BackLaunch {
    JosephGeometry geometry;
    int lanes = 1;
    int groups = 1;
    const float* d_sinograms = nullptr;
    float* d_image = nullptr;
    bool interpolate = false;
    bool step = false;
    const float* d_columnWeights = nullptr;
    SliceScalars steps{};
    float lower = 0.0f, upper = 0.0f;
};
void launchBack(const BackLaunch& launch, StreamHandle stream);

/// [row][column][lane] of one group -> [column][row][lane].
void launchTranspose(const float* d_in, float* d_out, int width, int height, int lanes, StreamHandle stream);

/// y = a[s] x + b[s] y (b[s] == 0: y = a[s] x) over `groups` groups of
/// `elements` elements of `lanes` lanes.
void launchAxpby(const SliceScalars& a, const float* d_x, const SliceScalars& b, float* d_y, std::size_t elements,
                 int lanes, int groups, StreamHandle stream);

/// Blocks of launchDotPartials per group.
int dotBlocks(std::size_t elements);
/// Per group and block, the sum of x * y per lane in double:
/// d_partial[group][block][lane].
void launchDotPartials(const float* d_x, const float* d_y, std::size_t elements, int lanes, int groups,
                       double* d_partial, StreamHandle stream);
/// d_sums[group * lanes + lane] = the sum over `blocks` partials
/// d_partial[group][block][lane], in a fixed order (deterministic).
void launchSumPartials(const double* d_partial, int blocks, int lanes, int groups, double* d_sums,
                       StreamHandle stream);

/// x = clamp(x, lower, upper) over n floats.
void launchClamp(float* d_x, std::size_t n, float lower, float upper, StreamHandle stream);
/// x = x > minimum ? 1 / x : 0 over n floats (SIRT's weights from sums).
void launchInvertSums(float* d_x, std::size_t n, float minimum, StreamHandle stream);
/// n floats = value.
void launchFill(float* d_x, std::size_t n, float value, StreamHandle stream);

/// One group of a vector from `valid` (<= lanes) plain slices
/// [slice][element] at d_plain; the lanes past them get zeros.
void launchInterleave(const float* d_plain, float* d_group, std::size_t elements, int lanes, int valid,
                      StreamHandle stream);
/// The inverse: the `valid` slices of one group to plain [slice][element].
void launchDeinterleave(const float* d_group, float* d_plain, std::size_t elements, int lanes, int valid,
                        StreamHandle stream);

/// The image of the TV steps: `planes` planes of planeRows x width pixels
/// (one plane: a slice, 2 axes; more: a volume, 3 axes, projector.h). The
/// dual of a group is [component][pixel][lane].
struct TvShape {
    int width = 0;
    int planeRows = 0;
    int planes = 1;
};

/// TV (projector.h): x = clamp(z - mu L p).
void launchTvPrimal(const float* d_z, const float* d_p, float mu, float lower, float upper, float* d_x,
                    const TvShape& shape, int lanes, int groups, StreamHandle stream);
/// TV: p' = the projection of r + step L^T x onto the unit ball; r = p' +
/// momentum (p' - p); p = p'.
void launchTvDual(const float* d_x, float step, float momentum, float* d_p, float* d_r, const TvShape& shape,
                  int lanes, int groups, StreamHandle stream);

} // namespace tomo::cuda
