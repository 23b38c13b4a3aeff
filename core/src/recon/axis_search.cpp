// The rotation axis from several detector rows: each row's estimate, then
// their consensus, constant or linear in the row (a tilted axis).
//
// Rows with a doubtful estimate (an empty row above the sample, a row full
// of noise) are left out; of the others, a row farther than kAgreePx from
// the consensus of the rest is left out too, one at a time, worst first.
// The consensus is weighted by each row's confidence: the weighted median
// for a constant axis, weighted least squares for a line.
#include "tomo/axis_finder.h"

#include "tomo/error.h"
#include "tomo/preprocess.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace tomo {

namespace {

/// Rows farther than this from the consensus are left out of it.
constexpr double kAgreePx = 1.0;

using Row = AxisSearch::Row;

/// The value where the rows' cumulative confidence reaches half the total.
double weightedMedian(std::vector<const Row*> rows) {
    std::sort(rows.begin(), rows.end(), [](const Row* a, const Row* b) { return a->estimate.axis < b->estimate.axis; });
    double total = 0.0;
    for (const Row* r : rows) total += r->estimate.confidence;
    double sum = 0.0;
    for (const Row* r : rows) {
        sum += r->estimate.confidence;
        if (sum >= 0.5 * total) return r->estimate.axis;
    }
    return rows.back()->estimate.axis;
}

/// Weighted least squares axis = a + t (row - r0), r0 the weighted mean row
/// (so a and t are uncorrelated), given at the nearest whole row. Constant
/// when the rows do not differ.
AxisLine fitLine(const std::vector<const Row*>& rows) {
    double w = 0.0, rowMean = 0.0, axisMean = 0.0;
    for (const Row* r : rows) {
        w += r->estimate.confidence;
        rowMean += r->estimate.confidence * r->row;
        axisMean += r->estimate.confidence * r->estimate.axis;
    }
    rowMean /= w;
    axisMean /= w;
    double srr = 0.0, sra = 0.0;
    for (const Row* r : rows) {
        srr += r->estimate.confidence * (r->row - rowMean) * (r->row - rowMean);
        sra += r->estimate.confidence * (r->row - rowMean) * (r->estimate.axis - axisMean);
    }
    const AxisLine line{axisMean, srr > 0.0 ? sra / srr : 0.0, rowMean};
    const double row = std::round(rowMean); // the same line, given at a whole row
    return AxisLine{line.at(row), line.tilt, row};
}

/// Weighted RMS distance of the rows from the line.
double residualOf(const std::vector<const Row*>& rows, const AxisLine& line) {
    double w = 0.0, sum = 0.0;
    for (const Row* r : rows) {
        const double d = r->estimate.axis - line.at(r->row);
        w += r->estimate.confidence;
        sum += r->estimate.confidence * d * d;
    }
    return std::sqrt(sum / w);
}

} // namespace

int AxisSearch::usedRows() const {
    return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.used; }));
}

std::vector<int> spreadRows(int first, int count, int maxRows) {
    if (count < 1 || maxRows < 1)
        throw InvalidArgument("axis rows: " + std::to_string(count) + " rows to choose " + std::to_string(maxRows) +
                              " from (expected >= 1 of each)");
    const int n = std::min(count, maxRows);
    std::vector<int> rows;
    for (int i = 0; i < n; ++i)
        rows.push_back(first + static_cast<int>((2LL * i + 1) * count / (2LL * n)));
    return rows;
}

AxisSearch findAxisOnRows(DatasetReader& reader, const std::vector<int>& rows, bool fitTilt, double searchRadius,
                          const ProgressCallback& progress) {
    const DatasetInfo& info = reader.info();
    if (rows.empty()) throw InvalidArgument("axis finder: no rows to search (expected at least one)");
    for (int row : rows)
        if (row < 0 || row >= info.rows)
            throw InvalidArgument("axis finder: row " + std::to_string(row) + " is outside '" + info.path.string() +
                                  "' (rows 0.." + std::to_string(info.rows - 1) + ")");

    AxisSearch search;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Image sinogram = loadSinograms(reader, rows[i], 1).slice(0);
        search.rows.push_back({rows[i], findRotationAxis(sinogram, info.angles, searchRadius), false});
        if (progress) progress(static_cast<double>(i + 1) / rows.size(), "finding the axis");
    }

    std::vector<const Row*> used;
    for (const Row& r : search.rows)
        if (r.estimate.confidence >= kAxisDoubtful) used.push_back(&r);
    if (used.empty()) { // nothing trustworthy: the best guess, with its doubtful confidence
        const Row& best = *std::max_element(search.rows.begin(), search.rows.end(), [](const Row& a, const Row& b) {
            return a.estimate.confidence < b.estimate.confidence;
        });
        search.line = AxisLine{best.estimate.axis, 0.0, static_cast<double>(best.row)};
        search.confidence = best.estimate.confidence;
        return search;
    }

    auto consensus = [&](const std::vector<const Row*>& from) {
        const bool line = fitTilt && std::any_of(from.begin(), from.end(), [&](const Row* r) {
            return r->row != from.front()->row;
        });
        return line ? fitLine(from) : AxisLine{weightedMedian(from), 0.0, static_cast<double>(from.front()->row)};
    };
    // A row is outvoted only by at least two others (three for a line: two
    // rows always fit one exactly), by its distance from the consensus of
    // the others (a line through all would bend towards a wrong row).
    const std::size_t outvote = fitTilt ? 4 : 3;
    while (used.size() >= outvote) {
        std::size_t worst = 0;
        double worstDistance = 0.0;
        for (std::size_t i = 0; i < used.size(); ++i) {
            std::vector<const Row*> others = used;
            others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
            const double d = std::abs(used[i]->estimate.axis - consensus(others).at(used[i]->row));
            if (d > worstDistance) {
                worst = i;
                worstDistance = d;
            }
        }
        if (worstDistance <= kAgreePx) break;
        used.erase(used.begin() + static_cast<std::ptrdiff_t>(worst));
    }
    search.line = consensus(used);

    for (Row& r : search.rows) r.used = std::find(used.begin(), used.end(), &r) != used.end();
    search.residual = residualOf(used, search.line);
    std::vector<double> confidences;
    for (const Row* r : used) confidences.push_back(r->estimate.confidence);
    std::nth_element(confidences.begin(), confidences.begin() + confidences.size() / 2, confidences.end());
    search.confidence = confidences[confidences.size() / 2] * std::exp(-search.residual * search.residual);
    return search;
}

} // namespace tomo
