// Flat/dark + -log of raw rows (tomo/flat_field.h). One line (an angle of a
// row, contiguous in both layouts) at a time: convert, subtract, scale,
// clamp, log. Built with -ffast-math (CMakeLists) so GCC calls glibc's
// vector logf and the loop runs in AVX2/AVX-512 registers (about 1 G values/s
// per core); NaN/inf are therefore found by their bits, not by isfinite,
// which fast-math may fold away.
#include "tomo/preprocess.h"

#include "corrections/flat_field_lines.h"
#include "corrections/transmission.h"
#include "cpu_clones.h"
#include "tomo/corrections.h"
#include "tomo/error.h"
#include "tomo/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace tomo {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

/// True for NaN and +-inf: every exponent bit set.
inline bool notFinite(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits & 0x7f800000u) == 0x7f800000u;
}
inline bool notFinite(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull;
}

/// +inf becomes FLT_MAX (a transmission beyond float's range). By the bits
/// too: with fast-math, std::min(t, FLT_MAX) is folded away (GCC 13 does).
inline float capPositiveInfinity(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return bits == 0x7f800000u ? std::numeric_limits<float>::max() : v;
}

std::string describe(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits & 0x007fffffu) ? "NaN" : (bits >> 31 ? "-inf" : "+inf");
}

/// A float64 value that float32 cannot hold: it would become +-inf, and
/// every value of its line's slice would be wrong.
inline bool beyondFloat(double v) {
    return std::abs(v) > static_cast<double>(std::numeric_limits<float>::max());
}

/// Index of the first NaN/inf (or, of float64 data, value beyond float32's
/// range) of a line, or kNone.
template <class T>
std::size_t firstNotFinite(const T* values, std::size_t n) {
    if constexpr (std::is_integral_v<T>) {
        (void)values;
        (void)n;
        return kNone;
    } else {
        for (std::size_t i = 0; i < n; ++i)
            if constexpr (std::is_same_v<T, double>) {
                if (notFinite(values[i]) || beyondFloat(values[i])) return i;
            } else if (notFinite(values[i])) {
                return i;
            }
        return kNone;
    }
}

template <class T>
PreprocessStats correctAll(const RawRows& raw, const FlatFieldRows& field, std::span<float> out, WorkerPool* pool) {
    const T* values = reinterpret_cast<const T*>(raw.values.data());
    const std::size_t columns = static_cast<std::size_t>(raw.columns);
    const std::size_t pitch = static_cast<std::size_t>(raw.rowPitch > 0 ? raw.rowPitch : raw.rows);
    const int lines = raw.rows * raw.projections;
    std::atomic<std::size_t> clamped{0}, interpolated{0};
    std::atomic<std::size_t> firstBad{kNone}; // index into raw of the first NaN/inf found
    // Blocks of lines per task: few enough to spread, large enough to amortise the hand-out.
    const int perTask = std::max(1, 65536 / std::max(1, raw.columns));
    const int tasks = (lines + perTask - 1) / perTask;
    // The interpolated values' positions, per task: in task order they are in
    // row, angle, column order.
    std::vector<std::vector<PixelPosition>> listed(static_cast<std::size_t>(tasks));
    auto task = [&](int index, int) {
        std::vector<std::uint8_t> bad(columns);
        detail::LineOutcome sum;
        for (int line = index * perTask; line < std::min(lines, (index + 1) * perTask); ++line) {
            const int r = line / raw.projections, a = line % raw.projections; // output order
            const T* src = values + (static_cast<std::size_t>(a) * pitch + r) * columns;
            const std::size_t pixel = static_cast<std::size_t>(r) * columns;
            const detail::LineOutcome o = detail::correctLine(
                src, field.dark.data() + pixel, field.scale.data() + pixel, field.dead.data() + pixel,
                field.saturation, field.interpolate, true, raw.columns, out.data() + line * columns, bad.data());
            if (o.firstNonFinite >= 0) {
                const std::size_t where = static_cast<std::size_t>(src - values) + o.firstNonFinite;
                std::size_t seen = firstBad.load();
                while (where < seen && !firstBad.compare_exchange_weak(seen, where)) {}
                return;
            }
            sum.clamped += o.clamped;
            sum.interpolated += o.interpolated;
            auto& list = listed[static_cast<std::size_t>(index)];
            for (int c = 0; o.interpolated > 0 && c < raw.columns && list.size() < PreprocessStats::kListLimit; ++c)
                if (bad[c] && !field.dead[pixel + c]) list.push_back({raw.firstRow + r, a, c});
        }
        clamped += sum.clamped;
        interpolated += sum.interpolated;
    };
    if (pool) pool->parallelFor(tasks, task);
    else
        for (int i = 0; i < tasks; ++i) task(i, 0);

    if (const std::size_t bad = firstBad.load(); bad != kNone) {
        const std::size_t line = bad / columns;
        detail::throwNonFiniteValue(raw.source, static_cast<double>(values[bad]),
                                    raw.firstRow + static_cast<long long>(line % pitch), line / pitch, bad % columns);
    }
    PreprocessStats stats;
    stats.clamped = clamped.load();
    stats.badValueCount = interpolated.load();
    for (const auto& list : listed)
        for (const PixelPosition& p : list) {
            if (stats.badValues.size() >= PreprocessStats::kListLimit) return stats;
            stats.badValues.push_back(p);
        }
    return stats;
}

} // namespace

FlatFieldRows makeFlatFieldRows(std::span<const float> flat, std::span<const float> dark, int rows, int columns,
                                const std::string& source, int firstRow) {
    const std::size_t n = static_cast<std::size_t>(std::max(rows, 0)) * static_cast<std::size_t>(std::max(columns, 0));
    for (auto [field, name] : {std::pair{flat, "flat"}, std::pair{dark, "dark"}}) {
        if (!field.empty() && field.size() != n)
            throw InvalidArgument(source + ": the " + name + " field holds " + std::to_string(field.size()) +
                                  " values; expected rows x columns = " + std::to_string(n) + " or none");
        for (std::size_t i = 0; i < field.size(); ++i)
            if (notFinite(field[i]))
                throw DataError(source + ": " + name + " field is " + describe(field[i]) + " at row " +
                                std::to_string(firstRow + static_cast<long long>(i / columns)) + ", column " +
                                std::to_string(i % columns) + "; expected finite values");
    }
    FlatFieldRows f;
    f.rows = rows;
    f.columns = columns;
    f.dark.assign(n, 0.0f);
    f.scale.assign(n, 1.0f);
    f.dead.assign(n, 0);
    if (!dark.empty()) std::copy(dark.begin(), dark.end(), f.dark.begin());
    if (!flat.empty())
        for (int r = 0; r < rows; ++r) {
            const std::size_t offset = static_cast<std::size_t>(r) * columns;
            detail::flatScales(flat.data() + offset, nullptr, 0.0f, f.dark.data() + offset, columns,
                               f.scale.data() + offset);
        }
    return f;
}

RawRows rowsOf(const RawRows& raw, int first, int count) {
    const int pitch = raw.rowPitch > 0 ? raw.rowPitch : raw.rows;
    if (first < 0 || count < 1 || first > raw.rows - count)
        throw InvalidArgument(raw.source + ": rows " + std::to_string(first) + ".." +
                              std::to_string(static_cast<long long>(first) + count - 1) + " of a block of " +
                              std::to_string(raw.rows));
    RawRows part = raw;
    const std::size_t offset = static_cast<std::size_t>(first) * raw.columns * sampleBytes(raw.type);
    part.values = raw.values.subspan(offset);
    part.rows = count;
    part.rowPitch = pitch;
    part.firstRow = raw.firstRow + first;
    return part;
}

FlatFieldRows rowsOf(const FlatFieldRows& field, int first, int count) {
    if (first < 0 || count < 1 || first > field.rows - count)
        throw InvalidArgument("flat-field constants: rows " + std::to_string(first) + ".." +
                              std::to_string(static_cast<long long>(first) + count - 1) + " of " +
                              std::to_string(field.rows));
    const auto begin = static_cast<std::ptrdiff_t>(first) * field.columns;
    const auto end = begin + static_cast<std::ptrdiff_t>(count) * field.columns;
    FlatFieldRows part = field;
    part.rows = count;
    part.dark.assign(field.dark.begin() + begin, field.dark.begin() + end);
    part.scale.assign(field.scale.begin() + begin, field.scale.begin() + end);
    part.dead.assign(field.dead.begin() + begin, field.dead.begin() + end);
    return part;
}

PreprocessStats flatFieldRawRows(const RawRows& raw, const FlatFieldRows& field, std::span<float> out,
                                 WorkerPool* pool) {
    const std::size_t values = static_cast<std::size_t>(std::max(raw.rows, 0)) *
                               static_cast<std::size_t>(std::max(raw.projections, 0)) *
                               static_cast<std::size_t>(std::max(raw.columns, 0));
    const std::size_t pitch = static_cast<std::size_t>(raw.rowPitch > 0 ? raw.rowPitch : raw.rows);
    // The block spans (projections - 1) pitches plus the rows asked for.
    const std::size_t span = raw.projections < 1 ? 0
                                                 : ((static_cast<std::size_t>(raw.projections) - 1) * pitch +
                                                    static_cast<std::size_t>(std::max(raw.rows, 0))) *
                                                       static_cast<std::size_t>(std::max(raw.columns, 0));
    if (raw.rows < 1 || raw.projections < 1 || raw.columns < 1 || pitch < static_cast<std::size_t>(raw.rows) ||
        raw.values.size() < span * sampleBytes(raw.type) || out.size() != values || field.rows != raw.rows ||
        field.columns != raw.columns || field.dead.size() != field.dark.size())
        throw InvalidArgument(raw.source + ": flat-field correction of " + std::to_string(raw.rows) + " rows x " +
                              std::to_string(raw.projections) + " projections x " + std::to_string(raw.columns) +
                              " columns got " + std::to_string(raw.values.size()) + " bytes of " +
                              sampleTypeName(raw.type) + ", " + std::to_string(out.size()) + " output values and " +
                              std::to_string(field.rows) + "x" + std::to_string(field.columns) + " field constants");
    switch (raw.type) {
    case SampleType::UInt8: return correctAll<std::uint8_t>(raw, field, out, pool);
    case SampleType::UInt16: return correctAll<std::uint16_t>(raw, field, out, pool);
    case SampleType::Float32: return correctAll<float>(raw, field, out, pool);
    case SampleType::Float64: return correctAll<double>(raw, field, out, pool);
    }
    return {};
}

} // namespace tomo

namespace tomo::detail {

template <class T>
TOMO_CPU_CLONES long long transmissionLine(const T* __restrict raw, const float* __restrict dark,
                                           const float* __restrict scale, const std::uint8_t* __restrict dead,
                                           float saturation, int columns, float* __restrict out,
                                           std::uint8_t* __restrict bad) {
    if (const std::size_t c = firstNotFinite(raw, static_cast<std::size_t>(columns)); c != kNone)
        return -1 - static_cast<long long>(c);
    const std::uint8_t saturates = saturation > 0.0f; // loop-invariant: no branch in the loop
    long long count = 0;
    for (int c = 0; c < columns; ++c) {
        const float value = static_cast<float>(raw[c]);
        const float t = capPositiveInfinity((value - dark[c]) * scale[c]);
        const std::uint8_t isBad = static_cast<std::uint8_t>(!(t > 0.0f)) |
                                   (static_cast<std::uint8_t>(value >= saturation) & saturates) |
                                   dead[c]; // no branch: the loop stays vectorised
        out[c] = t;
        bad[c] = isBad;
        count += isBad;
    }
    return count;
}

template long long transmissionLine(const std::uint8_t*, const float*, const float*, const std::uint8_t*, float, int,
                                    float*, std::uint8_t*);
template long long transmissionLine(const std::uint16_t*, const float*, const float*, const std::uint8_t*, float, int,
                                    float*, std::uint8_t*);
template long long transmissionLine(const float*, const float*, const float*, const std::uint8_t*, float, int, float*,
                                    std::uint8_t*);
template long long transmissionLine(const double*, const float*, const float*, const std::uint8_t*, float, int, float*,
                                    std::uint8_t*);

template <class T>
LineOutcome correctLine(const T* raw, const float* dark, const float* scale, const std::uint8_t* dead,
                        float saturation, bool interpolate, bool takeLog, int columns, float* out, std::uint8_t* bad) {
    LineOutcome o;
    const long long badCount = transmissionLine(raw, dark, scale, dead, saturation, columns, out, bad);
    if (badCount < 0) {
        o.firstNonFinite = -1 - badCount;
        return o;
    }
    const std::size_t n = static_cast<std::size_t>(columns);
    if (badCount > 0 && interpolate && interpolateMasked({out, n}, {bad, n})) {
        for (std::size_t c = 0; c < n; ++c) o.interpolated += bad[c] && !dead[c];
    } else if (badCount > 0) {
        // Without interpolation the bad values, with it (no good value in the
        // line) the whole line, get the minimum transmission.
        for (std::size_t c = 0; c < n; ++c)
            if (bad[c] || interpolate) out[c] = kMinTransmission;
        o.clamped = interpolate ? n : static_cast<std::size_t>(badCount);
    }
    if (takeLog) minusLog(out, n);
    return o;
}

template LineOutcome correctLine(const std::uint8_t*, const float*, const float*, const std::uint8_t*, float, bool,
                                 bool, int, float*, std::uint8_t*);
template LineOutcome correctLine(const std::uint16_t*, const float*, const float*, const std::uint8_t*, float, bool,
                                 bool, int, float*, std::uint8_t*);
template LineOutcome correctLine(const float*, const float*, const float*, const std::uint8_t*, float, bool, bool,
                                 int, float*, std::uint8_t*);
template LineOutcome correctLine(const double*, const float*, const float*, const std::uint8_t*, float, bool, bool,
                                 int, float*, std::uint8_t*);

TOMO_CPU_CLONES void minusLog(float* __restrict values, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) values[i] = -std::log(values[i]);
}

TOMO_CPU_CLONES void flatScales(const float* __restrict lower, const float* __restrict upper, float weight,
                                const float* __restrict dark, int columns, float* __restrict scale) {
    for (int c = 0; c < columns; ++c) {
        const float flat = upper ? (1.0f - weight) * lower[c] + weight * upper[c] : lower[c];
        const float range = flat - (dark ? dark[c] : 0.0f);
        scale[c] = range > 0.0f ? 1.0f / range : 0.0f;
    }
}

} // namespace tomo::detail
