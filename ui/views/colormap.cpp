#include "views/colormap.h"

#include "work/image_stats.h"

#include "tomo/worker_pool.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>

namespace tomo::ui {
namespace {

struct Lab {
    double l, a, b;
};

/// CIELAB (D65) -> 8-bit sRGB, clamped into the gamut.
QRgb labToRgb(const Lab& c) {
    auto finv = [](double t) {
        constexpr double d = 6.0 / 29.0;
        return t > d ? t * t * t : 3.0 * d * d * (t - 4.0 / 29.0);
    };
    const double fy = (c.l + 16.0) / 116.0;
    const double x = 0.95047 * finv(fy + c.a / 500.0);
    const double y = 1.00000 * finv(fy);
    const double z = 1.08883 * finv(fy - c.b / 200.0);
    const double lin[3] = {3.2406 * x - 1.5372 * y - 0.4986 * z, -0.9689 * x + 1.8758 * y + 0.0415 * z,
                           0.0557 * x - 0.2040 * y + 1.0570 * z};
    int rgb[3];
    for (int i = 0; i < 3; ++i) {
        double v = std::clamp(lin[i], 0.0, 1.0);
        v = v <= 0.0031308 ? 12.92 * v : 1.055 * std::pow(v, 1.0 / 2.4) - 0.055;
        rgb[i] = static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 255.0));
    }
    return qRgb(rgb[0], rgb[1], rgb[2]);
}

Colormap buildColormap(const QJsonObject& o) {
    Colormap map;
    map.name = o.value(QLatin1String("name")).toString();
    map.label = o.value(QLatin1String("label")).toString(map.name);
    map.diverging = o.value(QLatin1String("kind")).toString() == QLatin1String("diverging");
    const bool lab = o.value(QLatin1String("space")).toString() == QLatin1String("lab");
    std::vector<Lab> points;
    for (const QJsonValue& v : o.value(QLatin1String("points")).toArray()) {
        const QJsonArray p = v.toArray();
        points.push_back({p.at(0).toDouble(), p.at(1).toDouble(), p.at(2).toDouble()});
    }
    if (points.size() < 2) points = {{0, 0, 0}, {255, 255, 255}};
    const int segments = static_cast<int>(points.size()) - 1;
    for (int i = 0; i < 256; ++i) {
        const double t = i / 255.0 * segments;
        const int s = std::min(static_cast<int>(t), segments - 1);
        const double f = t - s;
        const Lab& p0 = points[static_cast<std::size_t>(s)];
        const Lab& p1 = points[static_cast<std::size_t>(s) + 1];
        const Lab c{p0.l + f * (p1.l - p0.l), p0.a + f * (p1.a - p0.a), p0.b + f * (p1.b - p0.b)};
        map.table[static_cast<std::size_t>(i)] =
            lab ? labToRgb(c)
                : qRgb(static_cast<int>(std::lround(c.l)), static_cast<int>(std::lround(c.a)),
                       static_cast<int>(std::lround(c.b)));
    }
    return map;
}

std::vector<Colormap> loadColormaps() {
    std::vector<Colormap> maps;
    QFile file(QStringLiteral(":/colormaps/colormaps.json"));
    if (file.open(QIODevice::ReadOnly)) {
        const QJsonArray list = QJsonDocument::fromJson(file.readAll()).object().value(QLatin1String("colormaps")).toArray();
        for (const QJsonValue& v : list) maps.push_back(buildColormap(v.toObject()));
    }
    auto isGrey = [](const Colormap& m) { return m.name == QLatin1String("grey"); };
    if (std::none_of(maps.begin(), maps.end(), isGrey)) {
        QJsonObject grey{{QLatin1String("name"), QLatin1String("grey")}, {QLatin1String("label"), QLatin1String("Grey")}};
        maps.insert(maps.begin(), buildColormap(grey));
    }
    std::stable_partition(maps.begin(), maps.end(), isGrey);
    return maps;
}

} // namespace

const std::vector<Colormap>& colormaps() {
    static const std::vector<Colormap> maps = loadColormaps();
    return maps;
}

const Colormap& colormap(const QString& name) {
    for (const Colormap& m : colormaps())
        if (m.name == name) return m;
    return colormaps().front();
}

QImage renderImage(const float* data, int width, int height, float low, float high, const Colormap& map,
                   tomo::WorkerPool* pool) {
    QImage image(width, height, QImage::Format_RGB32);
    if (width <= 0 || height <= 0) return image;
    const float span = high > low ? high - low : 1.0f;
    const float scale = 255.0f / span;
    uchar* bits = image.bits(); // detached once here, not per row on the pool's threads
    const qsizetype stride = image.bytesPerLine();
    auto rows = [&](int first, int last) {
        for (int y = first; y < last; ++y) {
            auto* line = reinterpret_cast<QRgb*>(bits + y * stride);
            const float* row = data + static_cast<std::size_t>(y) * width;
            for (int x = 0; x < width; ++x) {
                const float v = (row[x] - low) * scale;
                // NaN fails both comparisons and lands on entry 0.
                const int i = v > 0.0f ? (v < 255.0f ? static_cast<int>(v + 0.5f) : 255) : 0;
                line[x] = map.table[static_cast<std::size_t>(i)];
            }
        }
    };
    if (!pool) {
        rows(0, height);
        return image;
    }
    const int parts = pool->threads();
    const int size = (height + parts - 1) / parts;
    pool->parallelFor(parts, [&](int i, int) { rows(std::min(height, i * size), std::min(height, (i + 1) * size)); });
    return image;
}

namespace {

/// The source pixels output pixel i of `out` covers when `in` pixels shrink
/// to `out`, with their share of it (the weights of one output sum to 1).
struct Tap {
    int index;
    float weight;
};
std::vector<std::vector<Tap>> areaTaps(int in, int out) {
    std::vector<std::vector<Tap>> taps(static_cast<std::size_t>(out));
    const double step = static_cast<double>(in) / out;
    for (int i = 0; i < out; ++i) {
        const double begin = i * step, end = std::min<double>(in, (i + 1) * step);
        for (int k = static_cast<int>(begin); k < in && k < end; ++k) {
            const double covered = std::min<double>(end, k + 1) - std::max<double>(begin, k);
            if (covered > 0.0) taps[static_cast<std::size_t>(i)].push_back({k, static_cast<float>(covered / (end - begin))});
        }
    }
    return taps;
}

} // namespace

QImage shrinkForView(const QImage& rendered, double zoom, tomo::WorkerPool* pool) {
    if (!(zoom > 0.0 && zoom < 1.0) || rendered.isNull()) return {};
    const QSize size(std::max(1, static_cast<int>(std::lround(rendered.width() * zoom))),
                     std::max(1, static_cast<int>(std::lround(rendered.height() * zoom))));
    const QImage source = rendered.format() == QImage::Format_RGB32 ? rendered
                                                                    : rendered.convertToFormat(QImage::Format_RGB32);
    const int width = source.width();
    const auto columns = areaTaps(width, size.width()), rows = areaTaps(source.height(), size.height());
    QImage out(size, QImage::Format_RGB32);
    uchar* bits = out.bits(); // detached once here, not on the pool's threads
    const qsizetype stride = out.bytesPerLine();
    inParts(static_cast<std::size_t>(size.height()), pool, [&](std::size_t first, std::size_t count, int) {
        std::vector<float> sums(static_cast<std::size_t>(width) * 3); // the output row's source rows, blended
        for (std::size_t y = first; y < first + count; ++y) {
            std::fill(sums.begin(), sums.end(), 0.0f);
            for (const Tap& row : rows[y]) {
                const auto* line = reinterpret_cast<const QRgb*>(source.constScanLine(row.index));
                for (int x = 0; x < width; ++x) {
                    sums[3 * x] += row.weight * static_cast<float>(qRed(line[x]));
                    sums[3 * x + 1] += row.weight * static_cast<float>(qGreen(line[x]));
                    sums[3 * x + 2] += row.weight * static_cast<float>(qBlue(line[x]));
                }
            }
            auto* target = reinterpret_cast<QRgb*>(bits + static_cast<qsizetype>(y) * stride);
            for (int x = 0; x < size.width(); ++x) {
                float r = 0.0f, g = 0.0f, b = 0.0f;
                for (const Tap& column : columns[static_cast<std::size_t>(x)]) {
                    r += column.weight * sums[3 * column.index];
                    g += column.weight * sums[3 * column.index + 1];
                    b += column.weight * sums[3 * column.index + 2];
                }
                target[x] = qRgb(std::clamp(static_cast<int>(r + 0.5f), 0, 255),
                                 std::clamp(static_cast<int>(g + 0.5f), 0, 255),
                                 std::clamp(static_cast<int>(b + 0.5f), 0, 255));
            }
        }
    });
    return out;
}

QImage colorbarImage(const Colormap& map, int width, int height) {
    QImage image(std::max(1, width), std::max(1, height), QImage::Format_RGB32);
    for (int y = 0; y < image.height(); ++y) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
        for (int x = 0; x < image.width(); ++x)
            line[x] = map.table[static_cast<std::size_t>(image.width() > 1 ? x * 255 / (image.width() - 1) : 0)];
    }
    return image;
}

} // namespace tomo::ui
