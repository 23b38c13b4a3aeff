#include "panels/panel.h"

#include "application.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QScrollArea>

#include <utility>

namespace tomo::ui {

QIcon themeIcon(const char* name) {
    if (!name) return {};
    return svgIconsAvailable() ? QIcon(QStringLiteral(":/icons/") % QLatin1String(name) % QStringLiteral(".svg"))
                               : QIcon();
}

QAction* makeAction(QObject* parent, const QString& text, const char* iconName, const QKeySequence& key,
                    const QString& tip) {
    auto* a = new QAction(themeIcon(iconName), text, parent);
    if (!key.isEmpty()) a->setShortcut(key);
    a->setToolTip(key.isEmpty() ? tip : tip % QStringLiteral(" (") % key.toString(QKeySequence::NativeText) % QLatin1Char(')'));
    a->setStatusTip(tip);
    return a;
}

QDockWidget* makeDock(QMainWindow* window, const QString& title, const QString& objectName, QWidget* content,
                      DockFit fit) {
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(objectName);
    if (fit == DockFit::Scroll) {
        auto* scroll = new QScrollArea;
        scroll->setWidget(content);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        dock->setWidget(scroll);
    } else {
        dock->setWidget(content);
    }
    return dock;
}

Panel::Panel(QString title, QString dockName, DockFit fit, QWidget* parent)
    : QWidget(parent), m_title(std::move(title)), m_dockName(std::move(dockName)), m_fit(fit) {}

QDockWidget* Panel::makeDock(QMainWindow* window) {
    if (!m_dock) {
        m_dock = tomo::ui::makeDock(window, m_title, m_dockName, this, m_fit);
        dockMade();
    }
    return m_dock;
}

void Panel::showDock() {
    if (!m_dock) return;
    m_dock->show();
    m_dock->raise();
}

} // namespace tomo::ui
