// Format detection, openDataset dispatch, angle/offset files, and the helpers
// every reader shares.
#include "tomo/dataset.h"

#include "io/readers.h"
#include "tomo/error.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numbers>
#include <system_error>

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
    }
    return "unknown";
}

namespace detail {

std::size_t sampleBytes(SampleType t) {
    switch (t) {
    case SampleType::UInt8: return 1;
    case SampleType::UInt16: return 2;
    case SampleType::Float32: return 4;
    case SampleType::Float64: return 8;
    }
    return 0;
}

FileKind sniffFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(path.string() + ": cannot open for reading: " + std::strerror(errno));
    std::array<char, 8> head{};
    in.read(head.data(), head.size());
    const auto got = in.gcount();
    if (got >= 4) {
        // Classic TIFF (42) and BigTIFF (43), both byte orders.
        if (std::memcmp(head.data(), "II*\0", 4) == 0 || std::memcmp(head.data(), "MM\0*", 4) == 0 ||
            std::memcmp(head.data(), "II+\0", 4) == 0 || std::memcmp(head.data(), "MM\0+", 4) == 0)
            return FileKind::Tiff;
    }
    // The HDF5 superblock sits at 0 or, after a user block, at 512, 1024, 2048, ...
    static constexpr char signature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return FileKind::Other;
    for (std::uintmax_t offset = 0; offset + 8 <= size; offset = offset == 0 ? 512 : offset * 2) {
        in.clear();
        in.seekg(static_cast<std::streamoff>(offset));
        in.read(head.data(), head.size());
        if (in.gcount() == 8 && std::memcmp(head.data(), signature, 8) == 0) return FileKind::Hdf5;
    }
    return FileKind::Other;
}

std::vector<double> resolveAngles(DatasetInfo& info, const std::vector<double>& stored,
                                  const std::string& storedSource, const OpenOptions& options) {
    std::vector<double> angles;
    std::string source = storedSource;
    if (options.anglesLines && !options.anglesFile)
        throw InvalidArgument("angle entries " + std::to_string(options.anglesLines->first) + "+" +
                              std::to_string(options.anglesLines->count) + " for " + info.path.string() +
                              ": they select lines of an angles file, and none is given");
    if (options.anglesFile) {
        std::optional<LineRange> lines = options.anglesLines;
        angles = readAnglesFile(*options.anglesFile, lines);
        if (!lines && angles.size() > static_cast<std::size_t>(info.projections)) {
            // The file lists every frame of the scan, darks and flats too.
            lines = findProjectionAngles(angles, info.projections);
            if (lines) angles = readAnglesFile(*options.anglesFile, lines);
        }
        source = options.anglesFile->string();
        if (lines)
            source += " (entries " + std::to_string(lines->first) + " to " +
                      std::to_string(lines->first + static_cast<int>(angles.size()) - 1) + ")";
        info.anglesFile = *options.anglesFile;
        info.anglesLines = lines;
    } else if (!stored.empty()) {
        angles = stored;
    } else {
        if (!std::isfinite(options.angleRangeDegrees) || options.angleRangeDegrees <= 0.0)
            throw InvalidArgument("angle range " + std::to_string(options.angleRangeDegrees) +
                                  " degrees: expected a positive number");
        const double step = options.angleRangeDegrees / info.projections * std::numbers::pi / 180.0;
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
    for (std::size_t i = 0; i < angles.size(); ++i)
        if (!std::isfinite(angles[i]))
            throw FormatError(source + ": angle " + std::to_string(i) + " is not a finite number");
    return angles;
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

void meanOfImages(std::span<const float> images, int imageCount, std::span<float> out) {
    std::vector<double> sum(out.size(), 0.0);
    for (int i = 0; i < imageCount; ++i) {
        const float* image = images.data() + static_cast<std::size_t>(i) * out.size();
        for (std::size_t k = 0; k < out.size(); ++k) sum[k] += image[k];
    }
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = static_cast<float>(sum[k] / imageCount);
}

} // namespace detail

namespace {

bool directoryHoldsTiff(const std::filesystem::path& dir) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.is_regular_file(ec) && detail::sniffFile(entry.path()) == detail::FileKind::Tiff) return true;
    }
    if (ec) throw IoError(dir.string() + ": cannot list the directory: " + ec.message());
    return false;
}

/// One number per line, '#' starts a comment, blank lines ignored.
std::vector<double> readNumberPerLine(const std::filesystem::path& path, const char* what) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw IoError(path.string() + " is a directory; expected a text file of one " + what + " per line");
    std::ifstream in(path);
    if (!in) throw IoError(path.string() + ": cannot open " + what + " file: " + std::strerror(errno));
    std::vector<double> values;
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
        if (err != std::errc() || ptr != last || !std::isfinite(value))
            throw FormatError(path.string() + ":" + std::to_string(lineNo) + ": '" +
                              line.substr(begin, end - begin) + "' is not a finite number (expected one " +
                              what + " per line)");
        values.push_back(value);
    }
    if (in.bad()) throw IoError(path.string() + ": read error");
    if (values.empty())
        throw FormatError(path.string() + ": holds no values (expected one " + std::string(what) + " per line)");
    return values;
}

} // namespace

DatasetFormat detectFormat(const std::filesystem::path& path, const OpenOptions& options) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status))
        throw IoError(path.string() + ": no such file or directory");
    if (std::filesystem::is_directory(status)) {
        if (!directoryHoldsTiff(path))
            throw FormatError(path.string() + " is a directory without TIFF files: expected one TIFF per projection");
        return DatasetFormat::TiffDirectory;
    }
    if (options.raw) return DatasetFormat::Raw;
    switch (detail::sniffFile(path)) {
    case detail::FileKind::Hdf5:
#if TOMO_WITH_HDF5
        return detail::detectHdf5Layout(path);
#else
        throw FormatError(path.string() + " is an HDF5 file but this build has no HDF5 support");
#endif
    case detail::FileKind::Tiff:
        return DatasetFormat::MultiPageTiff;
    case detail::FileKind::Other:
        break;
    }
    throw FormatError(path.string() +
                      " is not a dataset this program reads: expected an HDF5 file (DXchange, NXtomo or "
                      "sinogram layout), a TIFF, a directory of TIFFs, or a raw file with its layout given");
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
    const DatasetFormat format = detectFormat(path, options);
    switch (format) {
    case DatasetFormat::Raw:
        return detail::openRawDataset(path, options);
#if TOMO_WITH_HDF5
    case DatasetFormat::DXchange:
        return detail::openDXchange(path, options);
    case DatasetFormat::NXtomo:
        return detail::openNXtomo(path, options);
    case DatasetFormat::SinogramHdf5:
        return detail::openSinogramHdf5(path, options);
#else
    case DatasetFormat::DXchange:
    case DatasetFormat::NXtomo:
    case DatasetFormat::SinogramHdf5:
        break; // detectFormat already refused HDF5 files
#endif
#if TOMO_WITH_TIFF
    case DatasetFormat::TiffDirectory:
        return detail::openTiffDirectory(path, options);
    case DatasetFormat::MultiPageTiff:
        return detail::openMultiPageTiff(path, options);
#else
    case DatasetFormat::TiffDirectory:
        throw FormatError(path.string() + " is a directory of TIFFs but this build has no TIFF support");
    case DatasetFormat::MultiPageTiff:
        throw FormatError(path.string() + " is a TIFF file but this build has no TIFF support");
#endif
    }
    throw FormatError(path.string() + ": " + formatName(format) + " is not supported by this build");
}

std::vector<double> readAnglesFile(const std::filesystem::path& path, std::optional<LineRange> lines) {
    auto angles = readNumberPerLine(path, "angle in degrees");
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
    for (double& a : angles) a *= std::numbers::pi / 180.0;
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

std::vector<double> readAxisOffsetsFile(const std::filesystem::path& path, int expectedCount) {
    auto offsets = readNumberPerLine(path, "axis offset in pixels");
    if (expectedCount >= 0 && offsets.size() != static_cast<std::size_t>(expectedCount))
        throw InvalidArgument(path.string() + " holds " + std::to_string(offsets.size()) +
                              " axis offsets; expected one per projection (" + std::to_string(expectedCount) + ")");
    return offsets;
}

} // namespace tomo
