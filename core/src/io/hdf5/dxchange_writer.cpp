// Writes a uint16 scan in the DXchange layout the DXchange reader reads,
// projection by projection (tomo/scan_writer.h).
#include "io/hdf5/h5_util.h"
#include "io/writers.h"
#include "tomo/error.h"
#include "tomo/scan_writer.h"

#include <cmath>
#include <string>

namespace tomo {

namespace {

void validate(const std::filesystem::path& target, const ScanLayout& l, const std::vector<double>& theta) {
    const std::string what = target.string() + ": scan layout ";
    if (l.projections < 1 || l.rows < 1 || l.columns < 1 || l.flats < 0 || l.darks < 0)
        throw InvalidArgument(what + std::to_string(l.projections) + " projections x " + std::to_string(l.rows) +
                              " rows x " + std::to_string(l.columns) + " columns, " + std::to_string(l.flats) +
                              " flats, " + std::to_string(l.darks) +
                              " darks; expected at least one projection, row and column");
    if (l.gzipLevel < 0 || l.gzipLevel > 9)
        throw InvalidArgument(what + "gzip level " + std::to_string(l.gzipLevel) + "; expected 0 to 9");
    if (l.gzipLevel > 0 && !l.chunkedPerProjection)
        throw InvalidArgument(what + "gzip needs chunks: set chunkedPerProjection");
    if (static_cast<int>(theta.size()) != l.projections)
        throw InvalidArgument(what + std::to_string(theta.size()) + " angles for " + std::to_string(l.projections) +
                              " projections");
    for (double a : theta)
        if (!std::isfinite(a)) throw InvalidArgument(what + "an angle is not finite");
}

class DXchangeScanWriter final : public ScanWriter {
public:
    DXchangeScanWriter(const std::filesystem::path& target, const ScanLayout& layout, std::vector<double> theta,
                       bool overwrite)
        : m_output(target, overwrite), m_layout(layout) {
        validate(target, layout, theta);
        const h5::Session session;
        const std::filesystem::path& file = m_output.temporary();
        m_file = h5::File(H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT));
        if (!m_file.valid()) fail("cannot create the HDF5 file");
        h5::Group exchange(H5Gcreate2(m_file.get(), "/exchange", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        if (!exchange.valid()) fail("cannot create /exchange");
        m_data = createStack(exchange.get(), "data", layout.projections);
        if (layout.flats > 0) m_flats = createStack(exchange.get(), "data_white", layout.flats);
        if (layout.darks > 0) m_darks = createStack(exchange.get(), "data_dark", layout.darks);

        const hsize_t n = theta.size();
        h5::Dataspace space(H5Screate_simple(1, &n, nullptr));
        h5::Dataset dataset(
            H5Dcreate2(exchange.get(), "theta", H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        if (!dataset.valid() ||
            H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, theta.data()) < 0)
            fail("cannot write /exchange/theta");
        h5::writeStringAttribute(dataset.get(), "units", "degrees", "/exchange/theta in " + file.string());
    }

    void writeProjections(int first, int count, std::span<const std::uint16_t> values) override {
        if (first < 0 || count < 1 || first > m_layout.projections - count)
            throw InvalidArgument(m_output.target().string() + ": projections " + std::to_string(first) + ".." +
                                  std::to_string(static_cast<long long>(first) + count - 1) + " outside 0.." +
                                  std::to_string(m_layout.projections - 1));
        writeImages(m_data, "data", first, count, values);
    }
    void writeFlats(std::span<const std::uint16_t> values) override {
        writeImages(m_flats, "data_white", 0, m_layout.flats, values);
    }
    void writeDarks(std::span<const std::uint16_t> values) override {
        writeImages(m_darks, "data_dark", 0, m_layout.darks, values);
    }

    void commit() override {
        const h5::Session session;
        m_data.close();
        m_flats.close();
        m_darks.close();
        if (!m_file.close()) fail("cannot flush the HDF5 file");
        m_output.commit();
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw IoError(m_output.temporary().string() + ": " + what + h5::errorDetail());
    }

    /// A uint16 [images][rows][columns] dataset, one image per chunk (or
    /// contiguous), optionally deflated.
    h5::Dataset createStack(hid_t group, const char* name, int images) {
        const hsize_t dims[3] = {static_cast<hsize_t>(images), static_cast<hsize_t>(m_layout.rows),
                                 static_cast<hsize_t>(m_layout.columns)};
        const hsize_t chunk[3] = {1, dims[1], dims[2]};
        h5::Dataspace space(H5Screate_simple(3, dims, nullptr));
        h5::PropertyList create(H5Pcreate(H5P_DATASET_CREATE));
        if (m_layout.chunkedPerProjection) {
            H5Pset_chunk(create.get(), 3, chunk);
            if (m_layout.gzipLevel > 0) H5Pset_deflate(create.get(), static_cast<unsigned>(m_layout.gzipLevel));
        }
        h5::Dataset dataset(
            H5Dcreate2(group, name, H5T_STD_U16LE, space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT));
        if (!dataset.valid()) fail(std::string("cannot create /exchange/") + name);
        return dataset;
    }

    void writeImages(const h5::Dataset& dataset, const char* name, int first, int count,
                     std::span<const std::uint16_t> values) {
        const std::size_t image = static_cast<std::size_t>(m_layout.rows) * static_cast<std::size_t>(m_layout.columns);
        if (count == 0 && values.empty()) return;
        if (!dataset.valid() || values.size() != image * static_cast<std::size_t>(count))
            throw InvalidArgument(m_output.target().string() + ": /exchange/" + name + " takes " +
                                  std::to_string(count) + " images of " + std::to_string(image) + " values; got " +
                                  std::to_string(values.size()) + " values");
        const h5::Session session;
        const hsize_t start[3] = {static_cast<hsize_t>(first), 0, 0};
        const hsize_t size[3] = {static_cast<hsize_t>(count), static_cast<hsize_t>(m_layout.rows),
                                 static_cast<hsize_t>(m_layout.columns)};
        h5::Dataspace fileSpace(H5Dget_space(dataset.get()));
        h5::Dataspace memory(H5Screate_simple(3, size, nullptr));
        if (!fileSpace.valid() || !memory.valid() ||
            H5Sselect_hyperslab(fileSpace.get(), H5S_SELECT_SET, start, nullptr, size, nullptr) < 0 ||
            H5Dwrite(dataset.get(), H5T_NATIVE_UINT16, memory.get(), fileSpace.get(), H5P_DEFAULT, values.data()) < 0)
            fail(std::string("cannot write /exchange/") + name);
    }

    detail::StagedOutput m_output;
    ScanLayout m_layout;
    h5::File m_file;
    h5::Dataset m_data, m_flats, m_darks;
};

} // namespace

std::unique_ptr<ScanWriter> createDXchangeScanWriter(const std::filesystem::path& target, const ScanLayout& layout,
                                                     std::vector<double> thetaDegrees, bool overwrite) {
    return std::make_unique<DXchangeScanWriter>(target, layout, std::move(thetaDegrees), overwrite);
}

} // namespace tomo
