// SharedVolume: the resumable temporary beside the target, its record of
// the slices written, and the layout the other ranks write through.
//
// The record is a text file: a JSON header on the first line (what the
// output is and the parameters it was made with), then one line
// "first count rank" per span written, appended and synced as rank 0 learns
// of it. A line cut short by a crash is ignored (its slices are redone).
#include "tomo/shared_volume.h"

#include "io/file_checks.h"
#include "io/writers.h"
#include "tomo/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace tomo {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

enum class Kind { Hdf5, TiffFolder };

/// What the record's header holds: the volume and the parameters it was
/// made with (the attributes but the command line, which --resume changes).
json headerOf(const fs::path& target, int width, int height, int slices, const WriteOptions& options) {
    json attributes = json::object();
    for (const auto& [key, value] : options.attributes)
        if (key != "command_line") attributes[key] = value;
    return {{"tomo_partial", 1},
            {"target", fs::absolute(target).lexically_normal().string()},
            {"width", width},
            {"height", height},
            {"slices", slices},
            {"type", outputTypeName(options.type)},
            {"range", {options.rangeMin, options.rangeMax}},
            {"attributes", attributes}};
}

/// Why `found` (a record's header) is not `wanted`: "" when it is.
std::string difference(const json& found, const json& wanted) {
    for (const char* key : {"width", "height", "slices", "type", "range"})
        if (found.value(key, json()) != wanted.at(key))
            return std::string(key) + " " + found.value(key, json()).dump() + " there, " + wanted.at(key).dump() + " now";
    const json& a = found.contains("attributes") ? found.at("attributes") : json::object();
    const json& b = wanted.at("attributes");
    for (const auto& [key, value] : b.items())
        if (a.value(key, json()) != value)
            return "'" + key + "' " + a.value(key, json()).dump().substr(0, 80) + " there, " + value.dump().substr(0, 80) +
                   " now";
    for (const auto& [key, value] : a.items())
        if (!b.contains(key)) return "'" + key + "' " + value.dump().substr(0, 80) + " there, none now";
    return {};
}

/// The spans a record lists (lines cut short ignored). Throws FormatError
/// naming the record for a header that is not one.
struct Record {
    json header;
    std::vector<SliceSpan> spans;
};

Record readRecord(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(path.string() + ": cannot read the record of the slices written");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Record r;
    std::size_t end = text.find('\n');
    if (end == std::string::npos) end = text.size();
    r.header = json::parse(text.substr(0, end), nullptr, /*allow_exceptions=*/false);
    if (!r.header.is_object() || r.header.value("tomo_partial", 0) != 1)
        throw FormatError(path.string() + ": not a record of a partial output (its first line should be its header)");
    for (std::size_t at = end + 1; at < text.size();) {
        const std::size_t next = text.find('\n', at);
        if (next == std::string::npos) break; // cut short: its slices are redone
        std::istringstream line(text.substr(at, next - at));
        SliceSpan span;
        int rank = 0;
        if (!(line >> span.first >> span.count >> rank))
            throw FormatError(path.string() + ": line '" + text.substr(at, std::min<std::size_t>(next - at, 40)) +
                              "' is not 'first count rank'");
        r.spans.push_back(span);
        at = next + 1;
    }
    return r;
}

} // namespace

struct SharedVolume::Impl {
    Kind kind = Kind::Hdf5;
    fs::path target, temporary;
    int width = 0, height = 0, slices = 0;
    OutputType type = OutputType::Float32;
    float rangeMin = 0.0f, rangeMax = 1.0f;
#if TOMO_WITH_HDF5
    detail::Hdf5Chunks chunks;
#endif
    // Rank 0's only:
    std::optional<detail::StagedOutput> staged;
    std::vector<bool> done;
    bool resumed = false;
    bool created = false; ///< made by this object (not found again)
    bool committed = false;
    int recordFd = -1;

    ~Impl() {
        if (recordFd >= 0) ::close(recordFd);
        // A new output that got no slice holds nothing to resume: it goes
        // (a run that failed in its setup leaves nothing behind).
        if (created && !committed && std::find(done.begin(), done.end(), true) == done.end()) {
            std::error_code ec;
            fs::remove_all(temporary, ec);
            fs::remove(recordPath(), ec);
        }
    }

    fs::path recordPath() const { return temporary.string() + ".done"; }

    void markDone(const SliceSpan& span) {
        if (span.first < 0 || span.count < 1 || span.first > slices - span.count)
            throw FormatError(recordPath().string() + ": slices " + std::to_string(span.first) + "+" +
                              std::to_string(span.count) + " are outside the volume's " + std::to_string(slices));
        std::fill_n(done.begin() + span.first, span.count, true);
    }

    /// The record, started with its header.
    void startRecord(const json& header) {
        std::error_code ec;
        fs::remove(recordPath(), ec);
        openRecord(O_CREAT | O_EXCL);
        append(header.dump() + "\n");
    }
    void openRecord(int flags) {
        recordFd = ::open(recordPath().c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | flags, 0644);
        if (recordFd < 0)
            throw IoError(recordPath().string() + ": cannot write the record of the slices written: " +
                          std::strerror(errno));
    }
    void append(const std::string& line) {
        for (std::size_t done = 0; done < line.size();) {
            const ssize_t n = ::write(recordFd, line.data() + done, line.size() - done);
            if (n > 0) done += static_cast<std::size_t>(n);
            else if (n < 0 && errno == EINTR) continue;
            else throw IoError(recordPath().string() + ": cannot write the record: " + std::strerror(errno));
        }
        if (::fdatasync(recordFd) != 0)
            throw IoError(recordPath().string() + ": cannot write the record: " + std::strerror(errno));
    }

    /// Throws IoError when the file system has not the room for the volume.
    void requireRoom(const WriteOptions& options) const {
#if TOMO_WITH_HDF5
        if (kind == Kind::Hdf5) detail::requireFreeSpace(target, detail::hdf5Footprint(width, height, slices, options));
#endif
#if TOMO_WITH_TIFF
        if (kind == Kind::TiffFolder)
            detail::requireFreeSpace(target, detail::tiffFootprint(width, height, slices, options, true));
#endif
        (void)options;
    }

    void makeNew(const WriteOptions& options) {
        created = true;
        if (kind == Kind::TiffFolder) {
            std::error_code ec;
            fs::create_directory(temporary, ec);
            if (ec) throw IoError(target.string() + ": cannot create " + temporary.string() + ": " + ec.message());
        } else {
#if TOMO_WITH_HDF5
            chunks = detail::createHdf5VolumeFile(temporary, target.string(), width, height, slices, options);
#else
            (void)options;
#endif
        }
    }
};

SharedVolume::SharedVolume(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
SharedVolume::SharedVolume(SharedVolume&&) noexcept = default;
SharedVolume& SharedVolume::operator=(SharedVolume&&) noexcept = default;
SharedVolume::~SharedVolume() = default;

SharedVolume SharedVolume::create(const fs::path& target, int width, int height, int slices,
                                  const WriteOptions& options, bool resume) {
    if (width < 1 || height < 1 || slices < 1)
        throw InvalidArgument("volume " + target.string() + " of " + std::to_string(width) + " x " +
                              std::to_string(height) + " x " + std::to_string(slices) +
                              ": expected at least one pixel and one slice");
    auto d = std::make_unique<Impl>();
    const VolumeFormat format = volumeFormatFor(target);
    const std::string ext = target.extension().string();
    if (format == VolumeFormat::TiffStack && target.has_filename() && !ext.empty())
        throw InvalidArgument("output " + target.string() +
                              ": a multi-page TIFF is appended page by page by one process, so the ranks of an MPI run "
                              "cannot share it; write an HDF5 file (.h5) or a folder of TIFFs");
    d->kind = format == VolumeFormat::Hdf5 ? Kind::Hdf5 : Kind::TiffFolder;
#if !TOMO_WITH_HDF5
    if (d->kind == Kind::Hdf5) throw InvalidArgument(target.string() + ": writing HDF5 needs HDF5 support, which this build lacks");
#endif
#if !TOMO_WITH_TIFF
    if (d->kind == Kind::TiffFolder) throw InvalidArgument(target.string() + ": writing TIFF needs TIFF support, which this build lacks");
#endif
    try {
        quantizationFor(options.type, options.rangeMin, options.rangeMax);
    } catch (const InvalidArgument& e) {
        throw InvalidArgument(target.string() + ": " + e.what());
    }
    detail::writerThreads(options); // checked
    d->width = width;
    d->height = height;
    d->slices = slices;
    d->type = options.type;
    d->rangeMin = options.rangeMin;
    d->rangeMax = options.rangeMax;
    d->staged.emplace(target, options.overwrite, detail::StagedOutput::Staging::Resumable);
    d->target = d->staged->target();
    d->temporary = d->staged->temporary();
    d->done.assign(static_cast<std::size_t>(slices), false);
    const json header = headerOf(d->target, width, height, slices, options);

    std::error_code ec;
    const bool haveTemporary = fs::exists(fs::symlink_status(d->temporary, ec));
    const bool haveRecord = fs::exists(fs::symlink_status(d->recordPath(), ec));
    if (resume && haveTemporary && haveRecord) {
        const Record record = readRecord(d->recordPath());
        if (const std::string why = difference(record.header, header); !why.empty())
            throw InvalidArgument(d->target.string() + ": the partial output " + d->temporary.string() +
                                  " was made with other parameters (" + why +
                                  "); run with the same options to resume it, or without --resume and with --overwrite "
                                  "to start again");
        for (const SliceSpan& span : record.spans) d->markDone(span);
#if TOMO_WITH_HDF5
        if (d->kind == Kind::Hdf5)
            d->chunks = detail::findHdf5VolumeChunks(d->temporary, d->target.string(), width, height, slices, options.type);
#endif
        if (d->kind == Kind::TiffFolder && detail::fileType(d->temporary) != fs::file_type::directory)
            throw FormatError(d->target.string() + ": the partial output " + d->temporary.string() + " is not a folder");
        d->openRecord(0);
        d->resumed = true;
        return SharedVolume(std::move(d));
    }
    if ((haveTemporary || haveRecord) && !resume && !options.overwrite) {
        std::string held;
        if (haveRecord) try {
                const Record record = readRecord(d->recordPath());
                int written = 0;
                for (const SliceSpan& span : record.spans) written += span.count;
                held = ", " + std::to_string(written) + " of " + std::to_string(slices) + " slices written";
            } catch (const Error&) {
            }
        throw IoError(d->target.string() + ": a partial output of an earlier run is there (" + d->temporary.string() +
                      held + "); add --resume to finish it, or --overwrite to start again");
    }
    // A new output: what is left of an earlier one goes first.
    fs::remove_all(d->temporary, ec);
    fs::remove(d->recordPath(), ec);
    d->requireRoom(options);
    d->makeNew(options);
    d->startRecord(header);
    return SharedVolume(std::move(d));
}

std::string SharedVolume::layout() const {
    const Impl& d = *m_impl;
    json j = {{"kind", d.kind == Kind::Hdf5 ? "hdf5" : "tiff-folder"},
              {"target", d.target.string()},
              {"temporary", fs::absolute(d.temporary).string()}, // the other ranks may start elsewhere
              {"width", d.width},
              {"height", d.height},
              {"slices", d.slices},
              {"type", outputTypeName(d.type)},
              {"range", {d.rangeMin, d.rangeMax}}};
#if TOMO_WITH_HDF5
    if (d.kind == Kind::Hdf5)
        j["chunks"] = {{"file_bytes", d.chunks.fileBytes},
                       {"band_rows", d.chunks.bandRows},
                       {"bands_per_slice", d.chunks.bandsPerSlice},
                       {"addresses", d.chunks.addresses}};
#endif
    return j.dump();
}

SharedVolume SharedVolume::fromLayout(const std::string& layout) {
    const json j = json::parse(layout, nullptr, /*allow_exceptions=*/false);
    auto d = std::make_unique<Impl>();
    try {
        if (!j.is_object()) throw json::type_error::create(302, "not an object", nullptr);
        d->kind = j.at("kind").get<std::string>() == "hdf5" ? Kind::Hdf5 : Kind::TiffFolder;
        d->target = j.at("target").get<std::string>();
        d->temporary = j.at("temporary").get<std::string>();
        d->width = j.at("width").get<int>();
        d->height = j.at("height").get<int>();
        d->slices = j.at("slices").get<int>();
        d->type = parseOutputType(j.at("type").get<std::string>(), "the layout's type");
        d->rangeMin = j.at("range").at(0).get<float>();
        d->rangeMax = j.at("range").at(1).get<float>();
#if TOMO_WITH_HDF5
        if (d->kind == Kind::Hdf5) {
            const json& c = j.at("chunks");
            d->chunks.fileBytes = c.at("file_bytes").get<std::uint64_t>();
            d->chunks.bandRows = c.at("band_rows").get<std::uint64_t>();
            d->chunks.bandsPerSlice = c.at("bands_per_slice").get<std::uint64_t>();
            d->chunks.addresses = c.at("addresses").get<std::vector<std::uint64_t>>();
            if (d->chunks.addresses.size() != static_cast<std::size_t>(d->slices) * d->chunks.bandsPerSlice)
                throw json::other_error::create(501, "chunk addresses do not match the slices", nullptr);
        }
#endif
    } catch (const json::exception& e) {
        throw FormatError(std::string("the layout of a shared output is not valid: ") + e.what());
    }
    return SharedVolume(std::move(d));
}

const fs::path& SharedVolume::target() const { return m_impl->target; }
const fs::path& SharedVolume::temporary() const { return m_impl->temporary; }
fs::path SharedVolume::record() const { return m_impl->recordPath(); }
int SharedVolume::slices() const { return m_impl->slices; }
bool SharedVolume::resumed() const { return m_impl->resumed; }

std::vector<SliceSpan> SharedVolume::missing() const {
    std::vector<SliceSpan> spans;
    const std::vector<bool>& done = m_impl->done;
    for (int z = 0; z < static_cast<int>(done.size()); ++z) {
        if (done[static_cast<std::size_t>(z)]) continue;
        if (!spans.empty() && spans.back().first + spans.back().count == z) ++spans.back().count;
        else spans.push_back({z, 1});
    }
    return spans;
}

int SharedVolume::slicesWritten() const {
    return static_cast<int>(std::count(m_impl->done.begin(), m_impl->done.end(), true));
}

std::unique_ptr<VolumeWriter> SharedVolume::writer(const WriteOptions& options, bool sameHost) const {
    const Impl& d = *m_impl;
    WriteOptions o = options; // the output's type and range, this process's threads
    o.type = d.type;
    o.rangeMin = d.rangeMin;
    o.rangeMax = d.rangeMax;
    if (d.kind == Kind::TiffFolder) {
#if TOMO_WITH_TIFF
        return detail::openTiffFolderPart(d.temporary, d.target.string(), d.width, d.height, d.slices, o);
#endif
    } else {
#if TOMO_WITH_HDF5
        return detail::openHdf5VolumePart(d.temporary, d.target.string(), d.width, d.height, d.slices, d.chunks, o,
                                          sameHost);
#endif
    }
    (void)sameHost;
    throw InvalidArgument(d.target.string() + ": this build cannot write that format");
}

void SharedVolume::record(const SliceSpan& span, int rank) {
    Impl& d = *m_impl;
    if (!d.staged) throw InvalidArgument("SharedVolume::record belongs to rank 0");
    d.markDone(span);
    d.append(std::to_string(span.first) + " " + std::to_string(span.count) + " " + std::to_string(rank) + "\n");
}

void SharedVolume::commit() {
    Impl& d = *m_impl;
    if (!d.staged) throw InvalidArgument("SharedVolume::commit belongs to rank 0");
    const auto missing = std::find(d.done.begin(), d.done.end(), false);
    if (missing != d.done.end())
        throw IoError("cannot commit " + d.target.string() + ": slice " + std::to_string(missing - d.done.begin()) +
                      " of " + std::to_string(d.slices) + " was never written (it stays in " + d.temporary.string() +
                      " for --resume)");
    d.staged->commit();
    d.committed = true;
    ::close(d.recordFd);
    d.recordFd = -1;
    std::error_code ec;
    fs::remove(d.recordPath(), ec);
}

} // namespace tomo
