#include "io/hdf5/h5_util.h"

#include "tomo/error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numbers>

namespace tomo::h5 {

std::recursive_mutex& libraryMutex() {
    static std::recursive_mutex mutex;
    return mutex;
}

QuietErrors::QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &m_function, &m_data);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, m_function, m_data); }

std::string errorDetail() {
    std::string message;
    // Upward: the innermost (most specific) entry comes first.
    H5Ewalk2(
        H5E_DEFAULT, H5E_WALK_UPWARD,
        [](unsigned n, const H5E_error2_t* error, void* data) -> herr_t {
            if (n == 0 && error->desc) *static_cast<std::string*>(data) = error->desc;
            return 0;
        },
        &message);
    return message.empty() ? std::string() : " (HDF5: " + message + ")";
}

File openReadOnly(const std::filesystem::path& path) {
    PropertyList fapl(H5Pcreate(H5P_FILE_ACCESS));
    // Lock when the file system supports it, but read-only mounts without
    // locking must still open.
    H5Pset_file_locking(fapl.get(), true, true);
    File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
    if (!file.valid()) throw IoError(path.string() + ": cannot open the HDF5 file" + errorDetail());
    return file;
}

bool exists(hid_t file, const std::string& objectPath) {
    for (std::size_t slash = objectPath.find('/', 1);; slash = objectPath.find('/', slash + 1)) {
        const std::string prefix = objectPath.substr(0, slash);
        if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
        if (slash == std::string::npos) return H5Oexists_by_name(file, prefix.c_str(), H5P_DEFAULT) > 0;
    }
}

namespace {

std::string typeText(hid_t type) {
    const auto bits = std::to_string(H5Tget_size(type) * 8);
    switch (H5Tget_class(type)) {
    case H5T_INTEGER: return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + bits;
    case H5T_FLOAT: return "float" + bits;
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    default: return "non-numeric type";
    }
}

} // namespace

Array::Array(hid_t file, std::filesystem::path filePath, std::string name)
    : m_filePath(std::move(filePath)), m_name(std::move(name)) {
    if (!exists(file, m_name)) throw FormatError(m_filePath.string() + ": dataset " + m_name + " is missing");
    m_dataset = Dataset(H5Dopen2(file, m_name.c_str(), H5P_DEFAULT));
    if (!m_dataset.valid()) throw FormatError(m_filePath.string() + ": " + m_name + " is not a dataset" + errorDetail());

    Datatype type(H5Dget_type(m_dataset.get()));
    const H5T_class_t cls = H5Tget_class(type.get());
    const std::size_t size = H5Tget_size(type.get());
    const bool isUnsigned = cls == H5T_INTEGER && H5Tget_sign(type.get()) == H5T_SGN_NONE;
    if (cls == H5T_INTEGER && isUnsigned && size == 1) m_pixelType = SampleType::UInt8;
    else if (cls == H5T_INTEGER && isUnsigned && size == 2) m_pixelType = SampleType::UInt16;
    else if (cls == H5T_FLOAT && size == 4) m_pixelType = SampleType::Float32;
    else if (cls == H5T_FLOAT && size == 8) m_pixelType = SampleType::Float64;
    if (cls != H5T_INTEGER && cls != H5T_FLOAT)
        throw FormatError(where() + " has type " + typeText(type.get()) + "; expected numbers");
    m_typeText = typeText(type.get());

    Dataspace space(H5Dget_space(m_dataset.get()));
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0) throw FormatError(where() + ": cannot read the shape" + errorDetail());
    m_dims.resize(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space.get(), m_dims.data(), nullptr);
}

std::string Array::where() const { return m_name + " in " + m_filePath.string(); }

std::string Array::shapeText() const {
    std::string text = "(";
    for (std::size_t i = 0; i < m_dims.size(); ++i) text += (i ? ", " : "") + std::to_string(m_dims[i]);
    return text + ")";
}

void Array::requireRank(std::initializer_list<int> ranks, const std::string& shape) const {
    if (std::find(ranks.begin(), ranks.end(), static_cast<int>(m_dims.size())) == ranks.end())
        throw FormatError(where() + " has shape " + shapeText() + "; expected " + shape);
    for (hsize_t d : m_dims) {
        if (d == 0) throw FormatError(where() + " has shape " + shapeText() + "; expected no empty dimension");
        // Readers keep sizes in int.
        if (d > static_cast<hsize_t>(std::numeric_limits<int>::max()))
            throw FormatError(where() + " has shape " + shapeText() + "; expected dimensions below 2^31");
    }
}

SampleType Array::pixelType() const {
    if (!m_pixelType)
        throw FormatError(where() + " has type " + m_typeText + "; expected uint8, uint16, float32 or float64");
    return *m_pixelType;
}

void Array::readAs(const std::vector<Block>& blocks, hid_t memoryType, void* out, std::size_t values) const {
    // One H5Dread per block, each with a memory space of the block's own
    // shape: HDF5 then copies whole rows. (A union selection read into a 1-D
    // memory space takes its general element-mapping path: measured 100x
    // slower on chunked detector files.)
    std::size_t total = 0;
    for (const Block& b : blocks) {
        std::size_t n = 1;
        for (hsize_t c : b.count) n *= c;
        total += n;
    }
    if (total != values)
        throw FormatError(where() + ": selected " + std::to_string(total) + " values for a buffer of " +
                          std::to_string(values));
    const std::size_t sample = H5Tget_size(memoryType);
    auto* cursor = static_cast<unsigned char*>(out);
    for (const Block& b : blocks) {
        Dataspace fileSpace(H5Dget_space(m_dataset.get()));
        if (b.start.size() != m_dims.size() || b.count.size() != m_dims.size() ||
            H5Sselect_hyperslab(fileSpace.get(), H5S_SELECT_SET, b.start.data(), nullptr, b.count.data(), nullptr) < 0 ||
            H5Sselect_valid(fileSpace.get()) <= 0)
            throw FormatError(where() + ": selection outside the shape " + shapeText() + errorDetail());
        Dataspace memSpace(H5Screate_simple(static_cast<int>(b.count.size()), b.count.data(), nullptr));
        if (H5Dread(m_dataset.get(), memoryType, memSpace.get(), fileSpace.get(), H5P_DEFAULT, cursor) < 0)
            throw IoError(where() + ": read failed" + errorDetail());
        std::size_t n = 1;
        for (hsize_t c : b.count) n *= c;
        cursor += n * sample;
    }
}

void Array::read(const std::vector<Block>& blocks, std::span<float> out) const {
    readAs(blocks, H5T_NATIVE_FLOAT, out.data(), out.size());
}

void Array::readStored(const std::vector<Block>& blocks, std::span<std::byte> out) const {
    const SampleType type = pixelType();
    const hid_t memoryType = type == SampleType::UInt8    ? H5T_NATIVE_UINT8
                             : type == SampleType::UInt16 ? H5T_NATIVE_UINT16
                             : type == SampleType::Float32 ? H5T_NATIVE_FLOAT
                                                           : H5T_NATIVE_DOUBLE;
    readAs(blocks, memoryType, out.data(), out.size() / sampleBytes(type));
}

void Array::read(std::vector<hsize_t> start, std::vector<hsize_t> count, std::span<float> out) const {
    read(std::vector<Block>{Block{std::move(start), std::move(count)}}, out);
}

std::vector<double> Array::readAllDouble() const {
    hsize_t n = 1;
    for (hsize_t d : m_dims) n *= d;
    std::vector<double> values(n);
    if (n > 0 && H5Dread(m_dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
        throw IoError(where() + ": read failed" + errorDetail());
    return values;
}

std::optional<std::string> Array::stringAttribute(const char* name) const {
    if (H5Aexists(m_dataset.get(), name) <= 0) return std::nullopt;
    Attribute attribute(H5Aopen(m_dataset.get(), name, H5P_DEFAULT));
    Datatype type(H5Aget_type(attribute.get()));
    if (H5Tget_class(type.get()) != H5T_STRING) return std::nullopt;
    // H5Aread fills one element per point of the attribute's dataspace: the
    // buffers below hold exactly one string.
    Dataspace space(H5Aget_space(attribute.get()));
    if (H5Sget_simple_extent_npoints(space.get()) != 1)
        throw FormatError(where() + ": attribute " + name + " holds several values; expected one string");
    std::string value;
    if (H5Tis_variable_str(type.get()) > 0) {
        Datatype memType(H5Tcopy(H5T_C_S1));
        H5Tset_size(memType.get(), H5T_VARIABLE);
        // h5py writes UTF-8 strings; HDF5 will not convert between character sets.
        H5Tset_cset(memType.get(), H5Tget_cset(type.get()));
        char* text = nullptr;
        if (H5Aread(attribute.get(), memType.get(), &text) < 0)
            throw IoError(where() + ": cannot read attribute " + name + errorDetail());
        if (text) value = text;
        H5free_memory(text);
    } else {
        value.resize(H5Tget_size(type.get()));
        if (H5Aread(attribute.get(), type.get(), value.data()) < 0)
            throw IoError(where() + ": cannot read attribute " + name + errorDetail());
        value.erase(std::find(value.begin(), value.end(), '\0'), value.end());
    }
    return value;
}

std::vector<double> readAnglesRadians(const Array& angles) {
    angles.requireRank({1}, "one angle per projection (1D)");
    std::vector<double> values = angles.readAllDouble();
    std::string units = angles.stringAttribute("units").value_or("degrees");
    std::transform(units.begin(), units.end(), units.begin(), [](unsigned char c) { return std::tolower(c); });
    if (units == "rad" || units == "radian" || units == "radians") return values;
    if (units != "deg" && units != "degree" && units != "degrees")
        throw FormatError(angles.where() + " has units '" + units + "'; expected degrees or radians");
    for (double& v : values) v *= std::numbers::pi / 180.0;
    return values;
}

void writeStringAttribute(hid_t object, const std::string& name, const std::string& value, const std::string& where) {
    Datatype type(H5Tcopy(H5T_C_S1));
    H5Tset_size(type.get(), H5T_VARIABLE);
    H5Tset_cset(type.get(), H5T_CSET_UTF8);
    Dataspace scalar(H5Screate(H5S_SCALAR));
    Attribute attribute(H5Acreate2(object, name.c_str(), type.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT));
    const char* text = value.c_str();
    if (!attribute.valid() || H5Awrite(attribute.get(), type.get(), &text) < 0)
        throw IoError(where + ": cannot write attribute " + name + errorDetail());
}

} // namespace tomo::h5
