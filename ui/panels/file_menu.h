// The File menu: opening (Open…, Open with Options…, Open Recent, the demo
// phantom, then Live mode's entries), parameter files (Load / Save
// Parameters…), results (Reconstruct to File…, Save Slice Values / Image…,
// Work Folder…) and Quit. Like a panel it owns its actions (the toolbar
// and the Reconstruction menu reuse some); it opens datasets through the
// DatasetSession and asks the window, by signal, for what needs the
// parameters or the slice on screen.
#pragma once

#include <QObject>
#include <QString>

QT_BEGIN_NAMESPACE
class QAction;
class QMainWindow;
class QMenu;
QT_END_NAMESPACE

namespace tomo::ui {

class DatasetSession;
class LiveMode;

class FileMenu : public QObject {
    Q_OBJECT
public:
    /// Adds the File menu to `window`'s menu bar, Live mode's entries after the opening ones.
    FileMenu(QMainWindow* window, DatasetSession* datasets, LiveMode* live);

    QAction* openAction() const { return m_open; }
    QAction* demoAction() const { return m_demo; }
    QAction* loadParametersAction() const { return m_loadParameters; }
    QAction* saveParametersAction() const { return m_saveParameters; }
    QAction* exportAction() const { return m_export; }

signals:
    /// A parameter file chosen to load (Open… on a .json, Load Parameters…).
    void loadParametersRequested(const QString& path);
    void saveParametersRequested(const QString& path);
    /// Reconstruct to File… (the window's export dialog).
    void exportRequested();
    void saveSliceValuesRequested();
    void saveSliceImageRequested();

private:
    void rebuildRecentMenu();

    QMainWindow* m_window;
    DatasetSession* m_datasets;
    QMenu* m_recent = nullptr;
    QAction* m_open = nullptr;
    QAction* m_demo = nullptr;
    QAction* m_loadParameters = nullptr;
    QAction* m_saveParameters = nullptr;
    QAction* m_export = nullptr;
};

} // namespace tomo::ui
