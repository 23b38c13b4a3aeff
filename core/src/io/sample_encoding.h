// Internal: float values to the stored samples of a volume (float32,
// IEEE half, uint16/uint8 of a range) and back, for the HDF5 and TIFF
// writers and readVolume.
#pragma once

#include "tomo/volume_io.h"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace tomo::detail {

/// The IEEE 754 binary16 nearest to `value`, ties to even (what the F16C
/// instruction and C's _Float16 give); beyond the largest half (65504) by
/// half a unit or more (|value| >= 65520): +-inf; NaN stays NaN (quiet).
/// Written out because the compilers this project builds with do not all
/// offer _Float16 (Clang 14 on x86-64 does not).
inline std::uint16_t floatToHalf(float value) {
    constexpr std::uint32_t kHalfOverflow = 0x47800000u;  // 65536.0f: from here on the result is inf
    constexpr std::uint32_t kHalfNormalMin = 0x38800000u; // 2^-14: below, the result is subnormal or 0
    // Adding 0.5 lines the half's 10 fraction bits up at the bottom of a
    // float's, and the float addition rounds to nearest even for us.
    constexpr std::uint32_t kSubnormalMagic = 0x3f000000u; // 0.5f
    const std::uint32_t all = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t sign = (all >> 16) & 0x8000u;
    const std::uint32_t bits = all & 0x7fffffffu;
    // All three candidates, then a choice: no branch, so loops vectorise.
    const std::uint32_t special = bits > 0x7f800000u ? 0x7e00u : 0x7c00u; // NaN (quiet) or inf
    const std::uint32_t subnormal =
        std::bit_cast<std::uint32_t>(std::bit_cast<float>(bits) + std::bit_cast<float>(kSubnormalMagic)) -
        kSubnormalMagic;
    // Rebias the exponent (127 -> 15) and round the 13 dropped bits to
    // nearest, ties to even; a carry moves into the exponent (up to inf).
    const std::uint32_t normal = (bits + 0xc8000fffu + ((bits >> 13) & 1u)) >> 13; // 0xc8000000 = (15 - 127) << 23
    const std::uint32_t half = bits >= kHalfOverflow ? special : bits < kHalfNormalMin ? subnormal : normal;
    return static_cast<std::uint16_t>(half | sign);
}

/// The float of a half: exact (every half is a float). Without branches,
/// like floatToHalf.
inline float halfToFloat(std::uint16_t half) {
    const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
    const std::uint32_t exponent = (half >> 10) & 0x1fu;
    const std::uint32_t fraction = half & 0x3ffu;
    const float subnormal = static_cast<float>(fraction) * 0x1p-24f; // zero included
    const std::uint32_t normal = ((exponent + 112u) << 23) | (fraction << 13); // rebias 15 -> 127
    const std::uint32_t special = 0x7f800000u | (fraction << 13);             // inf, NaN
    const std::uint32_t magnitude =
        exponent == 0 ? std::bit_cast<std::uint32_t>(subnormal) : exponent == 0x1fu ? special : normal;
    return std::bit_cast<float>(magnitude | sign);
}

/// The largest finite half.
constexpr float kHalfMax = 65504.0f;

/// Turns float values into a volume's stored samples (native byte order),
/// counting what does not fit:
/// - float32: copied;
/// - float16: rounded to nearest even; finite values whose nearest half is
///   inf (|v| >= 65520) are stored as +-65504 and counted; inf and NaN kept;
/// - uint16/uint8: round((v - offset) / slope) clipped to 0..2^bits - 1
///   (counted below / above when more than half a step outside the range),
///   NaN stored as 0 (counted).
class SampleEncoder {
public:
    /// Throws InvalidArgument (see quantizationFor) for a quantised type
    /// with a bad range.
    SampleEncoder(OutputType type, float rangeMin, float rangeMax);

    OutputType type() const { return m_type; }
    std::size_t sampleBytes() const { return outputTypeBytes(m_type); }
    /// The mapping of uint16/uint8 (slope 1, offset 0 for float types).
    const Quantization& quantization() const { return m_quantization; }

    /// Encodes `values` into `out` (values.size() * sampleBytes() bytes),
    /// adding what was clipped to `counts`. Thread-safe (const).
    void encode(std::span<const float> values, std::byte* out, ClippedValues& counts) const;

private:
    OutputType m_type;
    Quantization m_quantization;
};

/// Stored samples read as float become values again: v = v * slope + offset
/// (in double, so the result is the float nearest to the exact value).
void restoreValues(std::span<float> values, double slope, double offset);

/// Halves (native byte order) to floats; `out` holds halves.size() values.
void halvesToFloats(std::span<const std::uint16_t> halves, float* out);

} // namespace tomo::detail
