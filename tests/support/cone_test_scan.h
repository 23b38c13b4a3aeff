// The circular scans of the fan/cone-beam tests (core, CLI, CUDA): views
// spread over `span` radians (360 degrees by default), a flat detector of
// square pixels.
#pragma once

#include "tomo/cone_geometry.h"
#include "tomo/phantom.h"

#include <numbers>

namespace tomo::test {

inline CircularConeGeometry circularCone(int views, int columns, int rows, double pixelWidth, double sourceAxis,
                                         double sourceDetector, double span = 2 * std::numbers::pi) {
    CircularConeGeometry g;
    g.angles = uniformAngles(views, span);
    g.sourceAxis = sourceAxis;
    g.sourceDetector = sourceDetector;
    g.columns = columns;
    g.rows = rows;
    g.pixelWidth = pixelWidth;
    return g;
}

} // namespace tomo::test
