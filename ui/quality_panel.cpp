#include "quality_panel.h"

#include "slice_view.h"

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

QualityPanel::QualityPanel(QWidget* parent) : QWidget(parent) {
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

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Reference:")));
    top->addWidget(m_reference, 1);
    top->addWidget(m_pin);
    top->addWidget(m_disc);

    m_view = new SliceView;
    m_view->setColormap(QStringLiteral("coolwarm"));
    m_view->setCaption(tr("Result − reference"));
    m_view->setMinimumSize(200, 200);

    m_status = new QLabel;
    m_status->setWordWrap(true);
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
    layout->addWidget(m_view, 1);
    layout->addWidget(m_status);
    layout->addLayout(figures);

    connect(m_reference, &QComboBox::currentIndexChanged, this,
            [this] { emit referenceKindChanged(referenceKind()); });
    connect(m_pin, &QPushButton::clicked, this, &QualityPanel::pinRequested);
    connect(m_disc, &QCheckBox::toggled, this, &QualityPanel::discOnlyChanged);
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

void QualityPanel::clear() {
    m_view->clear();
    m_difference = tomo::Image();
    m_status->setText(tr("No result yet."));
    setFigures(std::nullopt);
}

void QualityPanel::setFigures(const std::optional<tomo::QualityMetrics>& m) {
    m_metrics = m;
    if (!m) {
        for (QLabel* l : {m_maxAbs, m_rmse, m_psnr, m_relative, m_pixels}) l->setText(QStringLiteral("–"));
        return;
    }
    m_maxAbs->setText(QString::number(m->maxAbsError, 'g', 4));
    m_rmse->setText(QString::number(m->rmse, 'g', 4));
    m_psnr->setText(std::isinf(m->psnr) ? QStringLiteral("∞ dB") : QStringLiteral("%1 dB").arg(m->psnr, 0, 'f', 2));
    m_relative->setText(QStringLiteral("%1 %").arg(m->relativeError * 100.0, 0, 'g', 4));
    m_pixels->setText(QString::number(m->pixels));
}

void QualityPanel::showComparison(const SliceResult& result, const ReferenceResult* reference,
                                  const QString& waitingText) {
    const tomo::Image& image = result.preview.slice;
    if (!reference || reference->image.width != image.width || reference->image.height != image.height) {
        m_status->setText(waitingText.isEmpty() ? tr("Waiting for the reference…") : waitingText);
        setFigures(std::nullopt);
        if (m_view->hasImage()) m_view->setCaption(tr("Result − reference (outdated)"));
        return;
    }
    m_difference = tomo::Image(image.width, image.height);
    for (std::size_t i = 0; i < image.data.size(); ++i) m_difference.data[i] = image.data[i] - reference->image.data[i];
    // The disc mask changes only with the region (kept between live slices).
    if (!(m_discRegion == result.preview.region) || m_discGrid != result.preview.gridSize) {
        m_discMask = reconstructionDisc(result.preview.region, result.preview.gridSize);
        m_discRegion = result.preview.region;
        m_discGrid = result.preview.gridSize;
    }
    static const std::vector<std::uint8_t> kAllPixels;
    const std::vector<std::uint8_t>& mask = discOnly() ? m_discMask : kAllPixels;
    try {
        setFigures(tomo::compareImages(image, reference->image, mask));
    } catch (const std::exception& e) {
        setFigures(std::nullopt);
        m_status->setText(QString::fromUtf8(e.what()));
        return;
    }
    // Symmetric window from the 99.5th percentile of |difference| in the
    // compared pixels, so the diverging map is centred on zero. A display
    // window: from at most ~256 k of them (every pixel up to 512 x 512).
    const std::size_t stride = std::max<std::size_t>(1, m_difference.data.size() >> 18);
    std::vector<float> magnitudes;
    magnitudes.reserve(m_difference.data.size() / stride + 1);
    for (std::size_t i = 0; i < m_difference.data.size(); i += stride)
        if (mask.empty() || mask[i]) magnitudes.push_back(std::abs(m_difference.data[i]));
    float range = magnitudes.empty() ? 0.0f : percentile(magnitudes, 99.5);
    if (!(range > 0.0f)) range = std::max(1e-6f, static_cast<float>(m_metrics ? m_metrics->maxAbsError : 0.0));
    m_view->setImage(m_difference, QPoint(result.preview.region.x, result.preview.region.y));
    m_view->setCaption(tr("Result − reference"));
    m_view->setWindow(-range, range);
    m_status->setText(tr("%1 vs %2 (reference made in %3)")
                          .arg(QString::fromStdString(result.preview.strategy), reference->label,
                               formatSeconds(reference->seconds)));
}

} // namespace tomo::ui
