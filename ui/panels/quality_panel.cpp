#include "panels/quality_panel.h"

#include "views/slice_view.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tomo::ui {

QualityPanel::QualityPanel(QWidget* parent)
    : Panel(tr("Quality"), QStringLiteral("qualityDock"), DockFit::Scroll, parent) {
    m_pinAction = makeAction(this, tr("&Pin Result as Reference"), "pin", QKeySequence(Qt::Key_P),
                             tr("Keep the current result as the reference of the quality view"));
    connect(m_pinAction, &QAction::triggered, this, &QualityPanel::pinRequested);
    m_reference = new QComboBox;
    m_reference->addItem(tr("cpu-reference (exact)"), static_cast<int>(ReferenceKind::Exact));
    m_reference->addItem(tr("True phantom"), static_cast<int>(ReferenceKind::Truth));
    m_reference->addItem(tr("Pinned result"), static_cast<int>(ReferenceKind::Pinned));
    m_reference->setToolTip(tr("What the result is compared with:\n"
                               "• cpu-reference: the exact answer for the same geometry and filter, computed on demand;\n"
                               "• True phantom: the analytic image (demo only);\n"
                               "• Pinned result: a result you pinned earlier (P)."));
    m_pin = new QPushButton(tr("Pin current"));
    m_pin->setToolTip(tr("Keep the current result as the reference (P)"));
    m_disc = new QCheckBox(tr("Disc only"));
    m_disc->setChecked(true);
    m_disc->setToolTip(tr("Compute the figures only inside the reconstruction disc (radius = width / 2)"));

    m_automatic = new QCheckBox(tr("Follow changes"));
    m_automatic->setObjectName(QStringLiteral("automaticReferenceCheck"));
    m_automatic->setChecked(true);
    m_automatic->setToolTip(tr("Compute the reference after every change, at low priority: a new slice always "
                               "comes first and interrupts it. Off: only when you press Compute."));
    m_compute = new QPushButton(tr("Compute"));
    m_compute->setObjectName(QStringLiteral("computeReferenceButton"));
    m_compute->setToolTip(tr("Compute the reference for the slice on screen now"));
    m_busy = new QLabel;
    m_busy->setObjectName(QStringLiteral("referenceBusyLabel"));

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Reference:")));
    top->addWidget(m_reference, 1);
    top->addWidget(m_pin);
    auto* second = new QHBoxLayout;
    second->addWidget(m_disc);
    second->addWidget(m_automatic);
    second->addWidget(m_compute);
    second->addWidget(m_busy, 1);

    m_view = new SliceView;
    m_view->setColormap(QStringLiteral("coolwarm"));
    m_view->setCaption(tr("Result − reference"));
    m_view->setMinimumSize(200, 200);

    m_status = new QLabel;
    m_status->setWordWrap(true);
    // Two lines kept whatever the text: a status that wraps differently must
    // not resize the difference view (its shrunk image is made for its size).
    m_status->setMinimumHeight(2 * m_status->fontMetrics().lineSpacing());
    auto makeFigure = [] {
        auto* l = new QLabel(QStringLiteral("–"));
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
        l->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
        QFont f = l->font();
        f.setFamily(QStringLiteral("monospace"));
        f.setStyleHint(QFont::Monospace);
        l->setFont(f);
        return l;
    };
    m_maxAbs = makeFigure();
    m_rmse = makeFigure();
    m_psnr = makeFigure();
    m_relative = makeFigure();
    m_maxAbs->setObjectName(QStringLiteral("maxAbsFigure"));
    m_rmse->setObjectName(QStringLiteral("rmseFigure"));
    m_relative->setObjectName(QStringLiteral("relativeFigure"));
    m_pixels = makeFigure();
    auto* figures = new QGridLayout;
    figures->addWidget(new QLabel(tr("Max abs error")), 0, 0);
    figures->addWidget(m_maxAbs, 0, 1);
    figures->addWidget(new QLabel(tr("RMSE")), 0, 2);
    figures->addWidget(m_rmse, 0, 3);
    figures->addWidget(new QLabel(tr("PSNR")), 1, 0);
    figures->addWidget(m_psnr, 1, 1);
    figures->addWidget(new QLabel(tr("Relative error")), 1, 2);
    figures->addWidget(m_relative, 1, 3);
    figures->addWidget(new QLabel(tr("Pixels")), 2, 0);
    figures->addWidget(m_pixels, 2, 1);
    figures->setColumnStretch(1, 1);
    figures->setColumnStretch(3, 1);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addLayout(second);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_status);
    layout->addLayout(figures);

    connect(m_reference, &QComboBox::currentIndexChanged, this,
            [this] { emit referenceKindChanged(referenceKind()); });
    connect(m_pin, &QPushButton::clicked, this, &QualityPanel::pinRequested);
    connect(m_disc, &QCheckBox::toggled, this, &QualityPanel::discOnlyChanged);
    connect(m_automatic, &QCheckBox::toggled, this, &QualityPanel::automaticReferenceChanged);
    connect(m_compute, &QPushButton::clicked, this, &QualityPanel::computeRequested);
    setTruthAvailable(false);
    setPinnedLabel({});
    clear();
}

ReferenceKind QualityPanel::referenceKind() const {
    return static_cast<ReferenceKind>(m_reference->currentData().toInt());
}

void QualityPanel::setReferenceKind(ReferenceKind kind) {
    const int i = m_reference->findData(static_cast<int>(kind));
    if (i >= 0) m_reference->setCurrentIndex(i);
}

/// The difference view's colours span ±range whatever its size, so a
/// difference at float rounding looks as strong as a wrong axis: the caption
/// says what the span is, against the reference's own range of values.
static QString differenceCaption(float range, const tomo::QualityMetrics& m, const ValueUnit& unit) {
    if (m.maxAbsError == 0.0) return QObject::tr("Result − reference: identical");
    const QString span = QObject::tr("Result − reference: ±%1").arg(unit.format(range, 2));
    if (!(m.referenceRange > 0.0)) return span;
    return QObject::tr("%1 = %2 % of its range").arg(span).arg(100.0 * range / m.referenceRange, 0, 'g', 2);
}

static void setItemEnabled(QComboBox* combo, int index, bool enabled, const QString& tip) {
    if (auto* model = qobject_cast<QStandardItemModel*>(combo->model())) {
        QStandardItem* item = model->item(index);
        item->setEnabled(enabled);
        item->setToolTip(tip);
    }
}

void QualityPanel::setTruthAvailable(bool available) {
    setItemEnabled(m_reference, 1, available,
                   available ? tr("The analytic Shepp–Logan image of this row")
                             : tr("The true image is known only for the demo phantom"));
    if (!available && referenceKind() == ReferenceKind::Truth) setReferenceKind(ReferenceKind::Exact);
}

void QualityPanel::setPinnedLabel(const QString& label) {
    m_reference->setItemText(2, label.isEmpty() ? tr("Pinned result") : tr("Pinned: %1").arg(label));
    setItemEnabled(m_reference, 2, !label.isEmpty(),
                   label.isEmpty() ? tr("Pin a result first (P)") : tr("Compare with the pinned result"));
    if (label.isEmpty() && referenceKind() == ReferenceKind::Pinned) setReferenceKind(ReferenceKind::Exact);
}

bool QualityPanel::discOnly() const { return m_disc->isChecked(); }
const tomo::Image& QualityPanel::difference() const { return m_view->image(); }
void QualityPanel::setValueUnit(const ValueUnit& unit) {
    m_unit = unit;
    m_view->setValueUnit(unit);
    setFigures(m_metrics);
}

bool QualityPanel::automaticReference() const { return m_automatic->isChecked(); }
void QualityPanel::setAutomaticReference(bool on) { m_automatic->setChecked(on); }

void QualityPanel::setReferenceBusy(bool busy) {
    m_busy->setText(busy ? tr("● computing…") : QString());
    m_busy->setToolTip(busy ? tr("The reference is being computed (interrupted by every new slice)") : QString());
}

void QualityPanel::clear() {
    m_view->clear();
    m_status->setText(tr("No result yet."));
    setFigures(std::nullopt);
}

void QualityPanel::setFigures(const std::optional<tomo::QualityMetrics>& m) {
    m_metrics = m;
    if (!m) {
        for (QLabel* l : {m_maxAbs, m_rmse, m_psnr, m_relative, m_pixels}) l->setText(QStringLiteral("–"));
        return;
    }
    m_maxAbs->setText(m_unit.format(m->maxAbsError));
    m_rmse->setText(m_unit.format(m->rmse));
    m_psnr->setText(std::isinf(m->psnr) ? QStringLiteral("∞ dB") : QStringLiteral("%1 dB").arg(m->psnr, 0, 'f', 2));
    m_relative->setText(QStringLiteral("%1 %").arg(m->relativeError * 100.0, 0, 'g', 4));
    m_pixels->setText(QString::number(m->pixels));
}

void QualityPanel::showWaiting(const QString& text) {
    m_status->setText(text.isEmpty() ? tr("Waiting for the reference…") : text);
    setFigures(std::nullopt);
    if (m_view->hasImage()) m_view->setCaption(tr("Result − reference (outdated)"));
}

void QualityPanel::showComparison(const Comparison& c, const SliceResult& result) {
    if (!c.error.isEmpty()) {
        setFigures(std::nullopt);
        m_status->setText(c.error);
        return;
    }
    setFigures(c.metrics);
    m_view->setPreparedImage(c.difference, QPoint(result.preview.region.x, result.preview.region.y), c.rendered,
                             -c.range, c.range, m_view->colormapName(), c.scaled, c.zoom);
    m_view->setCaption(differenceCaption(c.range, *c.metrics, m_unit));
    // An iterative result against the exact mode: that reference is FBP's.
    const bool iterative = result.params.options.iterative.isIterative();
    m_status->setText(tr("%1 vs %2 (reference made in %3)")
                          .arg(QString::fromStdString(result.preview.strategy) %
                                   (iterative ? QStringLiteral(" ") % methodLabel(result.params.options.iterative) : QString()),
                               iterative && c.kind == ReferenceKind::Exact ? tr("FBP %1").arg(c.referenceLabel)
                                                                           : c.referenceLabel,
                               formatSeconds(c.referenceSeconds)));
}

} // namespace tomo::ui
