// "ocl-tex-optimized": seed 004 Algorithm 1 with the constants in local
// memory (seed 000 Algorithm 5), the twin of the CUDA tex-optimized. A
// work-group of 256 items computes a 16x16 tile: item bits 0-5 pick a pixel
// of a 16x4 strip (Z-order 4x4 squares), bits 6-7 the projection phase
// (p % 4); each item sums 4 strips (rows +4q) over its quarter of the
// projections, and the 4 phases are added through local memory.
#define TILE 16
#define THREADS 256
#define CHUNK 256 // projections staged in local memory at a time (one per item)

inline int stripX(int t) { return ((t >> 4) & 3) * 4 + ((t >> 2) & 1) * 2 + (t & 1); }
inline int stripY(int t) { return ((t >> 3) & 1) * 2 + ((t >> 1) & 1); }

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void texOptimized(__read_only image2d_t sinogram, sampler_t sampler, __global const float4* geometry,
                  __global const Exact4* exact, int projections, int snap, int regionX, int regionY,
                  int regionWidth, int regionHeight, float centreX, float centreY, __global float* slices,
                  int sliceStride, int validSlices, float scale) {
    __local float4 geo[CHUNK];
    __local Exact4 geoExact[CHUNK];
    __local Texel partial[4][64];
    __local Texel tile[TILE][TILE];

    const int tid = get_local_id(0);
    const int phase = tid >> 6;
    const int ix = regionX + (int)get_group_id(0) * TILE + stripX(tid);
    const int iy0 = regionY + (int)get_group_id(1) * TILE + stripY(tid);
    const float x = (float)ix - centreX;
    const ExactReal xd = (ExactReal)ix - (ExactReal)centreX;
    const ExactReal yd = (ExactReal)iy0 - (ExactReal)centreY;

    Texel acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int base = 0; base < projections; base += CHUNK) {
        const int count = min(CHUNK, projections - base);
        barrier(CLK_LOCAL_MEM_FENCE); // the previous chunk is no longer read
        if (tid < count) {
            if (snap) geoExact[tid] = exact[base + tid];
            else geo[tid] = geometry[base + tid];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (snap) {
            for (int i = phase; i < count; i += 4) {
                const Exact4 g = geoExact[i];
                const float row = (float)(base + i) + 0.5f;
                for (int q = 0; q < 4; ++q)
                    acc[q] += TEXEL_OF(read_imagef(sinogram, sampler,
                                                   (float2)(snappedCoordinate(exactPosition(xd, yd + 4 * q, g)), row)));
            }
        } else {
            for (int i = phase; i < count; i += 4) {
                const float4 g = geo[i]; // cos, sin, axis_p
                const float row = (float)(base + i) + 0.5f;
                const float t = fma(x, g.x, g.z) + 0.5f;
                for (int q = 0; q < 4; ++q) {
                    const float y = (float)(iy0 + 4 * q) - centreY;
                    acc[q] += TEXEL_OF(read_imagef(sinogram, sampler, (float2)(fma(-y, g.y, t), row)));
                }
            }
        }
    }

    // The 4 phases of each pixel of strip q meet in local memory.
    for (int q = 0; q < 4; ++q) {
        barrier(CLK_LOCAL_MEM_FENCE);
        partial[phase][tid & 63] = acc[q];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (tid < 64)
            tile[stripY(tid) + 4 * q][stripX(tid)] =
                partial[0][tid] + partial[1][tid] + partial[2][tid] + partial[3][tid];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Coalesced writes: item = pixel of the tile in row-major order.
    const int gx = (int)get_group_id(0) * TILE + (tid & 15);
    const int gy = (int)get_group_id(1) * TILE + (tid >> 4);
    if (gx < regionWidth && gy < regionHeight)
        storeSlices(slices, (size_t)gy * regionWidth + gx, sliceStride, validSlices, tile[tid >> 4][tid & 15], scale);
}
