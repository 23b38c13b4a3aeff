// A DXchange or NXtomo scan written frame by frame for SWMR readers, and the test of
// whether a file's writer has closed it (tomo/live.h).
#include "io/hdf5/h5_util.h"
#include "tomo/error.h"
#include "tomo/live.h"

#include <array>
#include <cstring>
#include <fstream>

namespace tomo {

namespace {

hid_t fileType(SampleType type) {
    switch (type) {
    case SampleType::UInt8: return H5T_STD_U8LE;
    case SampleType::UInt16: return H5T_STD_U16LE;
    case SampleType::Float32: return H5T_IEEE_F32LE;
    case SampleType::Float64: return H5T_IEEE_F64LE;
    }
    return H5T_STD_U16LE;
}

hid_t memoryType(SampleType type) {
    switch (type) {
    case SampleType::UInt8: return H5T_NATIVE_UINT8;
    case SampleType::UInt16: return H5T_NATIVE_UINT16;
    case SampleType::Float32: return H5T_NATIVE_FLOAT;
    case SampleType::Float64: return H5T_NATIVE_DOUBLE;
    }
    return H5T_NATIVE_UINT16;
}

class GrowingScanWriter final : public FrameSink {
public:
    GrowingScanWriter(const std::filesystem::path& path, int rows, int columns, SampleType type, bool overwrite,
                      GrowingLayout layout)
        : m_path(path), m_rows(rows), m_columns(columns), m_type(type), m_layout(layout) {
        if (rows < 1 || columns < 1)
            throw InvalidArgument(path.string() + ": frames of " + std::to_string(rows) + " x " +
                                  std::to_string(columns) + "; expected at least one row and column");
        std::error_code ec;
        if (!overwrite && std::filesystem::exists(path, ec))
            throw IoError(path.string() + " exists; refusing to replace it (overwrite not allowed)");
        const h5::Session session;
        // SWMR needs the latest file format.
        h5::PropertyList fapl(H5Pcreate(H5P_FILE_ACCESS));
        H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
        m_file = h5::File(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
        if (!m_file.valid()) fail("cannot create the HDF5 file");
        if (layout == GrowingLayout::DXchange) {
            const h5::Group exchange = createGroup("/exchange");
            m_stacks[0] = createStack(exchange.get(), "data");
            m_stacks[1] = createStack(exchange.get(), "data_white");
            m_stacks[2] = createStack(exchange.get(), "data_dark");
            m_theta = createSeries(exchange.get(), "theta", H5T_IEEE_F64LE);
        } else {
            const h5::Group entry = createGroup("/entry");
            const h5::Group instrument = createGroup("/entry/instrument");
            const h5::Group detector = createGroup("/entry/instrument/detector");
            const h5::Group sample = createGroup("/entry/sample");
            h5::writeStringAttribute(entry.get(), "NX_class", "NXentry", "/entry in " + path.string());
            m_stacks[0] = createStack(detector.get(), "data");
            m_keys = createSeries(detector.get(), "image_key", H5T_STD_I32LE);
            m_theta = createSeries(sample.get(), "rotation_angle", H5T_IEEE_F64LE);
        }
        h5::writeStringAttribute(m_theta.get(), "units", "degrees", std::string(angleName()) + " in " + path.string());
        // Every object exists: from here on readers may open the file.
        if (H5Fstart_swmr_write(m_file.get()) < 0) fail("cannot start SWMR writing");
    }

    ~GrowingScanWriter() override {
        try {
            close();
        } catch (...) {
        }
    }

    void send(const Frame& frame) override {
        if (frame.rows != m_rows || frame.columns != m_columns || frame.type != m_type ||
            frame.values.size() != static_cast<std::size_t>(m_rows) * static_cast<std::size_t>(m_columns) *
                                       sampleBytes(m_type))
            throw InvalidArgument(m_path.string() + ": a " + frameKindName(frame.kind) + " of " +
                                  std::to_string(frame.rows) + " x " + std::to_string(frame.columns) + " " +
                                  sampleTypeName(frame.type) + " (" + std::to_string(frame.values.size()) +
                                  " bytes); this file holds " + std::to_string(m_rows) + " x " +
                                  std::to_string(m_columns) + " " + sampleTypeName(m_type));
        const h5::Session session;
        if (!m_file.valid()) throw IoError(m_path.string() + ": the file is already closed");
        const int key = frame.kind == FrameKind::Projection ? 0 : frame.kind == FrameKind::Flat ? 1 : 2;
        const std::size_t k = m_layout == GrowingLayout::NXtomo ? 0 : static_cast<std::size_t>(key);
        const char* names[] = {m_layout == GrowingLayout::NXtomo ? "/entry/instrument/detector/data" : "/exchange/data",
                               "/exchange/data_white", "/exchange/data_dark"};
        // The frame first, its key and angle after: readers count a frame once they are there.
        append(m_stacks[k], m_counts[k], names[k], frame.values.data(), memoryType(m_type), {static_cast<hsize_t>(m_rows),
                                                                                 static_cast<hsize_t>(m_columns)});
        if (frame.kind == FrameKind::Projection) m_lastAngle = frame.angleDegrees;
        if (m_layout == GrowingLayout::NXtomo) {
            hsize_t keys = m_counts[0] - 1;
            append(m_keys, keys, "/entry/instrument/detector/image_key", &key, H5T_NATIVE_INT, {});
            append(m_theta, m_angles, angleName(), &m_lastAngle, H5T_NATIVE_DOUBLE, {});
        } else if (frame.kind == FrameKind::Projection) {
            append(m_theta, m_angles, angleName(), &frame.angleDegrees, H5T_NATIVE_DOUBLE, {});
        }
    }

    void finish(const std::string&) override { close(); }

private:
    void close() {
        const h5::Session session;
        if (!m_file.valid()) return;
        for (auto& s : m_stacks) s.close();
        m_theta.close();
        m_keys.close();
        if (!m_file.close()) throw IoError(m_path.string() + ": cannot close the file" + h5::errorDetail());
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw IoError(m_path.string() + ": " + what + h5::errorDetail());
    }

    const char* angleName() const {
        return m_layout == GrowingLayout::NXtomo ? "/entry/sample/rotation_angle" : "/exchange/theta";
    }

    h5::Group createGroup(const char* name) const {
        h5::Group group(H5Gcreate2(m_file.get(), name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        if (!group.valid()) fail(std::string("cannot create ") + name);
        return group;
    }

    /// A 1D series of numbers, appended one by one.
    h5::Dataset createSeries(hid_t group, const char* name, hid_t type) const {
        const hsize_t none = 0, unlimited = H5S_UNLIMITED, chunk = 1024;
        h5::Dataspace space(H5Screate_simple(1, &none, &unlimited));
        h5::PropertyList create(H5Pcreate(H5P_DATASET_CREATE));
        H5Pset_chunk(create.get(), 1, &chunk);
        h5::Dataset dataset(H5Dcreate2(group, name, type, space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT));
        if (!dataset.valid()) fail(std::string("cannot create ") + name);
        return dataset;
    }

    h5::Dataset createStack(hid_t group, const char* name) {
        const hsize_t dims[3] = {0, static_cast<hsize_t>(m_rows), static_cast<hsize_t>(m_columns)};
        const hsize_t max[3] = {H5S_UNLIMITED, dims[1], dims[2]};
        const hsize_t chunk[3] = {1, dims[1], dims[2]};
        h5::Dataspace space(H5Screate_simple(3, dims, max));
        h5::PropertyList create(H5Pcreate(H5P_DATASET_CREATE));
        H5Pset_chunk(create.get(), 3, chunk);
        h5::Dataset dataset(
            H5Dcreate2(group, name, fileType(m_type), space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT));
        if (!dataset.valid()) fail(std::string("cannot create the stack ") + name);
        return dataset;
    }

    /// Appends one element (an image of `image` dims, or one number) along
    /// the first dimension and flushes it to the file.
    void append(const h5::Dataset& dataset, hsize_t& count, const char* name, const void* values, hid_t memoryType,
                std::vector<hsize_t> image) {
        std::vector<hsize_t> extent{count + 1}, start{count}, size{1};
        extent.insert(extent.end(), image.begin(), image.end());
        start.insert(start.end(), image.size(), 0);
        size.insert(size.end(), image.begin(), image.end());
        const int rank = static_cast<int>(extent.size());
        if (H5Dset_extent(dataset.get(), extent.data()) < 0) fail(std::string("cannot extend ") + name);
        h5::Dataspace fileSpace(H5Dget_space(dataset.get()));
        h5::Dataspace memory(H5Screate_simple(rank, size.data(), nullptr));
        if (!fileSpace.valid() || !memory.valid() ||
            H5Sselect_hyperslab(fileSpace.get(), H5S_SELECT_SET, start.data(), nullptr, size.data(), nullptr) < 0 ||
            H5Dwrite(dataset.get(), memoryType, memory.get(), fileSpace.get(), H5P_DEFAULT, values) < 0 ||
            H5Dflush(dataset.get()) < 0)
            fail(std::string("cannot append to ") + name);
        ++count;
    }

    std::filesystem::path m_path;
    int m_rows, m_columns;
    SampleType m_type;
    GrowingLayout m_layout;
    h5::File m_file;
    std::array<h5::Dataset, 3> m_stacks; ///< data, data_white, data_dark (NXtomo: data only)
    std::array<hsize_t, 3> m_counts{};
    h5::Dataset m_theta; ///< theta, NXtomo: rotation_angle
    h5::Dataset m_keys;  ///< NXtomo: image_key
    hsize_t m_angles = 0;
    double m_lastAngle = 0.0;
};

} // namespace

std::unique_ptr<FrameSink> createGrowingScanWriter(const std::filesystem::path& path, int rows, int columns,
                                                   SampleType type, bool overwrite, GrowingLayout layout) {
    return std::make_unique<GrowingScanWriter>(path, rows, columns, type, overwrite, layout);
}

bool hdf5WriterClosed(const std::filesystem::path& path) {
    // The superblock (at 0 or a user-block offset 512, 1024, ...) of the
    // formats SWMR needs (versions 2 and 3) keeps "open for writing" and
    // "SWMR writing" in its consistency flags (byte 11) until the writer
    // closes the file. Read directly: HDF5 itself refuses to open a file in
    // this process with other flags than a handle already open.
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(path.string() + ": cannot open for reading");
    static constexpr unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    for (std::streamoff offset = 0; offset <= (std::streamoff{1} << 30); offset = offset == 0 ? 512 : offset * 2) {
        unsigned char head[12] = {};
        in.clear();
        in.seekg(offset);
        if (!in.read(reinterpret_cast<char*>(head), sizeof head)) break;
        if (std::memcmp(head, kSignature, sizeof kSignature) != 0) continue;
        const unsigned version = head[8];
        return version < 2 || head[11] == 0;
    }
    throw FormatError(path.string() + ": not an HDF5 file (no superblock found)");
}

} // namespace tomo
