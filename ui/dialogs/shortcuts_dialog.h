// Help ▸ Keyboard Shortcuts: a table of the actions' shortcuts and the mouse gestures.
#pragma once

#include <QList>

QT_BEGIN_NAMESPACE
class QAction;
class QWidget;
QT_END_NAMESPACE

namespace tomo::ui {

/// Shows (non-modal, deleted on close) the shortcuts of `actions` and the mouse gestures.
void showShortcuts(QWidget* parent, const QList<QAction*>& actions);

} // namespace tomo::ui
