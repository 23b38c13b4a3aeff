// "ocl-tex-standard": seed 000 Algorithm 1, the twin of the CUDA tex-standard:
// one work-item per pixel in 16x16 work-groups, each looping over the
// projections; cos, sin and axis of each projection from __constant memory;
// the sampler interpolates (CLK_FILTER_LINEAR) or, for nearest, the position
// is computed exactly (Exact4) and snapped to a bin centre (CLK_FILTER_NEAREST).
// Projections [first, first + count) per launch (the constant table of one
// batch); later batches accumulate.
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void texStandard(__read_only image2d_t sinogram, sampler_t sampler, __constant float4* geometry,
                 __global const Exact4* exact, int first, int count, int accumulate, int snap, int regionX,
                 int regionY, int regionWidth, int regionHeight, float centreX, float centreY,
                 __global float* slices, int sliceStride, int validSlices, float scale) {
    const int gx = get_global_id(0), gy = get_global_id(1);
    if (gx >= regionWidth || gy >= regionHeight) return;
    Texel sum = 0.0f;
    if (snap) {
        const ExactReal x = (ExactReal)(regionX + gx) - (ExactReal)centreX;
        const ExactReal y = (ExactReal)(regionY + gy) - (ExactReal)centreY;
        for (int p = 0; p < count; ++p) {
            const Exact4 c = exact[first + p];
            const float u = snappedCoordinate(exactPosition(x, y, c));
            sum += TEXEL_OF(read_imagef(sinogram, sampler, (float2)(u, (float)(first + p) + 0.5f)));
        }
    } else {
        const float x = (float)(regionX + gx) - centreX;
        const float y = (float)(regionY + gy) - centreY;
        for (int p = 0; p < count; ++p) {
            const float4 c = geometry[p]; // cos, sin, axis_p
            const float u = fma(-y, c.y, fma(x, c.x, c.z) + 0.5f);
            sum += TEXEL_OF(read_imagef(sinogram, sampler, (float2)(u, (float)(first + p) + 0.5f)));
        }
    }
    const size_t pixel = (size_t)gy * regionWidth + gx;
    if (accumulate)
        for (int c = 0; c < validSlices; ++c) slices[c * (size_t)sliceStride + pixel] += channelOf(sum, c) * scale;
    else
        storeSlices(slices, pixel, sliceStride, validSlices, sum, scale);
}
