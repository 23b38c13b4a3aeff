#include "views/slice_view.h"
#include "work/latency_probe.h"

#include "tomo/worker_pool.h"

#include <QElapsedTimer>
#include <QThread>

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <utility>

namespace tomo::ui {
namespace {

constexpr double kMinZoom = 1.0 / 32.0;
constexpr double kMaxZoom = 64.0;

/// 1, 2 or 5 times a power of ten, the largest not above `value`.
double niceBelow(double value) {
    if (!(value > 0.0)) return 1.0;
    const double p = std::pow(10.0, std::floor(std::log10(value)));
    for (double m : {5.0, 2.0, 1.0})
        if (m * p <= value) return m * p;
    return p;
}

QString formatValue(double v) {
    return QString::number(v, 'g', std::abs(v) < 1e-3 && v != 0.0 ? 3 : 4);
}

void drawLabel(QPainter& p, const QPointF& topLeft, const QString& text) {
    const QFontMetrics fm(p.font());
    const QRectF box(topLeft, QSizeF(fm.horizontalAdvance(text) + 10, fm.height() + 4));
    p.fillRect(box, QColor(0, 0, 0, 150));
    p.setPen(Qt::white);
    p.drawText(box, Qt::AlignCenter, text);
}

/// Threads for the shrinks a view makes itself on the UI thread (rare: a
/// resize): ~2 ms for 2048^2 instead of ~20 ms on one thread. Two cores
/// stay free, as for the controller's prepare pool.
tomo::WorkerPool& viewPool() {
    static tomo::WorkerPool pool(std::max(1, QThread::idealThreadCount() - 2));
    return pool;
}

} // namespace

SliceView::SliceView(QWidget* parent)
    : QWidget(parent), m_image(std::make_shared<const tomo::Image>()), m_colormap(&colormap(QStringLiteral("grey"))) {
    setMouseTracking(true);
    setMinimumSize(160, 160);
    setFocusPolicy(Qt::ClickFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    m_rescale = new QTimer(this);
    m_rescale->setSingleShot(true);
    m_rescale->setInterval(150);
    connect(m_rescale, &QTimer::timeout, this, [this] {
        if (m_scale < 1.0 && !m_rendered.isNull() && std::abs(deviceZoom() - m_scaledZoom) > 1e-9) {
            shrinkForZoom();
            update();
        }
    });
}

void SliceView::setImage(const tomo::Image& image, QPoint origin) {
    const bool sameSize = image.width == m_image->width && image.height == m_image->height;
    m_image = std::make_shared<const tomo::Image>(image);
    m_origin = origin;
    m_renderPending = true;
    m_newImage = true;
    if (!sameSize || m_fitted) fitToWindow();
    update();
}

void SliceView::setPreparedImage(std::shared_ptr<const tomo::Image> image, QPoint origin, const QImage& rendered,
                                 float low, float high, const QString& colormapName, const QImage& scaled,
                                 double scaledZoom) {
    const bool sameSize = image->width == m_image->width && image->height == m_image->height;
    m_image = std::move(image);
    m_origin = origin;
    m_low = low;
    m_high = high;
    m_colormap = &colormap(colormapName);
    m_rendered = rendered;
    m_scaled = scaled;
    m_scaledZoom = scaled.isNull() ? 0.0 : scaledZoom;
    m_renderPending = rendered.size() != QSize(m_image->width, m_image->height);
    m_newImage = true;
    if (!sameSize || m_fitted) fitToWindow();
    update();
}

void SliceView::clear() {
    m_image = std::make_shared<const tomo::Image>();
    m_rendered = QImage();
    m_renderPending = false;
    m_line.reset();
    update();
}

void SliceView::setWindow(float low, float high) {
    if (!(high > low)) high = low + std::max(1e-6f, std::abs(low) * 1e-6f);
    if (low == m_low && high == m_high) return;
    m_low = low;
    m_high = high;
    m_renderPending = true;
    update();
}

void SliceView::setColormap(const QString& name) {
    if (&colormap(name) == m_colormap) return;
    m_colormap = &colormap(name);
    m_renderPending = true;
    update();
}

void SliceView::setCaption(const QString& caption) {
    m_caption = caption;
    setToolTip(caption);
    update();
}

void SliceView::setPixelSize(double micrometres) {
    m_pixelSize = std::max(0.0, micrometres);
    update();
}

void SliceView::setValueUnit(const ValueUnit& unit) {
    m_unit = unit;
    update();
}

void SliceView::setTool(Tool tool) {
    m_tool = tool;
    setCursor(tool == Tool::Pan ? Qt::OpenHandCursor : Qt::CrossCursor);
}

void SliceView::setLine(const std::optional<QLineF>& line) {
    m_line = line;
    update();
}

double SliceView::deviceZoom() const { return m_scale * devicePixelRatioF(); }

QPointF SliceView::centre() const { return toImage(QPointF(width() / 2.0, height() / 2.0)); }

void SliceView::setView(double zoom, QPointF centre) {
    m_scale = std::clamp(zoom, kMinZoom, kMaxZoom);
    m_offset = QPointF(width() / 2.0, height() / 2.0) - (centre + QPointF(0.5, 0.5)) * m_scale;
    m_fitted = false;
    update();
}

void SliceView::fitToWindow() {
    if (m_image->width <= 0) return;
    const double margin = 8.0;
    m_scale = std::clamp(std::min((width() - 2 * margin) / m_image->width, (height() - 2 * margin) / m_image->height),
                         kMinZoom, kMaxZoom);
    m_offset = QPointF((width() - m_image->width * m_scale) / 2.0, (height() - m_image->height * m_scale) / 2.0);
    m_fitted = true;
    update();
}

void SliceView::zoomOneToOne() {
    setView(1.0, centre());
    emit viewChanged(m_scale, centre());
}

QPointF SliceView::toImage(QPointF w) const { return (w - m_offset) / m_scale - QPointF(0.5, 0.5); }
QPointF SliceView::toWidget(QPointF i) const { return m_offset + (i + QPointF(0.5, 0.5)) * m_scale; }

void SliceView::render() {
    m_renderPending = false;
    if (m_image->width <= 0) {
        m_rendered = QImage();
        return;
    }
    m_rendered = renderImage(m_image->data.data(), m_image->width, m_image->height, m_low, m_high, *m_colormap);
    m_scaled = QImage(); // made for the colours before
    m_scaledZoom = 0.0;
    ++m_renderCount;
}

void SliceView::paintEvent(QPaintEvent*) {
    noteUiActivity("view-paint");
    QElapsedTimer timer;
    timer.start();
    struct Longest { // on every way out
        QElapsedTimer& timer;
        double& longest;
        ~Longest() { longest = std::max(longest, timer.nsecsElapsed() / 1e9); }
    } longest{timer, m_longestPaint};
    // Colours are mapped here, once per change that shows: a new image and
    // its window arrive one after the other, and a hidden view maps nothing.
    if (m_renderPending) render();
    QPainter p(this);
    p.fillRect(rect(), QColor(24, 26, 30));
    if (m_rendered.isNull()) {
        p.setPen(QColor(150, 150, 150));
        p.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
                   m_caption.isEmpty() ? tr("No image") : m_caption);
        return;
    }
    const QRectF target(m_offset, QSizeF(m_image->width * m_scale, m_image->height * m_scale));
    const bool otherZoom = m_scale < 1.0 && std::abs(deviceZoom() - m_scaledZoom) > 1e-9;
    if (otherZoom && !m_scaled.isNull() && std::abs(deviceZoom() / m_scaledZoom - 1.0) < kStretchLimit) {
        // Shrunk on the worker for a zoom close to this one (the view was
        // resized meanwhile, e.g. by its panel's text): drawn stretched now,
        // shrunk properly here only once the size has settled.
        m_rescale->start();
        p.setRenderHint(QPainter::SmoothPixmapTransform);
        p.drawImage(target, m_scaled);
    } else {
        // Not shrunk for this zoom yet (the worker made it for another one):
        // once here, then kept for the next paints at this zoom.
        if (otherZoom) shrinkForZoom();
        drawScaledOrRendered(p, target);
    }
    drawOverlays(p);
}

void SliceView::shrinkForZoom() {
    m_scaled = shrinkForView(m_rendered, deviceZoom(), &viewPool());
    m_scaledZoom = deviceZoom();
    ++m_scaleCount;
}

void SliceView::drawScaledOrRendered(QPainter& p, const QRectF& target) {
    if (m_scale < 1.0) {
        QImage scaled = m_scaled; // a plain copy at this zoom
        scaled.setDevicePixelRatio(devicePixelRatioF());
        p.drawImage(target.topLeft(), scaled);
    } else {
        p.drawImage(target, m_rendered);
    }
}

void SliceView::drawOverlays(QPainter& p) {
    p.setRenderHint(QPainter::Antialiasing);

    if (m_line) {
        const QLineF l(toWidget(m_line->p1()), toWidget(m_line->p2()));
        p.setPen(QPen(QColor(0, 0, 0, 160), 4));
        p.drawLine(l);
        p.setPen(QPen(QColor(255, 200, 40), 2));
        p.drawLine(l);
        p.setBrush(QColor(255, 200, 40));
        p.drawEllipse(l.p1(), 3.5, 3.5);
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(l.p2(), 5, 5);
    }
    if (m_rubberBand) {
        p.setPen(QPen(QColor(80, 200, 255), 1.5, Qt::DashLine));
        p.drawRect(QRectF(toWidget(m_rubberBand->topLeft()), toWidget(m_rubberBand->bottomRight())).normalized());
    }
    if (!m_caption.isEmpty()) {
        // A narrow view shows the start of the caption; the tooltip has all of it.
        const QString caption = QFontMetrics(p.font()).elidedText(m_caption, Qt::ElideRight, std::max(40, width() - 24));
        drawLabel(p, QPointF(6, 6), caption);
    }
    drawScaleBar(p);
    drawLegend(p);
    if (std::exchange(m_newImage, false)) emit imagePainted();
}

void SliceView::drawScaleBar(QPainter& p) {
    const double targetImagePixels = 120.0 / m_scale;
    double length = 0.0;
    QString text;
    if (m_pixelSize > 0.0) {
        const double um = niceBelow(targetImagePixels * m_pixelSize);
        length = um / m_pixelSize;
        text = um >= 1000.0 ? QStringLiteral("%1 mm").arg(um / 1000.0) : QStringLiteral("%1 µm").arg(um);
    } else {
        length = niceBelow(targetImagePixels);
        text = QStringLiteral("%1 px").arg(length);
    }
    const double screen = length * m_scale;
    const QPointF start(14, height() - 18);
    p.setPen(QPen(QColor(0, 0, 0, 170), 6, Qt::SolidLine, Qt::FlatCap));
    p.drawLine(start, start + QPointF(screen, 0));
    p.setPen(QPen(Qt::white, 3, Qt::SolidLine, Qt::FlatCap));
    p.drawLine(start, start + QPointF(screen, 0));
    const QFontMetrics fm(p.font());
    drawLabel(p, QPointF(start.x() - 2, start.y() - fm.height() - 12), text);
}

void SliceView::drawLegend(QPainter& p) {
    const QFontMetrics fm(p.font());
    const QString lo = formatValue(m_unit.shown(m_low)), hi = formatValue(m_unit.shown(m_high)) %
                         (m_unit.symbol.isEmpty() ? QString() : QLatin1Char(' ') % m_unit.symbol);
    // Wide enough for both labels with a gap between them.
    const int w = std::max(150, fm.horizontalAdvance(lo) + fm.horizontalAdvance(hi) + 16), h = 10;
    const QRect bar(width() - w - 14, height() - h - 14, w, h);
    const QRect box = bar.adjusted(-6, -fm.height() - 8, 6, 6);
    p.fillRect(box, QColor(0, 0, 0, 150));
    p.drawImage(bar, colorbarImage(*m_colormap, w, 1));
    p.setPen(Qt::white);
    p.drawText(QRect(bar.left(), box.top() + 2, w, fm.height()), Qt::AlignLeft, lo);
    p.drawText(QRect(bar.left(), box.top() + 2, w, fm.height()), Qt::AlignRight, hi);
}

void SliceView::resizeEvent(QResizeEvent*) {
    if (m_fitted) fitToWindow();
}

void SliceView::zoomAbout(QPointF widgetPos, double factor) {
    const QPointF anchor = toImage(widgetPos);
    m_scale = std::clamp(m_scale * factor, kMinZoom, kMaxZoom);
    m_offset = widgetPos - (anchor + QPointF(0.5, 0.5)) * m_scale;
    m_fitted = false;
    update();
    emit viewChanged(m_scale, centre());
}

void SliceView::wheelEvent(QWheelEvent* e) {
    const double steps = e->angleDelta().y() / 120.0;
    if (steps == 0.0 || m_image->width <= 0) return;
    zoomAbout(e->position(), std::pow(1.25, steps));
    e->accept();
}

void SliceView::mousePressEvent(QMouseEvent* e) {
    if (m_image->width <= 0) return;
    m_dragStart = e->position();
    if (e->button() == Qt::MiddleButton || (e->button() == Qt::LeftButton && m_tool == Tool::Pan)) {
        m_drag = Drag::Pan;
        m_dragOffset = m_offset;
        setCursor(Qt::ClosedHandCursor);
    } else if (e->button() == Qt::RightButton) {
        m_drag = Drag::Window;
        m_dragLow = m_low;
        m_dragHigh = m_high;
    } else if (e->button() == Qt::LeftButton && m_tool == Tool::Line) {
        m_drag = Drag::Line;
        m_lineBeforeDrag = m_line;
        const QPointF a = toImage(e->position());
        m_line = QLineF(a, a);
    } else if (e->button() == Qt::LeftButton && m_tool == Tool::Region) {
        m_drag = Drag::Region;
        const QPointF a = toImage(e->position());
        m_rubberBand = QRectF(a, a);
    }
    update();
}

void SliceView::mouseMoveEvent(QMouseEvent* e) {
    const QPointF pos = e->position();
    switch (m_drag) {
    case Drag::Pan:
        m_offset = m_dragOffset + (pos - m_dragStart);
        m_fitted = false;
        update();
        emit viewChanged(m_scale, centre());
        break;
    case Drag::Window: {
        // Right drag: horizontal = window width, vertical = level (centre).
        const double width0 = m_dragHigh - m_dragLow;
        const double level0 = (m_dragHigh + m_dragLow) / 2.0;
        const QPointF d = pos - m_dragStart;
        const double w = std::max(1e-9, width0 * std::exp(d.x() / 200.0));
        const double level = level0 - d.y() / 300.0 * width0;
        setWindow(static_cast<float>(level - w / 2.0), static_cast<float>(level + w / 2.0));
        emit windowChanged(m_low, m_high);
        break;
    }
    case Drag::Line:
        m_line->setP2(toImage(pos));
        update();
        break;
    case Drag::Region:
        m_rubberBand->setBottomRight(toImage(pos));
        update();
        break;
    case Drag::None:
        break;
    }
    if (m_image->width > 0) {
        const QPointF ip = toImage(pos);
        const int x = static_cast<int>(std::lround(ip.x()));
        const int y = static_cast<int>(std::lround(ip.y()));
        const bool inside = x >= 0 && y >= 0 && x < m_image->width && y < m_image->height;
        emit hovered(QPoint(x, y) + m_origin, inside ? m_image->at(x, y) : 0.0f, inside);
    }
}

void SliceView::mouseReleaseEvent(QMouseEvent*) {
    const Drag drag = m_drag;
    m_drag = Drag::None;
    if (drag == Drag::Pan) setTool(m_tool); // the tool's cursor again (a middle drag pans in every tool)
    if (drag == Drag::Line && m_line) {
        if (m_line->length() * m_scale < 3.0) m_line = m_lineBeforeDrag; // a click, not a line: keep the old one
        else emit lineChanged(*m_line);
    } else if (drag == Drag::Region && m_rubberBand) {
        const QRectF r = m_rubberBand->normalized();
        m_rubberBand.reset();
        const QRect pixels = QRect(QPoint(static_cast<int>(std::ceil(r.left())), static_cast<int>(std::ceil(r.top()))),
                                   QPoint(static_cast<int>(std::floor(r.right())), static_cast<int>(std::floor(r.bottom()))))
                                 .intersected(QRect(0, 0, m_image->width, m_image->height));
        if (pixels.width() >= 4 && pixels.height() >= 4) emit regionSelected(pixels.translated(m_origin));
    }
    update();
}

void SliceView::mouseDoubleClickEvent(QMouseEvent*) {
    fitToWindow();
    emit viewChanged(m_scale, centre());
}

void SliceView::leaveEvent(QEvent*) { emit hovered({}, 0.0f, false); }

} // namespace tomo::ui
