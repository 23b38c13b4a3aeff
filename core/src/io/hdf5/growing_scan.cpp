// A DXchange or NXtomo scan written frame by frame for SWMR readers, and the test of
// whether a file's writer has closed it (tomo/live.h).
#include "io/hdf5/h5_util.h"
#include "tomo/error.h"
#include "tomo/live.h"
#include "tomo/worker_pool.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

/// Copies frames into their chunks of the file through a shared mapping,
/// on several threads. One file takes write() at ~2.4 GB/s however many
/// threads write (the file's lock; a file in memory, tmpfs, on a 16-core
/// host), its mapped pages at ~4-5 GB/s from 8 threads. Each thread
/// populates its part's pages first (MADV_POPULATE_WRITE), which reports a
/// full disk as an error where a copy into a page without room would die of
/// SIGBUS. Where that or a shared mapping is refused (Linux before 5.14,
/// some network file systems), usable() is false and frames go through
/// H5Dwrite.
class MappedFrameCopier {
public:
    /// Threads that copy the frames: TOMO_RECORD_COPY_THREADS (1 to 64) when
    /// set, 0 for H5Dwrite; else 8 with at least 8 hardware threads (into
    /// tmpfs on 16 cores: 2.65-3.03 GB/s against 2.07-2.33 through
    /// H5Dwrite), 0 below (on 2 cores the copies competed with the receiver:
    /// 0.47-1.32 GB/s against 1.11-1.33).
    static int threads() {
        if (const char* env = std::getenv("TOMO_RECORD_COPY_THREADS"); env && *env) {
            const int n = std::atoi(env);
            return std::clamp(n, 0, 64);
        }
        return std::thread::hardware_concurrency() >= 8 ? 8 : 0;
    }

    MappedFrameCopier(const std::filesystem::path& path, int threads) : m_path(path), m_pool(threads) {
        if constexpr (std::endian::native != std::endian::little) return; // the file's samples are little-endian
        m_fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (m_fd < 0) return;
        const long page = ::sysconf(_SC_PAGESIZE);
        void* map = ::mmap(nullptr, static_cast<std::size_t>(page), PROT_READ | PROT_WRITE, MAP_SHARED, m_fd, 0);
        if (map == MAP_FAILED) return;
        m_usable = ::madvise(map, static_cast<std::size_t>(page), MADV_POPULATE_WRITE) == 0;
        ::munmap(map, static_cast<std::size_t>(page));
    }
    ~MappedFrameCopier() {
        if (m_fd >= 0) ::close(m_fd);
    }
    MappedFrameCopier(const MappedFrameCopier&) = delete;
    MappedFrameCopier& operator=(const MappedFrameCopier&) = delete;

    bool usable() const { return m_usable; }

    /// `bytes` to file offset `offset`. Throws IoError naming the file.
    void copy(std::uint64_t offset, std::span<const std::byte> bytes) {
        const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
        const std::uint64_t base = offset / page * page, end = offset + bytes.size();
        struct stat status {};
        if (::fstat(m_fd, &status) != 0) fail(errno);
        // The library placed the chunk (early allocation, no fill) but wrote nothing there.
        if (static_cast<std::uint64_t>(status.st_size) < end && ::ftruncate(m_fd, static_cast<off_t>(end)) != 0)
            fail(errno);
        const auto length = static_cast<std::size_t>(end - base);
        void* map = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, m_fd, static_cast<off_t>(base));
        if (map == MAP_FAILED) fail(errno);
        auto* target = static_cast<std::byte*>(map);
        // Parts of whole pages of the mapping, at least 1 MiB each.
        const std::size_t pages = (length + page - 1) / page;
        const std::size_t parts = std::clamp<std::size_t>(length >> 20, 1, static_cast<std::size_t>(m_pool.threads()));
        std::atomic<int> error{0};
        m_pool.parallelFor(static_cast<int>(parts), [&](int part, int) {
            const std::size_t from = pages * part / parts * page, to = std::min<std::size_t>(pages * (part + 1) / parts * page, length);
            if (::madvise(target + from, to - from, MADV_POPULATE_WRITE) != 0) {
                error = errno == EFAULT ? ENOSPC : errno; // EFAULT: no room for a page
                return;
            }
            // The frame's bytes in this part (the first page starts before it).
            const std::size_t skip = static_cast<std::size_t>(offset - base);
            const std::size_t a = std::max(from, skip), b = std::min(to, length);
            if (b > a) std::memcpy(target + a, bytes.data() + (a - skip), b - a);
        });
        ::munmap(map, length);
        if (error != 0) fail(error);
    }

private:
    [[noreturn]] void fail(int code) const {
        throw IoError(m_path.string() + ": cannot write a frame into the file: " + std::strerror(code));
    }

    std::filesystem::path m_path;
    WorkerPool m_pool;
    int m_fd = -1;
    bool m_usable = false;
};

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
        if (const int threads = MappedFrameCopier::threads(); threads > 0 && H5Fflush(m_file.get(), H5F_SCOPE_LOCAL) >= 0) {
            m_copier = std::make_unique<MappedFrameCopier>(path, threads);
            if (!m_copier->usable()) m_copier.reset();
        }
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
        if (m_copier) {
            // Each frame's chunk placed as the stack grows, never filled: the copier writes it.
            H5Pset_alloc_time(create.get(), H5D_ALLOC_TIME_EARLY);
            H5Pset_fill_time(create.get(), H5D_FILL_TIME_NEVER);
        }
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
        if (m_copier && !image.empty()) {
            unsigned filters = 0;
            haddr_t address = HADDR_UNDEF;
            hsize_t bytes = 0;
            const std::size_t frameBytes = static_cast<std::size_t>(image[0] * image[1]) * sampleBytes(m_type);
            if (H5Dget_chunk_info_by_coord(dataset.get(), start.data(), &filters, &address, &bytes) < 0 ||
                address == HADDR_UNDEF || bytes != frameBytes)
                fail(std::string("the chunk of frame ") + std::to_string(count) + " of " + name + " was not placed");
            m_copier->copy(address, std::span(static_cast<const std::byte*>(values), frameBytes));
            if (H5Dflush(dataset.get()) < 0) fail(std::string("cannot append to ") + name);
            ++count;
            return;
        }
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
    std::unique_ptr<MappedFrameCopier> m_copier; ///< null: frames through H5Dwrite
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
