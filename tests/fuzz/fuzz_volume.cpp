// Fuzz target: any bytes as a volume given to --reference (HDF5 /volume or
// TIFF pages), read whole as tomo-recon does.
#include "fuzz_support.h"

#include "tomo/volume_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        tomo::readVolume(tomo::fuzz::writeInput({data, size}, "volume"));
    } catch (const tomo::Error&) {
    }
    return 0;
}
