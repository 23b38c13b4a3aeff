// TOMO_CPU_CLONES: compile a hot function for x86-64-v4 (AVX-512), v3 (AVX2)
// and baseline x86-64; the loader picks the best for the running CPU, so no
// -march flag is needed (and the binaries run on any x86-64).
#pragma once

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define TOMO_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TOMO_CPU_CLONES
#endif
