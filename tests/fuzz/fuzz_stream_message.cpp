// Fuzz target: any bytes as a live stream's message (tomo/live.h), what a
// network listener receives: the first two bytes give the header's length
// (little-endian), the header follows, the rest is the frame. What parses
// goes into a frame store twice (two projections) and is read back through
// its snapshot, as the preview reads it.
#include "tomo/error.h"
#include "tomo/live.h"

#include <cstdlib>
#include <span>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const std::size_t headerBytes = std::min<std::size_t>(size - 2, data[0] | (std::size_t{data[1]} << 8));
    const auto bytes = std::as_bytes(std::span(data + 2, size - 2));
    tomo::FrameLimits limits;
    limits.maxRows = 64;
    limits.maxColumns = 64;
    tomo::StreamDefaults defaults;
    defaults.projectionsPerScan = 90;
    try {
        tomo::Frame frame;
        if (!tomo::parseFrameMessage(bytes.first(headerBytes), tomo::FramePixels::copyOf(bytes.subspan(headerBytes)),
                                     limits, defaults, frame))
            return 0;
        const std::size_t expected = static_cast<std::size_t>(frame.rows) * frame.columns * tomo::sampleBytes(frame.type);
        if (frame.values.size() != expected) std::abort(); // the parser checked the size
        tomo::FrameStore store;
        frame.kind = tomo::FrameKind::Projection;
        tomo::Frame second = frame;
        second.index = frame.index + 1;
        store.add(std::move(frame));
        store.add(std::move(second));
        const auto snapshot = store.snapshot("fuzz");
        const auto& info = snapshot->info();
        std::vector<float> sinograms(static_cast<std::size_t>(info.rows) * info.projections * info.columns);
        snapshot->readSinograms(0, info.rows, sinograms);
    } catch (const tomo::Error&) {
    }
    return 0;
}
