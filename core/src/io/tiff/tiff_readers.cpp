// TIFF dataset readers: a directory with one TIFF per projection (plus
// flat*/white*/dark* images and an optional angles.txt), a multi-page TIFF
// with one page per projection, and a single-page TIFF holding one sinogram
// [angle][column]. Only the strips/tiles of the requested rows are decoded;
// the files of a directory are read by several threads.
#include "io/file_checks.h"
#include "io/readers.h"
#include "io/tiff/tiff_util.h"
#include "tomo/error.h"
#include "tomo/worker_pool.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <memory>
#include <optional>

namespace tomo::detail {

namespace {

bool startsWith(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

/// Throws FormatError unless `layout` (of `file`) matches `expected` (of the
/// file named `like`): a series mixing sizes or sample types is damaged.
void requireLayout(const std::filesystem::path& file, const tiff::PageLayout& layout,
                   const tiff::PageLayout& expected, const std::string& like) {
    if (!tiff::sameLayout(layout, expected))
        throw FormatError(file.string() + " is " + tiff::describe(layout) + "; expected " + tiff::describe(expected) +
                          " like " + like);
}

class TiffDirectoryReader final : public DatasetReader {
public:
    TiffDirectoryReader(const std::filesystem::path& dir, const OpenOptions& options) {
        std::vector<std::filesystem::path> projections;
        for (auto& file : tiffFilesIn(dir)) {
            std::string name = file.filename().string();
            std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
            if (startsWith(name, "flat") || startsWith(name, "white")) m_flatFiles.push_back(std::move(file));
            else if (startsWith(name, "dark")) m_darkFiles.push_back(std::move(file));
            else projections.push_back(std::move(file));
        }
        if (projections.empty())
            throw FormatError(dir.string() + " holds no projection TIFFs (only flat*/white*/dark* images); expected "
                                             "one numbered TIFF per projection");
        m_projectionFiles = tiff::numberedSeries(std::move(projections), dir);
        // Every file of a series is opened once here, so a damaged or
        // different one stops the run before anything is written.
        m_layout = seriesLayout(m_projectionFiles);
        // Pre-averaged references may be float while projections are counts.
        if (!m_flatFiles.empty()) m_flatLayout = referenceLayout(m_flatFiles);
        if (!m_darkFiles.empty()) m_darkLayout = referenceLayout(m_darkFiles);

        m_info.path = dir;
        m_info.format = DatasetFormat::TiffDirectory;
        m_info.projections = static_cast<int>(m_projectionFiles.size());
        m_info.rows = m_layout.height;
        m_info.columns = m_layout.width;
        m_info.sampleType = m_layout.type;
        m_info.flats = static_cast<int>(m_flatFiles.size());
        if (m_info.flats > 0) m_info.flatPositions = {-1.0}; // order not known: one group
        m_info.darks = static_cast<int>(m_darkFiles.size());

        // The folder's own angles.txt, unless an angles file is given. It may
        // list every frame of the scan (darks and flats too): the usual
        // layout is recognised, anything else needs the entries given.
        OpenOptions effective = options;
        const auto anglesTxt = dir / "angles.txt";
        if (!effective.anglesFile && fileType(anglesTxt) != std::filesystem::file_type::not_found) {
            effective.anglesFile = anglesTxt;
            const auto all = readAnglesFile(
                anglesTxt, options.angleUnits == AngleUnits::Radians ? AngleUnits::Radians : AngleUnits::Degrees);
            if (!options.anglesLines && all.size() != m_projectionFiles.size() &&
                !findProjectionAngles(all, m_info.projections))
                throw FormatError(anglesTxt.string() + " holds " + std::to_string(all.size()) + " angles but " +
                                  dir.string() + " has " + std::to_string(m_projectionFiles.size()) +
                                  " projection files (" + m_projectionFiles.front().filename().string() + " ... " +
                                  m_projectionFiles.back().filename().string() +
                                  "); expected one angle per projection: give the entries that belong to the "
                                  "projections, or an angles file with the projections' angles instead");
        }
        m_info.angles = resolveAngles(m_info, {}, effective);
        finishInfo(m_info, options);
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        const auto columns = static_cast<std::size_t>(m_info.columns);
        checkRowRequest(m_info, firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.projections) * columns);
        eachProjection([&](int a, const tiff::File& file, int thread) {
            std::vector<float>& rows = m_threadRows[static_cast<std::size_t>(thread)];
            rows.resize(static_cast<std::size_t>(rowCount) * columns);
            tiff::readRows(file, m_layout, firstRow, rowCount, rows);
            imageToSinograms(rows, a, m_info.projections, rowCount, m_info.columns, out);
        });
    }

    void readRawRows(int firstRow, int rowCount, std::span<std::byte> out) override {
        checkRawRowRequest(m_info, firstRow, rowCount, out.size());
        const std::size_t imageBytes =
            static_cast<std::size_t>(rowCount) * static_cast<std::size_t>(m_info.columns) * sampleBytes(m_layout.type);
        eachProjection([&](int a, const tiff::File& file, int) {
            tiff::readStoredRows(file, m_layout, firstRow, rowCount,
                                 out.subspan(static_cast<std::size_t>(a) * imageBytes, imageBytes));
        });
    }

    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        return readMean(m_flatFiles, m_flatLayout, firstRow, rowCount, out);
    }

    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        return readMean(m_darkFiles, m_darkLayout, firstRow, rowCount, out);
    }

    void readProjection(int index, std::span<float> out) override {
        checkProjectionRequest(m_info, index, out.size());
        m_rows.resize(out.size());
        readImageRows(m_projectionFiles[static_cast<std::size_t>(index)], m_layout, 0, m_info.rows);
        std::copy(m_rows.begin(), m_rows.end(), out.begin());
    }

private:
    /// The layout all `files` share. Throws FormatError naming the first
    /// file that differs.
    static tiff::PageLayout seriesLayout(const std::vector<std::filesystem::path>& files) {
        std::optional<tiff::PageLayout> first;
        for (const auto& path : files) {
            const tiff::File file(path, "r");
            const tiff::PageLayout layout = tiff::pageLayout(file, 0);
            if (!first) first = layout;
            else requireLayout(path, layout, *first, files.front().filename().string());
        }
        return *first;
    }

    /// The layout of flat or dark files: one sample type among them, the
    /// projections' size.
    tiff::PageLayout referenceLayout(const std::vector<std::filesystem::path>& files) const {
        const tiff::PageLayout layout = seriesLayout(files);
        if (layout.width != m_layout.width || layout.height != m_layout.height)
            throw FormatError(files.front().string() + " is " + tiff::describe(layout) + "; expected " +
                              std::to_string(m_layout.width) + " x " + std::to_string(m_layout.height) + " like " +
                              m_projectionFiles.front().filename().string());
        return layout;
    }

    /// Throws FormatError unless an image opened for reading still has the
    /// layout `expected` (the file may have changed since the dataset was
    /// opened).
    static void requireUnchanged(const tiff::File& file, const tiff::PageLayout& expected) {
        const tiff::PageLayout layout = tiff::pageLayout(file, 0);
        if (!tiff::sameLayout(layout, expected))
            throw FormatError(file.path().string() + " is now " + tiff::describe(layout) + "; it was " +
                              tiff::describe(expected) + " when the dataset was opened");
    }

    /// Rows of one image into m_rows.
    void readImageRows(const std::filesystem::path& path, const tiff::PageLayout& expected, int firstRow,
                       int rowCount) {
        const tiff::File file(path, "r");
        requireUnchanged(file, expected);
        tiff::readRows(file, expected, firstRow, rowCount, m_rows);
    }

    /// Calls read(projection, its open file, thread) for every projection,
    /// the files opened and decoded by several threads, each with its own
    /// libtiff handle. Rethrows the first error (it names its file).
    void eachProjection(const std::function<void(int, const tiff::File&, int)>& read) {
        if (!m_pool) {
            m_pool = std::make_unique<WorkerPool>(readerThreads());
            m_threadRows.resize(static_cast<std::size_t>(m_pool->threads()));
        }
        m_pool->parallelFor(m_info.projections, [&](int a, int thread) {
            const tiff::File file(m_projectionFiles[static_cast<std::size_t>(a)], "r");
            requireUnchanged(file, m_layout);
            read(a, file, thread);
        });
    }

    bool readMean(const std::vector<std::filesystem::path>& files, const tiff::PageLayout& layout, int firstRow,
                  int rowCount, std::span<float> out) {
        if (files.empty()) return false;
        checkRowRequest(m_info, firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.columns));
        m_rows.resize(out.size());
        std::vector<double> sum(out.size(), 0.0);
        for (const auto& file : files) {
            readImageRows(file, layout, firstRow, rowCount);
            for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += m_rows[k];
        }
        for (std::size_t k = 0; k < sum.size(); ++k) out[k] = static_cast<float>(sum[k] / static_cast<double>(files.size()));
        return true;
    }

    std::vector<std::filesystem::path> m_projectionFiles;
    std::vector<std::filesystem::path> m_flatFiles;
    std::vector<std::filesystem::path> m_darkFiles;
    tiff::PageLayout m_layout;
    tiff::PageLayout m_flatLayout;
    tiff::PageLayout m_darkLayout;
    std::vector<float> m_rows;
    std::unique_ptr<WorkerPool> m_pool;
    std::vector<std::vector<float>> m_threadRows; ///< one image's rows per pool thread
};

/// Pages of a TIFF file, each checked against page 0. Throws FormatError
/// naming the file when the page list cannot be read (truncated, corrupt).
int pageCount(const tiff::File& file) {
    const int pages = TIFFNumberOfDirectories(file.get());
    if (file.hadError() || pages < 1)
        throw FormatError(file.path().string() + ": cannot read its list of pages (truncated or corrupt?)" +
                          file.errorDetail());
    return pages;
}

class MultiPageTiffReader final : public DatasetReader {
public:
    MultiPageTiffReader(const std::filesystem::path& path, const OpenOptions& options) : m_file(path, "r") {
        m_layout = tiff::pageLayout(m_file, 0);
        const int pages = pageCount(m_file);
        for (int page = 1; page < pages; ++page) nextPage(page);
        m_info.path = path;
        m_info.format = DatasetFormat::MultiPageTiff;
        m_info.projections = pages;
        m_info.rows = m_layout.height;
        m_info.columns = m_layout.width;
        m_info.sampleType = m_layout.type;
        m_info.angles = resolveAngles(m_info, {}, options);
        finishInfo(m_info, options);
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        const auto columns = static_cast<std::size_t>(m_info.columns);
        checkRowRequest(m_info, firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.projections) * columns);
        m_rows.resize(static_cast<std::size_t>(rowCount) * columns);
        // Pages in order: each TIFFReadDirectory steps to the next one.
        for (int a = 0; a < m_info.projections; ++a) {
            if (a == 0 && !TIFFSetDirectory(m_file.get(), 0))
                throw FormatError(m_info.path.string() + ": cannot read page 0" + m_file.errorDetail());
            const tiff::PageLayout layout = a == 0 ? tiff::pageLayout(m_file, 0) : nextPage(a);
            tiff::readRows(m_file, layout, firstRow, rowCount, m_rows);
            imageToSinograms(m_rows, a, m_info.projections, rowCount, m_info.columns, out);
        }
    }

    bool readMeanFlat(int, int, std::span<float>) override { return false; }
    bool readMeanDark(int, int, std::span<float>) override { return false; }

    void readProjection(int index, std::span<float> out) override {
        checkProjectionRequest(m_info, index, out.size());
        if (!TIFFSetDirectory(m_file.get(), static_cast<tdir_t>(index)))
            throw FormatError(m_info.path.string() + ": cannot read page " + std::to_string(index) + m_file.errorDetail());
        const tiff::PageLayout layout = tiff::pageLayout(m_file, index);
        if (layout.width != m_layout.width || layout.height != m_layout.height)
            throw FormatError(m_info.path.string() + ": page " + std::to_string(index) + " is " + tiff::describe(layout) +
                              "; expected " + tiff::describe(m_layout) + " like page 0");
        tiff::readRows(m_file, layout, 0, m_info.rows, out);
    }

private:
    /// Steps to page `page` (the one after the current) and checks it has
    /// page 0's size and sample type.
    tiff::PageLayout nextPage(int page) {
        if (!TIFFReadDirectory(m_file.get()))
            throw FormatError(m_file.path().string() + ": cannot read page " + std::to_string(page) +
                              m_file.errorDetail());
        const tiff::PageLayout layout = tiff::pageLayout(m_file, page);
        if (!tiff::sameLayout(layout, m_layout))
            throw FormatError(m_file.path().string() + ": page " + std::to_string(page) + " is " +
                              tiff::describe(layout) + "; expected " + tiff::describe(m_layout) + " like page 0");
        return layout;
    }

    tiff::File m_file;
    tiff::PageLayout m_layout;
    std::vector<float> m_rows;
};

/// One sinogram as a single-page image: image row = angle, column = bin.
class SinogramTiffReader final : public DatasetReader {
public:
    SinogramTiffReader(const std::filesystem::path& path, const OpenOptions& options) : m_file(path, "r") {
        m_layout = tiff::pageLayout(m_file, 0);
        m_info.path = path;
        m_info.format = DatasetFormat::SinogramTiff;
        m_info.projections = m_layout.height;
        m_info.rows = 1;
        m_info.columns = m_layout.width;
        m_info.sampleType = m_layout.type;
        m_info.angles = resolveAngles(m_info, {}, options);
        finishInfo(m_info, options);
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        checkRowRequest(m_info, firstRow, rowCount, out.size(),
                        static_cast<std::size_t>(m_info.projections) * static_cast<std::size_t>(m_info.columns));
        tiff::readRows(m_file, m_layout, 0, m_layout.height, out);
    }

    bool readMeanFlat(int, int, std::span<float>) override { return false; }
    bool readMeanDark(int, int, std::span<float>) override { return false; }

private:
    tiff::File m_file;
    tiff::PageLayout m_layout;
};

} // namespace

DatasetFormat detectTiffLayout(const std::filesystem::path& path) {
    const tiff::File file(path, "r");
    return pageCount(file) > 1 ? DatasetFormat::MultiPageTiff : DatasetFormat::SinogramTiff;
}

std::unique_ptr<DatasetReader> openTiffDirectory(const std::filesystem::path& path, const OpenOptions& options) {
    return std::make_unique<TiffDirectoryReader>(path, options);
}

std::unique_ptr<DatasetReader> openMultiPageTiff(const std::filesystem::path& path, const OpenOptions& options) {
    return std::make_unique<MultiPageTiffReader>(path, options);
}

std::unique_ptr<DatasetReader> openSinogramTiff(const std::filesystem::path& path, const OpenOptions& options) {
    return std::make_unique<SinogramTiffReader>(path, options);
}

} // namespace tomo::detail
