// Fuzz target: any bytes as an HDF5 dataset (DXchange, NXtomo, sinogram,
// MATLAB v7.3): detection, opening and reading rows, flats, darks, groups.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto path = tomo::fuzz::writeInput({data, size}, "input.h5");
    tomo::OpenOptions options;
    try {
        // MATLAB files need a variable: the name the seeds use.
        if (tomo::detectFormat(path) == tomo::DatasetFormat::Matlab) options.variable = "data,angles";
    } catch (const tomo::Error&) {
    }
    tomo::fuzz::openAndRead(path, options);
    return 0;
}
