// Prepended to every program. The host defines:
//   TOMO_CHANNELS  slices per pass (1, 2, 4): one texel holds them all
//   TOMO_HALF      1: the kept sinograms are float16 (arithmetic stays float)
//   TOMO_FP64      1: the device has cl_khr_fp64 (exact nearest positions)
#if TOMO_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
/// Per projection (cos, sin, axis_p, unused) for positions that must match a
/// double-precision reference exactly (nearest: floor(s + 0.5) of a tie).
typedef double4 Exact4;
typedef double ExactReal;
#else
typedef float4 Exact4; // without fp64 the nearest positions are float
typedef float ExactReal;
#endif

#if TOMO_CHANNELS == 1
typedef float Texel;
#define TEXEL_OF(v) ((v).x)
#elif TOMO_CHANNELS == 2
typedef float2 Texel;
#define TEXEL_OF(v) ((v).xy)
#else
typedef float4 Texel;
#define TEXEL_OF(v) (v)
#endif

/// Channel c of a texel.
inline float channelOf(Texel v, int c) {
#if TOMO_CHANNELS == 1
    (void)c;
    return v;
#elif TOMO_CHANNELS == 2
    return c == 0 ? v.x : v.y;
#else
    return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
#endif
}

/// Writes `validSlices` channels of v to pixel `pixel` of [slice][pixel] output.
inline void storeSlices(__global float* slices, size_t pixel, size_t sliceStride, int validSlices, Texel v,
                        float scale) {
    for (int c = 0; c < validSlices; ++c) slices[c * sliceStride + pixel] = channelOf(v, c) * scale;
}

/// The detector position of (x, y) in projection c, rounded as the double
/// reference rounds it (no fused multiply-add: FP_CONTRACT is off in this
/// function), so that floor(s + 0.5) picks the same bin at ties.
inline ExactReal exactPosition(ExactReal x, ExactReal y, Exact4 c) {
#pragma OPENCL FP_CONTRACT OFF
    const ExactReal a = x * c.x;
    const ExactReal b = y * c.y;
    return a - b + c.z;
}

/// The centre of bin floor(s + 0.5) as a texture coordinate (texel k spans [k, k + 1)).
inline float snappedCoordinate(ExactReal s) { return (float)floor(s + (ExactReal)0.5) + 0.5f; }
