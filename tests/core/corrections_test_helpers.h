// Helpers of the corrections tests: a dataset of raw counts held in memory
// (with flat groups), the exact phantom sinogram, an FBP and its error
// against the true phantom, and a stripe-energy figure.
#pragma once

#include "tomo/backend.h"
#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/metrics.h"
#include "tomo/phantom.h"
#include "tomo/registry.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace tomo::test {

/// Raw counts [row][projection][column] in memory, with flat groups at
/// positions on the projection axis and one dark. Counts how often rows
/// and flats are read.
class CountsDataset final : public DatasetReader {
public:
    CountsDataset(ImageStack counts, std::vector<double> angles, SampleType type = SampleType::Float32) :
        m_counts(std::move(counts)) {
        m_info.path = "memory-counts";
        m_info.format = DatasetFormat::Raw;
        m_info.projections = m_counts.height;
        m_info.rows = m_counts.depth;
        m_info.columns = m_counts.width;
        m_info.sampleType = type;
        m_info.angles = std::move(angles);
    }

    /// A flat group ([row][column]) taken at `position` (see DatasetInfo::flatPositions).
    void addFlatGroup(double position, std::vector<float> flat) {
        m_flats.push_back(std::move(flat));
        m_info.flatPositions.push_back(position);
        m_info.flats = static_cast<int>(m_flats.size());
    }
    void setDark(std::vector<float> dark) {
        m_dark = std::move(dark);
        m_info.darks = 1;
    }
    ImageStack& counts() { return m_counts; }
    /// The values are line integrals (DatasetInfo::logCorrected).
    void setLogCorrected() { m_info.logCorrected = true; }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        check(firstRow, rowCount, out.size(), m_counts.imageSize());
        std::memcpy(out.data(), m_counts.image(firstRow).data(), out.size() * sizeof(float));
        rowsRead += rowCount;
    }
    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        if (m_flats.empty()) return false;
        check(firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.columns));
        std::fill(out.begin(), out.end(), 0.0f);
        for (const auto& flat : m_flats)
            for (std::size_t i = 0; i < out.size(); ++i)
                out[i] += flat[static_cast<std::size_t>(firstRow) * m_info.columns + i] / m_flats.size();
        return true;
    }
    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        if (m_dark.empty()) return false;
        check(firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.columns));
        std::copy_n(m_dark.begin() + static_cast<std::ptrdiff_t>(firstRow) * m_info.columns, out.size(), out.begin());
        return true;
    }
    void readFlatGroup(int group, int firstRow, int rowCount, std::span<float> out) override {
        if (group < 0 || group >= static_cast<int>(m_flats.size()))
            throw InvalidArgument("memory-counts: no flat group " + std::to_string(group));
        check(firstRow, rowCount, out.size(), static_cast<std::size_t>(m_info.columns));
        std::copy_n(m_flats[group].begin() + static_cast<std::ptrdiff_t>(firstRow) * m_info.columns, out.size(),
                    out.begin());
        ++flatGroupReads;
    }

    int rowsRead = 0;
    int flatGroupReads = 0;

private:
    void check(int firstRow, int rowCount, std::size_t size, std::size_t perRow) const {
        if (firstRow < 0 || rowCount < 1 || firstRow + rowCount > m_info.rows || size != perRow * rowCount)
            throw InvalidArgument("memory-counts: bad request");
    }

    ImageStack m_counts;
    std::vector<std::vector<float>> m_flats;
    std::vector<float> m_dark;
};

/// Counts of line integrals p: dark + (flat - dark) exp(-p).
inline ImageStack countsOf(const ImageStack& p, float flat, float dark) {
    ImageStack c = p;
    for (float& v : c.data) v = dark + (flat - dark) * std::exp(-v);
    return c;
}

/// The 2D Shepp-Logan (the same in every row) on `bins` columns.
inline PhantomSpec phantom2D(int bins, int rows = 1) {
    PhantomSpec spec;
    spec.shapes = sheppLogan2D();
    spec.bins = bins;
    spec.rows = rows;
    return spec;
}

/// FBP of one sinogram on a bins x bins grid ("cpu", linear, Ram-Lak).
inline Image fbp(const Image& sinogram, const std::vector<double>& angles, double axis) {
    Geometry g;
    g.angles = angles;
    g.bins = sinogram.width;
    g.axis = axis;
    ReconOptions o;
    o.strategy = "cpu";
    auto plan = createPlan(ReconGeometry::fullSlice(g), o);
    Image out(sinogram.width, sinogram.width);
    plan->reconstruct(sinogram.data, 1, out.data);
    return out;
}

/// RMSE of an FBP of `sinogram` against the true phantom, inside the object disc.
inline double phantomError(const Image& sinogram, const std::vector<double>& angles, const PhantomSpec& spec) {
    const Image slice = fbp(sinogram, angles, (sinogram.width - 1) / 2.0);
    const Image truth = rasterizePhantom(spec, 0, spec.bins, spec.bins);
    const auto mask = discMask(spec.bins, spec.bins, spec.radiusFraction * spec.bins / 2.0);
    return compareImages(slice, truth, mask).rmse;
}

/// Energy of the stripes of a sinogram: the column means (over the
/// projections) minus their median over 9 neighbouring columns, squared and
/// summed. Objects change smoothly across columns after averaging over the
/// angles; stripes are column-sharp.
inline double stripeEnergy(const Image& s) {
    std::vector<double> mean(static_cast<std::size_t>(s.width), 0.0);
    for (int a = 0; a < s.height; ++a)
        for (int c = 0; c < s.width; ++c) mean[c] += s.at(c, a) / s.height;
    double energy = 0.0;
    for (int c = 4; c < s.width - 4; ++c) {
        std::vector<double> w(mean.begin() + c - 4, mean.begin() + c + 5);
        std::nth_element(w.begin(), w.begin() + 4, w.end());
        energy += (mean[c] - w[4]) * (mean[c] - w[4]);
    }
    return energy;
}

/// Energy of the column means of a - b (the stripes one left in the other).
inline double columnMeanEnergy(const Image& a, const Image& b) {
    double energy = 0.0;
    for (int c = 0; c < a.width; ++c) {
        double m = 0.0;
        for (int y = 0; y < a.height; ++y) m += (a.at(c, y) - b.at(c, y)) / a.height;
        energy += m * m;
    }
    return energy;
}

} // namespace tomo::test
