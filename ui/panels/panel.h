// What the main window's panels share. A panel makes its own dock (title,
// the object name that saved layouts and tests use, scrolled where it can
// be taller than a small window's share) and the actions it adds to the
// window's menus and toolbar; MainWindow creates the panels, places their
// docks and actions, and wires their signals to the controller. A new mode
// is a new Panel plus its controller calls.
#pragma once

#include <QIcon>
#include <QKeySequence>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QAction;
class QDockWidget;
class QMainWindow;
QT_END_NAMESPACE

namespace tomo::ui {

/// resources/icons/<name>.svg (no icon where SVG cannot be drawn, or for null).
QIcon themeIcon(const char* name);

/// An action owned by `parent`: its icon, shortcut (said in the tooltip)
/// and status tip.
QAction* makeAction(QObject* parent, const QString& text, const char* iconName, const QKeySequence& key,
                    const QString& tip);

/// How a dock holds its widget: in a scroll area (a panel taller than a
/// small window's share scrolls rather than squeezing the slice), or as is.
enum class DockFit { Scroll, Stretch };

/// A dock of `window` named `objectName` holding `content`; not yet placed
/// (QMainWindow::addDockWidget). For views that sit in a dock of their own.
QDockWidget* makeDock(QMainWindow* window, const QString& title, const QString& objectName, QWidget* content,
                      DockFit fit);

class Panel : public QWidget {
    Q_OBJECT
public:
    /// Makes this panel's dock in `window` (once) with the panel inside.
    QDockWidget* makeDock(QMainWindow* window);
    /// Null until makeDock().
    QDockWidget* dock() const { return m_dock; }
    /// Shows the dock and brings its tab to the front.
    void showDock();

protected:
    Panel(QString title, QString dockName, DockFit fit, QWidget* parent);
    /// Called once the dock exists (panels that follow its visibility).
    virtual void dockMade() {}

private:
    QString m_title;
    QString m_dockName;
    DockFit m_fit;
    QDockWidget* m_dock = nullptr;
};

} // namespace tomo::ui
