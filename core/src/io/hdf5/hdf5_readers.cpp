// HDF5 dataset readers: DXchange, NXtomo, single-sinogram files and MATLAB
// v7.3 variables. They read only the hyperslab of the requested rows, so
// files far larger than memory are fine; raw rows of uncompressed or
// deflated frames are read with pread and inflated with zlib on several
// threads (direct_rows.h), the rest through H5Dread.
#include "io/file_prefetch.h"
#include "io/hdf5/direct_rows.h"
#include "io/hdf5/h5_util.h"
#include "io/readers.h"
#include "tomo/error.h"
#include "tomo/worker_pool.h"

#include <algorithm>
#include <optional>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

namespace tomo::detail {

namespace {

/// A file descriptor for pread, closed with the reader.
class ReadOnlyFile {
public:
    explicit ReadOnlyFile(const std::filesystem::path& path) : m_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
        if (m_fd < 0) throw IoError(path.string() + ": cannot open for reading: " + std::strerror(errno));
        // No readahead: a band of rows is a piece of every frame, and the
        // kernel's readahead, ramping up over the first bands, goes on to
        // read whole frames, so the conveyor's next band waited for the
        // whole file (H100 machine, cold 4 GiB scan: the 4th band took 2.3 s,
        // then all others were cached) instead of arriving one by one.
        ::posix_fadvise(m_fd, 0, 0, POSIX_FADV_RANDOM);
    }
    ~ReadOnlyFile() { ::close(m_fd); }
    ReadOnlyFile(const ReadOnlyFile&) = delete;
    ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

constexpr const char* kDxData = "/exchange/data";
constexpr const char* kDxFlat = "/exchange/data_white";
constexpr const char* kDxDark = "/exchange/data_dark";
constexpr const char* kDxTheta = "/exchange/theta";
constexpr const char* kNxDetectorData = "/entry/instrument/detector/data";
constexpr const char* kNxDataData = "/entry/data/data";
constexpr const char* kSinogram = "/sinogram";

using Object = h5::Handle<H5Oclose>;

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

/// What the file says about a divergent beam (fan or cone: a laboratory
/// scanner), or nullopt for a parallel beam. Unless options allow it, such
/// a file is refused (FormatError naming the file and what it declares):
/// a fan-beam sinogram reconstructed as parallel looks plausible but is wrong.
std::optional<DivergentBeam> divergentBeam(hid_t file, const std::filesystem::path& path, const OpenOptions& options) {
    std::optional<DivergentBeam> beam;
    const auto declare = [&](const std::string& what) {
        if (!options.allowDivergentBeam)
            throw FormatError(path.string() + " declares " + what +
                              "; parallel-beam reconstruction does not apply (tomo-recon reconstructs fan and cone "
                              "beams with FDK)");
        if (!beam) beam.emplace().declared = what;
    };
    for (const char* objectName : {"/", "/entry", "/exchange", "/measurement"}) {
        if (std::string(objectName) != "/" && !h5::exists(file, objectName)) continue;
        const Object object(H5Oopen(file, objectName, H5P_DEFAULT));
        if (!object.valid()) continue;
        // A declared geometry (HTC2022's "geometryType": "Cone").
        for (const char* name : {"geometryType", "geometry_type", "beam_geometry", "beamGeometry"})
            if (const auto value = h5::attributeText(object.get(), name)) {
                const std::string kind = lower(*value);
                if (kind.find("cone") != std::string::npos || kind.find("fan") != std::string::npos)
                    declare("a " + value->substr(0, 40) + "-beam geometry (attribute " + name + " of " + objectName + ")");
            }
        // A point source at a finite distance: a laboratory scanner.
        const auto number = [&](std::initializer_list<const char*> names, double& out) {
            for (const char* name : names) {
                const auto value = h5::attributeText(object.get(), name);
                if (!value) continue;
                declare("a divergent beam from a point source (attribute " + std::string(name) + " = " +
                        value->substr(0, 40) + " of " + objectName + ")");
                if (const auto v = h5::attributeNumber(object.get(), name); v && out == 0.0) out = *v;
            }
        };
        double sourceAxis = 0.0, sourceDetector = 0.0;
        number({"distanceSourceOrigin", "source_origin_distance", "sourceDistance"}, sourceAxis);
        number({"distanceSourceDetector", "source_detector_distance"}, sourceDetector);
        if (!beam) continue;
        if (beam->sourceAxis == 0.0) beam->sourceAxis = sourceAxis;
        if (beam->sourceDetector == 0.0) beam->sourceDetector = sourceDetector;
        // The stored pixels: after binning (HTC2022's pixelSizePost) when said.
        for (const char* name : {"pixelSizePost", "detector_pixel_size", "pixelSize"})
            if (const auto v = h5::attributeNumber(object.get(), name); v && beam->pixelSize == 0.0) beam->pixelSize = *v;
        for (const char* name : {"distanceUnit", "distance_unit"})
            if (const auto unit = h5::attributeText(object.get(), name); unit && beam->unit.empty())
                beam->unit = unit->substr(0, 16);
    }
    // NeXus and DXchange source distances: a synchrotron source tens of
    // metres away is parallel for tomography, a source within 5 m is not.
    for (const char* name : {"/entry/instrument/source/distance", "/measurement/instrument/source/distance",
                             "/measurement/instrument/source/source_sample_distance"}) {
        if (!h5::exists(file, name)) continue;
        const h5::Array distance(file, path, name);
        if (distance.dims().size() > 1) continue;
        const std::vector<double> values = distance.readAllDouble();
        if (values.size() != 1 || !std::isfinite(values[0]) || values[0] == 0.0) continue;
        const std::string units = lower(distance.stringAttribute("units").value_or("m"));
        const double metres = std::abs(values[0]) * (units == "mm" ? 1e-3 : units == "cm" ? 1e-2 : units == "um" ? 1e-6 : 1.0);
        if (metres < 5.0)
            declare("a point source " + std::to_string(values[0]) + " " + units + " from the sample (" + name +
                    "): a divergent beam");
    }
    return beam;
}

/// Some frames (along the first dimension) of a 3D [frame][row][column] array.
struct FrameSet {
    const h5::Array* array = nullptr;
    std::vector<std::pair<hsize_t, hsize_t>> runs; ///< [first, count) of consecutive frames
    int frames = 0;

    void add(hsize_t frame) {
        if (!runs.empty() && runs.back().first + runs.back().second == frame) ++runs.back().second;
        else runs.emplace_back(frame, 1);
        ++frames;
    }
    /// Frames [first, first + count) of the set (within it).
    FrameSet part(hsize_t first, hsize_t count) const {
        FrameSet out{array, {}, 0};
        for (const auto& [start, n] : runs) {
            if (first >= n) {
                first -= n;
                continue;
            }
            const hsize_t take = std::min(n - first, count - static_cast<hsize_t>(out.frames));
            out.runs.emplace_back(start + first, take);
            out.frames += static_cast<int>(take);
            first = 0;
            if (static_cast<hsize_t>(out.frames) == count) break;
        }
        return out;
    }
};

FrameSet allFrames(const h5::Array& array) {
    return {&array, {{0, array.dims()[0]}}, static_cast<int>(array.dims()[0])};
}

/// A DatasetReader over frame stacks [frame][row][column] (projections,
/// flats, darks may be the same array with different frames, or several).
/// Flats come in groups, each taken at one position of the scan.
class FrameStackReader : public DatasetReader {
public:
    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        checkRowRequest(m_info, firstRow, rowCount, out.size(),
                        static_cast<std::size_t>(m_info.projections) * static_cast<std::size_t>(m_info.columns));
        // Frames the library need not read (readRawRows) are converted
        // here, exactly for every type but float64 (left to HDF5's rounding).
        if ((m_direct || m_deflated) && m_info.sampleType != SampleType::Float64) {
            m_stored.resize(out.size() * sampleBytes(m_info.sampleType));
            readRawRows(firstRow, rowCount, m_stored);
            storedImagesToSinograms(m_stored, m_info.sampleType, m_info.projections, rowCount, m_info.columns, out);
            return;
        }
        const h5::Session session;
        m_buffer.resize(out.size());
        readFrames(m_projections, firstRow, rowCount, m_buffer);
        imagesToSinograms(m_buffer, m_info.projections, rowCount, m_info.columns, out);
    }

    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        const h5::Session session;
        if (m_flatGroups.empty()) return false;
        readMean(m_flatGroups, firstRow, rowCount, out);
        return true;
    }

    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        const h5::Session session;
        if (m_darks.empty()) return false;
        readMean(m_darks, firstRow, rowCount, out);
        return true;
    }

    void readFlatGroup(int group, int firstRow, int rowCount, std::span<float> out) override {
        const h5::Session session;
        if (group < 0 || group >= static_cast<int>(m_flatGroups.size()))
            throw InvalidArgument(m_info.path.string() + ": flat group " + std::to_string(group) + " does not exist (" +
                                  std::to_string(m_flatGroups.size()) + " group(s))");
        readMean({m_flatGroups[static_cast<std::size_t>(group)]}, firstRow, rowCount, out);
    }

    void readRawRows(int firstRow, int rowCount, std::span<std::byte> out) override {
        checkRawRowRequest(m_info, firstRow, rowCount, out.size());
        // The frames as stored are already in projection order: plain or
        // deflated bytes in the file are read (and inflated) by several
        // threads without the library.
        const auto first = static_cast<hsize_t>(firstRow), count = static_cast<hsize_t>(rowCount);
        std::vector<ReadPiece> pieces;
        bool deflated = false;
        {
            const h5::Session session;
            deflated = m_deflated && m_deflated->locate(m_projectionFrames, first, count);
            if (!deflated && !directPieces(firstRow, rowCount, out, pieces)) {
                m_projections.array->readStored(blocksOf(m_projections, firstRow, rowCount), out);
                return;
            }
        }
        if (deflated) m_deflated->read(m_fd->get(), m_projectionFrames, first, count, out, pool());
        else readInParallel(pieces);
    }

    void readRawRowsOfProjections(int firstRow, int rowCount, int firstProjection, int projectionCount,
                                  std::span<std::byte> out) override {
        detail::checkRawProjectionRequest(m_info, firstRow, rowCount, firstProjection, projectionCount, out.size());
        // The frames of those projections (the library reads them: a live
        // session's few new ones).
        const FrameSet frames =
            m_projections.part(static_cast<hsize_t>(firstProjection), static_cast<hsize_t>(projectionCount));
        const h5::Session session;
        m_projections.array->readStored(blocksOf(frames, firstRow, rowCount), out);
    }

    void prefetchRows(int firstRow, int rowCount) override {
        // The rows readRawRows would pread (deflated chunks are read and
        // inflated as streams; the library's reads are its own).
        const int first = std::max(firstRow, 0);
        const int end = static_cast<int>(std::min<long long>(static_cast<long long>(firstRow) + rowCount, m_info.rows));
        if (!m_direct || end <= first) return;
        try {
            std::vector<h5::DirectRows::Piece> pieces;
            {
                const h5::Session session;
                if (!directPieces(first, end - first, pieces)) return;
            }
            std::vector<FilePrefetcher::Range> ranges;
            ranges.reserve(pieces.size());
            for (const auto& p : pieces) ranges.push_back({p.offset, p.bytes});
            if (!m_prefetcher) m_prefetcher = std::make_unique<FilePrefetcher>(m_fd->get());
            m_prefetcher->prefetch(ranges);
        } catch (...) {
            // A hint that cannot be given leaves the reads to the disk.
        }
    }

    void readProjection(int index, std::span<float> out) override {
        const h5::Session session;
        checkProjectionRequest(m_info, index, out.size());
        const hsize_t frame = m_projections.part(static_cast<hsize_t>(index), 1).runs.front().first;
        m_projections.array->read({frame, 0, 0},
                                  {1, static_cast<hsize_t>(m_info.rows), static_cast<hsize_t>(m_info.columns)}, out);
    }

protected:
    /// Prepares the reads that bypass the library (after m_projections is set).
    void enableDirectReads() {
        m_direct = h5::DirectRows::of(m_file.get(), *m_projections.array);
        if (!m_direct) m_deflated = h5::DeflatedRows::of(m_file.get(), *m_projections.array);
        if (m_direct || m_deflated) m_fd.emplace(m_info.path);
        for (const auto& [first, count] : m_projections.runs)
            for (hsize_t f = first; f < first + count; ++f) m_projectionFrames.push_back(f);
    }

    /// Fills the counts of m_info from the frame sets; flatPositions must
    /// already hold one position per flat group.
    void countFrames() {
        m_info.projections = m_projections.frames;
        m_info.flats = 0;
        for (const FrameSet& g : m_flatGroups) m_info.flats += g.frames;
        m_info.darks = 0;
        for (const FrameSet& d : m_darks) m_info.darks += d.frames;
    }

    h5::File m_file;
    FrameSet m_projections;
    std::vector<FrameSet> m_flatGroups; ///< in the order of m_info.flatPositions
    std::vector<FrameSet> m_darks;      ///< averaged together

private:
    struct ReadPiece {
        std::uint64_t offset;
        std::size_t bytes;
        std::byte* destination;
    };

    std::vector<h5::Array::Block> blocksOf(const FrameSet& set, int firstRow, int rowCount) const {
        std::vector<h5::Array::Block> blocks;
        for (const auto& [first, count] : set.runs)
            blocks.push_back({{first, static_cast<hsize_t>(firstRow), 0},
                              {count, static_cast<hsize_t>(rowCount), static_cast<hsize_t>(m_info.columns)}});
        return blocks;
    }
    void readFrames(const FrameSet& set, int firstRow, int rowCount, std::span<float> out) const {
        set.array->read(blocksOf(set, firstRow, rowCount), out);
    }

    /// The file pieces of the requested rows of every projection, in the
    /// order of readRawRows' output; false when some rows are not plain bytes
    /// in the file. Calls HDF5: hold the library lock.
    bool directPieces(int firstRow, int rowCount, std::vector<h5::DirectRows::Piece>& pieces) {
        if (!m_direct) return false;
        for (const auto& [first, count] : m_projections.runs)
            for (hsize_t f = first; f < first + count; ++f)
                if (!m_direct->pieces(f, static_cast<hsize_t>(firstRow), static_cast<hsize_t>(rowCount), pieces))
                    return false;
        return true;
    }

    /// The direct pieces and where they go in `out`.
    bool directPieces(int firstRow, int rowCount, std::span<std::byte> out, std::vector<ReadPiece>& pieces) {
        std::vector<h5::DirectRows::Piece> file;
        if (!directPieces(firstRow, rowCount, file)) return false;
        std::byte* cursor = out.data();
        for (const auto& p : file) {
            pieces.push_back({p.offset, p.bytes, cursor});
            cursor += p.bytes;
        }
        return true;
    }

    /// pread of every piece, spread over a few threads (page-cache copies
    /// and NVMe queues both gain from several at once).
    void readInParallel(const std::vector<ReadPiece>& pieces) {
        const int tasks = static_cast<int>(std::min<std::size_t>(pieces.size(), 64 * static_cast<std::size_t>(pool().threads())));
        pool().parallelFor(tasks, [&](int task, int) {
            for (std::size_t i = task; i < pieces.size(); i += static_cast<std::size_t>(tasks))
                h5::readAt(m_fd->get(), pieces[i].destination, pieces[i].bytes, pieces[i].offset, m_info.path.string());
        });
    }

    WorkerPool& pool() {
        if (!m_pool) m_pool = std::make_unique<WorkerPool>(readerThreads());
        return *m_pool;
    }

    std::optional<h5::DirectRows> m_direct;
    std::optional<h5::DeflatedRows> m_deflated;
    std::vector<hsize_t> m_projectionFrames; ///< the frames of m_projections, in order
    std::optional<ReadOnlyFile> m_fd;
    std::unique_ptr<FilePrefetcher> m_prefetcher; ///< hints for m_fd: after it, so it goes first
    std::unique_ptr<WorkerPool> m_pool;

    /// Mean over every frame of `sets`.
    void readMean(const std::vector<FrameSet>& sets, int firstRow, int rowCount, std::span<float> out) {
        checkRowRequest(m_info, firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.columns));
        std::vector<double> sum(out.size(), 0.0);
        int frames = 0;
        for (const FrameSet& set : sets) {
            m_buffer.resize(out.size() * static_cast<std::size_t>(set.frames));
            readFrames(set, firstRow, rowCount, m_buffer);
            for (int f = 0; f < set.frames; ++f)
                for (std::size_t k = 0; k < out.size(); ++k) sum[k] += m_buffer[static_cast<std::size_t>(f) * out.size() + k];
            frames += set.frames;
        }
        for (std::size_t k = 0; k < out.size(); ++k) out[k] = static_cast<float>(sum[k] / frames);
    }

    std::vector<float> m_buffer;
    std::vector<std::byte> m_stored; ///< readSinograms: the rows as stored
};

class DXchangeReader final : public FrameStackReader {
public:
    DXchangeReader(const std::filesystem::path& path, const OpenOptions& options) {
        m_file = options.growing ? h5::openSwmrRead(path) : h5::openReadOnly(path);
        m_info.divergentBeam = divergentBeam(m_file.get(), path, options);
        m_info.path = path;
        const h5::Array& data = m_arrays.emplace_back(m_file.get(), path, kDxData);
        data.requireRank({3}, "3D (angles, rows, columns)");
        data.requireStoredData();
        m_info.format = DatasetFormat::DXchange;
        m_info.sampleType = data.pixelType();
        m_info.rows = static_cast<int>(data.dims()[1]);
        m_info.columns = static_cast<int>(data.dims()[2]);
        m_projections = allFrames(data);
        std::optional<h5::Array> theta;
        if (h5::exists(m_file.get(), kDxTheta) && !options.anglesFile) theta.emplace(m_file.get(), path, kDxTheta);
        if (options.growing) {
            // A frame counts once its angle is written too (the writer appends it after the frame).
            if (!theta || theta->dims().size() != 1)
                throw FormatError(path.string() + ": a growing file needs " + kDxTheta +
                                  " (1D, one angle appended per projection)");
            hsize_t present = std::min(data.dims()[0], theta->dims()[0]);
            if (options.growingProjections > 0)
                present = std::min(present, static_cast<hsize_t>(options.growingProjections));
            m_projections = {&data, {{0, present}}, static_cast<int>(present)};
        }

        // Flats before and after the scan (APS: _pre/_post or _start/_end),
        // else one set whose time is not recorded.
        const hsize_t projections = static_cast<hsize_t>(m_projections.frames);
        for (const auto& [before, after] : {std::pair{"/exchange/data_white_pre", "/exchange/data_white_post"},
                                            std::pair{"/exchange/data_white_start", "/exchange/data_white_end"}}) {
            if (!m_flatGroups.empty()) break;
            if (present(before, options)) addFlatGroup(before, -1.0);
            if (present(after, options)) addFlatGroup(after, static_cast<double>(projections));
        }
        if (m_flatGroups.empty() && present(kDxFlat, options)) addFlatGroup(kDxFlat, -1.0);
        for (const char* name : {kDxDark, "/exchange/data_dark_pre", "/exchange/data_dark_post",
                                 "/exchange/data_dark_start", "/exchange/data_dark_end"})
            if (present(name, options)) m_darks.push_back(allFrames(openReference(name)));
        countFrames();
        // Reads of a file being written go through the library, which follows the writer's index.
        if (!options.growing) enableDirectReads();

        StoredAngles stored;
        if (theta) stored = h5::readStoredAngles(*theta);
        if (options.growing) stored.values.resize(static_cast<std::size_t>(m_projections.frames));
        m_info.angles = resolveAngles(m_info, stored, options);
        finishInfo(m_info, options);
    }

private:
    /// Whether the file has the flat or dark stack `name`; in a growing file,
    /// with at least one image written.
    bool present(const char* name, const OpenOptions& options) const {
        if (!h5::exists(m_file.get(), name)) return false;
        return !options.growing || h5::Array(m_file.get(), m_info.path, name).dims().at(0) > 0;
    }

    /// Opens a flat or dark stack; its rows and columns must match the data.
    const h5::Array& openReference(const char* name) {
        const h5::Array& data = m_arrays.front();
        const h5::Array& reference = m_arrays.emplace_back(m_file.get(), m_info.path, name);
        reference.requireRank({3}, "3D (images, rows, columns)");
        (void)reference.pixelType(); // may differ from the data's type, but must be one we read
        if (reference.dims()[1] != data.dims()[1] || reference.dims()[2] != data.dims()[2])
            throw FormatError(reference.where() + " has shape " + reference.shapeText() + "; expected (images, " +
                              std::to_string(m_info.rows) + ", " + std::to_string(m_info.columns) + ") to match " +
                              kDxData);
        reference.requireStoredData();
        return reference;
    }

    void addFlatGroup(const char* name, double position) {
        m_flatGroups.push_back(allFrames(openReference(name)));
        m_info.flatPositions.push_back(position);
    }

    std::deque<h5::Array> m_arrays; ///< data first, then flats and darks (FrameSets point into it)
};

class NXtomoReader final : public FrameStackReader {
public:
    NXtomoReader(const std::filesystem::path& path, const OpenOptions& options) {
        m_file = options.growing ? h5::openSwmrRead(path) : h5::openReadOnly(path);
        m_info.divergentBeam = divergentBeam(m_file.get(), path, options);
        const char* dataName = h5::exists(m_file.get(), kNxDetectorData) ? kNxDetectorData : kNxDataData;
        m_data.emplace(m_file.get(), path, dataName);
        m_data->requireRank({3}, "3D (frames, rows, columns)");
        m_info.path = path;
        m_info.format = DatasetFormat::NXtomo;
        m_info.sampleType = m_data->pixelType();
        m_info.rows = static_cast<int>(m_data->dims()[1]);
        m_info.columns = static_cast<int>(m_data->dims()[2]);
        auto frames = m_data->dims()[0];
        const char* keyName = firstExisting({"/entry/instrument/detector/image_key", "/entry/data/image_key"});
        const char* angleName = firstExisting({"/entry/sample/rotation_angle", "/entry/data/rotation_angle"});
        if (options.anglesFile) angleName = nullptr;
        std::optional<h5::Array> angleArray;
        if (angleName) angleArray.emplace(m_file.get(), path, angleName);
        if (options.growing) {
            // The writer appends a frame, then its key and angle: a frame
            // counts once all three are there.
            if (!keyName || !angleArray || angleArray->dims().size() != 1)
                throw FormatError(path.string() + ": a growing NXtomo file needs image_key and rotation_angle (1D, "
                                                  "one value appended per frame after it)");
            frames = std::min({frames, h5::Array(m_file.get(), path, keyName).dims().at(0), angleArray->dims()[0]});
        }

        // image_key: 0 projection, 1 flat, 2 dark, 3 invalid (skipped). Without
        // one, every frame is a projection.
        std::vector<int> keys(frames, 0);
        if (keyName) {
            h5::Array keyArray(m_file.get(), path, keyName);
            keyArray.requireRank({1}, "1D, one key per frame");
            if (!options.growing && keyArray.dims()[0] != frames)
                throw FormatError(keyArray.where() + " has " + std::to_string(keyArray.dims()[0]) +
                                  " keys; expected " + std::to_string(frames) + ", one per frame of " + dataName);
            auto values = keyArray.readAllDouble();
            values.resize(frames); // a growing file's keys may have grown since
            for (std::size_t i = 0; i < values.size(); ++i) {
                const double v = values[i];
                if (v != 0 && v != 1 && v != 2 && v != 3)
                    throw FormatError(keyArray.where() + ": key " + std::to_string(v) + " at frame " +
                                      std::to_string(i) + "; expected 0 (projection), 1 (flat), 2 (dark) or 3 (invalid)");
                keys[i] = static_cast<int>(v);
            }
        }
        if (options.growing && options.growingProjections > 0) {
            // A snapshot: the frames up to its last projection, however far the file has grown.
            int seen = 0;
            for (hsize_t i = 0; i < frames; ++i)
                if (keys[i] == 0 && ++seen == options.growingProjections) {
                    frames = i + 1;
                    keys.resize(frames);
                    break;
                }
        }
        // Flats taken with no projection between them form one group, placed
        // by the projections acquired before it.
        m_projections = {&*m_data, {}, 0};
        FrameSet darks{&*m_data, {}, 0};
        int projectionsBefore = -1;
        for (hsize_t i = 0; i < frames; ++i) {
            if (keys[i] == 0) m_projections.add(i);
            else if (keys[i] == 2) darks.add(i);
            else if (keys[i] == 1) {
                if (projectionsBefore != m_projections.frames) {
                    m_flatGroups.push_back({&*m_data, {}, 0});
                    projectionsBefore = m_projections.frames;
                }
                m_flatGroups.back().add(i);
            }
        }
        if (m_projections.frames == 0)
            throw FormatError(path.string() + ": image_key marks no frame of " + dataName +
                              " as a projection (key 0); expected at least one");
        if (darks.frames > 0) m_darks.push_back(darks);
        for (const FrameSet& group : m_flatGroups) {
            const int before = projectionsBeforeFrame(keys, group.runs.front().first);
            m_info.flatPositions.push_back(before == 0                     ? -1.0
                                           : before == m_projections.frames ? static_cast<double>(before)
                                                                            : before - 0.5);
        }
        countFrames();
        // Reads of a file being written go through the library, which follows the writer's index.
        if (!options.growing) enableDirectReads();
        m_data->requireStoredData();

        StoredAngles angles;
        if (angleArray) {
            angles = h5::readStoredAngles(*angleArray);
            if (options.growing) angles.values.resize(frames);
            if (angles.values.size() == frames) {
                // One angle per frame: keep those of the projections.
                std::vector<double> projectionAngles;
                for (std::size_t i = 0; i < frames; ++i)
                    if (keys[i] == 0) projectionAngles.push_back(angles.values[i]);
                angles.values = std::move(projectionAngles);
            } // else resolveAngles checks there is one per projection
        }
        m_info.angles = resolveAngles(m_info, angles, options);
        finishInfo(m_info, options);
    }

private:
    static int projectionsBeforeFrame(const std::vector<int>& keys, hsize_t frame) {
        return static_cast<int>(std::count(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(frame), 0));
    }

    const char* firstExisting(std::initializer_list<const char*> names) const {
        for (const char* name : names)
            if (h5::exists(m_file.get(), name)) return name;
        return nullptr;
    }

    std::optional<h5::Array> m_data;
};

/// A 2D array as one detector row: stored [angle][bin], or transposed
/// ([bin][angle], as MATLAB's column-major [angle, bin] appears in HDF5).
class SinogramReader final : public DatasetReader {
public:
    /// The /sinogram layout: already log-corrected, angles from /angles_rad
    /// or /angles_deg.
    SinogramReader(const std::filesystem::path& path, const OpenOptions& options) {
        m_file = h5::openReadOnly(path);
        m_info.divergentBeam = divergentBeam(m_file.get(), path, options);
        openData(path, kSinogram, false, DatasetFormat::SinogramHdf5);
        m_data->requireStoredData();
        m_info.logCorrected = true;

        StoredAngles angles;
        if (!options.anglesFile) {
            for (const auto& [name, units] : {std::pair{"/angles_rad", AngleUnits::Radians},
                                              std::pair{"/angles_deg", AngleUnits::Degrees}})
                if (h5::exists(m_file.get(), name)) {
                    h5::Array a(m_file.get(), path, name);
                    a.requireRank({1}, "1D, one angle per projection");
                    angles = {a.readAllDouble(), a.where(), units};
                    break;
                }
        }
        m_info.angles = resolveAngles(m_info, angles, options);
        finishInfo(m_info, options);
    }

    /// A 2D MATLAB variable [angle, bin] (HDF5 [bin][angle]); values raw
    /// unless the options say log-corrected.
    SinogramReader(h5::File file, h5::Array data, const OpenOptions& options, const StoredAngles& angles)
        : m_file(std::move(file)) {
        m_data.emplace(std::move(data));
        m_transposed = true;
        describe(DatasetFormat::Matlab);
        m_info.angles = resolveAngles(m_info, angles, options);
        m_info.divergentBeam = divergentBeam(m_file.get(), m_info.path, options);
        finishInfo(m_info, options);
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        const h5::Session session;
        checkRowRequest(m_info, firstRow, rowCount, out.size(),
                        static_cast<std::size_t>(m_info.projections) * static_cast<std::size_t>(m_info.columns));
        if (!m_transposed) {
            m_data->read({0, 0}, {m_data->dims()[0], m_data->dims()[1]}, out);
            return;
        }
        std::vector<float> stored(out.size());
        m_data->read({0, 0}, {m_data->dims()[0], m_data->dims()[1]}, stored);
        const auto angles = static_cast<std::size_t>(m_info.projections), bins = static_cast<std::size_t>(m_info.columns);
        for (std::size_t b = 0; b < bins; ++b)
            for (std::size_t a = 0; a < angles; ++a) out[a * bins + b] = stored[b * angles + a];
    }

    bool readMeanFlat(int, int, std::span<float>) override { return false; }
    bool readMeanDark(int, int, std::span<float>) override { return false; }

private:
    void openData(const std::filesystem::path& path, const char* name, bool transposed, DatasetFormat format) {
        m_data.emplace(m_file.get(), path, name);
        m_transposed = transposed;
        describe(format);
    }

    void describe(DatasetFormat format) {
        m_data->requireRank({2}, "2D (angles, bins)");
        const auto& dims = m_data->dims();
        m_info.path = m_data->filePath();
        m_info.format = format;
        m_info.sampleType = m_data->pixelType();
        m_info.projections = static_cast<int>(dims[m_transposed ? 1 : 0]);
        m_info.rows = 1;
        m_info.columns = static_cast<int>(dims[m_transposed ? 0 : 1]);
    }

    h5::File m_file;
    std::optional<h5::Array> m_data;
    bool m_transposed = false;
};

/// A 3D MATLAB variable [angle, row, column]: HDF5 stores it reversed,
/// [column][row][angle].
class MatlabProjectionReader final : public DatasetReader {
public:
    MatlabProjectionReader(h5::File file, h5::Array data, const OpenOptions& options, const StoredAngles& angles)
        : m_file(std::move(file)), m_data(std::move(data)) {
        const auto& dims = m_data.dims();
        m_info.path = m_data.filePath();
        m_info.format = DatasetFormat::Matlab;
        m_info.sampleType = m_data.pixelType();
        m_info.projections = static_cast<int>(dims[2]);
        m_info.rows = static_cast<int>(dims[1]);
        m_info.columns = static_cast<int>(dims[0]);
        m_info.angles = resolveAngles(m_info, angles, options);
        m_info.divergentBeam = divergentBeam(m_file.get(), m_info.path, options);
        finishInfo(m_info, options);
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        const h5::Session session;
        const auto angles = static_cast<std::size_t>(m_info.projections), bins = static_cast<std::size_t>(m_info.columns);
        checkRowRequest(m_info, firstRow, rowCount, out.size(), angles * bins);
        m_buffer.resize(out.size());
        m_data.read({0, static_cast<hsize_t>(firstRow), 0},
                    {m_data.dims()[0], static_cast<hsize_t>(rowCount), m_data.dims()[2]}, m_buffer);
        // [bin][row][angle] -> [row][angle][bin]
        const auto rows = static_cast<std::size_t>(rowCount);
        for (std::size_t b = 0; b < bins; ++b)
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t a = 0; a < angles; ++a)
                    out[(r * angles + a) * bins + b] = m_buffer[(b * rows + r) * angles + a];
    }

    bool readMeanFlat(int, int, std::span<float>) override { return false; }
    bool readMeanDark(int, int, std::span<float>) override { return false; }

private:
    h5::File m_file;
    h5::Array m_data;
    std::vector<float> m_buffer;
};

/// The numeric datasets at the root of a MATLAB file, for messages.
std::string matlabVariables(hid_t file) {
    std::vector<std::string> names;
    H5Literate(
        file, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr,
        [](hid_t group, const char* name, const H5L_info_t*, void* data) -> herr_t {
            H5O_info_t info;
            if (H5Oget_info_by_name(group, name, &info, H5P_DEFAULT) >= 0 && info.type == H5O_TYPE_DATASET &&
                name[0] != '#')
                static_cast<std::vector<std::string>*>(data)->push_back(name);
            return static_cast<std::vector<std::string>*>(data)->size() < 20 ? 0 : 1;
        },
        &names);
    std::string text;
    for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
    return text.empty() ? "none" : text;
}

} // namespace

DatasetFormat detectHdf5Layout(const std::filesystem::path& path) {
    const h5::Session session;
    const h5::File file = h5::openReadOnly(path);
    if (h5::exists(file.get(), kDxData)) return DatasetFormat::DXchange;
    if (h5::exists(file.get(), kNxDetectorData) || h5::exists(file.get(), kNxDataData)) return DatasetFormat::NXtomo;
    if (h5::exists(file.get(), kSinogram)) return DatasetFormat::SinogramHdf5;
    throw FormatError(path.string() + " is an HDF5 file without a dataset this program reads: expected " + kDxData +
                      " (DXchange), " + kNxDetectorData + " or " + kNxDataData + " (NXtomo), or " + kSinogram +
                      " (sinogram)");
}

std::unique_ptr<DatasetReader> openDXchange(const std::filesystem::path& path, const OpenOptions& options) {
    const h5::Session session;
    return std::make_unique<DXchangeReader>(path, options);
}

std::unique_ptr<DatasetReader> openNXtomo(const std::filesystem::path& path, const OpenOptions& options) {
    const h5::Session session;
    return std::make_unique<NXtomoReader>(path, options);
}

std::unique_ptr<DatasetReader> openGrowingHdf5(const std::filesystem::path& path, const OpenOptions& options) {
    const h5::Session session;
    bool nxtomo = false;
    {
        // Closed before the reader opens it: two handles in one process would share one view.
        const h5::File file = h5::openSwmrRead(path);
        nxtomo = !h5::exists(file.get(), kDxData) &&
                 (h5::exists(file.get(), kNxDetectorData) || h5::exists(file.get(), kNxDataData));
    }
    if (nxtomo) return std::make_unique<NXtomoReader>(path, options);
    return std::make_unique<DXchangeReader>(path, options);
}

std::unique_ptr<DatasetReader> openSinogramHdf5(const std::filesystem::path& path, const OpenOptions& options) {
    const h5::Session session;
    return std::make_unique<SinogramReader>(path, options);
}

std::unique_ptr<DatasetReader> openMatlab(const std::filesystem::path& path, const OpenOptions& options) {
    const h5::Session session;
    h5::File file = h5::openReadOnly(path);
    (void)divergentBeam(file.get(), path, options); // refused before any variable is read; kept by the reader
    const std::string& spec = options.variable;
    const auto comma = spec.find(',');
    const std::string dataName = spec.substr(0, comma);
    const std::string angleName = comma == std::string::npos ? std::string() : spec.substr(comma + 1);
    if (dataName.empty())
        throw InvalidArgument(path.string() + " is a MATLAB v7.3 file: name the variable that holds the projections "
                                              "or the sinogram (its numeric variables: " +
                              matlabVariables(file.get()) + ")");
    for (const std::string& name : {dataName, angleName})
        if (!name.empty() && (name.find('/') != std::string::npos || !h5::exists(file.get(), "/" + name)))
            throw FormatError(path.string() + " has no variable '" + name.substr(0, 64) + "' (its numeric variables: " +
                              matlabVariables(file.get()) + ")");
    StoredAngles angles;
    if (!angleName.empty() && !options.anglesFile) {
        const h5::Array a(file.get(), path, "/" + angleName);
        // A MATLAB vector is 1 x N or N x 1: 2D in HDF5.
        a.requireRank({1, 2}, "a vector of angles");
        if (a.dims().size() == 2 && a.dims()[0] != 1 && a.dims()[1] != 1)
            throw FormatError(a.where() + " has shape " + a.shapeText() + "; expected a vector of angles");
        angles = {a.readAllDouble(), a.where(), std::nullopt};
    }
    h5::Array data(file.get(), path, "/" + dataName);
    data.requireRank({2, 3}, "[angles, columns] (a sinogram) or [angles, rows, columns] (projections) in MATLAB");
    data.requireStoredData();
    if (data.dims().size() == 2)
        return std::make_unique<SinogramReader>(std::move(file), std::move(data), options, angles);
    return std::make_unique<MatlabProjectionReader>(std::move(file), std::move(data), options, angles);
}

} // namespace tomo::detail
