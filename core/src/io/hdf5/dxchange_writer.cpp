// Writes a uint16 scan in the DXchange layout the DXchange reader reads.
#include "io/hdf5/h5_util.h"
#include "tomo/error.h"
#include "io/writers.h"

namespace tomo::detail {

namespace {

/// A uint16 [images][rows][columns] dataset, chunked one image per chunk
/// like detector files.
void writeStack(hid_t group, const char* name, int images, int rows, int columns,
                const std::vector<std::uint16_t>& values, const std::filesystem::path& file) {
    const hsize_t dims[3] = {static_cast<hsize_t>(images), static_cast<hsize_t>(rows), static_cast<hsize_t>(columns)};
    const hsize_t chunk[3] = {1, dims[1], dims[2]};
    h5::Dataspace space(H5Screate_simple(3, dims, nullptr));
    h5::PropertyList create(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_chunk(create.get(), 3, chunk);
    h5::Dataset dataset(H5Dcreate2(group, name, H5T_STD_U16LE, space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT));
    if (!dataset.valid() ||
        H5Dwrite(dataset.get(), H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
        throw IoError(file.string() + ": cannot write /exchange/" + name + h5::errorDetail());
}

} // namespace

void writeDXchangeFile(const std::filesystem::path& file, const DXchangeScan& scan) {
    h5::prepareThread();
    h5::File out(H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT));
    if (!out.valid()) throw IoError(file.string() + ": cannot create the HDF5 file" + h5::errorDetail());
    h5::Group exchange(H5Gcreate2(out.get(), "/exchange", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!exchange.valid()) throw IoError(file.string() + ": cannot create /exchange" + h5::errorDetail());

    writeStack(exchange.get(), "data", scan.projections, scan.rows, scan.columns, scan.data, file);
    if (scan.flats > 0) writeStack(exchange.get(), "data_white", scan.flats, scan.rows, scan.columns, scan.flat, file);
    if (scan.darks > 0) writeStack(exchange.get(), "data_dark", scan.darks, scan.rows, scan.columns, scan.dark, file);

    const hsize_t n = scan.thetaDegrees.size();
    h5::Dataspace space(H5Screate_simple(1, &n, nullptr));
    h5::Dataset theta(
        H5Dcreate2(exchange.get(), "theta", H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!theta.valid() ||
        H5Dwrite(theta.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, scan.thetaDegrees.data()) < 0)
        throw IoError(file.string() + ": cannot write /exchange/theta" + h5::errorDetail());
    h5::writeStringAttribute(theta.get(), "units", "degrees", "/exchange/theta in " + file.string());

    theta.close();
    exchange.close();
    if (!out.close()) throw IoError(file.string() + ": cannot flush the HDF5 file" + h5::errorDetail());
}

} // namespace tomo::detail
