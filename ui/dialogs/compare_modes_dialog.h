// "Compare modes": the current slice reconstructed in every available
// strategy x interpolation x precision, each compared with cpu-reference,
// listed with its error and speed side by side.
#pragma once

#include "views/value_unit.h"
#include "work/recon_types.h"

#include <QDialog>

QT_BEGIN_NAMESPACE
class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;
QT_END_NAMESPACE

namespace tomo::ui {

class CompareModesDialog : public QDialog {
    Q_OBJECT
public:
    explicit CompareModesDialog(QWidget* parent = nullptr);

    /// Every available strategy with each interpolation and precision it
    /// accepts; filter, device and threads from `base`.
    static std::vector<tomo::ReconOptions> modesToCompare(const tomo::ReconOptions& base);

    /// Clears the table for a new run; errors are shown in `unit`.
    void start(const QString& description, int modes, const ValueUnit& unit = {});
    void addRow(const ModeComparison& row);
    void setProgress(const JobProgress& progress);
    void finish(JobStatus status, const QString& message);

    int rowCount() const;
    /// The table as CSV (header first).
    QString toCsv() const;

    /// Close / Escape: also cancels a comparison that is still running.
    void reject() override;

signals:
    void cancelRequested();

private:
    QLabel* m_description = nullptr;
    QTableWidget* m_table = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QPushButton* m_copy = nullptr;
    std::vector<ModeComparison> m_rows;
    ValueUnit m_unit;
};

} // namespace tomo::ui
