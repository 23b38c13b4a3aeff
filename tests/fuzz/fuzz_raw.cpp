// Fuzz target: a raw file and its layout. The first 24 bytes give the
// layout (projections, rows, columns as int32, header bytes as uint64,
// sample type and byte order as one byte each, 2 spare), the rest is the file.
#include "fuzz_support.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    constexpr std::size_t kLayoutBytes = 24;
    if (size < kLayoutBytes) return 0;
    std::int32_t shape[3];
    std::uint64_t header = 0;
    std::memcpy(shape, data, sizeof shape);
    std::memcpy(&header, data + 12, sizeof header);
    constexpr tomo::SampleType kTypes[] = {tomo::SampleType::UInt8, tomo::SampleType::UInt16,
                                          tomo::SampleType::Float32, tomo::SampleType::Float64};
    tomo::OpenOptions options;
    options.raw = tomo::RawLayout{shape[0], shape[1], shape[2], kTypes[data[20] % 4], header, (data[21] & 1) != 0};
    options.logCorrected = (data[21] & 2) != 0;
    tomo::fuzz::openAndRead(tomo::fuzz::writeInput({data + kLayoutBytes, size - kLayoutBytes}, "input.raw"), options);
    return 0;
}
