#include "dialogs/axis_sweep_dialog.h"

#include "tomo/axis_sweep.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tomo::ui {
namespace {

/// At most this many trials: each is a whole slice in memory until shown.
constexpr int kMaxTrials = 101;
constexpr int kThumbnail = 160;
constexpr int kAxisRole = Qt::UserRole;

QDoubleSpinBox* axisSpin(const QString& tip) {
    auto* s = new QDoubleSpinBox;
    s->setDecimals(3);
    s->setRange(-1e6, 1e6);
    s->setSingleStep(0.5);
    s->setSuffix(QStringLiteral(" px"));
    s->setKeyboardTracking(false);
    s->setToolTip(tip);
    return s;
}

} // namespace

AxisSweepDialog::AxisSweepDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Axis sweep"));
    setObjectName(QStringLiteral("axisSweepDialog"));
    m_rowLabel = new QLabel;
    m_from = axisSpin(tr("First trial axis"));
    m_to = axisSpin(tr("Last trial axis"));
    m_step = axisSpin(tr("Step between trial axes"));
    m_step->setRange(0.001, 1000.0);
    m_count = new QLabel;
    m_run = new QPushButton(tr("&Run"));
    m_run->setObjectName(QStringLiteral("sweepRunButton"));
    m_run->setToolTip(tr("Reconstruct the row at every trial axis (the row is filtered once)"));
    m_cancel = new QPushButton(tr("&Cancel"));
    m_cancel->setEnabled(false);
    m_progress = new QProgressBar;
    m_progress->setRange(0, 100);
    m_progress->setValue(0);
    m_gallery = new QListWidget;
    m_gallery->setObjectName(QStringLiteral("sweepGallery"));
    m_gallery->setViewMode(QListView::IconMode);
    m_gallery->setIconSize(QSize(kThumbnail, kThumbnail));
    m_gallery->setGridSize(QSize(kThumbnail + 16, kThumbnail + 28));
    m_gallery->setResizeMode(QListView::Adjust);
    m_gallery->setMovement(QListView::Static);
    m_gallery->setUniformItemSizes(true);
    m_gallery->setSelectionMode(QAbstractItemView::SingleSelection);
    // The axis on screen framed, its thumbnail not tinted: it is judged by eye like the others.
    m_gallery->setStyleSheet(QStringLiteral("QListWidget::item:selected { background: transparent; color: palette(text); "
                                            "border: 2px solid #1e8449; }"));
    m_note = new QLabel(tr("Choose a range and press Run; click the sharpest slice to use its axis."));
    m_note->setWordWrap(true);

    auto* fields = new QGridLayout;
    fields->addWidget(m_rowLabel, 0, 0, 1, 6);
    fields->addWidget(new QLabel(tr("From")), 1, 0);
    fields->addWidget(m_from, 1, 1);
    fields->addWidget(new QLabel(tr("to")), 1, 2);
    fields->addWidget(m_to, 1, 3);
    fields->addWidget(new QLabel(tr("step")), 1, 4);
    fields->addWidget(m_step, 1, 5);
    fields->addWidget(m_count, 2, 0, 1, 4);
    fields->addWidget(m_run, 2, 4);
    fields->addWidget(m_cancel, 2, 5);
    m_zoom = new QCheckBox(tr("Zoom on the object"));
    m_zoom->setObjectName(QStringLiteral("sweepZoomCheck"));
    m_zoom->setChecked(true);
    m_zoom->setToolTip(tr("The trials show the object's bounding box in the slice on screen, not the whole slice "
                          "(a region of interest set in the parameters is used instead)"));
    fields->addWidget(m_zoom, 3, 0, 1, 6);
    auto* close = new QDialogButtonBox(QDialogButtonBox::Close);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(fields);
    layout->addWidget(m_progress);
    layout->addWidget(m_gallery, 1);
    layout->addWidget(m_note);
    layout->addWidget(close);
    resize(5 * (kThumbnail + 16) + 60, 3 * (kThumbnail + 28) + 200);

    for (QDoubleSpinBox* s : {m_from, m_to, m_step}) connect(s, &QDoubleSpinBox::valueChanged, this, &AxisSweepDialog::updateCount);
    connect(m_run, &QPushButton::clicked, this, &AxisSweepDialog::run);
    connect(m_cancel, &QPushButton::clicked, this, &AxisSweepDialog::cancelRequested);
    connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_gallery, &QListWidget::itemDoubleClicked, this,
            [this](QListWidgetItem* item) { enlarge(m_gallery->row(item)); });
    connect(m_gallery, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
        const double axis = item->data(kAxisRole).toDouble();
        m_note->setText(tr("Axis %1 px set in the parameters.").arg(axis, 0, 'f', 3));
        emit axisPicked(axis);
    });
    updateCount();
}

void AxisSweepDialog::setCentre(int row, double axis, int columns) {
    m_row = row;
    m_rowLabel->setText(tr("Trial slices of row %1 (the row on screen)").arg(row));
    const double half = 5.0, step = columns < 200 ? 0.25 : 0.5;
    setRange(std::round((axis - half) / step) * step, std::round((axis + half) / step) * step, step);
}

void AxisSweepDialog::setObject(const std::optional<tomo::Region>& box) {
    m_object = box;
    m_zoom->setEnabled(box.has_value());
    m_zoom->setText(box ? tr("Zoom on the object (%1 × %2 px at %3, %4)").arg(box->width).arg(box->height).arg(box->x).arg(box->y)
                        : tr("Zoom on the object (it fills the slice)"));
}

std::optional<tomo::Region> AxisSweepDialog::region() const {
    return m_zoom->isChecked() ? m_object : std::nullopt;
}

std::optional<tomo::Region> objectBox(const tomo::Image& slice, QPoint origin, float low, float high) {
    if (slice.width < 8 || slice.height < 8 || !(high > low)) return std::nullopt;
    // Otsu's threshold over the display window: the value that best splits background from object.
    constexpr int kBins = 256;
    std::vector<double> histogram(kBins, 0.0);
    const double scale = kBins / (static_cast<double>(high) - low);
    for (const float v : slice.data)
        if (std::isfinite(v)) histogram[static_cast<std::size_t>(std::clamp((v - low) * scale, 0.0, kBins - 1.0))] += 1.0;
    double total = 0.0, weighted = 0.0;
    for (int i = 0; i < kBins; ++i) {
        total += histogram[i];
        weighted += i * histogram[i];
    }
    double below = 0.0, belowWeighted = 0.0, best = -1.0;
    int split = kBins / 2;
    for (int i = 0; i < kBins - 1; ++i) {
        below += histogram[i];
        belowWeighted += i * histogram[i];
        const double above = total - below;
        if (below == 0.0 || above == 0.0) continue;
        const double difference = belowWeighted / below - (weighted - belowWeighted) / above;
        const double between = below * above * difference * difference;
        if (between > best) {
            best = between;
            split = i;
        }
    }
    const float threshold = low + static_cast<float>((split + 1) / scale);
    std::vector<int> xs, ys;
    for (int y = 0; y < slice.height; ++y)
        for (int x = 0; x < slice.width; ++x)
            if (slice.data[static_cast<std::size_t>(y) * slice.width + x] > threshold) {
                xs.push_back(x);
                ys.push_back(y);
            }
    if (xs.size() < 16) return std::nullopt;
    const auto percentile = [](std::vector<int>& v, double q) {
        const auto k = static_cast<std::ptrdiff_t>(q * static_cast<double>(v.size() - 1));
        std::nth_element(v.begin(), v.begin() + k, v.end());
        return v[static_cast<std::size_t>(k)];
    };
    const int x0 = percentile(xs, 0.005), x1 = percentile(xs, 0.995), y0 = percentile(ys, 0.005), y1 = percentile(ys, 0.995);
    const int side = static_cast<int>(std::ceil(std::max(x1 - x0 + 1, y1 - y0 + 1) * 1.3));
    if (side > 0.7 * std::max(slice.width, slice.height)) return std::nullopt;
    const int cx = (x0 + x1 + 1) / 2, cy = (y0 + y1 + 1) / 2;
    tomo::Region r{std::clamp(cx - side / 2, 0, std::max(0, slice.width - side)),
                   std::clamp(cy - side / 2, 0, std::max(0, slice.height - side)), std::min(side, slice.width),
                   std::min(side, slice.height)};
    r.x += origin.x();
    r.y += origin.y();
    return r;
}

void AxisSweepDialog::setRange(double from, double to, double step) {
    m_from->setValue(from);
    m_to->setValue(to);
    m_step->setValue(step);
    updateCount();
}

std::vector<double> AxisSweepDialog::axes() const {
    try {
        return tomo::axisRange(m_from->value(), m_to->value(), m_step->value(), kMaxTrials, "axis sweep");
    } catch (const std::exception&) {
        return {};
    }
}

QString AxisSweepDialog::error() const {
    try {
        tomo::axisRange(m_from->value(), m_to->value(), m_step->value(), kMaxTrials, "axis sweep");
        return {};
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
}

void AxisSweepDialog::updateCount() {
    const QString problem = error();
    m_count->setText(problem.isEmpty() ? tr("%1 trial slices").arg(axes().size()) : problem);
    m_count->setStyleSheet(problem.isEmpty() ? QString() : QStringLiteral("color: #c0392b;"));
    m_run->setEnabled(problem.isEmpty() && !m_cancel->isEnabled());
}

void AxisSweepDialog::run() {
    const std::vector<double> trial = axes();
    if (trial.empty()) return;
    setRunning(true);
    m_progress->setValue(0);
    m_note->setText(tr("Reconstructing %1 trial slices…").arg(trial.size()));
    emit runRequested(trial);
}

void AxisSweepDialog::setRunning(bool running) {
    m_cancel->setEnabled(running);
    m_run->setEnabled(!running && error().isEmpty());
}

void AxisSweepDialog::setProgress(const JobProgress& p) {
    m_progress->setValue(static_cast<int>(std::lround(p.fraction * 100.0)));
}

void AxisSweepDialog::finish(JobStatus status, const QString& message) {
    setRunning(false);
    if (status == JobStatus::Cancelled) m_note->setText(tr("Cancelled."));
    else if (status == JobStatus::Failed) m_note->setText(tr("The sweep failed: %1").arg(message));
}

void AxisSweepDialog::enlarge(int index) {
    if (index < 0 || index >= static_cast<int>(m_views.size())) return;
    if (!m_enlarged) {
        m_enlarged = new QDialog(this);
        m_enlarged->setObjectName(QStringLiteral("sweepEnlarged"));
        m_enlargedImage = new QLabel;
        m_enlargedImage->setAlignment(Qt::AlignCenter);
        auto* layout = new QVBoxLayout(m_enlarged);
        layout->addWidget(m_enlargedImage);
    }
    const QImage& view = m_views[static_cast<std::size_t>(index)];
    // Small trials magnified by whole pixels, so that their pixels stay sharp.
    const int factor = std::max(1, kSweepViewSize / std::max(1, std::max(view.width(), view.height())));
    m_enlargedImage->setPixmap(QPixmap::fromImage(
        factor > 1 ? view.scaled(view.size() * factor, Qt::KeepAspectRatio, Qt::FastTransformation) : view));
    m_enlarged->setWindowTitle(tr("Row %1 at axis %2 px").arg(m_row).arg(m_axes[static_cast<std::size_t>(index)], 0, 'f', 3));
    m_enlarged->show();
    m_enlarged->raise();
}

void AxisSweepDialog::showSweep(const AxisSweep& sweep) {
    m_gallery->clear();
    m_views = sweep.views;
    m_axes = sweep.axes;
    const double step = sweep.axes.size() > 1 ? std::abs(sweep.axes[1] - sweep.axes[0]) : 1.0;
    const int decimals = step < 0.1 ? 3 : 2;
    for (std::size_t i = 0; i < sweep.axes.size() && i < sweep.thumbnails.size(); ++i) {
        QIcon icon;
        const QPixmap pixmap = QPixmap::fromImage(sweep.thumbnails[i]);
        icon.addPixmap(pixmap, QIcon::Normal);
        icon.addPixmap(pixmap, QIcon::Selected);
        auto* item = new QListWidgetItem(icon, tr("%1 px").arg(sweep.axes[i], 0, 'f', decimals));
        item->setData(kAxisRole, sweep.axes[i]);
        item->setToolTip(tr("Row %1 at axis %2 px: click to use this axis, double click to enlarge")
                             .arg(sweep.row)
                             .arg(sweep.axes[i], 0, 'f', 3));
        m_gallery->addItem(item);
    }
    m_progress->setValue(100);
    m_note->setText(tr("Row %1: %2 trial slices with %3 (filter %4, back-projection %5), one window [%6, %7] for "
                       "all. Click the sharpest one to use its axis.")
                        .arg(sweep.row)
                        .arg(sweep.axes.size())
                        .arg(sweep.strategy)
                        .arg(formatSeconds(sweep.secondsFilter))
                        .arg(formatSeconds(sweep.secondsBackproject))
                        .arg(sweep.low, 0, 'g', 4)
                        .arg(sweep.high, 0, 'g', 4));
}

void AxisSweepDialog::setCurrentAxis(double axis) {
    for (int i = 0; i < m_gallery->count(); ++i)
        if (std::abs(axisAt(i) - axis) < 5e-4) {
            m_gallery->setCurrentRow(i);
            return;
        }
    m_gallery->clearSelection();
}

double AxisSweepDialog::axisAt(int index) const { return m_gallery->item(index)->data(kAxisRole).toDouble(); }

} // namespace tomo::ui
