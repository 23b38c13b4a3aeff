#include "dialogs/export_dialog.h"

#include "ui_export_dialog.h"

#include "work/controller.h"

#include "tomo/gpu_list.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <QDir>
#include <QFileDialog>
#include <QLocale>
#include <QPushButton>
#include <QSignalBlocker>

#include <QCoreApplication>

#include <algorithm>

namespace tomo::ui {

ExportDialog::ExportDialog(const DatasetSummary& dataset, const SliceParams& params, float windowLow, float windowHigh,
                           const QString& directory, QWidget* parent, Controller* controller)
    : QDialog(parent), ui(std::make_unique<Ui::ExportDialog>()), m_controller(controller), m_dataset(dataset),
      m_params(params), m_windowLow(windowLow), m_windowHigh(windowHigh), m_grid(dataset.info.columns) {
    ui->setupUi(this);
    const int rows = std::max(1, dataset.info.rows);
    for (QSpinBox* s : {ui->firstRowSpin, ui->lastRowSpin}) s->setRange(0, rows - 1);
    setRows(0, rows - 1);
    ui->typeCombo->addItem(tr("float32: the values as computed (4 bytes)"), static_cast<int>(tomo::OutputType::Float32));
    ui->typeCombo->addItem(tr("float16: 2 bytes, 0.05 % relative, |values| up to 65504"),
                           static_cast<int>(tomo::OutputType::Float16));
    ui->typeCombo->addItem(tr("uint16: 2 bytes, 65536 levels over the range"), static_cast<int>(tomo::OutputType::UInt16));
    ui->typeCombo->addItem(tr("uint8: 1 byte, 256 levels over the range"), static_cast<int>(tomo::OutputType::UInt8));
    setRange(windowLow, windowHigh, tr("the display window"));
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
    connect(ui->windowRangeButton, &QPushButton::clicked, this,
            [this] { setRange(m_windowLow, m_windowHigh, tr("the display window")); });
    connect(ui->estimateButton, &QPushButton::clicked, this, &ExportDialog::estimateRange);
    connect(ui->outputEdit, &QLineEdit::textChanged, this, &ExportDialog::updateState);
    for (QSpinBox* s : {ui->firstRowSpin, ui->lastRowSpin}) connect(s, &QSpinBox::valueChanged, this, &ExportDialog::updateState);
    connect(ui->typeCombo, &QComboBox::currentIndexChanged, this, &ExportDialog::updateState);
    for (QDoubleSpinBox* s : {ui->rangeMinSpin, ui->rangeMaxSpin})
        connect(s, &QDoubleSpinBox::valueChanged, this, [this] {
            if (!m_settingRange) m_rangeSource = tr("entered in the export dialog");
            updateState();
        });
    connect(ui->overwriteCheck, &QCheckBox::toggled, this, &ExportDialog::updateState);
    connect(ui->allGpusCheck, &QCheckBox::toggled, this, &ExportDialog::updateGpus);
    connect(ui->gpuList, &QListWidget::itemChanged, this, &ExportDialog::updateState);
    connect(ui->buttonBox, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(ui->buttonBox, &QDialogButtonBox::rejected, this, &QDialog::reject);
    ui->buttonBox->button(QDialogButtonBox::Ok)->setText(tr("Reconstruct"));
    ui->estimateButton->setEnabled(m_controller != nullptr);

    if (m_controller) {
        connect(m_controller, &Controller::rangeEstimated, this, [this](const tomo::RangeEstimate& e) {
            if (!m_estimating) return;
            QStringList rows;
            for (int r : e.rows) rows << QString::number(r);
            setRange(e.min, e.max,
                     tr("estimated from rows %1: percentiles 0.01 and 99.99 (%2, %3) widened by 5 % each side")
                         .arg(rows.join(QStringLiteral(",")))
                         .arg(e.low, 0, 'g', 6)
                         .arg(e.high, 0, 'g', 6));
        });
        connect(m_controller, &Controller::jobProgress, this, [this](const JobProgress& p) {
            if (m_estimating)
                ui->rangeNote->setText(tr("Estimating the range: %1 % (%2)")
                                           .arg(static_cast<int>(std::lround(p.fraction * 100.0)))
                                           .arg(p.stage));
        });
        connect(m_controller, &Controller::jobFinished, this, [this](JobKind kind, JobStatus status, const QString& message) {
            if (kind != JobKind::RangeEstimate || !m_estimating) return;
            m_estimating = false;
            if (status != JobStatus::Done)
                ui->rangeNote->setText(status == JobStatus::Cancelled ? tr("Estimate cancelled.")
                                                                      : tr("The estimate failed: %1").arg(message));
            updateState();
        });
    }
    setGpus(tomo::gpuDevices());
}

ExportDialog::~ExportDialog() {
    if (m_estimating && m_controller) m_controller->cancelJob();
}

void ExportDialog::reject() {
    if (m_estimating && m_controller) m_controller->cancelJob();
    QDialog::reject();
}

void ExportDialog::setTarget(const QString& path) { ui->outputEdit->setText(path); }

void ExportDialog::setRows(int first, int last) {
    ui->firstRowSpin->setValue(first);
    ui->lastRowSpin->setValue(last);
}

void ExportDialog::setOutputType(tomo::OutputType type) {
    ui->typeCombo->setCurrentIndex(std::max(0, ui->typeCombo->findData(static_cast<int>(type))));
}

void ExportDialog::setGrid(int size) {
    m_grid = std::max(1, size);
    updateState();
}

namespace {

/// Why no CUDA strategy runs here: the CUDA backends' reason, or that the build has none.
QString whyNoCuda() {
    for (const tomo::Backend* b : tomo::BackendRegistry::instance().backends())
        if (b->family() == "cuda") {
            const std::string why = b->unavailableReason();
            return QString::fromStdString(why.empty() ? "no CUDA device found" : why);
        }
    return ExportDialog::tr("this build has no CUDA support (configure with -DTOMO_WITH_CUDA=ON)");
}

} // namespace

void ExportDialog::setGpus(const std::vector<tomo::GpuDevice>& gpus) {
    const std::string& strategy = m_params.options.strategy;
    const tomo::Backend* backend = tomo::BackendRegistry::instance().find(strategy);
    m_gpusOff.clear();
    if (gpus.empty())
        m_gpusOff = tr("No CUDA GPU to choose: %1.").arg(whyNoCuda());
    else if (strategy != "auto" && !(backend && backend->family() == "cuda"))
        m_gpusOff = tr("Strategy “%1” does not run on CUDA GPUs: the choice applies to the CUDA strategies and auto.")
                        .arg(QString::fromStdString(strategy));
    // Ticked as the parameters say: "all", or a list of indices.
    const std::string& given = m_params.gpus;
    std::vector<int> ticked;
    if (!given.empty() && given != "all") {
        std::vector<tomo::GpuDevice> any(tomo::kMaxDevice + 1);
        for (int i = 0; i <= tomo::kMaxDevice; ++i) any[static_cast<std::size_t>(i)].index = i;
        try {
            ticked = tomo::parseGpus(given, any);
        } catch (const tomo::Error&) {
        }
    }
    const QSignalBlocker blockList(ui->gpuList);
    const QSignalBlocker blockAll(ui->allGpusCheck);
    ui->gpuList->clear();
    for (const tomo::GpuDevice& d : gpus) {
        auto* item = new QListWidgetItem(tr("GPU %1: %2 (%3 SMs, %4)")
                                             .arg(d.index)
                                             .arg(QString::fromStdString(d.name))
                                             .arg(d.multiprocessors)
                                             .arg(QLocale().formattedDataSize(static_cast<qint64>(d.memoryBytes))),
                                         ui->gpuList);
        item->setData(Qt::UserRole, d.index);
        item->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled);
        item->setCheckState(std::find(ticked.begin(), ticked.end(), d.index) != ticked.end() ? Qt::Checked
                                                                                             : Qt::Unchecked);
    }
    ui->allGpusCheck->setChecked(given == "all");
    updateGpus();
}

void ExportDialog::updateGpus() {
    // "All" stands for every GPU, whatever is ticked below. Off, the note stays readable.
    const bool on = m_gpusOff.isEmpty();
    ui->allGpusCheck->setEnabled(on);
    ui->gpuList->setEnabled(on && !ui->allGpusCheck->isChecked());
    ui->gpuNote->setText(!m_gpusOff.isEmpty() ? m_gpusOff
                         : tr("Each GPU chosen reconstructs chunks of rows as it has room, with its own plan; none: "
                              "the parameter panel's device alone (GPU %1).")
                               .arg(m_params.options.device));
    updateState();
}

std::string ExportDialog::chosenGpus() const {
    if (!m_gpusOff.isEmpty()) return {};
    if (ui->allGpusCheck->isChecked()) return "all";
    std::string text;
    for (int i = 0; i < ui->gpuList->count(); ++i)
        if (ui->gpuList->item(i)->checkState() == Qt::Checked) {
            if (!text.empty()) text += ',';
            text += std::to_string(ui->gpuList->item(i)->data(Qt::UserRole).toInt());
        }
    return text;
}

void ExportDialog::setRange(float min, float max, const QString& source) {
    m_settingRange = true;
    ui->rangeMinSpin->setValue(min);
    ui->rangeMaxSpin->setValue(max);
    m_settingRange = false;
    m_rangeSource = source;
    ui->rangeNote->setText(tr("Range: %1.").arg(source));
    updateState();
}

bool ExportDialog::estimateRange() {
    if (!m_controller || m_estimating) return false;
    const int first = ui->firstRowSpin->value();
    const int count = ui->lastRowSpin->value() - first + 1;
    if (count < 1 || !m_controller->estimateRange(m_params, first, count)) {
        ui->rangeNote->setText(count < 1 ? tr("Choose the rows first.")
                                         : tr("Another long job is running: the estimate waits for it to finish."));
        return false;
    }
    m_estimating = true;
    ui->rangeNote->setText(tr("Estimating the range: reconstructing 5 rows…"));
    updateState();
    return true;
}

ExportRequest ExportDialog::request() const {
    ExportRequest r;
    r.target = ui->outputEdit->text().trimmed();
    r.firstRow = ui->firstRowSpin->value();
    r.rowCount = ui->lastRowSpin->value() - r.firstRow + 1;
    r.params = m_params;
    r.params.gpus = chosenGpus();
    r.write.overwrite = ui->overwriteCheck->isChecked();
    r.write.type = static_cast<tomo::OutputType>(ui->typeCombo->currentData().toInt());
    r.write.rangeMin = static_cast<float>(ui->rangeMinSpin->value());
    r.write.rangeMax = static_cast<float>(ui->rangeMaxSpin->value());
    const tomo::RunConfig config = toRunConfig(r.params, m_dataset, r.firstRow, r.rowCount);
    r.write.attributes["tomo_run_config"] = tomo::toJson(config);
    if (!r.params.gpus.empty()) r.write.attributes["gpus"] = r.params.gpus;
    r.write.attributes["software"] = "tomo-workstation " TOMO_VERSION;
    r.write.attributes["strategy"] = m_params.options.strategy;
    if (tomo::isQuantized(r.write.type)) {
        r.write.attributes["output_range"] = QStringLiteral("%1,%2")
                                                 .arg(static_cast<double>(r.write.rangeMin), 0, 'g', 9)
                                                 .arg(static_cast<double>(r.write.rangeMax), 0, 'g', 9)
                                                 .toStdString();
        r.write.attributes["output_range_source"] = m_rangeSource.toStdString();
    }
    return r;
}

void ExportDialog::updateState() {
    QString error;
    const QString target = ui->outputEdit->text().trimmed();
    const auto type = static_cast<tomo::OutputType>(ui->typeCombo->currentData().toInt());
    const bool quantized = tomo::isQuantized(type);
    if (target.isEmpty()) {
        error = tr("Choose an output file.");
    } else {
        try {
            const bool tiff = tomo::volumeFormatFor(target.toStdString()) == tomo::VolumeFormat::TiffStack;
            ui->formatLabel->setText((tiff ? tr("TIFF stack (one image per slice)") : tr("HDF5, dataset /volume")) %
                                     QStringLiteral(", ") % QLatin1String(tomo::outputTypeName(type)));
        } catch (const std::exception& e) {
            ui->formatLabel->clear();
            error = QString::fromUtf8(e.what());
        }
        if (error.isEmpty() && QFileInfo::exists(target) && !ui->overwriteCheck->isChecked())
            error = tr("%1 exists: tick “Replace” to overwrite it.").arg(QFileInfo(target).fileName());
    }
    const int first = ui->firstRowSpin->value(), last = ui->lastRowSpin->value();
    if (last < first) error = tr("The last row is before the first.");
    for (QWidget* w : std::initializer_list<QWidget*>{ui->rangeMinSpin, ui->rangeMaxSpin, ui->windowRangeButton})
        w->setEnabled(quantized && !m_estimating);
    ui->estimateButton->setEnabled(quantized && m_controller && !m_estimating);
    ui->rangeNote->setVisible(quantized);
    if (quantized && !(ui->rangeMaxSpin->value() > ui->rangeMinSpin->value()))
        error = tr("The integer range needs max > min.");
    if (m_estimating) error = tr("Waiting for the range estimate…");

    const tomo::Region region = m_params.effectiveRegion(m_grid);
    const int slices = std::max(0, last - first + 1);
    const double bytes = static_cast<double>(region.pixels()) * slices * static_cast<double>(tomo::outputTypeBytes(type));
    ui->summaryLabel->setText(
        tr("%1 slices of %2 × %3 px (%4), %5 · %6 · %7, %8, corrections: %9. About %10 written.")
            .arg(slices)
            .arg(region.width)
            .arg(region.height)
            .arg(m_params.region ? tr("region of interest") : tr("whole slice"))
            .arg(QString::fromStdString(m_params.options.strategy))
            .arg(QString::fromUtf8(tomo::interpolationName(m_params.options.interpolation).data()))
            .arg(QString::fromUtf8(tomo::precisionName(m_params.options.precision).data()))
            .arg(m_params.stitched() ? tr("axis at the stitched centre")
                 : m_params.axisTilt != 0.0
                     ? tr("axis %1 px on row %2, tilt %3 px/row").arg(m_params.axis, 0, 'f', 3).arg(m_params.row).arg(m_params.axisTilt)
                     : tr("axis %1 px").arg(m_params.axis, 0, 'f', 3))
            .arg(QString::fromStdString(m_params.corrections.summary()))
            .arg(QLocale().formattedDataSize(static_cast<qint64>(bytes))));
    ui->errorLabel->setText(error);
    ui->buttonBox->button(QDialogButtonBox::Ok)->setEnabled(error.isEmpty());
}

} // namespace tomo::ui
