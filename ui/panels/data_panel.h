// Data panel: what a slice is made of. The log-corrected sinogram of the
// row on screen (with the rotation axis marked), the raw projection at a
// chosen angle (with the row marked), and the mean flat and dark fields.
// The images come coloured from the worker (Controller::requestDataView).
#pragma once

#include "work/recon_types.h"

#include "panels/panel.h"

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
class QSlider;
class QSpinBox;
QT_END_NAMESPACE

namespace tomo::ui {

class SliceView;

class DataPanel : public Panel {
    Q_OBJECT
public:
    explicit DataPanel(QWidget* parent = nullptr);

    /// A new dataset: the angle range, nothing shown until asked.
    void setDataset(const DatasetSummary& dataset);
    /// The row and axis on screen: the sinogram follows the row, its marker the axis.
    void setSliceParams(int row, double axis);
    void setView(const DataView& view);

    DataViewKind kind() const;
    void setKind(DataViewKind kind);
    int angle() const;
    void setAngle(int index);
    SliceView* view() const { return m_view; }
    QString caption() const;

    /// Asks again for what is chosen (as when the panel becomes visible).
    void refresh() { request(); }

signals:
    /// The panel wants this image (kind, row, angle); only while its dock
    /// shows (the worker reads the file for it).
    void requested(tomo::ui::DataViewKind kind, int row, int angle);

private:
    void dockMade() override;
    void request();
    void updateMarker();

    QComboBox* m_kind = nullptr;
    QSpinBox* m_angleSpin = nullptr;
    QSlider* m_angleSlider = nullptr;
    QLabel* m_angleLabel = nullptr;
    SliceView* m_view = nullptr;
    std::vector<double> m_angles;       ///< radians
    bool m_logCorrected = false;        ///< the file holds line integrals: no −log applied here
    int m_row = 0;
    double m_axis = 0.0;
    std::optional<DataView> m_shown;
};

} // namespace tomo::ui
