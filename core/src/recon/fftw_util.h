// RAII wrappers for single-precision FFTW, and the one lock its planner needs.
//
// FFTW's planner (plan creation and destruction) is not thread-safe; executing
// a plan on new arrays (fftwf_execute_dft_*) is. Every plan in this library is
// created and destroyed under plannerMutex().
#pragma once

#include <fftw3.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>

namespace tomo::fftw {

inline std::mutex& plannerMutex() {
    static std::mutex mutex;
    return mutex;
}

struct PlanDeleter {
    void operator()(fftwf_plan plan) const {
        std::lock_guard lock(plannerMutex());
        fftwf_destroy_plan(plan);
    }
};
/// fftwf_plan is a pointer type; the unique_ptr owns what it points to.
using Plan = std::unique_ptr<std::remove_pointer_t<fftwf_plan>, PlanDeleter>;

struct FreeDeleter {
    void operator()(void* p) const { fftwf_free(p); }
};

/// SIMD-aligned FFTW buffer of `count` elements (float or std::complex<float>,
/// which FFTW documents as layout-compatible with fftwf_complex).
template <typename T>
std::unique_ptr<T[], FreeDeleter> allocate(std::size_t count) {
    void* p = fftwf_malloc(sizeof(T) * (count > 0 ? count : 1));
    if (!p) throw std::bad_alloc();
    return std::unique_ptr<T[], FreeDeleter>(static_cast<T*>(p));
}

template <typename T>
using Buffer = std::unique_ptr<T[], FreeDeleter>;

} // namespace tomo::fftw
