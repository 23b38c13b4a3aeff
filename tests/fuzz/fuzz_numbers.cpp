// Fuzz target: angles and axis-offsets text files (one number per line,
// '#' comments), in degrees and in radians, with and without a count.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto path = tomo::fuzz::writeInput({data, size}, "numbers.txt");
    for (const auto units : {tomo::AngleUnits::Degrees, tomo::AngleUnits::Radians}) {
        try {
            tomo::readAnglesFile(path, units);
        } catch (const tomo::Error&) {
        }
    }
    for (const int count : {-1, 3}) {
        try {
            tomo::readAxisOffsetsFile(path, count, 512.0);
        } catch (const tomo::Error&) {
        }
    }
    return 0;
}
