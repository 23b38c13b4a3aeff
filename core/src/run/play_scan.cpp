// Playing a recorded scan into a frame sink at a chosen rate (tomo/live.h):
// the sender of tomo-stream and tomo-bench --stream.
#include "io/readers.h"
#include "tomo/error.h"
#include "tomo/live.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <thread>
#include <type_traits>

namespace tomo {

namespace {

/// A mean image (float) in the stored sample type.
std::vector<std::byte> toStored(const std::vector<float>& image, SampleType type) {
    std::vector<std::byte> out(image.size() * sampleBytes(type));
    const auto store = [&]<typename T>(T) {
        for (std::size_t i = 0; i < image.size(); ++i) {
            T v;
            if constexpr (std::is_integral_v<T>)
                v = static_cast<T>(std::clamp(std::lround(image[i]), 0L, static_cast<long>(std::numeric_limits<T>::max())));
            else v = static_cast<T>(image[i]);
            std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
        }
    };
    switch (type) {
    case SampleType::UInt8: store(std::uint8_t{}); break;
    case SampleType::UInt16: store(std::uint16_t{}); break;
    case SampleType::Float32: store(float{}); break;
    case SampleType::Float64: store(double{}); break;
    }
    return out;
}

} // namespace

long long playScan(DatasetReader& reader, FrameSink& sink, const PlayOptions& options) {
    const DatasetInfo& info = reader.info();
    const std::size_t image = static_cast<std::size_t>(info.rows) * static_cast<std::size_t>(info.columns);
    const std::size_t frameBytes = image * sampleBytes(info.sampleType);
    detail::requireMemory(static_cast<double>(frameBytes) * info.projections, info.path, "the whole scan");
    auto all = std::make_shared<std::vector<std::byte>>(frameBytes * static_cast<std::size_t>(info.projections));
    reader.readRawRows(0, info.rows, *all); // [projection][row][column], all rows

    Frame frame;
    frame.rows = info.rows;
    frame.columns = info.columns;
    frame.type = info.sampleType;
    frame.scanId = options.scanId.empty() ? info.path.filename().string() : options.scanId;
    const auto period = options.framesPerSecond > 0.0
                            ? std::chrono::duration<double>(1.0 / options.framesPerSecond)
                            : std::chrono::duration<double>(0.0);
    const auto start = std::chrono::steady_clock::now();
    long long sent = 0;
    const auto emit = [&] {
        if (period.count() > 0.0)
            std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                      period * static_cast<double>(sent)));
        sink.send(frame);
        ++sent;
    };

    std::vector<float> mean(image);
    for (const FrameKind kind : {FrameKind::Dark, FrameKind::Flat}) {
        const bool has = kind == FrameKind::Dark ? reader.readMeanDark(0, info.rows, mean)
                                                 : reader.readMeanFlat(0, info.rows, mean);
        if (!has) continue;
        frame.kind = kind;
        frame.index = 0;
        frame.values = toStored(mean, info.sampleType);
        emit();
    }
    frame.kind = FrameKind::Projection;
    for (int p = 0; p < info.projections; ++p) {
        if (p == options.stopAfter || (options.cancelled && options.cancelled())) return sent;
        frame.index = p;
        frame.angleDegrees = info.angles[static_cast<std::size_t>(p)] * (180.0 / std::numbers::pi);
        // A part of the scan in memory, shared (not copied) with the sink.
        frame.values = FramePixels(all, std::span(*all).subspan(static_cast<std::size_t>(p) * frameBytes, frameBytes));
        emit();
    }
    sink.finish(frame.scanId);
    return sent;
}

} // namespace tomo
