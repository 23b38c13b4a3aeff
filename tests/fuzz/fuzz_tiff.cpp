// Fuzz target: any bytes as a TIFF: single-page sinogram or multi-page stack,
// strips or tiles, any compression libtiff decodes.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    tomo::fuzz::openAndRead(tomo::fuzz::writeInput({data, size}, "input.tif"));
    return 0;
}
