// Internal: the flat/dark correction of one line (one detector row of one
// projection), shared by normalizeAndLog and PreprocessingStage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tomo::detail {

/// Transmission given to values that have none (raw <= dark, flat <= dark,
/// dead pixels) when they are not interpolated: -ln(1e-5) = 11.5, just
/// beyond what 16-bit counts can measure (1/65535), so a clamped value is an
/// outlier but a bounded one.
constexpr double kMinTransmission = 1e-5;

/// One line's inputs; null flat / dark pointers mean none.
struct FlatFieldLine {
    const float* raw = nullptr;
    const float* flatLower = nullptr; ///< flat of the group before (or the only flat)
    const float* flatUpper = nullptr; ///< flat of the group after; null = flatLower alone
    double weight = 0.0;              ///< weight of flatUpper
    const float* dark = nullptr;
    const std::uint8_t* dead = nullptr; ///< per column: no usable flat (may be null)
    double saturation = 0.0;            ///< raw >= saturation is bad; 0 = no limit
    int columns = 0;
};

/// out[c] = (raw - dark) / (flat - dark), computed in double and clamped to
/// float's normal range (so its log is finite for any finite input), flat =
/// (1 - weight) flatLower + weight flatUpper.
/// Sets bad[c] = 1 where the transmission is not > 0, the flat is not above
/// the dark, the raw value is saturated or the pixel is dead (out[c] is then
/// undefined), else 0. Returns the number of bad values, or -1 - c for the
/// first column c whose raw value is NaN or inf.
long long transmissionLine(const FlatFieldLine& line, float* out, std::uint8_t* bad);

/// Throws DataError "<source>: value is NaN at row R, angle A, column C;
/// expected finite values" (+inf / -inf likewise).
[[noreturn]] void throwNonFiniteValue(const std::string& source, float value, long long row, std::size_t angle,
                                      std::size_t column);

/// Throws DataError naming `source`, `what` ("flat field", "dark field"), the
/// row (firstRow + image row, clamped to [0, rows)) and the column when the
/// [row][column] image holds NaN or inf.
void checkReference(std::span<const float> image, int columns, const std::string& source, const char* what,
                    int firstRow, int rows);

} // namespace tomo::detail
