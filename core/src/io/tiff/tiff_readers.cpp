// TIFF dataset readers: a directory with one TIFF per projection (plus
// flat*/white*/dark* images and an optional angles.txt), and a multi-page
// TIFF with one page per projection. Only the strips/tiles of the requested
// rows are decoded.
#include "io/readers.h"
#include "io/tiff/tiff_util.h"
#include "tomo/error.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace tomo::detail {

namespace {

bool startsWith(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

class TiffDirectoryReader final : public DatasetReader {
public:
    TiffDirectoryReader(const std::filesystem::path& dir, const OpenOptions& options) {
        std::vector<std::filesystem::path> projections;
        for (auto& file : tiff::tiffFilesIn(dir)) {
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
        {
            const tiff::File first(m_projectionFiles.front(), "r");
            m_layout = tiff::pageLayout(first, 0);
        }
        for (const auto* references : {&m_flatFiles, &m_darkFiles})
            for (const auto& file : *references) {
                const tiff::File reference(file, "r");
                requireSize(reference, tiff::pageLayout(reference, 0));
            }

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
        if (!effective.anglesFile && std::filesystem::exists(anglesTxt)) {
            effective.anglesFile = anglesTxt;
            const auto all = readAnglesFile(anglesTxt);
            if (!options.anglesLines && all.size() != m_projectionFiles.size() &&
                !findProjectionAngles(all, m_info.projections))
                throw FormatError(anglesTxt.string() + " holds " + std::to_string(all.size()) + " angles but " +
                                  dir.string() + " has " + std::to_string(m_projectionFiles.size()) +
                                  " projection files (" + m_projectionFiles.front().filename().string() + " ... " +
                                  m_projectionFiles.back().filename().string() +
                                  "); expected one angle per projection: give the entries that belong to the "
                                  "projections, or an angles file with the projections' angles instead");
        }
        m_info.angles = resolveAngles(m_info, {}, {}, effective);
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        const auto columns = static_cast<std::size_t>(m_info.columns);
        checkRowRequest(m_info, firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.projections) * columns);
        m_rows.resize(static_cast<std::size_t>(rowCount) * columns);
        for (int a = 0; a < m_info.projections; ++a) {
            readImageRows(m_projectionFiles[static_cast<std::size_t>(a)], firstRow, rowCount);
            imageToSinograms(m_rows, a, m_info.projections, rowCount, m_info.columns, out);
        }
    }

    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        return readMean(m_flatFiles, firstRow, rowCount, out);
    }

    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        return readMean(m_darkFiles, firstRow, rowCount, out);
    }

    void readProjection(int index, std::span<float> out) override {
        checkProjectionRequest(m_info, index, out.size());
        m_rows.resize(out.size());
        readImageRows(m_projectionFiles[static_cast<std::size_t>(index)], 0, m_info.rows);
        std::copy(m_rows.begin(), m_rows.end(), out.begin());
    }

private:
    void requireSize(const tiff::File& file, const tiff::PageLayout& layout) const {
        if (layout.width != m_layout.width || layout.height != m_layout.height)
            throw FormatError(file.path().string() + " is " + tiff::describe(layout) + "; expected " +
                              std::to_string(m_layout.width) + " x " + std::to_string(m_layout.height) + " like " +
                              m_projectionFiles.front().filename().string());
    }

    /// Rows of one image into m_rows.
    void readImageRows(const std::filesystem::path& path, int firstRow, int rowCount) {
        const tiff::File file(path, "r");
        const tiff::PageLayout layout = tiff::pageLayout(file, 0);
        requireSize(file, layout);
        tiff::readRows(file, layout, firstRow, rowCount, m_rows);
    }

    bool readMean(const std::vector<std::filesystem::path>& files, int firstRow, int rowCount, std::span<float> out) {
        if (files.empty()) return false;
        checkRowRequest(m_info, firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.columns));
        m_rows.resize(out.size());
        std::vector<double> sum(out.size(), 0.0);
        for (const auto& file : files) {
            readImageRows(file, firstRow, rowCount);
            for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += m_rows[k];
        }
        for (std::size_t k = 0; k < sum.size(); ++k) out[k] = static_cast<float>(sum[k] / static_cast<double>(files.size()));
        return true;
    }

    std::vector<std::filesystem::path> m_projectionFiles;
    std::vector<std::filesystem::path> m_flatFiles;
    std::vector<std::filesystem::path> m_darkFiles;
    tiff::PageLayout m_layout;
    std::vector<float> m_rows;
};

class MultiPageTiffReader final : public DatasetReader {
public:
    MultiPageTiffReader(const std::filesystem::path& path, const OpenOptions& options) : m_file(path, "r") {
        m_layout = tiff::pageLayout(m_file, 0);
        const int pages = TIFFNumberOfDirectories(m_file.get());
        if (pages < 2)
            throw FormatError(path.string() + " is a single-page TIFF; expected one page per projection (a "
                                              "multi-page TIFF) or a directory of TIFFs");
        m_info.path = path;
        m_info.format = DatasetFormat::MultiPageTiff;
        m_info.projections = pages;
        m_info.rows = m_layout.height;
        m_info.columns = m_layout.width;
        m_info.sampleType = m_layout.type;
        m_info.angles = resolveAngles(m_info, {}, {}, options);
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        const auto columns = static_cast<std::size_t>(m_info.columns);
        checkRowRequest(m_info, firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.projections) * columns);
        m_rows.resize(static_cast<std::size_t>(rowCount) * columns);
        // Pages in order: each TIFFReadDirectory steps to the next one.
        for (int a = 0; a < m_info.projections; ++a) {
            if (!(a == 0 ? TIFFSetDirectory(m_file.get(), 0) : TIFFReadDirectory(m_file.get())))
                throw FormatError(m_info.path.string() + ": cannot read page " + std::to_string(a) + m_file.errorDetail());
            const tiff::PageLayout layout = tiff::pageLayout(m_file, a);
            if (layout.width != m_layout.width || layout.height != m_layout.height)
                throw FormatError(m_info.path.string() + ": page " + std::to_string(a) + " is " + tiff::describe(layout) +
                                  "; expected " + tiff::describe(m_layout) + " like page 0");
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
    tiff::File m_file;
    tiff::PageLayout m_layout;
    std::vector<float> m_rows;
};

} // namespace

std::unique_ptr<DatasetReader> openTiffDirectory(const std::filesystem::path& path, const OpenOptions& options) {
    return std::make_unique<TiffDirectoryReader>(path, options);
}

std::unique_ptr<DatasetReader> openMultiPageTiff(const std::filesystem::path& path, const OpenOptions& options) {
    return std::make_unique<MultiPageTiffReader>(path, options);
}

} // namespace tomo::detail
