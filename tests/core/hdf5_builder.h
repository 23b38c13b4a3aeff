// Test helper: writes small HDF5 files in any layout with the C API, so the
// readers are tested against files built independently of the writers.
#pragma once

#if TOMO_WITH_HDF5

#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tomo::test {

class H5Builder {
public:
    /// Creates (truncates) `file`; userBlock > 0 puts the HDF5 superblock
    /// after that many bytes (a power of two >= 512).
    explicit H5Builder(const std::filesystem::path& file, hsize_t userBlock = 0) {
        const hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
        if (userBlock > 0) H5Pset_userblock(fcpl, userBlock);
        m_file = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
        H5Pclose(fcpl);
        if (m_file < 0) throw std::runtime_error("cannot create " + file.string());
    }
    ~H5Builder() { close(); }
    H5Builder(const H5Builder&) = delete;
    H5Builder& operator=(const H5Builder&) = delete;

    /// A dataset of T (uint8, uint16, int32, float, double) with the given
    /// shape; missing parent groups are created.
    template <typename T>
    H5Builder& dataset(const std::string& name, const std::vector<hsize_t>& dims, const std::vector<T>& values) {
        return stored(name, dims, values, type<T>());
    }

    /// The same stored as `fileType` (e.g. a big-endian type), in chunks of
    /// `chunk` (empty: contiguous), deflated at `gzip` (0: not).
    template <typename T>
    H5Builder& stored(const std::string& name, const std::vector<hsize_t>& dims, const std::vector<T>& values,
                      hid_t fileType, const std::vector<hsize_t>& chunk = {}, unsigned gzip = 0) {
        std::vector<Filter> filters;
        if (gzip > 0) filters.push_back({H5Z_FILTER_DEFLATE, {gzip}, H5Z_FLAG_OPTIONAL}); // as H5Pset_deflate
        return filtered(name, dims, values, fileType, chunk, filters);
    }

    /// One stage of a dataset's filter pipeline, as H5Pset_filter takes it.
    struct Filter {
        H5Z_filter_t id;
        std::vector<unsigned> values;
        unsigned flags = H5Z_FLAG_MANDATORY;
    };

    /// The same through the given filters, in pipeline order (needs chunks).
    template <typename T>
    H5Builder& filtered(const std::string& name, const std::vector<hsize_t>& dims, const std::vector<T>& values,
                        hid_t fileType, const std::vector<hsize_t>& chunk, const std::vector<Filter>& filters) {
        const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
        const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        if (!chunk.empty()) H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data());
        for (const Filter& f : filters)
            if (H5Pset_filter(dcpl, f.id, f.flags, f.values.size(), f.values.data()) < 0)
                throw std::runtime_error("cannot add filter " + std::to_string(f.id) + " to " + name);
        const hid_t set = H5Dcreate2(m_file, name.c_str(), fileType, space, lcpl, dcpl, H5P_DEFAULT);
        // Filters run when chunks leave the cache: a failing one shows at close.
        if (set < 0 || H5Dwrite(set, type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0 || H5Dclose(set) < 0)
            throw std::runtime_error("cannot write " + name);
        H5Pclose(dcpl);
        H5Pclose(lcpl);
        H5Sclose(space);
        return *this;
    }

    /// A variable-length string attribute on an existing object: a scalar,
    /// or with copies > 0 a 1D array of that many copies of `value`.
    H5Builder& attribute(const std::string& object, const std::string& name, const std::string& value,
                         hsize_t copies = 0) {
        const hid_t type = H5Tcopy(H5T_C_S1);
        H5Tset_size(type, H5T_VARIABLE);
        const hid_t space = copies > 0 ? H5Screate_simple(1, &copies, nullptr) : H5Screate(H5S_SCALAR);
        const hid_t attr = H5Acreate_by_name(m_file, object.c_str(), name.c_str(), type, space, H5P_DEFAULT,
                                             H5P_DEFAULT, H5P_DEFAULT);
        const std::vector<const char*> texts(std::max<hsize_t>(copies, 1), value.c_str());
        if (attr < 0 || H5Awrite(attr, type, texts.data()) < 0)
            throw std::runtime_error("cannot write attribute " + name);
        H5Aclose(attr);
        H5Sclose(space);
        H5Tclose(type);
        return *this;
    }

    /// A scalar float64 attribute on an existing object.
    H5Builder& numberAttribute(const std::string& object, const std::string& name, double value) {
        const hid_t space = H5Screate(H5S_SCALAR);
        const hid_t attr = H5Acreate_by_name(m_file, object.c_str(), name.c_str(), H5T_NATIVE_DOUBLE, space,
                                             H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (attr < 0 || H5Awrite(attr, H5T_NATIVE_DOUBLE, &value) < 0)
            throw std::runtime_error("cannot write attribute " + name);
        H5Aclose(attr);
        H5Sclose(space);
        return *this;
    }

    /// A uint16 dataset of the given shape that is declared but never
    /// written (no storage), chunked or contiguous.
    H5Builder& unwrittenDataset(const std::string& name, const std::vector<hsize_t>& dims, bool chunked) {
        const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
        const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        if (chunked) {
            std::vector<hsize_t> chunk(dims.size(), 1);
            chunk.back() = std::min<hsize_t>(dims.back(), 64);
            H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data());
        }
        const hid_t set = H5Dcreate2(m_file, name.c_str(), H5T_NATIVE_UINT16, space, lcpl, dcpl, H5P_DEFAULT);
        if (set < 0) throw std::runtime_error("cannot create " + name);
        H5Dclose(set);
        H5Pclose(dcpl);
        H5Pclose(lcpl);
        H5Sclose(space);
        return *this;
    }

    /// A float32 virtual dataset of the given shape mapped whole onto
    /// `sourceName` in `sourceFile` (which need not exist).
    H5Builder& virtualDataset(const std::string& name, const std::vector<hsize_t>& dims, const std::string& sourceFile,
                              const std::string& sourceName) {
        const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_virtual(dcpl, space, sourceFile.c_str(), sourceName.c_str(), space);
        const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        const hid_t set = H5Dcreate2(m_file, name.c_str(), H5T_NATIVE_FLOAT, space, lcpl, dcpl, H5P_DEFAULT);
        if (set < 0) throw std::runtime_error("cannot create virtual " + name);
        H5Dclose(set);
        H5Pclose(lcpl);
        H5Pclose(dcpl);
        H5Sclose(space);
        return *this;
    }

    void close() {
        if (m_file >= 0) H5Fclose(m_file);
        m_file = H5I_INVALID_HID;
    }

private:
    template <typename T>
    static hid_t type() {
        if constexpr (std::is_same_v<T, std::uint8_t>) return H5T_NATIVE_UINT8;
        else if constexpr (std::is_same_v<T, std::uint16_t>) return H5T_NATIVE_UINT16;
        else if constexpr (std::is_same_v<T, std::int32_t>) return H5T_NATIVE_INT32;
        else if constexpr (std::is_same_v<T, float>) return H5T_NATIVE_FLOAT;
        else {
            static_assert(std::is_same_v<T, double>);
            return H5T_NATIVE_DOUBLE;
        }
    }

    hid_t m_file = H5I_INVALID_HID;
};

} // namespace tomo::test

#endif
