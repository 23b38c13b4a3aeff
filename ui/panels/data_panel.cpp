#include "panels/data_panel.h"

#include "views/slice_view.h"

#include <QComboBox>
#include <QDockWidget>
#include <QGridLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

#include <numbers>

namespace tomo::ui {

DataPanel::DataPanel(QWidget* parent) : Panel(tr("Data"), QStringLiteral("dataDock"), DockFit::Scroll, parent) {
    m_kind = new QComboBox;
    m_kind->setObjectName(QStringLiteral("dataKindCombo"));
    m_kind->addItem(tr("Sinogram of the row"), static_cast<int>(DataViewKind::Sinogram));
    m_kind->addItem(tr("Raw projection"), static_cast<int>(DataViewKind::Projection));
    m_kind->addItem(tr("Flat field (mean)"), static_cast<int>(DataViewKind::Flat));
    m_kind->addItem(tr("Dark field (mean)"), static_cast<int>(DataViewKind::Dark));
    m_kind->setToolTip(tr("The sinogram the slice is made from (log-corrected, axis marked), a raw projection "
                          "(the slice's row marked), or the mean flat or dark field"));
    m_angleSpin = new QSpinBox;
    m_angleSpin->setObjectName(QStringLiteral("dataAngleSpin"));
    m_angleSpin->setKeyboardTracking(false);
    m_angleSpin->setToolTip(tr("Projection index"));
    m_angleSlider = new QSlider(Qt::Horizontal);
    m_angleLabel = new QLabel;
    m_view = new SliceView;
    m_view->setMinimumSize(200, 160);
    m_view->setValueUnit(ValueUnit::none()); // counts and line integrals

    auto* grid = new QGridLayout;
    grid->addWidget(m_kind, 0, 0, 1, 3);
    grid->addWidget(new QLabel(tr("Projection")), 1, 0);
    grid->addWidget(m_angleSpin, 1, 1);
    grid->addWidget(m_angleLabel, 1, 2);
    grid->addWidget(m_angleSlider, 2, 0, 1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(grid);
    layout->addWidget(m_view, 1);

    connect(m_kind, &QComboBox::currentIndexChanged, this, [this] {
        const bool projection = kind() == DataViewKind::Projection;
        for (QWidget* w : std::initializer_list<QWidget*>{m_angleSpin, m_angleSlider, m_angleLabel}) w->setEnabled(projection);
        request();
    });
    connect(m_angleSlider, &QSlider::valueChanged, m_angleSpin, &QSpinBox::setValue);
    connect(m_angleSpin, &QSpinBox::valueChanged, this, [this](int v) {
        QSignalBlocker b(m_angleSlider);
        m_angleSlider->setValue(v);
        if (v >= 0 && v < static_cast<int>(m_angles.size()))
            m_angleLabel->setText(QStringLiteral("%1°").arg(m_angles[static_cast<std::size_t>(v)] * 180.0 / std::numbers::pi, 0, 'f', 2));
        if (kind() == DataViewKind::Projection) request();
    });
    setDataset(DatasetSummary{});
}

void DataPanel::setDataset(const DatasetSummary& dataset) {
    m_angles = dataset.info.angles;
    m_logCorrected = dataset.info.logCorrected;
    m_shown.reset();
    m_view->clear();
    m_view->setCaption(dataset.info.projections > 0 ? tr("Loading…") : tr("No dataset"));
    const int last = std::max(0, dataset.info.projections - 1);
    QSignalBlocker a(m_angleSpin), b(m_angleSlider);
    m_angleSpin->setRange(0, last);
    m_angleSlider->setRange(0, last);
    m_angleSpin->setValue(0);
    m_angleSlider->setValue(0);
    m_angleLabel->setText(m_angles.empty() ? QString() : QStringLiteral("%1°").arg(m_angles.front() * 180.0 / std::numbers::pi, 0, 'f', 2));
    const bool projection = kind() == DataViewKind::Projection;
    for (QWidget* w : std::initializer_list<QWidget*>{m_angleSpin, m_angleSlider, m_angleLabel}) w->setEnabled(projection);
}

void DataPanel::setSliceParams(int row, double axis) {
    const bool rowChanged = row != m_row;
    m_row = row;
    m_axis = axis;
    if (rowChanged && kind() == DataViewKind::Sinogram) request();
    else updateMarker();
}

DataViewKind DataPanel::kind() const { return static_cast<DataViewKind>(m_kind->currentData().toInt()); }
void DataPanel::setKind(DataViewKind k) { m_kind->setCurrentIndex(m_kind->findData(static_cast<int>(k))); }
int DataPanel::angle() const { return m_angleSpin->value(); }
void DataPanel::setAngle(int index) { m_angleSpin->setValue(index); }
QString DataPanel::caption() const { return m_view->caption(); }

void DataPanel::dockMade() {
    connect(dock(), &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible) refresh();
    });
}

void DataPanel::request() {
    if (m_angles.empty() || (dock() && !dock()->isVisible())) return; // read only while someone looks
    emit requested(kind(), m_row, angle());
}

void DataPanel::setView(const DataView& view) {
    // Only what is asked for now (an older answer may arrive late).
    if (view.kind != kind() || (view.kind == DataViewKind::Sinogram && view.row != m_row) ||
        (view.kind == DataViewKind::Projection && view.angle != angle()))
        return;
    m_shown = view;
    if (!view.error.isEmpty()) {
        m_view->clear();
        m_view->setCaption(view.error);
        return;
    }
    m_view->setPreparedImage(view.image, {}, view.display.rendered,
                             view.display.low, view.display.high, view.display.colormap);
    updateMarker();
}

void DataPanel::updateMarker() {
    if (!m_shown || !m_shown->error.isEmpty()) return;
    const tomo::Image& image = *m_shown->image;
    switch (m_shown->kind) {
    case DataViewKind::Sinogram:
        m_view->setLine(QLineF(m_axis, 0.0, m_axis, image.height - 1.0));
        // The values are line integrals either way; only raw counts had −log applied here.
        m_view->setCaption(tr("Sinogram of row %1: %2 angles × %3 columns, %4 (line = axis %5 px)")
                               .arg(m_shown->row)
                               .arg(image.height)
                               .arg(image.width)
                               .arg(m_logCorrected ? tr("line integrals as stored") : tr("−log"))
                               .arg(m_axis, 0, 'f', 3));
        break;
    case DataViewKind::Projection:
        m_view->setLine(QLineF(0.0, m_row, image.width - 1.0, m_row));
        m_view->setCaption(tr("Projection %1 (%2), raw values (line = row %3)")
                               .arg(m_shown->angle)
                               .arg(m_angleLabel->text())
                               .arg(m_row));
        break;
    case DataViewKind::Flat:
    case DataViewKind::Dark:
        m_view->setLine(QLineF(0.0, m_row, image.width - 1.0, m_row));
        m_view->setCaption((m_shown->kind == DataViewKind::Flat ? tr("Mean flat field") : tr("Mean dark field")) %
                           tr(", raw values (line = row %1)").arg(m_row));
        break;
    }
}

} // namespace tomo::ui
