// Output types (volume_io.h) and the conversion of values to stored samples
// and back.
#include "io/sample_encoding.h"

#include "cpu_clones.h"
#include "tomo/error.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace tomo {

namespace {

constexpr std::array kOutputTypes{OutputType::Float32, OutputType::Float16, OutputType::UInt16, OutputType::UInt8};

std::string numberText(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", v);
    return text;
}

/// The largest stored integer of a quantised type.
double levels(OutputType type) {
    return type == OutputType::UInt16 ? 65535.0 : 255.0;
}

} // namespace

const char* outputTypeName(OutputType type) {
    switch (type) {
    case OutputType::Float32: return "float32";
    case OutputType::Float16: return "float16";
    case OutputType::UInt16: return "uint16";
    case OutputType::UInt8: return "uint8";
    }
    return "?";
}

OutputType parseOutputType(const std::string& name, const std::string& what) {
    for (OutputType t : kOutputTypes)
        if (name == outputTypeName(t)) return t;
    throw InvalidArgument(what + " '" + name + "': expected float32, float16, uint16 or uint8");
}

std::size_t outputTypeBytes(OutputType type) {
    switch (type) {
    case OutputType::Float32: return 4;
    case OutputType::Float16:
    case OutputType::UInt16: return 2;
    case OutputType::UInt8: return 1;
    }
    return 4;
}

bool isQuantized(OutputType type) {
    return type == OutputType::UInt16 || type == OutputType::UInt8;
}

Quantization quantizationFor(OutputType type, float rangeMin, float rangeMax) {
    if (!isQuantized(type)) return {};
    const double slope = (static_cast<double>(rangeMax) - rangeMin) / levels(type);
    if (!(std::isfinite(rangeMin) && std::isfinite(rangeMax) && rangeMin < rangeMax) ||
        !(static_cast<float>(slope) >= std::numeric_limits<float>::min()))
        throw InvalidArgument("value range [" + numberText(rangeMin) + ", " + numberText(rangeMax) + "] for " +
                              outputTypeName(type) +
                              ": expected finite numbers with min < max, further apart than 1e-35");
    return {static_cast<float>(slope), rangeMin};
}

namespace detail {

namespace {

// The loops below are written without branches and compiled for AVX-512,
// AVX2 and baseline x86-64 (picked at run time): they convert at memory
// speed instead of ~300 M values/s per thread.

TOMO_CPU_CLONES void encodeHalves(const float* __restrict values, std::size_t n, std::uint16_t* __restrict out,
                                  ClippedValues& counts) {
    constexpr std::uint32_t kClip = 0x477ff000u; // 65520: the nearest half of this and beyond is inf
    std::uint64_t below = 0, above = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t bits = std::bit_cast<std::uint32_t>(values[i]);
        const std::uint32_t magnitude = bits & 0x7fffffffu;
        // A finite value beyond the half range: the largest half of its sign.
        const bool clip = magnitude >= kClip && magnitude < 0x7f800000u;
        const bool negative = bits >> 31;
        below += clip & negative;
        above += clip & !negative;
        const std::uint16_t largest = negative ? 0xfbffu : 0x7bffu;
        out[i] = clip ? largest : floatToHalf(values[i]);
    }
    counts.below += below;
    counts.above += above;
}

template <typename T>
TOMO_CPU_CLONES void quantize(const float* __restrict values, std::size_t n, T* __restrict out, double slope,
                              double offset, ClippedValues& counts) {
    constexpr double top = std::numeric_limits<T>::max();
    // In double: the stored integer is the nearest to the exact
    // (v - offset) / slope, so the value read back is within half a slope.
    const double inverse = 1.0 / slope;
    std::uint64_t below = 0, above = 0, nan = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const float v = values[i];
        const double scaled = (static_cast<double>(v) - offset) * inverse;
        // Clipped = stored more than half a step from the value (values at
        // the range's ends, slightly off after rounding the slope, are not).
        below += scaled < -0.5;
        above += scaled > top + 0.5;
        nan += v != v;
        const double clipped = scaled > top ? top : scaled >= 0.0 ? scaled : 0.0; // NaN -> 0
        out[i] = static_cast<T>(static_cast<std::int32_t>(clipped + 0.5));
    }
    counts.below += below;
    counts.above += above;
    counts.nan += nan;
}

} // namespace

SampleEncoder::SampleEncoder(OutputType type, float rangeMin, float rangeMax)
    : m_type(type), m_quantization(quantizationFor(type, rangeMin, rangeMax)) {}

void SampleEncoder::encode(std::span<const float> values, std::byte* out, ClippedValues& counts) const {
    switch (m_type) {
    case OutputType::Float32: std::memcpy(out, values.data(), values.size_bytes()); return;
    case OutputType::Float16:
        encodeHalves(values.data(), values.size(), reinterpret_cast<std::uint16_t*>(out), counts);
        return;
    case OutputType::UInt16:
        quantize(values.data(), values.size(), reinterpret_cast<std::uint16_t*>(out), m_quantization.slope,
                 m_quantization.offset, counts);
        return;
    case OutputType::UInt8:
        quantize(values.data(), values.size(), reinterpret_cast<std::uint8_t*>(out), m_quantization.slope,
                 m_quantization.offset, counts);
        return;
    }
}

TOMO_CPU_CLONES void restoreValues(std::span<float> values, double slope, double offset) {
    for (float& v : values) v = static_cast<float>(static_cast<double>(v) * slope + offset);
}

TOMO_CPU_CLONES void halvesToFloats(std::span<const std::uint16_t> halves, float* out) {
    for (std::size_t i = 0; i < halves.size(); ++i) out[i] = halfToFloat(halves[i]);
}

} // namespace detail

} // namespace tomo
