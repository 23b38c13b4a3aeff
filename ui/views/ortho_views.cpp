#include "views/ortho_views.h"

#include "views/colormap.h"
#include "work/image_stats.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>
#include <functional>

namespace tomo::ui {

/// One cut: its image at the voxels' aspect, fitted to the widget, a cross
/// at the point and a dashed line at the slice's row; a click picks a point.
class OrthoCut : public QWidget {
public:
    OrthoCut(const QString& name, const QString& title, std::function<void(int u, int z)> picked, QWidget* parent)
        : QWidget(parent), m_title(title), m_picked(std::move(picked)) {
        setObjectName(name);
        setMinimumSize(120, 80);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
        setCursor(Qt::CrossCursor);
    }
    /// `image` of cells `aspect` times as tall as wide; the cross at (u, z);
    /// the marked row at z = `row` (< 0: none).
    void show(QImage image, double aspect, int u, int z, double row) {
        m_image = std::move(image);
        m_aspect = aspect;
        m_u = u;
        m_z = z;
        m_row = row;
        update();
    }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter painter(this);
        painter.fillRect(rect(), palette().color(QPalette::Base));
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(rect().adjusted(4, 2, -4, -2), Qt::AlignLeft | Qt::AlignTop, m_title);
        if (m_image.isNull()) return;
        const QRectF target = placement();
        painter.drawImage(target, m_image);
        const double sx = target.width() / m_image.width(), sz = target.height() / m_image.height();
        painter.setPen(QPen(QColor(255, 80, 80), 1));
        const double x = target.left() + (m_u + 0.5) * sx, y = target.top() + (m_z + 0.5) * sz;
        painter.drawLine(QPointF(x, target.top()), QPointF(x, target.bottom()));
        painter.drawLine(QPointF(target.left(), y), QPointF(target.right(), y));
        if (m_row >= 0.0) {
            painter.setPen(QPen(QColor(255, 210, 0), 1, Qt::DashLine));
            const double r = target.top() + m_row * sz;
            painter.drawLine(QPointF(target.left(), r), QPointF(target.right(), r));
        }
    }
    void mousePressEvent(QMouseEvent* event) override {
        if (m_image.isNull() || event->button() != Qt::LeftButton) return;
        const QRectF target = placement();
        const QPointF at = event->position() - target.topLeft();
        const int u = static_cast<int>(at.x() / target.width() * m_image.width());
        const int z = static_cast<int>(at.y() / target.height() * m_image.height());
        if (u >= 0 && z >= 0 && u < m_image.width() && z < m_image.height()) m_picked(u, z);
    }

private:
    /// The image's rectangle: as large as fits, cells at their aspect, centred.
    QRectF placement() const {
        const double w = m_image.width(), h = m_image.height() * m_aspect;
        const double scale = std::min(width() / w, height() / h);
        return QRectF((width() - w * scale) / 2.0, (height() - h * scale) / 2.0, w * scale, h * scale);
    }

    QString m_title;
    std::function<void(int, int)> m_picked;
    QImage m_image;
    double m_aspect = 1.0;
    int m_u = 0, m_z = 0;
    double m_row = -1.0;
};

OrthoViews::OrthoViews(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("orthoViews"));
    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("orthoCaption"));
    m_caption->setWordWrap(true);
    auto* centreButton = new QPushButton(tr("Centre"), this);
    centreButton->setObjectName(QStringLiteral("orthoCentre"));
    centreButton->setToolTip(tr("Cut through the volume's centre again"));
    connect(centreButton, &QPushButton::clicked, this, &OrthoViews::centre);
    m_xz = new OrthoCut(QStringLiteral("orthoXZ"), tr("XZ"), [this](int x, int z) { setPoint(x, m_y, z); }, this);
    m_yz = new OrthoCut(QStringLiteral("orthoYZ"), tr("YZ"), [this](int y, int z) { setPoint(m_x, y, z); }, this);
    m_xz->setToolTip(tr("XZ: the coarse volume across the rows at the point's y; click to move the YZ cut"));
    m_yz->setToolTip(tr("YZ: the coarse volume across the rows at the point's x; click to move the XZ cut"));
    auto* top = new QHBoxLayout;
    top->addWidget(m_caption, 1);
    top->addWidget(centreButton);
    auto* cuts = new QHBoxLayout;
    cuts->addWidget(m_xz);
    cuts->addWidget(m_yz);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addLayout(cuts, 1);
    clear(tr("No coarse volume yet."));
}

void OrthoViews::setVolume(std::shared_ptr<const CoarseVolume> volume) {
    const tomo::ImageStack& v = volume->volume;
    const bool sameGrid = m_volume && m_volume->volume.width == v.width && m_volume->volume.depth == v.depth;
    m_volume = std::move(volume);
    const ImageStats stats = computeStats(v.data);
    m_low = stats.autoLow;
    m_high = stats.autoHigh > stats.autoLow ? stats.autoHigh : stats.autoLow + 1e-6f;
    if (sameGrid) showCuts();
    else centre();
}

void OrthoViews::clear(const QString& why) {
    m_volume.reset();
    m_caption->setText(why);
    m_xz->show(QImage(), 1.0, 0, 0, -1.0);
    m_yz->show(QImage(), 1.0, 0, 0, -1.0);
}

void OrthoViews::setSliceRow(int row) {
    m_sliceRow = row;
    if (m_volume) showCuts();
}

void OrthoViews::setPoint(int x, int y, int z) {
    if (!m_volume) return;
    const tomo::ImageStack& v = m_volume->volume;
    m_x = std::clamp(x, 0, v.width - 1);
    m_y = std::clamp(y, 0, v.height - 1);
    m_z = std::clamp(z, 0, v.depth - 1);
    showCuts();
}

void OrthoViews::centre() {
    if (!m_volume) return;
    const tomo::ImageStack& v = m_volume->volume;
    setPoint(v.width / 2, v.height / 2, v.depth / 2);
}

tomo::Image OrthoViews::cutXZ() const {
    if (!m_volume) return {};
    const tomo::ImageStack& v = m_volume->volume;
    tomo::Image out(v.width, v.depth);
    for (int z = 0; z < v.depth; ++z)
        std::copy_n(v.image(z).begin() + static_cast<std::ptrdiff_t>(m_y) * v.width, v.width,
                    out.data.begin() + static_cast<std::ptrdiff_t>(z) * v.width);
    return out;
}

tomo::Image OrthoViews::cutYZ() const {
    if (!m_volume) return {};
    const tomo::ImageStack& v = m_volume->volume;
    tomo::Image out(v.height, v.depth);
    for (int z = 0; z < v.depth; ++z)
        for (int y = 0; y < v.height; ++y)
            out.data[static_cast<std::size_t>(z) * v.height + y] =
                v.image(z)[static_cast<std::size_t>(y) * v.width + m_x];
    return out;
}

QString OrthoViews::caption() const { return m_caption->text(); }

void OrthoViews::showCuts() {
    const CoarseVolume& c = *m_volume;
    const tomo::ImageStack& v = c.volume;
    m_caption->setText(tr("%1 × %2 × %3 voxels (detector binned %4 × %5) from %6 projections, %7 added "
                          "in %8 s · XZ at y %9, YZ at x %10")
                           .arg(v.width)
                           .arg(v.height)
                           .arg(v.depth)
                           .arg(c.binning)
                           .arg(c.rowBinning)
                           .arg(c.projections)
                           .arg(c.addedProjections / std::max(1, v.depth))
                           .arg(c.seconds, 0, 'f', 2)
                           .arg(m_y)
                           .arg(m_x));
    const Colormap& grey = colormap(QStringLiteral("grey"));
    const double aspect = static_cast<double>(c.rowBinning) / c.binning;
    const double row = m_sliceRow >= 0 ? (m_sliceRow + 0.5) / c.rowBinning : -1.0;
    const tomo::Image xz = cutXZ(), yz = cutYZ();
    m_xz->show(renderImage(xz.data.data(), xz.width, xz.height, m_low, m_high, grey), aspect, m_x, m_z, row);
    m_yz->show(renderImage(yz.data.data(), yz.width, yz.height, m_low, m_high, grey), aspect, m_y, m_z, row);
}

} // namespace tomo::ui
