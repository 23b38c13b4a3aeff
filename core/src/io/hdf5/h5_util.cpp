#include "io/hdf5/h5_util.h"

#include "io/file_checks.h"
#include "io/hdf5/filters.h"
#include "io/memory_ceiling.h"
#include "tomo/error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <limits>
#include <memory>

#include <unistd.h>

namespace tomo::h5 {

namespace {

// HDF5 takes this only before it initialises itself, so it is done when the
// program loads, before main() and before any other code can call HDF5.
const bool g_noCleanupAtExit = H5dont_atexit() >= 0;

} // namespace

std::recursive_mutex& libraryMutex() {
    static std::recursive_mutex mutex;
    return mutex;
}

void renewLibraryMutexInChild() {
    // Its old state is a lock held by a thread that does not exist here; it
    // is never unlocked or destroyed (the child ends with _exit).
    std::construct_at(&libraryMutex());
}

void prepareThread() {
    thread_local bool prepared = false;
    if (prepared) return;
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    prepared = true;
}

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
    if (message.empty()) return {};
    // Failed system calls: "file write failed: time = ..., errno = 28, error
    // message = 'No space left on device', buf = ..." -> the first clause and
    // the system's reason.
    const std::string marker = "error message = '";
    if (const auto at = message.find(marker); at != std::string::npos) {
        const auto end = message.find('\'', at + marker.size());
        message = message.substr(0, message.find(':')) + ": " + message.substr(at + marker.size(), end - at - marker.size());
    }
    constexpr std::size_t kMaxLength = 200;
    if (message.size() > kMaxLength) message = message.substr(0, kMaxLength) + "...";
    for (char& c : message)
        if (c == '\n' || c == '\r') c = ' ';
    return " (HDF5: " + message + ")";
}

namespace {

/// Whether an entry of HDF5's error stack holds `text`.
bool errorStackSays(const char* text) {
    struct Search {
        const char* text;
        bool found = false;
    } search{text};
    H5Ewalk2(
        H5E_DEFAULT, H5E_WALK_UPWARD,
        [](unsigned, const H5E_error2_t* error, void* data) -> herr_t {
            auto* s = static_cast<Search*>(data);
            if (error->desc && std::string(error->desc).find(s->text) != std::string::npos) s->found = true;
            return 0;
        },
        &search);
    return search.found;
}

} // namespace

File openReadOnly(const std::filesystem::path& path) {
    const Session session;
    PropertyList fapl(H5Pcreate(H5P_FILE_ACCESS));
    // Lock when the file system supports it, but read-only mounts without
    // locking must still open.
    H5Pset_file_locking(fapl.get(), true, true);
    File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
    // Another process holds HDF5's lock (flock): it has the file open for writing.
    if (!file.valid() && errorStackSays("unable to lock"))
        throw IoError(path.string() + ": locked by another process that has it open for writing; wait until it "
                                      "closes the file, or run with HDF5_USE_FILE_LOCKING=FALSE to read it "
                                      "anyway (what is being written may be incomplete)");
    // A file of the latest format marked open by a writer that never closed it.
    if (!file.valid() && errorStackSays("already open for write"))
        throw IoError(path.string() + ": marked as open for writing by a process that has not closed it (still "
                                      "writing, or it crashed); if none writes it any more, 'h5clear -s " +
                      path.string() + "' clears the mark");
    // A readable file that HDF5 cannot open is damaged; otherwise the system refused it.
    if (!file.valid() && ::access(path.c_str(), R_OK) == 0)
        throw FormatError(path.string() + ": not a readable HDF5 file (truncated or corrupt?)" + errorDetail());
    if (!file.valid()) throw IoError(path.string() + ": cannot open the HDF5 file" + errorDetail());
    return file;
}

File openSwmrRead(const std::filesystem::path& path) {
    const Session session;
    PropertyList fapl(H5Pcreate(H5P_FILE_ACCESS));
    H5Pset_file_locking(fapl.get(), false, true);
    File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl.get()));
    if (!file.valid())
        throw IoError(path.string() + ": cannot open for SWMR reading (a DXchange file written with HDF5 SWMR, "
                                      "in the latest file format, is expected)" + errorDetail());
    return file;
}

bool exists(hid_t file, const std::string& objectPath) {
    const Session session;
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

/// A damaged file can declare a number type whose bits lie outside its
/// bytes; libhdf5's conversion of such values smashes its own stack (found
/// by fuzzing, libhdf5 1.10.8: H5T__bit_get_d from H5T__conv_i_f).
bool bitsInsideBytes(hid_t type) {
    const std::size_t bits = H5Tget_size(type) * 8;
    const std::size_t precision = H5Tget_precision(type);
    const int offset = H5Tget_offset(type);
    if (precision == 0 || offset < 0 || precision + static_cast<std::size_t>(offset) > bits) return false;
    if (H5Tget_class(type) != H5T_FLOAT) return true;
    std::size_t sign = 0, exponentPos = 0, exponentSize = 0, mantissaPos = 0, mantissaSize = 0;
    return H5Tget_fields(type, &sign, &exponentPos, &exponentSize, &mantissaPos, &mantissaSize) >= 0 && sign < bits &&
           exponentSize > 0 && exponentPos + exponentSize <= bits && mantissaPos + mantissaSize <= bits;
}

} // namespace

Array::Array(hid_t file, std::filesystem::path filePath, std::string name)
    : m_filePath(std::move(filePath)), m_name(std::move(name)) {
    const Session session;
    if (!exists(file, m_name)) throw FormatError(m_filePath.string() + ": dataset " + m_name + " is missing");
    m_dataset = Dataset(H5Dopen2(file, m_name.c_str(), H5P_DEFAULT));
    if (!m_dataset.valid()) throw FormatError(m_filePath.string() + ": " + m_name + " is not a dataset" + errorDetail());
    // A file another process writes (SWMR): this process may hold the
    // dataset's header from an earlier open; read it again for its extent.
    unsigned intent = 0;
    if (H5Fget_intent(file, &intent) >= 0 && (intent & H5F_ACC_SWMR_READ) && H5Drefresh(m_dataset.get()) < 0)
        throw IoError(where() + ": cannot refresh it from the file being written" + errorDetail());

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
    if (!bitsInsideBytes(type.get()))
        throw FormatError(where() + " has a damaged " + typeText(type.get()) + " type (its bits lie outside its " +
                          std::to_string(size) + " bytes)");
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
    const Session session;
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
        if (H5Dread(m_dataset.get(), memoryType, memSpace.get(), fileSpace.get(), H5P_DEFAULT, cursor) < 0) {
            // An optional filter that did compress some chunks, and is missing here.
            PropertyList create(H5Dget_create_plist(m_dataset.get()));
            if (const auto filter = unavailableFilter(create.get(), true)) throw IoError(where() + " " + *filter);
            throw IoError(where() + ": read failed" + errorDetail());
        }
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
    const Session session;
    requireStoredData();
    // Metadata (angles, keys) only: a few million values at most.
    constexpr hsize_t kMaxValues = hsize_t{1} << 26;
    hsize_t n = 1;
    for (hsize_t d : m_dims) n = d == 0 || n <= kMaxValues / d ? n * d : kMaxValues + 1;
    if (n > kMaxValues)
        throw FormatError(where() + " has shape " + shapeText() + "; expected at most " + std::to_string(kMaxValues) +
                          " values of metadata");
    std::vector<double> values(n);
    if (n > 0 && H5Dread(m_dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
        throw IoError(where() + ": read failed" + errorDetail());
    return values;
}

namespace {

/// The one string of an open attribute of string type; nullopt when it
/// holds several values or cannot be read.
std::optional<std::string> readOneString(hid_t attribute, hid_t type) {
    // H5Aread fills one element per point of the attribute's dataspace: the
    // buffers below hold exactly one string.
    Dataspace space(H5Aget_space(attribute));
    if (H5Sget_simple_extent_npoints(space.get()) != 1) return std::nullopt;
    std::string value;
    if (H5Tis_variable_str(type) > 0) {
        Datatype memType(H5Tcopy(H5T_C_S1));
        H5Tset_size(memType.get(), H5T_VARIABLE);
        // h5py writes UTF-8 strings; HDF5 will not convert between character sets.
        H5Tset_cset(memType.get(), H5Tget_cset(type));
        char* text = nullptr;
        // HDF5 1.10 sizes the buffer of a variable-length string from the
        // length stored in the file and zeroes it before reading: a damaged
        // length made it take 16 GB and a minute; capped, the read fails at once.
        const detail::MemoryCeiling ceiling(std::size_t{1} << 30);
        if (H5Aread(attribute, memType.get(), &text) < 0) return std::nullopt;
        if (text) value = text;
        H5free_memory(text);
    } else {
        value.resize(H5Tget_size(type));
        if (H5Aread(attribute, type, value.data()) < 0) return std::nullopt;
        value.erase(std::find(value.begin(), value.end(), '\0'), value.end());
    }
    return value;
}

} // namespace

std::optional<double> attributeNumber(hid_t object, const char* name) {
    const Session session;
    if (H5Aexists(object, name) <= 0) return std::nullopt;
    Attribute attribute(H5Aopen(object, name, H5P_DEFAULT));
    Datatype type(H5Aget_type(attribute.get()));
    const H5T_class_t cls = H5Tget_class(type.get());
    if (cls != H5T_INTEGER && cls != H5T_FLOAT) return std::nullopt;
    Dataspace space(H5Aget_space(attribute.get()));
    if (H5Sget_simple_extent_npoints(space.get()) != 1) return std::nullopt;
    double value = 0.0;
    if (H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value) < 0) return std::nullopt;
    return value;
}

std::optional<std::string> attributeText(hid_t object, const char* name) {
    const Session session;
    if (H5Aexists(object, name) <= 0) return std::nullopt;
    Attribute attribute(H5Aopen(object, name, H5P_DEFAULT));
    Datatype type(H5Aget_type(attribute.get()));
    if (H5Tget_class(type.get()) == H5T_STRING) return readOneString(attribute.get(), type.get());
    const std::optional<double> number = attributeNumber(object, name);
    if (!number) return std::nullopt;
    const double value = *number;
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

std::optional<std::string> Array::stringAttribute(const char* name) const {
    const Session session;
    if (H5Aexists(m_dataset.get(), name) <= 0) return std::nullopt;
    Attribute attribute(H5Aopen(m_dataset.get(), name, H5P_DEFAULT));
    Datatype type(H5Aget_type(attribute.get()));
    if (H5Tget_class(type.get()) != H5T_STRING) return std::nullopt;
    Dataspace space(H5Aget_space(attribute.get()));
    if (H5Sget_simple_extent_npoints(space.get()) != 1)
        throw FormatError(where() + ": attribute " + name + " holds several values; expected one string");
    auto value = readOneString(attribute.get(), type.get());
    if (!value) throw IoError(where() + ": cannot read attribute " + name + errorDetail());
    return value;
}

void Array::requireStoredData() const {
    const Session session;
    PropertyList create(H5Dget_create_plist(m_dataset.get()));
    const H5D_layout_t layout = H5Pget_layout(create.get());
    if (layout == H5D_VIRTUAL) {
        requireVirtualSources(create.get());
        return;
    }
    double declared = static_cast<double>(H5Tget_size(Datatype(H5Dget_type(m_dataset.get())).get()));
    for (hsize_t d : m_dims) declared *= static_cast<double>(d);
    if (H5Pget_external_count(create.get()) > 0) {
        requireExternalFiles(create.get(), declared);
        return;
    }
    const auto stored = static_cast<double>(H5Dget_storage_size(m_dataset.get()));
    const std::string declaration = where() + " declares " + shapeText() + " " + m_typeText + " (" +
                                    detail::formatBytes(declared) + ")";
    if (stored == 0 && declared > 0) throw FormatError(declaration + " but holds no data: it was never written");
    if (layout == H5D_CHUNKED) {
        if (const auto filter = unavailableFilter(create.get(), false)) throw IoError(where() + " " + *filter);
        // Compression of detector data or volumes stays far below 1000:1
        // (deflate cannot exceed about 1032:1); more means chunks never
        // written, which would read as zeros.
        constexpr double kMaxCompression = 1000.0;
        if (stored * kMaxCompression < declared)
            throw FormatError(declaration + " but stores only " + detail::formatBytes(stored) +
                              ": most of it was never written");
        // A file being written (SWMR): HDF5 1.10.8's lookups by coordinate
        // fail on chunks of the growing index while the writer appends; the
        // run on the finished file checks them.
        unsigned intent = 0;
        const hid_t file = H5Iget_file_id(m_dataset.get());
        const bool swmr = file >= 0 && H5Fget_intent(file, &intent) >= 0 && (intent & H5F_ACC_SWMR_READ);
        if (file >= 0) H5Fclose(file);
        if (!swmr) requireChunkIndex(create.get(), declaration);
        return;
    }
    // Contiguous and compact data are stored whole, uncompressed: less
    // storage than the shape is damage (HDF5 1.10 reads past its buffer).
    if (stored < declared)
        throw FormatError(declaration + " but its storage holds " + detail::formatBytes(stored) + ": damaged");
    if (layout != H5D_CONTIGUOUS) return;
    // Contiguous data lie in one block: it must end inside the file.
    const haddr_t offset = H5Dget_offset(m_dataset.get());
    std::error_code ec;
    const auto fileBytes = std::filesystem::file_size(m_filePath, ec);
    if (offset != HADDR_UNDEF && !ec && static_cast<double>(offset) + stored > static_cast<double>(fileBytes))
        throw FormatError(declaration + " from byte " + std::to_string(offset) + ", but the file has " +
                          std::to_string(fileBytes) + " bytes: it is truncated");
}

void Array::requireChunkIndex(hid_t create, const std::string& declaration) const {
    // One lookup per chunk of the grid: skipped for grids of over a million
    // chunks, where it would cost seconds.
    constexpr double kMaxChunks = 1 << 20;
    const auto rank = static_cast<int>(m_dims.size());
    std::vector<hsize_t> chunk(m_dims.size());
    if (H5Pget_chunk(create, rank, chunk.data()) != rank) return;
    double gridChunks = 1.0;
    for (int d = 0; d < rank; ++d) {
        if (chunk[d] == 0) throw FormatError(declaration + " with an empty chunk shape: damaged");
        gridChunks *= static_cast<double>((m_dims[d] + chunk[d] - 1) / chunk[d]);
    }
    if (gridChunks > kMaxChunks) return;
    Dataspace space(H5Dget_space(m_dataset.get()));
    hsize_t allocated = 0;
    if (H5Dget_num_chunks(m_dataset.get(), space.get(), &allocated) < 0)
        throw FormatError(declaration + " but its chunk index cannot be read: damaged" + errorDetail());
    double chunkBytes = static_cast<double>(H5Tget_size(Datatype(H5Dget_type(m_dataset.get())).get()));
    for (hsize_t c : chunk) chunkBytes *= static_cast<double>(c);
    const bool filtered = H5Pget_nfilters(create) > 0;
    std::error_code ec;
    const auto fileBytes = static_cast<double>(std::filesystem::file_size(m_filePath, ec));
    // Every allocated chunk must lie on the grid, inside the file, and
    // without filters have exactly a chunk's size: HDF5 1.10 copies a chunk
    // whose index entry is damaged past its buffers.
    std::vector<hsize_t> offset(m_dims.size(), 0);
    hsize_t found = 0;
    for (;;) {
        unsigned mask = 0;
        haddr_t address = HADDR_UNDEF;
        hsize_t size = 0;
        if (H5Dget_chunk_info_by_coord(m_dataset.get(), offset.data(), &mask, &address, &size) >= 0 &&
            address != HADDR_UNDEF) {
            ++found;
            if (address == 0 || size == 0 || (!ec && static_cast<double>(address) + static_cast<double>(size) > fileBytes) ||
                (!filtered && static_cast<double>(size) != chunkBytes))
                throw FormatError(declaration + " but its chunk at " + std::to_string(address) + " (" +
                                  std::to_string(size) + " bytes) lies outside the file or has the wrong size: damaged");
        }
        int d = rank - 1;
        for (; d >= 0; --d) {
            offset[d] += chunk[d];
            if (offset[d] < m_dims[d]) break;
            offset[d] = 0;
        }
        if (d < 0) break;
    }
    if (found != allocated)
        throw FormatError(declaration + " but " + std::to_string(allocated - std::min(found, allocated)) +
                          " of its chunks lie off the chunk grid: damaged");
}

void Array::requireExternalFiles(hid_t create, double declaredBytes) const {
    // Where HDF5 1.10 looks: HDF5_EXTFILE_PREFIX, else the dataset's
    // external-file prefix, else the current directory; "${ORIGIN}" in a
    // prefix is this file's folder.
    std::string prefix;
    if (const char* env = std::getenv("HDF5_EXTFILE_PREFIX"); env && *env) {
        prefix = env;
    } else {
        PropertyList access(H5Dget_access_plist(m_dataset.get()));
        const ssize_t length = access.valid() ? H5Pget_efile_prefix(access.get(), nullptr, 0) : 0;
        if (length > 0) {
            prefix.assign(static_cast<std::size_t>(length) + 1, '\0');
            H5Pget_efile_prefix(access.get(), prefix.data(), prefix.size());
            prefix.resize(static_cast<std::size_t>(length));
        }
    }
    if (prefix.rfind("${ORIGIN}", 0) == 0)
        prefix = m_filePath.parent_path().string() + prefix.substr(std::string("${ORIGIN}").size());
    double remaining = declaredBytes;
    const int count = H5Pget_external_count(create);
    for (int i = 0; i < count && remaining > 0; ++i) {
        char name[4096] = {};
        off_t offset = 0;
        hsize_t size = 0;
        if (H5Pget_external(create, static_cast<unsigned>(i), sizeof name, name, &offset, &size) < 0) continue;
        const std::filesystem::path given(name);
        const std::filesystem::path path = given.is_relative() && !prefix.empty() ? prefix / given : given;
        const double part = size == H5F_UNLIMITED ? remaining : std::min(remaining, static_cast<double>(size));
        remaining -= part;
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(path, ec);
        if (ec)
            throw FormatError(where() + " stores its values in the external file '" + given.string() + "', which " +
                              (std::filesystem::exists(path, ec) ? "cannot be read" : "is missing") + " (looked for " +
                              std::filesystem::absolute(path, ec).string() +
                              (prefix.empty() ? ", relative to the current directory; HDF5_EXTFILE_PREFIX=${ORIGIN} "
                                                "looks beside the HDF5 file"
                                              : "") +
                              ")");
        if (static_cast<double>(bytes) < static_cast<double>(offset) + part)
            throw FormatError(where() + ": its external file '" + path.string() + "' has " +
                              detail::formatBytes(static_cast<double>(bytes)) + "; expected " +
                              detail::formatBytes(static_cast<double>(offset) + part) + " (from byte " +
                              std::to_string(offset) + "): truncated");
    }
}

void Array::requireVirtualSources(hid_t create) const {
    std::size_t mappings = 0;
    if (H5Pget_virtual_count(create, &mappings) < 0) return;
    const std::filesystem::path beside = m_filePath.parent_path();
    for (std::size_t i = 0; i < mappings; ++i) {
        const ssize_t length = H5Pget_virtual_filename(create, i, nullptr, 0);
        if (length <= 0) continue;
        std::string name(static_cast<std::size_t>(length) + 1, '\0');
        H5Pget_virtual_filename(create, i, name.data(), name.size());
        name.resize(static_cast<std::size_t>(length));
        // "." is this file; printf-style patterns name many files.
        if (name == "." || name.find('%') != std::string::npos) continue;
        // Where HDF5 looks (1.10): the name as given, HDF5_VDS_PREFIX, then
        // beside this file.
        std::error_code ec;
        const std::filesystem::path source(name);
        bool found = std::filesystem::exists(source, ec) ||
                     (source.is_relative() && std::filesystem::exists(beside / source, ec));
        if (const char* prefix = std::getenv("HDF5_VDS_PREFIX"); !found && prefix && *prefix)
            found = std::filesystem::exists(std::filesystem::path(prefix) / source, ec);
        if (!found)
            throw FormatError(where() + " is a virtual dataset whose source file '" + name +
                              "' is missing (looked for it as given and beside " + m_filePath.filename().string() +
                              "); its values would read as zeros");
    }
}

detail::StoredAngles readStoredAngles(const Array& angles) {
    angles.requireRank({1}, "one angle per projection (1D)");
    detail::StoredAngles stored{angles.readAllDouble(), angles.where(), std::nullopt};
    const auto attribute = angles.stringAttribute("units");
    if (!attribute) return stored;
    std::string units = *attribute;
    std::transform(units.begin(), units.end(), units.begin(), [](unsigned char c) { return std::tolower(c); });
    if (units == "rad" || units == "radian" || units == "radians") stored.statedUnits = AngleUnits::Radians;
    else if (units == "deg" || units == "degree" || units == "degrees") stored.statedUnits = AngleUnits::Degrees;
    else
        throw FormatError(angles.where() + " has units '" + units.substr(0, 40) + "'; expected degrees or radians");
    return stored;
}

void writeStringAttribute(hid_t object, const std::string& name, const std::string& value, const std::string& where) {
    const Session session;
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
