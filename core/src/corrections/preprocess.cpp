// PreprocessingStage: the chain of corrections.h over chunks of detector rows.
#include "tomo/preprocess.h"

#include "buffer_pool.h"
#include "corrections/correction_util.h"
#include "corrections/flat_field_lines.h"
#include "corrections/transmission.h"
#include "io/readers.h"
#include "tomo/axis_finder.h"
#include "tomo/error.h"
#include "tomo/filter.h"
#include "tomo/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <numbers>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace tomo {

void PreprocessStats::merge(const PreprocessStats& other) {
    auto append = [](std::vector<PixelPosition>& to, const std::vector<PixelPosition>& from) {
        for (const PixelPosition& p : from) {
            if (to.size() >= kListLimit) break;
            to.push_back(p);
        }
    };
    clamped += other.clamped;
    deadPixelCount += other.deadPixelCount;
    append(deadPixels, other.deadPixels);
    badValueCount += other.badValueCount;
    append(badValues, other.badValues);
    zingerCount += other.zingerCount;
    append(zingers, other.zingers);
    flatZingerCount += other.flatZingerCount;
    clampedByCorrections += other.clampedByCorrections;
    rings.merge(other.rings);
}

void PreprocessStats::RingDamage::add(const RingChange& change, int row) {
    RingDamage one;
    one.rows = 1;
    one.nonStripe = change.nonStripe;
    one.meanChange = change.meanChange;
    one.nonStripeRow = one.meanChangeRow = row;
    merge(one);
}

void PreprocessStats::RingDamage::merge(const RingDamage& other) {
    if (other.rows == 0) return;
    if (rows == 0) {
        *this = other;
        return;
    }
    rows += other.rows;
    if (other.nonStripe > nonStripe) {
        nonStripe = other.nonStripe;
        nonStripeRow = other.nonStripeRow;
    }
    if (std::abs(other.meanChange) > std::abs(meanChange)) {
        meanChange = other.meanChange;
        meanChangeRow = other.meanChangeRow;
    }
}

std::string PreprocessStats::RingDamage::summary() const {
    if (rows == 0) return {};
    char text[200];
    std::snprintf(text, sizeof text, "%.1f %% of the object's angular signal changed (row %d), its integral by %+.2f %% (row %d)",
                  100.0 * nonStripe, nonStripeRow, 100.0 * meanChange, meanChangeRow);
    return text;
}

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

/// The largest raw value of an integer sample type (saturation), 0 = none.
double typeSaturation(SampleType t) {
    switch (t) {
    case SampleType::UInt8:
        return 255.0;
    case SampleType::UInt16:
        return 65535.0;
    case SampleType::Float32:
    case SampleType::Float64:
        break;
    }
    return 0.0;
}

bool isInteger(SampleType t) {
    return t == SampleType::UInt8 || t == SampleType::UInt16;
}

/// Mean of a chunk's stored values.
double meanOf(const RawChunk& chunk) {
    auto mean = [&](const auto* v) {
        const std::size_t n = chunk.values.size() / sizeof(*v);
        return n == 0 ? 0.0 : std::accumulate(v, v + n, 0.0) / static_cast<double>(n);
    };
    const std::byte* b = chunk.values.data();
    switch (chunk.type) {
    case SampleType::UInt8: return mean(reinterpret_cast<const std::uint8_t*>(b));
    case SampleType::UInt16: return mean(reinterpret_cast<const std::uint16_t*>(b));
    case SampleType::Float32: return mean(reinterpret_cast<const float*>(b));
    case SampleType::Float64: return mean(reinterpret_cast<const double*>(b));
    }
    return 0.0;
}

/// Copies block rows [from, from + count) of a [row][values] buffer onto the
/// rows before / after it, so the block holds the detector's edge rows
/// repeated beyond the detector.
template <class T>
void replicateEdgeRows(std::span<T> block, std::size_t rowValues, int blockRows, int from, int count) {
    for (int r = 0; r < blockRows; ++r) {
        const int src = std::clamp(r, from, from + count - 1);
        if (src != r)
            std::copy_n(block.begin() + static_cast<std::ptrdiff_t>(src * rowValues), rowValues,
                        block.begin() + static_cast<std::ptrdiff_t>(r * rowValues));
    }
}

/// What one range of lines (rows x projections) found.
struct LineStats {
    std::size_t clamped = 0;
    std::size_t badValues = 0;
    std::vector<PixelPosition> badList;
    std::size_t firstNonFinite = kNone; // index into the chunk's data
};

} // namespace

struct PreprocessingStage::Impl {
    explicit Impl(DatasetReader& r, CorrectionOptions o) :
        reader(r), options(std::move(o)), pool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {}

    DatasetReader& reader;
    CorrectionOptions options;
    int margin = 0;
    double saturation = 0.0; // 0 = none
    /// Distinct positions of the flat groups and the reader's groups at each.
    std::vector<double> flatPositions;
    std::vector<std::vector<int>> flatGroups;
    std::vector<FlatBlend> blends; // per projection, when there are several positions
    std::optional<HalfAcquisitionLayout> layout;
    std::optional<HalfAcquisitionAxis> foundAxis;
    std::optional<BackgroundColumns> foundBackground;
    WorkerPool pool;
    /// Buffers of finished chunks, reused by later ones (recycle()).
    detail::HostBufferPool bytes;
    detail::BufferPool<float> floats;

    std::mutex paganinMutex;
    std::map<int, std::unique_ptr<PaganinFilter>> paganin; // by block rows

    mutable std::mutex warningMutex;
    std::vector<std::string> warnings;
    bool countsChecked = false;

    const DatasetInfo& info() const { return reader.info(); }
    /// Bytes of a chunk's stored values, `blockRows` rows (margins included) of every projection.
    std::size_t storedBytes(std::size_t blockRows) const {
        const DatasetInfo& i = info();
        return static_cast<std::size_t>(i.projections) * blockRows * static_cast<std::size_t>(i.columns) *
               sampleBytes(i.sampleType);
    }
    std::string source() const { return info().path.string(); }
    int detectorRow(int chunkFirst, int blockRow) const {
        return std::clamp(chunkFirst - margin + blockRow, 0, info().rows - 1);
    }

    const PaganinFilter& paganinFor(int rows) {
        std::lock_guard lock(paganinMutex);
        auto& f = paganin[rows];
        if (!f) f = std::make_unique<PaganinFilter>(rows, info().columns, options.paganin);
        return *f;
    }

    void warn(std::string text) {
        std::lock_guard lock(warningMutex);
        if (std::find(warnings.begin(), warnings.end(), text) == warnings.end()) warnings.push_back(std::move(text));
    }

    void setUpFlats();
    void checkAgainstDataset() const;
    /// Intensities without flats: open-beam columns (FlatFieldOptions::findBackground).
    void findOpenBeam();
    /// Stored values - dark of one detector row, [projection][column].
    Image intensitiesOf(int row);
    void checkRawCounts(const RawChunk& chunk);
    /// Dead pixels of the chunk's block rows: no usable flat in some group
    /// (flat <= dark) or a saturated flat, with dead-pixel correction on
    /// (else none). Counted and listed in `stats` for the output rows.
    std::vector<std::uint8_t> deadPixels(const RawChunk& chunk, PreprocessStats& stats) const;
    void transmissions(RawChunk& chunk, const ChunkConstants& k, PreprocessStats& stats);
    template <class T>
    void transmissionsOf(RawChunk& chunk, const ChunkConstants& k, PreprocessStats& stats);
    void checkLineIntegrals(const RawChunk& chunk) const;
    void checkChunk(const RawChunk& chunk) const;
    /// No correction between the flat field and the log (for intensities).
    bool logInFlatField() const { return !info().logCorrected && !options.betweenFlatFieldAndLog(); }
};

void PreprocessingStage::Impl::setUpFlats() {
    const std::vector<double>& positions = info().flatPositions;
    if (positions.size() <= 1) return; // one mean flat (or none), read by readMeanFlat
    std::vector<int> order(positions.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return positions[a] < positions[b]; });
    for (int g : order) {
        if (flatPositions.empty() || positions[g] != flatPositions.back()) {
            flatPositions.push_back(positions[g]);
            flatGroups.emplace_back();
        }
        flatGroups.back().push_back(g);
    }
    for (int p = 0; p < info().projections; ++p) blends.push_back(flatBlend(flatPositions, p));
}

void PreprocessingStage::Impl::checkAgainstDataset() const {
    const DatasetInfo& i = info();
    if (i.projections < 1 || i.rows < 1 || i.columns < 1)
        throw InvalidArgument("corrections: the dataset '" + source() + "' has no data");
    const FlatFieldOptions& f = options.flatField;
    if (f.backgroundCount > 0 && (f.backgroundFirst >= i.columns || f.backgroundCount > i.columns - f.backgroundFirst))
        throw InvalidArgument("background columns " + std::to_string(f.backgroundFirst) + ":" +
                              std::to_string(static_cast<long long>(f.backgroundFirst) + f.backgroundCount) +
                              " (run-config corrections.flat_field.background_columns, --background-columns): "
                              "expected a range inside the detector's columns 0:" +
                              std::to_string(i.columns));
    if (options.paganin.enabled && i.logCorrected)
        throw InvalidArgument("Paganin phase retrieval (--paganin, corrections.paganin) needs intensities, but '" +
                              source() + "' holds log-corrected values");
    if (options.halfAcquisition.enabled && options.halfAcquisition.axis) {
        const double axis = *options.halfAcquisition.axis;
        if (!(axis >= 0.0 && axis <= i.columns - 1))
            throw InvalidArgument("half-acquisition axis " + std::to_string(axis) +
                                  " (run-config corrections.half_acquisition.axis, --half-acquisition): expected a "
                                  "detector column in [0, " +
                                  std::to_string(i.columns - 1) + "]");
    }
}

/// What the log of counts without an open-beam level does: every line
/// integral carries C = -ln(open beam), and with edge padding the ramp
/// filter passes a constant at its zero-frequency response, about 2 / (pi^2
/// M) for the padded length M, summed over a half turn: 2 C / (pi M) on
/// every pixel (measured on a phantom: as predicted within 0.01 %). `level`
/// is about the open beam, or (atLeast) a value it is above.
std::string offsetOf(double level, bool atLeast, int columns) {
    const double offset = -std::log(level);
    const int padded = paddedLength(columns);
    const char* relation = atLeast ? " <= " : " ~ ";
    std::ostringstream s;
    s.precision(3);
    s << "every line integral carries C = -ln(open beam)" << relation << offset
      << " and every slice value is shifted by 2 C / (pi M)" << relation << 2.0 * offset / (std::numbers::pi * padded)
      << " (M = " << padded << " the filter's padded length, edge padding)";
    return s.str();
}

Image PreprocessingStage::Impl::intensitiesOf(int row) {
    const DatasetInfo& i = info();
    const std::size_t values = static_cast<std::size_t>(i.projections) * static_cast<std::size_t>(i.columns);
    std::vector<std::byte> raw(values * sampleBytes(i.sampleType));
    reader.readRawRows(row, 1, raw);
    std::vector<float> dark(static_cast<std::size_t>(i.columns), 0.0f);
    if (!reader.readMeanDark(row, 1, dark)) std::fill(dark.begin(), dark.end(), 0.0f);
    Image out(i.columns, i.projections);
    auto convert = [&](const auto* v) {
        for (std::size_t k = 0; k < values; ++k)
            out.data[k] = static_cast<float>(static_cast<double>(v[k]) - dark[k % static_cast<std::size_t>(i.columns)]);
    };
    switch (i.sampleType) {
    case SampleType::UInt8: convert(reinterpret_cast<const std::uint8_t*>(raw.data())); break;
    case SampleType::UInt16: convert(reinterpret_cast<const std::uint16_t*>(raw.data())); break;
    case SampleType::Float32: convert(reinterpret_cast<const float*>(raw.data())); break;
    case SampleType::Float64: convert(reinterpret_cast<const double*>(raw.data())); break;
    }
    return out;
}

void PreprocessingStage::Impl::findOpenBeam() {
    const DatasetInfo& i = info();
    const FlatFieldOptions& f = options.flatField;
    if (!f.findBackground || f.backgroundCount > 0 || i.logCorrected || i.flats > 0) return;
    const std::vector<int> rows = spreadRows(0, i.rows, 3);
    std::vector<Image> sinograms;
    double sum = 0.0;
    for (int row : rows) {
        sinograms.push_back(intensitiesOf(row));
        for (float v : sinograms.back().data) {
            if (!std::isfinite(v)) return; // correct() names the value
            sum += v;
        }
    }
    const double mean = sum / (static_cast<double>(rows.size()) * sinograms.front().size());
    if (!isInteger(i.sampleType) && mean <= 2.0) return; // transmissions already
    {
        std::lock_guard lock(warningMutex);
        countsChecked = true; // said here
    }
    std::string where = rows.size() == 1 ? "row " : "rows ";
    for (std::size_t k = 0; k < rows.size(); ++k) where += (k ? ", " : "") + std::to_string(rows[k]);
    foundBackground = findBackgroundColumns(sinograms);
    const BackgroundColumns& b = *foundBackground;
    if (b.count > 0) {
        options.flatField.backgroundFirst = b.first;
        options.flatField.backgroundCount = b.count;
        warn(source() + ": without flat fields, each line is divided by its open beam, the mean of columns " +
             std::to_string(b.first) + ":" + std::to_string(b.first + b.count) +
             " (outside the object in every projection of " + where +
             "; found automatically, --background-columns chooses others)");
    } else {
        warn(source() + ": without flat fields and without a column outside the object in every projection of " +
             where + ", the open beam is about the brightest values (" +
             std::to_string(std::lround(b.openBeam)) + ", not divided out): " + offsetOf(b.openBeam, false, i.columns) +
             "; give flats or the open-beam columns with --background-columns");
    }
}

void PreprocessingStage::Impl::checkRawCounts(const RawChunk& chunk) {
    {
        std::lock_guard lock(warningMutex);
        if (countsChecked) return;
        countsChecked = true;
    }
    if (!chunk.flats.empty() || options.flatField.backgroundCount > 0) return;
    const double mean = meanOf(chunk);
    if (!isInteger(info().sampleType) && mean <= 2.0) return;
    std::ostringstream s;
    s.precision(4);
    s << source() << ": without flat fields, its values look like raw counts (" << sampleTypeName(info().sampleType)
      << ", mean " << mean << ") and are taken as transmissions as they are: "
      << offsetOf(std::max(mean, 1.0), true, info().columns)
      << " (the open beam is above the mean); give flats or the open-beam columns with --background-columns "
         "(corrections.flat_field.background_columns)";
    warn(s.str());
}

void PreprocessingStage::Impl::checkLineIntegrals(const RawChunk& chunk) const {
    const auto& v = chunk.data.data;
    const auto bad = std::find_if(v.begin(), v.end(), [](float x) { return !std::isfinite(x); });
    if (bad == v.end()) return;
    const std::size_t index = static_cast<std::size_t>(bad - v.begin());
    const std::size_t cols = static_cast<std::size_t>(info().columns), P = static_cast<std::size_t>(info().projections);
    const std::size_t line = index / cols;
    detail::throwNonFiniteValue(source(), *bad, detectorRow(chunk.firstRow, static_cast<int>(line / P)), line % P,
                                index % cols);
}

/// Flat/dark correction of every line of the chunk with the constants of
/// prepare(): the stored values -> transmissions in chunk.data ([block
/// row][projection][column]), dead / bad values interpolated (or clamped),
/// and -log when k.logInFlatField (one pass over the data). The arithmetic
/// of the line kernels (flat_field_lines.h), which the GPU repeats. Fills
/// the bad-value figures of the output rows.
void PreprocessingStage::Impl::transmissions(RawChunk& chunk, const ChunkConstants& k, PreprocessStats& stats) {
    switch (chunk.type) {
    case SampleType::UInt8: transmissionsOf<std::uint8_t>(chunk, k, stats); break;
    case SampleType::UInt16: transmissionsOf<std::uint16_t>(chunk, k, stats); break;
    case SampleType::Float32: transmissionsOf<float>(chunk, k, stats); break;
    case SampleType::Float64: transmissionsOf<double>(chunk, k, stats); break;
    }
}

std::vector<std::uint8_t> PreprocessingStage::Impl::deadPixels(const RawChunk& chunk, PreprocessStats& stats) const {
    const int N = info().columns;
    const std::size_t cols = static_cast<std::size_t>(N);
    std::vector<std::uint8_t> dead(static_cast<std::size_t>(chunk.rowCount + 2 * chunk.margin) * cols, 0);
    if (!options.badPixels.enabled || chunk.flats.empty()) return dead;
    for (const auto& flat : chunk.flats)
        for (std::size_t k = 0; k < dead.size(); ++k) {
            const double dk = chunk.dark.empty() ? 0.0 : chunk.dark[k];
            if (!(flat[k] - dk > 0.0) || (saturation > 0.0 && flat[k] >= saturation)) dead[k] = 1;
        }
    for (int r = chunk.margin; r < chunk.margin + chunk.rowCount; ++r)
        for (int c = 0; c < N; ++c)
            if (dead[static_cast<std::size_t>(r) * cols + c]) {
                ++stats.deadPixelCount;
                if (stats.deadPixels.size() < PreprocessStats::kListLimit)
                    stats.deadPixels.push_back({detectorRow(chunk.firstRow, r), -1, c});
            }
    return dead;
}

template <class T>
void PreprocessingStage::Impl::transmissionsOf(RawChunk& chunk, const ChunkConstants& k, PreprocessStats& stats) {
    const DatasetInfo& i = info();
    const int N = i.columns, P = i.projections;
    const int blockRows = k.blockRows;
    const std::size_t cols = static_cast<std::size_t>(N);
    const T* raw = reinterpret_cast<const T*>(chunk.values.data());
    const std::vector<std::uint8_t>& dead = k.dead;
    const std::vector<float>& dark = k.dark;
    const std::vector<std::vector<float>>& scales = k.scales;

    chunk.data.width = N;
    chunk.data.height = P;
    chunk.data.depth = blockRows;
    chunk.data.data = floats.take(static_cast<std::size_t>(N) * P * blockRows);
    const int lines = blockRows * P;
    const int ranges = 4 * pool.threads();
    std::vector<LineStats> found(static_cast<std::size_t>(ranges));
    pool.parallelFor(ranges, [&](int range, int) {
        LineStats& f = found[range];
        std::vector<std::uint8_t> bad(cols);
        std::vector<float> blended(cols);
        const int first = static_cast<int>(static_cast<long long>(lines) * range / ranges);
        const int last = static_cast<int>(static_cast<long long>(lines) * (range + 1) / ranges);
        for (int line = first; line < last; ++line) {
            const int r = line / P, a = line % P;
            const std::size_t rowOffset = static_cast<std::size_t>(r) * cols;
            float* values = chunk.data.data.data() + static_cast<std::size_t>(line) * cols;
            const T* stored = raw + (static_cast<std::size_t>(a) * blockRows + r) * cols;
            const float* scale = scales[0].data() + rowOffset;
            if (!k.blends.empty()) {
                const FlatBlend b = k.blends[a];
                if (b.upper != b.lower) {
                    detail::flatScales(k.flats[b.lower].data() + rowOffset, k.flats[b.upper].data() + rowOffset,
                                       static_cast<float>(b.weight), dark.data() + rowOffset, N, blended.data());
                    scale = blended.data();
                } else {
                    scale = scales[b.lower].data() + rowOffset;
                }
            }
            const detail::LineOutcome o =
                detail::correctLine(stored, dark.data() + rowOffset, scale, dead.data() + rowOffset, k.saturation,
                                    k.interpolate, k.logInFlatField, N, values, bad.data());
            if (o.firstNonFinite >= 0) {
                f.firstNonFinite = (static_cast<std::size_t>(a) * blockRows + r) * cols +
                                   static_cast<std::size_t>(o.firstNonFinite);
                return;
            }
            if (r < chunk.margin || r >= chunk.margin + chunk.rowCount) continue; // counted on the output rows
            f.clamped += o.clamped;
            f.badValues += o.interpolated;
            for (int c = 0; o.interpolated > 0 && c < N && f.badList.size() < PreprocessStats::kListLimit; ++c)
                if (bad[c] && !dead[rowOffset + c]) f.badList.push_back({detectorRow(chunk.firstRow, r), a, c});
        }
    });
    for (const LineStats& f : found) {
        if (f.firstNonFinite != kNone) {
            const std::size_t line = f.firstNonFinite / cols; // projection order
            detail::throwNonFiniteValue(source(), static_cast<double>(raw[f.firstNonFinite]),
                                        detectorRow(chunk.firstRow, static_cast<int>(line % blockRows)),
                                        line / blockRows, f.firstNonFinite % cols);
        }
    }
    for (const LineStats& f : found) {
        stats.clamped += f.clamped;
        stats.badValueCount += f.badValues;
        for (const PixelPosition& p : f.badList) {
            if (stats.badValues.size() >= PreprocessStats::kListLimit) break;
            stats.badValues.push_back(p);
        }
    }
    chunk.values = {};
    bytes.give(std::move(chunk.memory));
}

PreprocessingStage::PreprocessingStage(DatasetReader& reader, CorrectionOptions options) :
    m_impl(std::make_unique<Impl>(reader, std::move(options))) {
    Impl& d = *m_impl;
    d.options.validate();
    d.checkAgainstDataset();
    const DatasetInfo& i = d.info();
    if (d.options.badPixels.enabled)
        d.saturation =
            d.options.badPixels.saturation > 0.0 ? d.options.badPixels.saturation : typeSaturation(i.sampleType);
    if (d.options.paganin.enabled) d.margin = PaganinFilter::margin(d.options.paganin);
    d.setUpFlats();
    d.findOpenBeam();
    HalfAcquisitionOptions& half = d.options.halfAcquisition;
    if (half.enabled) {
        // Checks the angles before anything is read.
        HalfAcquisitionLayout layout =
            planHalfAcquisition(i.angles, i.columns, half.axis.value_or((i.columns - 1) / 2.0));
        if (!half.axis) {
            const ImageStack middle = load(i.rows / 2, 1);
            d.foundAxis = findHalfAcquisitionAxis(middle.slice(0), i.angles, half.window);
            half.axis = d.foundAxis->axis;
            layout = planHalfAcquisition(i.angles, i.columns, *half.axis);
        }
        d.layout = std::move(layout);
    }
}

PreprocessingStage::~PreprocessingStage() = default;

const DatasetInfo& PreprocessingStage::info() const {
    return m_impl->info();
}
const CorrectionOptions& PreprocessingStage::options() const {
    return m_impl->options;
}
int PreprocessingStage::rowMargin() const {
    return m_impl->margin;
}

int PreprocessingStage::outputColumns() const {
    return m_impl->layout ? m_impl->layout->columns : m_impl->info().columns;
}
int PreprocessingStage::outputProjections() const {
    return static_cast<int>(outputAngles().size());
}
const std::vector<double>& PreprocessingStage::outputAngles() const {
    return m_impl->layout ? m_impl->layout->angles : m_impl->info().angles;
}
std::optional<double> PreprocessingStage::outputAxis() const {
    if (!m_impl->layout) return std::nullopt;
    return m_impl->layout->outputAxis;
}
const std::optional<HalfAcquisitionAxis>& PreprocessingStage::foundHalfAcquisitionAxis() const {
    return m_impl->foundAxis;
}
const std::optional<BackgroundColumns>& PreprocessingStage::foundBackgroundColumns() const {
    return m_impl->foundBackground;
}

std::vector<std::string> PreprocessingStage::warnings() const {
    std::lock_guard lock(m_impl->warningMutex);
    return m_impl->warnings;
}

bool PreprocessingStage::flatFieldOnly() const {
    const Impl& d = *m_impl;
    return d.logInFlatField() && !d.options.halfAcquisition.enabled && d.flatPositions.size() <= 1;
}

FlatFieldRows PreprocessingStage::flatFieldRows(const RawChunk& chunk, PreprocessStats* stats) const {
    if (!flatFieldOnly() || chunk.margin != 0)
        throw InvalidArgument("flatFieldRows: the stage does more than the flat/dark step and the log");
    const Impl& d = *m_impl;
    for (const auto& flat : chunk.flats)
        detail::checkReference(flat, d.info().columns, d.source(), "flat field", chunk.firstRow, d.info().rows);
    detail::checkReference(chunk.dark, d.info().columns, d.source(), "dark field", chunk.firstRow, d.info().rows);
    FlatFieldRows field = makeFlatFieldRows(chunk.flats.empty() ? std::span<const float>() : chunk.flats.front(),
                                            chunk.dark, chunk.rowCount, d.info().columns, d.source(), chunk.firstRow);
    PreprocessStats found;
    field.dead = d.deadPixels(chunk, found);
    field.interpolate = d.options.badPixels.enabled;
    field.saturation = field.interpolate ? static_cast<float>(d.saturation) : 0.0f;
    if (stats) *stats = std::move(found);
    return field;
}

RawRows PreprocessingStage::rawRows(const RawChunk& chunk) const {
    const DatasetInfo& i = m_impl->info();
    return {chunk.type, chunk.values, i.projections, chunk.rowCount, i.columns, chunk.rowCount + 2 * chunk.margin,
            m_impl->source(), chunk.firstRow};
}

void PreprocessingStage::prefetch(int firstRow, int rowCount) {
    const int margin = m_impl->margin;
    m_impl->reader.prefetchRows(firstRow - margin, rowCount + 2 * margin);
}

RawChunk PreprocessingStage::read(int firstRow, int rowCount) {
    Impl& d = *m_impl;
    const DatasetInfo& i = d.info();
    const std::size_t perRow = static_cast<std::size_t>(i.projections) * static_cast<std::size_t>(i.columns);
    // Checked before allocating, so a bad range cannot ask for a huge buffer.
    detail::checkRowRequest(i, firstRow, rowCount, static_cast<std::size_t>(std::max(rowCount, 0)) * perRow, perRow);
    RawChunk chunk;
    chunk.firstRow = firstRow;
    chunk.rowCount = rowCount;
    chunk.margin = d.margin;
    const int blockRows = rowCount + 2 * d.margin;
    // The detector rows that exist, and where they go in the block.
    const int lo = std::max(0, firstRow - d.margin), hi = std::min(i.rows, firstRow + rowCount + d.margin);
    const int offset = lo - (firstRow - d.margin);
    if (i.logCorrected) {
        chunk.data.width = i.columns;
        chunk.data.height = i.projections;
        chunk.data.depth = blockRows;
        chunk.data.data = d.floats.take(perRow * blockRows);
        std::span<float> data(chunk.data.data);
        d.reader.readSinograms(lo, hi - lo, data.subspan(offset * perRow, (hi - lo) * perRow));
        replicateEdgeRows(data, perRow, blockRows, offset, hi - lo);
        return chunk;
    }
    // Stored values, projection order: [projection][block row][column].
    chunk.type = i.sampleType;
    const std::size_t line = static_cast<std::size_t>(i.columns) * sampleBytes(i.sampleType);
    const std::size_t valueBytes = d.storedBytes(static_cast<std::size_t>(blockRows));
    chunk.memory = d.bytes.take(valueBytes);
    chunk.values = chunk.memory.as<std::byte>(valueBytes);
    if (blockRows == hi - lo) {
        d.reader.readRawRows(lo, hi - lo, chunk.values);
    } else {
        std::vector<std::byte> rows(static_cast<std::size_t>(i.projections) * (hi - lo) * line);
        d.reader.readRawRows(lo, hi - lo, rows);
        for (int a = 0; a < i.projections; ++a) {
            std::byte* block = chunk.values.data() + static_cast<std::size_t>(a) * blockRows * line;
            std::copy_n(rows.data() + static_cast<std::size_t>(a) * (hi - lo) * line, (hi - lo) * line,
                        block + offset * line);
            replicateEdgeRows(std::span<std::byte>(block, blockRows * line), line, blockRows, offset, hi - lo);
        }
    }

    const std::size_t cols = static_cast<std::size_t>(i.columns);
    auto readImage = [&](auto readRows) {
        std::vector<float> image(static_cast<std::size_t>(blockRows) * cols);
        if (!readRows(std::span<float>(image).subspan(offset * cols, (hi - lo) * cols))) return std::vector<float>();
        replicateEdgeRows(std::span<float>(image), cols, blockRows, offset, hi - lo);
        return image;
    };
    if (d.flatPositions.empty()) {
        std::vector<float> flat =
            readImage([&](std::span<float> out) { return d.reader.readMeanFlat(lo, hi - lo, out); });
        if (!flat.empty()) chunk.flats.push_back(std::move(flat));
    } else {
        for (const std::vector<int>& members : d.flatGroups) {
            std::vector<float> mean;
            for (int g : members) {
                std::vector<float> one = readImage([&](std::span<float> out) {
                    d.reader.readFlatGroup(g, lo, hi - lo, out);
                    return true;
                });
                if (mean.empty())
                    mean = std::move(one);
                else
                    std::transform(mean.begin(), mean.end(), one.begin(), mean.begin(), std::plus<>());
            }
            for (float& v : mean) v /= static_cast<float>(members.size());
            chunk.flats.push_back(std::move(mean));
        }
    }
    chunk.dark = readImage([&](std::span<float> out) { return d.reader.readMeanDark(lo, hi - lo, out); });
    return chunk;
}

void PreprocessingStage::Impl::checkChunk(const RawChunk& chunk) const {
    const DatasetInfo& i = info();
    const int blockRows = chunk.rowCount + 2 * chunk.margin;
    const std::size_t bytes = static_cast<std::size_t>(i.projections) * static_cast<std::size_t>(blockRows) *
                              static_cast<std::size_t>(i.columns) * sampleBytes(i.sampleType);
    const bool shapeOk = i.logCorrected ? chunk.data.width == i.columns && chunk.data.height == i.projections &&
                                              chunk.data.depth == blockRows
                                        : chunk.type == i.sampleType && chunk.values.size() == bytes;
    if (chunk.margin != margin || chunk.rowCount < 1 || !shapeOk)
        throw InvalidArgument("corrections: a chunk of " + std::to_string(chunk.rowCount) + " rows with margin " +
                              std::to_string(chunk.margin) + " does not come from this stage's read()");
}

ChunkConstants PreprocessingStage::prepare(RawChunk& chunk, PreprocessStats& found) {
    Impl& d = *m_impl;
    d.checkChunk(chunk);
    const DatasetInfo& i = d.info();
    const int N = i.columns;
    const std::size_t cols = static_cast<std::size_t>(N);
    ChunkConstants k;
    k.blockRows = chunk.rowCount + 2 * chunk.margin;
    k.columns = N;
    if (i.logCorrected) {
        d.checkLineIntegrals(chunk);
        return k;
    }
    const CorrectionOptions& o = d.options;
    auto isOutput = [&](int blockRow) { return blockRow >= chunk.margin && blockRow < chunk.margin + chunk.rowCount; };
    for (const auto& flat : chunk.flats)
        detail::checkReference(flat, N, d.source(), "flat field", chunk.firstRow - chunk.margin, i.rows);
    detail::checkReference(chunk.dark, N, d.source(), "dark field", chunk.firstRow - chunk.margin, i.rows);
    if (o.zingers.enabled) {
        // Zingers of the flats and darks, row by row (so a chunk's result
        // does not depend on the rows around it).
        std::vector<std::vector<float>*> references;
        for (auto& flat : chunk.flats) references.push_back(&flat);
        if (!chunk.dark.empty()) references.push_back(&chunk.dark);
        for (std::vector<float>* image : references)
            for (int r = 0; r < k.blockRows; ++r) {
                const std::size_t n = removeZingers(std::span<float>(*image).subspan(r * cols, cols), 1, N, o.zingers,
                                                    ValueKind::Transmission);
                if (isOutput(r)) found.flatZingerCount += n;
            }
    }
    d.checkRawCounts(chunk);
    k.dead = d.deadPixels(chunk, found);
    k.dark = chunk.dark.empty() ? std::vector<float>(static_cast<std::size_t>(k.blockRows) * cols, 0.0f)
                                : std::move(chunk.dark);
    if (chunk.flats.empty()) k.scales.emplace_back(static_cast<std::size_t>(k.blockRows) * cols, 1.0f);
    for (const auto& flat : chunk.flats) {
        std::vector<float>& scale = k.scales.emplace_back(flat.size());
        for (int r = 0; r < k.blockRows; ++r)
            detail::flatScales(flat.data() + r * cols, nullptr, 0.0f, k.dark.data() + r * cols, N,
                               scale.data() + r * cols);
    }
    if (chunk.flats.size() > 1) k.blends = d.blends;
    k.flats = std::move(chunk.flats);
    k.saturation = o.badPixels.enabled ? static_cast<float>(d.saturation) : 0.0f;
    k.interpolate = o.badPixels.enabled;
    k.logInFlatField = d.logInFlatField();
    return k;
}

const std::optional<HalfAcquisitionLayout>& PreprocessingStage::halfAcquisition() const {
    return m_impl->layout;
}

int PreprocessingStage::detectorRow(int firstRow, int blockRow) const {
    return m_impl->detectorRow(firstRow, blockRow);
}

ImageStack PreprocessingStage::correct(RawChunk chunk, PreprocessStats* stats) {
    Impl& d = *m_impl;
    const DatasetInfo& i = d.info();
    const int N = i.columns, P = i.projections;
    const int blockRows = chunk.rowCount + 2 * chunk.margin;
    const std::size_t cols = static_cast<std::size_t>(N);
    const std::size_t sinogramSize = static_cast<std::size_t>(P) * cols;
    const CorrectionOptions& o = d.options;
    PreprocessStats found;
    const ValueKind kind = i.logCorrected ? ValueKind::LineIntegral : ValueKind::Transmission;
    auto sinogram = [&](int blockRow) {
        return std::span<float>(chunk.data.data).subspan(blockRow * sinogramSize, sinogramSize);
    };
    auto isOutput = [&](int blockRow) { return blockRow >= chunk.margin && blockRow < chunk.margin + chunk.rowCount; };

    const ChunkConstants constants = prepare(chunk, found);
    const bool logNow = constants.logInFlatField;
    if (!i.logCorrected) d.transmissions(chunk, constants, found);

    if (o.zingers.enabled)
        for (int r = 0; r < blockRows; ++r) {
            std::vector<PixelPosition> positions;
            const std::size_t n = removeZingers(
                sinogram(r), P, N, o.zingers, kind, &positions,
                isOutput(r) ? PreprocessStats::kListLimit - std::min(found.zingers.size(), PreprocessStats::kListLimit)
                            : 0,
                &d.pool);
            if (!isOutput(r)) continue;
            found.zingerCount += n;
            for (PixelPosition& p : positions) {
                p.row = d.detectorRow(chunk.firstRow, r);
                found.zingers.push_back(p);
            }
        }

    if (o.flatField.backgroundCount > 0) {
        const int first = o.flatField.backgroundFirst, count = o.flatField.backgroundCount;
        detail::forRanges(&d.pool, blockRows * P, [&](int l0, int l1) {
            for (int line = l0; line < l1; ++line) {
                float* v = chunk.data.data.data() + static_cast<std::size_t>(line) * cols;
                const double mean = std::accumulate(v + first, v + first + count, 0.0) / count;
                if (kind == ValueKind::LineIntegral)
                    for (int c = 0; c < N; ++c) v[c] = static_cast<float>(v[c] - mean);
                else if (mean > 0.0)
                    for (int c = 0; c < N; ++c) v[c] = static_cast<float>(v[c] / mean);
            }
        });
    }

    // Stripes: on each row's sinogram of transmissions (of line integrals
    // for log-corrected input), margin rows included, before Paganin blurs
    // them into the neighbouring rows. Vo et al.'s methods are made for the
    // flat-corrected intensities (algotom removes stripes before the log):
    // their ratios and the large-stripe normalisation model a detector
    // gain, and air is 1 there, not 0 (ratios of noise around 0 would be
    // taken for stripes).
    // The wavelet method is linear and can overshoot below 0: on
    // transmissions it runs on their logs. The damage guard compares each
    // output row before and after.
    if (o.rings.method != RingMethod::Off) {
        const bool onLogs = o.rings.method == RingMethod::Wavelet && kind == ValueKind::Transmission;
        std::vector<float> before;
        for (int r = 0; r < blockRows; ++r) {
            const std::span<float> s = sinogram(r);
            if (isOutput(r)) before.assign(s.begin(), s.end());
            if (onLogs)
                for (float& v : s) v = std::log(std::max(v, kMinTransmission));
            removeStripes(s, P, N, o.rings, &d.pool);
            if (onLogs)
                for (float& v : s) v = std::exp(v);
            if (isOutput(r))
                found.rings.add(ringChange(ringChangeSums(before, s, P, N, kind, &d.pool)),
                                d.detectorRow(chunk.firstRow, r));
        }
    }

    if (o.paganin.enabled) {
        // Whole projections: gather each one's block of rows, filter, scatter back.
        const PaganinFilter& filter = d.paganinFor(blockRows);
        detail::forRanges(&d.pool, P, [&](int a0, int a1) {
            std::vector<float> block(static_cast<std::size_t>(blockRows) * cols);
            for (int a = a0; a < a1; ++a) {
                for (int r = 0; r < blockRows; ++r)
                    std::copy_n(sinogram(r).begin() + static_cast<std::ptrdiff_t>(a * cols), cols,
                                block.begin() + r * cols);
                filter.apply(block);
                for (int r = chunk.margin; r < chunk.margin + chunk.rowCount; ++r)
                    std::copy_n(block.begin() + r * cols, cols,
                                sinogram(r).begin() + static_cast<std::ptrdiff_t>(a * cols));
            }
        });
    }

    // The output rows, from here on one sinogram per row.
    ImageStack out;
    if (chunk.margin == 0) {
        out = std::move(chunk.data);
    } else {
        out = ImageStack(N, P, chunk.rowCount);
        std::copy_n(chunk.data.data.begin() + static_cast<std::ptrdiff_t>(chunk.margin * sinogramSize), out.data.size(),
                    out.data.begin());
    }
    if (!i.logCorrected && !logNow) {
        std::atomic<std::size_t> clamped{0};
        detail::forRanges(&d.pool, chunk.rowCount * P, [&](int l0, int l1) {
            std::size_t n = 0;
            for (std::size_t k = static_cast<std::size_t>(l0) * cols; k < static_cast<std::size_t>(l1) * cols; ++k) {
                float t = out.data[k];
                if (!(t > 0.0f)) { // Paganin of values near the clamp can dip to 0
                    t = kMinTransmission;
                    ++n;
                }
                out.data[k] = -std::log(t);
            }
            clamped += n;
        });
        found.clampedByCorrections += clamped;
    }

    if (d.layout) {
        const HalfAcquisitionLayout& l = *d.layout;
        ImageStack stitched(l.columns, static_cast<int>(l.views.size()), chunk.rowCount);
        detail::forRanges(&d.pool, chunk.rowCount, [&](int r0, int r1) {
            for (int r = r0; r < r1; ++r) stitchHalfAcquisition(out.image(r), l, stitched.image(r));
        });
        out = std::move(stitched);
    }
    if (stats) *stats = std::move(found);
    return out;
}

void PreprocessingStage::allocateRawWith(std::function<HostBuffer(std::size_t bytes)> allocate) {
    m_impl->bytes.allocateWith(std::move(allocate));
}

void PreprocessingStage::allocateRawAhead(int chunkRows, int count) {
    if (m_impl->info().logCorrected) return;
    const std::size_t blockRows = static_cast<std::size_t>(chunkRows) + 2 * static_cast<std::size_t>(m_impl->margin);
    m_impl->bytes.allocateAhead(m_impl->storedBytes(blockRows), count);
}

void PreprocessingStage::recycle(RawChunk&& chunk) {
    m_impl->bytes.give(std::move(chunk.memory));
    m_impl->floats.give(std::move(chunk.data.data));
    chunk = {};
}

std::vector<float> PreprocessingStage::sinogramBuffer(std::size_t values) {
    return m_impl->floats.take(values);
}

void PreprocessingStage::recycle(ImageStack&& sinograms) {
    m_impl->floats.give(std::move(sinograms.data));
    sinograms = {};
}

ImageStack PreprocessingStage::load(int firstRow, int rowCount, PreprocessStats* stats) {
    return correct(read(firstRow, rowCount), stats);
}

ImageStack loadSinograms(DatasetReader& reader, int firstRow, int rowCount, PreprocessStats* stats) {
    return PreprocessingStage(reader, CorrectionOptions::none()).load(firstRow, rowCount, stats);
}

} // namespace tomo
