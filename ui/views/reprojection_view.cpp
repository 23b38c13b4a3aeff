#include "views/reprojection_view.h"

#include <QGridLayout>
#include <QLabel>
#include <QPixmap>
#include <QPushButton>

#include <algorithm>

namespace tomo::ui {

ReprojectionView::ReprojectionView(QWidget* parent) : QWidget(parent) {
    auto image = [](const QString& name) {
        auto* label = new QLabel;
        label->setObjectName(name);
        label->setAlignment(Qt::AlignCenter);
        label->setMinimumSize(32, 32);
        label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
        return label;
    };
    m_measured = image(QStringLiteral("reprojectionMeasured"));
    m_projected = image(QStringLiteral("reprojectionProjected"));
    m_difference = image(QStringLiteral("reprojectionDifference"));
    m_norm = new QLabel;
    m_norm->setObjectName(QStringLiteral("reprojectionNorm"));
    m_norm->setWordWrap(true);
    m_update = new QPushButton(tr("Reproject"));
    m_update->setObjectName(QStringLiteral("reprojectButton"));
    m_update->setToolTip(tr("Forward project the slice on screen and compare it with its row's measured sinogram "
                            "(also done for each new slice while this view is open)"));
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(2, 2, 2, 2);
    const QString titles[] = {tr("Measured sinogram b"), tr("Forward projection A x"), tr("Difference b − A x")};
    QLabel* images[] = {m_measured, m_projected, m_difference};
    for (int i = 0; i < 3; ++i) {
        grid->addWidget(new QLabel(titles[i]), 0, i, Qt::AlignHCenter);
        grid->addWidget(images[i], 1, i);
        grid->setColumnStretch(i, 1);
    }
    grid->setRowStretch(1, 1);
    grid->addWidget(m_norm, 2, 0, 1, 2);
    grid->addWidget(m_update, 2, 2, Qt::AlignRight);
    connect(m_update, &QPushButton::clicked, this, &ReprojectionView::requested);
    m_result.error = tr("No reprojection yet");
    m_norm->setText(tr("Data consistency of the slice on screen: open a dataset."));
}

void ReprojectionView::setResult(const ReprojectionResult& result) {
    m_result = result;
    m_norm->setText(normText());
    showImages();
}

QString ReprojectionView::normText() const {
    if (!m_result.error.isEmpty()) return tr("No reprojection: %1").arg(m_result.error);
    return tr("%1, row %2: ‖b − Ax‖ / ‖b‖ = %3 (‖b − Ax‖ = %4; A: %5)")
        .arg(m_result.method.toUpper())
        .arg(m_result.row)
        .arg(m_result.relativeNorm, 0, 'g', 4)
        .arg(m_result.norm, 0, 'g', 4)
        .arg(m_result.projector);
}

void ReprojectionView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    showImages();
}

void ReprojectionView::showImages() {
    const std::pair<QLabel*, const QImage*> shown[] = {{m_measured, &m_result.measuredRendered},
                                                       {m_projected, &m_result.projectedRendered},
                                                       {m_difference, &m_result.differenceRendered}};
    for (const auto& [label, image] : shown) {
        if (image->isNull()) {
            label->clear();
            continue;
        }
        // Angles down, detector columns across, stretched to the space the view has.
        label->setPixmap(QPixmap::fromImage(image->scaled(std::max(16, label->width()), std::max(16, label->height()),
                                                          Qt::IgnoreAspectRatio, Qt::SmoothTransformation)));
    }
}

} // namespace tomo::ui
