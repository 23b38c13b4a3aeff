// SliceView: a float image on screen with zoom, pan, window/level,
// colormaps, the value under the cursor, a scale bar, a colour legend and a
// line tool for profiles. Knows nothing about reconstruction.
//
// Mouse: wheel zooms about the cursor; middle drag (or left drag in Pan mode)
// pans; right drag changes window (horizontal) and level (vertical); left
// drag in Line mode draws the profile line, in Region mode selects a region.
// Double click fits the image. Image coordinates: pixel centres at integers.
#pragma once

#include "views/colormap.h"
#include "views/value_unit.h"

#include "tomo/image.h"

#include <QImage>
#include <QLineF>
#include <QPoint>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <optional>

namespace tomo::ui {

class SliceView : public QWidget {
    Q_OBJECT
public:
    enum class Tool { Pan, Line, Region };
    Q_ENUM(Tool)

    explicit SliceView(QWidget* parent = nullptr);

    /// Shows `image`; `origin` is the position of its pixel (0, 0) in the
    /// full slice (for coordinates shown to the user). Zoom and pan are kept
    /// when the size does not change, otherwise the image is fitted.
    void setImage(const tomo::Image& image, QPoint origin = {});
    /// Shows `image` with its colours made elsewhere (the worker):
    /// `rendered` is `image` through `colormap` with the window [low, high],
    /// which becomes the view's window and colormap; nothing is mapped here.
    /// `scaled` (may be null) is `rendered` already shrunk for a zoom of
    /// `scaledZoom` device pixels per image pixel: painted as it is while the
    /// view is at that zoom.
    /// The view shares `image` (no copy of the values).
    void setPreparedImage(std::shared_ptr<const tomo::Image> image, QPoint origin, const QImage& rendered, float low,
                          float high, const QString& colormap, const QImage& scaled = {}, double scaledZoom = 0.0);
    /// Device pixels per image pixel now (zoom × device pixel ratio).
    double deviceZoom() const;
    void clear();
    /// Times this view mapped values to colours itself (the UI thread's share).
    int renderCount() const { return m_renderCount; }
    /// Times a paint scaled the image itself rather than showing one scaled on the worker.
    int scaleCount() const { return m_scaleCount; }
    /// The longest paintEvent since the last reset, in seconds (for --measure-latency).
    double longestPaintSeconds() const { return m_longestPaint; }
    void resetLongestPaint() { m_longestPaint = 0.0; }
    const tomo::Image& image() const { return *m_image; }
    QPoint origin() const { return m_origin; }
    bool hasImage() const { return m_image->width > 0; }

    void setWindow(float low, float high);
    float windowLow() const { return m_low; }
    float windowHigh() const { return m_high; }
    void setColormap(const QString& name);
    QString colormapName() const { return m_colormap->name; }

    /// Caption drawn in the top-left corner (e.g. "Result · cpu · linear").
    void setCaption(const QString& caption);
    QString caption() const { return m_caption; }
    /// Physical size of one pixel in micrometres (0: the scale bar counts pixels).
    void setPixelSize(double micrometres);
    double pixelSize() const { return m_pixelSize; }
    /// How the legend shows values.
    void setValueUnit(const ValueUnit& unit);
    void setTool(Tool tool);
    Tool tool() const { return m_tool; }

    /// The profile line in image coordinates (unset: none drawn).
    void setLine(const std::optional<QLineF>& line);
    std::optional<QLineF> line() const { return m_line; }

    /// Zoom (screen pixels per image pixel) and the image point at the view's centre.
    double zoom() const { return m_scale; }
    QPointF centre() const;
    void setView(double zoom, QPointF centre);
    void fitToWindow();
    void zoomOneToOne();

    /// The image coordinate under a widget position.
    QPointF toImage(QPointF widgetPos) const;
    QPointF toWidget(QPointF imagePos) const;

    QSize sizeHint() const override { return {640, 640}; }

signals:
    /// Value under the cursor (inside = false when the cursor left the image).
    void hovered(QPoint fullSlicePixel, float value, bool inside);
    void windowChanged(float low, float high);
    void lineChanged(const QLineF& line);
    /// A region selected with the Region tool, in full-slice pixels.
    void regionSelected(const QRect& fullSliceRegion);
    /// Zoom or pan changed by the user (for linking views).
    void viewChanged(double zoom, QPointF centre);
    /// The image last set was painted for the first time (it is on screen).
    void imagePainted();

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void wheelEvent(QWheelEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    void mouseDoubleClickEvent(QMouseEvent*) override;
    void leaveEvent(QEvent*) override;

private:
    void render();
    void drawScaleBar(QPainter& p);
    void drawLegend(QPainter& p);
    void drawScaledOrRendered(QPainter& p, const QRectF& target);
    /// m_scaled made here (on the UI thread, over a pool) for the view's zoom.
    void shrinkForZoom();
    void drawOverlays(QPainter& p);
    /// A shrunk image made for a zoom within this share of the view's is
    /// drawn stretched until the view's size settles (m_rescale).
    static constexpr double kStretchLimit = 0.25;
    void zoomAbout(QPointF widgetPos, double factor);

    std::shared_ptr<const tomo::Image> m_image; // never null
    QPoint m_origin;
    QImage m_rendered;
    QImage m_scaled;              // m_rendered shrunk on the worker for m_scaledZoom
    QTimer* m_rescale = nullptr;  // single shot: shrinks for the view's zoom once its size settles
    double m_scaledZoom = 0.0;
    bool m_renderPending = false; // m_rendered is out of date: paintEvent maps again
    bool m_newImage = false;      // set since the last paint: imagePainted() follows the next one
    int m_renderCount = 0;
    int m_scaleCount = 0;
    double m_longestPaint = 0.0;
    float m_low = 0.0f;
    float m_high = 1.0f;
    const Colormap* m_colormap = nullptr;
    QString m_caption;
    double m_pixelSize = 0.0;
    ValueUnit m_unit;
    Tool m_tool = Tool::Pan;

    double m_scale = 1.0;   // screen pixels per image pixel
    QPointF m_offset;       // widget position of the image's top-left corner
    bool m_fitted = false;  // follow the window size until the user zooms or pans

    enum class Drag { None, Pan, Window, Line, Region } m_drag = Drag::None;
    QPointF m_dragStart;
    QPointF m_dragOffset;
    float m_dragLow = 0.0f, m_dragHigh = 1.0f;
    std::optional<QLineF> m_line;
    std::optional<QLineF> m_lineBeforeDrag; // restored when a line drag was only a click
    std::optional<QRectF> m_rubberBand;
};

} // namespace tomo::ui
