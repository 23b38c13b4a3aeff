// Internal: the flat-field line kernels (flat_field.cpp, built for AVX2 and
// AVX-512 with glibc's vector logf), shared by flatFieldRawRows and the
// PreprocessingStage. The arithmetic is the one the GPU kernel repeats
// (kernels/cuda/flat_field_kernels.cu):
//   t = min((raw - dark) * scale, FLT_MAX),  scale = 1 / (flat - dark) or 0.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tomo::detail {

/// out[c] = t of column c; bad[c] = 1 where t is not > 0, the raw value is
/// >= saturation (when saturation > 0) or dead[c] is not 0 (dead: one byte
/// per column, 0 or 1).
/// Returns the number of bad values, or -1 - c for the first column c whose
/// raw value is NaN or inf, or of float64 beyond float32's range (nothing is
/// written then).
template <class T>
long long transmissionLine(const T* raw, const float* dark, const float* scale, const std::uint8_t* dead,
                           float saturation, int columns, float* out, std::uint8_t* bad);

/// What correctLine did to a line.
struct LineOutcome {
    std::size_t clamped = 0;      ///< values set to the minimum transmission
    std::size_t interpolated = 0; ///< bad values (not dead pixels) interpolated
    long long firstNonFinite = -1; ///< column of the first NaN/inf raw value, or -1
};

/// The flat-field step of one line: transmissionLine, then the bad values
/// interpolated along the line (`interpolate`, tomo::interpolateMasked) or
/// set to kMinTransmission (with `interpolate`, a line without any good value
/// gets it everywhere), then -log when `takeLog`. `bad` is left holding the
/// bad mask. Nothing is written after a NaN/inf (firstNonFinite).
template <class T>
LineOutcome correctLine(const T* raw, const float* dark, const float* scale, const std::uint8_t* dead,
                        float saturation, bool interpolate, bool takeLog, int columns, float* out, std::uint8_t* bad);

/// values[i] = -log(values[i]) (values > 0).
void minusLog(float* values, std::size_t n);

/// scale[c] = 1 / (flat - dark) where flat - dark > 0, else 0, with flat =
/// (1 - weight) lower + weight upper (upper null: lower), dark null: 0.
void flatScales(const float* lower, const float* upper, float weight, const float* dark, int columns, float* scale);

} // namespace tomo::detail
