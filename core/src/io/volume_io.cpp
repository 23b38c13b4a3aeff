// Volume output: format choice, writer dispatch, the temporary-then-rename
// staging and the parallel conversion the writers share, and readVolume
// dispatch.
#include "tomo/volume_io.h"

#include "io/file_checks.h"
#include "io/readers.h"
#include "io/writers.h"
#include "tomo/error.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <regex>
#include <thread>

#include <csignal>

#include <dirent.h>
#include <fcntl.h>
#include <sys/statvfs.h>
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
    if (fileType(target) != std::filesystem::file_type::directory) return;
    static const std::regex slice(R"(slice_\d+\.tiff?)");
    std::error_code ec;
    std::filesystem::directory_iterator it(target, ec);
    for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!it->is_regular_file(ec) || !std::regex_match(name, slice))
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

/// Whether anything is at `path`, a symbolic link (even to nothing) included.
bool entryExists(const std::filesystem::path& path) {
    std::error_code ec;
    const auto status = std::filesystem::symlink_status(path, ec);
    if (ec && status.type() != std::filesystem::file_type::not_found)
        throw IoError(path.string() + ": cannot be examined: " + ec.message());
    return std::filesystem::exists(status);
}

/// The longest file name the directory's file system takes.
std::size_t nameMax(const std::filesystem::path& dir) {
    const long max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
    return max > 0 ? static_cast<std::size_t>(max) : 255;
}

/// The first `bytes` bytes of a UTF-8 name, not cutting a character.
std::string utf8Prefix(const std::string& name, std::size_t bytes) {
    if (name.size() <= bytes) return name;
    std::size_t cut = bytes;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
    return name.substr(0, cut);
}

// ---- temporaries a signal handler can delete
//
// A process killed by a second Ctrl-C, SIGTERM or SIGHUP must not leave its
// hidden temporary behind, but a signal handler may only make
// async-signal-safe calls: the paths live in fixed slots, written before
// the slot is published, and removeUncommittedOutputs() uses only unlink,
// open, getdents64, unlinkat, rmdir and close.

struct TemporarySlot {
    std::atomic<bool> claimed{false};
    std::atomic<bool> published{false};
    char path[PATH_MAX] = {};
};
std::array<TemporarySlot, 64> g_temporaries;

/// The slot now holding `path`, or -1 (path too long, all slots taken: the
/// temporary is then only removed by the normal paths).
int publishTemporary(const std::filesystem::path& path) {
    const std::string text = path.string();
    if (text.size() >= PATH_MAX) return -1;
    for (std::size_t i = 0; i < g_temporaries.size(); ++i) {
        bool expected = false;
        if (!g_temporaries[i].claimed.compare_exchange_strong(expected, true)) continue;
        std::memcpy(g_temporaries[i].path, text.c_str(), text.size() + 1);
        g_temporaries[i].published.store(true);
        return static_cast<int>(i);
    }
    return -1;
}

void withdrawTemporary(int slot) {
    if (slot < 0) return;
    g_temporaries[static_cast<std::size_t>(slot)].published.store(false);
    g_temporaries[static_cast<std::size_t>(slot)].claimed.store(false);
}

/// Async-signal-safe removal of a file, or of a directory of files (what
/// the writers make).
void removeFileOrFlatDirectory(const char* path) {
    if (::unlink(path) == 0 || errno == ENOENT) return;
    const int dir = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0) return;
    alignas(dirent64) char buffer[4096];
    for (;;) {
        const ssize_t got = ::getdents64(dir, buffer, sizeof buffer);
        if (got <= 0) break;
        for (ssize_t at = 0; at < got;) {
            const auto* entry = reinterpret_cast<const dirent64*>(buffer + at);
            at += entry->d_reclen;
            const char* name = entry->d_name;
            if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) ::unlinkat(dir, name, 0);
        }
    }
    ::close(dir);
    ::rmdir(path);
}

/// Bytes the ".old" of a replaced directory, or the ".done" of a resumable
/// temporary's record (SharedVolume), adds to a temporary's name.
constexpr std::size_t kAsideSuffix = 5;

/// This machine's name as it appears in temporaries' names: letters, digits,
/// '_' and '.' (other characters become '_'), at most 32 of them; "host"
/// when the system gives none. With the process id it tells whose a
/// temporary is on a file system that several machines share.
std::string hostTag() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "host";
    std::string tag;
    for (const char* c = name; *c && tag.size() < 32; ++c)
        tag += std::isalnum(static_cast<unsigned char>(*c)) || *c == '.' ? *c : '_';
    return tag;
}

/// The hidden temporary of `name` in a directory taking names of at most
/// `limit` bytes, for `suffix` (".tmp-HOST-PID-N", ".tomo-partial"): a long
/// name is shortened so that the temporary and its ".old" or ".done" still fit.
std::string temporaryName(const std::string& name, const std::string& suffix, std::size_t limit) {
    std::string out(1, '.'); // built in steps: GCC 12 sees a false overlap in "." + ...
    out += utf8Prefix(name, limit - 1 - suffix.size() - kAsideSuffix);
    out += suffix;
    return out;
}

} // namespace

void requireFreeSpace(const std::filesystem::path& target, const VolumeFootprint& footprint) {
    const std::filesystem::path t = withoutTrailingSlash(target);
    const auto dir = t.has_parent_path() ? t.parent_path() : std::filesystem::path(".");
    struct statvfs fs {};
    if (::statvfs(dir.c_str(), &fs) != 0) return; // the writer reports the real failure
    // Files take whole blocks; a folder of files takes a block of its own.
    const double block = std::max(1.0, static_cast<double>(fs.f_frsize));
    const double bytes = footprint.files * std::ceil(footprint.bytesPerFile / block) * block +
                         (footprint.files > 1.0 ? block : 0.0);
    const double available = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
    if (available < bytes)
        throw IoError(t.string() + ": the volume needs " + formatBytes(bytes) + " but only " + formatBytes(available) +
                      " are free in " + dir.string());
}

StagedOutput::StagedOutput(std::filesystem::path target, bool overwrite, Staging staging)
    : m_target(withoutTrailingSlash(target)), m_overwrite(overwrite), m_keep(staging == Staging::Resumable) {
    const auto dir = m_target.has_parent_path() ? m_target.parent_path() : std::filesystem::path(".");
    const std::string name = m_target.filename().string();
    const std::size_t limit = nameMax(dir);
    if (name.size() > limit)
        throw IoError(m_target.string() + ": the name has " + std::to_string(name.size()) +
                      " bytes; the file system takes at most " + std::to_string(limit));
    if (entryExists(m_target)) {
        if (!overwrite) {
            const bool dangling = fileType(m_target) == std::filesystem::file_type::not_found;
            throw IoError(m_target.string() + (dangling ? " is a symbolic link (to nothing)" : " already exists") +
                          "; not replacing it without the overwrite option");
        }
        requireReplaceableDirectory(m_target);
    }
    const auto dirType = fileType(dir);
    if (dirType != std::filesystem::file_type::directory)
        throw IoError(m_target.string() + ": the directory " + dir.string() +
                      (dirType == std::filesystem::file_type::not_found ? " does not exist" : " is " + fileTypeName(dirType)));
    // Hidden, unique per process and writer, in the same directory so that
    // the final rename stays on one file system (atomic). A long target
    // name is shortened so that the temporary (and the ".old" name used
    // when replacing a directory) still fits the file system's limit.
    // A resumable one has a fixed name (a later run finds it) and is not
    // published: neither a signal nor an error deletes it.
    static std::atomic<unsigned> counter{0};
    const std::string suffix =
        m_keep ? std::string(".tomo-partial")
               : ".tmp-" + hostTag() + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    m_temporary = dir / temporaryName(name, suffix, limit);
    if (!m_keep) m_slot = publishTemporary(m_temporary);
}

StagedOutput::~StagedOutput() {
    withdrawTemporary(m_slot);
    if (m_committed || m_keep) return;
    std::error_code ec;
    std::filesystem::remove_all(m_temporary, ec);
}

void StagedOutput::commit() {
    const bool targetExists = entryExists(m_target);
    if (targetExists && !m_overwrite)
        throw IoError(m_target.string() + " appeared while writing; not replacing it without the overwrite option");
    std::error_code ec;
    const bool replacingDirectory = targetExists && (fileType(m_target) == std::filesystem::file_type::directory ||
                                                     fileType(m_temporary) == std::filesystem::file_type::directory);
    if (replacingDirectory) {
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
    withdrawTemporary(m_slot);
    m_slot = -1;
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

int writerThreads(const WriteOptions& options) {
    if (options.threads < 0)
        throw InvalidArgument("writer threads " + std::to_string(options.threads) + ": expected 0 (automatic) or more");
    if (options.threads > 0) return options.threads;
    // Conversion is memory-bound and a few threads fill a disk's queue:
    // more than 16 only take memory.
    return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
}

ParallelEncoder::ParallelEncoder(const WriteOptions& options)
    : m_encoder(options.type, options.rangeMin, options.rangeMax), m_pool(writerThreads(options)),
      m_counts(static_cast<std::size_t>(m_pool.threads())), m_scratch(static_cast<std::size_t>(m_pool.threads())) {}

void ParallelEncoder::encode(std::span<const float> values, std::byte* out) {
    // Pieces of at least 256 Ki values (cheap to hand out), a few per thread
    // (an even spread when one is slower).
    constexpr std::size_t kMinPiece = std::size_t{1} << 18;
    const std::size_t pieces =
        std::clamp<std::size_t>(values.size() / kMinPiece, 1, static_cast<std::size_t>(4 * m_pool.threads()));
    const std::size_t piece = (values.size() + pieces - 1) / pieces;
    m_pool.parallelFor(static_cast<int>(pieces), [&](int index, int thread) {
        const std::size_t begin = static_cast<std::size_t>(index) * piece;
        const auto part = values.subspan(begin, std::min(piece, values.size() - begin));
        m_encoder.encode(part, out + begin * sampleBytes(), m_counts[static_cast<std::size_t>(thread)]);
    });
}

void ParallelEncoder::forEach(int count, const std::function<void(int index, int thread)>& task) {
    m_pool.parallelFor(count, task);
}

std::span<std::byte> ParallelEncoder::encodeOnThread(int thread, std::span<const float> values) {
    auto& buffer = m_scratch[static_cast<std::size_t>(thread)];
    buffer.resize(values.size() * sampleBytes());
    encodeOnThread(thread, values, buffer.data());
    return buffer;
}

void ParallelEncoder::encodeOnThread(int thread, std::span<const float> values, std::byte* out) {
    m_encoder.encode(values, out, m_counts[static_cast<std::size_t>(thread)]);
}

int ParallelEncoder::slicesPerBuffer(std::size_t sliceValues) const {
    constexpr std::size_t kBufferBytes = std::size_t{64} << 20;
    const std::size_t slices = kBufferBytes / std::max<std::size_t>(1, sliceValues * sampleBytes());
    return static_cast<int>(std::clamp<std::size_t>(slices, 1, 1 << 20));
}

ClippedValues ParallelEncoder::clipped() const {
    ClippedValues sum;
    for (const ClippedValues& c : m_counts) {
        sum.below += c.below;
        sum.above += c.above;
        sum.nan += c.nan;
    }
    return sum;
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

std::vector<StaleTemporary> removeStaleTemporaries(const std::filesystem::path& target) {
    const std::filesystem::path t = detail::withoutTrailingSlash(target);
    const auto dir = t.has_parent_path() ? t.parent_path() : std::filesystem::path(".");
    const std::string name = t.filename().string();
    const std::size_t limit = detail::nameMax(dir);
    static const std::regex temporary(R"(\.(.*)(\.tmp-([A-Za-z0-9_.]{1,32})-([0-9]{1,9})-[0-9]{1,10})(\.old)?)");
    const std::string host = detail::hostTag();
    std::vector<StaleTemporary> removed;
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec);
    for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        const std::string entry = it->path().filename().string();
        std::smatch m;
        if (!std::regex_match(entry, m, temporary)) continue;
        const std::string suffix = m[2].str();
        if (entry.substr(0, entry.size() - m[5].length()) != detail::temporaryName(name, suffix, limit)) continue;
        // Another machine's (a shared file system): whether it runs cannot be known here.
        if (m[3].str() != host) continue;
        const long pid = std::stol(m[4].str());
        // Running (EPERM: running as another user): its run is not over.
        if (pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;
        std::error_code removing;
        std::filesystem::remove_all(it->path(), removing);
        if (removing)
            throw IoError(it->path().string() + ": a temporary left by an earlier run (process " + std::to_string(pid) +
                          ", no longer running) cannot be deleted: " + removing.message());
        removed.push_back({it->path(), pid});
    }
    return removed;
}

void removeUncommittedOutputs() noexcept {
    for (auto& slot : detail::g_temporaries)
        if (slot.published.load()) detail::removeFileOrFlatDirectory(slot.path);
}

std::unique_ptr<VolumeWriter> createVolumeWriter(const std::filesystem::path& target, int width, int height,
                                                 int slices, const WriteOptions& options) {
    if (width < 1 || height < 1 || slices < 1)
        throw InvalidArgument("volume " + target.string() + " of " + std::to_string(width) + " x " +
                              std::to_string(height) + " x " + std::to_string(slices) +
                              ": expected at least one pixel and one slice");
    const VolumeFormat format = volumeFormatFor(target);
    try {
        quantizationFor(options.type, options.rangeMin, options.rangeMax);
    } catch (const InvalidArgument& e) {
        throw InvalidArgument(target.string() + ": " + e.what());
    }
    detail::writerThreads(options); // checked whatever the format
    // The room is checked before any slice is computed.
    if (format == VolumeFormat::Hdf5) {
#if TOMO_WITH_HDF5
        detail::requireFreeSpace(target, detail::hdf5Footprint(width, height, slices, options));
        return detail::createHdf5VolumeWriter(target, width, height, slices, options);
#else
        throw InvalidArgument(target.string() + ": writing HDF5 needs HDF5 support, which this build lacks");
#endif
    }
#if TOMO_WITH_TIFF
    const std::string ext = detail::lowerExtension(target);
    const bool multiPage = target.has_filename() && (ext == ".tif" || ext == ".tiff");
    detail::requireFreeSpace(target, detail::tiffFootprint(width, height, slices, options, !multiPage));
    if (multiPage) return detail::createMultiPageTiffWriter(target, width, height, slices, options);
    return detail::createTiffDirectoryWriter(target, width, height, slices, options);
#else
    throw InvalidArgument(target.string() + ": writing TIFF needs TIFF support, which this build lacks");
#endif
}

ImageStack readVolume(const std::filesystem::path& path, std::size_t maxBytes) {
    const bool isDirectory = detail::fileType(path) == std::filesystem::file_type::directory;
    if (!isDirectory) detail::requireRegularFile(path, "a volume (an HDF5 file, a TIFF or a directory of TIFFs)");
    const auto kind = isDirectory ? detail::FileKind::Tiff : detail::sniffFile(path);
    if (kind == detail::FileKind::Hdf5) {
#if TOMO_WITH_HDF5
        return detail::readHdf5Volume(path, maxBytes);
#else
        throw FormatError(path.string() + " is an HDF5 file but this build has no HDF5 support");
#endif
    }
    if (kind == detail::FileKind::Tiff) {
#if TOMO_WITH_TIFF
        return detail::readTiffVolume(path, maxBytes);
#else
        throw FormatError(path.string() + (isDirectory ? " is a directory" : " is a TIFF file") +
                          " but this build has no TIFF support");
#endif
    }
    throw FormatError(path.string() + " is not a volume: expected an HDF5 file with /volume, a TIFF, or a "
                                      "directory of TIFFs");
}

} // namespace tomo
