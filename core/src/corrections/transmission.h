// Internal: what the stage's flat/dark step reports about bad input (the
// line kernels themselves are in flat_field_lines.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tomo::detail {

/// Throws DataError "<source>: value is NaN at row R, angle A, column C;
/// expected finite values" (+inf / -inf likewise; a finite value - float64
/// beyond float32's range - "value is 1e+300 at ...; expected values within
/// float32's range (|v| <= 3.4e+38)").
[[noreturn]] void throwNonFiniteValue(const std::string& source, double value, long long row, std::size_t angle,
                                      std::size_t column);

/// Throws DataError naming `source`, `what` ("flat field", "dark field"), the
/// row (firstRow + image row, clamped to [0, rows)) and the column when the
/// [row][column] image holds NaN or inf.
void checkReference(std::span<const float> image, int columns, const std::string& source, const char* what,
                    int firstRow, int rows);

} // namespace tomo::detail
