// The ramp filter around VkFFT (ocl_filter.h), the twin of the CUDA
// filter_kernels.cu: two real rows share one complex transform (row 2j in
// the real parts, row 2j + 1 in the imaginary parts), then the filtered rows
// are weighted and packed into the kept sinogram of one pass.

/// Work-item = (pair, position) flattened: the padded rows, edge or zero extended.
__kernel void padPairs(__global const float* rows, int rowCount, int bins, int padded, int left, int edge,
                       int pairs, __global float2* spectrum) {
    const size_t i = get_global_id(0);
    if (i >= (size_t)pairs * padded) return;
    const int pair = (int)(i / padded);
    const int k = (int)(i - (size_t)pair * padded) - left;
    float v[2] = {0.0f, 0.0f};
    for (int h = 0; h < 2; ++h) {
        const int row = 2 * pair + h;
        if (row >= rowCount) continue;
        __global const float* r = rows + (size_t)row * bins;
        if (k < 0) v[h] = edge ? r[0] : 0.0f;
        else if (k >= bins) v[h] = edge ? r[bins - 1] : 0.0f;
        else v[h] = r[k];
    }
    spectrum[i] = (float2)(v[0], v[1]);
}

/// Work-item = spectrum element: times the real, even response.
__kernel void applyResponse(__global float2* spectrum, __global const float* response, int padded, int pairs) {
    const size_t i = get_global_id(0);
    if (i >= (size_t)pairs * padded) return;
    spectrum[i] *= response[i % padded];
}

inline float filteredValue(__global const float2* spectrum, int padded, int left, int row, int bin) {
    const float2 v = spectrum[(size_t)(row >> 1) * padded + left + bin];
    return (row & 1) ? v.y : v.x;
}

/// The weighted texel of (projection p, bin) for slices firstSlice.. of the pass.
inline Texel packedTexel(__global const float2* spectrum, __global const float* weights, int padded, int left,
                         int projections, int validSlices, int p, int bin, float scale) {
    float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int c = 0; c < TOMO_CHANNELS; ++c)
        if (c < validSlices) // the same rounding as SinogramFilter: filtered value x float(weight)
            v[c] = filteredValue(spectrum, padded, left, c * projections + p, bin) * weights[p] * scale;
#if TOMO_CHANNELS == 1
    return v[0];
#elif TOMO_CHANNELS == 2
    return (float2)(v[0], v[1]);
#else
    return (float4)(v[0], v[1], v[2], v[3]);
#endif
}

/// Work-item (bin, projection): one texel of the pass's image.
__kernel void packImage(__global const float2* spectrum, __global const float* weights, int bins, int padded,
                        int left, int projections, int validSlices, float scale, __write_only image2d_t out) {
    const int bin = get_global_id(0), p = get_global_id(1);
    if (bin >= bins || p >= projections) return;
    const Texel t = packedTexel(spectrum, weights, padded, left, projections, validSlices, p, bin, scale);
#if TOMO_CHANNELS == 1
    write_imagef(out, (int2)(bin, p), (float4)(t, 0.0f, 0.0f, 0.0f));
#elif TOMO_CHANNELS == 2
    write_imagef(out, (int2)(bin, p), (float4)(t, 0.0f, 0.0f));
#else
    write_imagef(out, (int2)(bin, p), t);
#endif
}

/// Work-item (bin, projection): one texel of the pass's buffer [projection][bin]
/// (float, or float16 through vstore_half: no cl_khr_fp16 needed to store).
__kernel void packBuffer(__global const float2* spectrum, __global const float* weights, int bins, int padded,
                         int left, int projections, int validSlices, float scale, __global void* out) {
    const int bin = get_global_id(0), p = get_global_id(1);
    if (bin >= bins || p >= projections) return;
    const Texel t = packedTexel(spectrum, weights, padded, left, projections, validSlices, p, bin, scale);
    const size_t i = (size_t)p * bins + bin;
#if TOMO_HALF
#if TOMO_CHANNELS == 1
    vstore_half(t, i, (__global half*)out);
#elif TOMO_CHANNELS == 2
    vstore_half2(t, i, (__global half*)out);
#else
    vstore_half4(t, i, (__global half*)out);
#endif
#else
    ((__global Texel*)out)[i] = t;
#endif
}

/// Work-item = (row, bin) of the valid rows: max |weighted value| as float
/// bits (positive floats order like their bits), for the float16 scale.
__kernel void maxAbsWeighted(__global const float2* spectrum, __global const float* weights, int bins, int padded,
                             int left, int projections, int rowCount, __global volatile uint* maxBits) {
    const size_t i = get_global_id(0);
    if (i >= (size_t)rowCount * bins) return;
    const int row = (int)(i / bins), bin = (int)(i - (size_t)row * bins);
    const float m = fabs(filteredValue(spectrum, padded, left, row, bin) * weights[row % projections]);
    atomic_max(maxBits, isfinite(m) ? as_uint(m) : 0x7f7fffffu);
}
