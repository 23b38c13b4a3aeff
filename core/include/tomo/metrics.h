// Quality figures comparing a reconstruction with a reference (seed 000 §2.4,
// seed 002 §7.2), and profiles along a line.
#pragma once

#include "tomo/image.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tomo {

class WorkerPool;

struct QualityMetrics {
    double maxAbsError = 0.0;
    double rmse = 0.0;
    /// 10 log10(range^2 / MSE) with range = max - min of the reference
    /// (seed 002 §7.2 uses the full value range); +inf when identical.
    double psnr = 0.0;
    /// ||result - reference||_2 / ||reference||_2.
    double relativeError = 0.0;
    /// max - min of the reference over the compared pixels (PSNR's range).
    double referenceRange = 0.0;
    std::size_t pixels = 0;
};

/// Compares two images of equal size, over all pixels or only where
/// mask[i] != 0. Throws InvalidArgument if the sizes differ or the mask is
/// empty of selected pixels. NaN anywhere in the compared pixels -> DataError
/// (naming the first). With a pool the pixels are split over its threads
/// (sums in another order: equal to the single-threaded figures to double
/// rounding).
QualityMetrics compareImages(const Image& result, const Image& reference,
                             std::span<const std::uint8_t> mask = {}, WorkerPool* pool = nullptr);

/// Mask of the pixels inside a centred disc of radius `radius` pixels
/// (pixel centres per geometry.h): the region where FBP of truncation-free
/// data is meaningful.
std::vector<std::uint8_t> discMask(int width, int height, double radius);

struct ProfilePoint {
    double distance; ///< pixels from the start point
    double value;    ///< bilinear sample
};

/// Samples the image along the segment from (x0, y0) to (x1, y1) (pixel
/// coordinates, pixel centres at integers) with `samples` points (default:
/// one per pixel of length, at least 2), bilinear; points outside -> NaN.
std::vector<ProfilePoint> lineProfile(const Image& image, double x0, double y0, double x1, double y1,
                                      int samples = 0);

} // namespace tomo
