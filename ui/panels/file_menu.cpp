#include "panels/file_menu.h"

#include "dialogs/open_dialog.h"
#include "panels/panel.h"
#include "work/dataset_session.h"
#include "work/file_places.h"
#include "work/live_mode.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QStringBuilder>

namespace tomo::ui {

FileMenu::FileMenu(QMainWindow* window, DatasetSession* datasets, LiveMode* live)
    : QObject(window), m_window(window), m_datasets(datasets) {
    // The actions are the window's (its shortcuts, Help ▸ Keyboard Shortcuts).
    auto action = [this](const QString& text, const char* iconName, const QKeySequence& key, const QString& tip,
                         auto slot) {
        QAction* a = makeAction(m_window, text, iconName, key, tip);
        connect(a, &QAction::triggered, this, slot);
        return a;
    };
    QMenu* file = m_window->menuBar()->addMenu(tr("&File"));
    m_open = action(tr("&Open…"), "open", QKeySequence::Open, tr("Open a dataset (HDF5, TIFF, folder of TIFFs)"), [this] {
        const QString path = QFileDialog::getOpenFileName(
            m_window, tr("Open dataset"), lastDirectory(),
            tr("Tomography data (*.h5 *.hdf5 *.hdf *.nxs *.tif *.tiff);;Parameter files (*.json);;All files (*)"));
        if (path.isEmpty()) return;
        if (path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive)) emit loadParametersRequested(path);
        else m_datasets->open(path);
    });
    QAction* openWith = action(tr("Open &with Options…"), nullptr, QKeySequence(tr("Ctrl+Shift+O")),
                               tr("Open a folder of TIFFs or a raw file, with angles and raw layout"), [this] {
                                   OpenDialog dialog(lastDirectory(), m_window);
                                   if (dialog.exec() == QDialog::Accepted) m_datasets->open(dialog.path(), dialog.options());
                               });
    m_recent = new QMenu(tr("Open &Recent"), m_window);
    m_demo = action(tr("Open &Demo Phantom"), "demo", QKeySequence(tr("Ctrl+D")),
                    tr("The 3D Shepp–Logan phantom with exact projections; its true image is known"),
                    [this] { m_datasets->openDemo(); });
    m_loadParameters = action(tr("&Load Parameters…"), "load-params", QKeySequence(tr("Ctrl+L")),
                              tr("Load reconstruction parameters from a JSON file (tomo-recon --config format)"), [this] {
                                  const QString path = QFileDialog::getOpenFileName(
                                      m_window, tr("Load parameters"), lastDirectory(), tr("Parameter files (*.json)"));
                                  if (!path.isEmpty()) emit loadParametersRequested(path);
                              });
    m_saveParameters = action(tr("&Save Parameters…"), "save-params", QKeySequence::Save,
                              tr("Save the parameters as JSON; run the same with tomo-recon --config FILE"), [this] {
                                  const auto& dataset = m_datasets->dataset();
                                  const QString base = dataset && !dataset->path.isEmpty()
                                                           ? QFileInfo(dataset->path).completeBaseName()
                                                           : QStringLiteral("demo_phantom");
                                  const QString path = QFileDialog::getSaveFileName(
                                      m_window, tr("Save parameters"),
                                      QDir(outputDirectory()).filePath(base % QStringLiteral("_params.json")),
                                      tr("Parameter files (*.json)"));
                                  if (!path.isEmpty()) emit saveParametersRequested(path);
                              });
    m_export = action(tr("&Reconstruct to File…"), "export", QKeySequence(tr("Ctrl+E")),
                      tr("Reconstruct a range of rows into an HDF5 file or TIFF stack"), [this] {
                          if (m_datasets->dataset()) emit exportRequested();
                      });
    QAction* saveValues = action(tr("Save Slice &Values…"), nullptr, QKeySequence(tr("Ctrl+Shift+S")),
                                 tr("Save the current slice as float32 (TIFF or HDF5)"),
                                 [this] { emit saveSliceValuesRequested(); });
    QAction* saveImage = action(tr("Save Slice &Image…"), nullptr, QKeySequence(),
                                tr("Save the current slice as a PNG with the display window and colormap"),
                                [this] { emit saveSliceImageRequested(); });
    QAction* workFolder = action(tr("&Work Folder…"), nullptr, QKeySequence(),
                                 tr("The folder that Reconstruct to File, Save Parameters and Save Slice propose"), [this] {
                                     const QString dir = QFileDialog::getExistingDirectory(
                                         m_window, tr("Work folder for results"), outputDirectory());
                                     if (dir.isEmpty()) return;
                                     setOutputDirectory(dir);
                                     m_window->statusBar()->showMessage(tr("Results are proposed in %1").arg(dir), 6000);
                                 });
    QAction* quit = action(tr("&Quit"), nullptr, QKeySequence::Quit, tr("Quit"), [this] { m_window->close(); });
    file->addActions({m_open, openWith});
    file->addMenu(m_recent);
    file->addAction(m_demo);
    file->addSeparator();
    live->addActions(file); // Open Stream…, Follow Growing File…, Record…, Stop Live
    file->addSeparator();
    file->addActions({m_loadParameters, m_saveParameters});
    file->addSeparator();
    file->addActions({m_export, saveValues, saveImage, workFolder});
    file->addSeparator();
    file->addAction(quit);

    connect(m_datasets, &DatasetSession::recentFilesChanged, this, &FileMenu::rebuildRecentMenu);
    rebuildRecentMenu();
}

void FileMenu::rebuildRecentMenu() {
    m_recent->clear();
    const QStringList files = recentFiles();
    int index = 1;
    for (const QString& f : files) {
        QAction* a = m_recent->addAction(QStringLiteral("&%1  %2").arg(index++ % 10).arg(QFileInfo(f).fileName()));
        a->setToolTip(f);
        a->setStatusTip(f);
        connect(a, &QAction::triggered, this, [this, f] { m_datasets->open(f); });
    }
    if (files.isEmpty()) m_recent->addAction(tr("(none)"))->setEnabled(false);
    m_recent->addSeparator();
    connect(m_recent->addAction(tr("Clear List")), &QAction::triggered, this, [this] {
        clearRecentFiles();
        rebuildRecentMenu();
    });
}

} // namespace tomo::ui
