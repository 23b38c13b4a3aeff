// Volume output: format choice, writer dispatch, the temporary-then-rename
// staging both writers use, and readVolume dispatch.
#include "tomo/volume_io.h"

#include "io/readers.h"
#include "tomo/error.h"
#include "io/writers.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <regex>

#include <unistd.h>

namespace tomo {

namespace detail {

namespace {

std::string lowerExtension(const std::filesystem::path& p) {
    std::string ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext;
}

/// With overwrite, a directory is replaced only if it looks like a TIFF
/// stack this program writes: a mistyped target such as a home directory
/// must never be deleted.
void requireReplaceableDirectory(const std::filesystem::path& target) {
    std::error_code ec;
    if (!std::filesystem::is_directory(target, ec)) return;
    static const std::regex slice(R"(slice_\d+\.tiff?)");
    for (const auto& entry : std::filesystem::directory_iterator(target, ec)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_regular_file(ec) || !std::regex_match(name, slice))
            throw IoError(target.string() + " is a directory holding " + name +
                          ", which is not a slice_*.tif of a TIFF stack; not replacing it even with the overwrite "
                          "option");
    }
    if (ec) throw IoError(target.string() + ": cannot list the directory: " + ec.message());
}

/// A trailing '/' leaves an empty file name: the directory itself is meant.
std::filesystem::path withoutTrailingSlash(const std::filesystem::path& p) {
    return p.has_filename() ? p : p.parent_path();
}

} // namespace

StagedOutput::StagedOutput(std::filesystem::path target, bool overwrite)
    : m_target(withoutTrailingSlash(target)), m_overwrite(overwrite) {
    std::error_code ec;
    if (std::filesystem::exists(m_target, ec)) {
        if (!overwrite)
            throw IoError(m_target.string() + " already exists; not replacing it without the overwrite option");
        requireReplaceableDirectory(m_target);
    }
    const auto dir = m_target.has_parent_path() ? m_target.parent_path() : std::filesystem::path(".");
    if (!std::filesystem::is_directory(dir, ec))
        throw IoError(m_target.string() + ": the directory " + dir.string() + " does not exist");
    // Hidden, unique per process and writer, in the same directory so that
    // the final rename stays on one file system (atomic).
    static std::atomic<unsigned> counter{0};
    std::string name = ".";
    name += m_target.filename().string();
    name += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    m_temporary = dir / name;
}

StagedOutput::~StagedOutput() {
    if (m_committed) return;
    std::error_code ec;
    std::filesystem::remove_all(m_temporary, ec);
}

void StagedOutput::commit() {
    std::error_code ec;
    const bool targetExists = std::filesystem::exists(m_target, ec);
    if (targetExists && !m_overwrite)
        throw IoError(m_target.string() + " appeared while writing; not replacing it without the overwrite option");
    if (targetExists && (std::filesystem::is_directory(m_target) || std::filesystem::is_directory(m_temporary))) {
        // rename() replaces a file atomically but not a directory: move the
        // old target aside, put the new one in place, then delete the old.
        const auto aside = m_temporary.string() + ".old";
        std::filesystem::rename(m_target, aside, ec);
        if (ec) throw IoError("cannot move " + m_target.string() + " aside to replace it: " + ec.message());
        std::filesystem::rename(m_temporary, m_target, ec);
        if (ec) {
            std::error_code restore;
            std::filesystem::rename(aside, m_target, restore);
            throw IoError("cannot rename " + m_temporary.string() + " to " + m_target.string() + ": " + ec.message());
        }
        std::filesystem::remove_all(aside, ec);
    } else {
        std::filesystem::rename(m_temporary, m_target, ec);
        if (ec)
            throw IoError("cannot rename " + m_temporary.string() + " to " + m_target.string() + ": " + ec.message());
    }
    m_committed = true;
}

SliceTracker::SliceTracker(std::filesystem::path target, int width, int height, int slices)
    : m_target(std::move(target)), m_width(width), m_height(height), m_written(static_cast<std::size_t>(slices), false) {}

void SliceTracker::check(int first, int count, std::size_t values) const {
    if (first < 0 || count < 0 || first > slices() - count)
        throw InvalidArgument("slices [" + std::to_string(first) + ", " +
                              std::to_string(static_cast<long long>(first) + count) + ") for " + m_target.string() +
                              ": expected a range inside [0, " + std::to_string(slices()) + ")");
    if (values != static_cast<std::size_t>(count) * sliceSize())
        throw InvalidArgument("data for " + std::to_string(count) + " slices of " + m_target.string() + " holds " +
                              std::to_string(values) + " values; expected " + std::to_string(count) + " x " +
                              std::to_string(m_width) + " x " + std::to_string(m_height));
}

void SliceTracker::markWritten(int first, int count) {
    std::fill_n(m_written.begin() + first, count, true);
}

void SliceTracker::requireComplete() const {
    const auto missing = std::find(m_written.begin(), m_written.end(), false);
    if (missing != m_written.end())
        throw IoError("cannot commit " + m_target.string() + ": slice " +
                      std::to_string(missing - m_written.begin()) + " of " + std::to_string(slices()) +
                      " was never written");
}

} // namespace detail

VolumeFormat volumeFormatFor(const std::filesystem::path& target) {
    const std::string ext = detail::lowerExtension(target);
    if (ext == ".h5" || ext == ".hdf5" || ext == ".hdf" || ext == ".nxs") return VolumeFormat::Hdf5;
    std::error_code ec;
    if (ext == ".tif" || ext == ".tiff" || ext.empty() || !target.has_filename() ||
        std::filesystem::is_directory(target, ec))
        return VolumeFormat::TiffStack;
    throw InvalidArgument("output " + target.string() + ": extension '" + ext +
                          "' is not known; expected .h5, .hdf5, .hdf or .nxs (HDF5), .tif or .tiff (multi-page "
                          "TIFF), or a directory (TIFF stack)");
}

std::unique_ptr<VolumeWriter> createVolumeWriter(const std::filesystem::path& target, int width, int height,
                                                 int slices, const WriteOptions& options) {
    if (width < 1 || height < 1 || slices < 1)
        throw InvalidArgument("volume " + target.string() + " of " + std::to_string(width) + " x " +
                              std::to_string(height) + " x " + std::to_string(slices) +
                              ": expected at least one pixel and one slice");
    const VolumeFormat format = volumeFormatFor(target);
    if (format == VolumeFormat::Hdf5) {
#if TOMO_WITH_HDF5
        return detail::createHdf5VolumeWriter(target, width, height, slices, options);
#else
        throw InvalidArgument(target.string() + ": writing HDF5 needs HDF5 support, which this build lacks");
#endif
    }
    if (options.tiffBits != 32 && options.tiffBits != 16 && options.tiffBits != 8)
        throw InvalidArgument("TIFF bits " + std::to_string(options.tiffBits) + " for " + target.string() +
                              ": expected 32 (float), 16 or 8");
    if (options.tiffBits != 32 &&
        !(std::isfinite(options.rangeMin) && std::isfinite(options.rangeMax) && options.rangeMax > options.rangeMin))
        throw InvalidArgument("value range [" + std::to_string(options.rangeMin) + ", " +
                              std::to_string(options.rangeMax) + "] for the " + std::to_string(options.tiffBits) +
                              "-bit TIFF " + target.string() + ": expected finite numbers with min < max");
#if TOMO_WITH_TIFF
    const std::string ext = detail::lowerExtension(target);
    if (target.has_filename() && (ext == ".tif" || ext == ".tiff"))
        return detail::createMultiPageTiffWriter(target, width, height, slices, options);
    return detail::createTiffDirectoryWriter(target, width, height, slices, options);
#else
    throw InvalidArgument(target.string() + ": writing TIFF needs TIFF support, which this build lacks");
#endif
}

ImageStack readVolume(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw IoError(path.string() + ": no such file or directory");
    const bool isDirectory = std::filesystem::is_directory(path, ec);
    const auto kind = isDirectory ? detail::FileKind::Tiff : detail::sniffFile(path);
    if (kind == detail::FileKind::Hdf5) {
#if TOMO_WITH_HDF5
        return detail::readHdf5Volume(path);
#else
        throw FormatError(path.string() + " is an HDF5 file but this build has no HDF5 support");
#endif
    }
    if (kind == detail::FileKind::Tiff) {
#if TOMO_WITH_TIFF
        return detail::readTiffVolume(path);
#else
        throw FormatError(path.string() + (isDirectory ? " is a directory" : " is a TIFF file") +
                          " but this build has no TIFF support");
#endif
    }
    throw FormatError(path.string() + " is not a volume: expected an HDF5 file with /volume, a TIFF, or a "
                                      "directory of TIFFs");
}

} // namespace tomo
