// Settings of a full reconstruction to a file (HDF5 or TIFF stack): target,
// row range, TIFF sample format; the reconstruction parameters are the
// current ones of the parameter panel.
#pragma once

#include "recon_types.h"

#include <QDialog>

#include <memory>

namespace Ui {
class ExportDialog;
}

namespace tomo::ui {

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    ExportDialog(const DatasetSummary& dataset, const SliceParams& params, float windowLow, float windowHigh,
                 const QString& directory, QWidget* parent = nullptr);
    ~ExportDialog() override;

    ExportRequest request() const;
    void setTarget(const QString& path);
    void setRows(int first, int last);

private:
    void updateState();

    std::unique_ptr<Ui::ExportDialog> ui;
    DatasetSummary m_dataset;
    SliceParams m_params;
    float m_windowLow, m_windowHigh;
};

} // namespace tomo::ui
