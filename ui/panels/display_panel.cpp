#include "panels/display_panel.h"

#include "views/colormap.h"
#include "views/histogram_widget.h"

#include <QAction>
#include <QActionGroup>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace tomo::ui {

DisplayPanel::DisplayPanel(QWidget* parent)
    : Panel(tr("Display"), QStringLiteral("displayDock"), DockFit::Stretch, parent) {
    m_histogram = new HistogramWidget;
    m_colormapCombo = new QComboBox;
    m_colormapCombo->setObjectName(QStringLiteral("colormapCombo"));
    m_colormaps = new QActionGroup(this);
    for (const Colormap& c : colormaps()) {
        const QPixmap swatch = QPixmap::fromImage(colorbarImage(c, 48, 12));
        m_colormapCombo->addItem(QIcon(swatch), c.label, c.name);
        QAction* a = new QAction(QIcon(swatch), c.label, this);
        a->setCheckable(true);
        a->setData(c.name);
        m_colormaps->addAction(a);
        connect(a, &QAction::triggered, this, [this, name = c.name] { emit colormapChosen(name); });
    }
    m_colormapCombo->setIconSize(QSize(48, 12));
    m_colormapCombo->setToolTip(tr("Colormap of the slice view"));
    m_lowSpin = new QDoubleSpinBox;
    m_highSpin = new QDoubleSpinBox;
    m_lowSpin->setObjectName(QStringLiteral("windowLowSpin"));
    m_highSpin->setObjectName(QStringLiteral("windowHighSpin"));
    for (QDoubleSpinBox* s : {m_lowSpin, m_highSpin}) {
        s->setDecimals(5);
        s->setRange(-1e9, 1e9);
        s->setKeyboardTracking(false);
        s->setMinimumWidth(90);
    }
    m_lowSpin->setToolTip(tr("Window low: values at or below are the first colour"));
    m_highSpin->setToolTip(tr("Window high: values at or above are the last colour"));
    m_autoWindow = makeAction(this, tr("&Automatic Window"), "auto-window", QKeySequence(Qt::Key_A),
                              tr("Window from the 0.5 % and 99.5 % percentiles of each new slice"));
    m_autoWindow->setCheckable(true);
    m_autoWindow->setChecked(true);
    auto* autoButton = new QToolButton;
    autoButton->setObjectName(QStringLiteral("autoWindowButton"));
    autoButton->setDefaultAction(m_autoWindow);

    // Two rows, so the panel also fits a narrow column of tabs.
    auto* row = new QGridLayout;
    row->addWidget(m_colormapCombo, 0, 0, 1, 3);
    row->addWidget(m_lowSpin, 1, 0);
    row->addWidget(m_highSpin, 1, 1);
    row->addWidget(autoButton, 1, 2);
    row->setColumnStretch(0, 1);
    row->setColumnStretch(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_histogram, 1);
    layout->addLayout(row);

    connect(m_colormapCombo, &QComboBox::currentIndexChanged, this,
            [this] { emit colormapChosen(m_colormapCombo->currentData().toString()); });
    // The spin boxes show the window in the value unit; the views keep stored values.
    connect(m_lowSpin, &QDoubleSpinBox::valueChanged, this,
            [this](double v) { emit lowEdited(static_cast<float>(m_unit.stored(v))); });
    connect(m_highSpin, &QDoubleSpinBox::valueChanged, this,
            [this](double v) { emit highEdited(static_cast<float>(m_unit.stored(v))); });
    connect(m_histogram, &HistogramWidget::windowChanged, this, &DisplayPanel::windowDragged);

    // Values per pixel (as reconstructed) or, with the pixel size, per mm / cm.
    m_units = new QActionGroup(this);
    const std::pair<ValueUnitKind, QString> kinds[] = {
        {ValueUnitKind::PerPixel, tr("Attenuation per &pixel")},
        {ValueUnitKind::PerMillimetre, tr("Attenuation per &mm")},
        {ValueUnitKind::PerCentimetre, tr("Attenuation per &cm")}};
    for (const auto& [kind, text] : kinds) {
        QAction* a = new QAction(text, this);
        a->setCheckable(true);
        a->setData(static_cast<int>(kind));
        m_units->addAction(a);
        connect(a, &QAction::triggered, this, [this, kind = kind] { emit valueUnitChosen(kind); });
    }
}

QList<QAction*> DisplayPanel::colormapActions() const { return m_colormaps->actions(); }
QList<QAction*> DisplayPanel::valueUnitActions() const { return m_units->actions(); }

void DisplayPanel::setWindow(float low, float high) {
    m_histogram->setWindow(low, high);
    QSignalBlocker a(m_lowSpin), b(m_highSpin);
    const double step = std::max(1e-6, m_unit.shown(high - low) / 100.0);
    m_lowSpin->setSingleStep(step);
    m_highSpin->setSingleStep(step);
    m_lowSpin->setValue(m_unit.shown(low));
    m_highSpin->setValue(m_unit.shown(high));
}

void DisplayPanel::setColormap(const QString& name) {
    m_histogram->setColormap(name);
    {
        QSignalBlocker b(m_colormapCombo);
        m_colormapCombo->setCurrentIndex(std::max(0, m_colormapCombo->findData(name)));
    }
    for (QAction* a : m_colormaps->actions()) a->setChecked(a->data().toString() == name);
}

void DisplayPanel::setValueUnit(const ValueUnit& unit, bool pixelSizeKnown) {
    for (QAction* a : m_units->actions()) {
        const auto kind = static_cast<ValueUnitKind>(a->data().toInt());
        a->setEnabled(kind == ValueUnitKind::PerPixel || pixelSizeKnown);
        a->setToolTip(a->isEnabled() ? QString() : tr("Enter the dataset's pixel size first (View ▸ Pixel Size)"));
        a->setChecked(kind == unit.kind);
    }
    m_unit = unit;
    m_histogram->setValueUnit(unit);
    for (QDoubleSpinBox* s : {m_lowSpin, m_highSpin}) s->setSuffix(QLatin1Char(' ') % unit.symbol);
}

} // namespace tomo::ui
