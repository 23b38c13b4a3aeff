#include "panels/method_panel.h"

#include "tomo/registry.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

namespace tomo::ui {
namespace {

QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

constexpr double kInfinity = std::numeric_limits<double>::infinity();

} // namespace

MethodPanel::MethodPanel(QWidget* parent) : Panel(tr("Method"), QStringLiteral("methodDock"), DockFit::Scroll, parent) {
    m_method = new QComboBox;
    m_method->setObjectName(QStringLiteral("methodCombo"));
    const std::pair<tomo::Method, QString> methods[] = {
        {tomo::Method::Fbp, tr("FBP (filtered back-projection)")},
        {tomo::Method::Sirt, tr("SIRT")},
        {tomo::Method::Cgls, tr("CGLS")},
        {tomo::Method::Tv, tr("TV (total variation, FISTA)")}};
    for (const auto& [method, label] : methods) m_method->addItem(label, static_cast<int>(method));
    m_method->setToolTip(tr("How the slice is reconstructed: FBP with the strategy's kernel, or an iterative method on "
                            "the strategy's forward/back projector pair (tomo-recon --method)"));

    m_iterations = new QSpinBox;
    m_iterations->setObjectName(QStringLiteral("iterationsSpin"));
    m_iterations->setRange(1, 1000000);
    m_iterations->setKeyboardTracking(false);
    m_iterations->setToolTip(tr("Iterations (--iterations)"));
    m_tvWeight = new QDoubleSpinBox;
    m_tvWeight->setObjectName(QStringLiteral("tvWeightSpin"));
    m_tvWeight->setDecimals(5);
    m_tvWeight->setRange(1e-5, 1e6);
    m_tvWeight->setValue(0.1);
    m_tvWeight->setKeyboardTracking(false);
    m_tvWeight->setToolTip(tr("λ of ½‖Ax − b‖² + λ TV(x) (--tv-weight): grows with the views and the noise"));
    m_nonnegative = new QCheckBox(tr("Non-negative"));
    m_nonnegative->setObjectName(QStringLiteral("nonnegativeCheck"));
    m_nonnegative->setToolTip(tr("Keep every value ≥ 0 (--nonnegative; SIRT and TV)"));
    m_init = new QComboBox;
    m_init->setObjectName(QStringLiteral("initCombo"));
    for (auto i : {tomo::InitialImage::Zero, tomo::InitialImage::Fbp})
        m_init->addItem(qs(tomo::initialImageName(i)), static_cast<int>(i));
    m_init->setToolTip(tr("Start from zeros or from the FBP of the data (--init)"));
    m_projector = new QComboBox;
    m_projector->setObjectName(QStringLiteral("projectorCombo"));
    m_projector->addItem(tr("Joseph (exact geometry)"), static_cast<int>(tomo::ProjectorKind::Joseph));
    m_projector->addItem(tr("Fourier (gridding, fast)"), static_cast<int>(tomo::ProjectorKind::Fourier));
    m_projector->setToolTip(tr("The projector pair (--projector): Joseph's ray-driven projector and its transpose, or "
                               "gridrec's Fourier-domain pair (matched, approximate, several times faster on a GPU; "
                               "'cpu' and the CUDA strategies)"));

    m_reason = new QLabel;
    m_reason->setObjectName(QStringLiteral("methodReasonLabel"));
    m_reason->setWordWrap(true);
    m_reason->setVisible(false);
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("iterationProgress"));
    m_progress->setFormat(tr("iteration %v / %m"));
    m_progress->setVisible(false);
    m_stop = new QPushButton(tr("Stop"));
    m_stop->setObjectName(QStringLiteral("stopIterationsButton"));
    m_stop->setToolTip(tr("Stop the iterations after the current one and keep the image so far"));
    m_stop->setEnabled(false);

    auto* form = new QFormLayout;
    form->addRow(tr("Method"), m_method);
    form->addRow(tr("Iterations"), m_iterations);
    form->addRow(tr("TV weight"), m_tvWeight);
    form->addRow(tr("Start"), m_init);
    form->addRow(tr("Projector"), m_projector);
    form->addRow(QString(), m_nonnegative);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_reason);
    layout->addWidget(m_progress);
    layout->addWidget(m_stop);
    layout->addStretch(1);

    connect(m_method, &QComboBox::currentIndexChanged, this, &MethodPanel::methodChosen);
    auto changed = [this] {
        updateControls();
        if (!m_blockSignals) emit optionsChanged(options());
    };
    connect(m_iterations, &QSpinBox::valueChanged, this, changed);
    connect(m_tvWeight, &QDoubleSpinBox::valueChanged, this, changed);
    connect(m_nonnegative, &QCheckBox::toggled, this, changed);
    connect(m_init, &QComboBox::currentIndexChanged, this, changed);
    connect(m_projector, &QComboBox::currentIndexChanged, this, changed);
    connect(m_stop, &QPushButton::clicked, this, &MethodPanel::stopRequested);
    updateControls();
}

tomo::IterativeOptions MethodPanel::options() const {
    tomo::IterativeOptions o;
    o.method = static_cast<tomo::Method>(m_method->currentData().toInt());
    if (!o.isIterative()) return o;
    o.iterations = m_iterations->value();
    o.init = static_cast<tomo::InitialImage>(m_init->currentData().toInt());
    o.projector = static_cast<tomo::ProjectorKind>(m_projector->currentData().toInt());
    o.tolerance = m_tolerance;
    if (o.method == tomo::Method::Tv) o.tvWeight = m_tvWeight->value();
    if (o.method != tomo::Method::Cgls) { // CGLS has no constraints
        o.bounds = m_bounds;
        o.bounds.lower = m_nonnegative->isChecked() ? std::max(0.0, m_bounds.lower) : m_bounds.lower;
    }
    return o;
}

void MethodPanel::setOptions(const tomo::IterativeOptions& o) {
    ++m_blockSignals;
    m_method->setCurrentIndex(m_method->findData(static_cast<int>(o.method)));
    if (o.isIterative()) {
        m_iterations->setValue(o.resolvedIterations());
        m_init->setCurrentIndex(m_init->findData(static_cast<int>(o.init)));
        m_projector->setCurrentIndex(m_projector->findData(static_cast<int>(o.projector)));
        if (o.tvWeight) m_tvWeight->setValue(*o.tvWeight);
        m_nonnegative->setChecked(o.bounds.lower == 0.0);
        m_bounds = o.bounds;
        if (m_bounds.lower == 0.0) m_bounds.lower = -kInfinity; // the check box holds it
        m_tolerance = o.tolerance;
    }
    updateControls();
    --m_blockSignals;
}

void MethodPanel::setContext(const tomo::ReconOptions& reconOptions, Beam beam) {
    QString why;
    const tomo::Backend* backend = nullptr; // the strategy an iterative method would run on
    if (beam == Beam::Cone) {
        why = tr("Iterative methods: not in the live view of cone-beam scans, whose slices share their rays "
                 "(reconstructed with FDK here; tomo-recon --method runs them on the whole volume).");
    } else if (beam == Beam::Parallel) {
        tomo::ReconOptions probe = reconOptions;
        probe.iterative = tomo::IterativeOptions{};
        probe.iterative.method = tomo::Method::Sirt;
        const tomo::BackendRegistry& registry = tomo::BackendRegistry::instance();
        try {
            backend = registry.find(registry.resolveOptions(probe, tomo::ReconGeometry{}).strategy);
        } catch (const std::exception& e) {
            why = tr("Iterative methods: %1").arg(QString::fromUtf8(e.what()));
        }
    }
    m_unavailable = why;
    auto* model = qobject_cast<QStandardItemModel*>(m_method->model());
    for (int i = 0; i < m_method->count(); ++i) {
        if (static_cast<tomo::Method>(m_method->itemData(i).toInt()) == tomo::Method::Fbp) continue;
        if (model) model->item(i)->setEnabled(why.isEmpty());
        m_method->setItemData(i, why.isEmpty() ? QVariant() : QVariant(why), Qt::ToolTipRole);
    }
    // The Fourier pair: 'cpu' and the CUDA strategies have it, for a parallel beam.
    QString noFourier;
    if (beam != Beam::Parallel)
        noFourier = tr("Fourier projector: parallel-beam scans only; a fan beam is projected with Joseph's pair");
    else if (backend && !backend->hasFourierProjector())
        noFourier = tr("Fourier projector: strategy '%1' has Joseph's projector pair only; the Fourier pair runs on "
                       "'cpu' and the CUDA strategies")
                        .arg(QString::fromStdString(backend->name()));
    const int fourier = m_projector->findData(static_cast<int>(tomo::ProjectorKind::Fourier));
    if (auto* items = qobject_cast<QStandardItemModel*>(m_projector->model()))
        items->item(fourier)->setEnabled(noFourier.isEmpty());
    m_projector->setItemData(fourier, noFourier.isEmpty() ? QVariant() : QVariant(noFourier), Qt::ToolTipRole);
    if (!noFourier.isEmpty() && m_projector->currentIndex() == fourier)
        m_projector->setCurrentIndex(m_projector->findData(static_cast<int>(tomo::ProjectorKind::Joseph)));
    m_reason->setText(why);
    m_reason->setVisible(!why.isEmpty());
    // An iterative method the new context cannot run falls back to FBP (said above).
    if (!why.isEmpty() && options().isIterative()) m_method->setCurrentIndex(m_method->findData(static_cast<int>(tomo::Method::Fbp)));
}

void MethodPanel::setRunning(bool running, int iterations) {
    m_stop->setEnabled(running);
    m_progress->setVisible(running || m_progress->value() > 0);
    if (running) {
        m_progress->setRange(0, std::max(1, iterations));
        m_progress->setValue(0);
    }
}

void MethodPanel::setProgress(int iteration, double residual) {
    m_progress->setValue(iteration);
    m_progress->setFormat(std::isfinite(residual) ? tr("iteration %v / %m · residual %1").arg(residual, 0, 'g', 3)
                                                  : tr("iteration %v / %m"));
}

void MethodPanel::methodChosen() {
    const auto method = static_cast<tomo::Method>(m_method->currentData().toInt());
    if (method != tomo::Method::Fbp) {
        ++m_blockSignals;
        m_iterations->setValue(tomo::defaultIterations(method)); // CGLS converges in tens, SIRT in hundreds
        --m_blockSignals;
    }
    updateControls();
    if (!m_blockSignals) emit optionsChanged(options());
}

void MethodPanel::updateControls() {
    const auto method = static_cast<tomo::Method>(m_method->currentData().toInt());
    const bool iterative = method != tomo::Method::Fbp;
    if (!iterative) {
        m_progress->setVisible(false); // the last run's count belongs to another method
        m_progress->reset();
    }
    m_iterations->setEnabled(iterative);
    m_init->setEnabled(iterative);
    m_projector->setEnabled(iterative);
    m_tvWeight->setEnabled(method == tomo::Method::Tv);
    m_nonnegative->setEnabled(method == tomo::Method::Sirt || method == tomo::Method::Tv);
}

} // namespace tomo::ui
