// "ocl-alu": seed 000 §6 (Algorithm 6): interpolation on the ALUs from an
// explicit cache in local memory, the variant §6.10 ran on AMD and Intel
// CPUs. A work-group of 256 items computes a 32x32 tile, 4 pixels per item
// (column t % 32, rows t / 32 + 8k). Projections go in groups of GROUP: the
// group first caches, per projection, the CACHED bins from h_m = the lowest
// bin any pixel of the tile needs (the tile corner given by the constants'
// w = min(0, cos, -sin, cos - sin), seed 000 §6.1), zero outside the
// detector; then every item interpolates its pixels from the cache.
// The kept sinogram is a plain buffer [projection][bin] of texels (float or
// float16), read once per work-group and projection.
#define TILE 32
#define THREADS 256
#define GROUP 16
#define CACHED 48 // >= 31 * sqrt(2) + 2: the bins a 32x32 tile reads per projection

inline Texel loadTexel(__global const void* sinogram, size_t i) {
#if TOMO_HALF
#if TOMO_CHANNELS == 1
    return vload_half(i, (__global const half*)sinogram);
#elif TOMO_CHANNELS == 2
    return vload_half2(i, (__global const half*)sinogram);
#else
    return vload_half4(i, (__global const half*)sinogram);
#endif
#else
    return ((__global const Texel*)sinogram)[i];
#endif
}

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void alu(__global const void* sinogram, int bins, __global const float4* geometry, __global const Exact4* exact,
         int projections, int linear, int regionX, int regionY, int regionWidth, int regionHeight, float centreX,
         float centreY, __global float* slices, int sliceStride, int validSlices, float scale) {
    // Per cached bin: its value and the difference to the next ("advanced
    // caching", seed 000 §6.4): linear interpolation is one fma of one entry.
    __local Texel cache[GROUP][CACHED][2];
    __local float4 geo[GROUP]; // cos, sin, axis_p - h_m
    __local Exact4 geoExact[GROUP]; // cos, sin, axis_p (nearest)
    __local int first[GROUP];  // h_m

    const int tid = get_local_id(0);
    // Tiles on the grid's 32x32 lattice, not the region's: a pixel gets the
    // same h_m and arithmetic in any region (a region is a window of the slice).
    const int tileX = regionX - regionX % TILE + (int)get_group_id(0) * TILE;
    const int tileY = regionY - regionY % TILE + (int)get_group_id(1) * TILE;
    const int col = tid % TILE, row0 = tid / TILE;
    const float x = (float)(tileX + col) - centreX;
    const ExactReal xd = (ExactReal)(tileX + col) - (ExactReal)centreX;
    const float x0 = (float)tileX - centreX, y0 = (float)tileY - centreY;

    Texel acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int base = 0; base < projections; base += GROUP) {
        const int count = min(GROUP, projections - base);
        barrier(CLK_LOCAL_MEM_FENCE); // the previous group is no longer read
        if (tid < count) {
            const float4 g = geometry[base + tid];
            // Top-left pixel's position plus the corner offset of the tile.
            const int hm = (int)floor(fma(-y0, g.y, fma(x0, g.x, g.z)) + (TILE - 1) * g.w);
            first[tid] = hm;
            geo[tid] = (float4)(g.x, g.y, g.z - (float)hm, 0.0f);
            geoExact[tid] = exact[base + tid];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = tid; i < GROUP * CACHED; i += THREADS) {
            const int g = i / CACHED, k = i - g * CACHED;
            const int bin = first[g] + k;
            const size_t row = (size_t)(base + g) * bins;
            const Texel v = g < count && bin >= 0 && bin < bins ? loadTexel(sinogram, row + bin) : (Texel)0.0f;
            const Texel next =
                g < count && bin + 1 >= 0 && bin + 1 < bins ? loadTexel(sinogram, row + bin + 1) : (Texel)0.0f;
            cache[g][k][0] = v;
            cache[g][k][1] = next - v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (linear) {
            for (int g = 0; g < count; ++g) {
                const float4 c = geo[g];
                const float t = fma(x, c.x, c.z);
                for (int k = 0; k < 4; ++k) {
                    const float y = (float)(tileY + row0 + 8 * k) - centreY;
                    // Offset from h_m; >= 0 but for rounding (h_m came from other arithmetic).
                    const float s = fmax(fma(-y, c.y, t), 0.0f);
                    const float f = floor(s);
                    const int i = clamp((int)f, 0, CACHED - 2);
                    acc[k] += fma((Texel)(s - f), cache[g][i][1], cache[g][i][0]);
                }
            }
        } else {
            for (int g = 0; g < count; ++g) {
                const Exact4 c = geoExact[g];
                const int hm = first[g];
                for (int k = 0; k < 4; ++k) {
                    const ExactReal y = (ExactReal)(tileY + row0 + 8 * k) - (ExactReal)centreY;
                    // The bin as the reference picks it, then its place in the cache.
                    const int i = clamp((int)floor(exactPosition(xd, y, c) + (ExactReal)0.5) - hm, 0, CACHED - 1);
                    acc[k] += cache[g][i][0];
                }
            }
        }
    }

    for (int k = 0; k < 4; ++k) {
        const int gx = tileX - regionX + col, gy = tileY - regionY + row0 + 8 * k;
        if (gx >= 0 && gy >= 0 && gx < regionWidth && gy < regionHeight)
            storeSlices(slices, (size_t)gy * regionWidth + gx, sliceStride, validSlices, acc[k], scale);
    }
}
