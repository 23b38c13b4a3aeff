// TIFF volume output (a directory of slice_00000.tif ... written by several
// threads, one file each, or one multi-page file) and reading TIFF volumes
// back. Each page's ImageDescription is a JSON object: the reconstruction
// parameters, output_type and, for integers, scale_factor and add_offset.
#include "io/file_checks.h"
#include "io/readers.h"
#include "io/tiff/tiff_util.h"
#include "tomo/error.h"
#include "io/writers.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>

namespace tomo::detail {

namespace {

using nlohmann::json;

/// Classic TIFF offsets are 32-bit: BigTIFF when the pages might not fit.
const char* writeMode(double bytes) {
    return bytes > 3.5e9 ? "w8" : "w";
}

std::string description(const WriteOptions& options, const Quantization& quantization) {
    json j = json::object();
    for (const auto& [key, value] : options.attributes) j[key] = value;
    j["output_type"] = outputTypeName(options.type);
    if (isQuantized(options.type)) {
        j["scale_factor"] = quantization.slope;
        j["add_offset"] = quantization.offset;
    }
    // ASCII (the tag's type); names that are not UTF-8 get replacement characters.
    return j.dump(2, ' ', true, json::error_handler_t::replace);
}

/// A page's bytes besides its samples and description: its directory of
/// 12 tags (BigTIFF's entries of 20 bytes: 256 bytes), word alignment; and
/// the strip offset and size arrays (8 bytes per strip each in BigTIFF).
/// Measured, classic TIFF: 130 bytes a page with one strip.
constexpr double kPageBytes = 320.0;
constexpr double kStripBytes = 16.0;
/// A file's header (BigTIFF: 16 bytes).
constexpr double kHeaderBytes = 16.0;

std::string sliceName(int slice) {
    char name[32];
    std::snprintf(name, sizeof name, "slice_%05d.tif", slice);
    return name;
}

} // namespace

VolumeFootprint tiffFootprint(int width, int height, int slices, const WriteOptions& options, bool folder) {
    const double rowBytes = static_cast<double>(width) * static_cast<double>(outputTypeBytes(options.type));
    // As tiff::writePage cuts strips: about 1 MiB each.
    const double rowsPerStrip = std::clamp(std::floor(1048576.0 / rowBytes), 1.0, static_cast<double>(height));
    const double page = rowBytes * height +
                        static_cast<double>(
                            description(options, quantizationFor(options.type, options.rangeMin, options.rangeMax))
                                .size() +
                            1) +
                        kPageBytes + kStripBytes * std::ceil(height / rowsPerStrip);
    if (folder) return {static_cast<double>(slices), kHeaderBytes + page};
    return {1.0, kHeaderBytes + page * slices};
}

namespace {

/// Slices as files slice_00000.tif, ... of a folder, several at once (one
/// libtiff handle each), on the encoder's threads.
class SliceFiles {
public:
    SliceFiles(std::filesystem::path folder, const std::filesystem::path& target, int width, int height, int slices,
               const WriteOptions& options)
        : m_folder(std::move(folder)), m_slices(target, width, height, slices), m_type(options.type), m_encoder(options),
          m_description(description(options, m_encoder.encoder().quantization())) {}

    void write(int first, int count, std::span<const float> data) {
        m_slices.check(first, count, data.size());
        const std::size_t size = m_slices.sliceSize();
        const double fileBytes = static_cast<double>(size) * static_cast<double>(outputTypeBytes(m_type));
        m_encoder.forEach(count, [&](int i, int thread) {
            const auto samples = m_encoder.encodeOnThread(thread, data.subspan(static_cast<std::size_t>(i) * size, size));
            tiff::File file(m_folder / sliceName(first + i), writeMode(fileBytes));
            tiff::writePage(file, m_slices.width(), m_slices.height(), samples, m_type, m_description);
            if (!file.close()) throw IoError(file.path().string() + ": cannot flush" + file.errorDetail());
        });
        m_slices.markWritten(first, count);
    }

    const SliceTracker& slices() const { return m_slices; }
    ClippedValues clipped() const { return m_encoder.clipped(); }

private:
    std::filesystem::path m_folder;
    SliceTracker m_slices;
    OutputType m_type;
    ParallelEncoder m_encoder;
    std::string m_description;
};

class TiffDirectoryWriter final : public VolumeWriter {
public:
    TiffDirectoryWriter(const std::filesystem::path& target, int width, int height, int slices,
                        const WriteOptions& options)
        : m_output(target, options.overwrite), m_files(m_output.temporary(), m_output.target(), width, height, slices, options) {
        std::error_code ec;
        std::filesystem::create_directory(m_output.temporary(), ec);
        if (ec) throw IoError(m_output.target().string() + ": cannot create " + m_output.temporary().string() + ": " + ec.message());
    }

    void writeSlices(int first, int count, std::span<const float> data) override { m_files.write(first, count, data); }

    void commit() override {
        m_files.slices().requireComplete();
        m_output.commit();
    }

    ClippedValues clipped() const override { return m_files.clipped(); }

private:
    StagedOutput m_output;
    SliceFiles m_files;
};

/// Any slices, as files, into a folder another process made (SharedVolume).
/// Each file is closed (flushed) as it is written: commit() has nothing left.
class TiffFolderPart final : public VolumeWriter {
public:
    TiffFolderPart(const std::filesystem::path& folder, const std::string& target, int width, int height, int slices,
                   const WriteOptions& options)
        : m_files(folder, target, width, height, slices, options) {}
    void writeSlices(int first, int count, std::span<const float> data) override { m_files.write(first, count, data); }
    void commit() override {}
    ClippedValues clipped() const override { return m_files.clipped(); }

private:
    SliceFiles m_files;
};

class MultiPageTiffWriter final : public VolumeWriter {
public:
    MultiPageTiffWriter(const std::filesystem::path& target, int width, int height, int slices,
                        const WriteOptions& options)
        : m_output(target, options.overwrite), m_slices(m_output.target(), width, height, slices),
          m_type(options.type), m_encoder(options),
          m_description(description(options, m_encoder.encoder().quantization())) {
        const double bytes =
            static_cast<double>(m_slices.sliceSize()) * slices * static_cast<double>(outputTypeBytes(m_type));
        m_file.emplace(m_output.temporary(), writeMode(bytes));
    }

    void writeSlices(int first, int count, std::span<const float> data) override {
        m_slices.check(first, count, data.size());
        for (int z = first; z < first + count; ++z)
            if (z < m_nextPage || m_waiting.contains(z))
                throw InvalidArgument("slice " + std::to_string(z) + " of " + m_output.target().string() +
                                      " was already written; a multi-page TIFF cannot rewrite a page");
        const std::size_t size = m_slices.sliceSize(), bytes = size * m_encoder.sampleBytes();
        const int group = m_encoder.slicesPerBuffer(size);
        for (int done = 0; done < count; done += group) {
            const int n = std::min(group, count - done);
            m_buffer.resize(static_cast<std::size_t>(n) * bytes);
            m_encoder.encode(data.subspan(static_cast<std::size_t>(done) * size, n * size), m_buffer.data());
            // Pages must be appended in order: slices that arrive early wait.
            for (int i = 0; i < n; ++i) {
                const auto slice = std::span(m_buffer).subspan(static_cast<std::size_t>(i) * bytes, bytes);
                if (first + done + i == m_nextPage) appendPage(slice);
                else m_waiting.emplace(first + done + i, std::vector<std::byte>(slice.begin(), slice.end()));
            }
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

    ClippedValues clipped() const override { return m_encoder.clipped(); }
    bool holdsEarlySlices() const override { return true; }

private:
    void appendPage(std::span<std::byte> samples) {
        tiff::writePage(*m_file, m_slices.width(), m_slices.height(), samples, m_type, m_description);
        ++m_nextPage;
    }

    // Declared first, destroyed last: the file is closed before the
    // temporary is deleted.
    StagedOutput m_output;
    SliceTracker m_slices;
    OutputType m_type;
    ParallelEncoder m_encoder;
    std::string m_description;
    std::optional<tiff::File> m_file;
    std::vector<std::byte> m_buffer;
    int m_nextPage = 0;
    std::map<int, std::vector<std::byte>> m_waiting; ///< encoded slices that came before their turn
};

struct Packing {
    double slope = 1.0;
    double offset = 0.0;
};

/// The description's key=value lines of versions before the JSON: 8/16-bit
/// pages held "bits=", "range_min=" and "range_max=" (stored = round((v -
/// min) / (max - min) x levels)).
std::optional<Packing> legacyPacking(const std::string& text) {
    std::map<std::string, double> values;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        const auto equals = line.find('=');
        if (equals == std::string::npos) continue;
        const std::string key = line.substr(0, equals);
        if (key == "bits" || key == "range_min" || key == "range_max")
            values[key] = std::strtod(line.c_str() + equals + 1, nullptr);
    }
    if (values.size() != 3 || (values["bits"] != 8 && values["bits"] != 16)) return std::nullopt;
    const double levels = values["bits"] == 16 ? 65535.0 : 255.0;
    return Packing{(values["range_max"] - values["range_min"]) / levels, values["range_min"]};
}

/// How the page's stored samples map to values, from its ImageDescription;
/// nullopt when it says nothing about it. Throws FormatError naming the
/// file when scale_factor or add_offset is not a finite number.
std::optional<Packing> packingOf(const tiff::File& file) {
    char* text = nullptr;
    if (!TIFFGetField(file.get(), TIFFTAG_IMAGEDESCRIPTION, &text) || !text) return std::nullopt;
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return legacyPacking(text);
    const auto number = [&](const char* key) -> std::optional<double> {
        if (!j.contains(key)) return std::nullopt;
        if (!j[key].is_number() || !std::isfinite(j[key].get<double>()))
            throw FormatError(file.path().string() + ": the ImageDescription's " + key + " is " +
                              j[key].dump().substr(0, 40) + "; expected a finite number");
        return j[key].get<double>();
    };
    const auto scale = number("scale_factor"), offset = number("add_offset");
    if (!scale && !offset) return std::nullopt;
    return Packing{scale.value_or(1.0), offset.value_or(0.0)};
}

} // namespace

std::unique_ptr<VolumeWriter> createTiffDirectoryWriter(const std::filesystem::path& target, int width, int height,
                                                        int slices, const WriteOptions& options) {
    return std::make_unique<TiffDirectoryWriter>(target, width, height, slices, options);
}

std::unique_ptr<VolumeWriter> openTiffFolderPart(const std::filesystem::path& folder, const std::string& target,
                                                 int width, int height, int slices, const WriteOptions& options) {
    return std::make_unique<TiffFolderPart>(folder, target, width, height, slices, options);
}

std::unique_ptr<VolumeWriter> createMultiPageTiffWriter(const std::filesystem::path& target, int width, int height,
                                                        int slices, const WriteOptions& options) {
    return std::make_unique<MultiPageTiffWriter>(target, width, height, slices, options);
}

ImageStack readTiffVolume(const std::filesystem::path& path, std::size_t maxBytes) {
    ImageStack stack;
    const auto readInto = [&](const tiff::File& file, int page, int slice) {
        const tiff::PageLayout layout = tiff::pageLayout(file, page, /*acceptFloat16=*/true);
        if (slice > 0 && (layout.width != stack.width || layout.height != stack.height))
            throw FormatError(file.path().string() + " (page " + std::to_string(page) + ") is " + tiff::describe(layout) +
                              "; expected " + std::to_string(stack.width) + " x " + std::to_string(stack.height) +
                              " like the first slice");
        if (slice == 0) {
            requireMemory(4.0 * layout.width * layout.height * stack.depth, path,
                          std::to_string(stack.depth) + " slices of " + tiff::describe(layout),
                          static_cast<double>(maxBytes));
            stack.width = layout.width;
            stack.height = layout.height;
            stack.data.resize(stack.imageSize() * static_cast<std::size_t>(stack.depth));
        }
        tiff::readRows(file, layout, 0, layout.height, stack.image(slice));
        if (const auto packing = packingOf(file)) restoreValues(stack.image(slice), packing->slope, packing->offset);
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
