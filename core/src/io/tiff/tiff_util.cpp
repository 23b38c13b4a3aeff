#include "io/tiff/tiff_util.h"

#include "io/file_checks.h"
#include "io/readers.h"
#include "tomo/error.h"
#include "io/sample_encoding.h"

#include <algorithm>
#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>

#include <unistd.h>

namespace tomo::tiff {

namespace {

int keepError(TIFF*, void* userData, const char* module, const char* format, va_list args) {
    char text[512];
    std::vsnprintf(text, sizeof text, format, args);
    *static_cast<std::string*>(userData) = (module && *module ? std::string(module) + ": " : std::string()) + text;
    return 1; // handled: libtiff must not print it
}

int dropWarning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

/// Largest strip or tile decoded at once: a damaged header must not make us
/// allocate tens of gigabytes.
constexpr tmsize_t kMaxDecodedBytes = tmsize_t{1} << 30;

/// Bytes of one stored sample of the page.
std::size_t storedBytes(const PageLayout& layout) {
    return layout.float16 ? 2 : sampleBytes(layout.type);
}

/// `count` samples of native byte order (libtiff swaps) to float.
void toFloat(const unsigned char* in, const PageLayout& layout, std::size_t count, float* out) {
    if (layout.float16) {
        for (std::size_t i = 0; i < count; ++i) {
            std::uint16_t half;
            std::memcpy(&half, in + 2 * i, 2);
            out[i] = detail::halfToFloat(half);
        }
        return;
    }
    const auto each = [&](auto sample) {
        using T = decltype(sample);
        for (std::size_t i = 0; i < count; ++i) {
            std::memcpy(&sample, in + i * sizeof(T), sizeof(T));
            out[i] = static_cast<float>(sample);
        }
    };
    switch (layout.type) {
    case SampleType::UInt8: each(std::uint8_t{}); break;
    case SampleType::UInt16: each(std::uint16_t{}); break;
    case SampleType::Float32: each(float{}); break;
    case SampleType::Float64: each(double{}); break;
    }
}

/// Throws FormatError when the page's strips or tiles hold far less than
/// its declared size: a damaged header (a width of 2^31 in a 1 kB file) must
/// be refused before anything of that size is allocated. Compression of
/// detector images stays far below 1000:1.
void requirePlausibleStorage(const File& file, const PageLayout& layout, const std::string& where) {
    TIFF* t = file.get();
    const bool tiled = TIFFIsTiled(t) != 0;
    const std::uint32_t blocks = tiled ? TIFFNumberOfTiles(t) : TIFFNumberOfStrips(t);
    std::uint64_t* counts = nullptr;
    if (blocks == 0 || !TIFFGetField(t, tiled ? TIFFTAG_TILEBYTECOUNTS : TIFFTAG_STRIPBYTECOUNTS, &counts) || !counts)
        throw FormatError(where + ": no " + (tiled ? "tile" : "strip") + " sizes" + file.errorDetail());
    double stored = 0.0;
    for (std::uint32_t i = 0; i < blocks; ++i) stored += static_cast<double>(counts[i]);
    // libtiff replaces the sizes of uncompressed strips that look too small
    // by the image's own size ("bogus StripByteCounts"): the file's size
    // bounds them too.
    std::error_code error;
    const std::uintmax_t fileBytes = std::filesystem::file_size(file.path(), error);
    if (!error) stored = std::min(stored, static_cast<double>(fileBytes));
    const double declared = static_cast<double>(layout.width) * layout.height * static_cast<double>(storedBytes(layout));
    std::uint16_t compression = COMPRESSION_NONE;
    TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &compression);
    const double kMaxCompression = compression == COMPRESSION_NONE ? 1.0 : 1000.0;
    if (stored * kMaxCompression < declared)
        throw FormatError(where + " declares " + describe(layout) + " (" + detail::formatBytes(declared) +
                          ") but its " + (tiled ? "tiles" : "strips") + " hold only " + detail::formatBytes(stored) +
                          ": damaged or truncated");
}

} // namespace

File::File(std::filesystem::path path, const char* mode) : m_path(std::move(path)), m_writing(mode[0] != 'r') {
    TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
    TIFFOpenOptionsSetErrorHandlerExtR(options, keepError, &m_lastError);
    TIFFOpenOptionsSetWarningHandlerExtR(options, dropWarning, nullptr);
    m_tiff = TIFFOpenExt(m_path.c_str(), mode, options);
    TIFFOpenOptionsFree(options);
    if (!m_tiff && m_writing) throw IoError(m_path.string() + ": cannot create the TIFF file" + errorDetail());
    // The system refused it (gone, no permission: libtiff reports that as
    // an error too), or libtiff says why the content is at fault.
    if (!m_tiff && ::access(m_path.c_str(), R_OK) != 0)
        throw IoError(m_path.string() + ": cannot open the TIFF file: " + std::strerror(errno));
    if (!m_tiff && hadError()) throw FormatError(m_path.string() + ": not a readable TIFF" + errorDetail());
    if (!m_tiff) throw IoError(m_path.string() + ": cannot open the TIFF file: " + std::strerror(errno));
}

File::~File() {
    if (m_tiff) TIFFClose(m_tiff);
}

std::string File::errorDetail() const { return m_lastError.empty() ? std::string() : " (libtiff: " + m_lastError + ")"; }

bool File::close() {
    if (!m_tiff) return true;
    const bool flushed = !m_writing || TIFFFlush(m_tiff) != 0;
    TIFFClose(m_tiff);
    m_tiff = nullptr;
    return flushed;
}

PageLayout pageLayout(const File& file, int page, bool acceptFloat16) {
    TIFF* t = file.get();
    const std::string where = file.path().string() + " (page " + std::to_string(page) + ")";
    std::uint32_t width = 0, height = 0;
    std::uint16_t samplesPerPixel = 1, bits = 1, format = SAMPLEFORMAT_UINT;
    if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &width) || !TIFFGetField(t, TIFFTAG_IMAGELENGTH, &height) || width == 0 ||
        height == 0)
        throw FormatError(where + ": no image size" + file.errorDetail());
    TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &samplesPerPixel);
    TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &format);
    if (samplesPerPixel != 1)
        throw FormatError(where + " has " + std::to_string(samplesPerPixel) +
                          " samples per pixel; expected a grayscale image (1)");
    if (width > static_cast<std::uint32_t>(std::numeric_limits<int>::max()) ||
        height > static_cast<std::uint32_t>(std::numeric_limits<int>::max()))
        throw FormatError(where + " declares " + std::to_string(width) + " x " + std::to_string(height) +
                          " pixels; expected a width and height below 2^31");
    PageLayout layout{static_cast<int>(width), static_cast<int>(height), SampleType::UInt16};
    if (format == SAMPLEFORMAT_UINT && bits == 8) layout.type = SampleType::UInt8;
    else if (format == SAMPLEFORMAT_UINT && bits == 16) layout.type = SampleType::UInt16;
    else if (format == SAMPLEFORMAT_IEEEFP && bits == 32) layout.type = SampleType::Float32;
    else if (format == SAMPLEFORMAT_IEEEFP && bits == 64) layout.type = SampleType::Float64;
    else if (format == SAMPLEFORMAT_IEEEFP && bits == 16 && acceptFloat16) {
        layout.type = SampleType::Float32;
        layout.float16 = true;
    } else
        throw FormatError(where + " has " + std::to_string(bits) + "-bit " +
                          (format == SAMPLEFORMAT_IEEEFP ? "float" : format == SAMPLEFORMAT_INT ? "signed" : "unsigned") +
                          " samples; expected uint8, uint16, " + (acceptFloat16 ? "float16, " : "") +
                          "float32 or float64");
    requirePlausibleStorage(file, layout, where);
    return layout;
}

std::string describe(const PageLayout& layout) {
    return std::to_string(layout.width) + " x " + std::to_string(layout.height) + " " +
           (layout.float16 ? "float16" : sampleTypeName(layout.type));
}

namespace {

/// Decodes the strips or tiles holding rows [firstRow, firstRow + rowCount)
/// and hands each piece of a row to put(samples, count, index): `count`
/// stored samples (native byte order) that go at sample `index` of the
/// rows, [row][column].
template <class Put>
void decodeRows(const File& file, const PageLayout& layout, int firstRow, int rowCount, Put&& put) {
    TIFF* t = file.get();
    const std::size_t bytes = storedBytes(layout);
    const auto width = static_cast<std::uint32_t>(layout.width);
    const auto rowEnd = static_cast<std::uint32_t>(firstRow + rowCount);
    const auto first = static_cast<std::uint32_t>(firstRow);
    const auto fail = [&](const char* what, std::uint32_t index) {
        throw FormatError(file.path().string() + ": cannot decode " + what + " " + std::to_string(index) +
                          file.errorDetail());
    };
    if (TIFFIsTiled(t)) {
        std::uint32_t tileWidth = 0, tileHeight = 0;
        TIFFGetField(t, TIFFTAG_TILEWIDTH, &tileWidth);
        TIFFGetField(t, TIFFTAG_TILELENGTH, &tileHeight);
        const tmsize_t tileBytes = TIFFTileSize(t); // 0 when the tile size overflows
        if (tileWidth == 0 || tileHeight == 0 || tileBytes <= 0 || tileBytes > kMaxDecodedBytes) fail("tile size", 0);
        std::vector<unsigned char> tile(static_cast<std::size_t>(tileBytes));
        for (std::uint32_t ty = first / tileHeight * tileHeight; ty < rowEnd; ty += tileHeight)
            for (std::uint32_t tx = 0; tx < width; tx += tileWidth) {
                const std::uint32_t index = TIFFComputeTile(t, tx, ty, 0, 0);
                if (TIFFReadEncodedTile(t, index, tile.data(), static_cast<tmsize_t>(tile.size())) < 0)
                    fail("tile", index);
                const std::uint32_t columns = std::min(tileWidth, width - tx);
                for (std::uint32_t y = std::max(ty, first); y < std::min(ty + tileHeight, rowEnd); ++y)
                    put(tile.data() + (static_cast<std::size_t>(y - ty) * tileWidth) * bytes, columns,
                        static_cast<std::size_t>(y - first) * width + tx);
            }
    } else {
        std::uint32_t rowsPerStrip = 0;
        TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rowsPerStrip);
        rowsPerStrip = std::clamp<std::uint32_t>(rowsPerStrip, 1, static_cast<std::uint32_t>(layout.height));
        const tmsize_t stripBytes = TIFFStripSize(t); // 0 when the size overflows
        if (stripBytes <= 0 || stripBytes > kMaxDecodedBytes)
            throw FormatError(file.path().string() + ": strips of " + std::to_string(rowsPerStrip) + " rows x " +
                              std::to_string(layout.width) + " columns are " +
                              (stripBytes <= 0 ? std::string("too large to address")
                                               : detail::formatBytes(static_cast<double>(stripBytes))) +
                              " each; expected strips under " + detail::formatBytes(kMaxDecodedBytes));
        std::vector<unsigned char> strip(static_cast<std::size_t>(stripBytes));
        for (std::uint32_t s = first / rowsPerStrip; s * rowsPerStrip < rowEnd; ++s) {
            const std::uint32_t stripFirst = s * rowsPerStrip;
            const std::uint32_t stripEnd = std::min(stripFirst + rowsPerStrip, static_cast<std::uint32_t>(layout.height));
            const tmsize_t got = TIFFReadEncodedStrip(t, s, strip.data(), static_cast<tmsize_t>(strip.size()));
            if (got < static_cast<tmsize_t>(static_cast<std::size_t>(stripEnd - stripFirst) * width * bytes))
                fail("strip", s);
            for (std::uint32_t y = std::max(stripFirst, first); y < std::min(stripEnd, rowEnd); ++y)
                put(strip.data() + static_cast<std::size_t>(y - stripFirst) * width * bytes, width,
                    static_cast<std::size_t>(y - first) * width);
        }
    }
}

} // namespace

void readRows(const File& file, const PageLayout& layout, int firstRow, int rowCount, std::span<float> out) {
    decodeRows(file, layout, firstRow, rowCount, [&](const unsigned char* samples, std::size_t count, std::size_t at) {
        toFloat(samples, layout, count, out.data() + at);
    });
}

void readStoredRows(const File& file, const PageLayout& layout, int firstRow, int rowCount, std::span<std::byte> out) {
    const std::size_t bytes = storedBytes(layout);
    decodeRows(file, layout, firstRow, rowCount, [&](const unsigned char* samples, std::size_t count, std::size_t at) {
        std::memcpy(out.data() + at * bytes, samples, count * bytes);
    });
}

void writePage(File& file, int width, int height, std::span<std::byte> samples, OutputType type,
               const std::string& description) {
    TIFF* t = file.get();
    const auto bytes = outputTypeBytes(type);
    const bool isFloat = type == OutputType::Float32 || type == OutputType::Float16;
    const std::size_t rowBytes = static_cast<std::size_t>(width) * bytes;
    // Strips of about 1 MiB: few write calls, and a reader of a few rows
    // decodes little more than those.
    const auto rowsPerStrip = static_cast<std::uint32_t>(std::clamp<std::size_t>((std::size_t{1} << 20) / rowBytes, 1,
                                                                                 static_cast<std::size_t>(height)));
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(width));
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(height));
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, static_cast<std::uint16_t>(1));
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(8 * bytes));
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT,
                 static_cast<std::uint16_t>(isFloat ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT));
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, static_cast<std::uint16_t>(PHOTOMETRIC_MINISBLACK));
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, static_cast<std::uint16_t>(PLANARCONFIG_CONTIG));
    TIFFSetField(t, TIFFTAG_COMPRESSION, static_cast<std::uint16_t>(COMPRESSION_NONE));
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, rowsPerStrip);
    if (!description.empty()) TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, description.c_str());

    for (std::uint32_t strip = 0, row = 0; row < static_cast<std::uint32_t>(height); ++strip, row += rowsPerStrip) {
        const std::size_t rows = std::min<std::size_t>(rowsPerStrip, static_cast<std::size_t>(height) - row);
        errno = 0; // libtiff's message says "write error"; the system says why (disk full)
        const auto stripBytes = static_cast<tmsize_t>(rows * rowBytes);
        if (TIFFWriteEncodedStrip(t, strip, samples.data() + row * rowBytes, stripBytes) < 0)
            throw IoError(file.path().string() + ": cannot write rows " + std::to_string(row) + ".." +
                          std::to_string(row + rows - 1) + (errno ? std::string(": ") + std::strerror(errno) : "") +
                          file.errorDetail());
    }
    if (!TIFFWriteDirectory(t)) throw IoError(file.path().string() + ": cannot write the page" + file.errorDetail());
}

bool sameLayout(const PageLayout& a, const PageLayout& b) {
    return a.width == b.width && a.height == b.height && a.type == b.type;
}

std::vector<std::filesystem::path> numberedSeries(std::vector<std::filesystem::path> files,
                                                  const std::filesystem::path& dir) {
    std::map<unsigned long long, std::filesystem::path> byNumber;
    std::string prefix;
    for (const auto& file : files) {
        const std::string stem = file.stem().string();
        const auto digits = stem.find_last_not_of("0123456789") + 1; // npos + 1 == 0: all digits
        unsigned long long number = 0;
        const auto [end, error] = std::from_chars(stem.data() + digits, stem.data() + stem.size(), number);
        if (digits == stem.size() || error != std::errc())
            throw FormatError(dir.string() + ": " + file.filename().string() +
                              " does not end in a number; expected files named <prefix><number>.tif");
        const std::string filePrefix = stem.substr(0, digits);
        if (byNumber.empty()) prefix = filePrefix;
        else if (filePrefix != prefix)
            throw FormatError(dir.string() + ": " + file.filename().string() + " does not share the prefix '" + prefix +
                              "' of " + byNumber.begin()->second.filename().string() +
                              "; expected one numbered series of TIFFs");
        if (!byNumber.emplace(number, file).second)
            throw FormatError(dir.string() + ": " + file.filename().string() + " and " +
                              byNumber[number].filename().string() + " have the same number " + std::to_string(number));
    }
    // The step is the greatest common divisor of the differences: 0, 2, 4
    // is a series, 0, 1, 3 misses 2.
    unsigned long long step = 0;
    for (auto it = byNumber.begin(); std::next(it) != byNumber.end(); ++it)
        step = std::gcd(step, std::next(it)->first - it->first);
    if (step > 0) {
        const unsigned long long first = byNumber.begin()->first, last = byNumber.rbegin()->first;
        const unsigned long long expected = (last - first) / step + 1;
        if (expected != byNumber.size()) {
            std::string missing;
            int shown = 0;
            for (unsigned long long n = first; n <= last && shown < 5; n += step)
                if (!byNumber.contains(n)) missing += (shown++ ? ", " : "") + std::to_string(n);
            const unsigned long long count = expected - byNumber.size();
            throw FormatError(dir.string() + ": the series " + byNumber.begin()->second.filename().string() + " ... " +
                              byNumber.rbegin()->second.filename().string() + " misses number" +
                              (count > 1 ? "s " : " ") + missing + (count > 5 ? ", ..." : "") + " (" +
                              std::to_string(count) + " file" + (count > 1 ? "s" : "") +
                              "); expected an unbroken numbered series (a missing projection would shift every "
                              "later angle)");
        }
    }
    std::vector<std::filesystem::path> sorted;
    for (auto& [number, file] : byNumber) sorted.push_back(std::move(file));
    return sorted;
}

} // namespace tomo::tiff
