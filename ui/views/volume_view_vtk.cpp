// VolumeView with VTK: the Qt side (widgets, QOpenGLWidget, events). The VTK
// side lives in vtk_scene.cpp so that VTK's GLEW and Qt's OpenGL headers stay
// in different translation units.
#include "views/volume_view.h"

#include "views/colormap.h"
#include "views/histogram_widget.h"
#include "views/vtk_scene.h"

#include <QCheckBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLWidget>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <cmath>

namespace tomo::ui {
namespace {

class Canvas : public QOpenGLWidget {
public:
    explicit Canvas(QWidget* parent)
        : QOpenGLWidget(parent),
          scene(VtkScene::Callbacks{
              [this] { makeCurrent(); },
              [this] { return context() && QOpenGLContext::currentContext() == context(); },
              [this] { update(); }}) {
        setMinimumSize(240, 200);
        setFocusPolicy(Qt::StrongFocus);
    }
    ~Canvas() override {
        makeCurrent();
        // the scene releases its GL resources while the context is current
    }

    VtkScene scene;

protected:
    void initializeGL() override {
        const QSize s = size() * devicePixelRatioF();
        scene.initialize(s.width(), s.height());
    }
    void resizeGL(int w, int h) override { scene.resize(w, h); }
    void paintGL() override {
        const QSize s = size() * devicePixelRatioF();
        scene.paint(defaultFramebufferObject(), s.width(), s.height());
    }

    static VtkScene::Button button(Qt::MouseButton b) {
        return b == Qt::MiddleButton ? VtkScene::Button::Middle
               : b == Qt::RightButton ? VtkScene::Button::Right
                                      : VtkScene::Button::Left;
    }
    QPoint device(const QPointF& p) const {
        const double r = devicePixelRatioF();
        return QPoint(static_cast<int>(p.x() * r), static_cast<int>(p.y() * r));
    }
    static bool ctrl(const QInputEvent* e) { return e->modifiers() & Qt::ControlModifier; }
    static bool shift(const QInputEvent* e) { return e->modifiers() & Qt::ShiftModifier; }

    void mousePressEvent(QMouseEvent* e) override {
        const QPoint p = device(e->position());
        scene.mousePress(button(e->button()), p.x(), p.y(), ctrl(e), shift(e), false);
        update();
    }
    void mouseDoubleClickEvent(QMouseEvent* e) override {
        const QPoint p = device(e->position());
        scene.mousePress(button(e->button()), p.x(), p.y(), ctrl(e), shift(e), true);
        update();
    }
    void mouseReleaseEvent(QMouseEvent* e) override {
        const QPoint p = device(e->position());
        scene.mouseRelease(button(e->button()), p.x(), p.y(), ctrl(e), shift(e));
        update();
    }
    void mouseMoveEvent(QMouseEvent* e) override {
        const QPoint p = device(e->position());
        scene.mouseMove(p.x(), p.y(), ctrl(e), shift(e));
        if (e->buttons() != Qt::NoButton) update();
    }
    void wheelEvent(QWheelEvent* e) override {
        const QPoint p = device(e->position());
        if (e->angleDelta().y() != 0) scene.wheel(p.x(), p.y(), e->angleDelta().y(), ctrl(e), shift(e));
        update();
        e->accept();
    }
};

} // namespace

struct VolumeView::Impl {
    Canvas* canvas = nullptr;
    QSpinBox* first = nullptr;
    QSpinBox* last = nullptr;
    QPushButton* reconstruct = nullptr;
    QCheckBox* showVolume = nullptr;
    QCheckBox* showPlanes = nullptr;
    QPushButton* resetCamera = nullptr;
    std::array<QSlider*, 3> planes{};
    HistogramWidget* histogram = nullptr;
    QSlider* opacity = nullptr;
    QPushButton* automatic = nullptr;
    QLabel* status = nullptr;
    bool hasVolume = false;
    TransferFunction tf;
    ImageStats stats;
    QString colormap = QStringLiteral("grey");

    void apply() {
        const Colormap& map = tomo::ui::colormap(colormap);
        std::array<std::uint32_t, 256> table{};
        for (std::size_t i = 0; i < 256; ++i) table[i] = map.table[i];
        canvas->scene.setTransferFunction(tf.threshold, tf.high, tf.opacity, table);
        canvas->update();
    }
};

VolumeView::VolumeView(QWidget* parent) : QWidget(parent), d(std::make_unique<Impl>()) {
    d->canvas = new Canvas(this);
    d->first = new QSpinBox;
    d->last = new QSpinBox;
    d->reconstruct = new QPushButton(tr("Reconstruct sub-volume"));
    d->reconstruct->setToolTip(tr("Reconstruct these rows with the current parameters and show them in 3D "
                                  "(binned to at most 256 voxels across)"));
    d->showVolume = new QCheckBox(tr("Volume"));
    d->showPlanes = new QCheckBox(tr("Planes"));
    d->showVolume->setChecked(true);
    d->showPlanes->setChecked(true);
    d->resetCamera = new QPushButton(tr("Reset view"));
    d->status = new QLabel(tr("No sub-volume yet: choose rows and press “Reconstruct sub-volume”."));
    d->status->setWordWrap(true);

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Rows")));
    top->addWidget(d->first);
    top->addWidget(new QLabel(QStringLiteral("–")));
    top->addWidget(d->last);
    top->addWidget(d->reconstruct);
    top->addStretch(1);
    auto* toggles = new QHBoxLayout;
    toggles->addWidget(d->showVolume);
    toggles->addWidget(d->showPlanes);
    toggles->addStretch(1);
    toggles->addWidget(d->resetCamera);

    auto* sliders = new QGridLayout;
    const QString names[3] = {tr("x plane"), tr("y plane"), tr("z plane")};
    for (int i = 0; i < 3; ++i) {
        d->planes[static_cast<std::size_t>(i)] = new QSlider(Qt::Horizontal);
        sliders->addWidget(new QLabel(names[i]), 0, 2 * i);
        sliders->addWidget(d->planes[static_cast<std::size_t>(i)], 0, 2 * i + 1);
        connect(d->planes[static_cast<std::size_t>(i)], &QSlider::valueChanged, this, [this] {
            d->canvas->scene.setPlanes(d->planes[0]->value(), d->planes[1]->value(), d->planes[2]->value());
            d->canvas->update();
        });
    }

    // The transfer function: threshold and top on the volume's histogram, opacity.
    d->histogram = new HistogramWidget;
    d->histogram->setObjectName(QStringLiteral("volumeHistogram"));
    d->histogram->setToolTip(tr("Values of the sub-volume. Drag the left edge (threshold: everything below is "
                                "transparent) and the right edge (fully coloured and most opaque)."));
    d->histogram->setMinimumHeight(70);
    d->histogram->setMaximumHeight(110);
    d->opacity = new QSlider(Qt::Horizontal);
    d->opacity->setObjectName(QStringLiteral("volumeOpacity"));
    d->opacity->setRange(1, 100);
    d->opacity->setToolTip(tr("Opacity of the densest voxels"));
    d->automatic = new QPushButton(tr("Automatic"));
    d->automatic->setToolTip(tr("Threshold where the background peak of the histogram ends, top at the 99.5 % "
                                "percentile"));
    auto* transfer = new QHBoxLayout;
    transfer->addWidget(new QLabel(tr("Opacity")));
    transfer->addWidget(d->opacity, 1);
    transfer->addWidget(d->automatic);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addLayout(toggles);
    layout->addWidget(d->canvas, 1);
    layout->addLayout(sliders);
    layout->addWidget(d->histogram);
    layout->addLayout(transfer);
    layout->addWidget(d->status);

    connect(d->histogram, &HistogramWidget::windowChanged, this, [this](float threshold, float high) {
        TransferFunction tf = d->tf;
        tf.threshold = threshold;
        tf.high = high;
        setTransferFunction(tf);
    });
    connect(d->opacity, &QSlider::valueChanged, this, [this](int percent) {
        TransferFunction tf = d->tf;
        tf.opacity = percent / 100.0;
        setTransferFunction(tf);
    });
    connect(d->automatic, &QPushButton::clicked, this, [this] { setTransferFunction(automaticTransferFunction(d->stats)); });

    connect(d->reconstruct, &QPushButton::clicked, this, [this] {
        emit reconstructRequested(d->first->value(), d->last->value() - d->first->value() + 1);
    });
    connect(d->first, &QSpinBox::valueChanged, this, [this](int v) {
        if (d->last->value() < v) d->last->setValue(v);
    });
    connect(d->last, &QSpinBox::valueChanged, this, [this](int v) {
        if (d->first->value() > v) d->first->setValue(v);
    });
    connect(d->showVolume, &QCheckBox::toggled, this, [this](bool on) {
        d->canvas->scene.setShowVolume(on);
        d->canvas->update();
    });
    connect(d->showPlanes, &QCheckBox::toggled, this, [this](bool on) {
        d->canvas->scene.setShowPlanes(on);
        d->canvas->update();
    });
    connect(d->resetCamera, &QPushButton::clicked, this, [this] {
        d->canvas->scene.resetCamera();
        d->canvas->update();
    });
    setDataset(1, 0);
}

VolumeView::~VolumeView() = default;

bool VolumeView::isAvailable() { return true; }

void VolumeView::setDataset(int rows, int currentRow) {
    rows = std::max(1, rows);
    d->first->setRange(0, rows - 1);
    d->last->setRange(0, rows - 1);
    const int count = std::min(rows, 64);
    const int first = std::clamp(currentRow - count / 2, 0, rows - count);
    d->first->setValue(first);
    d->last->setValue(first + count - 1);
}

void VolumeView::setVolume(const SubVolume& v, const QString& colormapName) {
    const tomo::ImageStack& s = v.volume;
    // Spacing in detector pixels: x and y were binned, z is the row spacing.
    d->canvas->scene.setVolume(s.data.data(), s.width, s.height, s.depth, v.binning, v.rowSpacing);
    const int dims[3] = {s.width, s.height, s.depth};
    for (int i = 0; i < 3; ++i) {
        QSlider* slider = d->planes[static_cast<std::size_t>(i)];
        QSignalBlocker block(slider);
        slider->setRange(0, std::max(0, dims[i] - 1));
        slider->setValue(dims[i] / 2);
    }
    d->hasVolume = s.depth > 0;
    d->status->setText(tr("Rows %1–%2: %3 × %4 × %5 voxels%6, reconstructed in %7. Drag to rotate, "
                          "middle-drag to pan, wheel to zoom.")
                           .arg(v.firstRow)
                           .arg(v.firstRow + s.depth - 1)
                           .arg(s.width)
                           .arg(s.height)
                           .arg(s.depth)
                           .arg(v.binning > 1 ? tr(" (binned %1×%1 in x, y)").arg(v.binning) : QString())
                           .arg(formatSeconds(v.seconds)));
    d->stats = v.stats;
    d->colormap = colormapName;
    d->histogram->setStats(v.stats);
    d->histogram->setColormap(colormapName);
    setTransferFunction(automaticTransferFunction(v.stats));
}

void VolumeView::clearVolume() {
    d->canvas->scene.clearVolume();
    d->histogram->setStats({}); // the previous volume's values mean nothing for the next
    d->hasVolume = false;
    d->status->setText(tr("No sub-volume yet: choose rows and press “Reconstruct sub-volume”."));
    d->canvas->update();
}

void VolumeView::setColormap(const QString& colormapName) {
    d->colormap = colormapName;
    d->histogram->setColormap(colormapName);
    d->apply();
}

void VolumeView::setTransferFunction(const TransferFunction& tf) {
    if (!(tf.high > tf.threshold)) return;
    d->tf = tf;
    d->histogram->setWindow(tf.threshold, tf.high);
    {
        QSignalBlocker block(d->opacity);
        d->opacity->setValue(static_cast<int>(std::lround(tf.opacity * 100.0)));
    }
    d->apply();
    emit transferFunctionChanged(tf);
}

TransferFunction VolumeView::transferFunction() const { return d->tf; }

void VolumeView::setBusy(bool busy) { d->reconstruct->setEnabled(!busy); }

bool VolumeView::hasVolume() const { return d->hasVolume; }

QImage VolumeView::renderedImage() { return d->canvas->grabFramebuffer(); }

} // namespace tomo::ui
