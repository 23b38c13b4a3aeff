#include "io/hdf5/direct_rows.h"

#include "tomo/error.h"
#include "tomo/worker_pool.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <unistd.h>

namespace tomo::h5 {

void readAt(int fd, void* destination, std::size_t bytes, std::uint64_t offset, const std::string& what) {
    auto* out = static_cast<std::byte*>(destination);
    std::size_t done = 0;
    while (done < bytes) {
        const ssize_t n = ::pread(fd, out + done, bytes - done, static_cast<off_t>(offset + done));
        if (n > 0) done += static_cast<std::size_t>(n);
        else if (n < 0 && errno == EINTR) continue;
        else
            throw IoError(what + ": reading projection rows failed: " +
                          (n == 0 ? std::string("the file ends before the data it declares") : std::strerror(errno)));
    }
}

namespace {

/// Bytes of one row of a 3D array of pixels stored in this machine's byte
/// order, with no storage outside the file; nothing otherwise.
std::optional<std::size_t> nativeRowBytes(const Array& array, hid_t create) {
    const auto& dims = array.dims();
    if (dims.size() != 3 || H5Pget_external_count(create) != 0) return std::nullopt;
    Datatype type(H5Dget_type(array.id()));
    const SampleType sample = array.pixelType();
    const hid_t native = sample == SampleType::UInt8    ? H5T_NATIVE_UINT8
                         : sample == SampleType::UInt16 ? H5T_NATIVE_UINT16
                         : sample == SampleType::Float32 ? H5T_NATIVE_FLOAT
                                                         : H5T_NATIVE_DOUBLE;
    if (!type.valid() || H5Tequal(type.get(), native) <= 0) return std::nullopt;
    return static_cast<std::size_t>(dims[2]) * sampleBytes(sample);
}

/// What to add to a chunk address that H5Dget_chunk_info_by_coord returns
/// to make it a file offset: the user block's size up to HDF5 1.14.3, 0 from
/// 1.14.4 on (HDFGroup/hdf5#4236 made chunk addresses absolute, as
/// H5Dget_offset's always were).
std::optional<std::uint64_t> chunkAddressBase(hid_t file) {
#if H5_VERSION_GE(1, 14, 4)
    (void)file;
    return 0;
#else
    PropertyList fileCreate(H5Fget_create_plist(file));
    hsize_t bytes = 0;
    if (!fileCreate.valid() || H5Pget_userblock(fileCreate.get(), &bytes) < 0) return std::nullopt;
    return bytes;
#endif
}

} // namespace

std::optional<DirectRows> DirectRows::of(hid_t file, const Array& array) {
    PropertyList create(H5Dget_create_plist(array.id()));
    if (!create.valid()) return std::nullopt;
    const auto rowBytes = nativeRowBytes(array, create.get());
    const auto base = chunkAddressBase(file);
    if (!rowBytes || !base) return std::nullopt;
    const auto& dims = array.dims();

    DirectRows d;
    d.m_dataset = array.id();
    d.m_rows = dims[1];
    d.m_rowBytes = *rowBytes;
    d.m_base = *base;
    switch (H5Pget_layout(create.get())) {
    case H5D_CONTIGUOUS: {
        // A file offset already: H5Dget_offset counts the user block.
        const haddr_t address = H5Dget_offset(array.id());
        if (address == HADDR_UNDEF) return std::nullopt; // never written: fill values
        d.m_address = address;
        break;
    }
    case H5D_CHUNKED: {
        hsize_t chunk[3] = {};
        if (H5Pget_nfilters(create.get()) != 0 || H5Pget_chunk(create.get(), 3, chunk) != 3 || chunk[2] != dims[2])
            return std::nullopt;
        d.m_chunked = true;
        d.m_chunkFrames = chunk[0];
        d.m_chunkRows = chunk[1];
        break;
    }
    default: return std::nullopt;
    }
    return d;
}

bool DirectRows::pieces(hsize_t frame, hsize_t firstRow, hsize_t count, std::vector<Piece>& out) {
    if (!m_chunked) {
        out.push_back({m_address + (frame * m_rows + firstRow) * m_rowBytes,
                       static_cast<std::size_t>(count) * m_rowBytes});
        return true;
    }
    const hsize_t chunksPerFrame = (m_rows + m_chunkRows - 1) / m_chunkRows;
    for (hsize_t row = firstRow; row < firstRow + count;) {
        const hsize_t chunkRow = row / m_chunkRows;
        const std::uint64_t key = frame / m_chunkFrames * chunksPerFrame + chunkRow;
        auto it = m_chunkAddress.find(key);
        if (it == m_chunkAddress.end()) {
            const hsize_t origin[3] = {frame / m_chunkFrames * m_chunkFrames, chunkRow * m_chunkRows, 0};
            unsigned filters = 0;
            haddr_t address = HADDR_UNDEF;
            hsize_t size = 0;
            if (H5Dget_chunk_info_by_coord(m_dataset, origin, &filters, &address, &size) < 0 || address == HADDR_UNDEF)
                return false;
            it = m_chunkAddress.emplace(key, address).first;
        }
        const hsize_t rows = std::min(firstRow + count, (chunkRow + 1) * m_chunkRows) - row;
        const hsize_t rowInChunk = (frame % m_chunkFrames) * m_chunkRows + row % m_chunkRows;
        out.push_back({m_base + it->second + rowInChunk * m_rowBytes, static_cast<std::size_t>(rows) * m_rowBytes});
        row += rows;
    }
    return true;
}

/// One chunk's zlib stream, stopped after `nextRow` rows. zlib's state
/// points back at the z_stream, so it never moves (held by unique_ptr).
struct DeflatedRows::Stream {
    z_stream z{};
    bool open = false;
    bool ended = false; ///< zlib found the end of the stream (and checked it)
    hsize_t nextRow = 0;

    Stream() = default;
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream() { close(); }

    /// At the chunk's first byte; false when zlib has no memory.
    bool restart() {
        nextRow = 0;
        ended = false;
        if (open) return inflateReset(&z) == Z_OK;
        z = z_stream{};
        open = inflateInit(&z) == Z_OK;
        return open;
    }
    void close() {
        if (open) inflateEnd(&z);
        open = false;
    }
};

DeflatedRows::DeflatedRows(DeflatedRows&&) noexcept = default;
DeflatedRows& DeflatedRows::operator=(DeflatedRows&&) noexcept = default;
DeflatedRows::~DeflatedRows() = default;

std::optional<DeflatedRows> DeflatedRows::of(hid_t file, const Array& array) {
    PropertyList create(H5Dget_create_plist(array.id()));
    if (!create.valid() || H5Pget_layout(create.get()) != H5D_CHUNKED || H5Pget_nfilters(create.get()) != 1)
        return std::nullopt;
    unsigned flags = 0;
    std::size_t values = 0;
    if (H5Pget_filter2(create.get(), 0, &flags, &values, nullptr, 0, nullptr, nullptr) != H5Z_FILTER_DEFLATE)
        return std::nullopt;
    const auto rowBytes = nativeRowBytes(array, create.get());
    const auto base = chunkAddressBase(file);
    const auto& dims = array.dims();
    hsize_t chunk[3] = {};
    if (!rowBytes || !base || H5Pget_chunk(create.get(), 3, chunk) != 3 || chunk[0] != 1 || chunk[1] == 0 ||
        chunk[2] != dims[2])
        return std::nullopt;
    DeflatedRows d;
    d.m_dataset = array.id();
    d.m_where = array.where();
    d.m_base = *base;
    d.m_rowBytes = *rowBytes;
    d.m_rows = dims[1];
    d.m_chunkRows = chunk[1];
    d.m_chunksPerFrame = (dims[1] + chunk[1] - 1) / chunk[1];
    d.m_keepStreams = dims[0] * d.m_chunksPerFrame <= kMaxKeptStreams;
    return d;
}

bool DeflatedRows::locate(std::span<const hsize_t> frames, hsize_t firstRow, hsize_t count) {
    for (const hsize_t frame : frames)
        for (hsize_t c = firstRow / m_chunkRows; c * m_chunkRows < firstRow + count; ++c) {
            Chunk& chunk = m_chunks[frame * m_chunksPerFrame + c];
            if (chunk.located) continue;
            const hsize_t origin[3] = {frame, c * m_chunkRows, 0};
            unsigned skipped = 0;
            haddr_t address = HADDR_UNDEF;
            hsize_t size = 0;
            if (H5Dget_chunk_info_by_coord(m_dataset, origin, &skipped, &address, &size) < 0 || address == HADDR_UNDEF)
                return false;
            chunk.address = m_base + address;
            chunk.size = size;
            chunk.stored = (skipped & 1u) != 0; // bit i: filter i was skipped
            chunk.located = true;
        }
    return true;
}

void DeflatedRows::read(int fd, std::span<const hsize_t> frames, hsize_t firstRow, hsize_t count,
                        std::span<std::byte> out, WorkerPool& pool) {
    const hsize_t firstChunk = firstRow / m_chunkRows, endChunk = (firstRow + count - 1) / m_chunkRows + 1;
    const auto chunksPerFrame = static_cast<int>(endChunk - firstChunk);
    // Per thread: compressed input read ahead, and room for rows skipped.
    constexpr std::size_t kInputBytes = std::size_t{256} << 10;
    std::vector<std::vector<std::byte>> inputs(static_cast<std::size_t>(pool.threads()));
    std::vector<std::vector<std::byte>> scratch(static_cast<std::size_t>(pool.threads()));
    pool.parallelFor(static_cast<int>(frames.size()) * chunksPerFrame, [&](int task, int thread) {
        const auto f = static_cast<std::size_t>(task / chunksPerFrame);
        const hsize_t c = firstChunk + static_cast<hsize_t>(task % chunksPerFrame);
        const hsize_t first = std::max(firstRow, c * m_chunkRows), end = std::min(firstRow + count, (c + 1) * m_chunkRows);
        std::byte* destination = out.data() + (f * count + (first - firstRow)) * m_rowBytes;
        // Located before: find() only, safe beside the other threads' finds.
        Chunk& chunk = m_chunks.find(frames[f] * m_chunksPerFrame + c)->second;
        if (chunk.stored) {
            readAt(fd, destination, (end - first) * m_rowBytes, chunk.address + (first - c * m_chunkRows) * m_rowBytes,
                   m_where);
            return;
        }
        auto& input = inputs[static_cast<std::size_t>(thread)];
        auto& rest = scratch[static_cast<std::size_t>(thread)];
        if (input.empty()) input.resize(kInputBytes);
        const bool toTheEnd = end == std::min(m_rows, (c + 1) * m_chunkRows);
        inflateRows(fd, chunk, frames[f], first - c * m_chunkRows, end - c * m_chunkRows, toTheEnd, destination, input,
                    rest);
        // A chunk read to its last row, or streams not kept: memory back.
        if (!m_keepStreams || toTheEnd) chunk.stream.reset();
    });
}

void DeflatedRows::inflateRows(int fd, Chunk& chunk, hsize_t frame, hsize_t first, hsize_t end, bool toTheEnd,
                               std::byte* out, std::vector<std::byte>& input, std::vector<std::byte>& scratch) {
    if (!chunk.stream) chunk.stream = std::make_unique<Stream>();
    Stream& s = *chunk.stream;
    // A stream already past `first` starts over: bands read out of order.
    if ((!s.open || s.nextRow > first) && !s.restart())
        throw OutOfMemory(m_where + ": no memory to inflate a chunk");
    const auto fail = [&](const std::string& why) {
        s.close();
        throw FormatError(m_where + ": the chunk of frame " + std::to_string(frame) + " at byte " +
                          std::to_string(chunk.address) + " (" + std::to_string(chunk.size) + " bytes) " + why +
                          ": the file is corrupt");
    };
    // Fills `bytes` of output at `to`, reading compressed bytes as needed
    // from where the stream has consumed them; `bytes` 0: to the stream's
    // end, which must come first.
    const auto inflateInto = [&](std::byte* to, std::size_t bytes) {
        const bool toStreamEnd = bytes == 0;
        if (toStreamEnd && s.ended) return;
        std::byte beyond{};
        s.z.next_out = reinterpret_cast<Bytef*>(toStreamEnd ? &beyond : to);
        s.z.avail_out = toStreamEnd ? 1 : static_cast<uInt>(bytes);
        while (s.z.avail_out > 0) {
            if (s.z.avail_in == 0) {
                const std::uint64_t consumed = s.z.total_in;
                if (consumed >= chunk.size) fail("inflates to fewer bytes than its rows");
                const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(input.size(), chunk.size - consumed));
                readAt(fd, input.data(), n, chunk.address + consumed, m_where);
                s.z.next_in = reinterpret_cast<Bytef*>(input.data());
                s.z.avail_in = static_cast<uInt>(n);
            }
            const int status = inflate(&s.z, Z_NO_FLUSH);
            if (status == Z_STREAM_END) {
                s.ended = true;
                if (toStreamEnd && s.z.avail_out == 1) return;
                if (s.z.avail_out > 0) fail("inflates to fewer bytes than its rows");
            } else if (status != Z_OK)
                fail(std::string("does not inflate (zlib: ") + (s.z.msg ? s.z.msg : std::to_string(status).c_str()) + ")");
        }
        if (toStreamEnd) fail("inflates to more bytes than its rows");
    };
    // Rows before `first` not yet inflated are inflated into scratch.
    constexpr std::size_t kScratchBytes = std::size_t{1} << 20;
    while (s.nextRow < first) {
        const hsize_t rows = std::clamp<hsize_t>(kScratchBytes / m_rowBytes, 1, first - s.nextRow);
        scratch.resize(std::max(scratch.size(), static_cast<std::size_t>(rows) * m_rowBytes));
        inflateInto(scratch.data(), static_cast<std::size_t>(rows) * m_rowBytes);
        s.nextRow += rows;
    }
    inflateInto(out, static_cast<std::size_t>(end - first) * m_rowBytes);
    s.nextRow = end;
    if (toTheEnd) {
        // The rows past the dataset's edge, then the stream's end, where
        // zlib checks the chunk's checksum: a chunk read whole is verified
        // as HDF5 would. (A band that stops earlier cannot be.)
        if (end < m_chunkRows) {
            scratch.resize(std::max(scratch.size(), static_cast<std::size_t>(m_chunkRows - end) * m_rowBytes));
            inflateInto(scratch.data(), static_cast<std::size_t>(m_chunkRows - end) * m_rowBytes);
        }
        inflateInto(nullptr, 0);
    }
    // The input read ahead belongs to this call's buffer: the next call
    // reads again from total_in.
    s.z.avail_in = 0;
}

} // namespace tomo::h5
