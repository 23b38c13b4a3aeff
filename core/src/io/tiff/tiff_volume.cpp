// TIFF volume output (a directory of slice_00000.tif ... or one multi-page
// file) and reading TIFF volumes back. The reconstruction parameters and,
// for 8/16 bits, the value range go into each page's ImageDescription.
#include "io/file_checks.h"
#include "io/readers.h"
#include "io/tiff/tiff_util.h"
#include "tomo/error.h"
#include "io/writers.h"

#include <cstdio>
#include <map>
#include <optional>

namespace tomo::detail {

namespace {

std::string number(float v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", static_cast<double>(v));
    return text;
}

/// "key=value" lines: for 8/16 bits how stored integers map back to values,
/// then the caller's attributes.
std::string description(const WriteOptions& options) {
    std::string text;
    if (options.tiffBits != 32)
        text += "bits=" + std::to_string(options.tiffBits) + "\nrange_min=" + number(options.rangeMin) +
                "\nrange_max=" + number(options.rangeMax) + "\n";
    for (const auto& [key, value] : options.attributes) text += key + "=" + value + "\n";
    return text;
}

std::string sliceName(int slice) {
    char name[32];
    std::snprintf(name, sizeof name, "slice_%05d.tif", slice);
    return name;
}

class TiffDirectoryWriter final : public VolumeWriter {
public:
    TiffDirectoryWriter(const std::filesystem::path& target, int width, int height, int slices,
                        const WriteOptions& options)
        : m_output(target, options.overwrite), m_slices(m_output.target(), width, height, slices), m_options(options),
          m_description(description(options)) {
        std::error_code ec;
        std::filesystem::create_directory(m_output.temporary(), ec);
        if (ec) throw IoError(m_output.target().string() + ": cannot create " + m_output.temporary().string() + ": " + ec.message());
    }

    void writeSlices(int first, int count, std::span<const float> data) override {
        m_slices.check(first, count, data.size());
        for (int i = 0; i < count; ++i) {
            tiff::File file(m_output.temporary() / sliceName(first + i), "w");
            tiff::writePage(file, m_slices.width(), m_slices.height(), data.subspan(i * m_slices.sliceSize(), m_slices.sliceSize()),
                            m_options.tiffBits, m_options.rangeMin, m_options.rangeMax, m_description);
            if (!file.close()) throw IoError(file.path().string() + ": cannot flush" + file.errorDetail());
        }
        m_slices.markWritten(first, count);
    }

    void commit() override {
        m_slices.requireComplete();
        m_output.commit();
    }

private:
    StagedOutput m_output;
    SliceTracker m_slices;
    WriteOptions m_options;
    std::string m_description;
};

class MultiPageTiffWriter final : public VolumeWriter {
public:
    MultiPageTiffWriter(const std::filesystem::path& target, int width, int height, int slices,
                        const WriteOptions& options)
        : m_output(target, options.overwrite), m_slices(m_output.target(), width, height, slices), m_options(options),
          m_description(description(options)) {
        // Classic TIFF offsets are 32-bit: use BigTIFF when the pages might not fit.
        const double bytes = static_cast<double>(m_slices.sliceSize()) * slices * (options.tiffBits / 8);
        m_file.emplace(m_output.temporary(), bytes > 3.5e9 ? "w8" : "w");
    }

    void writeSlices(int first, int count, std::span<const float> data) override {
        m_slices.check(first, count, data.size());
        for (int z = first; z < first + count; ++z)
            if (z < m_nextPage || m_waiting.contains(z))
                throw InvalidArgument("slice " + std::to_string(z) + " of " + m_output.target().string() +
                                      " was already written; a multi-page TIFF cannot rewrite a page");
        const std::size_t size = m_slices.sliceSize();
        // Pages must be appended in order: slices that arrive early wait.
        for (int i = 0; i < count; ++i) {
            const auto slice = data.subspan(static_cast<std::size_t>(i) * size, size);
            if (first + i == m_nextPage) appendPage(slice);
            else m_waiting.emplace(first + i, std::vector<float>(slice.begin(), slice.end()));
        }
        for (auto it = m_waiting.find(m_nextPage); it != m_waiting.end(); it = m_waiting.find(m_nextPage)) {
            appendPage(it->second);
            m_waiting.erase(it);
        }
        m_slices.markWritten(first, count);
    }

    void commit() override {
        m_slices.requireComplete();
        if (!m_file->close()) throw IoError(m_output.target().string() + ": cannot flush" + m_file->errorDetail());
        m_output.commit();
    }

private:
    void appendPage(std::span<const float> slice) {
        tiff::writePage(*m_file, m_slices.width(), m_slices.height(), slice, m_options.tiffBits, m_options.rangeMin,
                        m_options.rangeMax, m_description);
        ++m_nextPage;
    }

    // Declared first, destroyed last: the file is closed before the
    // temporary is deleted.
    StagedOutput m_output;
    SliceTracker m_slices;
    WriteOptions m_options;
    std::string m_description;
    std::optional<tiff::File> m_file;
    int m_nextPage = 0;
    std::map<int, std::vector<float>> m_waiting;
};

} // namespace

std::unique_ptr<VolumeWriter> createTiffDirectoryWriter(const std::filesystem::path& target, int width, int height,
                                                        int slices, const WriteOptions& options) {
    return std::make_unique<TiffDirectoryWriter>(target, width, height, slices, options);
}

std::unique_ptr<VolumeWriter> createMultiPageTiffWriter(const std::filesystem::path& target, int width, int height,
                                                        int slices, const WriteOptions& options) {
    return std::make_unique<MultiPageTiffWriter>(target, width, height, slices, options);
}

ImageStack readTiffVolume(const std::filesystem::path& path) {
    ImageStack stack;
    const auto readInto = [&](const tiff::File& file, int page, int slice) {
        const tiff::PageLayout layout = tiff::pageLayout(file, page);
        if (slice > 0 && (layout.width != stack.width || layout.height != stack.height))
            throw FormatError(file.path().string() + " (page " + std::to_string(page) + ") is " + tiff::describe(layout) +
                              "; expected " + std::to_string(stack.width) + " x " + std::to_string(stack.height) +
                              " like the first slice");
        if (slice == 0) {
            requireMemory(4.0 * layout.width * layout.height * stack.depth, path,
                          std::to_string(stack.depth) + " slices of " + tiff::describe(layout));
            stack.width = layout.width;
            stack.height = layout.height;
            stack.data.resize(stack.imageSize() * static_cast<std::size_t>(stack.depth));
        }
        tiff::readRows(file, layout, 0, layout.height, stack.image(slice));
    };

    if (fileType(path) == std::filesystem::file_type::directory) {
        const auto files = tiff::numberedSeries(tiffFilesIn(path), path);
        if (files.empty()) throw FormatError(path.string() + " holds no TIFF files; expected one per slice");
        stack.depth = static_cast<int>(files.size());
        for (std::size_t z = 0; z < files.size(); ++z) readInto(tiff::File(files[z], "r"), 0, static_cast<int>(z));
        return stack;
    }
    const tiff::File file(path, "r");
    stack.depth = TIFFNumberOfDirectories(file.get());
    if (file.hadError() || stack.depth < 1)
        throw FormatError(path.string() + ": cannot read its list of pages (truncated or corrupt?)" + file.errorDetail());
    for (int page = 0; page < stack.depth; ++page) {
        if (page > 0 && !TIFFReadDirectory(file.get()))
            throw FormatError(path.string() + ": cannot read page " + std::to_string(page) + file.errorDetail());
        readInto(file, page, page);
    }
    return stack;
}

} // namespace tomo::detail
