#include "work/slice_display.h"

#include "views/colormap.h"

#include "tomo/error.h"

#include <QThread>

#include <algorithm>
#include <cmath>

namespace tomo::ui {

namespace {

/// The colormap of differences (see resources/colormaps).
const QString kDifferenceColormap = QStringLiteral("coolwarm");

/// Symmetric display window of a difference image: the 99.5th percentile of
/// |difference| in the compared pixels, from at most ~256 k of them.
float differenceRange(const tomo::Image& difference, std::span<const std::uint8_t> mask, double maxAbsError) {
    const std::size_t stride = std::max<std::size_t>(1, difference.data.size() >> 18);
    std::vector<float> magnitudes;
    magnitudes.reserve(difference.data.size() / stride + 1);
    for (std::size_t i = 0; i < difference.data.size(); i += stride)
        if (mask.empty() || mask[i]) magnitudes.push_back(std::abs(difference.data[i]));
    float range = magnitudes.empty() ? 0.0f : percentile(magnitudes, 99.5);
    if (!(range > 0.0f)) range = std::max(1e-6f, static_cast<float>(maxAbsError));
    return range;
}

} // namespace

SliceDisplay prepareDisplay(const tomo::Image& image, const ImageStats& stats, const DisplaySettings& settings,
                            tomo::WorkerPool* pool) {
    SliceDisplay d;
    d.low = settings.autoWindow ? stats.autoLow : settings.low;
    d.high = settings.autoWindow ? stats.autoHigh : settings.high;
    d.colormap = colormap(settings.colormap).name;
    d.rendered = renderImage(image.data.data(), image.width, image.height, d.low, d.high, colormap(d.colormap), pool);
    d.scaled = shrinkForView(d.rendered, settings.sliceZoom, pool);
    d.zoom = d.scaled.isNull() ? 0.0 : settings.sliceZoom;
    d.preparedOn = QThread::currentThread();
    return d;
}

Comparison compareWithReference(const SliceResult& result, const ReferenceResult& reference,
                                std::span<const std::uint8_t> mask, double zoom, tomo::WorkerPool* pool,
                                const std::function<bool()>& abandoned) {
    auto checkpoint = [&] {
        if (abandoned && abandoned()) throw tomo::Cancelled();
    };
    Comparison c;
    c.resultId = result.id;
    c.kind = reference.kind;
    c.referenceLabel = reference.label;
    c.referenceSeconds = reference.seconds;
    c.preparedOn = QThread::currentThread();
    const tomo::Image& image = result.preview.slice;
    try {
        c.metrics = tomo::compareImages(image, reference.image, mask, pool);
    } catch (const std::exception& e) {
        c.error = QString::fromUtf8(e.what());
        return c;
    }
    checkpoint();
    auto difference = std::make_shared<tomo::Image>(image.width, image.height);
    inParts(image.data.size(), pool, [&](std::size_t first, std::size_t count, int) {
        for (std::size_t i = first; i < first + count; ++i) difference->data[i] = image.data[i] - reference.image.data[i];
    });
    checkpoint();
    c.range = differenceRange(*difference, mask, c.metrics->maxAbsError);
    c.rendered = renderImage(difference->data.data(), difference->width, difference->height, -c.range, c.range,
                             colormap(kDifferenceColormap), pool);
    c.difference = std::move(difference);
    checkpoint();
    c.scaled = shrinkForView(c.rendered, zoom, pool);
    c.zoom = c.scaled.isNull() ? 0.0 : zoom;
    return c;
}

} // namespace tomo::ui
