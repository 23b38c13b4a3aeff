// Shared by the conveyor's tests (test_pipeline*.cpp): a phantom scan as raw
// counts with one flat and one dark level (so the flat/dark + log step runs),
// a writer that keeps the slices in memory, and the one-shot reference.
#pragma once

#include "tomo/phantom.h"
#include "tomo/pipeline.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"
#include "tomo/volume_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tomo::test {

constexpr float kFlat = 1000.0f;
constexpr float kDark = 50.0f;

/// Raw detector counts of a phantom scan with one flat and one dark level,
/// so the pipeline's flat/dark + log step is exercised.
class CountsReader final : public DatasetReader {
public:
    CountsReader(const ImageStack& lineIntegrals, std::vector<double> angles) : m_counts(lineIntegrals) {
        for (float& v : m_counts.data) v = kDark + (kFlat - kDark) * std::exp(-v);
        m_info.path = "phantom-counts";
        m_info.format = DatasetFormat::Raw;
        m_info.projections = lineIntegrals.height;
        m_info.rows = lineIntegrals.depth;
        m_info.columns = lineIntegrals.width;
        m_info.flats = 1;
        m_info.darks = 1;
        m_info.angles = std::move(angles);
    }

    /// Sets the count of one value (row, angle, column).
    void setCount(int row, int angle, int column, float value) {
        m_counts.data[(static_cast<std::size_t>(row) * m_info.projections + angle) * m_info.columns + column] = value;
    }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        if (readDelay.count() > 0) std::this_thread::sleep_for(readDelay);
        check(firstRow, rowCount, out.size(), m_counts.imageSize());
        auto src = m_counts.data.begin() + static_cast<std::ptrdiff_t>(firstRow * m_counts.imageSize());
        std::copy(src, src + static_cast<std::ptrdiff_t>(out.size()), out.begin());
        rowsRead += rowCount;
        std::lock_guard lock(callsMutex);
        calls.push_back({'r', firstRow, rowCount});
    }
    void prefetchRows(int firstRow, int rowCount) override {
        std::lock_guard lock(callsMutex);
        calls.push_back({'p', firstRow, rowCount});
    }
    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        check(firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.columns));
        std::fill(out.begin(), out.end(), kFlat);
        return true;
    }
    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        check(firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.columns));
        std::fill(out.begin(), out.end(), kDark);
        return true;
    }

    std::atomic<int> rowsRead{0};
    std::chrono::milliseconds readDelay{0};
    /// Reads ('r') and prefetch hints ('p') in order: kind, first row, rows.
    struct Call {
        char kind;
        int first;
        int count;
    };
    std::vector<Call> calls;
    std::mutex callsMutex;

private:
    void check(int firstRow, int rowCount, std::size_t size, std::size_t perRow) const {
        if (firstRow < 0 || rowCount < 1 || firstRow + rowCount > m_info.rows || size != perRow * rowCount)
            throw InvalidArgument("CountsReader: bad request");
    }

    ImageStack m_counts;
};

/// Keeps the slices in memory and records the calls (first, count), in order.
class MemoryWriter final : public VolumeWriter {
public:
    MemoryWriter(int width, int height, int slices) : volume(width, height, slices) {}

    void writeSlices(int first, int count, std::span<const float> data) override {
        if (writeTime.count() > 0) std::this_thread::sleep_for(writeTime);
        ASSERT_EQ(data.size(), volume.imageSize() * count);
        ASSERT_LE(first + count, volume.depth);
        std::copy(data.begin(), data.end(),
                  volume.data.begin() + static_cast<std::ptrdiff_t>(first * volume.imageSize()));
        writes.emplace_back(first, count);
    }
    void commit() override { committed = true; }

    ImageStack volume;
    std::vector<std::pair<int, int>> writes;
    bool committed = false;
    /// Each write takes at least this long, as a disk's would.
    std::chrono::milliseconds writeTime{0};
};

constexpr int kBins = 48;
constexpr int kRows = 7;
constexpr int kAngles = 60;

struct Scan {
    ImageStack lineIntegrals;
    std::vector<double> angles = uniformAngles(kAngles);
    ReconGeometry geometry;
};

/// A phantom scan of `rows` detector rows (kRows by default).
inline Scan makeScan(int rows = kRows) {
    Scan s;
    PhantomSpec spec;
    spec.bins = kBins;
    spec.rows = rows;
    s.lineIntegrals = projectPhantom(spec, s.angles);
    Geometry g;
    g.angles = s.angles;
    g.bins = kBins;
    g.axis = g.detectorCentre() + 0.3; // off-centre, so the axis reaches the plan
    s.geometry = ReconGeometry::fullSlice(g);
    return s;
}

inline ReconOptions optionsFor(const std::string& strategy, int slicesPerPass = 1) {
    ReconOptions o;
    o.strategy = strategy;
    o.slicesPerPass = slicesPerPass;
    o.threads = 2;
    return o;
}

/// The scan's job through `strategy` in chunks of `chunkRows` (0: the conveyor chooses).
inline VolumeJob jobFor(const Scan& scan, const std::string& strategy, int chunkRows) {
    VolumeJob job;
    job.geometry = scan.geometry;
    job.options = optionsFor(strategy);
    job.chunkRows = chunkRows;
    return job;
}

/// All rows at once through one plan, without the pipeline.
inline ImageStack oneShot(CountsReader& reader, const ReconGeometry& geometry, const ReconOptions& options) {
    const int rows = reader.info().rows;
    const ImageStack sinograms = loadSinograms(reader, 0, rows);
    auto plan = createPlan(geometry, options);
    ImageStack out(geometry.region.width, geometry.region.height, rows);
    for (int first = 0; first < rows; first += plan->maxSlices()) {
        const int n = std::min(plan->maxSlices(), rows - first);
        plan->reconstruct(
            std::span<const float>(sinograms.data).subspan(first * sinograms.imageSize(), n * sinograms.imageSize()), n,
            std::span<float>(out.data).subspan(first * out.imageSize(), n * out.imageSize()));
    }
    return out;
}

} // namespace tomo::test
