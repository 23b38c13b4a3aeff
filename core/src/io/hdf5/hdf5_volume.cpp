// HDF5 volume output: dataset /volume [slice][row][column] of the output
// type, one slice per chunk (a viewer showing a slice reads one chunk), the
// reconstruction parameters as string attributes on /volume; integers carry
// the CF attributes scale_factor and add_offset.
#include "io/chunk_file.h"
#include "io/hdf5/h5_util.h"
#include "tomo/error.h"
#include "io/writers.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

namespace tomo::detail {

namespace {

constexpr const char* kVolume = "/volume";

// The file's bytes besides the samples, measured with HDF5 1.10.8 (see
// tests/core/test_volume_io.cpp) and rounded up: the superblock, the root
// group, the dataset's header with the writer's own attributes and the
// first node of the chunk B-tree (10.1 to 11.9 KiB measured); each string
// attribute's name and value in the global heap, and beyond 8 of them a
// fractal heap and a name index (measured 1.0 to 1.4 times the text, plus
// about 100 bytes each); another B-tree node per 64 chunks (6272 bytes).
constexpr double kFileBytes = 16384.0;
constexpr double kAttributeBytes = 128.0;
constexpr double kAttributeTextFactor = 1.1;
constexpr double kChunkNodeBytes = 6656.0;
constexpr double kChunksPerNode = 64.0;

/// IEEE binary16, which HDF5 1.10 does not predefine: a float type of two
/// bytes, sign bit 15, 5 exponent bits from bit 10 with bias 15, 10 fraction
/// bits. h5py defines its float16 the same way, so h5py/NumPy read float16.
/// `base` gives the byte order (a 32-bit float type of that order).
h5::Datatype halfType(hid_t base) {
    h5::Datatype type(H5Tcopy(base));
    if (!type.valid() || H5Tset_fields(type.get(), 15, 10, 5, 0, 10) < 0 || H5Tset_size(type.get(), 2) < 0 ||
        H5Tset_ebias(type.get(), 15) < 0)
        throw IoError("cannot define the HDF5 float16 type" + h5::errorDetail());
    return type;
}

bool isHalf(hid_t type) {
    if (H5Tget_class(type) != H5T_FLOAT || H5Tget_size(type) != 2) return false;
    std::size_t sign = 0, exponentPos = 0, exponentSize = 0, fractionPos = 0, fractionSize = 0;
    H5Tget_fields(type, &sign, &exponentPos, &exponentSize, &fractionPos, &fractionSize);
    return sign == 15 && exponentPos == 10 && exponentSize == 5 && fractionPos == 0 && fractionSize == 10 &&
           H5Tget_ebias(type) == 15;
}

/// The stored type in the file: little-endian, what h5py and most tools
/// write, and what the encoder gives on the machines this builds for.
h5::Datatype storedType(OutputType type) {
    switch (type) {
    case OutputType::Float16: return halfType(H5T_IEEE_F32LE);
    case OutputType::UInt16: return h5::Datatype(H5Tcopy(H5T_STD_U16LE));
    case OutputType::UInt8: return h5::Datatype(H5Tcopy(H5T_STD_U8LE));
    case OutputType::Float32: break;
    }
    return h5::Datatype(H5Tcopy(H5T_IEEE_F32LE));
}

void writeFloatAttribute(hid_t object, const char* name, float value, const std::string& where) {
    h5::Dataspace scalar(H5Screate(H5S_SCALAR));
    h5::Attribute attribute(H5Acreate2(object, name, H5T_IEEE_F32LE, scalar.get(), H5P_DEFAULT, H5P_DEFAULT));
    if (!attribute.valid() || H5Awrite(attribute.get(), H5T_NATIVE_FLOAT, &value) < 0)
        throw IoError(where + ": cannot write attribute " + name + h5::errorDetail());
}

/// The file offset of every chunk of the dataset [slice][band] (the file
/// has no user block), each of a band's bytes; `chunks.fileBytes` is raised
/// to the end of the last. Throws IoError naming `where` for a chunk that
/// is not allocated.
std::vector<std::uint64_t> chunkAddresses(hid_t dataset, const hsize_t dims[3], Hdf5Chunks& chunks, hsize_t rowBytes,
                                          const std::string& where) {
    const hsize_t chunkBytes = chunks.bandRows * rowBytes;
    std::vector<std::uint64_t> addresses;
    addresses.reserve(dims[0] * chunks.bandsPerSlice);
    for (hsize_t z = 0; z < dims[0]; ++z)
        for (hsize_t band = 0; band < chunks.bandsPerSlice; ++band) {
            const hsize_t origin[3] = {z, band * chunks.bandRows, 0};
            unsigned filters = 0;
            haddr_t address = HADDR_UNDEF;
            hsize_t size = 0;
            if (H5Dget_chunk_info_by_coord(dataset, origin, &filters, &address, &size) < 0 || address == HADDR_UNDEF ||
                size != chunkBytes)
                throw IoError(where + ": the chunk of slice " + std::to_string(z) + " was not allocated" +
                              h5::errorDetail());
            addresses.push_back(address);
            chunks.fileBytes = std::max<std::uint64_t>(chunks.fileBytes, address + size);
        }
    return addresses;
}

/// Encodes slices straight into their chunks of a volume file made by
/// createHdf5VolumeFile, on the encoder's threads: into a shared mapping of
/// the file where it can (ChunkFile), else with pwrite.
class ChunkWriter {
public:
    ChunkWriter(const std::filesystem::path& file, const std::string& target, const Hdf5Chunks& chunks,
                ChunkFile::Access access)
        : m_chunks(chunks), m_file(file, chunks.fileBytes, target, access) {}

    void write(const SliceTracker& slices, ParallelEncoder& encoder, int first, int count, std::span<const float> data) {
        const std::size_t rowValues = static_cast<std::size_t>(slices.width());
        const int bands = static_cast<int>(m_chunks.bandsPerSlice);
        // A chunk's place in the file and its samples.
        const auto chunk = [&](int index) {
            const int slice = index / bands, band = index % bands;
            const std::size_t row = static_cast<std::size_t>(band) * m_chunks.bandRows;
            const std::size_t rows =
                std::min<std::size_t>(m_chunks.bandRows, static_cast<std::size_t>(slices.height()) - row);
            const auto values = data.subspan(static_cast<std::size_t>(slice) * slices.sliceSize() + row * rowValues,
                                             rows * rowValues);
            const std::uint64_t address = m_chunks.addresses[static_cast<std::size_t>(first + slice) * bands +
                                                             static_cast<std::size_t>(band)];
            return std::pair{address, values};
        };
        // The reserving threads learn of every chunk of the call at once
        // and reserve them in order while the first ones are written.
        expect(slices, encoder, first, count);
        encoder.forEach(count * bands, [&](int index, int thread) {
            const auto [address, values] = chunk(index);
            const std::size_t bytes = values.size() * encoder.sampleBytes();
            m_file.reserve(address, bytes);
            if (std::byte* place = m_file.at(address)) {
                encoder.encodeOnThread(thread, values, place);
                m_file.unmapWritten(address, bytes);
            } else {
                m_file.write(encoder.encodeOnThread(thread, values), address);
            }
        });
    }

    /// Asks the reserving threads for the chunks of slices [first, first +
    /// count), in order (those outside the volume passed over).
    void expect(const SliceTracker& slices, const ParallelEncoder& encoder, int first, int count) const {
        const std::size_t bands = m_chunks.bandsPerSlice, height = static_cast<std::size_t>(slices.height());
        const std::size_t rowBytes = static_cast<std::size_t>(slices.width()) * encoder.sampleBytes();
        for (int z = std::max(first, 0); z < std::min(first + count, slices.slices()); ++z)
            for (std::size_t band = 0; band < bands; ++band) {
                const std::size_t row = band * m_chunks.bandRows;
                m_file.expect(m_chunks.addresses[static_cast<std::size_t>(z) * bands + band],
                              std::min<std::size_t>(m_chunks.bandRows, height - row) * rowBytes);
            }
    }

    /// With `sync`, the bytes reach the storage first (fdatasync).
    void close(bool sync) {
        if (sync) m_file.sync();
        m_file.close();
    }

private:
    Hdf5Chunks m_chunks;
    ChunkFile m_file;
};

/// Writes /volume's chunks itself: the library creates the file, the
/// dataset with every chunk allocated (no fill values) and the attributes,
/// and closes it; the slices' samples are then encoded by many threads
/// straight into the chunks' bytes at the addresses the library gave
/// (ChunkWriter). Through H5Dwrite, one thread under the library's lock
/// wrote 16 GiB of float16 into tmpfs in 7.7 s; 2.7 s this way (H100
/// machine).
class Hdf5VolumeWriter final : public VolumeWriter {
public:
    Hdf5VolumeWriter(const std::filesystem::path& target, int width, int height, int slices,
                     const WriteOptions& options)
        : m_output(target, options.overwrite), m_slices(m_output.target(), width, height, slices), m_encoder(options) {
        const Hdf5Chunks chunks =
            createHdf5VolumeFile(m_output.temporary(), m_output.target().string(), width, height, slices, options);
        m_chunks.emplace(m_output.temporary(), m_output.target().string(), chunks, ChunkFile::Access::Automatic);
    }

    void writeSlices(int first, int count, std::span<const float> data) override {
        m_slices.check(first, count, data.size());
        m_chunks->write(m_slices, m_encoder, first, count, data);
        m_slices.markWritten(first, count);
    }

    void commit() override {
        m_slices.requireComplete();
        m_chunks->close(false);
        m_output.commit();
    }

    ClippedValues clipped() const override { return m_encoder.clipped(); }

private:
    // Declared first, destroyed last: the file is closed before the
    // temporary is deleted.
    StagedOutput m_output;
    SliceTracker m_slices;
    ParallelEncoder m_encoder;
    std::optional<ChunkWriter> m_chunks;
};

/// Any slices of a volume file another process made (SharedVolume): no
/// temporary of its own, no completeness check; commit() only flushes.
class Hdf5PartWriter final : public VolumeWriter {
public:
    Hdf5PartWriter(const std::filesystem::path& file, const std::string& target, int width, int height, int slices,
                   const Hdf5Chunks& chunks, const WriteOptions& options, bool sameHost)
        : m_slices(target, width, height, slices), m_encoder(options), m_sync(!sameHost),
          m_chunks(file, target, chunks, sameHost ? ChunkFile::Access::Part : ChunkFile::Access::Written) {}

    void writeSlices(int first, int count, std::span<const float> data) override {
        m_slices.check(first, count, data.size());
        m_chunks.write(m_slices, m_encoder, first, count, data);
    }
    void commit() override { m_chunks.close(m_sync); }
    ClippedValues clipped() const override { return m_encoder.clipped(); }
    /// Reserves the chunks of the slices to come while they are reconstructed:
    /// a rank reserves only its own, and only once it has them.
    void expect(int first, int count) override { m_chunks.expect(m_slices, m_encoder, first, count); }

private:
    SliceTracker m_slices;
    ParallelEncoder m_encoder;
    bool m_sync;
    ChunkWriter m_chunks;
};

/// A numeric attribute of one value, or nullopt when absent. Throws
/// FormatError naming it when it is anything else.
std::optional<double> numberAttribute(const h5::Array& volume, const char* name) {
    const h5::Session session;
    if (H5Aexists(volume.id(), name) <= 0) return std::nullopt;
    h5::Attribute attribute(H5Aopen(volume.id(), name, H5P_DEFAULT));
    h5::Datatype type(H5Aget_type(attribute.get()));
    h5::Dataspace space(H5Aget_space(attribute.get()));
    const H5T_class_t cls = H5Tget_class(type.get());
    double value = 0.0;
    if ((cls != H5T_FLOAT && cls != H5T_INTEGER) || H5Sget_simple_extent_npoints(space.get()) != 1 ||
        H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value) < 0 || !std::isfinite(value))
        throw FormatError(volume.where() + ": attribute " + name + " is not one finite number" + h5::errorDetail());
    return value;
}

/// Reads float16 samples slice by slice (a slice's worth of halves at a
/// time) and widens them.
void readHalves(const h5::Array& volume, ImageStack& stack) {
    const h5::Session session;
    const h5::Datatype memoryType = halfType(H5T_NATIVE_FLOAT);
    const std::vector<hsize_t>& dims = volume.dims();
    std::vector<std::uint16_t> halves(stack.imageSize());
    for (int z = 0; z < stack.depth; ++z) {
        std::vector<hsize_t> start(dims.size(), 0), count(dims);
        if (dims.size() == 3) {
            start[0] = static_cast<hsize_t>(z);
            count[0] = 1;
        }
        h5::Dataspace fileSpace(H5Dget_space(volume.id()));
        h5::Dataspace memSpace(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr));
        if (H5Sselect_hyperslab(fileSpace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
            H5Dread(volume.id(), memoryType.get(), memSpace.get(), fileSpace.get(), H5P_DEFAULT, halves.data()) < 0)
            throw IoError(volume.where() + ": reading slice " + std::to_string(z) + " failed" + h5::errorDetail());
        halvesToFloats(halves, stack.image(z).data());
    }
}

} // namespace

Hdf5Chunks createHdf5VolumeFile(const std::filesystem::path& temporary, const std::string& target, int width,
                                int height, int slices, const WriteOptions& options) {
    static_assert(std::endian::native == std::endian::little, "chunks are written as the encoder's native samples");
    const h5::Session session;
    h5::File file(H5Fcreate(temporary.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT));
    if (!file.valid()) throw IoError(target + ": cannot create " + temporary.string() + h5::errorDetail());
    const hsize_t dims[3] = {static_cast<hsize_t>(slices), static_cast<hsize_t>(height), static_cast<hsize_t>(width)};
    // HDF5 chunks hold less than 4 GiB: a larger slice (beyond 32768^2
    // float32) is split into bands of rows.
    Hdf5Chunks chunks;
    const hsize_t rowBytes = dims[2] * outputTypeBytes(options.type);
    chunks.bandRows = std::clamp<hsize_t>(0xffffffffull / rowBytes, 1, dims[1]);
    chunks.bandsPerSlice = (dims[1] + chunks.bandRows - 1) / chunks.bandRows;
    const hsize_t chunk[3] = {1, chunks.bandRows, dims[2]};
    h5::Dataspace space(H5Screate_simple(3, dims, nullptr));
    h5::PropertyList create(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_chunk(create.get(), 3, chunk);
    // Every chunk is allocated now, with no fill values: its bytes are
    // the samples written later.
    H5Pset_fill_time(create.get(), H5D_FILL_TIME_NEVER);
    H5Pset_alloc_time(create.get(), H5D_ALLOC_TIME_EARLY);
    const h5::Datatype fileType = storedType(options.type);
    h5::Dataset dataset(
        H5Dcreate2(file.get(), kVolume, fileType.get(), space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT));
    if (!dataset.valid()) throw IoError(target + ": cannot create dataset " + kVolume + h5::errorDetail());
    const std::string where = std::string(kVolume) + " in " + target;
    for (const auto& [key, value] : options.attributes) h5::writeStringAttribute(dataset.get(), key, value, where);
    h5::writeStringAttribute(dataset.get(), "output_type", outputTypeName(options.type), where);
    if (isQuantized(options.type)) {
        const Quantization q = quantizationFor(options.type, options.rangeMin, options.rangeMax);
        writeFloatAttribute(dataset.get(), "scale_factor", q.slope, where);
        writeFloatAttribute(dataset.get(), "add_offset", q.offset, where);
    }
    chunks.addresses = chunkAddresses(dataset.get(), dims, chunks, rowBytes, where);
    const bool datasetClosed = dataset.close();
    if (!datasetClosed || !file.close())
        throw IoError(target + ": cannot make room for the volume in " + temporary.string() + h5::errorDetail());
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(temporary, error);
    chunks.fileBytes = std::max<std::uint64_t>(chunks.fileBytes, error ? 0 : size);
    return chunks;
}

Hdf5Chunks findHdf5VolumeChunks(const std::filesystem::path& temporary, const std::string& target, int width,
                                int height, int slices, OutputType type) {
    const h5::Session session;
    const h5::File file = h5::openReadOnly(temporary);
    const h5::Array volume(file.get(), temporary, kVolume);
    const std::vector<hsize_t> expected{static_cast<hsize_t>(slices), static_cast<hsize_t>(height),
                                        static_cast<hsize_t>(width)};
    const h5::Datatype stored(H5Dget_type(volume.id()));
    if (volume.dims() != expected || H5Tequal(stored.get(), storedType(type).get()) <= 0)
        throw FormatError(target + ": the partial output " + temporary.string() + " holds " + volume.shapeText() +
                          " (or another type); expected " + std::to_string(slices) + " x " + std::to_string(height) +
                          " x " + std::to_string(width) + " " + outputTypeName(type));
    Hdf5Chunks chunks;
    const hsize_t rowBytes = static_cast<hsize_t>(width) * outputTypeBytes(type);
    h5::PropertyList create(H5Dget_create_plist(volume.id()));
    hsize_t chunk[3] = {0, 0, 0};
    if (H5Pget_layout(create.get()) != H5D_CHUNKED || H5Pget_chunk(create.get(), 3, chunk) != 3 || chunk[0] != 1 ||
        chunk[2] != static_cast<hsize_t>(width) || chunk[1] < 1)
        throw FormatError(target + ": the partial output " + temporary.string() + " is not chunked slice by slice");
    chunks.bandRows = chunk[1];
    chunks.bandsPerSlice = (static_cast<hsize_t>(height) + chunks.bandRows - 1) / chunks.bandRows;
    chunks.addresses = chunkAddresses(volume.id(), expected.data(), chunks, rowBytes, volume.where());
    std::error_code error;
    chunks.fileBytes = std::max<std::uint64_t>(chunks.fileBytes, std::filesystem::file_size(temporary, error));
    return chunks;
}

std::unique_ptr<VolumeWriter> openHdf5VolumePart(const std::filesystem::path& temporary, const std::string& target,
                                                 int width, int height, int slices, const Hdf5Chunks& chunks,
                                                 const WriteOptions& options, bool sameHost) {
    return std::make_unique<Hdf5PartWriter>(temporary, target, width, height, slices, chunks, options, sameHost);
}

VolumeFootprint hdf5Footprint(int width, int height, int slices, const WriteOptions& options) {
    const double rowBytes = static_cast<double>(width) * static_cast<double>(outputTypeBytes(options.type));
    // As createFile chunks it: one slice per chunk, or bands of rows under 4 GiB.
    const double bands = std::ceil(height / std::clamp(std::floor(4294967295.0 / rowBytes), 1.0, double(height)));
    double attributes = 0.0;
    for (const auto& [key, value] : options.attributes)
        attributes += kAttributeBytes + kAttributeTextFactor * static_cast<double>(key.size() + value.size());
    const double moreNodes = std::ceil(std::max(0.0, bands * slices - kChunksPerNode) / kChunksPerNode);
    return {1.0, rowBytes * height * slices + kFileBytes + attributes + kChunkNodeBytes * moreNodes};
}

std::unique_ptr<VolumeWriter> createHdf5VolumeWriter(const std::filesystem::path& target, int width, int height,
                                                     int slices, const WriteOptions& options) {
    return std::make_unique<Hdf5VolumeWriter>(target, width, height, slices, options);
}

ImageStack readHdf5Volume(const std::filesystem::path& path, std::size_t maxBytes) {
    const h5::Session session;
    const h5::File file = h5::openReadOnly(path);
    const h5::Array volume(file.get(), path, kVolume);
    volume.requireRank({2, 3}, "3D (slices, rows, columns) or 2D (rows, columns)");
    const bool half = isHalf(h5::Datatype(H5Dget_type(volume.id())).get());
    if (!half) (void)volume.pixelType(); // refuses types we cannot convert
    volume.requireStoredData();
    const auto& dims = volume.dims();
    double values = 1.0;
    for (hsize_t d : dims) values *= static_cast<double>(d);
    requireMemory(4.0 * values, path, "the volume " + volume.shapeText(), static_cast<double>(maxBytes));
    const bool is3d = dims.size() == 3;
    ImageStack stack(static_cast<int>(dims.back()), static_cast<int>(dims[dims.size() - 2]),
                     is3d ? static_cast<int>(dims[0]) : 1);
    if (half) readHalves(volume, stack);
    else if (is3d) volume.read({0, 0, 0}, {dims[0], dims[1], dims[2]}, stack.data);
    else volume.read({0, 0}, {dims[0], dims[1]}, stack.data);
    // CF packing: value = stored x scale_factor + add_offset.
    const auto scale = numberAttribute(volume, "scale_factor");
    const auto offset = numberAttribute(volume, "add_offset");
    if (scale || offset) restoreValues(stack.data, scale.value_or(1.0), offset.value_or(0.0));
    return stack;
}

} // namespace tomo::detail
