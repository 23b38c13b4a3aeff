#include "export_dialog.h"

#include "ui_export_dialog.h"

#include "tomo/volume_io.h"

#include <QDir>
#include <QFileDialog>
#include <QLocale>
#include <QPushButton>

#include <QCoreApplication>

namespace tomo::ui {

ExportDialog::ExportDialog(const DatasetSummary& dataset, const SliceParams& params, float windowLow, float windowHigh,
                           const QString& directory, QWidget* parent)
    : QDialog(parent), ui(std::make_unique<Ui::ExportDialog>()), m_dataset(dataset), m_params(params),
      m_windowLow(windowLow), m_windowHigh(windowHigh) {
    ui->setupUi(this);
    const int rows = std::max(1, dataset.info.rows);
    for (QSpinBox* s : {ui->firstRowSpin, ui->lastRowSpin}) s->setRange(0, rows - 1);
    setRows(0, rows - 1);
    ui->bitsCombo->addItem(tr("32-bit float (exact values)"), 32);
    ui->bitsCombo->addItem(tr("16-bit unsigned, range mapped"), 16);
    ui->bitsCombo->addItem(tr("8-bit unsigned, range mapped"), 8);
    ui->rangeMinSpin->setValue(windowLow);
    ui->rangeMaxSpin->setValue(windowHigh);
    const QString base = dataset.demo ? QStringLiteral("demo_phantom") : QFileInfo(dataset.path).completeBaseName();
    setTarget(QDir(directory).filePath(base % QStringLiteral("_recon.h5")));

    connect(ui->browseButton, &QToolButton::clicked, this, [this] {
        QString filter;
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Reconstruct to"), ui->outputEdit->text(),
            tr("HDF5 volume (*.h5 *.hdf5);;TIFF stack (*.tif *.tiff)"), &filter,
            QFileDialog::DontConfirmOverwrite);
        if (!path.isEmpty()) setTarget(path);
    });
    connect(ui->allRowsButton, &QPushButton::clicked, this, [this] { setRows(0, m_dataset.info.rows - 1); });
    connect(ui->windowRangeButton, &QPushButton::clicked, this, [this] {
        ui->rangeMinSpin->setValue(m_windowLow);
        ui->rangeMaxSpin->setValue(m_windowHigh);
    });
    connect(ui->outputEdit, &QLineEdit::textChanged, this, &ExportDialog::updateState);
    for (QSpinBox* s : {ui->firstRowSpin, ui->lastRowSpin}) connect(s, &QSpinBox::valueChanged, this, &ExportDialog::updateState);
    connect(ui->bitsCombo, &QComboBox::currentIndexChanged, this, &ExportDialog::updateState);
    for (QDoubleSpinBox* s : {ui->rangeMinSpin, ui->rangeMaxSpin})
        connect(s, &QDoubleSpinBox::valueChanged, this, &ExportDialog::updateState);
    connect(ui->overwriteCheck, &QCheckBox::toggled, this, &ExportDialog::updateState);
    connect(ui->buttonBox, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(ui->buttonBox, &QDialogButtonBox::rejected, this, &QDialog::reject);
    ui->buttonBox->button(QDialogButtonBox::Ok)->setText(tr("Reconstruct"));
    updateState();
}

ExportDialog::~ExportDialog() = default;

void ExportDialog::setTarget(const QString& path) { ui->outputEdit->setText(path); }

void ExportDialog::setRows(int first, int last) {
    ui->firstRowSpin->setValue(first);
    ui->lastRowSpin->setValue(last);
}

ExportRequest ExportDialog::request() const {
    ExportRequest r;
    r.target = ui->outputEdit->text().trimmed();
    r.firstRow = ui->firstRowSpin->value();
    r.rowCount = ui->lastRowSpin->value() - r.firstRow + 1;
    r.params = m_params;
    r.write.overwrite = ui->overwriteCheck->isChecked();
    r.write.tiffBits = ui->bitsCombo->currentData().toInt();
    r.write.rangeMin = static_cast<float>(ui->rangeMinSpin->value());
    r.write.rangeMax = static_cast<float>(ui->rangeMaxSpin->value());
    const tomo::RunConfig config = toRunConfig(m_params, m_dataset, r.firstRow, r.rowCount);
    r.write.attributes["tomo_run_config"] = tomo::toJson(config);
    r.write.attributes["software"] = "tomo-workstation " TOMO_VERSION;
    r.write.attributes["strategy"] = m_params.options.strategy;
    return r;
}

void ExportDialog::updateState() {
    QString error;
    const QString target = ui->outputEdit->text().trimmed();
    bool tiff = false;
    if (target.isEmpty()) {
        error = tr("Choose an output file.");
    } else {
        try {
            tiff = tomo::volumeFormatFor(target.toStdString()) == tomo::VolumeFormat::TiffStack;
            ui->formatLabel->setText(tiff ? tr("TIFF stack (one image per slice)") : tr("HDF5, dataset /volume (float32)"));
        } catch (const std::exception& e) {
            ui->formatLabel->clear();
            error = QString::fromUtf8(e.what());
        }
        if (error.isEmpty() && QFileInfo::exists(target) && !ui->overwriteCheck->isChecked())
            error = tr("%1 exists: tick “Replace” to overwrite it.").arg(QFileInfo(target).fileName());
    }
    const int first = ui->firstRowSpin->value(), last = ui->lastRowSpin->value();
    if (last < first) error = tr("The last row is before the first.");
    const int bits = ui->bitsCombo->currentData().toInt();
    ui->tiffGroup->setEnabled(tiff);
    ui->rangeMinSpin->setEnabled(tiff && bits != 32);
    ui->rangeMaxSpin->setEnabled(tiff && bits != 32);
    ui->windowRangeButton->setEnabled(tiff && bits != 32);
    if (tiff && bits != 32 && !(ui->rangeMaxSpin->value() > ui->rangeMinSpin->value()))
        error = tr("The integer range needs max > min.");

    const tomo::Region region = m_params.effectiveRegion(m_dataset.info.columns);
    const int slices = std::max(0, last - first + 1);
    const double bytes = static_cast<double>(region.pixels()) * slices * ((tiff ? bits : 32) / 8.0);
    ui->summaryLabel->setText(
        tr("%1 slices of %2 × %3 px (%4), %5 · %6 · %7, axis %8 px. About %9 written.")
            .arg(slices)
            .arg(region.width)
            .arg(region.height)
            .arg(m_params.region ? tr("region of interest") : tr("whole slice"))
            .arg(QString::fromStdString(m_params.options.strategy))
            .arg(QString::fromUtf8(tomo::interpolationName(m_params.options.interpolation).data()))
            .arg(QString::fromUtf8(tomo::precisionName(m_params.options.precision).data()))
            .arg(m_params.axis, 0, 'f', 2)
            .arg(QLocale().formattedDataSize(static_cast<qint64>(bytes))));
    ui->errorLabel->setText(error);
    ui->buttonBox->button(QDialogButtonBox::Ok)->setEnabled(error.isEmpty());
}

} // namespace tomo::ui
