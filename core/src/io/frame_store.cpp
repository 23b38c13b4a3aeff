// The frames of a live scan in memory (tomo/live.h) and the DatasetReader
// over a snapshot of them: the preview session and the conveyor read it as
// any dataset. Frames are shared, never copied, between the store and its
// snapshots. And what a display that skips to the newest snapshot skipped.
#include "io/readers.h"
#include "tomo/error.h"
#include "tomo/live.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

namespace tomo {

namespace {

/// A frozen set of frames of one scan.
class FrameSnapshotReader final : public DatasetReader {
public:
    FrameSnapshotReader(const std::filesystem::path& name, SampleType type, int rows, int columns,
                        std::vector<FramePixels> projections, std::vector<double> angles, std::vector<FramePixels> flats,
                        std::vector<FramePixels> darks)
        : m_projections(std::move(projections)), m_flats(std::move(flats)), m_darks(std::move(darks)) {
        m_info.path = name;
        m_info.format = DatasetFormat::Stream;
        m_info.sampleType = type;
        m_info.rows = rows;
        m_info.columns = columns;
        m_info.projections = static_cast<int>(m_projections.size());
        m_info.flats = static_cast<int>(m_flats.size());
        m_info.darks = static_cast<int>(m_darks.size());
        if (!m_flats.empty()) m_info.flatPositions = {-1.0};
        m_info.angles = std::move(angles);
        detail::finishInfo(m_info, OpenOptions{});
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        detail::checkRowRequest(m_info, firstRow, rowCount, out.size(),
                                static_cast<std::size_t>(m_info.projections) * static_cast<std::size_t>(m_info.columns));
        std::vector<std::byte> stored(out.size() * sampleBytes(m_info.sampleType));
        readRawRows(firstRow, rowCount, stored);
        detail::storedImagesToSinograms(stored, m_info.sampleType, m_info.projections, rowCount, m_info.columns, out);
    }

    void readRawRows(int firstRow, int rowCount, std::span<std::byte> out) override {
        detail::checkRawRowRequest(m_info, firstRow, rowCount, out.size());
        const std::size_t rowBytes = static_cast<std::size_t>(m_info.columns) * sampleBytes(m_info.sampleType);
        const std::size_t bytes = rowBytes * static_cast<std::size_t>(rowCount);
        for (std::size_t a = 0; a < m_projections.size(); ++a)
            std::copy_n(m_projections[a].data() + static_cast<std::size_t>(firstRow) * rowBytes, bytes,
                        out.data() + a * bytes);
    }

    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        return mean(m_flats, firstRow, rowCount, out);
    }
    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        return mean(m_darks, firstRow, rowCount, out);
    }

private:
    /// The mean of `frames` over the rows; false without frames.
    bool mean(const std::vector<FramePixels>& frames, int firstRow, int rowCount, std::span<float> out) const {
        detail::checkRowRequest(m_info, firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.columns));
        if (frames.empty()) return false;
        const std::size_t rowBytes = static_cast<std::size_t>(m_info.columns) * sampleBytes(m_info.sampleType);
        std::vector<float> images(out.size() * frames.size());
        for (std::size_t i = 0; i < frames.size(); ++i)
            detail::storedImagesToSinograms(
                std::span(frames[i].data() + static_cast<std::size_t>(firstRow) * rowBytes,
                          rowBytes * static_cast<std::size_t>(rowCount)),
                m_info.sampleType, 1, rowCount, m_info.columns,
                std::span(images).subspan(i * out.size(), out.size()));
        detail::meanOfImages(images, static_cast<int>(frames.size()), out);
        return true;
    }

    std::vector<FramePixels> m_projections, m_flats, m_darks;
};

} // namespace

struct FrameStore::Impl {
    std::string scanId;
    bool empty = true;
    int rows = 0, columns = 0;
    SampleType type = SampleType::UInt16;
    std::map<long long, std::pair<FramePixels, double>> projections; ///< by index: pixels, angle (degrees)
    std::vector<FramePixels> flats, darks;
};

void FrameStore::replay(FrameSink& sink) const {
    const Impl& s = *m_impl;
    if (s.empty) return;
    Frame f;
    f.rows = s.rows;
    f.columns = s.columns;
    f.type = s.type;
    f.scanId = s.scanId;
    const auto send = [&](FrameKind kind, long long index, double angle, const FramePixels& pixels) {
        f.kind = kind;
        f.index = index;
        f.angleDegrees = angle;
        f.values = pixels; // shared, not copied
        sink.send(f);
    };
    for (std::size_t i = 0; i < s.darks.size(); ++i) send(FrameKind::Dark, static_cast<long long>(i), 0.0, s.darks[i]);
    for (std::size_t i = 0; i < s.flats.size(); ++i) send(FrameKind::Flat, static_cast<long long>(i), 0.0, s.flats[i]);
    for (const auto& [index, frame] : s.projections) send(FrameKind::Projection, index, frame.second, frame.first);
}

FrameStore::FrameStore() : m_impl(std::make_unique<Impl>()) {}
FrameStore::~FrameStore() = default;
FrameStore::FrameStore(FrameStore&&) noexcept = default;
FrameStore& FrameStore::operator=(FrameStore&&) noexcept = default;

bool FrameStore::add(Frame frame) {
    check(frame);
    Impl& s = *m_impl;
    const bool newScan = !s.empty && frame.scanId != s.scanId;
    if (newScan || s.empty) {
        *m_impl = Impl{};
        s.scanId = frame.scanId;
        s.rows = frame.rows;
        s.columns = frame.columns;
        s.type = frame.type;
        s.empty = false;
    }
    FramePixels pixels = std::move(frame.values);
    switch (frame.kind) {
    case FrameKind::Projection: s.projections.emplace(frame.index, std::pair{std::move(pixels), frame.angleDegrees}); break;
    case FrameKind::Flat: s.flats.push_back(std::move(pixels)); break;
    case FrameKind::Dark: s.darks.push_back(std::move(pixels)); break;
    }
    return newScan;
}

void FrameStore::check(const Frame& frame) const {
    const Impl& s = *m_impl;
    const bool newScan = !s.empty && frame.scanId != s.scanId;
    const std::string what = std::string(frameKindName(frame.kind)) + " " + std::to_string(frame.index) +
                             " of scan '" + frame.scanId + "'";
    const std::size_t expected = static_cast<std::size_t>(std::max(frame.rows, 0)) *
                                 static_cast<std::size_t>(std::max(frame.columns, 0)) * sampleBytes(frame.type);
    if (frame.rows < 1 || frame.columns < 1 || frame.values.size() != expected)
        throw DataError(what + ": " + std::to_string(frame.values.size()) + " bytes for " + std::to_string(frame.rows) +
                        " x " + std::to_string(frame.columns) + " " + sampleTypeName(frame.type) + " samples");
    if (!s.empty && !newScan && (frame.rows != s.rows || frame.columns != s.columns || frame.type != s.type))
        throw DataError(what + " is " + std::to_string(frame.rows) + " x " + std::to_string(frame.columns) + " " +
                        sampleTypeName(frame.type) + "; the scan's frames are " + std::to_string(s.rows) + " x " +
                        std::to_string(s.columns) + " " + sampleTypeName(s.type));
    if (frame.kind == FrameKind::Projection && !newScan && s.projections.count(frame.index))
        throw DataError(what + " arrived twice");
    if (frame.kind == FrameKind::Projection && !std::isfinite(frame.angleDegrees))
        throw DataError(what + ": its angle is not finite");
}

int FrameStore::projections() const { return static_cast<int>(m_impl->projections.size()); }
int FrameStore::flats() const { return static_cast<int>(m_impl->flats.size()); }
int FrameStore::darks() const { return static_cast<int>(m_impl->darks.size()); }
const std::string& FrameStore::scanId() const { return m_impl->scanId; }

int DisplaySkips::shown(int scan, int projections) {
    const int before = scan == m_scan ? m_shown : 0;
    const int skipped = std::max(0, projections - before - 1);
    m_scan = scan;
    m_shown = projections;
    m_skipped += skipped;
    return skipped;
}

std::shared_ptr<DatasetReader> FrameStore::snapshot(const std::filesystem::path& name) const {
    const Impl& s = *m_impl;
    if (s.projections.size() < 2)
        throw DataError(name.string() + ": " + std::to_string(s.projections.size()) +
                        " projection(s) received so far; at least 2 are needed");
    std::vector<FramePixels> projections;
    std::vector<double> angles;
    projections.reserve(s.projections.size());
    angles.reserve(s.projections.size());
    for (const auto& [index, frame] : s.projections) {
        projections.push_back(frame.first);
        angles.push_back(frame.second * (std::numbers::pi / 180.0)); // as the file readers convert
    }
    return std::make_shared<FrameSnapshotReader>(name, s.type, s.rows, s.columns, std::move(projections),
                                                 std::move(angles), s.flats, s.darks);
}

} // namespace tomo
