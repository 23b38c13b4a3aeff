// Internal: an RAII libtiff file whose messages become part of our
// exceptions (instead of being printed), page layout checks, row reads from
// strips or tiles, page writes, and numbered file series.
#pragma once

#include "tomo/dataset.h"
#include "tomo/volume_io.h"

#include <tiffio.h>

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace tomo::tiff {

/// One open TIFF file. libtiff's errors are kept (the last one is added to
/// exception messages) and its warnings dropped, per file, not globally.
class File {
public:
    /// mode "r" or "w"/"w8" (BigTIFF). Throws IoError naming the file, or
    /// FormatError when reading and libtiff finds the content damaged.
    File(std::filesystem::path path, const char* mode);
    ~File();
    File(const File&) = delete;
    File& operator=(const File&) = delete;

    TIFF* get() const { return m_tiff; }
    const std::filesystem::path& path() const { return m_path; }
    /// " (libtiff: <last error>)" or "" when libtiff reported none.
    std::string errorDetail() const;
    /// Flushes and closes; returns false if libtiff reported an error.
    bool close();
    /// Whether libtiff reported an error since the file was opened.
    bool hadError() const { return !m_lastError.empty(); }

private:
    std::filesystem::path m_path;
    bool m_writing = false;
    std::string m_lastError;
    TIFF* m_tiff = nullptr;
};

/// Width, height and sample type of one grayscale page.
struct PageLayout {
    int width = 0;
    int height = 0;
    SampleType type = SampleType::UInt16;
    /// 16-bit IEEE floats (volumes only); `type` is then Float32, what
    /// readRows widens them to.
    bool float16 = false;
};

/// The layout of the current page. Throws FormatError naming the file and
/// page unless it has one sample per pixel of uint8, uint16, float32 or
/// float64 (or float16 when `acceptFloat16`: volumes, not projections,
/// whose readers pass stored samples on) and a width and height below 2^31.
PageLayout pageLayout(const File& file, int page, bool acceptFloat16 = false);

/// "160 x 135 uint16", for messages.
std::string describe(const PageLayout& layout);

/// Reads rows [firstRow, firstRow + rowCount) of the current page as float,
/// decoding only the strips or tiles that hold them. Throws FormatError
/// naming the file.
void readRows(const File& file, const PageLayout& layout, int firstRow, int rowCount, std::span<float> out);

/// The same rows as stored (samples of the layout's type in native byte
/// order, no conversion), [row][column], into `out`.
void readStoredRows(const File& file, const PageLayout& layout, int firstRow, int rowCount, std::span<std::byte> out);

/// Appends one uncompressed page of samples of `type` (native byte order,
/// width x height of them; libtiff may swap them in place), in strips of
/// about 1 MiB. Throws IoError naming the file.
void writePage(File& file, int width, int height, std::span<std::byte> samples, OutputType type,
               const std::string& description);

/// Whether two pages have the same size and sample type.
bool sameLayout(const PageLayout& a, const PageLayout& b);

/// Files named <prefix><number>.<extension> sorted by number. Throws
/// FormatError naming the directory when a name has no number, the prefixes
/// differ, a number repeats, or numbers are missing from the series (the
/// step between numbers may be more than 1 but must be the same
/// everywhere): a lost file would otherwise shift every later angle.
std::vector<std::filesystem::path> numberedSeries(std::vector<std::filesystem::path> files,
                                                  const std::filesystem::path& dir);

} // namespace tomo::tiff
