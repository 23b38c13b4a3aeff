// Colour tables for float images: grey, perceptual sequential maps and a
// diverging map for signed differences (defined in
// resources/colormaps/colormaps.json as CIELAB paths).
#pragma once

#include <QImage>
#include <QString>
#include <QVector>

#include <array>
#include <vector>

namespace tomo {
class WorkerPool;
}

namespace tomo::ui {

struct Colormap {
    QString name;   ///< key stored in settings, e.g. "grey", "aurora"
    QString label;  ///< shown in menus
    bool diverging = false;
    std::array<QRgb, 256> table{};
};

/// Every colormap of the resources, grey first. Loaded once; throws nothing
/// (a damaged resource is a build error caught by the GUI tests).
const std::vector<Colormap>& colormaps();

/// The colormap called `name`, or grey when there is none.
const Colormap& colormap(const QString& name);

/// Maps values linearly from [low, high] onto the table (values outside are
/// clamped, NaN shows as the table's first entry). Returns an RGB32 image;
/// its rows are spread over `pool` when given.
QImage renderImage(const float* data, int width, int height, float low, float high, const Colormap& map,
                   tomo::WorkerPool* pool = nullptr);

/// `rendered` (RGB32) scaled down by `zoom` when 0 < zoom < 1 (what a view
/// showing it at that zoom paints), else a null image: each output pixel
/// the area-weighted mean of the source pixels it covers (Qt's smooth
/// down-scaling, which runs on one thread: ~15 ms for 2048^2), its rows
/// spread over `pool` when given.
QImage shrinkForView(const QImage& rendered, double zoom, tomo::WorkerPool* pool = nullptr);

/// A horizontal strip of the table, for legends and menus.
QImage colorbarImage(const Colormap& map, int width, int height);

} // namespace tomo::ui
