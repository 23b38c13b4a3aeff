#include "io/hdf5/direct_rows.h"

namespace tomo::h5 {

std::optional<DirectRows> DirectRows::of(hid_t file, const Array& array) {
    const auto& dims = array.dims();
    if (dims.size() != 3) return std::nullopt;
    Datatype type(H5Dget_type(array.id()));
    const SampleType sample = array.pixelType();
    const hid_t native = sample == SampleType::UInt8    ? H5T_NATIVE_UINT8
                         : sample == SampleType::UInt16 ? H5T_NATIVE_UINT16
                         : sample == SampleType::Float32 ? H5T_NATIVE_FLOAT
                                                         : H5T_NATIVE_DOUBLE;
    if (!type.valid() || H5Tequal(type.get(), native) <= 0) return std::nullopt;

    DirectRows d;
    d.m_dataset = array.id();
    d.m_rows = dims[1];
    d.m_rowBytes = static_cast<std::size_t>(dims[2]) * sampleBytes(sample);
    PropertyList create(H5Dget_create_plist(array.id()));
    if (!create.valid() || H5Pget_external_count(create.get()) != 0) return std::nullopt;
    switch (H5Pget_layout(create.get())) {
    case H5D_CONTIGUOUS: {
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
    PropertyList fileCreate(H5Fget_create_plist(file));
    hsize_t userBlock = 0;
    if (!fileCreate.valid() || H5Pget_userblock(fileCreate.get(), &userBlock) < 0) return std::nullopt;
    d.m_base = userBlock;
    return d;
}

bool DirectRows::pieces(hsize_t frame, hsize_t firstRow, hsize_t count, std::vector<Piece>& out) {
    if (!m_chunked) {
        out.push_back({m_base + m_address + (frame * m_rows + firstRow) * m_rowBytes,
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

} // namespace tomo::h5
