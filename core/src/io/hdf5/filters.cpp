#include "io/hdf5/filters.h"

#include <array>

namespace tomo::h5 {

namespace {

/// A filter a scan may be stored with: its registered id (the HDF Group's
/// list), its usual name, and the Debian 12 package that installs its plugin
/// (nullptr: built into libhdf5, or no Debian package).
struct KnownFilter {
    H5Z_filter_t id;
    const char* name;
    const char* package;
};

constexpr std::array kKnownFilters{
    KnownFilter{H5Z_FILTER_DEFLATE, "deflate (gzip)", nullptr},
    KnownFilter{H5Z_FILTER_SHUFFLE, "shuffle", nullptr},
    KnownFilter{H5Z_FILTER_FLETCHER32, "fletcher32", nullptr},
    KnownFilter{H5Z_FILTER_SZIP, "szip", nullptr},
    KnownFilter{H5Z_FILTER_NBIT, "nbit", nullptr},
    KnownFilter{H5Z_FILTER_SCALEOFFSET, "scale-offset", nullptr},
    KnownFilter{307, "bzip2", "hdf5-filter-plugin"},
    KnownFilter{32000, "LZF", "hdf5-plugin-lzf"},
    KnownFilter{32001, "Blosc", "hdf5-filter-plugin-blosc-serial"},
    KnownFilter{32004, "LZ4", "hdf5-filter-plugin"},
    KnownFilter{32008, "bitshuffle", "bitshuffle"},
    KnownFilter{32013, "ZFP", "hdf5-filter-plugin-zfp-serial"},
    KnownFilter{32015, "Zstandard", nullptr},
    KnownFilter{32026, "Blosc2", nullptr},
};

const KnownFilter* knownFilter(H5Z_filter_t id) {
    for (const KnownFilter& f : kKnownFilters)
        if (f.id == id) return &f;
    return nullptr;
}

/// The folders HDF5 searches for plugins, separated by ':'.
std::string pluginFolders() {
    unsigned count = 0;
    if (H5PLsize(&count) < 0) return {};
    std::string folders;
    for (unsigned i = 0; i < count; ++i) {
        char folder[1024] = {};
        if (H5PLget(i, folder, sizeof folder) <= 0) continue;
        if (!folders.empty()) folders += ':';
        folders += folder;
    }
    return folders;
}

/// The name a file gives a filter, up to its first ';' (plugins append a
/// web address), cut to a readable length.
std::string storedName(const char* text) {
    std::string name(text);
    name = name.substr(0, name.find(';'));
    constexpr std::size_t kMaxLength = 60;
    return name.size() > kMaxLength ? name.substr(0, kMaxLength) + "..." : name;
}

} // namespace

std::optional<std::string> unavailableFilter(hid_t create, bool includeOptional) {
    const int filters = H5Pget_nfilters(create);
    for (int i = 0; i < filters; ++i) {
        unsigned flags = 0;
        std::size_t values = 0;
        char name[256] = {};
        const H5Z_filter_t id =
            H5Pget_filter2(create, static_cast<unsigned>(i), &flags, &values, nullptr, sizeof name, name, nullptr);
        if (id < 0 || (!includeOptional && (flags & H5Z_FLAG_OPTIONAL))) continue;
        // Looks in the plugin folders too, loading the plugin when found.
        if (H5Zfilter_avail(id) > 0) {
            unsigned config = 0;
            if (H5Zget_filter_info(id, &config) >= 0 && (config & H5Z_FILTER_CONFIG_DECODE_ENABLED)) continue;
        }
        const KnownFilter* known = knownFilter(id);
        std::string text = "is compressed with HDF5 filter " + std::to_string(id) + " (" +
                           (known ? std::string(known->name) : name[0] ? storedName(name) : "unnamed") +
                           "), which this HDF5 library cannot decode: ";
        if (known && known->package) text += "install the Debian package " + std::string(known->package);
        else if (known && id < 256) text += "libhdf5 was built without it";
        else text += "no Debian package is known to provide it; install an HDF5 plugin for it";
        const std::string folders = pluginFolders();
        if (!folders.empty()) text += " (HDF5 looks for plugins in " + folders + "; HDF5_PLUGIN_PATH replaces that)";
        return text;
    }
    return std::nullopt;
}

} // namespace tomo::h5
