// Texture fetch-rate micro-benchmark (fetch_rate.cu): the ceiling the
// texture kernels are compared with.
#pragma once

namespace tomo::cuda {

/// Fetches per second on the current device for a texel of `channels`
/// (1, 2, 4) float32 or float16 values, bilinear (`linear`) or point sampled,
/// when the lanes of a warp fetch overlapping footprints. Median of several
/// timed launches, about 0.1-0.2 s in all. Throws DeviceError.
double runFetchRateBenchmark(bool half, int channels, bool linear);

} // namespace tomo::cuda
