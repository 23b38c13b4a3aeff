// 3D view: volume rendering of a reconstructed sub-volume plus three
// orthogonal slice planes, an outline with labelled axes (VTK, embedded
// through a QOpenGLWidget driving a vtkGenericOpenGLRenderWindow), and its
// own transfer function: the sub-volume's histogram with a draggable
// threshold and top, and an opacity slider; it starts from
// automaticTransferFunction. Built without VTK it only says so.
// Mouse on the view: left drag rotates, middle drag pans, right drag or
// wheel zooms (VTK trackball camera).
#pragma once

#include "work/recon_types.h"

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
    /// Shows `volume` with the automatic transfer function.
    void setVolume(const SubVolume& volume, const QString& colormap);
    /// Drops the volume shown (another dataset was opened).
    void clearVolume();
    void setColormap(const QString& colormap);
    void setTransferFunction(const TransferFunction& tf);
    TransferFunction transferFunction() const;
    void setBusy(bool busy);
    bool hasVolume() const;
    /// The rendered 3D image (an empty image without VTK or volume).
    QImage renderedImage();

signals:
    void reconstructRequested(int firstRow, int rowCount);
    void transferFunctionChanged(const tomo::ui::TransferFunction& tf);

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace tomo::ui
