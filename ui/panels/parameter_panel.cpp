#include "panels/parameter_panel.h"

#include "ui_parameter_panel.h"

#include "tomo/error.h"
#include "tomo/registry.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QSignalBlocker>
#include <QStandardItemModel>

#include <algorithm>
#include <cmath>

namespace tomo::ui {
namespace {

constexpr double kSliderStep = 0.01; // axis sliders: one step = 0.01 px
constexpr int kFineSteps = 500;      // the fine slider spans ±5 px
/// Axis values closer than this are the same axis (the spin box shows 3 decimals).
constexpr double kSameAxis = 5e-4;

QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

} // namespace

ParameterPanel::ParameterPanel(QWidget* parent)
    : Panel(tr("Parameters"), QStringLiteral("parametersDock"), DockFit::Scroll, parent),
      ui(std::make_unique<Ui::ParameterPanel>()) {
    ui->setupUi(this);
    populateChoices();
    updatePrecisionChoice();
    connect(ui->strategyCombo, &QComboBox::currentIndexChanged, this, &ParameterPanel::updatePrecisionChoice);
    connect(ui->interpolationCombo, &QComboBox::currentIndexChanged, this, &ParameterPanel::updatePrecisionChoice);
    setDataset(DatasetSummary{});

    // Row: spin box and slider mirror each other.
    connect(ui->rowSlider, &QSlider::valueChanged, ui->rowSpin, &QSpinBox::setValue);
    connect(ui->rowSpin, &QSpinBox::valueChanged, this, [this](int v) {
        QSignalBlocker b(ui->rowSlider);
        ui->rowSlider->setValue(v);
        followRow(v);
        changed();
    });
    // The tilt turns the axis line about the row on screen.
    connect(ui->tiltSpin, &QDoubleSpinBox::valueChanged, this, &ParameterPanel::changed);
    // Axis: spin box in 0.25 px steps; a coarse slider over the detector and
    // a fine one over ±5 px around the axis, both in 0.01 px steps.
    ui->fineAxisSlider->setRange(-kFineSteps, kFineSteps);
    ui->fineAxisSlider->setPageStep(25);
    connect(ui->axisSlider, &QSlider::valueChanged, this, [this](int v) { ui->axisSpin->setValue(v * kSliderStep); });
    connect(ui->fineAxisSlider, &QSlider::valueChanged, this,
            [this](int v) { ui->axisSpin->setValue(m_fineCentre + v * kSliderStep); });
    connect(ui->fineAxisSlider, &QSlider::sliderReleased, this, [this] { setAxisControls(ui->axisSpin->value()); });
    connect(ui->axisSpin, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        setAxisControls(v);
        changed();
    });
    connect(ui->centreButton, &QToolButton::clicked, this, [this] { ui->axisSpin->setValue((m_bins - 1) / 2.0); });
    connect(ui->findAxisButton, &QPushButton::clicked, this, &ParameterPanel::findAxis);
    connect(ui->offsetsBrowseButton, &QToolButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Per-projection axis offsets"), QString(),
                                                          tr("Text files (*.txt *.dat *.csv);;All files (*)"));
        if (!path.isEmpty()) loadOffsets(path);
    });
    connect(ui->offsetsClearButton, &QToolButton::clicked, this, [this] {
        m_offsets.clear();
        m_offsetsFile.clear();
        ui->offsetsEdit->clear();
        changed();
    });
    for (QComboBox* c : {ui->windowCombo, ui->paddingCombo, ui->strategyCombo, ui->interpolationCombo,
                         ui->precisionCombo, ui->slicesPerPassCombo, ui->deviceCombo, ui->openclDeviceCombo})
        connect(c, &QComboBox::currentIndexChanged, this, &ParameterPanel::changed);
    connect(ui->threadsSpin, &QSpinBox::valueChanged, this, &ParameterPanel::changed);
    connect(ui->approximateCheck, &QCheckBox::toggled, this, &ParameterPanel::changed);
    connect(ui->roiGroup, &QGroupBox::toggled, this, &ParameterPanel::changed);
    for (QSpinBox* s : {ui->roiXSpin, ui->roiYSpin, ui->roiWidthSpin, ui->roiHeightSpin})
        connect(s, &QSpinBox::valueChanged, this, &ParameterPanel::changed);
    connect(ui->roiDrawButton, &QPushButton::clicked, this, &ParameterPanel::drawRegionRequested);
    connect(ui->reconstructButton, &QPushButton::clicked, this, &ParameterPanel::reconstructRequested);
    connect(ui->cancelButton, &QPushButton::clicked, this, &ParameterPanel::cancelRequested);
    connect(ui->liveCheck, &QCheckBox::toggled, this, [this](bool on) {
        emit liveUpdateChanged(on);
        if (on) changed(); // catch up with what changed meanwhile
    });
    updateValidation();
    createActions();
}

ParameterPanel::~ParameterPanel() = default;

void ParameterPanel::createActions() {
    m_liveAction = makeAction(this, tr("&Live Update"), "live", QKeySequence(tr("Ctrl+U")),
                              tr("Reconstruct on every parameter change (latest change wins)"));
    m_liveAction->setCheckable(true);
    m_liveAction->setChecked(liveUpdate());
    connect(m_liveAction, &QAction::triggered, this, &ParameterPanel::setLiveUpdate);
    connect(this, &ParameterPanel::liveUpdateChanged, m_liveAction, &QAction::setChecked);
    m_findAxisAction = makeAction(this, tr("&Find Rotation Axis"), "find-axis", QKeySequence(tr("Ctrl+F")),
                                  tr("Estimate the rotation axis from the current row"));
    connect(m_findAxisAction, &QAction::triggered, this, &ParameterPanel::findAxis);
    auto step = [this](const QString& text, const QKeySequence& key, const QString& tip, auto slot) {
        QAction* a = makeAction(this, text, nullptr, key, tip);
        connect(a, &QAction::triggered, this, slot);
        m_stepActions << a;
    };
    step(tr("Axis −0.25 px"), QKeySequence(Qt::Key_BracketLeft), tr("Move the axis left"), [this] { nudgeAxis(-0.25); });
    step(tr("Axis +0.25 px"), QKeySequence(Qt::Key_BracketRight), tr("Move the axis right"), [this] { nudgeAxis(0.25); });
    step(tr("Axis −0.01 px"), QKeySequence(Qt::Key_BraceLeft), tr("Move the axis left, finely"), [this] { nudgeAxis(-0.01); });
    step(tr("Axis +0.01 px"), QKeySequence(Qt::Key_BraceRight), tr("Move the axis right, finely"), [this] { nudgeAxis(0.01); });
    step(tr("Previous Row"), QKeySequence(Qt::Key_PageUp), tr("Previous detector row"), [this] { stepRow(-1); });
    step(tr("Next Row"), QKeySequence(Qt::Key_PageDown), tr("Next detector row"), [this] { stepRow(1); });
}

void ParameterPanel::dockMade() {
    // As wide as the controls want: the scroll area would squeeze them.
    dock()->widget()->setMinimumWidth(sizeHint().width() + 24);
}

void ParameterPanel::populateChoices() {
    for (auto w : {tomo::FilterWindow::RamLak, tomo::FilterWindow::SheppLogan, tomo::FilterWindow::Cosine,
                   tomo::FilterWindow::Hamming, tomo::FilterWindow::Hann})
        ui->windowCombo->addItem(qs(tomo::filterWindowName(w)), static_cast<int>(w));
    for (auto p : {tomo::Padding::Edge, tomo::Padding::Zero})
        ui->paddingCombo->addItem(qs(tomo::paddingName(p)), static_cast<int>(p));
    for (auto i : {tomo::Interpolation::Linear, tomo::Interpolation::Nearest})
        ui->interpolationCombo->addItem(qs(tomo::interpolationName(i)), static_cast<int>(i));
    for (auto p : {tomo::Precision::Float32, tomo::Precision::Float16})
        ui->precisionCombo->addItem(qs(tomo::precisionName(p)), static_cast<int>(p));
    for (int s : {1, 2, 4}) ui->slicesPerPassCombo->addItem(QString::number(s), s);

    // Strategies: "auto" and every registered backend; unavailable ones are
    // greyed out with the reason as tooltip.
    auto* model = new QStandardItemModel(ui->strategyCombo);
    auto* autoItem = new QStandardItem(tr("auto (fastest available)"));
    autoItem->setData(QStringLiteral("auto"), Qt::UserRole);
    autoItem->setToolTip(tr("The fastest available exact strategy for these options (autotuned); with 'Allow "
                            "approximate', approximate ones compete too"));
    model->appendRow(autoItem);
    for (const tomo::Backend* b : tomo::BackendRegistry::instance().backends()) {
        const QString name = QString::fromStdString(b->name());
        auto* item = new QStandardItem(b->isExact() ? name : tr("%1 (approximate)").arg(name));
        item->setData(name, Qt::UserRole);
        const std::string why = b->unavailableReason();
        if (why.empty()) {
            item->setToolTip(QString::fromStdString(b->family()) % QStringLiteral(": ") %
                             QString::fromStdString(b->description()));
        } else {
            item->setEnabled(false);
            item->setToolTip(tr("Not available: %1").arg(QString::fromStdString(why)));
        }
        model->appendRow(item);
    }
    ui->strategyCombo->setModel(model);

    const auto devices = tomo::gpuDevices();
    if (devices.empty()) {
        ui->deviceCombo->addItem(tr("CPU (no GPU found)"), 0);
        ui->deviceCombo->setToolTip(tr("This build or machine has no usable GPU; CPU strategies ignore the device"));
    } else {
        for (const tomo::GpuDevice& d : devices)
            ui->deviceCombo->addItem(tr("GPU %1: %2").arg(d.index).arg(QString::fromStdString(d.name)), d.index);
        ui->deviceCombo->setToolTip(tr("GPU used by the CUDA strategies"));
    }

    // OpenCL devices: the empty choice is the programs' default
    // ($TOMO_OPENCL_DEVICE, else the first GPU, else device 0).
    const auto openclDevices = tomo::openclDevices();
    ui->openclDeviceCombo->addItem(openclDevices.empty() ? tr("none") : tr("default"), QString());
    for (const tomo::OpenClDevice& d : openclDevices)
        ui->openclDeviceCombo->addItem(tr("%1: %2 (%3)")
                                           .arg(d.index)
                                           .arg(QString::fromStdString(d.name), QString::fromStdString(d.platform)),
                                       QString::number(d.index));
    // Device names are long ("pthread-skylake-avx512-…"): the combo must not widen the dock.
    for (QComboBox* c : {ui->deviceCombo, ui->openclDeviceCombo}) {
        c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        c->setMinimumContentsLength(12);
        for (int i = 0; i < c->count(); ++i) c->setItemData(i, c->itemText(i), Qt::ToolTipRole);
    }
    ui->openclDeviceCombo->setEnabled(!openclDevices.empty());
    ui->openclDeviceCombo->setToolTip(
        openclDevices.empty()
            ? tr("No OpenCL device: %1").arg(QString::fromStdString(tomo::openclStatus()))
            : tr("Device of the OpenCL strategies (ocl-*); default: $TOMO_OPENCL_DEVICE, else the first GPU"));
}

void ParameterPanel::setDataset(const DatasetSummary& dataset) {
    ++m_blockSignals;
    m_bins = dataset.info.columns;
    m_projections = dataset.info.projections;
    const int rows = std::max(1, dataset.info.rows);
    ui->rowSlider->setRange(0, rows - 1);
    ui->rowSpin->setRange(0, rows - 1);
    ui->rowSpin->setValue(rows / 2);
    ui->rowsLabel->setText(tr("(rows 0–%1)").arg(rows - 1));
    const int bins = std::max(1, m_bins);
    ui->axisSpin->setRange(-bins / 2.0, bins * 1.5);
    ui->axisSlider->setRange(0, static_cast<int>(std::lround((bins - 1) / kSliderStep)));
    ui->axisSlider->setPageStep(static_cast<int>(1.0 / kSliderStep));
    m_row = ui->rowSpin->value();
    m_foundAxis.reset();
    setAxisControls((bins - 1) / 2.0);
    ui->tiltSpin->setValue(0.0);
    m_corrections = tomo::CorrectionOptions{};
    updateStitched();
    m_offsets.clear();
    m_offsetsFile.clear();
    ui->offsetsEdit->clear();
    m_grid = 0;
    setGrid(bins);
    ui->roiXSpin->setValue(bins / 4);
    ui->roiYSpin->setValue(bins / 4);
    ui->roiWidthSpin->setValue(std::max(1, bins / 2));
    ui->roiHeightSpin->setValue(std::max(1, bins / 2));
    ui->roiGroup->setChecked(false);
    setEnabled(dataset.info.columns > 0);
    setDivergentBeam(dataset.divergent.has_value());
    --m_blockSignals;
    updateValidation();
}

void ParameterPanel::setDivergentBeam(bool divergent) {
    m_divergent = divergent;
    // FDK has one interpolation (bilinear on the detector), one precision
    // and one slice per call; the finder and the tilt assume a parallel beam.
    const QString why = tr("Does not apply to fan/cone-beam data (FDK: bilinear detector interpolation in float32; "
                           "CPU strategies use the CPU back-projector, GPU strategies the CUDA one)");
    // Each greyed control says why it does not apply.
    const QString finder =
        tr("Not for fan/cone-beam data: the finder matches each view with its mirror 180° later, which only a "
           "parallel beam makes (a fan beam's mirrored rays meet the detector elsewhere). Move the axis by hand in "
           "the live view ([ and ] keys, or the slider)");
    const QString tilt = tr("Not for fan/cone-beam data: FDK's geometry has no axis tilt");
    for (QWidget* w : std::initializer_list<QWidget*>{ui->interpolationCombo, ui->precisionCombo,
                                                      ui->slicesPerPassCombo, ui->tiltSpin, ui->findAxisButton}) {
        w->setEnabled(!divergent && !(m_stitched && (w == ui->tiltSpin || w == ui->findAxisButton)));
        // The designer's tooltip is kept for parallel-beam data.
        if (!w->property("parallelToolTip").isValid()) w->setProperty("parallelToolTip", w->toolTip());
        w->setToolTip(!divergent ? w->property("parallelToolTip").toString()
                      : w == ui->findAxisButton ? finder
                      : w == ui->tiltSpin       ? tilt
                                                : why);
    }
    if (divergent) ui->tiltSpin->setValue(0.0);
    updatePrecisionChoice();
    ui->rowLabel->setToolTip(divergent ? tr("Slice of the FDK volume (one per detector row, cubic voxels of the "
                                            "detector pixel at the rotation axis)")
                                       : QString());
}

void ParameterPanel::setGrid(int size) {
    size = std::max(1, size);
    if (size == m_grid) return;
    m_grid = size;
    ++m_blockSignals;
    for (QSpinBox* s : {ui->roiXSpin, ui->roiYSpin}) s->setRange(0, size - 1);
    for (QSpinBox* s : {ui->roiWidthSpin, ui->roiHeightSpin}) s->setRange(1, size);
    --m_blockSignals;
}

void ParameterPanel::followRow(int row) {
    const double tilt = ui->tiltSpin->value();
    if (tilt != 0.0) setAxisControls(tomo::AxisLine{ui->axisSpin->value(), tilt, static_cast<double>(m_row)}.at(row));
    m_row = row;
}

void ParameterPanel::setAxisControls(double axis) {
    QSignalBlocker a(ui->axisSpin), b(ui->axisSlider), c(ui->fineAxisSlider);
    ui->axisSpin->setValue(axis);
    axis = ui->axisSpin->value(); // as the spin box rounds it
    ui->axisSlider->setValue(static_cast<int>(std::lround(axis / kSliderStep)));
    // While the fine slider is dragged it stays where the mouse is; otherwise
    // it is centred on the axis, so it always reaches ±5 px further.
    if (!ui->fineAxisSlider->isSliderDown()) {
        m_fineCentre = axis;
        ui->fineAxisSlider->setValue(0);
    }
    // The confidence belongs to the axis that was found, not to a moved one.
    if (m_foundAxis && std::abs(axis - *m_foundAxis) > kSameAxis) {
        m_foundAxis.reset();
        ui->confidenceLabel->clear();
        ui->confidenceLabel->setToolTip(QString());
    }
}

SliceParams ParameterPanel::params() const {
    SliceParams p;
    p.row = ui->rowSpin->value();
    p.axis = ui->axisSpin->value();
    p.axisTilt = ui->tiltSpin->value();
    p.corrections = m_corrections;
    p.axisOffsets = m_offsets;
    p.axisOffsetsFile = m_offsetsFile;
    if (ui->roiGroup->isChecked()) {
        tomo::Region r{ui->roiXSpin->value(), ui->roiYSpin->value(), ui->roiWidthSpin->value(),
                       ui->roiHeightSpin->value()};
        r.width = std::min(r.width, m_grid - r.x);
        r.height = std::min(r.height, m_grid - r.y);
        p.region = r;
    }
    tomo::ReconOptions& o = p.options;
    o.strategy = ui->strategyCombo->currentData(Qt::UserRole).toString().toStdString();
    o.interpolation = static_cast<tomo::Interpolation>(ui->interpolationCombo->currentData().toInt());
    o.precision = static_cast<tomo::Precision>(ui->precisionCombo->currentData().toInt());
    o.slicesPerPass = ui->slicesPerPassCombo->currentData().toInt();
    o.filter.window = static_cast<tomo::FilterWindow>(ui->windowCombo->currentData().toInt());
    o.filter.padding = static_cast<tomo::Padding>(ui->paddingCombo->currentData().toInt());
    o.device = ui->deviceCombo->currentData().toInt();
    o.openclDevice = ui->openclDeviceCombo->currentData().toString().toStdString();
    o.threads = ui->threadsSpin->value();
    o.allowApproximate = ui->approximateCheck->isChecked();
    o.iterative = m_iterative;
    p.gpus = m_gpus;
    return p;
}

void ParameterPanel::setParams(const SliceParams& p) {
    ++m_blockSignals;
    ui->rowSpin->setValue(p.row);
    setAxisControls(std::isfinite(p.axis) ? p.axis : (m_bins - 1) / 2.0);
    ui->tiltSpin->setValue(p.axisTilt);
    const bool otherCorrections = !(p.corrections == m_corrections);
    m_corrections = p.corrections;
    updateStitched();
    m_offsets = p.axisOffsets;
    m_offsetsFile = p.axisOffsetsFile;
    m_gpus = p.gpus;
    ui->offsetsEdit->setText(m_offsetsFile);
    setRegion(p.region);
    auto select = [](QComboBox* c, const QVariant& v) {
        const int i = c->findData(v, Qt::UserRole);
        if (i >= 0) c->setCurrentIndex(i);
    };
    select(ui->strategyCombo, QString::fromStdString(p.options.strategy));
    select(ui->interpolationCombo, static_cast<int>(p.options.interpolation));
    select(ui->precisionCombo, static_cast<int>(p.options.precision));
    select(ui->slicesPerPassCombo, p.options.slicesPerPass);
    select(ui->windowCombo, static_cast<int>(p.options.filter.window));
    select(ui->paddingCombo, static_cast<int>(p.options.filter.padding));
    select(ui->deviceCombo, p.options.device);
    select(ui->openclDeviceCombo, QString::fromStdString(p.options.openclDevice));
    ui->threadsSpin->setValue(p.options.threads);
    ui->approximateCheck->setChecked(p.options.allowApproximate);
    const bool otherMethod = !tomo::sameMethod(p.options.iterative, m_iterative);
    m_iterative = p.options.iterative;
    --m_blockSignals;
    if (otherCorrections) emit correctionsReplaced(m_corrections);
    if (otherMethod) emit iterativeReplaced(m_iterative);
    changed();
}

void ParameterPanel::setCorrections(const tomo::CorrectionOptions& corrections) {
    if (corrections == m_corrections) return;
    // 360° stitching changes the slice grid: a region drawn on the old one means nothing on the new.
    if (!(corrections.halfAcquisition == m_corrections.halfAcquisition)) {
        ++m_blockSignals;
        ui->roiGroup->setChecked(false);
        --m_blockSignals;
    }
    m_corrections = corrections;
    updateStitched();
    changed();
}

void ParameterPanel::setIterative(const tomo::IterativeOptions& iterative) {
    if (tomo::sameMethod(iterative, m_iterative)) return;
    m_iterative = iterative;
    changed();
}

void ParameterPanel::updateStitched() {
    const bool stitched = m_corrections.halfAcquisition.enabled;
    for (QWidget* w : std::initializer_list<QWidget*>{ui->axisSpin, ui->axisSlider, ui->fineAxisSlider, ui->centreButton,
                                                      ui->tiltSpin, ui->findAxisButton})
        w->setEnabled(!stitched && !(m_divergent && (w == ui->tiltSpin || w == ui->findAxisButton)));
    if (stitched == m_stitched) return;
    m_stitched = stitched;
    m_foundAxis.reset(); // the note below replaces the finder's, or goes with it
    ui->confidenceLabel->setText(stitched ? tr("360° half acquisition: the slice's axis is the stitched sinogram's "
                                               "centre; the scan's axis is set in the Corrections panel.")
                                          : QString());
    ui->confidenceLabel->setToolTip(QString());
}

void ParameterPanel::setRegion(const std::optional<tomo::Region>& region) {
    ++m_blockSignals;
    ui->roiGroup->setChecked(region.has_value());
    if (region) {
        ui->roiXSpin->setValue(region->x);
        ui->roiYSpin->setValue(region->y);
        ui->roiWidthSpin->setValue(region->width);
        ui->roiHeightSpin->setValue(region->height);
    }
    --m_blockSignals;
    changed();
}

QString ParameterPanel::validationError() const {
    if (m_bins <= 0) return tr("No dataset");
    const SliceParams p = params();
    try {
        if (p.options.strategy == "auto") {
            tomo::ReconGeometry g;
            tomo::BackendRegistry::instance().resolve(p.options, g);
        } else if (const tomo::Backend* b = tomo::BackendRegistry::instance().find(p.options.strategy)) {
            b->checkOptions(p.options);
        }
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    if (!m_offsets.empty() && static_cast<int>(m_offsets.size()) != m_projections)
        return tr("%1 axis offsets for %2 projections").arg(m_offsets.size()).arg(m_projections);
    try {
        m_corrections.validate();
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

void ParameterPanel::updateValidation() {
    // Only auto chooses: a named strategy is what runs, approximate or not.
    ui->approximateCheck->setEnabled(ui->strategyCombo->currentData(Qt::UserRole).toString() == QLatin1String("auto"));
    const QString error = m_bins > 0 ? validationError() : QString();
    ui->validationLabel->setText(error);
    ui->validationLabel->setVisible(!error.isEmpty());
    ui->reconstructButton->setEnabled(m_bins > 0 && error.isEmpty());
}

void ParameterPanel::updatePrecisionChoice() {
    auto* model = qobject_cast<QStandardItemModel*>(ui->precisionCombo->model());
    const int index = ui->precisionCombo->findData(static_cast<int>(tomo::Precision::Float16));
    if (!model || index < 0) return;
    tomo::ReconOptions half;
    half.precision = tomo::Precision::Float16;
    half.interpolation = static_cast<tomo::Interpolation>(ui->interpolationCombo->currentData().toInt());
    const QString strategy = ui->strategyCombo->currentData().toString();
    // Why `b` cannot compute in half precision here (empty: it can).
    const auto refusal = [&](const tomo::Backend& b) -> QString {
        if (const std::string why = b.unavailableReason(); !why.empty()) return QString::fromStdString(why);
        try {
            b.checkOptions(half);
            return {};
        } catch (const std::exception& e) {
            return QString::fromUtf8(e.what());
        }
    };
    QString why;
    if (strategy == QLatin1String("auto")) {
        const auto backends = tomo::BackendRegistry::instance().backends();
        const bool any = std::any_of(backends.begin(), backends.end(),
                                     [&](const tomo::Backend* b) { return refusal(*b).isEmpty(); });
        if (!any)
            why = tr("No strategy on this machine computes in half precision (float16 needs a CUDA GPU or an OpenCL "
                     "device with cl_khr_fp16)");
    } else if (const tomo::Backend* b = tomo::BackendRegistry::instance().find(strategy.toStdString())) {
        const QString refused = refusal(*b);
        if (!refused.isEmpty()) why = tr("%1 does not compute in half precision: %2").arg(strategy, refused);
    }
    QStandardItem* item = model->item(index);
    item->setEnabled(why.isEmpty());
    item->setToolTip(why.isEmpty() ? tr("Filtered sinogram stored as float16: half the memory traffic, approximate")
                                   : why);
    if (!why.isEmpty() && ui->precisionCombo->currentIndex() == index) {
        ++m_blockSignals;
        ui->precisionCombo->setCurrentIndex(ui->precisionCombo->findData(static_cast<int>(tomo::Precision::Float32)));
        --m_blockSignals;
    }
    if (m_divergent) return; // setDivergentBeam's reason stands
    if (!ui->precisionCombo->property("parallelToolTip").isValid())
        ui->precisionCombo->setProperty("parallelToolTip", ui->precisionCombo->toolTip());
    const QString designed = ui->precisionCombo->property("parallelToolTip").toString();
    ui->precisionCombo->setToolTip(why.isEmpty() ? designed : designed % QStringLiteral(". ") % why);
}

QString ParameterPanel::halfPrecisionReason() const {
    const int index = ui->precisionCombo->findData(static_cast<int>(tomo::Precision::Float16));
    const auto* model = qobject_cast<const QStandardItemModel*>(ui->precisionCombo->model());
    if (!model || index < 0 || model->item(index)->isEnabled()) return {};
    return model->item(index)->toolTip();
}

void ParameterPanel::changed() {
    if (m_blockSignals) return;
    updateValidation();
    emit paramsChanged();
}

bool ParameterPanel::liveUpdate() const { return ui->liveCheck->isChecked(); }
void ParameterPanel::setLiveUpdate(bool on) { ui->liveCheck->setChecked(on); }

void ParameterPanel::setBusy(bool busy) { ui->cancelButton->setEnabled(busy); }

void ParameterPanel::setAxisEstimate(const AxisResult& r, bool automatic) {
    const double c = r.estimate.confidence;
    const QString colour = c < 0.2 ? QStringLiteral("#c0392b") : (c < 0.5 ? QStringLiteral("#b9770e") : QStringLiteral("#1e8449"));
    const QString how = automatic ? tr("found automatically on opening") : tr("found");
    ui->confidenceLabel->setText(QStringLiteral("<span style='color:%1'>%2, confidence %3 %%4</span>")
                                     .arg(colour, how)
                                     .arg(c * 100.0, 0, 'f', 0)
                                     .arg(c < 0.2 ? tr(" (doubtful)") : QString()));
    ui->confidenceLabel->setToolTip(tr("Found %1 px on row %2 (%3); confidence %4 (below 20 % is doubtful). "
                                       "Shown while the axis stays there.")
                                        .arg(r.estimate.axis, 0, 'f', 3)
                                        .arg(r.row)
                                        .arg(QString::fromStdString(r.estimate.method))
                                        .arg(c, 0, 'f', 2));
    const double before = ui->axisSpin->value();
    setAxisControls(r.estimate.axis);
    m_foundAxis = ui->axisSpin->value();
    // On opening, setParams follows with this axis; a search from the button
    // reconstructs only when the axis moved.
    if (!automatic && *m_foundAxis != before) changed();
}

bool ParameterPanel::axisIsFound() const { return m_foundAxis.has_value(); }

QString ParameterPanel::axisNote() const { return ui->confidenceLabel->text(); }

void ParameterPanel::findAxis() {
    if (m_bins <= 0) return;
    setAxisSearching();
    emit findAxisRequested(ui->rowSpin->value());
}

void ParameterPanel::setAxisSearching() {
    m_foundAxis.reset();
    ui->confidenceLabel->setToolTip(QString());
    ui->confidenceLabel->setText(tr("searching…"));
}

void ParameterPanel::setAxisSearchFailed(const QString& why) {
    m_foundAxis.reset();
    ui->confidenceLabel->setText(QStringLiteral("<span style='color:#c0392b'>%1</span>").arg(tr("not found")));
    ui->confidenceLabel->setToolTip(why.isEmpty() ? tr("The axis finder failed on this row; the error message says why")
                                                  : tr("The axis finder failed: %1").arg(why));
}

void ParameterPanel::nudgeAxis(double delta) { ui->axisSpin->setValue(ui->axisSpin->value() + delta); }
void ParameterPanel::setAxis(double axis) { ui->axisSpin->setValue(axis); }
void ParameterPanel::stepRow(int delta) { ui->rowSpin->setValue(ui->rowSpin->value() + delta); }

void ParameterPanel::loadOffsets(const QString& path) {
    try {
        m_offsets = tomo::readAxisOffsetsFile(path.toStdString(), m_projections);
        m_offsetsFile = path;
        ui->offsetsEdit->setText(path);
        ui->offsetsEdit->setToolTip(tr("%1 offsets from %2").arg(m_offsets.size()).arg(path));
        changed();
    } catch (const std::exception& e) {
        emit failed(tr("Cannot read the axis offsets"), QString::fromUtf8(e.what()));
    }
}

} // namespace tomo::ui
