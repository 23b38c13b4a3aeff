// Internal: the compression filters of HDF5 datasets. gzip (deflate),
// shuffle, szip, nbit and scale-offset are built into libhdf5; the others
// are plugins HDF5 loads on demand from its plugin folder (on Debian
// /usr/lib/<arch>/hdf5/serial/plugins, or HDF5_PLUGIN_PATH), which Debian's
// filter packages install into. A dataset whose filter is missing is refused
// when it is opened, with the package to install, instead of failing at the
// first read with HDF5's "required filter is not registered".
#pragma once

#include <hdf5.h>

#include <optional>
#include <string>

namespace tomo::h5 {

/// The sentence saying which filter of a dataset (creation property list
/// `create`) this HDF5 cannot decode: the filter's id and name, the Debian
/// package that provides it (when one does), and where HDF5 looks for
/// plugins; nullopt when every filter is available. Optional filters
/// (H5Z_FLAG_OPTIONAL, skipped on chunks they could not shrink) count only
/// when `includeOptional`. Calls HDF5: hold a Session.
std::optional<std::string> unavailableFilter(hid_t create, bool includeOptional);

} // namespace tomo::h5
