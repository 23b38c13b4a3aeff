// TOMO_HD: a function the CPU and the CUDA code compile alike (recon/joseph.h,
// recon/divergent_ray.h), so a sample is the same on both.
#pragma once

#if defined(__CUDACC__)
#define TOMO_HD __host__ __device__ __forceinline__
#else
#define TOMO_HD inline
#endif
