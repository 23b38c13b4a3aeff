#include "panels/corrections_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace tomo::ui {
namespace {

QDoubleSpinBox* doubleSpin(double min, double max, double value, int decimals, double step, const QString& tip,
                           const QString& suffix = {}) {
    auto* s = new QDoubleSpinBox;
    s->setRange(min, max);
    s->setDecimals(decimals);
    s->setSingleStep(step);
    s->setValue(value);
    s->setSuffix(suffix);
    s->setToolTip(tip);
    s->setKeyboardTracking(false);
    return s;
}

QSpinBox* intSpin(int min, int max, int value, int step, const QString& tip) {
    auto* s = new QSpinBox;
    s->setRange(min, max);
    s->setSingleStep(step);
    s->setValue(value);
    s->setToolTip(tip);
    s->setKeyboardTracking(false);
    return s;
}

QGroupBox* checkableGroup(const QString& title, const QString& tip) {
    auto* g = new QGroupBox(title);
    g->setCheckable(true);
    g->setChecked(false);
    g->setToolTip(tip);
    return g;
}

/// "column 0 (row 3), column 17 (row 3), … (+ 4 more)" of the first positions.
QString positions(const std::vector<tomo::PixelPosition>& list, std::size_t count) {
    QStringList items;
    for (std::size_t i = 0; i < std::min<std::size_t>(list.size(), 4); ++i)
        items << QObject::tr("column %1").arg(list[i].column);
    QString text = items.join(QStringLiteral(", "));
    const auto shown = static_cast<std::size_t>(items.size());
    if (count > shown) text += QObject::tr(", … (%1 more)").arg(count - shown);
    return text;
}

} // namespace

CorrectionsPanel::CorrectionsPanel(QWidget* parent)
    : Panel(tr("Corrections"), QStringLiteral("correctionsDock"), DockFit::Scroll, parent) {
    // Dead, zero and saturated pixels (on by default).
    m_deadGroup = checkableGroup(tr("Dead pixels"),
                                 tr("Pixels without a usable flat, values without a positive transmission and "
                                    "saturated values are interpolated along the row before the log (instead of "
                                    "being clamped to p = 11.5)"));
    m_deadGroup->setObjectName(QStringLiteral("deadPixelsGroup"));
    m_saturation = doubleSpin(0.0, 1e12, 0.0, 0, 100.0,
                              tr("Raw values at or above this are saturated; 0 = the sample type's largest value "
                                 "(65535 for 16-bit), none for float data"));
    m_saturation->setSpecialValueText(tr("type maximum"));
    m_saturation->setObjectName(QStringLiteral("saturationSpin"));
    auto* deadForm = new QFormLayout(m_deadGroup);
    deadForm->addRow(tr("Saturation"), m_saturation);

    // Beam-intensity normalisation from open-beam columns.
    m_backgroundGroup = checkableGroup(tr("Beam normalisation"),
                                       tr("Columns that see only the open beam: each line of every projection is "
                                          "divided by their mean (corrects beam intensity drifts)"));
    m_backgroundGroup->setObjectName(QStringLiteral("backgroundGroup"));
    m_backgroundFirst = intSpin(0, 1, 0, 1, tr("First background column (0-based)"));
    m_backgroundCount = intSpin(1, 1, 20, 1, tr("Number of background columns"));
    m_backgroundFirst->setObjectName(QStringLiteral("backgroundFirstSpin"));
    m_backgroundCount->setObjectName(QStringLiteral("backgroundCountSpin"));
    auto* backgroundForm = new QFormLayout(m_backgroundGroup);
    backgroundForm->addRow(tr("First column"), m_backgroundFirst);
    backgroundForm->addRow(tr("Columns"), m_backgroundCount);

    // Zingers.
    m_zingerGroup = checkableGroup(tr("Zingers"),
                                   tr("Single bright outliers (direct hits on the detector) replaced by the median "
                                      "of their window, in projections, flats and darks"));
    m_zingerGroup->setObjectName(QStringLiteral("zingerGroup"));
    m_zingerThreshold = doubleSpin(0.001, 100.0, 0.3, 3, 0.05,
                                   tr("A value is a zinger when it exceeds its local median by more than this share "
                                      "of the median (or of the sinogram's mean value)"));
    m_zingerWindow = intSpin(3, 99, 3, 2, tr("Odd width of the median window (projections and columns)"));
    m_zingerThreshold->setObjectName(QStringLiteral("zingerThresholdSpin"));
    m_zingerWindow->setObjectName(QStringLiteral("zingerWindowSpin"));
    auto* zingerForm = new QFormLayout(m_zingerGroup);
    zingerForm->addRow(tr("Threshold"), m_zingerThreshold);
    zingerForm->addRow(tr("Window"), m_zingerWindow);

    // Rings (stripes in the sinogram).
    auto* ringGroup = new QGroupBox(tr("Rings"));
    ringGroup->setToolTip(tr("Stripe removal in the sinogram: Vo, Atwood & Drakopoulos, Opt. Express 26, 28396 "
                             "(2018); Münch et al., Opt. Express 17, 8567 (2009)"));
    m_ringMethod = new QComboBox;
    m_ringMethod->setObjectName(QStringLiteral("ringMethodCombo"));
    const std::pair<tomo::RingMethod, QString> methods[] = {
        {tomo::RingMethod::Off, tr("off")},
        {tomo::RingMethod::All, tr("Vo: all stripes (dead, large, sorting)")},
        {tomo::RingMethod::Sorting, tr("Vo: sorting (small and partial stripes)")},
        {tomo::RingMethod::Large, tr("Vo: large stripes")},
        {tomo::RingMethod::Dead, tr("Vo: dead stripes")},
        {tomo::RingMethod::Wavelet, tr("Münch: wavelet–Fourier")}};
    for (const auto& [method, label] : methods) {
        m_ringMethod->addItem(label, static_cast<int>(method));
        m_ringMethod->setItemData(m_ringMethod->count() - 1, label, Qt::ToolTipRole);
    }
    // The long method names must not widen the panel past a narrow dock (the list shows them whole).
    m_ringMethod->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_ringMethod->setMinimumContentsLength(14);
    m_ringSnr = doubleSpin(1.01, 1000.0, 3.0, 2, 0.5, tr("Stripe detection ratio: larger finds fewer stripes"));
    m_sortingWindow = intSpin(3, 1001, 21, 2, tr("Odd median window across columns of the sorting method"));
    m_largeWindow = intSpin(3, 2001, 51, 2, tr("Odd median window of the large and dead stripe detection"));
    m_dropRatio = doubleSpin(0.0, 0.8, 0.1, 2, 0.05,
                             tr("Share of the sorted values dropped at each end when measuring a stripe's strength"));
    m_waveletLevel = intSpin(1, 20, 5, 1, tr("Wavelet decomposition levels (deeper also damps the object's coarse profile)"));
    m_waveletSigma = doubleSpin(0.01, 1000.0, 2.0, 2, 0.5, tr("Width of the Gaussian damping, in frequency samples"));
    m_ringSnr->setObjectName(QStringLiteral("ringSnrSpin"));
    m_sortingWindow->setObjectName(QStringLiteral("sortingWindowSpin"));
    m_largeWindow->setObjectName(QStringLiteral("largeWindowSpin"));
    m_dropRatio->setObjectName(QStringLiteral("dropRatioSpin"));
    m_waveletLevel->setObjectName(QStringLiteral("waveletLevelSpin"));
    m_waveletSigma->setObjectName(QStringLiteral("waveletSigmaSpin"));
    m_ringLayout = new QFormLayout(ringGroup);
    m_ringLayout->addRow(tr("Method"), m_ringMethod);
    m_ringLayout->addRow(tr("SNR"), m_ringSnr);
    m_ringLayout->addRow(tr("Sorting window"), m_sortingWindow);
    m_ringLayout->addRow(tr("Large window"), m_largeWindow);
    m_ringLayout->addRow(tr("Drop ratio"), m_dropRatio);
    m_ringLayout->addRow(tr("Wavelet levels"), m_waveletLevel);
    m_ringLayout->addRow(tr("Wavelet sigma"), m_waveletSigma);
    // The damage guard of the row on screen, beside the method that caused it.
    m_ringDamage = new QLabel;
    m_ringDamage->setObjectName(QStringLiteral("ringDamageLabel"));
    m_ringDamage->setWordWrap(true);
    m_ringDamage->setToolTip(tr("What the ring removal changed beyond stripes in this row: the share of the object's "
                                "variation along the angles, and the change of its integral (the slice's mean). "
                                "Above 5 % or 0.25 % the removal is damaging the sample (README, \"Corrections\")."));
    auto* difference = new QPushButton(tr("Show the difference"));
    difference->setObjectName(QStringLiteral("ringDifferenceButton"));
    difference->setToolTip(tr("Pin this slice without ring removal as the reference: the Quality panel shows what the "
                              "removal changed"));
    connect(difference, &QPushButton::clicked, this, &CorrectionsPanel::ringDifferenceRequested);
    m_ringGuard = new QWidget;
    m_ringGuard->setObjectName(QStringLiteral("ringGuard"));
    auto* guardLayout = new QVBoxLayout(m_ringGuard);
    guardLayout->setContentsMargins(0, 0, 0, 0);
    guardLayout->addWidget(m_ringDamage);
    guardLayout->addWidget(difference, 0, Qt::AlignLeft);
    m_ringGuard->hide();
    m_ringLayout->addRow(m_ringGuard);

    // Paganin phase retrieval.
    m_paganinGroup = checkableGroup(tr("Paganin phase retrieval"),
                                    tr("Single-distance phase retrieval on whole projections (Paganin et al. 2002): "
                                       "for propagation-based phase contrast; it blurs by the kernel length"));
    m_paganinGroup->setObjectName(QStringLiteral("paganinGroup"));
    m_deltaOverBeta = doubleSpin(0.001, 1e6, 100.0, 3, 10.0, tr("δ/β of the (assumed homogeneous) material"));
    m_energy = doubleSpin(0.1, 1000.0, 20.0, 3, 1.0, tr("Photon energy"), tr(" keV"));
    m_distance = doubleSpin(0.0001, 100.0, 0.2, 4, 0.05, tr("Sample–detector propagation distance"), tr(" m"));
    m_paganinPixel = new QLabel;
    m_paganinPixel->setObjectName(QStringLiteral("paganinPixelLabel"));
    m_paganinPixel->setWordWrap(true);
    m_deltaOverBeta->setObjectName(QStringLiteral("deltaOverBetaSpin"));
    m_energy->setObjectName(QStringLiteral("energySpin"));
    m_distance->setObjectName(QStringLiteral("distanceSpin"));
    auto* paganinForm = new QFormLayout(m_paganinGroup);
    paganinForm->addRow(tr("δ/β"), m_deltaOverBeta);
    paganinForm->addRow(tr("Energy"), m_energy);
    paganinForm->addRow(tr("Distance"), m_distance);
    paganinForm->addRow(tr("Pixel size"), m_paganinPixel);

    // 360° half acquisition.
    m_halfGroup = checkableGroup(tr("360° half acquisition"),
                                 tr("A 360° scan with the axis near one detector edge: each view is stitched with "
                                    "its mirrored partner 180° later into a double-width 180° sinogram"));
    m_halfGroup->setObjectName(QStringLiteral("halfAcquisitionGroup"));
    m_halfAuto = new QCheckBox(tr("Find the axis automatically"));
    m_halfAuto->setChecked(true);
    m_halfAuto->setObjectName(QStringLiteral("halfAutoCheck"));
    m_halfAxis = doubleSpin(-1e6, 1e6, 0.0, 3, 0.25, tr("The scan's rotation axis on the detector (column, 0-based)"),
                            tr(" px"));
    m_halfAxis->setEnabled(false);
    m_halfAxis->setObjectName(QStringLiteral("halfAxisSpin"));
    m_halfWindow = intSpin(6, 100000, 100, 10, tr("Width of the matching window of the automatic axis search (columns)"));
    m_halfWindow->setObjectName(QStringLiteral("halfWindowSpin"));
    auto* halfForm = new QFormLayout(m_halfGroup);
    halfForm->addRow(m_halfAuto);
    halfForm->addRow(tr("Scan axis"), m_halfAxis);
    halfForm->addRow(tr("Window"), m_halfWindow);

    m_found = new QLabel;
    m_found->setObjectName(QStringLiteral("correctionsFoundLabel"));
    m_found->setWordWrap(true);
    m_found->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_problem = new QLabel;
    m_problem->setObjectName(QStringLiteral("correctionsProblemLabel"));
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_problem->hide();
    auto* defaults = new QPushButton(tr("Defaults"));
    defaults->setToolTip(tr("Dead-pixel interpolation on, every other correction off"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    for (QWidget* w : std::initializer_list<QWidget*>{m_deadGroup, m_backgroundGroup, m_zingerGroup, ringGroup,
                                                      m_paganinGroup, m_halfGroup, m_problem, m_found})
        layout->addWidget(w);
    layout->addStretch(1);
    layout->addWidget(defaults, 0, Qt::AlignLeft);

    for (QGroupBox* g : {m_deadGroup, m_backgroundGroup, m_zingerGroup, m_paganinGroup, m_halfGroup})
        connect(g, &QGroupBox::toggled, this, &CorrectionsPanel::changed);
    for (QDoubleSpinBox* s : {m_saturation, m_zingerThreshold, m_ringSnr, m_dropRatio, m_waveletSigma, m_deltaOverBeta,
                              m_energy, m_distance, m_halfAxis})
        connect(s, &QDoubleSpinBox::valueChanged, this, &CorrectionsPanel::changed);
    for (QSpinBox* s : {m_backgroundFirst, m_backgroundCount, m_zingerWindow, m_sortingWindow, m_largeWindow,
                        m_waveletLevel, m_halfWindow})
        connect(s, &QSpinBox::valueChanged, this, &CorrectionsPanel::changed);
    connect(m_ringMethod, &QComboBox::currentIndexChanged, this, [this] {
        updateRingRows();
        changed();
    });
    connect(m_halfAuto, &QCheckBox::toggled, this, [this](bool automatic) {
        m_halfAxis->setEnabled(!automatic);
        changed();
    });
    connect(defaults, &QPushButton::clicked, this, [this] {
        setOptions(tomo::CorrectionOptions{});
        emit optionsChanged(options());
    });
    updateRingRows();
    setPixelSize(0.0);
}

void CorrectionsPanel::updateRingRows() {
    const auto method = static_cast<tomo::RingMethod>(m_ringMethod->currentData().toInt());
    const bool vo = method != tomo::RingMethod::Off && method != tomo::RingMethod::Wavelet;
    const bool sorting = method == tomo::RingMethod::Sorting || method == tomo::RingMethod::All;
    const bool large = method == tomo::RingMethod::Large || method == tomo::RingMethod::Dead ||
                       method == tomo::RingMethod::All;
    m_ringLayout->setRowVisible(m_ringSnr, vo && method != tomo::RingMethod::Sorting);
    m_ringLayout->setRowVisible(m_sortingWindow, sorting);
    m_ringLayout->setRowVisible(m_largeWindow, large);
    m_ringLayout->setRowVisible(m_dropRatio, method == tomo::RingMethod::Large || method == tomo::RingMethod::All);
    m_ringLayout->setRowVisible(m_waveletLevel, method == tomo::RingMethod::Wavelet);
    m_ringLayout->setRowVisible(m_waveletSigma, method == tomo::RingMethod::Wavelet);
}

tomo::CorrectionOptions CorrectionsPanel::options() const {
    tomo::CorrectionOptions o;
    o.badPixels.enabled = m_deadGroup->isChecked();
    if (o.badPixels.enabled) o.badPixels.saturation = m_saturation->value();
    if (m_backgroundGroup->isChecked()) {
        o.flatField.backgroundFirst = m_backgroundFirst->value();
        o.flatField.backgroundCount = m_backgroundCount->value();
    }
    if (m_zingerGroup->isChecked()) {
        o.zingers.enabled = true;
        o.zingers.threshold = m_zingerThreshold->value();
        o.zingers.window = m_zingerWindow->value();
    }
    o.rings.method = static_cast<tomo::RingMethod>(m_ringMethod->currentData().toInt());
    if (o.rings.method != tomo::RingMethod::Off) {
        o.rings.snr = m_ringSnr->value();
        o.rings.sortingWindow = m_sortingWindow->value();
        o.rings.largeWindow = m_largeWindow->value();
        o.rings.dropRatio = m_dropRatio->value();
        o.rings.waveletLevel = m_waveletLevel->value();
        o.rings.waveletSigma = m_waveletSigma->value();
    }
    if (m_paganinGroup->isChecked()) {
        o.paganin.enabled = true;
        o.paganin.deltaOverBeta = m_deltaOverBeta->value();
        o.paganin.energyKeV = m_energy->value();
        o.paganin.distanceM = m_distance->value();
        o.paganin.pixelSizeM = m_pixelUm * 1e-6;
    }
    if (m_halfGroup->isChecked()) {
        o.halfAcquisition.enabled = true;
        if (!m_halfAuto->isChecked()) o.halfAcquisition.axis = m_halfAxis->value();
        o.halfAcquisition.window = m_halfWindow->value();
    }
    return o;
}

void CorrectionsPanel::setOptions(const tomo::CorrectionOptions& o) {
    ++m_blockSignals;
    m_deadGroup->setChecked(o.badPixels.enabled);
    m_saturation->setValue(o.badPixels.saturation);
    m_backgroundGroup->setChecked(o.flatField.backgroundCount > 0);
    if (o.flatField.backgroundCount > 0) {
        m_backgroundFirst->setValue(o.flatField.backgroundFirst);
        m_backgroundCount->setValue(o.flatField.backgroundCount);
    }
    m_zingerGroup->setChecked(o.zingers.enabled);
    m_zingerThreshold->setValue(o.zingers.threshold);
    m_zingerWindow->setValue(o.zingers.window);
    m_ringMethod->setCurrentIndex(std::max(0, m_ringMethod->findData(static_cast<int>(o.rings.method))));
    m_ringSnr->setValue(o.rings.snr);
    m_sortingWindow->setValue(o.rings.sortingWindow);
    m_largeWindow->setValue(o.rings.largeWindow);
    m_dropRatio->setValue(o.rings.dropRatio);
    m_waveletLevel->setValue(o.rings.waveletLevel);
    m_waveletSigma->setValue(o.rings.waveletSigma);
    updateRingRows();
    m_paganinGroup->setChecked(o.paganin.enabled);
    if (o.paganin.enabled) { // off: the controls keep values worth starting from
        m_deltaOverBeta->setValue(o.paganin.deltaOverBeta);
        m_energy->setValue(o.paganin.energyKeV);
        m_distance->setValue(o.paganin.distanceM); // its pixel size is the dataset's (setPixelSize)
    }
    m_halfGroup->setChecked(o.halfAcquisition.enabled);
    m_halfAuto->setChecked(!o.halfAcquisition.axis);
    m_halfAxis->setEnabled(o.halfAcquisition.axis.has_value());
    if (o.halfAcquisition.axis) m_halfAxis->setValue(*o.halfAcquisition.axis);
    m_halfWindow->setValue(o.halfAcquisition.window);
    m_problem->clear();
    m_problem->hide();
    --m_blockSignals;
}

void CorrectionsPanel::setDataset(const DatasetSummary& dataset) {
    const int columns = std::max(1, dataset.info.columns);
    ++m_blockSignals;
    m_backgroundFirst->setRange(0, columns - 1);
    m_backgroundCount->setRange(1, columns);
    m_backgroundCount->setValue(std::min(20, columns));
    m_halfAxis->setRange(-0.5, columns - 0.5);
    m_halfAxis->setValue((columns - 1) / 2.0);
    --m_blockSignals;
    setOptions(tomo::CorrectionOptions{});
    m_found->clear();
    m_ringDamage->clear();
    m_ringWarns = false;
    m_ringGuard->hide();
    setEnabled(dataset.info.columns > 0);
}

void CorrectionsPanel::setPixelSize(double micrometres) {
    const double before = m_pixelUm;
    m_pixelUm = std::max(0.0, micrometres);
    const bool known = m_pixelUm > 0.0;
    m_paganinPixel->setText(known ? tr("%1 µm (the dataset's)").arg(m_pixelUm, 0, 'g', 6)
                                  : tr("not known: enter it in the Dataset panel"));
    m_paganinGroup->setEnabled(known);
    m_paganinGroup->setToolTip(
        known ? tr("Single-distance phase retrieval on whole projections (Paganin et al. 2002): for propagation-based "
                   "phase contrast; it blurs by the kernel length. Pixel size: the dataset's (Dataset panel)")
              : tr("Paganin's filter needs the pixel size: enter it in the Dataset panel"));
    if (!known && m_paganinGroup->isChecked()) {
        ++m_blockSignals;
        m_paganinGroup->setChecked(false);
        --m_blockSignals;
    }
    if (before != m_pixelUm && (m_paganinGroup->isChecked() || (!known && before > 0.0))) changed();
}

void CorrectionsPanel::changed() {
    if (m_blockSignals) return;
    const tomo::CorrectionOptions o = options();
    try {
        o.validate();
    } catch (const std::exception& e) {
        m_problem->setText(QString::fromUtf8(e.what()));
        m_problem->show();
        return;
    }
    m_problem->clear();
    m_problem->hide();
    emit optionsChanged(o);
}

void CorrectionsPanel::showRejected(const QString& message) {
    m_problem->setText(tr("Not applied: %1").arg(message));
    m_problem->show();
}

void CorrectionsPanel::showResult(const SliceResult& r) {
    const tomo::PreprocessStats& s = r.preview.corrections;
    const tomo::CorrectionOptions& o = r.params.corrections;
    QStringList lines;
    lines << tr("<b>Row %1</b>: %2").arg(r.params.row).arg(QString::fromStdString(o.summary()));
    if (s.deadPixelCount > 0)
        lines << tr("Dead pixels interpolated: %1 (%2)").arg(s.deadPixelCount).arg(positions(s.deadPixels, s.deadPixelCount));
    if (s.badValueCount > 0)
        lines << tr("Single bad values interpolated (no transmission or saturated): %1").arg(s.badValueCount);
    if (o.zingers.enabled)
        lines << tr("Zingers replaced: %1").arg(s.zingerCount) %
                     (s.flatZingerCount > 0 ? tr(", and %1 in flats and darks").arg(s.flatZingerCount) : QString());
    if (s.clamped > 0)
        lines << QStringLiteral("<span style='color:#b9770e'>%1</span>")
                     .arg(tr("Values clamped to p = 11.5 (no transmission, not interpolated): %1").arg(s.clamped));
    if (r.stage.stitchedAxis) {
        const QString how = r.stage.found ? tr("found, confidence %1").arg(r.stage.found->confidence, 0, 'f', 2)
                                          : tr("given");
        lines << tr("360°: scan axis %1 px (%2); stitched to %3 columns × %4 projections, axis %5")
                     .arg(r.stage.scanAxis.value_or(0.0), 0, 'f', 2)
                     .arg(how)
                     .arg(r.stage.columns)
                     .arg(r.stage.projections)
                     .arg(*r.stage.stitchedAxis, 0, 'f', 1);
    }
    if (s.deadPixelCount == 0 && s.badValueCount == 0 && s.clamped == 0 && (!o.zingers.enabled || s.zingerCount == 0))
        lines << tr("No dead pixels, bad values or zingers in this row.");
    for (const std::string& w : r.stage.warnings)
        lines << QStringLiteral("<span style='color:#b9770e'>%1</span>").arg(tr("Warning: %1").arg(QString::fromStdString(w)).toHtmlEscaped());
    m_found->setText(lines.join(QStringLiteral("<br>")));
    const tomo::PreprocessStats::RingDamage& rings = s.rings;
    m_ringWarns = rings.rows > 0 && rings.exceeded();
    if (rings.rows > 0) {
        const QString figures = QString::fromStdString(rings.summary()).toHtmlEscaped();
        m_ringDamage->setText(m_ringWarns ? QStringLiteral("<span style='color:#c0392b'>⚠ %1</span>")
                                                .arg(tr("Ring removal damages the sample: %1. Try another method or "
                                                        "a larger SNR.").arg(figures))
                                          : tr("Ring removal: %1 (below the 5 % / 0.25 % bounds).").arg(figures));
    } else {
        m_ringDamage->clear();
    }
    m_ringGuard->setVisible(rings.rows > 0);
    if (o == options()) { // the corrections on screen worked
        m_problem->clear();
        m_problem->hide();
    }
}

QString CorrectionsPanel::foundText() const { return m_found->text(); }
QString CorrectionsPanel::ringDamageText() const { return m_ringDamage->text(); }
bool CorrectionsPanel::ringDamageWarns() const { return m_ringWarns; }
QString CorrectionsPanel::problem() const { return m_problem->text(); }

} // namespace tomo::ui
