// HDF5 dataset readers: DXchange, NXtomo and single-sinogram files. They
// read only the hyperslab of the requested rows, converted to float by
// H5Dread, so files far larger than memory are fine.
#include "io/hdf5/h5_util.h"
#include "io/readers.h"
#include "tomo/error.h"

#include <numbers>
#include <utility>

namespace tomo::detail {

namespace {

constexpr const char* kDxData = "/exchange/data";
constexpr const char* kDxFlat = "/exchange/data_white";
constexpr const char* kDxDark = "/exchange/data_dark";
constexpr const char* kDxTheta = "/exchange/theta";
constexpr const char* kNxDetectorData = "/entry/instrument/detector/data";
constexpr const char* kNxDataData = "/entry/data/data";
constexpr const char* kSinogram = "/sinogram";

/// Some frames (along the first dimension) of a 3D [frame][row][column] array.
struct FrameSet {
    const h5::Array* array = nullptr;
    std::vector<std::pair<hsize_t, hsize_t>> runs; ///< [first, count) of consecutive frames
    int frames = 0;
};

FrameSet allFrames(const h5::Array& array) {
    return {&array, {{0, array.dims()[0]}}, static_cast<int>(array.dims()[0])};
}

/// Frames whose key equals `key`, as runs of consecutive indices.
FrameSet framesWithKey(const h5::Array& array, const std::vector<int>& keys, int key) {
    FrameSet set{&array, {}, 0};
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i] != key) continue;
        if (!set.runs.empty() && set.runs.back().first + set.runs.back().second == i) ++set.runs.back().second;
        else set.runs.emplace_back(i, 1);
        ++set.frames;
    }
    return set;
}

/// A DatasetReader over frame stacks [frame][row][column] (projections,
/// flats, darks may be the same array with different frames, or three).
class FrameStackReader : public DatasetReader {
public:
    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        checkRowRequest(m_info, firstRow, rowCount, out.size(),
                        static_cast<std::size_t>(m_info.projections) * static_cast<std::size_t>(m_info.columns));
        h5::QuietErrors quiet;
        m_buffer.resize(out.size());
        readFrames(m_projections, firstRow, rowCount, m_buffer);
        imagesToSinograms(m_buffer, m_info.projections, rowCount, m_info.columns, out);
    }

    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        return readMean(m_flats, firstRow, rowCount, out);
    }

    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        return readMean(m_darks, firstRow, rowCount, out);
    }

    void readProjection(int index, std::span<float> out) override {
        checkProjectionRequest(m_info, index, out.size());
        // The index-th frame of the projections' runs.
        hsize_t frame = 0;
        for (hsize_t left = static_cast<hsize_t>(index); const auto& [first, count] : m_projections.runs) {
            if (left < count) {
                frame = first + left;
                break;
            }
            left -= count;
        }
        h5::QuietErrors quiet;
        m_projections.array->read({frame, 0, 0},
                                  {1, static_cast<hsize_t>(m_info.rows), static_cast<hsize_t>(m_info.columns)}, out);
    }

protected:
    h5::File m_file;
    FrameSet m_projections;
    FrameSet m_flats;
    FrameSet m_darks;

private:
    void readFrames(const FrameSet& set, int firstRow, int rowCount, std::span<float> out) const {
        std::vector<h5::Array::Block> blocks;
        for (const auto& [first, count] : set.runs)
            blocks.push_back({{first, static_cast<hsize_t>(firstRow), 0},
                              {count, static_cast<hsize_t>(rowCount), static_cast<hsize_t>(m_info.columns)}});
        set.array->read(blocks, out);
    }

    bool readMean(const FrameSet& set, int firstRow, int rowCount, std::span<float> out) {
        if (set.frames == 0) return false;
        checkRowRequest(m_info, firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.columns));
        h5::QuietErrors quiet;
        m_buffer.resize(out.size() * static_cast<std::size_t>(set.frames));
        readFrames(set, firstRow, rowCount, m_buffer);
        meanOfImages(m_buffer, set.frames, out);
        return true;
    }

    std::vector<float> m_buffer;
};

class DXchangeReader final : public FrameStackReader {
public:
    DXchangeReader(const std::filesystem::path& path, const OpenOptions& options) {
        h5::QuietErrors quiet;
        m_file = h5::openReadOnly(path);
        m_data.emplace(m_file.get(), path, kDxData);
        m_data->requireRank({3}, "3D (angles, rows, columns)");
        m_info.path = path;
        m_info.format = DatasetFormat::DXchange;
        m_info.sampleType = m_data->pixelType();
        m_info.projections = static_cast<int>(m_data->dims()[0]);
        m_info.rows = static_cast<int>(m_data->dims()[1]);
        m_info.columns = static_cast<int>(m_data->dims()[2]);
        m_projections = allFrames(*m_data);
        if (h5::exists(m_file.get(), kDxFlat)) m_flats = allFrames(openReference(m_white, kDxFlat));
        if (h5::exists(m_file.get(), kDxDark)) m_darks = allFrames(openReference(m_dark, kDxDark));
        m_info.flats = m_flats.frames;
        if (m_info.flats > 0) m_info.flatPositions = {-1.0}; // order not known: one group
        m_info.darks = m_darks.frames;

        std::vector<double> theta;
        if (h5::exists(m_file.get(), kDxTheta) && !options.anglesFile)
            theta = h5::readAnglesRadians(h5::Array(m_file.get(), path, kDxTheta));
        m_info.angles = resolveAngles(m_info, theta, std::string(kDxTheta) + " in " + path.string(), options);
    }

private:
    /// Opens a flat or dark stack; its rows and columns must match the data.
    const h5::Array& openReference(std::optional<h5::Array>& slot, const char* name) {
        slot.emplace(m_file.get(), m_info.path, name);
        slot->requireRank({3}, "3D (images, rows, columns)");
        (void)slot->pixelType(); // may differ from the data's type, but must be one we read
        if (slot->dims()[1] != m_data->dims()[1] || slot->dims()[2] != m_data->dims()[2])
            throw FormatError(slot->where() + " has shape " + slot->shapeText() + "; expected (images, " +
                              std::to_string(m_info.rows) + ", " + std::to_string(m_info.columns) + ") to match " +
                              kDxData);
        return *slot;
    }

    std::optional<h5::Array> m_data;
    std::optional<h5::Array> m_white;
    std::optional<h5::Array> m_dark;
};

class NXtomoReader final : public FrameStackReader {
public:
    NXtomoReader(const std::filesystem::path& path, const OpenOptions& options) {
        h5::QuietErrors quiet;
        m_file = h5::openReadOnly(path);
        const char* dataName = h5::exists(m_file.get(), kNxDetectorData) ? kNxDetectorData : kNxDataData;
        m_data.emplace(m_file.get(), path, dataName);
        m_data->requireRank({3}, "3D (frames, rows, columns)");
        m_info.path = path;
        m_info.format = DatasetFormat::NXtomo;
        m_info.sampleType = m_data->pixelType();
        m_info.rows = static_cast<int>(m_data->dims()[1]);
        m_info.columns = static_cast<int>(m_data->dims()[2]);
        const auto frames = m_data->dims()[0];

        // image_key: 0 projection, 1 flat, 2 dark, 3 invalid (skipped). Without
        // one, every frame is a projection.
        std::vector<int> keys(frames, 0);
        if (const char* keyName = firstExisting({"/entry/instrument/detector/image_key", "/entry/data/image_key"})) {
            h5::Array keyArray(m_file.get(), path, keyName);
            keyArray.requireRank({1}, "1D, one key per frame");
            const auto values = keyArray.readAllDouble();
            if (values.size() != frames)
                throw FormatError(keyArray.where() + " has " + std::to_string(values.size()) + " keys; expected " +
                                  std::to_string(frames) + ", one per frame of " + dataName);
            for (std::size_t i = 0; i < values.size(); ++i) {
                const double v = values[i];
                if (v != 0 && v != 1 && v != 2 && v != 3)
                    throw FormatError(keyArray.where() + ": key " + std::to_string(v) + " at frame " +
                                      std::to_string(i) + "; expected 0 (projection), 1 (flat), 2 (dark) or 3 (invalid)");
                keys[i] = static_cast<int>(v);
            }
        }
        m_projections = framesWithKey(*m_data, keys, 0);
        m_flats = framesWithKey(*m_data, keys, 1);
        m_darks = framesWithKey(*m_data, keys, 2);
        if (m_projections.frames == 0)
            throw FormatError(path.string() + ": image_key marks no frame of " + dataName +
                              " as a projection (key 0); expected at least one");
        m_info.projections = m_projections.frames;
        m_info.flats = m_flats.frames;
        if (m_info.flats > 0) m_info.flatPositions = {-1.0}; // order not known: one group
        m_info.darks = m_darks.frames;

        std::vector<double> angles;
        std::string source;
        if (const char* angleName = firstExisting({"/entry/sample/rotation_angle", "/entry/data/rotation_angle"});
            angleName && !options.anglesFile) {
            h5::Array angleArray(m_file.get(), path, angleName);
            const auto all = h5::readAnglesRadians(angleArray);
            source = angleArray.where();
            if (all.size() == frames) {
                // One angle per frame: keep those of the projections.
                for (std::size_t i = 0; i < frames; ++i)
                    if (keys[i] == 0) angles.push_back(all[i]);
            } else {
                angles = all; // resolveAngles checks it has one per projection
            }
        }
        m_info.angles = resolveAngles(m_info, angles, source, options);
    }

private:
    const char* firstExisting(std::initializer_list<const char*> names) const {
        for (const char* name : names)
            if (h5::exists(m_file.get(), name)) return name;
        return nullptr;
    }

    std::optional<h5::Array> m_data;
};

/// One detector row, already log-corrected: /sinogram [angle][bin].
class SinogramReader final : public DatasetReader {
public:
    SinogramReader(const std::filesystem::path& path, const OpenOptions& options) {
        h5::QuietErrors quiet;
        m_file = h5::openReadOnly(path);
        m_data.emplace(m_file.get(), path, kSinogram);
        m_data->requireRank({2}, "2D (angles, bins)");
        m_info.path = path;
        m_info.format = DatasetFormat::SinogramHdf5;
        m_info.sampleType = m_data->pixelType();
        m_info.projections = static_cast<int>(m_data->dims()[0]);
        m_info.rows = 1;
        m_info.columns = static_cast<int>(m_data->dims()[1]);
        m_info.logCorrected = true;

        std::vector<double> angles;
        std::string source;
        if (!options.anglesFile) {
            if (h5::exists(m_file.get(), "/angles_rad")) {
                h5::Array a(m_file.get(), path, "/angles_rad");
                a.requireRank({1}, "1D, one angle per projection");
                angles = a.readAllDouble();
                source = a.where();
            } else if (h5::exists(m_file.get(), "/angles_deg")) {
                h5::Array a(m_file.get(), path, "/angles_deg");
                a.requireRank({1}, "1D, one angle per projection");
                angles = a.readAllDouble();
                for (double& v : angles) v *= std::numbers::pi / 180.0;
                source = a.where();
            }
        }
        m_info.angles = resolveAngles(m_info, angles, source, options);
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        checkRowRequest(m_info, firstRow, rowCount, out.size(),
                        static_cast<std::size_t>(m_info.projections) * static_cast<std::size_t>(m_info.columns));
        h5::QuietErrors quiet;
        m_data->read({0, 0}, {m_data->dims()[0], m_data->dims()[1]}, out);
    }

    bool readMeanFlat(int, int, std::span<float>) override { return false; }
    bool readMeanDark(int, int, std::span<float>) override { return false; }

private:
    h5::File m_file;
    std::optional<h5::Array> m_data;
};

} // namespace

DatasetFormat detectHdf5Layout(const std::filesystem::path& path) {
    h5::QuietErrors quiet;
    const h5::File file = h5::openReadOnly(path);
    if (h5::exists(file.get(), kDxData)) return DatasetFormat::DXchange;
    if (h5::exists(file.get(), kNxDetectorData) || h5::exists(file.get(), kNxDataData)) return DatasetFormat::NXtomo;
    if (h5::exists(file.get(), kSinogram)) return DatasetFormat::SinogramHdf5;
    throw FormatError(path.string() + " is an HDF5 file without a dataset this program reads: expected " + kDxData +
                      " (DXchange), " + kNxDetectorData + " or " + kNxDataData + " (NXtomo), or " + kSinogram +
                      " (sinogram)");
}

std::unique_ptr<DatasetReader> openDXchange(const std::filesystem::path& path, const OpenOptions& options) {
    return std::make_unique<DXchangeReader>(path, options);
}

std::unique_ptr<DatasetReader> openNXtomo(const std::filesystem::path& path, const OpenOptions& options) {
    return std::make_unique<NXtomoReader>(path, options);
}

std::unique_ptr<DatasetReader> openSinogramHdf5(const std::filesystem::path& path, const OpenOptions& options) {
    return std::make_unique<SinogramReader>(path, options);
}

} // namespace tomo::detail
