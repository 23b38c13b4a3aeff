// Fuzz target: any bytes as a volume given to --reference (HDF5 /volume or
// TIFF pages), read whole as tomo-recon does.
#include "fuzz_support.h"

#include "tomo/volume_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // A compressed input of 1 MB may rightly declare a volume of gigabytes
    // (deflate reaches ~1000:1); reading it would only test the machine's
    // memory, so the read is capped as on a small machine.
    constexpr std::size_t kMaxVolumeBytes = std::size_t{256} << 20;
    try {
        tomo::readVolume(tomo::fuzz::writeInput({data, size}, "volume"), kMaxVolumeBytes);
    } catch (const tomo::Error&) {
    }
    return 0;
}
