// The 3D view's dock: a note until the view is first wanted (its OpenGL
// context is costly), then the VolumeView; View ▸ 3D View shows it, and so
// does raising its tab once the layout has settled.
#pragma once

#include "panels/panel.h"

QT_BEGIN_NAMESPACE
class QAction;
class QLabel;
QT_END_NAMESPACE

namespace tomo::ui {

class VolumeView;

class VolumePanel : public Panel {
    Q_OBJECT
public:
    explicit VolumePanel(QWidget* parent = nullptr);

    /// Null until first shown.
    VolumeView* view() const { return m_view; }
    /// View ▸ 3D View: showView().
    QAction* showAction() const { return m_showAction; }
    /// Creates the view on first use (viewCreated) and shows the dock.
    void showView();

signals:
    /// The view exists now: give it the dataset and wire its requests.
    void viewCreated(tomo::ui::VolumeView* view);

private:
    void dockMade() override;

    QLabel* m_placeholder = nullptr;
    VolumeView* m_view = nullptr;
    QAction* m_showAction = nullptr;
};

} // namespace tomo::ui
