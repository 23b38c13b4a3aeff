// Live mode's views across the rows: the XZ and YZ cuts of the coarse
// volume (work/live_volume.h) through a point, the volume's centre until
// the user clicks one (a click on XZ picks x and z, on YZ y and z). Beside
// them the slice view shows the user's row at full resolution; its row is
// marked on both cuts. Voxels are drawn with their aspect (b detector
// columns wide, r detector rows tall); both cuts share one display window,
// the whole volume's 0.5 / 99.5 % percentiles.
#pragma once

#include "work/live_volume.h"

#include <QImage>
#include <QWidget>

#include <memory>

QT_BEGIN_NAMESPACE
class QLabel;
QT_END_NAMESPACE

namespace tomo::ui {

class OrthoCut;

class OrthoViews : public QWidget {
    Q_OBJECT
public:
    explicit OrthoViews(QWidget* parent = nullptr);

    /// Shows `volume` (the point kept when the grid is the same).
    void setVolume(std::shared_ptr<const CoarseVolume> volume);
    /// Empty views (a new scan, no volume yet), saying `why`.
    void clear(const QString& why);
    /// The detector row of the slice on screen, marked on the cuts.
    void setSliceRow(int row);
    /// The cuts' point in voxels (x, y across the slice grid, z the coarse row).
    void setPoint(int x, int y, int z);
    /// Back to the volume's centre.
    void centre();

    const CoarseVolume* volume() const { return m_volume.get(); }
    int pointX() const { return m_x; }
    int pointY() const { return m_y; }
    int pointZ() const { return m_z; }
    /// The XZ cut at pointY() (width = x, height = z) and the YZ cut at
    /// pointX() (width = y, height = z); empty without a volume.
    tomo::Image cutXZ() const;
    tomo::Image cutYZ() const;
    QString caption() const;

private:
    void showCuts();

    std::shared_ptr<const CoarseVolume> m_volume;
    int m_x = 0, m_y = 0, m_z = 0;
    int m_sliceRow = -1;
    float m_low = 0.0f, m_high = 1.0f;
    QLabel* m_caption = nullptr;
    OrthoCut* m_xz = nullptr;
    OrthoCut* m_yz = nullptr;
};

} // namespace tomo::ui
