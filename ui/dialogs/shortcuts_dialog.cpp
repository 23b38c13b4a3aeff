#include "dialogs/shortcuts_dialog.h"

#include <QAction>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tomo::ui {

void showShortcuts(QWidget* parent, const QList<QAction*>& actions) {
    auto* dialog = new QDialog(parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(QObject::tr("Keyboard shortcuts"));
    auto* table = new QTableWidget(0, 2, dialog);
    table->setHorizontalHeaderLabels({QObject::tr("Action"), QObject::tr("Shortcut")});
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    for (QAction* a : actions) {
        if (a->shortcut().isEmpty()) continue;
        const int row = table->rowCount();
        table->insertRow(row);
        table->setItem(row, 0, new QTableWidgetItem(QString(a->text()).remove(QLatin1Char('&'))));
        table->setItem(row, 1, new QTableWidgetItem(a->shortcut().toString(QKeySequence::NativeText)));
    }
    const QStringList mouse = {QObject::tr("Wheel: zoom about the cursor"), QObject::tr("Middle drag (or left drag, pan tool): pan"),
                               QObject::tr("Right drag: window (horizontal) and level (vertical)"),
                               QObject::tr("Double click: fit"), QObject::tr("3D view: left drag rotate, middle pan, wheel zoom")};
    for (const QString& m : mouse) {
        const int row = table->rowCount();
        table->insertRow(row);
        table->setItem(row, 0, new QTableWidgetItem(m));
        table->setItem(row, 1, new QTableWidgetItem(QObject::tr("mouse")));
    }
    table->resizeColumnsToContents();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(table);
    layout->addWidget(buttons);
    dialog->resize(480, 560);
    dialog->show();
}

} // namespace tomo::ui
