// Settings of a full reconstruction to a file (HDF5 or TIFF stack): target,
// row range, the type the values are stored as (float32, float16, uint16,
// uint8; the integer types over a range typed, taken from the display window
// or estimated from a few reconstructed rows), the GPUs (all, or those
// ticked: the conveyor tomo-recon --gpus runs, one lane each; off with the
// reason without a CUDA GPU or for a strategy that does not run on one); the
// reconstruction parameters are the current ones of the parameter and
// corrections panels.
#pragma once

#include "work/recon_types.h"

#include "tomo/registry.h"

#include <QDialog>

#include <memory>
#include <vector>

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
    /// The GPUs offered (tomo::gpuDevices() unless set), ticked as the
    /// parameters' SliceParams::gpus say.
    void setGpus(const std::vector<tomo::GpuDevice>& gpus);
    /// SliceParams::gpus of the choice: "all", "0,2", or "" (the parameter
    /// panel's device alone; always while the choice is off).
    std::string chosenGpus() const;
    /// Why the GPU choice is off; empty while it is on.
    QString gpusOffReason() const { return m_gpusOff; }
    /// Starts the range estimate (as the Estimate button); false when it cannot start.
    bool estimateRange();
    bool estimating() const { return m_estimating; }

    void reject() override;

private:
    void updateState();
    void updateGpus();
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
    QString m_gpusOff;                  ///< why the GPU choice is off ("" = on)
};

} // namespace tomo::ui
