// 3D view: volume rendering of a reconstructed sub-volume plus three
// orthogonal slice planes (VTK, embedded through a QOpenGLWidget driving a
// vtkGenericOpenGLRenderWindow). Built without VTK it only says so.
// Mouse on the view: left drag rotates, middle drag pans, right drag or
// wheel zooms (VTK trackball camera).
#pragma once

#include "recon_types.h"

#include <QImage>
#include <QWidget>

#include <memory>

namespace tomo::ui {

class VolumeView : public QWidget {
    Q_OBJECT
public:
    explicit VolumeView(QWidget* parent = nullptr);
    ~VolumeView() override;

    /// False when this build has no VTK.
    static bool isAvailable();

    /// Rows the "Reconstruct sub-volume" button offers by default: up to
    /// 64 rows around `currentRow`.
    void setDataset(int rows, int currentRow);
    void setVolume(const SubVolume& volume, float low, float high, const QString& colormap);
    /// Drops the volume shown (another dataset was opened).
    void clearVolume();
    void setWindow(float low, float high, const QString& colormap);
    void setBusy(bool busy);
    bool hasVolume() const;
    /// The rendered 3D image (an empty image without VTK or volume).
    QImage renderedImage();

signals:
    void reconstructRequested(int firstRow, int rowCount);

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace tomo::ui
