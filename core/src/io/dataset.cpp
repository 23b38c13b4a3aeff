// Format detection, openDataset dispatch, angle/offset files, and the helpers
// every reader shares.
#include "tomo/dataset.h"

#include "io/file_checks.h"
#include "io/readers.h"
#include "tomo/error.h"
#include "tomo/worker_pool.h"

#include <algorithm>
#include <cstdint>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numbers>
#include <sstream>
#include <system_error>
#include <thread>


namespace tomo {

const char* sampleTypeName(SampleType t) {
    switch (t) {
    case SampleType::UInt8: return "uint8";
    case SampleType::UInt16: return "uint16";
    case SampleType::Float32: return "float32";
    case SampleType::Float64: return "float64";
    }
    return "unknown";
}

const char* formatName(DatasetFormat f) {
    switch (f) {
    case DatasetFormat::DXchange: return "DXchange (HDF5)";
    case DatasetFormat::NXtomo: return "NXtomo (HDF5)";
    case DatasetFormat::SinogramHdf5: return "sinogram (HDF5)";
    case DatasetFormat::TiffDirectory: return "directory of TIFFs";
    case DatasetFormat::MultiPageTiff: return "multi-page TIFF";
    case DatasetFormat::Raw: return "raw";
    case DatasetFormat::SinogramTiff: return "sinogram (TIFF)";
    case DatasetFormat::Matlab: return "MATLAB v7.3 (HDF5)";
    case DatasetFormat::Stream: return "stream";
    }
    return "unknown";
}

const char* angleUnitsName(AngleUnits units) {
    switch (units) {
    case AngleUnits::Auto: return "auto";
    case AngleUnits::Degrees: return "degrees";
    case AngleUnits::Radians: return "radians";
    }
    return "unknown";
}

namespace {

constexpr double kDegree = std::numbers::pi / 180.0;
/// Angles beyond this many degrees (about 2800 turns) are not a scan: their
/// double values would have lost the precision a rotation needs.
constexpr double kMaxAbsDegrees = 1e6;

std::string formatDegrees(double radians) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", radians / kDegree);
    return text;
}

/// Throws FormatError naming `source` when the angles cannot be a scan:
/// all equal, or (when `checkUnits`) numbers that look like radians read as
/// degrees.
void checkAngleSpan(const std::vector<double>& angles, const std::string& source, bool checkUnits) {
    const auto [lo, hi] = std::minmax_element(angles.begin(), angles.end());
    if (*lo == *hi)
        throw FormatError(source + ": all " + std::to_string(angles.size()) + " angles are " + formatDegrees(*lo) +
                          " degrees; expected angles spread over the rotation");
    // Read as degrees, radians of a half or full turn span at most 2 pi
    // "degrees": a scan that turned 3 or 6 degrees does not exist.
    if (checkUnits && *hi - *lo <= 2.0 * std::numbers::pi * kDegree * (1.0 + 1e-9))
        throw FormatError(source + ": the " + std::to_string(angles.size()) + " angles span only " +
                          formatDegrees(*lo) + ".." + formatDegrees(*hi) +
                          " degrees, which look like radians; state their units (--angle-units radians, or "
                          "--angle-units degrees to use them as they are)");
}

} // namespace

std::size_t sampleBytes(SampleType t) {
    switch (t) {
    case SampleType::UInt8: return 1;
    case SampleType::UInt16: return 2;
    case SampleType::Float32: return 4;
    case SampleType::Float64: return 8;
    }
    return 0;
}

namespace detail {

int readerThreads() {
    constexpr int kReadQueue = 8;
    return std::max(kReadQueue, static_cast<int>(std::thread::hardware_concurrency()));
}

void requireMemory(double bytes, const std::filesystem::path& path, const std::string& what, double budget) {
    if (budget > 0.0) {
        if (bytes > budget)
            throw OutOfMemory(path.string() + ": " + what + " needs " + formatBytes(bytes) + ", more than the " +
                              formatBytes(budget) + " allowed");
        return;
    }
    const auto memory = static_cast<double>(physicalMemoryBytes());
    if (memory > 0 && bytes > memory)
        throw OutOfMemory(path.string() + ": " + what + " needs " + formatBytes(bytes) + " but this machine has " +
                          formatBytes(memory) + " of memory");
}

FileKind sniffFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(path.string() + ": cannot open for reading: " + std::strerror(errno));
    std::array<char, 128> head{};
    in.read(head.data(), head.size());
    const auto got = in.gcount();
    if (got >= 4) {
        // Classic TIFF (42) and BigTIFF (43), both byte orders.
        if (std::memcmp(head.data(), "II*\0", 4) == 0 || std::memcmp(head.data(), "MM\0*", 4) == 0 ||
            std::memcmp(head.data(), "II+\0", 4) == 0 || std::memcmp(head.data(), "MM\0+", 4) == 0)
            return FileKind::Tiff;
    }
    // MATLAB writes a 128-byte text header; v7.3 files are HDF5 after a
    // 512-byte user block, v4/v5 files are MATLAB's own format.
    const bool matlab = got >= 10 && std::memcmp(head.data(), "MATLAB ", 7) == 0;
    // The HDF5 superblock sits at 0 or, after a user block, at 512, 1024, 2048, ...
    static constexpr char signature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return FileKind::Other;
    std::array<char, 8> probe{};
    for (std::uintmax_t offset = 0; offset + 8 <= size; offset = offset == 0 ? 512 : offset * 2) {
        in.clear();
        in.seekg(static_cast<std::streamoff>(offset));
        in.read(probe.data(), probe.size());
        if (in.gcount() == 8 && std::memcmp(probe.data(), signature, 8) == 0)
            return matlab ? FileKind::MatlabHdf5 : FileKind::Hdf5;
    }
    return matlab ? FileKind::MatlabOld : FileKind::Other;
}

std::vector<double> resolveAngles(DatasetInfo& info, const StoredAngles& stored, const OpenOptions& options) {
    if (info.projections < 2)
        throw FormatError(info.path.string() + " has " + std::to_string(info.projections) +
                          " projection; expected at least 2 to reconstruct");
    if (options.anglesLines && !options.anglesFile)
        throw InvalidArgument("angle entries " + std::to_string(options.anglesLines->first) + "+" +
                              std::to_string(options.anglesLines->count) + " for " + info.path.string() +
                              ": they select lines of an angles file, and none is given");
    std::vector<double> angles;
    std::string source;
    bool checkUnits = options.angleUnits == AngleUnits::Auto;
    if (options.anglesFile) {
        const AngleUnits units = options.angleUnits == AngleUnits::Radians ? AngleUnits::Radians : AngleUnits::Degrees;
        std::optional<LineRange> lines = options.anglesLines;
        angles = readAnglesFile(*options.anglesFile, units, lines);
        if (!lines && angles.size() > static_cast<std::size_t>(info.projections)) {
            // The file lists every frame of the scan, darks and flats too.
            lines = findProjectionAngles(angles, info.projections);
            if (lines) angles = readAnglesFile(*options.anglesFile, units, lines);
        }
        source = options.anglesFile->string();
        if (lines)
            source += " (entries " + std::to_string(lines->first) + " to " +
                      std::to_string(lines->first + static_cast<int>(angles.size()) - 1) + ")";
        info.anglesFile = *options.anglesFile;
        info.anglesLines = lines;
    } else if (!stored.values.empty()) {
        const AngleUnits units = options.angleUnits != AngleUnits::Auto ? options.angleUnits
                                                                       : stored.statedUnits.value_or(AngleUnits::Degrees);
        checkUnits = checkUnits && units == AngleUnits::Degrees;
        source = stored.source;
        angles = stored.values;
        for (std::size_t i = 0; i < angles.size(); ++i) {
            if (!std::isfinite(angles[i]))
                throw FormatError(source + ": angle " + std::to_string(i) + " is not a finite number");
            if (units == AngleUnits::Degrees) angles[i] *= kDegree;
            if (!(std::abs(angles[i]) <= kMaxAbsDegrees * kDegree))
                throw FormatError(source + ": angle " + std::to_string(i) + " is " + formatDegrees(angles[i]) +
                                  " degrees; expected at most " + formatDegrees(kMaxAbsDegrees * kDegree) +
                                  " in magnitude");
        }
    } else {
        if (!std::isfinite(options.angleRangeDegrees) || options.angleRangeDegrees <= 0.0 ||
            options.angleRangeDegrees > 3600.0)
            throw InvalidArgument("angle range " + formatDegrees(options.angleRangeDegrees * kDegree) +
                                  " degrees: expected a number in (0, 3600]");
        const double step = options.angleRangeDegrees / info.projections * kDegree;
        angles.resize(static_cast<std::size_t>(info.projections));
        for (std::size_t i = 0; i < angles.size(); ++i) angles[i] = static_cast<double>(i) * step;
        return angles;
    }
    if (angles.size() != static_cast<std::size_t>(info.projections))
        throw FormatError(source + " holds " + std::to_string(angles.size()) + " angles but " +
                          info.path.string() + " has " + std::to_string(info.projections) +
                          " projections: expected one angle per projection" +
                          (options.anglesFile && !options.anglesLines && angles.size() > static_cast<std::size_t>(info.projections)
                               ? " (or the entries of the file that belong to the projections)"
                               : ""));
    checkAngleSpan(angles, source, checkUnits);
    return angles;
}

std::vector<std::filesystem::path> tiffFilesIn(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec);
    if (ec) throw IoError(dir.string() + ": cannot list the directory: " + ec.message());
    for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
        const std::filesystem::path& entry = it->path();
        std::string extension = entry.extension().string();
        std::transform(extension.begin(), extension.end(), extension.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        const bool tiffName = extension == ".tif" || extension == ".tiff";
        const std::filesystem::file_type type = fileType(entry);
        if (type != std::filesystem::file_type::regular) {
            if (tiffName)
                throw IoError(entry.string() + " is " + fileTypeName(type) + "; expected a TIFF image of the series");
            continue; // sub-folders, notes, sockets... are not part of the dataset
        }
        if (sniffFile(entry) == FileKind::Tiff) files.push_back(entry);
        else if (tiffName)
            throw FormatError(entry.string() + " is named like a TIFF but does not start like one (empty, "
                                               "truncated or another format); expected a TIFF image of the series");
    }
    if (ec) throw IoError(dir.string() + ": cannot list the directory: " + ec.message());
    std::sort(files.begin(), files.end());
    return files;
}

/// Largest angles or offsets file read: 64 MiB is millions of lines.
constexpr std::uintmax_t kMaxNumberFileBytes = 64u << 20;

/// One number per line, '#' starts a comment, blank lines ignored.
std::vector<double> readNumbersFile(const std::filesystem::path& path, const std::string& what) {
    const std::string text =
        readSmallFile(path, "a text file of one " + what + " per line", kMaxNumberFileBytes);
    std::vector<double> values;
    std::istringstream in(text);
    std::string line;
    for (int lineNo = 1; std::getline(in, line); ++lineNo) {
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        const auto begin = line.find_first_not_of(" \t\r");
        if (begin == std::string::npos) continue;
        const auto end = line.find_last_not_of(" \t\r") + 1;
        const char* first = line.data() + begin;
        const char* last = line.data() + end;
        if (*first == '+') ++first; // from_chars rejects a leading '+'
        double value = 0.0;
        const auto [ptr, err] = std::from_chars(first, last, value);
        if (err != std::errc() || ptr != last || !std::isfinite(value)) {
            // A binary file or a huge line must not make a huge message.
            std::string shown = line.substr(begin, std::min<std::size_t>(end - begin, 40));
            for (char& c : shown)
                if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) c = '?';
            throw FormatError(path.string() + ":" + std::to_string(lineNo) + ": '" + shown +
                              (end - begin > 40 ? "..." : "") + "' is not a finite number (expected one " + what +
                              " per line)");
        }
        values.push_back(value);
    }
    if (values.empty())
        throw FormatError(path.string() + ": holds no values (expected one " + what + " per line)");
    return values;
}

void finishInfo(DatasetInfo& info, const OpenOptions& options) {
    if (options.logCorrected && !info.logCorrected) {
        if (info.flats > 0 || info.darks > 0)
            throw InvalidArgument(info.path.string() + " has flat or dark images, so its values are raw; the option "
                                                       "that declares values already log-corrected does not apply");
        info.logCorrected = true;
    }
    if (info.logCorrected || info.flats > 0) return;
    if (info.sampleType != SampleType::UInt8 && info.sampleType != SampleType::UInt16) return;
    // What the corrections do about the open beam (found in columns outside
    // the object, given, or missing: an offset) they say themselves
    // (PreprocessingStage::warnings); detector gains only a flat removes.
    info.warnings.push_back(info.path.string() + " has no flat fields: its " + sampleTypeName(info.sampleType) +
                            " values are intensities whose open beam has to come from columns outside the object, "
                            "and detector gains are not corrected (they make rings)");
}

void checkRowRequest(const DatasetInfo& info, int firstRow, int rowCount, std::size_t outSize,
                     std::size_t valuesPerRow) {
    if (firstRow < 0 || rowCount < 1 || firstRow > info.rows - rowCount)
        throw InvalidArgument("rows [" + std::to_string(firstRow) + ", " +
                              std::to_string(static_cast<long long>(firstRow) + rowCount) + ") of " +
                              info.path.string() + ": expected a non-empty range inside [0, " +
                              std::to_string(info.rows) + ")");
    if (outSize != static_cast<std::size_t>(rowCount) * valuesPerRow)
        throw InvalidArgument("output buffer for " + std::to_string(rowCount) + " rows of " +
                              info.path.string() + " holds " + std::to_string(outSize) +
                              " values; expected " + std::to_string(rowCount * valuesPerRow));
}

namespace {
/// `bytes` must be rowCount x projections x columns samples.
void checkRawBytes(const DatasetInfo& info, int firstRow, int rowCount, int projections, std::size_t bytes) {
    const std::size_t sample = sampleBytes(info.sampleType);
    if (bytes % sample != 0)
        throw InvalidArgument(info.path.string() + ": a raw buffer of " + std::to_string(bytes) +
                              " bytes is not a whole number of " + sampleTypeName(info.sampleType) + " samples");
    checkRowRequest(info, firstRow, rowCount, bytes / sample,
                    static_cast<std::size_t>(projections) * static_cast<std::size_t>(info.columns));
}
} // namespace

void checkRawRowRequest(const DatasetInfo& info, int firstRow, int rowCount, std::size_t bytes) {
    checkRawBytes(info, firstRow, rowCount, info.projections, bytes);
}

std::size_t checkRawProjectionRequest(const DatasetInfo& info, int firstRow, int rowCount, int firstProjection,
                                      int projectionCount, std::size_t bytes) {
    if (firstProjection < 0 || projectionCount < 1 || firstProjection > info.projections - projectionCount)
        throw InvalidArgument("projections [" + std::to_string(firstProjection) + ", " +
                              std::to_string(static_cast<long long>(firstProjection) + projectionCount) + ") of " +
                              info.path.string() + ": expected a non-empty range inside [0, " +
                              std::to_string(info.projections) + ")");
    checkRawBytes(info, firstRow, rowCount, projectionCount, bytes);
    return static_cast<std::size_t>(rowCount) * info.columns * sampleBytes(info.sampleType);
}

void checkProjectionRequest(const DatasetInfo& info, int index, std::size_t outSize) {
    if (index < 0 || index >= info.projections)
        throw InvalidArgument("projection " + std::to_string(index) + " of " + info.path.string() +
                              ": expected 0 to " + std::to_string(info.projections - 1));
    const std::size_t expected = static_cast<std::size_t>(info.rows) * static_cast<std::size_t>(info.columns);
    if (outSize != expected)
        throw InvalidArgument("output buffer for a projection of " + info.path.string() + " holds " +
                              std::to_string(outSize) + " values; expected " + std::to_string(expected));
}

void imageToSinograms(std::span<const float> image, int index, int imageCount, int rows, int columns,
                      std::span<float> out) {
    const auto cols = static_cast<std::size_t>(columns);
    for (int r = 0; r < rows; ++r)
        std::copy_n(image.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * cols), cols,
                    out.begin() + static_cast<std::ptrdiff_t>((static_cast<std::size_t>(r) * imageCount + index) * cols));
}

void imagesToSinograms(std::span<const float> images, int imageCount, int rows, int columns,
                       std::span<float> out) {
    const std::size_t imageSize = static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns);
    for (int a = 0; a < imageCount; ++a)
        imageToSinograms(images.subspan(static_cast<std::size_t>(a) * imageSize, imageSize), a, imageCount, rows,
                         columns, out);
}

namespace {

template <class T>
void storedToSinograms(const std::byte* images, int imageCount, int rows, int columns, std::span<float> out) {
    const auto cols = static_cast<std::size_t>(columns);
    T line[256];
    for (int a = 0; a < imageCount; ++a)
        for (int r = 0; r < rows; ++r) {
            const std::byte* src = images + (static_cast<std::size_t>(a) * rows + r) * cols * sizeof(T);
            float* dst = out.data() + (static_cast<std::size_t>(r) * imageCount + a) * cols;
            // Through an aligned copy: the bytes need not be aligned for T.
            for (std::size_t c0 = 0; c0 < cols; c0 += std::size(line)) {
                const std::size_t n = std::min(std::size(line), cols - c0);
                std::memcpy(line, src + c0 * sizeof(T), n * sizeof(T));
                for (std::size_t c = 0; c < n; ++c) dst[c0 + c] = static_cast<float>(line[c]);
            }
        }
}

} // namespace

void storedImagesToSinograms(std::span<const std::byte> images, SampleType type, int imageCount, int rows,
                             int columns, std::span<float> out) {
    switch (type) {
    case SampleType::UInt8: storedToSinograms<std::uint8_t>(images.data(), imageCount, rows, columns, out); break;
    case SampleType::UInt16: storedToSinograms<std::uint16_t>(images.data(), imageCount, rows, columns, out); break;
    case SampleType::Float32: storedToSinograms<float>(images.data(), imageCount, rows, columns, out); break;
    case SampleType::Float64: storedToSinograms<double>(images.data(), imageCount, rows, columns, out); break;
    }
}

void meanOfImages(std::span<const float> images, int imageCount, std::span<float> out) {
    std::vector<double> sum(out.size(), 0.0);
    for (int i = 0; i < imageCount; ++i) {
        const float* image = images.data() + static_cast<std::size_t>(i) * out.size();
        for (std::size_t k = 0; k < out.size(); ++k) sum[k] += image[k];
    }
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = static_cast<float>(sum[k] / imageCount);
}

} // namespace detail

int metadataTimeoutSeconds() {
    constexpr int kDefaultSeconds = 60;
    const char* setting = std::getenv("TOMO_METADATA_TIMEOUT");
    if (!setting) return kDefaultSeconds;
    int seconds = 0;
    const char* end = setting + std::strlen(setting);
    const auto [stop, error] = std::from_chars(setting, end, seconds);
    return error == std::errc{} && stop == end && seconds > 0 ? seconds : kDefaultSeconds;
}

DatasetFormat detectFormat(const std::filesystem::path& path, const OpenOptions& options) {
    const std::filesystem::file_type type = detail::fileType(path);
    if (type == std::filesystem::file_type::not_found) detail::requireRegularFile(path, "a dataset");
    if (type == std::filesystem::file_type::directory) {
        if (detail::tiffFilesIn(path).empty())
            throw FormatError(path.string() + " is a directory without TIFF files: expected one TIFF per projection");
        return DatasetFormat::TiffDirectory;
    }
    detail::requireRegularFile(path, "a dataset (a file or a directory of TIFFs)");
    if (options.raw) return DatasetFormat::Raw;
    switch (detail::sniffFile(path)) {
    case detail::FileKind::Hdf5:
#if TOMO_WITH_HDF5
        return detail::detectHdf5Layout(path);
#else
        throw FormatError(path.string() + " is an HDF5 file but this build has no HDF5 support");
#endif
    case detail::FileKind::MatlabHdf5:
#if TOMO_WITH_HDF5
        return DatasetFormat::Matlab;
#else
        throw FormatError(path.string() + " is a MATLAB v7.3 (HDF5) file but this build has no HDF5 support");
#endif
    case detail::FileKind::MatlabOld:
        throw FormatError(path.string() + " is a MATLAB file older than v7.3 (MATLAB's own format); expected a v7.3 "
                                          "file, which is HDF5 inside: in MATLAB, save(..., '-v7.3')");
    case detail::FileKind::Tiff:
#if TOMO_WITH_TIFF
        return detail::detectTiffLayout(path);
#else
        throw FormatError(path.string() + " is a TIFF file but this build has no TIFF support");
#endif
    case detail::FileKind::Other:
        break;
    }
    throw FormatError(path.string() +
                      " is not a dataset this program reads: expected an HDF5 file (DXchange, NXtomo or "
                      "sinogram layout), a MATLAB v7.3 file, a TIFF, a directory of TIFFs, or a raw file with its "
                      "layout given");
}

namespace {

/// Sinograms [row][angle][column] as float -> projection order in type T.
template <class T>
void toProjectionOrder(std::span<const float> sinograms, int rows, int projections, int columns, std::byte* out) {
    T* dst = reinterpret_cast<T*>(out);
    const std::size_t cols = static_cast<std::size_t>(columns);
    for (int r = 0; r < rows; ++r)
        for (int a = 0; a < projections; ++a) {
            const float* src = sinograms.data() + (static_cast<std::size_t>(r) * projections + a) * cols;
            T* line = dst + (static_cast<std::size_t>(a) * rows + r) * cols;
            for (std::size_t c = 0; c < cols; ++c) line[c] = static_cast<T>(src[c]);
        }
}

} // namespace

void DatasetReader::prefetchRows(int, int) {}

void DatasetReader::readRawRows(int firstRow, int rowCount, std::span<std::byte> out) {
    detail::checkRawRowRequest(m_info, firstRow, rowCount, out.size());
    const std::size_t perRow = static_cast<std::size_t>(m_info.projections) * static_cast<std::size_t>(m_info.columns);
    std::vector<float> sinograms(perRow * static_cast<std::size_t>(rowCount));
    readSinograms(firstRow, rowCount, sinograms);
    const int p = m_info.projections, c = m_info.columns;
    switch (m_info.sampleType) {
    case SampleType::UInt8: toProjectionOrder<std::uint8_t>(sinograms, rowCount, p, c, out.data()); break;
    case SampleType::UInt16: toProjectionOrder<std::uint16_t>(sinograms, rowCount, p, c, out.data()); break;
    case SampleType::Float32: toProjectionOrder<float>(sinograms, rowCount, p, c, out.data()); break;
    case SampleType::Float64: toProjectionOrder<double>(sinograms, rowCount, p, c, out.data()); break;
    }
}

void DatasetReader::readRawRowsOfProjections(int firstRow, int rowCount, int firstProjection, int projectionCount,
                                             std::span<std::byte> out) {
    const std::size_t perProjection = detail::checkRawProjectionRequest(m_info, firstRow, rowCount, firstProjection,
                                                                        projectionCount, out.size());
    if (firstProjection == 0 && projectionCount == m_info.projections) return readRawRows(firstRow, rowCount, out);
    std::vector<std::byte> all(perProjection * static_cast<std::size_t>(m_info.projections));
    readRawRows(firstRow, rowCount, all);
    std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(perProjection * static_cast<std::size_t>(firstProjection)),
                out.size(), out.begin());
}

void DatasetReader::readFlatGroup(int group, int firstRow, int rowCount, std::span<float> out) {
    const int groups = static_cast<int>(m_info.flatPositions.size());
    if (group < 0 || group >= groups || (groups == 1 && !readMeanFlat(firstRow, rowCount, out)))
        throw InvalidArgument(m_info.path.string() + ": flat group " + std::to_string(group) + " does not exist (" +
                              std::to_string(groups) + " group(s))");
    if (groups > 1)
        throw InvalidArgument(m_info.path.string() + ": this reader does not read flat groups one by one");
}

void DatasetReader::readProjection(int index, std::span<float> out) {
    detail::checkProjectionRequest(m_info, index, out.size());
    const auto columns = static_cast<std::size_t>(m_info.columns);
    std::vector<float> row(static_cast<std::size_t>(m_info.projections) * columns);
    for (int r = 0; r < m_info.rows; ++r) {
        readSinograms(r, 1, row);
        std::copy_n(row.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(index) * columns), columns,
                    out.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * columns));
    }
}

std::unique_ptr<DatasetReader> openDataset(const std::filesystem::path& path, const OpenOptions& options) {
    // A file still being written cannot be opened the ordinary way to detect its layout.
    if (options.growing) {
#if TOMO_WITH_HDF5
        return detail::openGrowingHdf5(path, options);
#else
        throw FormatError(path.string() + ": a growing HDF5 file needs HDF5, and this build has none");
#endif
    }
    const DatasetFormat format = detectFormat(path, options);
    if (!options.variable.empty() && format != DatasetFormat::Matlab)
        throw InvalidArgument("a MATLAB variable ('" + options.variable.substr(0, 64) + "') was named but " +
                              path.string() + " is " + formatName(format) + ", not a MATLAB v7.3 file");
    switch (format) {
    case DatasetFormat::Raw:
        return detail::openRawDataset(path, options);
    case DatasetFormat::Stream:
        break; // detectFormat never says so
#if TOMO_WITH_HDF5
    case DatasetFormat::DXchange:
        return detail::openDXchange(path, options);
    case DatasetFormat::NXtomo:
        return detail::openNXtomo(path, options);
    case DatasetFormat::SinogramHdf5:
        return detail::openSinogramHdf5(path, options);
    case DatasetFormat::Matlab:
        return detail::openMatlab(path, options);
#else
    case DatasetFormat::DXchange:
    case DatasetFormat::NXtomo:
    case DatasetFormat::SinogramHdf5:
    case DatasetFormat::Matlab:
        break; // detectFormat already refused HDF5 files
#endif
#if TOMO_WITH_TIFF
    case DatasetFormat::TiffDirectory:
        return detail::openTiffDirectory(path, options);
    case DatasetFormat::MultiPageTiff:
        return detail::openMultiPageTiff(path, options);
    case DatasetFormat::SinogramTiff:
        return detail::openSinogramTiff(path, options);
#else
    case DatasetFormat::TiffDirectory:
        throw FormatError(path.string() + " is a directory of TIFFs but this build has no TIFF support");
    case DatasetFormat::MultiPageTiff:
    case DatasetFormat::SinogramTiff:
        throw FormatError(path.string() + " is a TIFF file but this build has no TIFF support");
#endif
    }
    throw FormatError(path.string() + ": " + formatName(format) + " is not supported by this build");
}

std::vector<double> readAnglesFile(const std::filesystem::path& path, AngleUnits units, std::optional<LineRange> lines) {
    const bool radians = units == AngleUnits::Radians;
    auto angles = detail::readNumbersFile(path, radians ? "angle in radians" : "angle in degrees");
    if (lines) {
        const auto entries = static_cast<long long>(angles.size());
        const long long first = lines->first;
        const long long count = lines->count == 0 ? entries - first : lines->count;
        if (first < 0 || count < 1 || lines->count < 0 || first + count > entries)
            throw FormatError(path.string() + ": angle entries " + std::to_string(first) + " to " +
                              std::to_string(first + count - 1) + " asked for, but it holds entries 0 to " +
                              std::to_string(entries - 1) + " (comments and blank lines not counted)");
        angles = std::vector<double>(angles.begin() + first, angles.begin() + first + count);
    }
    for (std::size_t i = 0; i < angles.size(); ++i) {
        if (!radians) angles[i] *= kDegree;
        if (!(std::abs(angles[i]) <= kMaxAbsDegrees * kDegree))
            throw FormatError(path.string() + ": angle " + std::to_string(i) + " is " + formatDegrees(angles[i]) +
                              " degrees; expected at most " + formatDegrees(kMaxAbsDegrees * kDegree) +
                              " in magnitude");
    }
    return angles;
}

std::optional<LineRange> findProjectionAngles(const std::vector<double>& angles, int projections) {
    const auto n = static_cast<int>(angles.size());
    if (projections < 2 || n <= projections) return std::nullopt;
    // "Equal" within a tenth of the median step between entries: files round
    // (i13 stores 91.7999 for the last projection, 91.8 for the frames after).
    std::vector<double> steps;
    for (std::size_t i = 1; i < angles.size(); ++i)
        if (angles[i] != angles[i - 1]) steps.push_back(std::abs(angles[i] - angles[i - 1]));
    if (steps.empty()) return std::nullopt;
    std::nth_element(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2), steps.end());
    const double tolerance = 0.1 * steps[steps.size() / 2];
    auto near = [&](double a, double b) { return std::abs(a - b) <= tolerance; };
    std::optional<LineRange> found;
    for (int first = 0; first + projections <= n; ++first) {
        const double start = angles[static_cast<std::size_t>(first)];
        const double end = angles[static_cast<std::size_t>(first + projections - 1)];
        const bool before = std::all_of(angles.begin(), angles.begin() + first, [&](double a) { return near(a, start); });
        const bool after =
            std::all_of(angles.begin() + first + projections, angles.end(), [&](double a) { return near(a, end); });
        if (!before || !after) continue;
        if (found) return std::nullopt; // two runs fit: the layout is not the usual one
        found = LineRange{first, projections};
    }
    return found;
}

std::vector<double> readAxisOffsetsFile(const std::filesystem::path& path, int expectedCount, double maxMagnitude) {
    auto offsets = detail::readNumbersFile(path, "axis offset in pixels");
    if (expectedCount >= 0 && offsets.size() != static_cast<std::size_t>(expectedCount))
        throw InvalidArgument(path.string() + " holds " + std::to_string(offsets.size()) +
                              " axis offsets; expected one per projection (" + std::to_string(expectedCount) + ")");
    for (std::size_t i = 0; i < offsets.size(); ++i)
        if (std::abs(offsets[i]) > maxMagnitude) {
            char text[96];
            std::snprintf(text, sizeof text, "%.6g pixels; expected at most %.6g", offsets[i], maxMagnitude);
            throw InvalidArgument(path.string() + ": axis offset " + std::to_string(i) + " is " + text +
                                  " in magnitude (the detector width: a larger shift moves every ray off the "
                                  "detector)");
        }
    return offsets;
}

} // namespace tomo
