// Settings of a full reconstruction to a file (HDF5 or TIFF stack): target,
// row range, the type the values are stored as (float32, float16, uint16,
// uint8; the integer types over a range typed, taken from the display window
// or estimated from a few reconstructed rows); the reconstruction
// parameters are the current ones of the parameter and corrections panels.
#pragma once

#include "work/recon_types.h"

#include <QDialog>

#include <memory>

namespace Ui {
class ExportDialog;
}

namespace tomo::ui {

class Controller;

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    /// With a controller, Estimate runs tomo::estimateOutputRange on its job
    /// thread (without one the button is off).
    ExportDialog(const DatasetSummary& dataset, const SliceParams& params, float windowLow, float windowHigh,
                 const QString& directory, QWidget* parent = nullptr, Controller* controller = nullptr);
    ~ExportDialog() override;

    ExportRequest request() const;
    void setTarget(const QString& path);
    void setRows(int first, int last);
    void setOutputType(tomo::OutputType type);
    /// The slice grid of the corrected sinograms (360° stitching widens it);
    /// the dataset's columns by default. For the size estimate.
    void setGrid(int size);
    /// Starts the range estimate (as the Estimate button); false when it cannot start.
    bool estimateRange();
    bool estimating() const { return m_estimating; }

    void reject() override;

private:
    void updateState();
    void setRange(float min, float max, const QString& source);

    std::unique_ptr<Ui::ExportDialog> ui;
    Controller* m_controller = nullptr;
    DatasetSummary m_dataset;
    SliceParams m_params;
    float m_windowLow, m_windowHigh;
    int m_grid = 0;
    QString m_rangeSource;              ///< how the range was set (stored as output_range_source)
    bool m_settingRange = false;
    bool m_estimating = false;
};

} // namespace tomo::ui
