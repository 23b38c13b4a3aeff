#include "work/recon_types.h"

#include "tomo/dataset.h"
#include "tomo/registry.h"

#include <QObject>
#include <QStringList>

#include <cmath>

namespace tomo::ui {

tomo::PhantomSpec DemoSpec::phantom() const {
    tomo::PhantomSpec spec;
    spec.shapes = tomo::sheppLogan3D();
    spec.bins = bins;
    spec.rows = rows;
    return spec;
}

void SliceParams::moveToRow(int newRow) {
    axis = axisLine().at(newRow);
    row = newRow;
}

tomo::PreviewRequest SliceParams::request() const {
    tomo::PreviewRequest r;
    r.row = row;
    if (!stitched()) r.axis = axis;
    r.axisOffsets = axisOffsets;
    r.region = region;
    r.options = options;
    r.corrections = corrections;
    return r;
}

bool SliceParams::sameGeometry(const SliceParams& o) const {
    return row == o.row && (stitched() || axis == o.axis) && axisOffsets == o.axisOffsets && region == o.region &&
           options.filter.window == o.options.filter.window && options.filter.padding == o.options.filter.padding &&
           corrections == o.corrections;
}

tomo::Region SliceParams::effectiveRegion(int grid) const {
    return region.value_or(tomo::Region{0, 0, grid, grid});
}

QString ModeComparison::label() const {
    return QString::fromStdString(options.strategy) % QStringLiteral(" · ") %
           QString::fromUtf8(tomo::interpolationName(options.interpolation).data()) % QStringLiteral(" · ") %
           QString::fromUtf8(tomo::precisionName(options.precision).data()) %
           (options.slicesPerPass > 1 ? QStringLiteral(" · %1 slices/pass").arg(options.slicesPerPass) : QString());
}

tomo::RunConfig toRunConfig(const SliceParams& params, const DatasetSummary& dataset, int firstRow, int rowCount) {
    tomo::RunConfig c;
    c.input = dataset.path.toStdString();
    c.open = dataset.options;
    // 360° stitching: no axis, tomo-recon then takes the stitched sinogram's centre as the preview does.
    if (!params.stitched()) {
        c.axis = params.axis;
        c.axisTilt = params.axisTilt;
        c.axisRow = params.row;
    }
    c.axisOffsetsFile = params.axisOffsetsFile.toStdString();
    c.firstRow = firstRow;
    c.rowCount = rowCount;
    c.region = params.region;
    c.options = params.options;
    c.gpus = params.gpus;
    c.corrections = params.corrections;
    return c;
}

QString readableWarning(const tomo::DatasetInfo& info, const std::string& warning) {
    QString text = QString::fromStdString(warning);
    if (!info.path.empty())
        text.replace(QString::fromStdString(info.path.string()), QString::fromStdString(info.path.filename().string()));
    return text;
}

bool sameOpenOptions(const tomo::OpenOptions& a, const tomo::OpenOptions& b) {
    auto sameRaw = [](const tomo::RawLayout& x, const tomo::RawLayout& y) {
        return x.projections == y.projections && x.rows == y.rows && x.columns == y.columns && x.type == y.type &&
               x.headerBytes == y.headerBytes && x.bigEndian == y.bigEndian;
    };
    return a.anglesFile == b.anglesFile && a.anglesLines == b.anglesLines && a.angleUnits == b.angleUnits &&
           a.angleRangeDegrees == b.angleRangeDegrees && a.variable == b.variable &&
           a.logCorrected == b.logCorrected && a.raw.has_value() == b.raw.has_value() &&
           (!a.raw || sameRaw(*a.raw, *b.raw));
}

SliceParams fromRunConfig(const tomo::RunConfig& config, int projections) {
    SliceParams p;
    p.row = config.firstRow;
    p.axis = config.axis ? tomo::AxisLine{*config.axis, config.axisTilt, config.axisRow}.at(p.row) : std::nan("");
    p.axisTilt = config.axis ? config.axisTilt : 0.0;
    p.axisOffsetsFile = QString::fromStdString(config.axisOffsetsFile.string());
    if (!config.axisOffsetsFile.empty())
        p.axisOffsets = tomo::readAxisOffsetsFile(config.axisOffsetsFile, projections);
    p.region = config.region;
    p.options = config.options;
    p.gpus = config.gpus;
    p.corrections = config.corrections;
    return p;
}

bool referenceFits(const ReferenceResult& ref, const SliceResult& result) {
    const tomo::Image& image = result.preview.slice;
    if (ref.image.width != image.width || ref.image.height != image.height) return false;
    switch (ref.kind) {
    case ReferenceKind::Exact: {
        const tomo::ReconOptions mode =
            exactReferenceOptions(result.params.options, result.family, result.preview.divergent);
        return ref.params.sameGeometry(result.params) && ref.options.strategy == mode.strategy &&
               ref.options.interpolation == mode.interpolation;
    }
    case ReferenceKind::Truth:
        return ref.params.row == result.params.row && ref.params.region == result.params.region;
    case ReferenceKind::Pinned:
        return true;
    }
    return false;
}

tomo::ReconOptions exactReferenceOptions(const tomo::ReconOptions& like, const QString& family, bool divergent) {
    tomo::ReconOptions o;
    o.filter = like.filter;
    o.device = like.device;
    o.openclDevice = like.openclDevice;
    o.threads = like.threads;
    o.strategy = "cpu-reference";
    if (divergent || family == QLatin1String("cpu")) return o;
    const auto usable = [](const char* name) {
        const tomo::Backend* b = tomo::BackendRegistry::instance().find(name);
        return b && b->unavailableReason().empty();
    };
    if (usable("alu")) {
        o.strategy = "alu"; // linear like cpu-reference's, in float32 arithmetic
    } else if (usable("tex-optimized")) {
        o.strategy = "tex-optimized";
        o.interpolation = tomo::Interpolation::Nearest;
    }
    return o;
}

QString referenceModeLabel(const tomo::ReconOptions& o) {
    if (o.strategy == "cpu-reference") return QObject::tr("cpu-reference (exact)");
    if (o.strategy == "alu") return QObject::tr("alu linear, float32 arithmetic (GPU exact)");
    return QObject::tr("%1 %2, double positions (GPU exact)")
        .arg(QString::fromStdString(o.strategy), QString::fromUtf8(tomo::interpolationName(o.interpolation).data()));
}

std::vector<std::uint8_t> reconstructionDisc(const tomo::Region& region, int grid) {
    std::vector<std::uint8_t> mask(region.pixels(), 0);
    const double c = (grid - 1) / 2.0;
    const double r2 = (grid / 2.0) * (grid / 2.0);
    for (int y = 0; y < region.height; ++y) {
        const double dy = region.y + y - c;
        for (int x = 0; x < region.width; ++x) {
            const double dx = region.x + x - c;
            mask[static_cast<std::size_t>(y) * region.width + x] = dx * dx + dy * dy <= r2 ? 1 : 0;
        }
    }
    return mask;
}

TransferFunction automaticTransferFunction(const ImageStats& stats) {
    TransferFunction tf;
    tf.threshold = backgroundThreshold(stats);
    tf.high = std::max(stats.autoHigh, tf.threshold + std::max(1e-6f, (stats.max - stats.min) * 1e-3f));
    return tf;
}

QString formatSeconds(double s) {
    if (!(s >= 0.0)) return QStringLiteral("–");
    if (s < 1.0) return QStringLiteral("%1 ms").arg(s * 1e3, 0, 'f', s < 0.01 ? 2 : (s < 0.1 ? 1 : 0));
    if (s < 60.0) return QStringLiteral("%1 s").arg(s, 0, 'f', 1);
    const int total = static_cast<int>(std::lround(s));
    if (total < 3600) return QStringLiteral("%1 min %2 s").arg(total / 60).arg(total % 60);
    return QStringLiteral("%1 h %2 min").arg(total / 3600).arg((total % 3600) / 60);
}

QString methodLabel(const tomo::IterativeOptions& o) {
    const QString name = QString::fromUtf8(tomo::methodName(o.method).data()).toUpper();
    if (!o.isIterative()) return name;
    QString label = QObject::tr("%1, %2 iterations").arg(name).arg(o.resolvedIterations());
    if (o.tvWeight) label += QObject::tr(", λ %1").arg(*o.tvWeight);
    return label;
}

} // namespace tomo::ui
