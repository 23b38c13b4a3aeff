#include "panels/volume_panel.h"

#include "views/volume_view.h"

#include <QAction>
#include <QDockWidget>
#include <QLabel>
#include <QTimer>
#include <QVBoxLayout>

namespace tomo::ui {

VolumePanel::VolumePanel(QWidget* parent)
    : Panel(tr("3D view"), QStringLiteral("volumeDock"), DockFit::Stretch, parent) {
    m_placeholder = new QLabel(tr("3D view: View ▸ 3D view (Ctrl+3)"));
    m_placeholder->setAlignment(Qt::AlignCenter);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_placeholder);
    m_showAction = makeAction(this, tr("&3D View"), "view3d", QKeySequence(tr("Ctrl+3")),
                              tr("Volume rendering of a reconstructed sub-volume with orthogonal planes"));
    connect(m_showAction, &QAction::triggered, this, &VolumePanel::showView);
}

void VolumePanel::showView() {
    if (!m_view) {
        m_view = new VolumeView;
        m_view->setObjectName(QStringLiteral("volumeView"));
        layout()->replaceWidget(m_placeholder, m_view);
        m_placeholder->deleteLater();
        m_placeholder = nullptr;
        emit viewCreated(m_view);
    }
    showDock();
}

void VolumePanel::dockMade() {
    connect(dock(), &QDockWidget::visibilityChanged, this, [this](bool visible) {
        // Once the layout settles: a tab that only flashed up while docks
        // were moved does not create the (costly) OpenGL view.
        if (visible && !m_view)
            QTimer::singleShot(0, this, [this] {
                if (dock()->isVisible() && !dock()->visibleRegion().isEmpty() && !m_view) showView();
            });
    });
}

} // namespace tomo::ui
