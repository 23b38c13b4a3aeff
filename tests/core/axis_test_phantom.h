// Exact phantom sinograms whose rotation axis sits at a chosen sub-pixel
// position: shared by the axis finder, sweep and tilted-axis tests.
#pragma once

#include "tomo/image.h"
#include "tomo/phantom.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace tomo::test {

/// Sinogram of the 2D Shepp-Logan phantom (radius 0.35 * bins) as seen by a
/// detector of `bins` whose rotation axis is at (bins - 1) / 2 + tenths / 10:
/// a detector ten times finer (exact line integrals) is block-averaged with
/// an offset. |tenths| <= 200.
inline Image phantomWithAxis(int bins, const std::vector<double>& angles, int tenths) {
    const int margin = 200; // fine bins on each side for the offset
    PhantomSpec fine;
    fine.shapes = sheppLogan2D();
    fine.bins = 10 * bins + 2 * margin;
    fine.radiusFraction = 7.0 * bins / fine.bins;
    const ImageStack p = projectPhantom(fine, angles, 1);
    // Coarse bin k averages fine bins [10k + o, 10k + o + 10), centred at fine
    // 10k + o + 4.5; the axis is at fine (F - 1) / 2 = 5 bins + margin - 0.5,
    // i.e. at coarse (bins - 1) / 2 + (margin - o) / 10: o = margin - tenths.
    const int offset = margin - tenths;
    Image sino(bins, static_cast<int>(angles.size()));
    for (int a = 0; a < sino.height; ++a)
        for (int k = 0; k < bins; ++k) {
            double sum = 0.0;
            for (int j = 0; j < 10; ++j) sum += p.data[static_cast<std::size_t>(a) * fine.bins + 10 * k + offset + j];
            sino.at(k, a) = static_cast<float>(sum / 10);
        }
    return sino;
}

/// A stack of phantomWithAxis rows, row r with its axis moved by
/// tenthsPerRow * r tenths of a pixel (a tilted axis when non-zero).
inline ImageStack tiltedPhantom(int bins, const std::vector<double>& angles, int rows, int firstTenths,
                                int tenthsPerRow) {
    ImageStack stack(bins, static_cast<int>(angles.size()), rows);
    for (int r = 0; r < rows; ++r) {
        const Image row = phantomWithAxis(bins, angles, firstTenths + tenthsPerRow * r);
        std::copy(row.data.begin(), row.data.end(), stack.image(r).begin());
    }
    return stack;
}

} // namespace tomo::test
