#include "dialogs/compare_modes_dialog.h"

#include "tomo/error.h"
#include "tomo/registry.h"

#include <QApplication>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace tomo::ui {
namespace {

enum Column { Mode, Exact, Time, Gups, MaxAbs, Rmse, Psnr, Relative, ColumnCount };

/// A table item that sorts by number.
class NumberItem : public QTableWidgetItem {
public:
    NumberItem(double value, const QString& text) : QTableWidgetItem(text) {
        setData(Qt::UserRole, value);
        setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    bool operator<(const QTableWidgetItem& other) const override {
        return data(Qt::UserRole).toDouble() < other.data(Qt::UserRole).toDouble();
    }
};

} // namespace

CompareModesDialog::CompareModesDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Compare modes"));
    resize(920, 420);
    m_description = new QLabel;
    m_description->setWordWrap(true);
    m_table = new QTableWidget(0, ColumnCount);
    m_table->setHorizontalHeaderLabels({tr("Mode"), tr("Exact"), tr("Back-projection"), tr("GU/s"), tr("Max abs error"),
                                        tr("RMSE"), tr("PSNR (dB)"), tr("Relative error")});
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_progress = new QProgressBar;
    m_cancel = new QPushButton(tr("Cancel"));
    m_copy = new QPushButton(tr("Copy as CSV"));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    buttons->addButton(m_copy, QDialogButtonBox::ActionRole);
    // Cancel stops the run and keeps the dialog (and the rows so far) open.
    buttons->addButton(m_cancel, QDialogButtonBox::ActionRole);
    m_cancel->setEnabled(false);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_cancel, &QPushButton::clicked, this, &CompareModesDialog::cancelRequested);
    connect(m_copy, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(toCsv()); });
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_description);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_progress);
    layout->addWidget(buttons);
}

std::vector<tomo::ReconOptions> CompareModesDialog::modesToCompare(const tomo::ReconOptions& base) {
    std::vector<tomo::ReconOptions> modes;
    for (const tomo::Backend* b : tomo::BackendRegistry::instance().backends()) {
        if (!b->unavailableReason().empty()) continue;
        for (auto interpolation : {tomo::Interpolation::Linear, tomo::Interpolation::Nearest})
            for (auto precision : {tomo::Precision::Float32, tomo::Precision::Float16}) {
                tomo::ReconOptions o;
                o.strategy = b->name();
                o.interpolation = interpolation;
                o.precision = precision;
                o.filter = base.filter;
                o.device = base.device;
                o.openclDevice = base.openclDevice;
                o.threads = base.threads;
                try {
                    b->checkOptions(o);
                    modes.push_back(o);
                } catch (const tomo::InvalidArgument&) {
                }
            }
    }
    return modes;
}

void CompareModesDialog::start(const QString& description, int modes, const ValueUnit& unit) {
    m_rows.clear();
    m_unit = unit;
    m_table->setHorizontalHeaderLabels({tr("Mode"), tr("Exact"), tr("Back-projection"), tr("GU/s"),
                                        tr("Max abs error (%1)").arg(unit.symbol), tr("RMSE (%1)").arg(unit.symbol),
                                        tr("PSNR (dB)"), tr("Relative error")});
    m_table->setSortingEnabled(false);
    m_table->setRowCount(0);
    m_description->setText(description);
    m_progress->setRange(0, 100);
    m_progress->setValue(0);
    m_progress->setFormat(tr("%1 modes: %p %").arg(modes));
    m_cancel->setEnabled(true);
}

void CompareModesDialog::addRow(const ModeComparison& r) {
    m_rows.push_back(r);
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    auto* mode = new QTableWidgetItem(r.label());
    m_table->setItem(row, Mode, mode);
    m_table->setItem(row, Exact, new QTableWidgetItem(r.error.isEmpty() ? (r.exact ? tr("yes") : tr("approx.")) : QString()));
    if (!r.error.isEmpty()) {
        auto* err = new QTableWidgetItem(tr("failed: %1").arg(r.error));
        err->setForeground(QColor(192, 57, 43));
        m_table->setItem(row, Time, err);
        m_table->setSpan(row, Time, 1, ColumnCount - Time);
        return;
    }
    const tomo::QualityMetrics& m = r.metrics;
    m_table->setItem(row, Time, new NumberItem(r.secondsBackproject, formatSeconds(r.secondsBackproject)));
    m_table->setItem(row, Gups, new NumberItem(r.gups, QString::number(r.gups, 'f', 3)));
    m_table->setItem(row, MaxAbs, new NumberItem(m.maxAbsError, QString::number(m_unit.shown(m.maxAbsError), 'g', 3)));
    m_table->setItem(row, Rmse, new NumberItem(m.rmse, QString::number(m_unit.shown(m.rmse), 'g', 3)));
    m_table->setItem(row, Psnr, new NumberItem(std::isinf(m.psnr) ? 1e9 : m.psnr,
                                               std::isinf(m.psnr) ? QStringLiteral("∞") : QString::number(m.psnr, 'f', 1)));
    m_table->setItem(row, Relative, new NumberItem(m.relativeError, QStringLiteral("%1 %").arg(m.relativeError * 100.0, 0, 'g', 4)));
}

void CompareModesDialog::setProgress(const JobProgress& p) {
    m_progress->setValue(static_cast<int>(std::lround(p.fraction * 100.0)));
    m_progress->setFormat(p.stage % QStringLiteral(": %p %"));
}

void CompareModesDialog::finish(JobStatus status, const QString& message) {
    m_cancel->setEnabled(false);
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder); // keep the run order until a click
    m_table->setSortingEnabled(true);
    m_progress->setValue(100);
    m_progress->setFormat(status == JobStatus::Done ? tr("done: %1 modes").arg(m_rows.size())
                                                     : (status == JobStatus::Cancelled ? tr("cancelled") : message));
}

void CompareModesDialog::reject() {
    // Closing the dialog stops a comparison still running (nobody sees it).
    if (m_cancel->isEnabled()) emit cancelRequested();
    QDialog::reject();
}

int CompareModesDialog::rowCount() const { return m_table->rowCount(); }

QString CompareModesDialog::toCsv() const {
    // Errors in attenuation per pixel (as reconstructed), the relative error in percent.
    QString csv = QStringLiteral("strategy,interpolation,precision,exact,seconds_backproject,gups,max_abs_error_per_px,"
                                 "rmse_per_px,psnr_db,relative_error_percent,error\n");
    for (const ModeComparison& r : m_rows) {
        csv += QString::fromStdString(r.options.strategy) % QLatin1Char(',') %
               QString::fromUtf8(tomo::interpolationName(r.options.interpolation).data()) % QLatin1Char(',') %
               QString::fromUtf8(tomo::precisionName(r.options.precision).data()) % QLatin1Char(',') %
               (r.exact ? QStringLiteral("yes") : QStringLiteral("no")) % QLatin1Char(',') %
               QString::number(r.secondsBackproject, 'g', 6) % QLatin1Char(',') % QString::number(r.gups, 'g', 6) %
               QLatin1Char(',') % QString::number(r.metrics.maxAbsError, 'g', 6) % QLatin1Char(',') %
               QString::number(r.metrics.rmse, 'g', 6) % QLatin1Char(',') % QString::number(r.metrics.psnr, 'g', 6) %
               QLatin1Char(',') % QString::number(r.metrics.relativeError * 100.0, 'g', 6) % QLatin1Char(',') %
               QString(r.error).replace(QLatin1Char(','), QLatin1Char(';')) % QLatin1Char('\n');
    }
    return csv;
}

} // namespace tomo::ui
