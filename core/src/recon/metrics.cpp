#include "tomo/metrics.h"

#include "tomo/error.h"
#include "tomo/worker_pool.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace tomo {

namespace {

std::string sizeText(const Image& i) { return std::to_string(i.width) + "x" + std::to_string(i.height); }

void checkImage(const Image& i, const char* what) {
    if (i.width < 1 || i.height < 1 || i.data.size() != static_cast<std::size_t>(i.width) * i.height)
        throw InvalidArgument(std::string(what) + " image is empty or its data size does not match " + sizeText(i));
}

} // namespace

QualityMetrics compareImages(const Image& result, const Image& reference, std::span<const std::uint8_t> mask,
                             WorkerPool* pool) {
    checkImage(result, "result");
    checkImage(reference, "reference");
    if (result.width != reference.width || result.height != reference.height)
        throw InvalidArgument("compare: result is " + sizeText(result) + " but reference is " + sizeText(reference));
    const std::size_t n = reference.size();
    if (!mask.empty() && mask.size() != n)
        throw InvalidArgument("compare: mask has " + std::to_string(mask.size()) + " values (expected " +
                              std::to_string(n) + ")");

    // Sums of one range of pixels.
    struct Part {
        double sumSq = 0.0, refSq = 0.0, maxAbs = 0.0;
        double refMin = std::numeric_limits<double>::infinity();
        double refMax = -std::numeric_limits<double>::infinity();
        std::size_t pixels = 0;
        std::size_t firstNaN = std::numeric_limits<std::size_t>::max();
    };
    const int parts = pool ? 4 * pool->threads() : 1;
    std::vector<Part> found(static_cast<std::size_t>(parts));
    auto work = [&](int part) {
        Part& p = found[static_cast<std::size_t>(part)];
        const std::size_t first = n * static_cast<std::size_t>(part) / static_cast<std::size_t>(parts);
        const std::size_t last = n * (static_cast<std::size_t>(part) + 1) / static_cast<std::size_t>(parts);
        for (std::size_t i = first; i < last; ++i) {
            if (!mask.empty() && mask[i] == 0) continue;
            const double r = result.data[i];
            const double f = reference.data[i];
            if (std::isnan(r) || std::isnan(f)) {
                p.firstNaN = i;
                return;
            }
            const double d = r - f;
            p.maxAbs = std::max(p.maxAbs, std::abs(d));
            p.sumSq += d * d;
            p.refSq += f * f;
            p.refMin = std::min(p.refMin, f);
            p.refMax = std::max(p.refMax, f);
            ++p.pixels;
        }
    };
    if (parts == 1)
        work(0);
    else
        pool->parallelFor(parts, [&](int part, int) { work(part); });

    QualityMetrics m;
    double sumSq = 0.0, refSq = 0.0;
    double refMin = std::numeric_limits<double>::infinity();
    double refMax = -std::numeric_limits<double>::infinity();
    for (const Part& p : found) {
        if (p.firstNaN != std::numeric_limits<std::size_t>::max()) {
            const std::size_t i = p.firstNaN; // parts in order: the first one found is the first NaN
            throw DataError(std::string("compare: NaN in the ") + (std::isnan(result.data[i]) ? "result" : "reference") +
                            " at pixel (" + std::to_string(i % reference.width) + ", " +
                            std::to_string(i / reference.width) + ")");
        }
        m.maxAbsError = std::max(m.maxAbsError, p.maxAbs);
        sumSq += p.sumSq;
        refSq += p.refSq;
        refMin = std::min(refMin, p.refMin);
        refMax = std::max(refMax, p.refMax);
        m.pixels += p.pixels;
    }
    if (m.pixels == 0) throw InvalidArgument("compare: the mask selects no pixel");

    const double mse = sumSq / static_cast<double>(m.pixels);
    m.referenceRange = refMax - refMin;
    m.rmse = std::sqrt(mse);
    m.psnr = mse == 0.0 ? std::numeric_limits<double>::infinity()
                        : 10.0 * std::log10(m.referenceRange * m.referenceRange / mse);
    m.relativeError = sumSq == 0.0 ? 0.0
                      : refSq == 0.0 ? std::numeric_limits<double>::infinity()
                                     : std::sqrt(sumSq / refSq);
    return m;
}

std::vector<std::uint8_t> discMask(int width, int height, double radius) {
    if (width < 1 || height < 1)
        throw InvalidArgument("disc mask: size " + std::to_string(width) + "x" + std::to_string(height) +
                              " (expected >= 1x1)");
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(width) * height);
    const double cx = (width - 1) / 2.0, cy = (height - 1) / 2.0;
    for (int iy = 0; iy < height; ++iy)
        for (int ix = 0; ix < width; ++ix) {
            const double x = ix - cx, y = iy - cy;
            mask[static_cast<std::size_t>(iy) * width + ix] = x * x + y * y <= radius * radius ? 1 : 0;
        }
    return mask;
}

std::vector<ProfilePoint> lineProfile(const Image& image, double x0, double y0, double x1, double y1, int samples) {
    checkImage(image, "profile");
    if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1))
        throw InvalidArgument("profile: the end points must be finite");
    if (samples < 0 || samples == 1)
        throw InvalidArgument("profile: samples is " + std::to_string(samples) + " (expected 0 = automatic, or >= 2)");
    const double length = std::hypot(x1 - x0, y1 - y0);
    const int n = samples > 0 ? samples : std::max(2, static_cast<int>(std::floor(length)) + 1);

    std::vector<ProfilePoint> out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        const double t = static_cast<double>(i) / (n - 1);
        const double x = x0 + t * (x1 - x0);
        const double y = y0 + t * (y1 - y0);
        double value = std::numeric_limits<double>::quiet_NaN();
        if (x >= 0.0 && y >= 0.0 && x <= image.width - 1 && y <= image.height - 1) {
            // The cell's far corner is clamped so the last row/column samples exactly.
            const int ix = std::min(static_cast<int>(x), std::max(image.width - 2, 0));
            const int iy = std::min(static_cast<int>(y), std::max(image.height - 2, 0));
            const int jx = std::min(ix + 1, image.width - 1);
            const int jy = std::min(iy + 1, image.height - 1);
            const double fx = x - ix, fy = y - iy;
            const double top = (1.0 - fx) * image.at(ix, iy) + fx * image.at(jx, iy);
            const double bottom = (1.0 - fx) * image.at(ix, jy) + fx * image.at(jx, jy);
            value = (1.0 - fy) * top + fy * bottom;
        }
        out[static_cast<std::size_t>(i)] = {t * length, value};
    }
    return out;
}

} // namespace tomo
