// Headerless raw projections, projection-major [angle][row][column], with a
// layout the user gives (it cannot be detected).
#include "io/file_checks.h"
#include "io/readers.h"
#include "tomo/error.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>

namespace tomo::detail {

namespace {

template <typename Unsigned>
Unsigned byteSwap(Unsigned v) {
    Unsigned out = 0;
    for (std::size_t i = 0; i < sizeof(Unsigned); ++i) {
        out = static_cast<Unsigned>((out << 8) | (v & 0xFF));
        v = static_cast<Unsigned>(v >> 8);
    }
    return out;
}

/// Converts `count` samples of type T (stored as Bits, swapped if asked) to float.
template <typename T, typename Bits>
void convert(const std::byte* in, std::size_t count, bool swap, float* out) {
    static_assert(sizeof(T) == sizeof(Bits));
    for (std::size_t i = 0; i < count; ++i) {
        Bits bits;
        std::memcpy(&bits, in + i * sizeof(T), sizeof(T));
        if (swap) bits = byteSwap(bits);
        out[i] = static_cast<float>(std::bit_cast<T>(bits));
    }
}

/// Converts `count` samples of `type` to float.
void convertSamples(const std::byte* in, std::size_t count, SampleType type, bool swap, float* out) {
    switch (type) {
    case SampleType::UInt8: convert<std::uint8_t, std::uint8_t>(in, count, false, out); break;
    case SampleType::UInt16: convert<std::uint16_t, std::uint16_t>(in, count, swap, out); break;
    case SampleType::Float32: convert<float, std::uint32_t>(in, count, swap, out); break;
    case SampleType::Float64: convert<double, std::uint64_t>(in, count, swap, out); break;
    }
}

class RawReader final : public DatasetReader {
public:
    RawReader(const std::filesystem::path& path, const RawLayout& layout, const OpenOptions& options)
        : m_layout(layout) {
        const auto field = [&](const char* name, int value) {
            if (value < 1)
                throw InvalidArgument("raw layout of " + path.string() + ": " + name + " = " +
                                      std::to_string(value) + ", expected at least 1");
        };
        field("projections", layout.projections);
        field("rows", layout.rows);
        field("columns", layout.columns);

        // Overflow-checked: a layout of huge numbers must be refused by size,
        // not wrap around to a small one.
        std::uintmax_t expected = sampleBytes(layout.type);
        bool overflow = false;
        for (const int n : {layout.projections, layout.rows, layout.columns})
            overflow = overflow || __builtin_mul_overflow(expected, static_cast<std::uintmax_t>(n), &expected);
        overflow = overflow || __builtin_add_overflow(expected, static_cast<std::uintmax_t>(layout.headerBytes), &expected);
        requireRegularFile(path, "a raw data file");
        const std::uintmax_t actual = fileSize(path);
        const std::string layoutText = std::to_string(layout.headerBytes) + " header bytes + " +
                                       std::to_string(layout.projections) + " x " + std::to_string(layout.rows) +
                                       " x " + std::to_string(layout.columns) + " " + sampleTypeName(layout.type);
        if (overflow)
            throw InvalidArgument("raw layout of " + path.string() + " (" + layoutText +
                                  ") is larger than any file can be");
        if (actual != expected)
            throw FormatError(path.string() + " has " + std::to_string(actual) + " bytes; the raw layout (" +
                              layoutText + ") expects " + std::to_string(expected) + " bytes" +
                              (actual < expected ? " (truncated file?)" : ""));
        m_in.open(path, std::ios::binary);
        if (!m_in) throw IoError(path.string() + ": cannot open for reading: " + std::strerror(errno));

        m_info.path = path;
        m_info.format = DatasetFormat::Raw;
        m_info.projections = layout.projections;
        m_info.rows = layout.rows;
        m_info.columns = layout.columns;
        m_info.sampleType = layout.type;
        m_info.angles = resolveAngles(m_info, {}, options);
        finishInfo(m_info, options);
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        const auto columns = static_cast<std::size_t>(m_info.columns);
        checkRowRequest(m_info, firstRow, rowCount, out.size(),
                        static_cast<std::size_t>(m_info.projections) * columns);
        const std::size_t sample = sampleBytes(m_layout.type);
        const std::size_t values = static_cast<std::size_t>(rowCount) * columns;
        m_buffer.resize(values * sample);
        for (int a = 0; a < m_info.projections; ++a) {
            readRowsOf(a, firstRow);
            // Rows of one projection land rowCount sinograms apart in `out`.
            for (int r = 0; r < rowCount; ++r) {
                float* dst = out.data() + (static_cast<std::size_t>(r) * m_info.projections + a) * columns;
                convertSamples(m_buffer.data() + static_cast<std::size_t>(r) * columns * sample, columns, m_layout.type,
                               swap(), dst);
            }
        }
    }

    void readProjection(int index, std::span<float> out) override {
        checkProjectionRequest(m_info, index, out.size());
        m_buffer.resize(out.size() * sampleBytes(m_layout.type));
        readRowsOf(index, 0);
        convertSamples(m_buffer.data(), out.size(), m_layout.type, swap(), out.data());
    }

    bool readMeanFlat(int, int, std::span<float>) override { return false; }
    bool readMeanDark(int, int, std::span<float>) override { return false; }

private:
    bool swap() const { return m_layout.bigEndian != (std::endian::native == std::endian::big); }

    /// Fills m_buffer (sized by the caller for the rows wanted) from row `firstRow` of projection `a` on.
    void readRowsOf(int a, int firstRow) {
        const std::uintmax_t offset =
            m_layout.headerBytes +
            ((static_cast<std::uintmax_t>(a) * m_info.rows + static_cast<std::uintmax_t>(firstRow)) * m_info.columns) *
                sampleBytes(m_layout.type);
        m_in.clear();
        m_in.seekg(static_cast<std::streamoff>(offset));
        m_in.read(reinterpret_cast<char*>(m_buffer.data()), static_cast<std::streamsize>(m_buffer.size()));
        if (m_in.gcount() != static_cast<std::streamsize>(m_buffer.size()))
            throw IoError(m_info.path.string() + ": read error at byte " + std::to_string(offset) + " (projection " +
                          std::to_string(a) + ")");
    }

    RawLayout m_layout;
    std::ifstream m_in;
    std::vector<std::byte> m_buffer;
};

} // namespace

std::unique_ptr<DatasetReader> openRawDataset(const std::filesystem::path& path, const OpenOptions& options) {
    if (!options.raw) throw InvalidArgument(path.string() + ": a raw file needs its layout (OpenOptions.raw)");
    return std::make_unique<RawReader>(path, *options.raw, options);
}

} // namespace tomo::detail
