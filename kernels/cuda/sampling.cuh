// Texture coordinates along a sinogram row for the three Sampling modes
// (kernel_launch.h). Device code only; shared by the texture kernels.
#pragma once

#include "kernel_launch.h"

#include <cuda_runtime.h>

namespace tomo::cuda {

/// SnapDouble: s (double) -> centre of bin floor(s + 0.5), as a float.
/// Adding 1.5 * 2^52 + 2^22 rounds to an integer held, offset by 2^22, in the
/// low mantissa bits; 2^-32 turns round-half-even into floor(s + 0.5) at
/// exact ties. The integer becomes a float through the 2^23 exponent trick,
/// so no conversion instruction (16/clk/SM on sm_90) is used.
__device__ __forceinline__ float snapDouble(double s) {
    s = fmin(fmax(s, -2097152.0), 2097152.0);
    const double r = (s + 0x1p-32) + (6755399441055744.0 + 4194304.0);
    const int n = __double2loint(r); // k + 2^22, in [0, 2^23)
    return (__int_as_float(0x4B000000 | n) - 12582912.0f) + 0.5f;
}

} // namespace tomo::cuda
